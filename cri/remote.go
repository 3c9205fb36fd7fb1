package cri

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	grpcstatus "google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// DefaultCallTimeout is the per-call timeout of a Remote unless
// WithCallTimeout says otherwise: the kubelet's default
// --runtime-request-timeout.
const DefaultCallTimeout = 2 * time.Minute

// maxMsgSize is the largest gRPC message a Remote accepts, as the kubelet's
// CRI client sets it (16 MiB).
const maxMsgSize = 16 << 20

// Remote is a Runtime that talks to a real CRI runtime (containerd, CRI-O)
// over its gRPC socket with k8s.io/cri-api v1, as the kubelet's CRI client
// does: every call gets its own timeout, and the runtime's errors keep the
// runtime's message while mapping to this package's errors for errors.Is.
// Remote is safe for concurrent use.
type Remote struct {
	conn    *grpc.ClientConn
	client  runtimeapi.RuntimeServiceClient
	images  runtimeapi.ImageServiceClient
	timeout time.Duration
}

// RemoteOption configures NewRemote.
type RemoteOption func(*remoteConfig)

type remoteConfig struct {
	timeout time.Duration
	dial    []grpc.DialOption
}

// WithCallTimeout sets the timeout of each call (DefaultCallTimeout if
// unset or not positive). Calls that wait on purpose (StopContainer with a
// grace period, ExecSync with a timeout) get that wait on top.
func WithCallTimeout(d time.Duration) RemoteOption {
	return func(c *remoteConfig) {
		if d > 0 {
			c.timeout = d
		}
	}
}

// WithDialOptions adds gRPC dial options, after the defaults (insecure
// transport over the unix socket, 16 MiB messages).
func WithDialOptions(opts ...grpc.DialOption) RemoteOption {
	return func(c *remoteConfig) { c.dial = append(c.dial, opts...) }
}

// NewRemote connects to the CRI runtime at endpoint, "unix:///PATH" (a bare
// absolute path is taken as a unix socket too), and checks that it answers
// the Version call within the call timeout; an unreachable runtime gives an
// error wrapping ErrUnavailable. Close the Remote when done.
func NewRemote(ctx context.Context, endpoint string, opts ...RemoteOption) (*Remote, error) {
	cfg := remoteConfig{timeout: DefaultCallTimeout}
	for _, o := range opts {
		o(&cfg)
	}
	target, err := parseEndpoint(endpoint)
	if err != nil {
		return nil, err
	}
	dial := append([]grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMsgSize), grpc.MaxCallSendMsgSize(maxMsgSize)),
	}, cfg.dial...)
	conn, err := grpc.NewClient(target, dial...)
	if err != nil {
		return nil, fmt.Errorf("connect to CRI runtime %s: %w", endpoint, err)
	}
	r := &Remote{conn: conn, client: runtimeapi.NewRuntimeServiceClient(conn), images: runtimeapi.NewImageServiceClient(conn), timeout: cfg.timeout}
	if _, err := r.Version(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("connect to CRI runtime %s: %w", endpoint, err)
	}
	return r, nil
}

// parseEndpoint turns an endpoint into a gRPC target. Only unix sockets are
// supported: CRI runtimes listen on one, and a TCP endpoint would need
// credentials this client does not set up.
func parseEndpoint(endpoint string) (string, error) {
	path, ok := strings.CutPrefix(endpoint, "unix://")
	if !ok {
		path = endpoint
	}
	if !strings.HasPrefix(path, "/") {
		return "", fmt.Errorf("CRI endpoint %q: want unix:///PATH: %w", endpoint, ErrInvalidEndpoint)
	}
	return "unix://" + path, nil
}

// ErrInvalidEndpoint means NewRemote was given an endpoint that is not a
// unix socket.
var ErrInvalidEndpoint = errors.New("invalid CRI endpoint")

// Close closes the connection.
func (r *Remote) Close() error {
	if r == nil || r.conn == nil {
		return fmt.Errorf("close: %w", ErrNoRuntime)
	}
	return r.conn.Close()
}

// ready says why a call cannot be made: a Remote that NewRemote did not
// make (nil, or the zero Remote) has no connection, and a nil ctx gives no
// deadline to derive the call's from (context.WithTimeout panics on it).
func (r *Remote) ready(ctx context.Context) error {
	switch {
	case r == nil || r.client == nil:
		return ErrNoRuntime
	case ctx == nil:
		return ErrNilContext
	}
	return nil
}

// RemoteError is a CRI runtime's gRPC error: the method, the status code and
// the runtime's own message. Error returns the message alone, as the
// runtime wrote it, because that is what the kubelet shows in pod
// conditions and events and what users match (runc's "unable to set memory
// limit to ..."). errors.Is maps codes.NotFound to ErrNotFound,
// codes.Unimplemented to ErrUnimplemented, codes.Unavailable to
// ErrUnavailable and codes.DeadlineExceeded and
// codes.Canceled to the context errors.
type RemoteError struct {
	Method  string
	Code    codes.Code
	Message string
}

// Error returns the runtime's message.
func (e *RemoteError) Error() string {
	if e == nil {
		return "<nil>"
	}
	return e.Message
}

// Is reports whether the code corresponds to target.
func (e *RemoteError) Is(target error) bool {
	if e == nil {
		return false
	}
	switch e.Code {
	case codes.NotFound:
		return target == ErrNotFound
	case codes.Unimplemented:
		return target == ErrUnimplemented
	case codes.Unavailable:
		return target == ErrUnavailable
	case codes.DeadlineExceeded:
		return target == context.DeadlineExceeded
	case codes.Canceled:
		return target == context.Canceled
	}
	return false
}

// GRPCStatus returns the gRPC status, so grpcstatus.FromError and status.Code
// work on a RemoteError.
func (e *RemoteError) GRPCStatus() *grpcstatus.Status {
	if e == nil {
		return nil
	}
	return grpcstatus.New(e.Code, e.Message)
}

// wrapErr turns a gRPC call's error into a RemoteError.
func wrapErr(method string, err error) error {
	if err == nil {
		return nil
	}
	st, ok := grpcstatus.FromError(err)
	if !ok {
		return fmt.Errorf("%s: %w", method, err)
	}
	return &RemoteError{Method: method, Code: st.Code(), Message: st.Message()}
}

// ExitError is ExecSync's error when the command ran and exited non-zero.
type ExitError struct {
	ExitCode int32
}

// Error says how the command ended.
func (e *ExitError) Error() string {
	if e == nil {
		return "<nil>"
	}
	return fmt.Sprintf("command exited with code %d", e.ExitCode)
}

// call returns a context for one call that waits at most extra beyond the
// per-call timeout.
func (r *Remote) call(ctx context.Context, extra time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, r.timeout+extra)
}

// Version returns the runtime's name, version and CRI API version.
func (r *Remote) Version(ctx context.Context) (*runtimeapi.VersionResponse, error) {
	if r.ready(ctx) != nil {
		return nil, fmt.Errorf("Version: %w", r.ready(ctx))
	}
	ctx, cancel := r.call(ctx, 0)
	defer cancel()
	resp, err := r.client.Version(ctx, &runtimeapi.VersionRequest{})
	return resp, wrapErr("Version", err)
}

// RunPodSandbox creates and starts a pod sandbox.
func (r *Remote) RunPodSandbox(ctx context.Context, config *runtimeapi.PodSandboxConfig, runtimeHandler string) (string, error) {
	if r.ready(ctx) != nil {
		return "", fmt.Errorf("RunPodSandbox: %w", r.ready(ctx))
	}
	ctx, cancel := r.call(ctx, 0)
	defer cancel()
	resp, err := r.client.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: config, RuntimeHandler: runtimeHandler})
	if err != nil {
		return "", wrapErr("RunPodSandbox", err)
	}
	return resp.GetPodSandboxId(), nil
}

// StopPodSandbox stops a sandbox and its containers.
func (r *Remote) StopPodSandbox(ctx context.Context, podSandboxID string) error {
	if r.ready(ctx) != nil {
		return fmt.Errorf("StopPodSandbox: %w", r.ready(ctx))
	}
	ctx, cancel := r.call(ctx, 0)
	defer cancel()
	_, err := r.client.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: podSandboxID})
	return wrapErr("StopPodSandbox", err)
}

// RemovePodSandbox removes a sandbox and its containers.
func (r *Remote) RemovePodSandbox(ctx context.Context, podSandboxID string) error {
	if r.ready(ctx) != nil {
		return fmt.Errorf("RemovePodSandbox: %w", r.ready(ctx))
	}
	ctx, cancel := r.call(ctx, 0)
	defer cancel()
	_, err := r.client.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: podSandboxID})
	return wrapErr("RemovePodSandbox", err)
}

// ListPodSandbox lists the sandboxes that match filter.
func (r *Remote) ListPodSandbox(ctx context.Context, filter *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	if r.ready(ctx) != nil {
		return nil, fmt.Errorf("ListPodSandbox: %w", r.ready(ctx))
	}
	ctx, cancel := r.call(ctx, 0)
	defer cancel()
	resp, err := r.client.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: filter})
	if err != nil {
		return nil, wrapErr("ListPodSandbox", err)
	}
	return resp.GetItems(), nil
}

// UpdatePodSandboxResources tells the runtime the pod's new resources.
func (r *Remote) UpdatePodSandboxResources(ctx context.Context, request *runtimeapi.UpdatePodSandboxResourcesRequest) (*runtimeapi.UpdatePodSandboxResourcesResponse, error) {
	if r.ready(ctx) != nil {
		return nil, fmt.Errorf("UpdatePodSandboxResources: %w", r.ready(ctx))
	}
	ctx, cancel := r.call(ctx, 0)
	defer cancel()
	resp, err := r.client.UpdatePodSandboxResources(ctx, request)
	return resp, wrapErr("UpdatePodSandboxResources", err)
}

// CreateContainer creates a container in a sandbox.
func (r *Remote) CreateContainer(ctx context.Context, podSandboxID string, config *runtimeapi.ContainerConfig, sandboxConfig *runtimeapi.PodSandboxConfig) (string, error) {
	if r.ready(ctx) != nil {
		return "", fmt.Errorf("CreateContainer: %w", r.ready(ctx))
	}
	ctx, cancel := r.call(ctx, 0)
	defer cancel()
	resp, err := r.client.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
		PodSandboxId: podSandboxID, Config: config, SandboxConfig: sandboxConfig,
	})
	if err != nil {
		return "", wrapErr("CreateContainer", err)
	}
	return resp.GetContainerId(), nil
}

// StartContainer starts a created container.
func (r *Remote) StartContainer(ctx context.Context, containerID string) error {
	if r.ready(ctx) != nil {
		return fmt.Errorf("StartContainer: %w", r.ready(ctx))
	}
	ctx, cancel := r.call(ctx, 0)
	defer cancel()
	_, err := r.client.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: containerID})
	return wrapErr("StartContainer", err)
}

// StopContainer stops a container, giving it timeout seconds before it is
// killed; the call may take that long on top of the per-call timeout.
func (r *Remote) StopContainer(ctx context.Context, containerID string, timeout int64) error {
	if r.ready(ctx) != nil {
		return fmt.Errorf("StopContainer: %w", r.ready(ctx))
	}
	ctx, cancel := r.call(ctx, time.Duration(max(timeout, 0))*time.Second)
	defer cancel()
	_, err := r.client.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: containerID, Timeout: timeout})
	return wrapErr("StopContainer", err)
}

// RemoveContainer removes a container.
func (r *Remote) RemoveContainer(ctx context.Context, containerID string) error {
	if r.ready(ctx) != nil {
		return fmt.Errorf("RemoveContainer: %w", r.ready(ctx))
	}
	ctx, cancel := r.call(ctx, 0)
	defer cancel()
	_, err := r.client.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: containerID})
	return wrapErr("RemoveContainer", err)
}

// ListContainers lists the containers that match filter.
func (r *Remote) ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	if r.ready(ctx) != nil {
		return nil, fmt.Errorf("ListContainers: %w", r.ready(ctx))
	}
	ctx, cancel := r.call(ctx, 0)
	defer cancel()
	resp, err := r.client.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: filter})
	if err != nil {
		return nil, wrapErr("ListContainers", err)
	}
	return resp.GetContainers(), nil
}

// ContainerStatus returns a container's status, with its resources as the
// runtime reports them.
func (r *Remote) ContainerStatus(ctx context.Context, containerID string, verbose bool) (*runtimeapi.ContainerStatusResponse, error) {
	if r.ready(ctx) != nil {
		return nil, fmt.Errorf("ContainerStatus: %w", r.ready(ctx))
	}
	ctx, cancel := r.call(ctx, 0)
	defer cancel()
	resp, err := r.client.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: containerID, Verbose: verbose})
	return resp, wrapErr("ContainerStatus", err)
}

// UpdateContainerResources sends the container's new resources. The
// runtime treats zero fields as "leave unchanged", so send them all.
func (r *Remote) UpdateContainerResources(ctx context.Context, containerID string, resources *runtimeapi.ContainerResources) error {
	if r.ready(ctx) != nil {
		return fmt.Errorf("UpdateContainerResources: %w", r.ready(ctx))
	}
	ctx, cancel := r.call(ctx, 0)
	defer cancel()
	_, err := r.client.UpdateContainerResources(ctx, &runtimeapi.UpdateContainerResourcesRequest{
		ContainerId: containerID,
		Linux:       resources.GetLinux(),
		Windows:     resources.GetWindows(),
	})
	return wrapErr("UpdateContainerResources", err)
}

// ContainerStats returns a container's resource usage.
func (r *Remote) ContainerStats(ctx context.Context, containerID string) (*runtimeapi.ContainerStats, error) {
	if r.ready(ctx) != nil {
		return nil, fmt.Errorf("ContainerStats: %w", r.ready(ctx))
	}
	ctx, cancel := r.call(ctx, 0)
	defer cancel()
	resp, err := r.client.ContainerStats(ctx, &runtimeapi.ContainerStatsRequest{ContainerId: containerID})
	if err != nil {
		return nil, wrapErr("ContainerStats", err)
	}
	return resp.GetStats(), nil
}

// ExecSync runs cmd in the container and waits up to timeout (0: no limit
// but the per-call timeout) for it. A command that exits non-zero gives its
// output and an *ExitError.
func (r *Remote) ExecSync(ctx context.Context, containerID string, cmd []string, timeout time.Duration) ([]byte, []byte, error) {
	if r.ready(ctx) != nil {
		return nil, nil, fmt.Errorf("ExecSync: %w", r.ready(ctx))
	}
	ctx, cancel := r.call(ctx, timeout)
	defer cancel()
	secs := int64(timeout / time.Second)
	if timeout > 0 && secs == 0 {
		secs = 1 // the CRI counts whole seconds; 0 would mean no timeout
	}
	resp, err := r.client.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: containerID, Cmd: cmd, Timeout: secs})
	if err != nil {
		return nil, nil, wrapErr("ExecSync", err)
	}
	if resp.GetExitCode() != 0 {
		return resp.GetStdout(), resp.GetStderr(), &ExitError{ExitCode: resp.GetExitCode()}
	}
	return resp.GetStdout(), resp.GetStderr(), nil
}

var _ Runtime = (*Remote)(nil)

// IsUnimplemented reports whether err says the runtime does not implement
// the call, as the kubelet reads UpdatePodSandboxResources' errors: the
// gRPC code Unimplemented (ErrUnimplemented), or the code Unknown with a
// message containing "not implemented", which containerd 2.2 answers
// instead (pkg/kubelet/kuberuntime/kuberuntime_container.go,
// updatePodSandboxResources).
func IsUnimplemented(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrUnimplemented) {
		return true
	}
	var re *RemoteError
	return errors.As(err, &re) && re.Code == codes.Unknown && strings.Contains(re.Message, "not implemented")
}

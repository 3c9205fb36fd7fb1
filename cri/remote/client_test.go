package remote

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/cri/internal/critest"
)

// criServer serves a cri.Runtime as a CRI RuntimeService over gRPC, the way a
// real runtime does: errors wrapping cri.ErrNotFound become codes.NotFound,
// every other error codes.Unknown with the error's text as the message.
// hook, when set, runs first and can fail or stall any call.
type criServer struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	rt       cri.Runtime
	hook     func(ctx context.Context, method string) error
	execExit int32 // when non-zero, ExecSync answers with this exit code
}

func (s *criServer) pre(ctx context.Context, method string) error {
	if s.hook == nil {
		return nil
	}
	return toStatus(s.hook(ctx, method))
}

func toStatus(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, cri.ErrNotFound):
		return grpcstatus.Error(codes.NotFound, err.Error())
	case errors.Is(err, cri.ErrUnavailable):
		return grpcstatus.Error(codes.Unavailable, err.Error())
	}
	if _, ok := grpcstatus.FromError(err); ok {
		return err
	}
	return grpcstatus.Error(codes.Unknown, err.Error())
}

func (s *criServer) Version(ctx context.Context, _ *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	if err := s.pre(ctx, "Version"); err != nil {
		return nil, err
	}
	return &runtimeapi.VersionResponse{Version: "0.1.0", RuntimeName: "memory", RuntimeVersion: "test", RuntimeApiVersion: "v1"}, nil
}

func (s *criServer) RunPodSandbox(ctx context.Context, req *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error) {
	if err := s.pre(ctx, "RunPodSandbox"); err != nil {
		return nil, err
	}
	id, err := s.rt.RunPodSandbox(ctx, req.Config, req.RuntimeHandler)
	return &runtimeapi.RunPodSandboxResponse{PodSandboxId: id}, toStatus(err)
}

func (s *criServer) StopPodSandbox(ctx context.Context, req *runtimeapi.StopPodSandboxRequest) (*runtimeapi.StopPodSandboxResponse, error) {
	if err := s.pre(ctx, "StopPodSandbox"); err != nil {
		return nil, err
	}
	return &runtimeapi.StopPodSandboxResponse{}, toStatus(s.rt.StopPodSandbox(ctx, req.PodSandboxId))
}

func (s *criServer) RemovePodSandbox(ctx context.Context, req *runtimeapi.RemovePodSandboxRequest) (*runtimeapi.RemovePodSandboxResponse, error) {
	if err := s.pre(ctx, "RemovePodSandbox"); err != nil {
		return nil, err
	}
	return &runtimeapi.RemovePodSandboxResponse{}, toStatus(s.rt.RemovePodSandbox(ctx, req.PodSandboxId))
}

func (s *criServer) ListPodSandbox(ctx context.Context, req *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	if err := s.pre(ctx, "ListPodSandbox"); err != nil {
		return nil, err
	}
	items, err := s.rt.ListPodSandbox(ctx, req.Filter)
	return &runtimeapi.ListPodSandboxResponse{Items: items}, toStatus(err)
}

func (s *criServer) UpdatePodSandboxResources(ctx context.Context, req *runtimeapi.UpdatePodSandboxResourcesRequest) (*runtimeapi.UpdatePodSandboxResourcesResponse, error) {
	if err := s.pre(ctx, "UpdatePodSandboxResources"); err != nil {
		return nil, err
	}
	resp, err := s.rt.UpdatePodSandboxResources(ctx, req)
	return resp, toStatus(err)
}

func (s *criServer) CreateContainer(ctx context.Context, req *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error) {
	if err := s.pre(ctx, "CreateContainer"); err != nil {
		return nil, err
	}
	id, err := s.rt.CreateContainer(ctx, req.PodSandboxId, req.Config, req.SandboxConfig)
	return &runtimeapi.CreateContainerResponse{ContainerId: id}, toStatus(err)
}

func (s *criServer) StartContainer(ctx context.Context, req *runtimeapi.StartContainerRequest) (*runtimeapi.StartContainerResponse, error) {
	if err := s.pre(ctx, "StartContainer"); err != nil {
		return nil, err
	}
	return &runtimeapi.StartContainerResponse{}, toStatus(s.rt.StartContainer(ctx, req.ContainerId))
}

func (s *criServer) StopContainer(ctx context.Context, req *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error) {
	if err := s.pre(ctx, "StopContainer"); err != nil {
		return nil, err
	}
	return &runtimeapi.StopContainerResponse{}, toStatus(s.rt.StopContainer(ctx, req.ContainerId, req.Timeout))
}

func (s *criServer) RemoveContainer(ctx context.Context, req *runtimeapi.RemoveContainerRequest) (*runtimeapi.RemoveContainerResponse, error) {
	if err := s.pre(ctx, "RemoveContainer"); err != nil {
		return nil, err
	}
	return &runtimeapi.RemoveContainerResponse{}, toStatus(s.rt.RemoveContainer(ctx, req.ContainerId))
}

func (s *criServer) ListContainers(ctx context.Context, req *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	if err := s.pre(ctx, "ListContainers"); err != nil {
		return nil, err
	}
	cs, err := s.rt.ListContainers(ctx, req.Filter)
	return &runtimeapi.ListContainersResponse{Containers: cs}, toStatus(err)
}

func (s *criServer) ContainerStatus(ctx context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	if err := s.pre(ctx, "ContainerStatus"); err != nil {
		return nil, err
	}
	resp, err := s.rt.ContainerStatus(ctx, req.ContainerId, req.Verbose)
	return resp, toStatus(err)
}

func (s *criServer) UpdateContainerResources(ctx context.Context, req *runtimeapi.UpdateContainerResourcesRequest) (*runtimeapi.UpdateContainerResourcesResponse, error) {
	if err := s.pre(ctx, "UpdateContainerResources"); err != nil {
		return nil, err
	}
	err := s.rt.UpdateContainerResources(ctx, req.ContainerId, &runtimeapi.ContainerResources{Linux: req.Linux, Windows: req.Windows})
	return &runtimeapi.UpdateContainerResourcesResponse{}, toStatus(err)
}

func (s *criServer) ContainerStats(ctx context.Context, req *runtimeapi.ContainerStatsRequest) (*runtimeapi.ContainerStatsResponse, error) {
	if err := s.pre(ctx, "ContainerStats"); err != nil {
		return nil, err
	}
	st, err := s.rt.ContainerStats(ctx, req.ContainerId)
	return &runtimeapi.ContainerStatsResponse{Stats: st}, toStatus(err)
}

func (s *criServer) ExecSync(ctx context.Context, req *runtimeapi.ExecSyncRequest) (*runtimeapi.ExecSyncResponse, error) {
	if err := s.pre(ctx, "ExecSync"); err != nil {
		return nil, err
	}
	if s.execExit != 0 {
		return &runtimeapi.ExecSyncResponse{ExitCode: s.execExit, Stderr: []byte("boom")}, nil
	}
	out, errOut, err := s.rt.ExecSync(ctx, req.ContainerId, req.Cmd, time.Duration(req.Timeout)*time.Second)
	return &runtimeapi.ExecSyncResponse{Stdout: out, Stderr: errOut}, toStatus(err)
}

// serve starts a gRPC server with the runtime service rs and, when not
// nil, the image service is, on a unix socket in a temp dir, and returns
// the endpoint.
func serve(t *testing.T, rs runtimeapi.RuntimeServiceServer, is runtimeapi.ImageServiceServer) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "cri.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer()
	runtimeapi.RegisterRuntimeServiceServer(g, rs)
	if is != nil {
		runtimeapi.RegisterImageServiceServer(g, is)
	}
	go g.Serve(lis)
	t.Cleanup(g.Stop)
	return "unix://" + sock
}

// newClientOverSim returns a Client talking to a cri.SimContainerd on a
// SimKernel, and that runtime for comparison.
func newClientOverSim(t *testing.T, version cgroup.Version, opts ...Option) (*Client, *cri.SimContainerd, *criServer) {
	t.Helper()
	mem := cri.NewSimContainerd(cgroup.NewSimKernel(version))
	srv := &criServer{rt: mem}
	r, err := Dial(context.Background(), serve(t, srv, nil), opts...)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	return r, mem, srv
}

func TestClientCarriesTheResizePathCalls(t *testing.T) {
	ctx := context.Background()
	r, mem, _ := newClientOverSim(t, cgroup.V2)
	sb := critest.SandboxConfig("web", "default", "uid-a", critest.PodParent)
	sbID, err := r.RunPodSandbox(ctx, sb, "")
	if err != nil {
		t.Fatalf("RunPodSandbox: %v", err)
	}
	res := &runtimeapi.LinuxContainerResources{CpuShares: 717, CpuQuota: 70000, CpuPeriod: 100000, MemoryLimitInBytes: 200 * critest.MiB}
	id, err := r.CreateContainer(ctx, sbID, critest.ContainerConfig(sb, "app", 0, res), sb)
	if err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	if err := r.StartContainer(ctx, id); err != nil {
		t.Fatalf("StartContainer: %v", err)
	}
	pid, _ := mem.PID(id)

	want := &runtimeapi.LinuxContainerResources{CpuShares: 819, CpuQuota: 80000, CpuPeriod: 100000, MemoryLimitInBytes: 300 * critest.MiB}
	if err := r.UpdateContainerResources(ctx, id, &runtimeapi.ContainerResources{Linux: want}); err != nil {
		t.Fatalf("UpdateContainerResources: %v", err)
	}
	got, err := r.ContainerStatus(ctx, id, false)
	if err != nil {
		t.Fatalf("ContainerStatus: %v", err)
	}
	direct, _ := mem.ContainerStatus(ctx, id, false)
	if !proto.Equal(got, direct) {
		t.Errorf("ContainerStatus over gRPC = %v, the runtime says %v", got, direct)
	}
	gl := got.GetStatus().GetResources().GetLinux()
	if gl.GetCpuShares() != 819 || gl.GetCpuQuota() != 80000 || gl.GetMemoryLimitInBytes() != 300*critest.MiB {
		t.Errorf("status resources after update = %v, want %v", gl, want)
	}
	if after, _ := mem.PID(id); after != pid {
		t.Errorf("PID changed from %d to %d on an in-place update", pid, after)
	}

	if cs, err := r.ListContainers(ctx, &runtimeapi.ContainerFilter{PodSandboxId: sbID}); err != nil || len(cs) != 1 || cs[0].Id != id {
		t.Errorf("ListContainers = %v, %v; want [%s]", cs, err, id)
	}
	if sbs, err := r.ListPodSandbox(ctx, nil); err != nil || len(sbs) != 1 || sbs[0].Id != sbID {
		t.Errorf("ListPodSandbox = %v, %v; want [%s]", sbs, err, sbID)
	}
	if err := cri.SetMemoryUsage(ctx, r, id, 64*critest.MiB); err != nil {
		t.Fatalf("SetMemoryUsage over ExecSync: %v", err)
	}
	if st, err := r.ContainerStats(ctx, id); err != nil || st.GetMemory().GetWorkingSetBytes().GetValue() < uint64(64*critest.MiB) {
		t.Errorf("ContainerStats = %v, %v; want a working set of at least 64Mi", st, err)
	}
	if _, err := r.UpdatePodSandboxResources(ctx, &runtimeapi.UpdatePodSandboxResourcesRequest{PodSandboxId: sbID, Resources: want}); err != nil {
		t.Errorf("UpdatePodSandboxResources: %v", err)
	}
	if err := r.StopContainer(ctx, id, 0); err != nil {
		t.Errorf("StopContainer: %v", err)
	}
	if err := r.RemoveContainer(ctx, id); err != nil {
		t.Errorf("RemoveContainer: %v", err)
	}
	if err := r.StopPodSandbox(ctx, sbID); err != nil {
		t.Errorf("StopPodSandbox: %v", err)
	}
	if err := r.RemovePodSandbox(ctx, sbID); err != nil {
		t.Errorf("RemovePodSandbox: %v", err)
	}
}

// TestClientKeepsTheRuntimesMessage runs the v1 refusal of a memory limit
// below usage through gRPC: the error is codes.Unknown and its text is
// runc's message as the runtime sent it.
func TestClientKeepsTheRuntimesMessage(t *testing.T) {
	ctx := context.Background()
	r, mem, _ := newClientOverSim(t, cgroup.V1)
	sb := critest.SandboxConfig("web", "default", "uid-a", critest.PodParent)
	sbID := critest.MustRun(t, r, sb)
	id := critest.MustStart(t, r, sbID, sb, critest.ContainerConfig(sb, "app", 0,
		&runtimeapi.LinuxContainerResources{CpuShares: 1024, MemoryLimitInBytes: 200 * critest.MiB}))
	if err := cri.SetMemoryUsage(ctx, r, id, 100*critest.MiB); err != nil {
		t.Fatal(err)
	}
	res := &runtimeapi.ContainerResources{Linux: &runtimeapi.LinuxContainerResources{CpuShares: 1024, MemoryLimitInBytes: 50 * critest.MiB}}
	err := r.UpdateContainerResources(ctx, id, res)
	direct := mem.UpdateContainerResources(ctx, id, res)
	if err == nil || direct == nil {
		t.Fatalf("update below usage: remote %v, direct %v; want both to fail", err, direct)
	}
	if err.Error() != direct.Error() {
		t.Errorf("remote error %q, want the runtime's message %q", err, direct)
	}
	if !strings.Contains(err.Error(), "unable to set memory limit to 52428800 (current usage: ") {
		t.Errorf("remote error %q lacks runc's message", err)
	}
	var re *cri.RemoteError
	if !errors.As(err, &re) || re.Code != codes.Unknown || re.Method != "UpdateContainerResources" {
		t.Errorf("remote error = %#v, want a cri.RemoteError with codes.Unknown", err)
	}
	if grpcstatus.Code(err) != codes.Unknown {
		t.Errorf("status.Code = %v, want Unknown", grpcstatus.Code(err))
	}
}

func TestClientMapsErrors(t *testing.T) {
	tests := []struct {
		name    string
		hookErr error
		want    error
		notWant []error
		msg     string
	}{
		{
			name:    "NotFound",
			hookErr: grpcstatus.Error(codes.NotFound, `an error occurred when try to find container "x": not found`),
			want:    cri.ErrNotFound,
			notWant: []error{cri.ErrUnavailable},
			msg:     `an error occurred when try to find container "x": not found`,
		},
		{
			name:    "Unavailable",
			hookErr: grpcstatus.Error(codes.Unavailable, "shutting down"),
			want:    cri.ErrUnavailable,
			notWant: []error{cri.ErrNotFound},
			msg:     "shutting down",
		},
		{
			name:    "Unknown keeps only the message",
			hookErr: grpcstatus.Error(codes.Unknown, "failed to update resources: boom"),
			notWant: []error{cri.ErrNotFound, cri.ErrUnavailable},
			msg:     "failed to update resources: boom",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _, srv := newClientOverSim(t, cgroup.V2)
			srv.hook = func(ctx context.Context, method string) error {
				if method == "ContainerStatus" {
					return tt.hookErr
				}
				return nil
			}
			_, err := r.ContainerStatus(context.Background(), "x", false)
			if err == nil {
				t.Fatal("ContainerStatus succeeded")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("error %v is not %v", err, tt.want)
			}
			for _, nw := range tt.notWant {
				if errors.Is(err, nw) {
					t.Errorf("error %v is %v", err, nw)
				}
			}
			if err.Error() != tt.msg {
				t.Errorf("error text %q, want the runtime's %q", err, tt.msg)
			}
		})
	}
	t.Run("the runtime's own NotFound", func(t *testing.T) {
		r, _, _ := newClientOverSim(t, cgroup.V2)
		err := r.StartContainer(context.Background(), "no-such-container")
		if !errors.Is(err, cri.ErrNotFound) || !strings.Contains(err.Error(), "no-such-container") {
			t.Errorf("StartContainer(no-such-container) = %v, want cri.ErrNotFound with the runtime's message", err)
		}
	})
}

func TestClientPerCallTimeout(t *testing.T) {
	r, _, srv := newClientOverSim(t, cgroup.V2, WithCallTimeout(50*time.Millisecond))
	sawDeadline := make(chan bool, 1)
	release := make(chan struct{})
	srv.hook = func(ctx context.Context, method string) error {
		if method != "ListContainers" {
			return nil
		}
		_, ok := ctx.Deadline()
		sawDeadline <- ok
		// Hold the call until the client has given up, so that the answer
		// the client sees is its own deadline and never the server's
		// error (which would race with it).
		<-release
		return ctx.Err()
	}
	// The caller's context has no deadline: the one the server sees is the
	// Client's own.
	_, err := r.ListContainers(context.Background(), nil)
	close(release)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("ListContainers past the call timeout: %v, want DeadlineExceeded", err)
	}
	if !<-sawDeadline {
		t.Error("the server saw no deadline on the call")
	}
}

func TestDialUnreachable(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "nobody.sock")
	_, err := Dial(context.Background(), "unix://"+sock, WithCallTimeout(2*time.Second))
	if !errors.Is(err, cri.ErrUnavailable) {
		t.Errorf("Dial to a missing socket: %v, want ErrUnavailable", err)
	}
	if err != nil && !strings.Contains(err.Error(), sock) {
		t.Errorf("error %q does not name the endpoint", err)
	}
}

func TestParseEndpoint(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr bool
	}{
		{in: "unix:///run/containerd/containerd.sock", want: "unix:///run/containerd/containerd.sock"},
		{in: "/run/crio/crio.sock", want: "unix:///run/crio/crio.sock"},
		{in: "tcp://127.0.0.1:1234", wantErr: true},
		{in: "unix://relative.sock", wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseEndpoint(tt.in)
		if tt.wantErr {
			if !errors.Is(err, ErrInvalidEndpoint) {
				t.Errorf("parseEndpoint(%q) error = %v, want ErrInvalidEndpoint", tt.in, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("parseEndpoint(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestClientExecSyncExitCode(t *testing.T) {
	r, _, srv := newClientOverSim(t, cgroup.V2)
	srv.execExit = 3
	_, stderr, err := r.ExecSync(context.Background(), "any", []string{"false"}, time.Second)
	var ee *cri.ExitError
	if !errors.As(err, &ee) || ee.ExitCode != 3 {
		t.Errorf("ExecSync = %v, want an cri.ExitError with code 3", err)
	}
	if string(stderr) != "boom" {
		t.Errorf("stderr = %q, want the command's", stderr)
	}
}

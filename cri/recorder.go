package cri

import (
	"context"
	"fmt"
	"sync"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Call is one recorded Runtime call.
type Call struct {
	Method    string
	Pod       string // "namespace/name", from labels (or metadata)
	Container string // container name, from labels (or metadata); "" for sandbox calls
	ID        string // the container or sandbox ID; for a create that failed, ""
	// Linux holds, for UpdateContainerResources, the fields sent and, for
	// CreateContainer, the config's resources; nil otherwise.
	Linux *runtimeapi.LinuxContainerResources
	// Sandbox holds the request of UpdatePodSandboxResources; nil otherwise.
	Sandbox *runtimeapi.UpdatePodSandboxResourcesRequest
	Err     error
}

// Recorder is a Runtime decorator that records, in the order they return,
// the calls that change something (sandbox and container lifecycle,
// UpdateContainerResources, UpdatePodSandboxResources), which is what a
// resize transcript shows. Read-only calls pass through unrecorded.
//
// It names pods and containers from the configs of the RunPodSandbox and
// CreateContainer calls it saw and, for IDs it has not seen (say, after a
// kubelet restart), from labels through the inner runtime. It holds its lock
// only while reading or appending, never across the inner runtime's calls.
// It is safe for concurrent use.
type Recorder struct {
	inner Runtime

	mu         sync.Mutex
	calls      []Call
	limit      int
	sandboxes  map[string]string       // sandbox ID → "namespace/name"
	containers map[string]recordedName // container ID → names
}

type recordedName struct {
	pod, container, sandboxID string
}

var _ Runtime = (*Recorder)(nil)

// NewRecorder returns a Recorder over rt with no calls recorded.
func NewRecorder(rt Runtime, opts ...RecorderOption) *Recorder {
	r := &Recorder{inner: rt, limit: DefaultCallLimit, sandboxes: map[string]string{}, containers: map[string]recordedName{}}
	for _, opt := range opts {
		opt(r)
	}
	return r
}

// DefaultCallLimit is how many of the latest calls a Recorder keeps unless
// RecordAtMost says otherwise.
const DefaultCallLimit = 256

// RecorderOption configures a Recorder.
type RecorderOption func(*Recorder)

// RecordAtMost keeps the latest n calls (0: DefaultCallLimit; a negative n
// keeps every call).
func RecordAtMost(n int) RecorderOption {
	return func(r *Recorder) {
		r.limit = n
		if n == 0 {
			r.limit = DefaultCallLimit
		}
	}
}

// Unwrap returns the inner runtime.
func (r *Recorder) Unwrap() Runtime {
	if r == nil {
		return nil
	}
	return r.inner
}

// wraps reports whether r has a Runtime to pass calls to; without one (nil
// r, the zero Recorder, NewRecorder(nil)) every call answers ErrNoRuntime
// and is not recorded.
func (r *Recorder) wraps() bool { return r != nil && r.inner != nil }

// Calls returns a copy of the recorded calls kept (the latest, up to the
// limit), oldest first.
func (r *Recorder) Calls() []Call {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	calls := r.calls
	if r.limit > 0 && len(calls) > r.limit {
		calls = calls[len(calls)-r.limit:]
	}
	out := make([]Call, len(calls))
	for i, c := range calls {
		c.Linux = cloneLinuxOrNil(c.Linux)
		c.Sandbox = cloneSandboxRequest(c.Sandbox)
		out[i] = c
	}
	return out
}

// Reset forgets the recorded calls; the names it learnt stay.
func (r *Recorder) Reset() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = nil
}

func (r *Recorder) record(c Call) {
	r.mu.Lock()
	r.calls = append(r.calls, c)
	// Up to twice the limit, then the latest limit: O(1) amortized.
	if r.limit > 0 && len(r.calls) >= 2*r.limit {
		n := copy(r.calls, r.calls[len(r.calls)-r.limit:])
		clear(r.calls[n:])
		r.calls = r.calls[:n]
	}
	r.mu.Unlock()
}

func podKey(t target) string {
	if !t.known || (t.namespace == "" && t.pod == "") {
		return ""
	}
	return t.namespace + "/" + t.pod
}

// sandboxPod names a sandbox's pod, learning it through the inner runtime
// the first time.
func (r *Recorder) sandboxPod(ctx context.Context, id string) string {
	r.mu.Lock()
	pod, ok := r.sandboxes[id]
	r.mu.Unlock()
	if ok {
		return pod
	}
	pod = podKey(resolveSandbox(ctx, r.inner, id))
	if pod != "" {
		r.mu.Lock()
		r.sandboxes[id] = pod
		r.mu.Unlock()
	}
	return pod
}

// containerName names a container and its pod, learning them through the
// inner runtime the first time.
func (r *Recorder) containerName(ctx context.Context, id string) recordedName {
	r.mu.Lock()
	n, ok := r.containers[id]
	r.mu.Unlock()
	if ok {
		return n
	}
	t, sandboxID := resolveContainer(ctx, r.inner, id)
	if !t.known {
		return recordedName{}
	}
	n = recordedName{pod: podKey(t), container: t.container, sandboxID: sandboxID}
	r.mu.Lock()
	r.containers[id] = n
	r.mu.Unlock()
	return n
}

// RunPodSandbox calls the inner runtime and records the call.
func (r *Recorder) RunPodSandbox(ctx context.Context, config *runtimeapi.PodSandboxConfig, runtimeHandler string) (string, error) {
	if !r.wraps() {
		return "", fmt.Errorf("RunPodSandbox: %w", ErrNoRuntime)
	}
	id, err := r.inner.RunPodSandbox(ctx, config, runtimeHandler)
	pod := podKey(podTarget(config.GetLabels(), config.GetMetadata()))
	r.mu.Lock()
	if err == nil && pod != "" {
		r.sandboxes[id] = pod
	}
	r.calls = append(r.calls, Call{Method: "RunPodSandbox", Pod: pod, ID: id, Err: err})
	r.mu.Unlock()
	return id, err
}

// StopPodSandbox calls the inner runtime and records the call.
func (r *Recorder) StopPodSandbox(ctx context.Context, podSandboxID string) error {
	if !r.wraps() {
		return fmt.Errorf("StopPodSandbox: %w", ErrNoRuntime)
	}
	pod := r.sandboxPod(ctx, podSandboxID)
	err := r.inner.StopPodSandbox(ctx, podSandboxID)
	r.record(Call{Method: "StopPodSandbox", Pod: pod, ID: podSandboxID, Err: err})
	return err
}

// RemovePodSandbox calls the inner runtime and records the call. On success
// it forgets the names of the sandbox and its containers.
func (r *Recorder) RemovePodSandbox(ctx context.Context, podSandboxID string) error {
	if !r.wraps() {
		return fmt.Errorf("RemovePodSandbox: %w", ErrNoRuntime)
	}
	pod := r.sandboxPod(ctx, podSandboxID)
	err := r.inner.RemovePodSandbox(ctx, podSandboxID)
	r.mu.Lock()
	if err == nil {
		delete(r.sandboxes, podSandboxID)
		for id, n := range r.containers {
			if n.sandboxID == podSandboxID {
				delete(r.containers, id)
			}
		}
	}
	r.calls = append(r.calls, Call{Method: "RemovePodSandbox", Pod: pod, ID: podSandboxID, Err: err})
	r.mu.Unlock()
	return err
}

// ListPodSandbox calls the inner runtime; it is not recorded.
func (r *Recorder) ListPodSandbox(ctx context.Context, filter *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	if !r.wraps() {
		return nil, fmt.Errorf("ListPodSandbox: %w", ErrNoRuntime)
	}
	return r.inner.ListPodSandbox(ctx, filter)
}

// UpdatePodSandboxResources calls the inner runtime and records the call
// with a copy of the request.
func (r *Recorder) UpdatePodSandboxResources(ctx context.Context, request *runtimeapi.UpdatePodSandboxResourcesRequest) (*runtimeapi.UpdatePodSandboxResourcesResponse, error) {
	if !r.wraps() {
		return nil, fmt.Errorf("UpdatePodSandboxResources: %w", ErrNoRuntime)
	}
	id := request.GetPodSandboxId()
	pod := r.sandboxPod(ctx, id)
	resp, err := r.inner.UpdatePodSandboxResources(ctx, request)
	r.record(Call{Method: "UpdatePodSandboxResources", Pod: pod, ID: id, Sandbox: cloneSandboxRequest(request), Err: err})
	return resp, err
}

// CreateContainer calls the inner runtime and records the call with a copy
// of the config's resources.
func (r *Recorder) CreateContainer(ctx context.Context, podSandboxID string, config *runtimeapi.ContainerConfig, sandboxConfig *runtimeapi.PodSandboxConfig) (string, error) {
	if !r.wraps() {
		return "", fmt.Errorf("CreateContainer: %w", ErrNoRuntime)
	}
	t := target{known: true,
		pod: config.GetLabels()[LabelPodName], namespace: config.GetLabels()[LabelPodNamespace], container: config.GetLabels()[LabelContainerName]}
	if t.container == "" {
		t.container = config.GetMetadata().GetName()
	}
	pod := podKey(t)
	if t.pod == "" || t.namespace == "" {
		if sandboxConfig != nil {
			pod = podKey(podTarget(sandboxConfig.Labels, sandboxConfig.Metadata))
		} else {
			pod = r.sandboxPod(ctx, podSandboxID)
		}
	}
	id, err := r.inner.CreateContainer(ctx, podSandboxID, config, sandboxConfig)
	r.mu.Lock()
	if err == nil {
		r.containers[id] = recordedName{pod: pod, container: t.container, sandboxID: podSandboxID}
	}
	r.calls = append(r.calls, Call{Method: "CreateContainer", Pod: pod, Container: t.container, ID: id,
		Linux: cloneLinuxOrNil(config.GetLinux().GetResources()), Err: err})
	r.mu.Unlock()
	return id, err
}

// StartContainer calls the inner runtime and records the call.
func (r *Recorder) StartContainer(ctx context.Context, containerID string) error {
	if !r.wraps() {
		return fmt.Errorf("StartContainer: %w", ErrNoRuntime)
	}
	n := r.containerName(ctx, containerID)
	err := r.inner.StartContainer(ctx, containerID)
	r.record(Call{Method: "StartContainer", Pod: n.pod, Container: n.container, ID: containerID, Err: err})
	return err
}

// StopContainer calls the inner runtime and records the call.
func (r *Recorder) StopContainer(ctx context.Context, containerID string, timeout int64) error {
	if !r.wraps() {
		return fmt.Errorf("StopContainer: %w", ErrNoRuntime)
	}
	n := r.containerName(ctx, containerID)
	err := r.inner.StopContainer(ctx, containerID, timeout)
	r.record(Call{Method: "StopContainer", Pod: n.pod, Container: n.container, ID: containerID, Err: err})
	return err
}

// RemoveContainer calls the inner runtime and records the call. On success
// it forgets the container's names.
func (r *Recorder) RemoveContainer(ctx context.Context, containerID string) error {
	if !r.wraps() {
		return fmt.Errorf("RemoveContainer: %w", ErrNoRuntime)
	}
	n := r.containerName(ctx, containerID)
	err := r.inner.RemoveContainer(ctx, containerID)
	r.mu.Lock()
	if err == nil {
		delete(r.containers, containerID)
	}
	r.calls = append(r.calls, Call{Method: "RemoveContainer", Pod: n.pod, Container: n.container, ID: containerID, Err: err})
	r.mu.Unlock()
	return err
}

// ListContainers calls the inner runtime; it is not recorded.
func (r *Recorder) ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	if !r.wraps() {
		return nil, fmt.Errorf("ListContainers: %w", ErrNoRuntime)
	}
	return r.inner.ListContainers(ctx, filter)
}

// ContainerStatus calls the inner runtime; it is not recorded.
func (r *Recorder) ContainerStatus(ctx context.Context, containerID string, verbose bool) (*runtimeapi.ContainerStatusResponse, error) {
	if !r.wraps() {
		return nil, fmt.Errorf("ContainerStatus: %w", ErrNoRuntime)
	}
	return r.inner.ContainerStatus(ctx, containerID, verbose)
}

// UpdateContainerResources calls the inner runtime and records the call
// with a copy of the Linux resources sent.
func (r *Recorder) UpdateContainerResources(ctx context.Context, containerID string, resources *runtimeapi.ContainerResources) error {
	if !r.wraps() {
		return fmt.Errorf("UpdateContainerResources: %w", ErrNoRuntime)
	}
	n := r.containerName(ctx, containerID)
	err := r.inner.UpdateContainerResources(ctx, containerID, resources)
	r.record(Call{Method: "UpdateContainerResources", Pod: n.pod, Container: n.container, ID: containerID,
		Linux: cloneLinuxOrNil(resources.GetLinux()), Err: err})
	return err
}

// ContainerStats calls the inner runtime; it is not recorded.
func (r *Recorder) ContainerStats(ctx context.Context, containerID string) (*runtimeapi.ContainerStats, error) {
	if !r.wraps() {
		return nil, fmt.Errorf("ContainerStats: %w", ErrNoRuntime)
	}
	return r.inner.ContainerStats(ctx, containerID)
}

// ExecSync calls the inner runtime; it is not recorded.
func (r *Recorder) ExecSync(ctx context.Context, containerID string, cmd []string, timeout time.Duration) ([]byte, []byte, error) {
	if !r.wraps() {
		return nil, nil, fmt.Errorf("ExecSync: %w", ErrNoRuntime)
	}
	return r.inner.ExecSync(ctx, containerID, cmd, timeout)
}

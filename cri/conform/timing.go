package conform

import (
	"context"
	"sync"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cri"
)

// timed is a cri.Runtime decorator that keeps every call with its
// duration and the step it was made for, for the report's timing check:
// the kubelet's resize takes as long as the runtime's answers.
type timed struct {
	inner cri.Runtime

	mu    sync.Mutex
	step  string
	calls []CallTiming
}

// Unwrap returns the inner runtime, so that useMemory and
// cri.ContainerPID reach the capabilities of an in-process runtime.
func (t *timed) Unwrap() cri.Runtime { return t.inner }

// setStep names the calls that follow.
func (t *timed) setStep(step string) {
	t.mu.Lock()
	t.step = step
	t.mu.Unlock()
}

// since records a call that started at start.
func (t *timed) since(method string, start time.Time, err error) {
	d := time.Since(start)
	t.mu.Lock()
	defer t.mu.Unlock()
	c := CallTiming{Method: method, Step: t.step, Duration: d}
	if err != nil {
		c.Err = err.Error()
	}
	t.calls = append(t.calls, c)
}

// timings returns the calls so far.
func (t *timed) timings() []CallTiming {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]CallTiming(nil), t.calls...)
}

// last returns the duration of the latest call of method.
func (t *timed) last(method string) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := len(t.calls) - 1; i >= 0; i-- {
		if t.calls[i].Method == method {
			return t.calls[i].Duration
		}
	}
	return 0
}

func (t *timed) RunPodSandbox(ctx context.Context, config *runtimeapi.PodSandboxConfig, runtimeHandler string) (string, error) {
	start := time.Now()
	id, err := t.inner.RunPodSandbox(ctx, config, runtimeHandler)
	t.since("RunPodSandbox", start, err)
	return id, err
}

func (t *timed) StopPodSandbox(ctx context.Context, podSandboxID string) error {
	start := time.Now()
	err := t.inner.StopPodSandbox(ctx, podSandboxID)
	t.since("StopPodSandbox", start, err)
	return err
}

func (t *timed) RemovePodSandbox(ctx context.Context, podSandboxID string) error {
	start := time.Now()
	err := t.inner.RemovePodSandbox(ctx, podSandboxID)
	t.since("RemovePodSandbox", start, err)
	return err
}

func (t *timed) ListPodSandbox(ctx context.Context, filter *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	start := time.Now()
	out, err := t.inner.ListPodSandbox(ctx, filter)
	t.since("ListPodSandbox", start, err)
	return out, err
}

func (t *timed) UpdatePodSandboxResources(ctx context.Context, request *runtimeapi.UpdatePodSandboxResourcesRequest) (*runtimeapi.UpdatePodSandboxResourcesResponse, error) {
	start := time.Now()
	out, err := t.inner.UpdatePodSandboxResources(ctx, request)
	t.since("UpdatePodSandboxResources", start, err)
	return out, err
}

func (t *timed) CreateContainer(ctx context.Context, podSandboxID string, config *runtimeapi.ContainerConfig, sandboxConfig *runtimeapi.PodSandboxConfig) (string, error) {
	start := time.Now()
	id, err := t.inner.CreateContainer(ctx, podSandboxID, config, sandboxConfig)
	t.since("CreateContainer", start, err)
	return id, err
}

func (t *timed) StartContainer(ctx context.Context, containerID string) error {
	start := time.Now()
	err := t.inner.StartContainer(ctx, containerID)
	t.since("StartContainer", start, err)
	return err
}

func (t *timed) StopContainer(ctx context.Context, containerID string, timeout int64) error {
	start := time.Now()
	err := t.inner.StopContainer(ctx, containerID, timeout)
	t.since("StopContainer", start, err)
	return err
}

func (t *timed) RemoveContainer(ctx context.Context, containerID string) error {
	start := time.Now()
	err := t.inner.RemoveContainer(ctx, containerID)
	t.since("RemoveContainer", start, err)
	return err
}

func (t *timed) ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	start := time.Now()
	out, err := t.inner.ListContainers(ctx, filter)
	t.since("ListContainers", start, err)
	return out, err
}

func (t *timed) ContainerStatus(ctx context.Context, containerID string, verbose bool) (*runtimeapi.ContainerStatusResponse, error) {
	start := time.Now()
	out, err := t.inner.ContainerStatus(ctx, containerID, verbose)
	t.since("ContainerStatus", start, err)
	return out, err
}

func (t *timed) UpdateContainerResources(ctx context.Context, containerID string, resources *runtimeapi.ContainerResources) error {
	start := time.Now()
	err := t.inner.UpdateContainerResources(ctx, containerID, resources)
	t.since("UpdateContainerResources", start, err)
	return err
}

func (t *timed) ContainerStats(ctx context.Context, containerID string) (*runtimeapi.ContainerStats, error) {
	start := time.Now()
	out, err := t.inner.ContainerStats(ctx, containerID)
	t.since("ContainerStats", start, err)
	return out, err
}

func (t *timed) ExecSync(ctx context.Context, containerID string, cmd []string, timeout time.Duration) ([]byte, []byte, error) {
	start := time.Now()
	stdout, stderr, err := t.inner.ExecSync(ctx, containerID, cmd, timeout)
	t.since("ExecSync", start, err)
	return stdout, stderr, err
}

var _ cri.Runtime = (*timed)(nil)

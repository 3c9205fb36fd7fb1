package resize

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
)

// ioWatch counts every call a node makes on its runtime, its cgroups and
// its API server, through the wrappers it gives (watchRuntime,
// watchCgroups, watchAPI), and can hold UpdateContainerResources calls
// until released, so that a test can catch a node in the middle of a
// batch.
type ioWatch struct {
	calls atomic.Int64

	mu      sync.Mutex
	hold    chan struct{} // while non-nil, UpdateContainerResources waits for it to close
	holding chan struct{} // receives when a call starts waiting on hold
}

// count notes one call.
func (w *ioWatch) count() { w.calls.Add(1) }

// holdUpdates makes the next UpdateContainerResources calls wait until the
// function returned is called; the channel receives when one starts
// waiting.
func (w *ioWatch) holdUpdates() (started <-chan struct{}, release func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	hold := make(chan struct{})
	holding := make(chan struct{}, 1)
	w.hold, w.holding = hold, holding
	var once sync.Once
	return holding, func() {
		once.Do(func() {
			w.mu.Lock()
			w.hold, w.holding = nil, nil
			w.mu.Unlock()
			close(hold)
		})
	}
}

func (w *ioWatch) waitIfHeld() {
	w.mu.Lock()
	hold, holding := w.hold, w.holding
	w.mu.Unlock()
	if hold == nil {
		return
	}
	select {
	case holding <- struct{}{}:
	default:
	}
	<-hold
}

// watchRuntime counts the calls on rt.
type watchRuntime struct {
	rt cri.Runtime
	w  *ioWatch
}

func (r *watchRuntime) Unwrap() cri.Runtime { return r.rt }

func (r *watchRuntime) RunPodSandbox(ctx context.Context, config *runtimeapi.PodSandboxConfig, handler string) (string, error) {
	r.w.count()
	return r.rt.RunPodSandbox(ctx, config, handler)
}

func (r *watchRuntime) StopPodSandbox(ctx context.Context, id string) error {
	r.w.count()
	return r.rt.StopPodSandbox(ctx, id)
}

func (r *watchRuntime) RemovePodSandbox(ctx context.Context, id string) error {
	r.w.count()
	return r.rt.RemovePodSandbox(ctx, id)
}

func (r *watchRuntime) ListPodSandbox(ctx context.Context, filter *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	r.w.count()
	return r.rt.ListPodSandbox(ctx, filter)
}

func (r *watchRuntime) UpdatePodSandboxResources(ctx context.Context, req *runtimeapi.UpdatePodSandboxResourcesRequest) (*runtimeapi.UpdatePodSandboxResourcesResponse, error) {
	r.w.count()
	return r.rt.UpdatePodSandboxResources(ctx, req)
}

func (r *watchRuntime) CreateContainer(ctx context.Context, sandbox string, config *runtimeapi.ContainerConfig, sandboxConfig *runtimeapi.PodSandboxConfig) (string, error) {
	r.w.count()
	return r.rt.CreateContainer(ctx, sandbox, config, sandboxConfig)
}

func (r *watchRuntime) StartContainer(ctx context.Context, id string) error {
	r.w.count()
	return r.rt.StartContainer(ctx, id)
}

func (r *watchRuntime) StopContainer(ctx context.Context, id string, timeout int64) error {
	r.w.count()
	return r.rt.StopContainer(ctx, id, timeout)
}

func (r *watchRuntime) RemoveContainer(ctx context.Context, id string) error {
	r.w.count()
	return r.rt.RemoveContainer(ctx, id)
}

func (r *watchRuntime) ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	r.w.count()
	return r.rt.ListContainers(ctx, filter)
}

func (r *watchRuntime) ContainerStatus(ctx context.Context, id string, verbose bool) (*runtimeapi.ContainerStatusResponse, error) {
	r.w.count()
	return r.rt.ContainerStatus(ctx, id, verbose)
}

func (r *watchRuntime) UpdateContainerResources(ctx context.Context, id string, res *runtimeapi.ContainerResources) error {
	r.w.count()
	r.w.waitIfHeld()
	return r.rt.UpdateContainerResources(ctx, id, res)
}

func (r *watchRuntime) ContainerStats(ctx context.Context, id string) (*runtimeapi.ContainerStats, error) {
	r.w.count()
	return r.rt.ContainerStats(ctx, id)
}

func (r *watchRuntime) ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) ([]byte, []byte, error) {
	r.w.count()
	return r.rt.ExecSync(ctx, id, cmd, timeout)
}

// watchCgroups counts the calls on m.
type watchCgroups struct {
	m cgroup.Manager
	w *ioWatch
}

func (c *watchCgroups) Unwrap() cgroup.Manager  { return c.m }
func (c *watchCgroups) Version() cgroup.Version { return c.m.Version() }

func (c *watchCgroups) Create(path string) error {
	c.w.count()
	return c.m.Create(path)
}

func (c *watchCgroups) Delete(path string) error {
	c.w.count()
	return c.m.Delete(path)
}

func (c *watchCgroups) Exists(path string) bool {
	c.w.count()
	return c.m.Exists(path)
}

func (c *watchCgroups) Get(path string) (cgroup.Values, error) {
	c.w.count()
	return c.m.Get(path)
}

func (c *watchCgroups) Set(path string, v cgroup.Values) ([]cgroup.Write, error) {
	c.w.count()
	return c.m.Set(path, v)
}

func (c *watchCgroups) ReadFile(path, file string) (string, error) {
	c.w.count()
	return c.m.ReadFile(path, file)
}

func (c *watchCgroups) MemoryUsage(path string) (int64, error) {
	c.w.count()
	return c.m.MemoryUsage(path)
}

// watchAPI counts the calls on api, which deletes gracefully as the
// in-memory API server does.
type watchAPI struct {
	api *Cluster
	w   *ioWatch
}

func (a *watchAPI) CreatePod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error) {
	a.w.count()
	return a.api.CreatePod(context.Background(), pod)
}

func (a *watchAPI) GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	a.w.count()
	return a.api.GetPod(context.Background(), namespace, name)
}

func (a *watchAPI) ListPods(ctx context.Context) []*v1.Pod {
	a.w.count()
	return a.api.ListPods(context.Background())
}

func (a *watchAPI) ResizePod(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error) {
	a.w.count()
	return a.api.ResizePod(context.Background(), namespace, name, patch)
}

func (a *watchAPI) DeletePod(ctx context.Context, namespace, name string) error {
	a.w.count()
	return a.api.DeletePod(context.Background(), namespace, name)
}

func (a *watchAPI) MarkPodDeleted(ctx context.Context, namespace, name string, uid types.UID, now time.Time) (*v1.Pod, error) {
	a.w.count()
	return a.api.MarkPodDeleted(context.Background(), namespace, name, uid, now)
}

func (a *watchAPI) UpdatePodStatus(ctx context.Context, namespace, name string, uid types.UID, status v1.PodStatus) error {
	a.w.count()
	return a.api.UpdatePodStatus(context.Background(), namespace, name, uid, status)
}

func (a *watchAPI) RecordEvent(ctx context.Context, e Event) {
	a.w.count()
	a.api.RecordEvent(context.Background(), e)
}

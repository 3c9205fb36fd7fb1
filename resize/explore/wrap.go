package explore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/allocation"
	"github.com/resizelet/resizelet/allocation/state"
	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/cri/crilabels"
	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/apiserver"
)

// The wrappers below put a gate in front of every part a kubelet drives:
// its cgroup manager, its runtime, its two checkpoints and the API server.
// A call goes through the gate's verdict and, unless refused or failed,
// to the part itself, with no lock held.

// namer names the objects calls are about, for the table: pods by UID or
// cgroup path, containers and sandboxes by ID. It asks the runtime below
// every gate and the API server, so naming never counts as a call.
type namer struct {
	rt      cri.Runtime
	cluster resize.API

	mu         sync.Mutex
	containers map[string]string // container ID → "ns/pod container"
	sandboxes  map[string]string // sandbox ID → "ns/pod"
	pods       map[types.UID]string
}

func newNamer(rt cri.Runtime, cluster resize.API) *namer {
	return &namer{rt: rt, cluster: cluster, containers: map[string]string{}, sandboxes: map[string]string{}, pods: map[types.UID]string{}}
}

func labelName(labels map[string]string) string {
	return labels[crilabels.PodNamespace] + "/" + labels[crilabels.PodName]
}

// container names a container ID.
func (n *namer) container(id string) string {
	n.mu.Lock()
	name, ok := n.containers[id]
	n.mu.Unlock()
	if ok {
		return name
	}
	resp, err := n.rt.ContainerStatus(context.Background(), id, false)
	if err != nil {
		return "container " + shortID(id)
	}
	labels := resp.GetStatus().GetLabels()
	name = labelName(labels) + " " + labels[crilabels.ContainerName]
	n.mu.Lock()
	n.containers[id] = name
	n.mu.Unlock()
	return name
}

// sandbox names a sandbox ID.
func (n *namer) sandbox(id string) string {
	n.mu.Lock()
	name, ok := n.sandboxes[id]
	n.mu.Unlock()
	if ok {
		return name
	}
	list, err := n.rt.ListPodSandbox(context.Background(), &runtimeapi.PodSandboxFilter{Id: id})
	if err != nil || len(list) == 0 {
		return "sandbox " + shortID(id)
	}
	name = labelName(list[0].GetLabels())
	n.mu.Lock()
	n.sandboxes[id] = name
	n.mu.Unlock()
	return name
}

// cgroup names a cgroup path by the pod whose UID it holds, asking the
// API server for the pods it does not know yet (without holding its lock).
func (n *namer) cgroup(path string) string {
	if n == nil {
		return path
	}
	if name, ok := n.podOfCgroup(path); ok {
		return name
	}
	pods := n.cluster.ListPods(context.Background())
	n.mu.Lock()
	for _, p := range pods {
		n.pods[p.UID] = p.Namespace + "/" + p.Name
	}
	n.mu.Unlock()
	if name, ok := n.podOfCgroup(path); ok {
		return name
	}
	return path
}

// podOfCgroup names path by a known pod: the pod for its own cgroup (the
// cgroupfs driver's pod<uid>, the systemd driver's ...pod<uid_>.slice),
// the pod's container cgroup for one below it.
func (n *namer) podOfCgroup(path string) (string, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for uid, name := range n.pods {
		u := string(uid)
		systemd := strings.ReplaceAll(u, "-", "_")
		if !strings.Contains(path, u) && !strings.Contains(path, systemd) {
			continue
		}
		if strings.HasSuffix(path, u) || strings.HasSuffix(path, systemd+".slice") {
			return name, true
		}
		return name + " container cgroup", true
	}
	return "", false
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// describeValues renders the values a Set writes, by file name.
func describeValues(version cgroup.Version, v cgroup.Values) string {
	var parts []string
	if version == cgroup.V2 {
		if v.MemoryLimit != nil {
			parts = append(parts, "memory.max="+limitString(*v.MemoryLimit))
		}
		if v.CPUWeight != nil {
			parts = append(parts, fmt.Sprintf("cpu.weight=%d", *v.CPUWeight))
		}
		if v.CPUQuota != nil || v.CPUPeriod != nil {
			q, p := "-", "-"
			if v.CPUQuota != nil {
				q = limitString(*v.CPUQuota)
			}
			if v.CPUPeriod != nil {
				p = fmt.Sprint(*v.CPUPeriod)
			}
			parts = append(parts, "cpu.max="+q+" "+p)
		}
	} else {
		if v.MemoryLimit != nil {
			parts = append(parts, fmt.Sprintf("memory.limit_in_bytes=%d", *v.MemoryLimit))
		}
		if v.CPUShares != nil {
			parts = append(parts, fmt.Sprintf("cpu.shares=%d", *v.CPUShares))
		}
		if v.CPUPeriod != nil {
			parts = append(parts, fmt.Sprintf("cpu.cfs_period_us=%d", *v.CPUPeriod))
		}
		if v.CPUQuota != nil {
			parts = append(parts, fmt.Sprintf("cpu.cfs_quota_us=%d", *v.CPUQuota))
		}
	}
	return strings.Join(parts, " ")
}

func limitString(v int64) string {
	if v == cgroup.Unlimited {
		return "max"
	}
	return fmt.Sprint(v)
}

// gatedCgroups is the kubelet's cgroup manager behind its gate. The
// kubelet writes only pod cgroups (and their parents) itself.
type gatedCgroups struct {
	m     cgroup.Manager
	g     *gate
	names *namer
}

var _ cgroup.Manager = (*gatedCgroups)(nil)

// Unwrap returns the wrapped manager, so that the simulator's extras
// (memory usage, OOM kills) stay reachable through the wrapper.
func (c *gatedCgroups) Unwrap() cgroup.Manager { return c.m }

func (c *gatedCgroups) Version() cgroup.Version { return c.m.Version() }

func (c *gatedCgroups) Create(path string) error {
	switch c.g.enter(func() call {
		return call{Kind: KindCgroupLifecycle, Op: "Create cgroup " + c.names.cgroup(path), Mutating: true, CanCrash: true, CanFail: true}
	}) {
	case refuse:
		return ErrCrashed
	case fail:
		return fmt.Errorf("create %s: %w", path, ErrInjected)
	case performAndDie:
		defer c.g.die()
	}
	return c.m.Create(path)
}

func (c *gatedCgroups) Delete(path string) error {
	switch c.g.enter(func() call {
		return call{Kind: KindCgroupLifecycle, Op: "Delete cgroup " + c.names.cgroup(path), Mutating: true, CanCrash: true, CanFail: true}
	}) {
	case refuse:
		return ErrCrashed
	case fail:
		return fmt.Errorf("delete %s: %w", path, ErrInjected)
	case performAndDie:
		defer c.g.die()
	}
	return c.m.Delete(path)
}

// Exists has no way to fail: a dead kubelet learns that nothing exists,
// which it cannot act on anyway.
func (c *gatedCgroups) Exists(path string) bool {
	switch c.g.enter(func() call {
		return call{Kind: KindCgroupRead, Op: "Exists " + c.names.cgroup(path), CanCrash: true}
	}) {
	case refuse:
		return false
	case performAndDie:
		defer c.g.die()
	}
	return c.m.Exists(path)
}

func (c *gatedCgroups) Get(path string) (cgroup.Values, error) {
	switch c.g.enter(func() call {
		return call{Kind: KindCgroupRead, Op: "Get " + c.names.cgroup(path), CanCrash: true, CanFail: true}
	}) {
	case refuse:
		return cgroup.Values{}, ErrCrashed
	case fail:
		return cgroup.Values{}, fmt.Errorf("get %s: %w", path, ErrInjected)
	case performAndDie:
		defer c.g.die()
	}
	return c.m.Get(path)
}

func (c *gatedCgroups) Set(path string, v cgroup.Values) ([]cgroup.Write, error) {
	switch c.g.enter(func() call {
		return call{Kind: KindPodCgroup, Op: "Set " + c.names.cgroup(path) + " " + describeValues(c.m.Version(), v), Mutating: true, CanCrash: true, CanFail: true}
	}) {
	case refuse:
		return nil, ErrCrashed
	case fail:
		return nil, fmt.Errorf("write %s: %w", path, ErrInjected)
	case performAndDie:
		defer c.g.die()
	}
	return c.m.Set(path, v)
}

func (c *gatedCgroups) ReadFile(path, file string) (string, error) {
	switch c.g.enter(func() call {
		return call{Kind: KindCgroupRead, Op: "ReadFile " + c.names.cgroup(path) + " " + file, CanCrash: true, CanFail: true}
	}) {
	case refuse:
		return "", ErrCrashed
	case fail:
		return "", fmt.Errorf("read %s/%s: %w", path, file, ErrInjected)
	case performAndDie:
		defer c.g.die()
	}
	return c.m.ReadFile(path, file)
}

func (c *gatedCgroups) MemoryUsage(path string) (int64, error) {
	switch c.g.enter(func() call {
		return call{Kind: KindCgroupRead, Op: "MemoryUsage " + c.names.cgroup(path), CanCrash: true, CanFail: true}
	}) {
	case refuse:
		return 0, ErrCrashed
	case fail:
		return 0, fmt.Errorf("memory usage %s: %w", path, ErrInjected)
	case performAndDie:
		defer c.g.die()
	}
	return c.m.MemoryUsage(path)
}

// runtimeCgroups is the cgroup manager the in-memory runtime writes
// container cgroups through. Its writes are the runtime's, made inside a
// kubelet's runtime call: they can fail once (as runc's write can) but the
// kubelet cannot crash between them, so they are never crash points. They
// count against whichever kubelet is current.
type runtimeCgroups struct {
	cgroup.Manager
	current func() *gate
	names   *namer
}

// Unwrap returns the wrapped manager.
func (c *runtimeCgroups) Unwrap() cgroup.Manager { return c.Manager }

func (c *runtimeCgroups) Set(path string, v cgroup.Values) ([]cgroup.Write, error) {
	g := c.current()
	if g == nil {
		return c.Manager.Set(path, v)
	}
	if g.enter(func() call {
		return call{Kind: KindContainerCgroup, Op: "runtime Set " + c.names.cgroup(path) + " " + describeValues(c.Manager.Version(), v), Mutating: true, CanFail: true}
	}) == fail {
		return nil, fmt.Errorf("write %s: %w", path, ErrInjected)
	}
	// A dead kubelet makes no runtime calls, so the runtime writes only
	// for a live one: the verdict is perform.
	return c.Manager.Set(path, v)
}

// gatedRuntime is the kubelet's runtime behind its gate.
type gatedRuntime struct {
	rt    cri.Runtime
	g     *gate
	names *namer
}

var _ cri.Runtime = (*gatedRuntime)(nil)

// Unwrap returns the wrapped runtime.
func (r *gatedRuntime) Unwrap() cri.Runtime { return r.rt }

// through runs one runtime call behind the gate.
func (r *gatedRuntime) through(kind Kind, mutating bool, op func() string, do func() error) error {
	switch r.g.enter(func() call {
		return call{Kind: kind, Op: op(), Mutating: mutating, CanCrash: true, CanFail: true}
	}) {
	case refuse:
		return ErrCrashed
	case fail:
		return fmt.Errorf("%w (%w)", ErrInjected, cri.ErrUnavailable)
	case performAndDie:
		defer r.g.die()
	}
	return do()
}

func (r *gatedRuntime) RunPodSandbox(ctx context.Context, config *runtimeapi.PodSandboxConfig, handler string) (id string, err error) {
	err = r.through(KindCRILifecycle, true, func() string { return "RunPodSandbox " + labelName(config.GetLabels()) }, func() error {
		id, err = r.rt.RunPodSandbox(ctx, config, handler)
		return err
	})
	return id, err
}

func (r *gatedRuntime) StopPodSandbox(ctx context.Context, id string) error {
	return r.through(KindCRILifecycle, true, func() string { return "StopPodSandbox " + r.names.sandbox(id) }, func() error {
		return r.rt.StopPodSandbox(ctx, id)
	})
}

func (r *gatedRuntime) RemovePodSandbox(ctx context.Context, id string) error {
	return r.through(KindCRILifecycle, true, func() string { return "RemovePodSandbox " + r.names.sandbox(id) }, func() error {
		return r.rt.RemovePodSandbox(ctx, id)
	})
}

func (r *gatedRuntime) ListPodSandbox(ctx context.Context, filter *runtimeapi.PodSandboxFilter) (out []*runtimeapi.PodSandbox, err error) {
	err = r.through(KindCRIRead, false, func() string { return "ListPodSandbox" }, func() error {
		out, err = r.rt.ListPodSandbox(ctx, filter)
		return err
	})
	return out, err
}

func (r *gatedRuntime) UpdatePodSandboxResources(ctx context.Context, req *runtimeapi.UpdatePodSandboxResourcesRequest) (out *runtimeapi.UpdatePodSandboxResourcesResponse, err error) {
	err = r.through(KindCRIUpdate, true, func() string { return "UpdatePodSandboxResources " + r.names.sandbox(req.GetPodSandboxId()) }, func() error {
		out, err = r.rt.UpdatePodSandboxResources(ctx, req)
		return err
	})
	return out, err
}

func (r *gatedRuntime) CreateContainer(ctx context.Context, sandboxID string, config *runtimeapi.ContainerConfig, sandboxConfig *runtimeapi.PodSandboxConfig) (id string, err error) {
	name := labelName(config.GetLabels()) + " " + config.GetLabels()[crilabels.ContainerName]
	err = r.through(KindCRILifecycle, true, func() string { return "CreateContainer " + name }, func() error {
		id, err = r.rt.CreateContainer(ctx, sandboxID, config, sandboxConfig)
		return err
	})
	if err == nil {
		r.names.mu.Lock()
		r.names.containers[id] = name
		r.names.mu.Unlock()
	}
	return id, err
}

func (r *gatedRuntime) StartContainer(ctx context.Context, id string) error {
	return r.through(KindCRILifecycle, true, func() string { return "StartContainer " + r.names.container(id) }, func() error {
		return r.rt.StartContainer(ctx, id)
	})
}

func (r *gatedRuntime) StopContainer(ctx context.Context, id string, timeout int64) error {
	return r.through(KindCRILifecycle, true, func() string { return "StopContainer " + r.names.container(id) }, func() error {
		return r.rt.StopContainer(ctx, id, timeout)
	})
}

func (r *gatedRuntime) RemoveContainer(ctx context.Context, id string) error {
	return r.through(KindCRILifecycle, true, func() string { return "RemoveContainer " + r.names.container(id) }, func() error {
		return r.rt.RemoveContainer(ctx, id)
	})
}

func (r *gatedRuntime) ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) (out []*runtimeapi.Container, err error) {
	err = r.through(KindCRIRead, false, func() string { return "ListContainers" }, func() error {
		out, err = r.rt.ListContainers(ctx, filter)
		return err
	})
	return out, err
}

func (r *gatedRuntime) ContainerStatus(ctx context.Context, id string, verbose bool) (out *runtimeapi.ContainerStatusResponse, err error) {
	err = r.through(KindCRIRead, false, func() string { return "ContainerStatus " + r.names.container(id) }, func() error {
		out, err = r.rt.ContainerStatus(ctx, id, verbose)
		return err
	})
	return out, err
}

func (r *gatedRuntime) UpdateContainerResources(ctx context.Context, id string, res *runtimeapi.ContainerResources) error {
	return r.through(KindCRIUpdate, true, func() string { return "UpdateContainerResources " + r.names.container(id) }, func() error {
		return r.rt.UpdateContainerResources(ctx, id, res)
	})
}

func (r *gatedRuntime) ContainerStats(ctx context.Context, id string) (out *runtimeapi.ContainerStats, err error) {
	err = r.through(KindCRIRead, false, func() string { return "ContainerStats " + r.names.container(id) }, func() error {
		out, err = r.rt.ContainerStats(ctx, id)
		return err
	})
	return out, err
}

func (r *gatedRuntime) ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) (stdout, stderr []byte, err error) {
	err = r.through(KindCRIRead, false, func() string { return "ExecSync " + r.names.container(id) }, func() error {
		stdout, stderr, err = r.rt.ExecSync(ctx, id, cmd, timeout)
		return err
	})
	return stdout, stderr, err
}

// gatedState is one checkpoint behind the gate. Reads and Delete touch
// only the kubelet's memory (Delete reaches the file with the next write,
// as in the kubelet), so only Set and SetContainer are calls.
type gatedState struct {
	st    *state.Store
	file  string
	g     *gate
	names *namer
}

var _ state.State = (*gatedState)(nil)

func (s *gatedState) Get(uid types.UID) (allocation.PodResources, bool) { return s.st.Get(uid) }

func (s *gatedState) All() map[types.UID]allocation.PodResources { return s.st.All() }

func (s *gatedState) Delete(uid types.UID) { s.st.Delete(uid) }

func (s *gatedState) podName(uid types.UID) string {
	s.names.mu.Lock()
	name, ok := s.names.pods[uid]
	s.names.mu.Unlock()
	if ok {
		return name
	}
	return s.names.cgroup(string(uid))
}

func (s *gatedState) Set(uid types.UID, r allocation.PodResources) error {
	return s.write(func() string { return "Set " + s.file + " " + s.podName(uid) }, func() error { return s.st.Set(uid, r) })
}

func (s *gatedState) SetContainer(uid types.UID, name string, r v1.ResourceRequirements) error {
	return s.write(func() string { return "SetContainer " + s.file + " " + s.podName(uid) + " " + name }, func() error {
		return s.st.SetContainer(uid, name, r)
	})
}

// Flush writes the store's file again when it is behind
// (NodeConfig.FlushCheckpoints); it is a checkpoint write like the others.
func (s *gatedState) Flush() error {
	return s.write(func() string { return "Flush " + s.file }, s.st.Flush)
}

// write runs one checkpoint write behind the gate. A failed write is the
// checkpoint's own failure to persist: the record is kept in memory and
// the file is left as it was (State's contract, as the kubelet's
// stateCheckpoint keeps its cache when storeState fails). The failure is
// made real by putting a directory where the file goes for the duration
// of the write, so that the store's atomic rename fails.
func (s *gatedState) write(op func() string, do func() error) error {
	switch s.g.enter(func() call {
		return call{Kind: KindCheckpoint, Op: op(), Mutating: true, CanCrash: true, CanFail: true}
	}) {
	case refuse:
		return ErrCrashed
	case fail:
		if err := failPersist(s.st.Path(), do); err != nil {
			return err
		}
		return fmt.Errorf("persist %s: %w", s.file, ErrInjected)
	case performAndDie:
		defer s.g.die()
	}
	return do()
}

// failPersist runs do while path cannot be replaced, and returns do's
// error when it is not the expected failure.
func failPersist(path string, do func() error) error {
	if path == "" {
		// An in-memory store has nothing to persist: the write keeps its
		// record and only the error is injected.
		_ = do()
		return nil
	}
	held := path + ".explore-held"
	had := true
	if err := os.Rename(path, held); err != nil {
		if !os.IsNotExist(err) {
			return err
		}
		had = false
	}
	if err := os.Mkdir(path, 0o700); err != nil {
		return err
	}
	err := do()
	if rerr := os.Remove(path); rerr != nil {
		return rerr
	}
	if had {
		if rerr := os.Rename(held, path); rerr != nil {
			return rerr
		}
	}
	if err == nil {
		return fmt.Errorf("persist %s: the write did not fail", path)
	}
	return nil
}

// gatedAPI is the API server as the kubelet reaches it. The kubelet's
// calls are its status writes and the final pod delete; the resize
// requests and pod creations the scenario makes through the node are the
// user's, and pass. Events are fire-and-forget (the kubelet's recorder
// buffers and drops them), so they are not points; a dead kubelet's are
// lost.
type gatedAPI struct {
	resize.API
	g     *gate
	names *namer
}

func (a *gatedAPI) UpdatePodStatus(ctx context.Context, namespace, name string, uid types.UID, status v1.PodStatus) error {
	switch a.g.enter(func() call {
		return call{Kind: KindAPI, Op: "UpdatePodStatus " + namespace + "/" + name, Mutating: true, CanCrash: true, CanFail: true}
	}) {
	case refuse:
		return ErrCrashed
	case fail:
		return fmt.Errorf("update status: %w", ErrInjected)
	case performAndDie:
		defer a.g.die()
	}
	return a.API.UpdatePodStatus(ctx, namespace, name, uid, status)
}

func (a *gatedAPI) DeletePod(ctx context.Context, namespace, name string) error {
	switch a.g.enter(func() call {
		return call{Kind: KindAPI, Op: "DeletePod " + namespace + "/" + name, Mutating: true, CanCrash: true, CanFail: true}
	}) {
	case refuse:
		return ErrCrashed
	case fail:
		return fmt.Errorf("delete pod: %w", ErrInjected)
	case performAndDie:
		defer a.g.die()
	}
	return a.API.DeletePod(ctx, namespace, name)
}

// MarkPodDeleted passes the deletion's mark through ungated: it is the
// user's request to the API server (kubectl delete), which a kubelet crash
// does not undo, made by Node.DeletePod on the user's behalf.
func (a *gatedAPI) MarkPodDeleted(ctx context.Context, namespace, name string, uid types.UID, now time.Time) (*v1.Pod, error) {
	gd, ok := a.API.(resize.GracefulDeleter)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	return gd.MarkPodDeleted(ctx, namespace, name, uid, now)
}

// ResizePodPatch passes a resize patch of any type through ungated, as
// ResizePod passes: it is the user's request (kubectl patch --type), made
// by Node.Resize on the user's behalf. An API that takes strategic
// merge patches only is sent those, and refuses the others as the node
// refuses them for it.
func (a *gatedAPI) ResizePodPatch(ctx context.Context, namespace, name string, pt types.PatchType, patch []byte) (*v1.Pod, error) {
	if pr, ok := a.API.(resize.PatchResizer); ok {
		return pr.ResizePodPatch(ctx, namespace, name, pt, patch)
	}
	if pt == "" || pt == apiserver.StrategicMergePatch {
		return a.API.ResizePod(ctx, namespace, name, patch)
	}
	return nil, fmt.Errorf("resize pod %s/%s: the API takes strategic merge patches only, not %s: %w", namespace, name, pt, errors.ErrUnsupported)
}

func (a *gatedAPI) RecordEvent(ctx context.Context, e resize.Event) {
	if a.g.isDead() {
		return
	}
	a.API.RecordEvent(ctx, e)
}

// gatedRequestAPI is gatedAPI for an API server that takes typed resize
// requests, which are the user's too.
type gatedRequestAPI struct {
	*gatedAPI
	rr resize.RequestResizer
}

func (a *gatedRequestAPI) ResizePodRequest(ctx context.Context, namespace, name string, req resize.ResizeRequest) (*v1.Pod, error) {
	return a.rr.ResizePodRequest(ctx, namespace, name, req)
}

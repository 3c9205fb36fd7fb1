package resize

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resizelet/resizelet/allocation/state"
	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/resize/core"
)

// ErrNotFakeClock is returned by Advance on a node whose clock is not a
// *FakeClock: real time cannot be moved.
var ErrNotFakeClock = errors.New("the node's clock is not a FakeClock")

// Timer periods of the pod workers (core.ResyncInterval and
// core.BackOffPeriod).
const (
	ResyncInterval = core.ResyncInterval
	BackOffPeriod  = core.BackOffPeriod
)

// maxBatches bounds one run until quiet: a node that is still busy after
// that many batches has a loop, which is a bug, not a state.
const maxBatches = 1_000_000

// Node is a kubelet's resize path on one node: the driver of a core.Core.
// Every call feeds an input to the core, then performs the batches the
// core returns, in order, through the cgroup manager, the runtime, the
// checkpoints and the API server, and feeds the results back, until the
// node is quiet.
//
// It is safe for concurrent use. One lock guards the core and is held only
// around each Step; no lock is held across a runtime call, a cgroup write
// or a checkpoint write. Several callers perform different pods' batches
// at the same time, as the kubelet's pod workers do.
type Node struct {
	cfg       NodeConfig
	cluster   API
	cg        cgroup.Manager
	rt        cri.Runtime
	clock     Clock
	allocated state.State
	actuated  state.State

	mu   sync.Mutex
	cond *sync.Cond
	core *core.Core

	// statuses writes pod statuses, and again those whose write failed.
	statuses statusWriter
}

// NewNode starts a kubelet on cfg with deps: it loads the checkpoints,
// lists the runtime's sandboxes and containers and the API server's pods,
// and starts a core on them (which admits the pods in creation order,
// retries pending resizes and syncs every pod until quiet). A kubelet
// restart is NewNode on the same deps.
//
// cfg is defaulted and validated (core.NodeConfig.Validate); its cgroup
// version is the one the cgroup manager reports.
func NewNode(ctx context.Context, cfg NodeConfig, deps Deps) (*Node, error) {
	if deps.Cluster == nil || deps.Cgroups == nil || deps.Runtime == nil {
		return nil, errors.New("new node: Deps.Cluster, Deps.Cgroups and Deps.Runtime are required")
	}
	cfg.CgroupVersion = deps.Cgroups.Version()
	c, err := core.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("new node: %w", err)
	}
	if deps.Clock == nil {
		deps.Clock = NewFakeClock(time.Unix(0, 0).UTC())
	}
	n := &Node{
		cfg:       c.Config(),
		cluster:   deps.Cluster,
		cg:        deps.Cgroups,
		rt:        deps.Runtime,
		clock:     deps.Clock,
		allocated: deps.Allocated,
		actuated:  deps.Actuated,
		core:      c,
	}
	n.cond = sync.NewCond(&n.mu)
	if r, ok := n.cluster.(NodeRegistrar); ok {
		r.RegisterNode(NodeInfo{Name: n.cfg.Name, OS: n.cfg.OS, Allocatable: n.cfg.Allocatable})
	}
	// The checkpoints are written in the version's format (1.37 adds a
	// field to every entry).
	format := state.FormatPodResources
	if c.Profile().CheckpointEmptyDirLimits() {
		format = state.FormatWithEmptyDirLimits
	}
	if n.allocated == nil {
		if n.allocated, err = openState(deps.CheckpointDir, state.AllocatedStateFile, format); err != nil {
			return nil, fmt.Errorf("new node: %w", err)
		}
	}
	if n.actuated == nil {
		if n.actuated, err = openState(deps.CheckpointDir, state.ActuatedStateFile, format); err != nil {
			return nil, fmt.Errorf("new node: %w", err)
		}
	}
	sandboxes, err := n.rt.ListPodSandbox(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("new node: list sandboxes: %w", err)
	}
	containers, err := n.rt.ListContainers(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("new node: list containers: %w", err)
	}
	start := core.Start{
		Pods:       n.cluster.ListPods(),
		Allocated:  n.allocated.All(),
		Actuated:   n.actuated.All(),
		Sandboxes:  sandboxes,
		Containers: containers,
		Now:        n.clock.Now(),
	}
	if err := n.run(ctx, start); err != nil {
		return nil, err
	}
	return n, nil
}

// openState opens a checkpoint in dir, or an in-memory one when dir is "".
func openState(dir, file string, format state.Format) (state.State, error) {
	if dir == "" {
		return state.NewMemory(), nil
	}
	return state.NewCheckpointFormat(dir, file, format)
}

// Gate reports a feature gate of the node.
func (n *Node) Gate(name string) bool { return n.core.Profile().Gate(name) }

// Config returns the node's defaulted configuration.
func (n *Node) Config() NodeConfig { return n.cfg }

// step feeds one input to the core under the lock.
func (n *Node) step(in core.Input) (core.Ready, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	rd, err := n.core.Step(in)
	n.cond.Broadcast()
	return rd, err
}

// run feeds in and then performs batches until the core is quiet: no work
// that can start and no batch in flight anywhere. When ctx is done, the
// batches still to perform fail with its error instead (so that every
// operation the core started ends, as a kubelet's would on its errors)
// and run returns that error once the core is quiet.
func (n *Node) run(ctx context.Context, in core.Input) error {
	rd, err := n.step(in)
	if err != nil {
		return err
	}
	return n.drain(ctx, rd)
}

// drain performs rd's batch and every batch after it until the core is
// quiet.
func (n *Node) drain(ctx context.Context, rd core.Ready) error {
	var err error
	buf := resultBuffers.Get().(*[]core.Result)
	defer func() {
		clear(*buf)
		resultBuffers.Put(buf)
	}()
	results := (*buf)[:0]
	done := &core.BatchDone{}
	for i := 0; ; i++ {
		if i >= maxBatches {
			return errors.New("node did not become quiet: the core keeps returning work")
		}
		if rd.Batch == nil {
			var quiet bool
			if rd, quiet = n.wait(); quiet {
				return ctx.Err()
			}
		}
		results = n.performInto(ctx, rd.Batch, results)
		*buf = results
		*done = core.BatchDone{ID: rd.Batch.ID, Results: results, Now: n.clock.Now()}
		if rd, err = n.step(done); err != nil {
			return err
		}
	}
}

// resultBuffers are the drains' result slices, reused: the core keeps
// nothing of a BatchDone's results.
var resultBuffers = sync.Pool{New: func() any { return new([]core.Result) }}

// wait returns the next batch there is for this caller, waiting while
// others perform theirs, or reports that the node is quiet.
func (n *Node) wait() (core.Ready, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for {
		rd, _ := n.core.Step(core.Poll{})
		if rd.Batch != nil {
			return rd, false
		}
		if n.core.InFlight() == 0 {
			// Nothing can start and nobody is performing anything that
			// could make it start: the node is quiet.
			return rd, true
		}
		n.cond.Wait()
	}
}

// AddPod creates the pod in the cluster, admits it (a rejected pod gets
// phase Failed with the kubelet's reason and message and a Warning event;
// that is not an error), starts its containers, retries pending resizes
// (pods_added) and runs until quiet.
func (n *Node) AddPod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error) {
	if pod.CreationTimestamp.IsZero() {
		pod = pod.DeepCopy()
		pod.CreationTimestamp = metav1.NewTime(n.clock.Now())
	}
	created, err := n.cluster.CreatePod(pod)
	if err != nil {
		return nil, err
	}
	own := *created // the core takes the top level as its own
	if err := n.run(ctx, core.PodAdded{Pod: &own, Now: n.clock.Now()}); err != nil {
		return nil, err
	}
	return n.cluster.GetPod(created.Namespace, created.Name)
}

// AddPods creates the pods in the cluster, in order, and hands them to the
// kubelet at once, as HandlePodAdditions takes a list: each is admitted in
// turn (against the ones before it), the pending resizes are retried once
// (pods_added), and the node runs until quiet. It ends up where AddPod on
// each pod in turn does, in one run. A pod the cluster refuses stops the
// call; the pods before it stay created but are not handed to the kubelet,
// and the error says which.
func (n *Node) AddPods(ctx context.Context, pods []*v1.Pod) ([]*v1.Pod, error) {
	created := make([]*v1.Pod, 0, len(pods))
	for i, pod := range pods {
		if pod.CreationTimestamp.IsZero() {
			pod = pod.DeepCopy()
			pod.CreationTimestamp = metav1.NewTime(n.clock.Now())
		}
		c, err := n.cluster.CreatePod(pod)
		if err != nil {
			return nil, fmt.Errorf("add pods: pods[%d]: %w", i, err)
		}
		own := *c // the core takes the top level as its own
		created = append(created, &own)
	}
	if err := n.run(ctx, core.PodsAdded{Pods: created, Now: n.clock.Now()}); err != nil {
		return nil, err
	}
	out := make([]*v1.Pod, 0, len(created))
	for _, c := range created {
		p, err := n.cluster.GetPod(c.Namespace, c.Name)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// Resize sends a resize request through the cluster's resize subresource
// (patch is a strategic merge patch, JSON or YAML). An API validation error
// is returned as is and changes nothing. Otherwise the kubelet handles the
// update: the pod joins the pending-resize queue, every pending resize is
// retried in queue order (pod_updated), and the node runs until quiet.
func (n *Node) Resize(ctx context.Context, namespace, name string, patch []byte) error {
	pod, err := n.cluster.ResizePod(namespace, name, patch)
	if err != nil {
		return err
	}
	return n.resized(ctx, pod)
}

// ResizeRequest is Resize for a typed request: no JSON on the way, the
// same validation, the same pod and the same kubelet handling as Resize
// with req.Patch(). An API that is not a RequestResizer is sent the patch.
func (n *Node) ResizeRequest(ctx context.Context, namespace, name string, req ResizeRequest) error {
	var pod *v1.Pod
	var err error
	if rr, ok := n.cluster.(RequestResizer); ok {
		pod, err = rr.ResizePodRequest(namespace, name, req)
	} else {
		pod, err = n.cluster.ResizePod(namespace, name, req.Patch())
	}
	if err != nil {
		return err
	}
	return n.resized(ctx, pod)
}

// resized hands the kubelet a pod the resize subresource updated: a copy
// of its top level, which the core takes as its own (the rest is shared
// with the API server, which never changes it).
func (n *Node) resized(ctx context.Context, pod *v1.Pod) error {
	n.mu.Lock()
	known := n.core.Knows(pod.Namespace, pod.Name)
	n.mu.Unlock()
	if !known {
		return nil
	}
	own := *pod
	return n.run(ctx, core.ResizeRequested{Pod: &own, Now: n.clock.Now()})
}

// DeletePod stops and removes the pod's containers and sandbox, removes its
// cgroup and checkpoint records, deletes it from the cluster, retries
// pending resizes (pods_removed) and runs until quiet. If the teardown
// fails the pod stays known, and a later DeletePod finishes the job.
func (n *Node) DeletePod(ctx context.Context, namespace, name string) error {
	n.mu.Lock()
	info, known := n.core.Pod(namespace, name)
	n.mu.Unlock()
	if !known {
		return fmt.Errorf("delete pod %s/%s: %w", namespace, name, ErrPodNotFound)
	}
	if err := n.run(ctx, core.DeleteRequested{UID: info.UID, Now: n.clock.Now()}); err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.core.DeleteError(info.UID)
}

// Sync runs the node until it is quiet after syncing every admitted pod.
// Call it after changing something under the node (memory usage, a
// container exit). Like Tick, it first writes again the pod statuses and
// deletions the API server refused (and, with FlushCheckpoints, the
// checkpoint files that are behind).
func (n *Node) Sync(ctx context.Context) error {
	n.retryStatuses()
	n.flushCheckpoints()
	return n.run(ctx, core.SyncRequested{Now: n.clock.Now()})
}

// Advance moves the node's FakeClock forward by d, firing the timers that
// fall due in time order (the pending-resize retry, pod resyncs and
// backoffs), and runs until quiet after each.
func (n *Node) Advance(ctx context.Context, d time.Duration) error {
	fc, ok := n.clock.(*FakeClock)
	if !ok {
		return ErrNotFakeClock
	}
	target := fc.Now().Add(d)
	for {
		n.mu.Lock()
		next := n.core.NextTimer()
		n.mu.Unlock()
		if next.After(target) {
			break
		}
		if next.After(fc.Now()) {
			fc.Set(next)
		}
		if err := n.Tick(ctx); err != nil {
			return err
		}
	}
	fc.Set(target)
	return n.Tick(ctx)
}

// Tick fires every timer that is due at the clock's current time and runs
// until quiet. An embedder on a real clock calls it periodically. It first
// writes again the pod statuses and deletions whose write failed, as the
// kubelet's status manager does in its periodic batch, and with
// NodeConfig.FlushCheckpoints the checkpoint files that are behind.
func (n *Node) Tick(ctx context.Context) error {
	n.retryStatuses()
	n.flushCheckpoints()
	return n.run(ctx, core.Tick{Now: n.clock.Now()})
}

// Pod returns what the node knows of a pod.
func (n *Node) Pod(namespace, name string) (PodInfo, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	info, ok := n.core.Pod(namespace, name)
	if !ok {
		return PodInfo{}, fmt.Errorf("pod %s/%s: %w", namespace, name, ErrPodNotFound)
	}
	return info, nil
}

// AllocatedTotal is the sum of the admitted pods' allocated requests, with
// overhead: what admission counts as used by them.
func (n *Node) AllocatedTotal() v1.ResourceList {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.core.AllocatedTotal()
}

// Close stops the node. The runtime, cgroups and checkpoints are left as
// they are, as a stopped kubelet leaves them.
func (n *Node) Close() {}

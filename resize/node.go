package resize

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/allocation/state"
	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/resize/apiserver"
	"github.com/resizelet/resizelet/resize/core"
	"github.com/resizelet/resizelet/resize/metrics"
)

// ErrNotFakeClock is returned by Advance on a node whose clock is not a
// *FakeClock: real time cannot be moved.
var ErrNotFakeClock = errors.New("the node's clock is not a FakeClock")

// ErrInvalidArgument is wrapped by the errors of Node calls given what no
// pod can be: a nil pod, an empty namespace or name. Such a call changes
// nothing.
var ErrInvalidArgument = errors.New("invalid argument")

// ErrAmountTooLarge is reported (errors.Is) when the API refused a pod or a
// resize because an amount is beyond what resizelet takes; see package
// cgroup/cgconfig, MaxMilliCPU, for the bounds and why a 1.35 API server,
// which has none, would have let the kubelet overflow.
var ErrAmountTooLarge = apiserver.ErrAmountTooLarge

// ErrUIDTaken is returned when a pod's UID is another pod's
// (apiserver.ErrUIDTaken).
var ErrUIDTaken = apiserver.ErrUIDTaken

// ErrOtherNode is wrapped by the error of AddPod and AddPods given a pod
// whose spec.nodeName names another node: a kubelet runs only the pods
// bound to it. Such a call changes nothing.
var ErrOtherNode = errors.New("the pod is bound to another node")

// argumentError is a call's argument that no pod can be.
type argumentError struct{ op, msg string }

func (e *argumentError) Error() string { return e.op + ": " + e.msg }

// Is reports ErrInvalidArgument.
func (e *argumentError) Is(target error) bool { return target == ErrInvalidArgument }

// checkPodName refuses an empty namespace or name, as the API server
// refuses a request without one ("name must be provided"), instead of
// looking up a pod no one can have created.
func checkPodName(op, namespace, name string) error {
	switch {
	case namespace == "":
		return &argumentError{op: fmt.Sprintf("%s %q", op, name), msg: "namespace must be provided"}
	case name == "":
		return &argumentError{op: fmt.Sprintf("%s in namespace %q", op, namespace), msg: "name must be provided"}
	}
	return nil
}

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
	// logger gets the kubelet's log lines (Deps.Logger); nil logs nothing.
	logger *slog.Logger
	// boundOnly is Deps.BoundPodsOnly.
	boundOnly bool

	mu   sync.Mutex
	cond *sync.Cond
	core *core.Core
	// resizeIn is the input resized hands the core, under mu: the core
	// keeps the pod it carries, not the input, so one serves every call.
	resizeIn core.ResizeRequested

	// statuses writes pod statuses, and again those whose write failed.
	statuses statusWriter

	// watch tells Advance when the node has settled.
	watch settleWatch

	// rec records the kubelet's resize metrics (Deps.Metrics); nil when
	// there are none. gauges are the gauge values it was last given.
	rec    *metrics.NodeRecorder
	gauges core.Gauges

	// life counts the calls in progress and stops the node (Close).
	life lifecycle

	// gone are the UIDs of the pods the node tore down and forgot most
	// recently, under mu (admit), oldest first in goneOrder.
	gone      map[types.UID]struct{}
	goneOrder []types.UID
}

// maxGone bounds Node.gone: a call that created a pod for a kubelet that
// was closed before it took it hands the pod to the next one within
// moments, not thousands of deletions later.
const maxGone = 1024

// forgotten notes that the node tore down and forgot the pod uid, so that
// a late hand-over of that pod (admit) does not bring it back.
func (n *Node) forgotten(uid types.UID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.gone == nil {
		n.gone = map[types.UID]struct{}{}
	}
	if _, ok := n.gone[uid]; ok {
		return
	}
	if len(n.goneOrder) == maxGone {
		delete(n.gone, n.goneOrder[0])
		n.goneOrder = n.goneOrder[1:]
	}
	n.gone[uid] = struct{}{}
	n.goneOrder = append(n.goneOrder, uid)
}

// NewNode starts a kubelet on cfg with deps: it loads the checkpoints,
// lists the runtime's sandboxes and containers and the API server's pods,
// and starts a core on them (which admits the pods in creation order,
// retries pending resizes when a pod's spec differs from its allocation,
// and syncs every pod until quiet). A kubelet restart is NewNode on the
// same deps; a pod that no longer fits is rejected with a new status
// (phase Failed, without its container statuses and resize conditions).
//
// cfg is defaulted and validated (core.NodeConfig.Validate). Its cgroup
// version is the one the cgroup manager reports, and its cgroup driver,
// when left empty, the one the runtime reports; a cfg or a runtime that
// disagrees with the cgroup manager or the runtime is refused with an
// error wrapping ErrIncoherent (a *MismatchError naming both sides). The
// Backend constructors (Simulated, HostCgroups, Remote) give parts
// that agree.
func NewNode(ctx context.Context, cfg NodeConfig, deps Deps) (_ *Node, err error) {
	if ctx == nil {
		return nil, &argumentError{op: "new node", msg: "nil context"}
	}
	if deps.Cluster == nil || deps.Cgroups == nil || deps.Runtime == nil {
		return nil, errors.New("new node: Deps.Cluster, Deps.Cgroups and Deps.Runtime are required")
	}
	if b := deps.backend; b != nil && b.isClosed() {
		return nil, fmt.Errorf("new node: %w", &closedError{why: "the " + b.kind + " backend the Deps came from is closed"})
	}
	if err := coherent(ctx, &cfg, deps); err != nil {
		return nil, fmt.Errorf("new node: %w", err)
	}
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
		logger:    deps.Logger,
		boundOnly: deps.BoundPodsOnly,
		core:      c,
	}
	if n.logger != nil {
		c.SetLogging(true)
	}
	n.cond = sync.NewCond(&n.mu)
	n.life.idle.L = &n.life.mu
	n.life.done = make(chan struct{})
	// The node holds its checkpoints before it reads them, and until it
	// is closed; the start counts as a call in progress, so that a
	// Backend closed meanwhile stops it.
	if n.life.release, err = n.hold(deps); err != nil {
		return nil, fmt.Errorf("new node %q: %w", n.cfg.Name, err)
	}
	n.life.active = 1
	defer func() {
		n.exit()
		if err != nil {
			_ = n.Close()
		}
	}()
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
		if n.allocated, err = openState(ctx, deps.CheckpointDir, state.AllocatedStateFile, format); err != nil {
			return nil, fmt.Errorf("new node: %w", err)
		}
	}
	if n.actuated == nil {
		if n.actuated, err = openState(ctx, deps.CheckpointDir, state.ActuatedStateFile, format); err != nil {
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
	pods := n.ownPods(n.cluster.ListPods())
	if err := distinctUIDs(pods); err != nil {
		return nil, fmt.Errorf("new node: %w", err)
	}
	removeOrphans(pods, n.allocated, n.actuated)
	start := core.Start{
		Pods:       pods,
		Allocated:  n.allocated.All(),
		Actuated:   n.actuated.All(),
		Sandboxes:  sandboxes,
		Containers: containers,
		Now:        n.clock.Now(),
	}
	// A kubelet that could not read its state never ran: it records
	// nothing, and leaves a predecessor's share of the gauges alone.
	n.attachMetrics(deps.Metrics)
	if err := n.run(ctx, start); err != nil {
		return nil, err
	}
	return n, nil
}

// removeOrphans forgets the checkpoint records of pods the node does not
// have any more (deleted while no kubelet ran, or whose deletion a
// stopped kubelet had not yet written to the file), as the kubelet's
// housekeeping does within seconds of its start (HandlePodCleanups in
// pkg/kubelet/kubelet_pods.go calls the allocation manager's
// RemoveOrphanedPods with every pod it has, finished ones included). Like
// the kubelet's (pkg/kubelet/allocation/state/state_checkpoint.go,
// RemoveOrphanedPods), it does not write the files: the records go with
// the next write.
func removeOrphans(pods []*v1.Pod, states ...state.State) {
	have := make(map[types.UID]bool, len(pods))
	for _, p := range pods {
		have[p.UID] = true
	}
	for _, st := range states {
		var orphans []types.UID
		if ul, ok := st.(interface{ UIDs() []types.UID }); ok {
			for _, uid := range ul.UIDs() {
				if !have[uid] {
					orphans = append(orphans, uid)
				}
			}
		} else {
			for uid := range st.All() {
				if !have[uid] {
					orphans = append(orphans, uid)
				}
			}
		}
		for _, uid := range orphans {
			st.Delete(uid)
		}
	}
}

// ownPods keeps, in place and in order, the pods that are the node's: those
// bound to it by spec.nodeName and, unless Deps.BoundPodsOnly, those
// without a nodeName. A nil pod is kept for distinctUIDs to refuse.
func (n *Node) ownPods(pods []*v1.Pod) []*v1.Pod {
	return slices.DeleteFunc(pods, func(p *v1.Pod) bool { return p != nil && !n.owns(p) })
}

// owns reports whether pod is the node's (ownPods).
func (n *Node) owns(pod *v1.Pod) bool {
	switch pod.Spec.NodeName {
	case n.cfg.Name:
		return true
	case "":
		return !n.boundOnly
	}
	return false
}

// bindHere returns pod ready for the cluster as this node adds it: with a
// creation time (the clock's now) when it has none, and bound to the node
// when the node takes bound pods only. A pod bound to another node is an
// error wrapping ErrOtherNode. pod itself is never changed; it is copied
// only when something needs to be set.
func (n *Node) bindHere(op string, pod *v1.Pod) (*v1.Pod, error) {
	if name := pod.Spec.NodeName; name != "" && name != n.cfg.Name {
		return nil, fmt.Errorf("%s %s/%s: spec.nodeName is %q, not this node %q: %w", op, pod.Namespace, pod.Name, name, n.cfg.Name, ErrOtherNode)
	}
	bind := n.boundOnly && pod.Spec.NodeName == ""
	if pod.CreationTimestamp.IsZero() || bind {
		pod = pod.DeepCopy()
		if pod.CreationTimestamp.IsZero() {
			pod.CreationTimestamp = metav1.NewTime(n.clock.Now())
		}
		if bind {
			pod.Spec.NodeName = n.cfg.Name
		}
	}
	return pod, nil
}

// distinctUIDs refuses a pod list in which two pods share a UID (an API
// that does not check, see apiserver.ErrUIDTaken): the kubelet keys pods
// by UID, and the second would silently take the first's allocation.
func distinctUIDs(pods []*v1.Pod) error {
	seen := make(map[types.UID]*v1.Pod, len(pods))
	for _, p := range pods {
		if p == nil {
			return errors.New("the API listed a nil pod")
		}
		if q, ok := seen[p.UID]; ok {
			return fmt.Errorf("pods %s/%s and %s/%s have the same UID %q: %w", q.Namespace, q.Name, p.Namespace, p.Name, p.UID, ErrUIDTaken)
		}
		seen[p.UID] = p
	}
	return nil
}

// openState opens a checkpoint in dir, or an in-memory one when dir is "".
func openState(ctx context.Context, dir, file string, format state.Format) (state.State, error) {
	if dir == "" {
		return state.NewMemory(), nil
	}
	return state.OpenCheckpoint(ctx, dir, file, state.WithFormat(format))
}

// Gate reports a feature gate of the node. A Node that NewNode did not
// make has every gate off.
func (n *Node) Gate(name string) bool {
	if n == nil || n.core == nil {
		return false
	}
	return n.core.Profile().Gate(name)
}

// Config returns the node's defaulted configuration (the zero NodeConfig
// for a Node that NewNode did not make).
func (n *Node) Config() NodeConfig {
	if n == nil {
		return NodeConfig{}
	}
	return n.cfg
}

// step feeds one input to the core under the lock.
func (n *Node) step(in core.Input) (core.Ready, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	rd, err := n.coreStep(in)
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
	n.log(ctx, rd.Logs)
	var err error
	buf := drainBuffers.Get().(*drainBuffer)
	defer func() {
		clear(buf.results)
		buf.done = core.BatchDone{}
		drainBuffers.Put(buf)
	}()
	results := buf.results[:0]
	done := &buf.done
	for i := 0; ; i++ {
		if i >= maxBatches {
			return errors.New("node did not become quiet: the core keeps returning work")
		}
		if rd.Batch == nil {
			var quiet bool
			rd, quiet = n.wait()
			n.log(ctx, rd.Logs)
			if quiet {
				return ctx.Err()
			}
			if rd.Batch == nil {
				return &closedError{why: whyCut}
			}
		} else if n.closing() {
			// The node is closing: the batch the core just handed out
			// is left undone, as a stopped kubelet leaves it, for the
			// successor to finish.
			return &closedError{why: whyCut}
		}
		results = n.performInto(ctx, rd.Batch, results)
		buf.results = results
		*done = core.BatchDone{ID: rd.Batch.ID, Results: results, Now: n.clock.Now()}
		if rd, err = n.step(done); err != nil {
			return err
		}
		n.log(ctx, rd.Logs)
	}
}

// drainBuffer is what a drain reuses from one call to the next: its
// results and the input that hands them to the core, which keeps nothing
// of either.
type drainBuffer struct {
	results []core.Result
	done    core.BatchDone
}

var drainBuffers = sync.Pool{New: func() any { return new(drainBuffer) }}

// wait returns the next batch there is for this caller, waiting while
// others perform theirs, or reports that the node is quiet. The Ready
// returned carries the log lines of every Step made meanwhile (operations
// may start and end without a batch). Once the node is closing it returns
// at once, with no batch and not quiet.
func (n *Node) wait() (core.Ready, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var logs []core.LogRecord
	for {
		if n.closing() {
			return core.Ready{Logs: logs}, false
		}
		rd, _ := n.coreStep(core.Poll{})
		logs = append(logs, rd.Logs...)
		rd.Logs = logs
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

// log hands the core's log lines to the logger, outside the node's lock,
// each as a record at its level and the time the core logged it. Lines
// the handler does not take at their level are dropped.
func (n *Node) log(ctx context.Context, logs []core.LogRecord) {
	if n.logger == nil || len(logs) == 0 {
		return
	}
	h := n.logger.Handler()
	for _, l := range logs {
		level := l.Level()
		if !h.Enabled(ctx, level) {
			continue
		}
		r := slog.NewRecord(l.Time, level, l.Msg, 0)
		r.AddAttrs(l.Attrs...)
		// A handler's error has nowhere to go: slog.Logger drops it too.
		_ = h.Handle(ctx, r)
	}
}

// AddPod creates the pod in the cluster, admits it (a rejected pod gets
// phase Failed with the kubelet's reason and message and a Warning event;
// that is not an error), starts its containers and runs until quiet. It
// retries no pending resize: from 1.35 the kubelet retries (pods_added)
// only for an added pod whose spec differs from its allocation, which a
// new pod never has (the 1.33 and 1.34 profiles retry after every pod).
// A pod the cluster or the kubelet refuses (a nil pod, an invalid one, a
// UID another pod has) is an error and changes nothing, as is a pod bound
// to another node (ErrOtherNode).
// A pod without spec.nodeName keeps it empty, unless the node takes bound
// pods only (Deps.BoundPodsOnly): then AddPod binds it to the node.
func (n *Node) AddPod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error) {
	var created *v1.Pod
	return n.addPod(ctx, pod, &created)
}

// addPod is AddPod, with the pod the API server created kept in *created:
// the API server is asked only while *created is nil, so that a caller
// that goes on with a restarted kubelet after this one was closed under
// it (Fleet.CreatePod) does not create the pod twice.
func (n *Node) addPod(ctx context.Context, pod *v1.Pod, created **v1.Pod) (*v1.Pod, error) {
	if err := n.enter(ctx, "add pod"); err != nil {
		return nil, err
	}
	defer n.exit()
	if pod == nil {
		return nil, &argumentError{op: "add pod", msg: "nil pod"}
	}
	again := *created != nil
	if !again {
		pod, err := n.bindHere("add pod", pod)
		if err != nil {
			return nil, err
		}
		if *created, err = n.cluster.CreatePod(pod); err != nil {
			return nil, err
		}
	}
	c := *created
	if again {
		// Created for a kubelet that was closed before it was done with
		// the pod: this one takes the API server's pod as it is now.
		p, err := n.cluster.GetPod(c.Namespace, c.Name)
		switch {
		case err != nil || p.UID != c.UID || p.DeletionTimestamp != nil:
			// Deleted, or marked for deletion (which comes first),
			// since: handing it over would bring back a pod the API
			// server no longer has.
			return nil, fmt.Errorf("add pod %s/%s: deleted before the kubelet took it: %w", c.Namespace, c.Name, ErrPodNotFound)
		case p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed:
			// The kubelet before was done with it (it rejected it).
			return p, nil
		}
		c = p
	}
	if err := n.admit(ctx, c); err != nil {
		return nil, err
	}
	return n.latest(ctx, c)
}

// latest returns the API server's pod c after the kubelet took it. A
// resize the API server accepted between the pod's creation and the
// kubelet taking it was handed to a kubelet that did not know the pod yet
// (resized), which dropped it: the kubelet then gets the pod as it is now,
// as an informer would have delivered it.
func (n *Node) latest(ctx context.Context, c *v1.Pod) (*v1.Pod, error) {
	p, err := n.cluster.GetPod(c.Namespace, c.Name)
	if err != nil || p.UID != c.UID || p.Generation <= c.Generation {
		return p, err
	}
	if err := n.resized(ctx, p); err != nil {
		return nil, err
	}
	return n.cluster.GetPod(c.Namespace, c.Name)
}

// admit hands the kubelet a pod the API server has just created, and
// runs until quiet. A pod the kubelet refuses (another pod of its UID) is
// deleted from the API server again, so that the call changes nothing. A
// pod the kubelet has already (the same name and UID), which a kubelet
// that started after the API server created it found in its list, is not
// handed to it a second time, and one it has torn down since is not
// brought back.
func (n *Node) admit(ctx context.Context, created *v1.Pod) error {
	own := *created // the core takes the top level as its own
	n.mu.Lock()
	if n.core.Has(created.Namespace, created.Name, created.UID) {
		n.mu.Unlock()
		return nil
	}
	if _, ok := n.gone[created.UID]; ok {
		n.mu.Unlock()
		return fmt.Errorf("add pod %s/%s: deleted before the kubelet took it: %w", created.Namespace, created.Name, ErrPodNotFound)
	}
	rd, err := n.coreStep(core.PodAdded{Pod: &own, Now: n.clock.Now()})
	n.cond.Broadcast()
	n.mu.Unlock()
	if err != nil {
		n.uncreate(created)
		return fmt.Errorf("add pod %s/%s: %w", created.Namespace, created.Name, err)
	}
	return n.drain(ctx, rd)
}

// uncreate deletes pods this call created, when the call fails before the
// kubelet took them. The API's own error, if any, changes nothing more.
func (n *Node) uncreate(pods ...*v1.Pod) {
	for _, p := range pods {
		_ = n.cluster.DeletePod(p.Namespace, p.Name)
	}
}

// AddPods creates the pods in the cluster, in order, and hands them to the
// kubelet at once, as HandlePodAdditions takes a list: each is admitted in
// turn (against the ones before it), and the node runs until quiet (the
// pending resizes are retried only as AddPod says). It ends up where AddPod on
// each pod in turn does, in one run. A pod the cluster refuses (or a nil
// one, or one bound to another node) stops the call with an error that
// says which, and changes nothing: the pods created before it are deleted
// again. Pods without spec.nodeName are bound as AddPod binds them.
func (n *Node) AddPods(ctx context.Context, pods []*v1.Pod) ([]*v1.Pod, error) {
	if err := n.enter(ctx, "add pods"); err != nil {
		return nil, err
	}
	defer n.exit()
	for i, pod := range pods {
		if pod == nil {
			return nil, &argumentError{op: fmt.Sprintf("add pods: pods[%d]", i), msg: "nil pod"}
		}
		if name := pod.Spec.NodeName; name != "" && name != n.cfg.Name {
			return nil, fmt.Errorf("add pods: pods[%d] %s/%s: spec.nodeName is %q, not this node %q: %w", i, pod.Namespace, pod.Name, name, n.cfg.Name, ErrOtherNode)
		}
	}
	created := make([]*v1.Pod, 0, len(pods))
	for i, pod := range pods {
		// Every pod is bound here or to no node (checked above).
		pod, _ := n.bindHere("add pods", pod)
		c, err := n.cluster.CreatePod(pod)
		if err != nil {
			n.uncreate(created...)
			return nil, fmt.Errorf("add pods: pods[%d]: %w", i, err)
		}
		own := *c // the core takes the top level as its own
		created = append(created, &own)
	}
	rd, err := n.step(core.PodsAdded{Pods: created, Now: n.clock.Now()})
	if err != nil {
		n.uncreate(created...)
		return nil, fmt.Errorf("add pods: %w", err)
	}
	if err := n.drain(ctx, rd); err != nil {
		return nil, err
	}
	out := make([]*v1.Pod, 0, len(created))
	for _, c := range created {
		p, err := n.latest(ctx, c)
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
	if err := n.enter(ctx, "resize pod"); err != nil {
		return err
	}
	defer n.exit()
	if err := checkPodName("resize pod", namespace, name); err != nil {
		return err
	}
	pod, err := n.cluster.ResizePod(namespace, name, patch)
	if err != nil {
		return err
	}
	return n.resized(ctx, pod)
}

// ResizePatch is Resize for a patch of type pt: a strategic merge patch
// ("" or apiserver.StrategicMergePatch), a JSON merge patch or a JSON
// patch, as the resize subresource takes them. An API that is not a
// PatchResizer takes strategic merge patches only.
func (n *Node) ResizePatch(ctx context.Context, namespace, name string, pt types.PatchType, patch []byte) error {
	if err := n.enter(ctx, "resize pod"); err != nil {
		return err
	}
	defer n.exit()
	if err := checkPodName("resize pod", namespace, name); err != nil {
		return err
	}
	var pod *v1.Pod
	var err error
	switch pr, ok := n.cluster.(PatchResizer); {
	case ok:
		pod, err = pr.ResizePodPatch(namespace, name, pt, patch)
	case pt == "" || pt == apiserver.StrategicMergePatch:
		pod, err = n.cluster.ResizePod(namespace, name, patch)
	default:
		return fmt.Errorf("resize pod %s/%s: the API takes strategic merge patches only, not %s: %w", namespace, name, pt, errors.ErrUnsupported)
	}
	if err != nil {
		return err
	}
	return n.resized(ctx, pod)
}

// ResizeRequest is Resize for a typed request: no JSON on the way, the
// same validation, the same pod and the same kubelet handling as Resize
// with req.Patch(). An API that is not a RequestResizer is sent the patch.
func (n *Node) ResizeRequest(ctx context.Context, namespace, name string, req ResizeRequest) error {
	if err := n.enter(ctx, "resize pod"); err != nil {
		return err
	}
	defer n.exit()
	if err := checkPodName("resize pod", namespace, name); err != nil {
		return err
	}
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

// update is resized as a call of its own (Fleet.ResizePod).
func (n *Node) update(ctx context.Context, pod *v1.Pod) error {
	if err := n.enter(ctx, "resize pod"); err != nil {
		return err
	}
	defer n.exit()
	return n.resized(ctx, pod)
}

// advanceFleet is advanceTo as a call of its own (Fleet.Advance).
func (n *Node) advanceFleet(ctx context.Context, fc *FakeClock, target time.Time) error {
	if err := n.enter(ctx, "advance"); err != nil {
		return err
	}
	defer n.exit()
	return n.advanceTo(ctx, fc, target)
}

// resized hands the kubelet a pod the resize subresource updated: a copy
// of its top level, which the core takes as its own (the rest is shared
// with the API server, which never changes it). A pod the kubelet does not
// know (yet, or any more: another caller may delete it between the API's
// answer and this) is not its business, as before; nor is an older
// generation of the pod than the one it has (core.Stale: two callers'
// answers may arrive out of order). The check and the step are one step
// under the lock, so that a deletion cannot come between them.
func (n *Node) resized(ctx context.Context, pod *v1.Pod) error {
	own := *pod
	n.mu.Lock()
	if !n.core.Knows(pod.Namespace, pod.Name) || n.core.Stale(pod) {
		n.mu.Unlock()
		return nil
	}
	n.resizeIn = core.ResizeRequested{Pod: &own, Now: n.clock.Now()}
	rd, err := n.coreStep(&n.resizeIn)
	n.resizeIn = core.ResizeRequested{} // holds nothing between calls
	n.cond.Broadcast()
	n.mu.Unlock()
	if errors.Is(err, core.ErrUnknownPod) {
		// Another pod of that name: the one resized was deleted and
		// its name taken again.
		return nil
	}
	if err != nil {
		return err
	}
	return n.drain(ctx, rd)
}

// DeletePod stops and removes the pod's containers and sandbox, removes its
// cgroup and checkpoint records, deletes it from the cluster, retries
// pending resizes (pods_removed) and runs until quiet. If the teardown
// fails the pod stays known, and a later DeletePod finishes the job. A
// finished pod (Succeeded or Failed) that a restarted kubelet does not
// run, having nothing to tear down, is deleted from the cluster.
func (n *Node) DeletePod(ctx context.Context, namespace, name string) error {
	if err := n.enter(ctx, "delete pod"); err != nil {
		return err
	}
	defer n.exit()
	if err := checkPodName("delete pod", namespace, name); err != nil {
		return err
	}
	n.mu.Lock()
	known := n.core.Knows(namespace, name)
	n.mu.Unlock()
	if !known {
		return n.deleteFinished(namespace, name)
	}
	// An API that deletes gracefully marks the pod first (its
	// deletionTimestamp), so that the teardown survives a kubelet restart:
	// the next kubelet finds the mark and finishes it.
	var marked *v1.Pod
	if gd, ok := n.cluster.(GracefulDeleter); ok {
		p, err := gd.MarkPodDeleted(namespace, name, n.clock.Now())
		switch {
		case errors.Is(err, errors.ErrUnsupported):
			// A wrapper of an API that does not delete gracefully.
		case err != nil:
			return fmt.Errorf("delete pod %s/%s: %w", namespace, name, err)
		default:
			own := *p // the core takes the top level as its own
			marked = &own
		}
	}
	// The lookup and the request are one step under the lock, so that
	// another caller's deletion cannot come between them.
	n.mu.Lock()
	info, known := n.core.Pod(namespace, name)
	if !known {
		n.mu.Unlock()
		return fmt.Errorf("delete pod %s/%s: %w", namespace, name, ErrPodNotFound)
	}
	rd, err := n.coreStep(core.DeleteRequested{UID: info.UID, Now: n.clock.Now(), Pod: marked})
	n.cond.Broadcast()
	n.mu.Unlock()
	if err != nil {
		return err
	}
	if err := n.drain(ctx, rd); err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.core.DeleteError(info.UID)
}

// deleteFinished deletes from the API server a finished pod of the node
// that the kubelet does not run: a kubelet that starts skips the pods that
// have succeeded or failed (core.Start), but the real one still has them
// in its pod manager, and deletes them from the API server when they are
// deleted (its status manager, once nothing is left to tear down). Any
// other pod the kubelet does not know is ErrPodNotFound.
func (n *Node) deleteFinished(namespace, name string) error {
	pod, err := n.cluster.GetPod(namespace, name)
	if err != nil || !n.owns(pod) || (pod.Status.Phase != v1.PodSucceeded && pod.Status.Phase != v1.PodFailed) {
		return fmt.Errorf("delete pod %s/%s: %w", namespace, name, ErrPodNotFound)
	}
	if err := n.cluster.DeletePod(namespace, name); err != nil {
		return fmt.Errorf("delete pod %s/%s: %w", namespace, name, err)
	}
	// Its records go too, as the kubelet's housekeeping removes those of
	// the pods it no longer has (removeOrphans).
	n.allocated.Delete(pod.UID)
	n.actuated.Delete(pod.UID)
	return nil
}

// Sync runs the node until it is quiet after syncing every admitted pod.
// Call it after changing something under the node (memory usage, a
// container exit). Like Tick, it first writes again the pod statuses and
// deletions the API server refused (and, with FlushCheckpoints, the
// checkpoint files that are behind).
func (n *Node) Sync(ctx context.Context) error {
	if err := n.enter(ctx, "sync"); err != nil {
		return err
	}
	defer n.exit()
	n.retryStatuses()
	n.flushCheckpoints()
	return n.run(ctx, core.SyncRequested{Now: n.clock.Now()})
}

// Advance moves the node's FakeClock forward by d, firing the timers that
// fall due in time order (the pending-resize retry, pod resyncs and
// backoffs), and runs until quiet after each. The clock jumps from one due
// timer to the next.
//
// A settled node still has a timer due every minute per pod, so a long
// advance would fire millions of them. Once every timer fired in the last
// two core.SkipPeriods changed nothing (their batches only read, every
// call succeeded, and the statuses they wrote differ from the last ones
// at most in the conditions' lastProbeTime; settle.go), Advance skips the rest of d but the last SkipPeriod or
// so in whole SkipPeriods (core.Skip): every timer moves by the span, as
// firing through it would have left it, and the final stretch runs timer
// by timer as before. Anything that changes the node (a write, an event, a
// failed call, another caller's work) restarts the watch. Skipping assumes
// what a simulation guarantees: nothing outside the node changes its
// cgroups or runtime while Advance runs.
func (n *Node) Advance(ctx context.Context, d time.Duration) error {
	if err := n.enter(ctx, "advance"); err != nil {
		return err
	}
	defer n.exit()
	if d < 0 {
		return &argumentError{op: "advance", msg: fmt.Sprintf("negative duration %s", d)}
	}
	fc, ok := n.clock.(*FakeClock)
	if !ok {
		return ErrNotFakeClock
	}
	return n.advanceTo(ctx, fc, fc.Now().Add(d))
}

// advanceTo is Advance to the time target on the node's FakeClock fc
// (Fleet.Advance takes every node to the same time this way).
func (n *Node) advanceTo(ctx context.Context, fc *FakeClock, target time.Time) error {
	n.watch.start()
	defer n.watch.stop()
	seen := n.watch.changes.Load()
	settledSince := fc.Now()
	for {
		if n.closing() {
			return &closedError{op: "advance", why: whyCut}
		}
		n.mu.Lock()
		next := n.core.NextTimer()
		n.mu.Unlock()
		if next.After(target) {
			break
		}
		now := fc.Now()
		if c := n.watch.changes.Load(); c != seen {
			seen, settledSince = c, now
		}
		if now.Sub(settledSince) >= 2*core.SkipPeriod && target.Sub(now) >= 2*core.SkipPeriod {
			if span := n.skip(fc, now, seen, (target.Sub(now)/core.SkipPeriod-1)*core.SkipPeriod); span > 0 {
				settledSince = settledSince.Add(span)
				continue
			}
		}
		fc.advanceTo(next)
		if err := n.tick(ctx); err != nil {
			return err
		}
	}
	fc.advanceTo(target)
	return n.tick(ctx)
}

// skip moves the core and the clock span later if the core is quiet,
// nothing changed on the node since the count seen and the clock is still
// at now (no other Advance moved it), and returns the span skipped (0
// when it did not skip). Under the lock, a quiet core means every batch
// performed so far has been reported, so its changes are counted already.
func (n *Node) skip(fc *FakeClock, now time.Time, seen uint64, span time.Duration) time.Duration {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.watch.changes.Load() != seen || !fc.Now().Equal(now) || !n.core.Skip(span) {
		return 0
	}
	fc.advanceTo(now.Add(span))
	n.watch.skipped.Add(int64(span))
	return span
}

// Tick fires every timer that is due at the clock's current time and runs
// until quiet. An embedder on a real clock calls it periodically. It first
// writes again the pod statuses and deletions whose write failed, as the
// kubelet's status manager does in its periodic batch, and with
// NodeConfig.FlushCheckpoints the checkpoint files that are behind.
func (n *Node) Tick(ctx context.Context) error {
	if err := n.enter(ctx, "tick"); err != nil {
		return err
	}
	defer n.exit()
	return n.tick(ctx)
}

// tick is Tick for a call that entered already (Advance).
func (n *Node) tick(ctx context.Context) error {
	n.retryStatuses()
	n.flushCheckpoints()
	return n.run(ctx, core.Tick{Now: n.clock.Now()})
}

// Pod returns what the node knows of a pod.
func (n *Node) Pod(namespace, name string) (PodInfo, error) {
	if err := n.enter(context.Background(), "pod"); err != nil {
		return PodInfo{}, err
	}
	defer n.exit()
	n.mu.Lock()
	defer n.mu.Unlock()
	info, ok := n.core.Pod(namespace, name)
	if !ok {
		return PodInfo{}, fmt.Errorf("pod %s/%s: %w", namespace, name, ErrPodNotFound)
	}
	return info, nil
}

// AllocatedTotal is the sum of the admitted pods' allocated requests, with
// overhead: what admission counts as used by them. A Node that NewNode
// did not make has none (nil).
func (n *Node) AllocatedTotal() v1.ResourceList {
	if n == nil || n.core == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.core.AllocatedTotal()
}

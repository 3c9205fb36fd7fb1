package resize

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
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
	// started is when the node started, on its clock: its Ready
	// condition's transition time (V1).
	started time.Time

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
	// backends tells the core's Ticks whether the cgroups and runtime
	// changed other than through the node's batches.
	backends backendWatch

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

// missingDeps names the parts a node cannot run without that deps lack,
// or returns "".
func missingDeps(deps Deps) string {
	var missing []string
	for _, part := range []struct {
		name   string
		absent bool
	}{{"Deps.Cluster", deps.Cluster == nil}, {"Deps.Cgroups", deps.Cgroups == nil}, {"Deps.Runtime", deps.Runtime == nil}} {
		if part.absent {
			missing = append(missing, part.name)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return strings.Join(missing, ", ") + " missing: a node needs all three"
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
// Backend constructors (Simulated, host.Cgroups, host.Remote) give parts
// that agree.
func NewNode(ctx context.Context, cfg NodeConfig, deps Deps) (_ *Node, err error) {
	if ctx == nil {
		return nil, &argumentError{op: "new node", msg: "nil context"}
	}
	if missing := missingDeps(deps); missing != "" {
		return nil, &argumentError{op: "new node", msg: missing + " (Backend.Deps of Simulated gives the in-memory parts)"}
	}
	if b := deps.backend; b != nil && b.isClosed() {
		return nil, fmt.Errorf("new node: %w", &closedError{why: "the " + b.kind + " backend the Deps came from is closed"})
	}
	if err := coherent(ctx, &cfg, deps); err != nil {
		return nil, fmt.Errorf("new node: %w", err)
	}
	c, err := core.New(core.NodeConfig(cfg))
	if err != nil {
		return nil, fmt.Errorf("new node: %w", err)
	}
	if deps.Clock == nil {
		deps.Clock = NewFakeClock(DefaultStart)
	}
	n := &Node{
		cfg:       NodeConfig(c.Config()),
		cluster:   deps.Cluster,
		cg:        deps.Cgroups,
		rt:        deps.Runtime,
		clock:     deps.Clock,
		allocated: deps.Allocated,
		actuated:  deps.Actuated,
		logger:    deps.Logger,
		boundOnly: deps.BoundPodsOnly,
		started:   deps.Clock.Now(),
		core:      c,
	}
	if n.logger != nil {
		c.SetLogging(true)
	}
	n.cond = sync.NewCond(&n.mu)
	n.backends.watchBackends(n.cg, n.rt)
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
		r.RegisterNode(ctx, NodeInfo{Name: n.cfg.Name, OS: n.cfg.OS, Allocatable: n.cfg.Allocatable})
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
	pods := n.listOwnPods(ctx)
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

// listOwnPods returns the node's pods (ownPods) from the API, in creation
// order: through NodePodLister when the API has it, so that the pods of
// other nodes are not read.
func (n *Node) listOwnPods(ctx context.Context) []*v1.Pod {
	l, ok := n.cluster.(NodePodLister)
	switch {
	case !ok:
		return n.ownPods(n.cluster.ListPods(ctx))
	case n.boundOnly:
		return l.ListNodePods(ctx, n.cfg.Name)
	}
	return l.ListNodePods(ctx, n.cfg.Name, "")
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

package resize

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/resizelet/resizelet/allocation/state"
	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/resize/apiserver"
	"github.com/resizelet/resizelet/resize/metrics"
)

// ErrFleetClosed is returned by the calls of a Fleet after Close. It
// matches ErrClosed too.
var ErrFleetClosed = fmt.Errorf("the fleet is closed: %w", ErrClosed)

// ErrNodeDown is wrapped by the errors of Fleet calls on a node whose
// restart failed: it has no kubelet until RestartNode succeeds.
var ErrNodeDown = errors.New("the node has no kubelet running")

// ErrUnknownNode is wrapped by the errors of Fleet calls that name a node
// the fleet does not have, directly or through a pod's spec.nodeName.
var ErrUnknownNode = errors.New("no such node in the fleet")

// ErrUnboundPod is wrapped by the error of Fleet.CreatePod given a pod
// without spec.nodeName when the fleet does not schedule
// (FleetOptions.ScheduleUnbound).
var ErrUnboundPod = errors.New("the pod is bound to no node")

// ErrNodeExists is wrapped by the error of Fleet.AddNode given a node name
// the fleet already has.
var ErrNodeExists = errors.New("the fleet already has a node of that name")

// FleetOptions configure a Fleet.
type FleetOptions struct {
	// Cluster configures the one API server every node shares (its
	// Kubernetes version, feature gates, event limit and hot pods).
	Cluster ClusterOptions
	// Start is the fleet clock's time at the start; zero means
	// DefaultStart.
	Start time.Time
	// ScheduleUnbound makes CreatePod place a pod without spec.nodeName on
	// the first node, in the order they were added, that it fits
	// (Fleet.Schedule), instead of refusing it with ErrUnboundPod.
	ScheduleUnbound bool
	// Workers bounds how many nodes Advance and Sync run at once; 0 means
	// runtime.GOMAXPROCS(0).
	Workers int

	// Metrics, when set, is every node's Deps.Metrics (unless AddNode is
	// given another): one *metrics.Metrics the nodes share, so that its
	// counters and gauges are the fleet's aggregate (package
	// resize/metrics). nil records nothing.
	Metrics *metrics.Metrics
}

// Fleet is many nodes under one API server and one virtual clock: a
// cluster. Each node is a Node of its own (its NodeConfig, cgroups,
// runtime and checkpoints; simulated by default), and runs the pods bound
// to it by spec.nodeName (Deps.BoundPodsOnly).
//
// The fleet's calls mirror what a cluster's clients do: CreatePod,
// ResizePod and DeletePod go to the API server and then to the kubelet of
// the node the pod is bound to, which reacts until it is quiet, as Node's
// calls do. (Fleet has the methods of the client-go adapter's Backend,
// package resize/kubeclient.) Advance moves the one clock once: every
// node fires its timers up to the new time.
//
// The fleet has one clock (Now). Each node reads it through a FakeClock
// of its own that the fleet keeps at the fleet's time between calls:
// during Advance each node's clock runs from the old time to the new one
// through that node's timers, so that each timer fires at its due time and
// a settled node skips idle stretches, as Node.Advance does on its own;
// when Advance returns every node is at the fleet's new time. Calling
// Node.Advance on one node of a fleet moves that node alone, ahead of the
// fleet; the fleet's next Advance leaves it where it is until the fleet's
// time catches up.
//
// It is safe for concurrent use. Its lock guards only its list of nodes
// and is never held across a call to a node; nodes run at the same time
// in Advance and Sync, and the fleet's other calls on different nodes run
// at the same time too. A call for a node that is starting (AddNode) or
// restarting (RestartNode) waits for it, as long as its context allows,
// and a call that a restart cut short goes on with the new kubelet.
//
// The zero Fleet is not usable: its calls return errors that match
// ErrClosed. Make one with NewFleet.
type Fleet struct {
	cluster *Cluster
	opts    FleetOptions
	// clock is the fleet's time, which Advance moves once per call.
	clock *FakeClock

	mu     sync.Mutex
	nodes  map[string]*fleetNode
	order  []*fleetNode // in the order they were added
	closed bool
	// closeDone is closed when the first Close has stopped every node.
	closeDone chan struct{}
	closeErr  error
}

// fleetNode is one node of a fleet: what it was started with, so that it
// can be started again (RestartNode), and the Node running now.
//
// The fields below clock are guarded by Fleet.mu. While the node starts
// (AddNode) or restarts (RestartNode), node is nil and ready is open:
// calls for the node wait for ready to be closed, then look again. A
// restart that failed leaves node nil and down set.
type fleetNode struct {
	name  string
	cfg   NodeConfig // as given to AddNode, with the name set
	deps  Deps       // complete: the fleet's cluster and the node's clock
	clock *FakeClock // the node's own view of the fleet's time

	node  *Node
	ready chan struct{}
	down  error
	// started is set once the node's first Node has started, and config
	// is then that Node's defaulted configuration, which its restarts
	// share.
	started bool
	config  NodeConfig
}

// NewFleet returns a fleet without nodes: an empty API server and a clock
// at opts.Start.
func NewFleet(opts FleetOptions) *Fleet {
	return &Fleet{
		cluster:   NewCluster(opts.Cluster),
		opts:      opts,
		clock:     NewFakeClock(opts.Start),
		nodes:     map[string]*fleetNode{},
		closeDone: make(chan struct{}),
	}
}

// notMade is the error of a call on a Fleet that NewFleet did not make.
func notMade(op string) error {
	return &closedError{op: op, why: "the Fleet was not made by NewFleet"}
}

// made reports whether NewFleet made f.
func (f *Fleet) made() bool { return f != nil && f.cluster != nil }

// Cluster returns the API server every node of the fleet shares (nil for
// a Fleet that NewFleet did not make).
func (f *Fleet) Cluster() *apiserver.Cluster {
	if !f.made() {
		return nil
	}
	return f.cluster
}

// Now returns the fleet's time: where the last Advance took (or is taking)
// every node. A Fleet that NewFleet did not make has the zero time.
func (f *Fleet) Now() time.Time {
	if !f.made() {
		return time.Time{}
	}
	return f.clock.Now()
}

// AddNode starts a node in the fleet, registered with the fleet's API
// server under cfg.Name ("node-N" for the Nth node when empty), and
// returns it. The node starts on the pods already bound to it.
//
// deps are the node's own parts, any of them left empty: Cluster and Clock
// must be (every node shares the fleet's API server, and reads the fleet's
// time through a clock of its own); without Cgroups the node gets a
// simulated kernel (cgroup.NewSimKernel, of cfg's cgroup version) and
// without Runtime a simulated containerd on the node's cgroups
// (cri.NewSimContainerd, with cfg's cgroup driver); without
// CheckpointDir, Allocated and Actuated its checkpoints are in memory and
// survive RestartNode. BoundPodsOnly is always set.
func (f *Fleet) AddNode(ctx context.Context, cfg NodeConfig, deps Deps) (*Node, error) {
	if !f.made() {
		return nil, notMade("add node")
	}
	if ctx == nil {
		return nil, &argumentError{op: "add node", msg: "nil context"}
	}
	if deps.Cluster != nil {
		return nil, errors.New("add node: Deps.Cluster must be empty: every node of a fleet uses the fleet's API server")
	}
	if deps.Clock != nil {
		return nil, errors.New("add node: Deps.Clock must be empty: every node of a fleet reads the fleet's clock")
	}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil, ErrFleetClosed
	}
	if cfg.Name == "" {
		cfg.Name = fmt.Sprintf("node-%d", len(f.order)+1)
	}
	if _, ok := f.nodes[cfg.Name]; ok {
		f.mu.Unlock()
		return nil, fmt.Errorf("add node %q: %w", cfg.Name, ErrNodeExists)
	}
	// The name is taken now, so that two AddNode calls cannot both start
	// a node of that name; calls for it wait until its node is set.
	fn := &fleetNode{name: cfg.Name, cfg: cfg, clock: NewFakeClock(f.clock.Now()), ready: make(chan struct{})}
	f.nodes[cfg.Name] = fn
	f.order = append(f.order, fn)
	f.mu.Unlock()

	n, err := fn.start(ctx, f.cluster, f.opts.Metrics, deps)
	f.mu.Lock()
	defer f.mu.Unlock()
	close(fn.ready)
	fn.ready = nil
	if err != nil {
		delete(f.nodes, fn.name)
		for i, o := range f.order {
			if o == fn {
				f.order = append(f.order[:i], f.order[i+1:]...)
				break
			}
		}
		return nil, fmt.Errorf("add node %q: %w", fn.name, err)
	}
	// A Close that came meanwhile waited for ready and closes this node.
	fn.node, fn.started, fn.config = n, true, n.Config()
	return n, nil
}

// start completes the node's Deps and starts its first Node.
func (fn *fleetNode) start(ctx context.Context, cluster *Cluster, metricsOf *metrics.Metrics, deps Deps) (*Node, error) {
	defaults := fn.cfg.WithDefaults()
	if deps.Cgroups == nil {
		deps.Cgroups = cgroup.NewSimKernel(defaults.CgroupVersion)
	}
	if deps.Runtime == nil {
		deps.Runtime = cri.NewSimContainerd(deps.Cgroups, cri.WithDriver(defaults.CgroupDriver))
	}
	if deps.CheckpointDir == "" {
		if deps.Allocated == nil {
			deps.Allocated = state.NewMemory()
		}
		if deps.Actuated == nil {
			deps.Actuated = state.NewMemory()
		}
	}
	deps.Cluster = cluster
	deps.Clock = fn.clock
	deps.BoundPodsOnly = true
	if deps.Metrics == nil {
		deps.Metrics = metricsOf
	}
	fn.deps = deps
	return NewNode(ctx, fn.cfg, deps)
}

// Node returns the fleet's node of that name.
func (f *Fleet) Node(name string) (*Node, bool) {
	if !f.made() {
		return nil, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	fn, ok := f.nodes[name]
	if !ok || fn.node == nil {
		return nil, false
	}
	return fn.node, true
}

// Nodes returns the fleet's nodes in the order they were added.
func (f *Fleet) Nodes() []*Node {
	if !f.made() {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]*Node, 0, len(f.order))
	for _, fn := range f.order {
		if fn.node != nil {
			out = append(out, fn.node)
		}
	}
	return out
}

// Deps returns the parts the fleet's node of that name runs on: the
// fleet's cluster, the node's clock, cgroups, runtime and checkpoints.
func (f *Fleet) Deps(name string) (Deps, bool) {
	if !f.made() {
		return Deps{}, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	fn, ok := f.nodes[name]
	if !ok || fn.node == nil {
		return Deps{}, false
	}
	return fn.deps, true
}

// RestartNode restarts the kubelet of the fleet's node of that name: it
// stops routing calls to the running Node, closes it (Node.Close: the
// batch it is performing finishes, and it does nothing after), then starts
// a new Node on the same NodeConfig and Deps, which comes back from the
// checkpoints, the runtime and the API server's pods bound to it (what
// the API server accepted meanwhile included) and takes the old one's
// place. Calls for the node made meanwhile wait, as long as their
// contexts allow, and then go to the new Node; a call the old Node cut
// short goes on with the new one. Restarts of one node are made one
// after the other.
//
// If the new Node cannot start, the node is left without a kubelet: calls
// for it fail with an error wrapping ErrNodeDown, until a RestartNode
// succeeds.
func (f *Fleet) RestartNode(ctx context.Context, name string) (*Node, error) {
	if !f.made() {
		return nil, notMade("restart node")
	}
	if ctx == nil {
		return nil, &argumentError{op: "restart node", msg: "nil context"}
	}
	op := fmt.Sprintf("restart node %q", name)
	var fn *fleetNode
	var old *Node
	for fn == nil {
		f.mu.Lock()
		if f.closed {
			f.mu.Unlock()
			return nil, ErrFleetClosed
		}
		n, ok := f.nodes[name]
		if !ok {
			f.mu.Unlock()
			return nil, fmt.Errorf("%s: %w", op, ErrUnknownNode)
		}
		if ready := n.ready; ready != nil {
			// The node is starting or restarting already: wait for that.
			f.mu.Unlock()
			if err := waitReady(ctx, ready); err != nil {
				return nil, fmt.Errorf("%s: %w", op, err)
			}
			continue
		}
		fn, old = n, n.node
		fn.node, fn.down, fn.ready = nil, nil, make(chan struct{})
		f.mu.Unlock()
	}
	var closeErr error
	if old != nil {
		closeErr = old.Close()
	}
	n, err := NewNode(ctx, fn.cfg, fn.deps)
	f.mu.Lock()
	close(fn.ready)
	fn.ready = nil
	if err != nil {
		fn.down = fmt.Errorf("node %q: its restart failed: %w: %w", name, err, ErrNodeDown)
	} else {
		// A Close that came meanwhile waited for ready and closes it.
		fn.node = n
	}
	f.mu.Unlock()
	if err = errors.Join(err, closeErr); err != nil {
		return n, fmt.Errorf("%s: %w", op, err)
	}
	return n, nil
}

// waitReady waits until ready is closed or ctx is done.
func waitReady(ctx context.Context, ready <-chan struct{}) error {
	select {
	case <-ready:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for the node to start: %w", ctx.Err())
	}
}

// route returns the fleet's node of that name and its Node, or an error
// that says what op could not do. While the node starts or restarts it
// waits, as long as ctx allows.
func (f *Fleet) route(ctx context.Context, op, name string) (*fleetNode, *Node, error) {
	for {
		f.mu.Lock()
		if f.closed {
			f.mu.Unlock()
			return nil, nil, ErrFleetClosed
		}
		fn, ok := f.nodes[name]
		if !ok {
			f.mu.Unlock()
			return nil, nil, fmt.Errorf("%s: node %q: %w", op, name, ErrUnknownNode)
		}
		n, ready, down := fn.node, fn.ready, fn.down
		f.mu.Unlock()
		switch {
		case n != nil:
			return fn, n, nil
		case ready != nil:
			if err := waitReady(ctx, ready); err != nil {
				return nil, nil, fmt.Errorf("%s: node %q: %w", op, name, err)
			}
		default:
			return nil, nil, fmt.Errorf("%s: %w", op, down)
		}
	}
}

// onNode runs do on the Node of the fleet's node of that name, and, when
// a restart closed that Node under it (an error matching ErrClosed, and a
// new Node in its place), on the new Node again, with again set. A Node
// closed otherwise (Node.Close called on it) is not replaced: its error
// is returned.
func (f *Fleet) onNode(ctx context.Context, op, name string, do func(n *Node, again bool) error) error {
	_, n, err := f.route(ctx, op, name)
	for again := false; ; again = true {
		if err != nil {
			return err
		}
		err = do(n, again)
		if !errors.Is(err, ErrClosed) {
			return err
		}
		_, next, rerr := f.route(ctx, op, name)
		if rerr != nil {
			return rerr
		}
		if next == n {
			return err
		}
		n, err = next, nil
	}
}

// CreatePod creates the pod and starts it on the node its spec.nodeName
// names, as Node.AddPod does (the pod returned is a copy of the API
// server's after the kubelet's reaction; a pod the kubelet rejects comes
// back Failed, which is not an error). A pod without spec.nodeName is
// refused (ErrUnboundPod) unless FleetOptions.ScheduleUnbound places it
// (Schedule); one bound to a node the fleet does not have is refused
// (ErrUnknownNode).
func (f *Fleet) CreatePod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error) {
	if !f.made() {
		return nil, notMade("create pod")
	}
	if pod == nil {
		return nil, &argumentError{op: "create pod", msg: "nil pod"}
	}
	name := pod.Spec.NodeName
	if name == "" {
		if !f.opts.ScheduleUnbound {
			return nil, fmt.Errorf("create pod %s/%s: spec.nodeName is empty and the fleet does not schedule (FleetOptions.ScheduleUnbound): %w", pod.Namespace, pod.Name, ErrUnboundPod)
		}
		var err error
		if name, err = f.Schedule(ctx, pod); err != nil {
			return nil, fmt.Errorf("create pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		pod = pod.DeepCopy()
		pod.Spec.NodeName = name
	}
	var created, out *v1.Pod
	err := f.onNode(ctx, fmt.Sprintf("create pod %s/%s", pod.Namespace, pod.Name), name, func(n *Node, _ bool) error {
		var err error
		out, err = n.addPod(ctx, pod, &created)
		return err
	})
	return out, err
}

// Resize sends op through the API server's resize subresource and hands
// the updated pod to the kubelet of the node it is bound to, which reacts
// until it is quiet (admits, defers or refuses it, and actuates it), as
// Node.Resize does. It returns the pod the API server stored, as the API
// server answers a patch: before the kubelet's reaction, which the
// cluster's copy (GetPod) shows. That pod is shared, never changed in
// place: read it, or DeepCopy it before changing anything. The API
// server's refusal is returned as is and changes nothing. A pod bound to
// no node of the fleet is resized in the API server only, as for a pod no
// kubelet runs. With op.DryRun nothing changes.
func (f *Fleet) Resize(ctx context.Context, op ResizeOp) (*v1.Pod, error) {
	if !f.made() {
		return nil, notMade("resize pod")
	}
	if ctx == nil {
		return nil, &argumentError{op: "resize pod", msg: "nil context"}
	}
	if err := op.check("resize pod"); err != nil {
		return nil, err
	}
	if f.isClosed() {
		return nil, ErrFleetClosed
	}
	pod, err := op.send(ctx, f.cluster, op.DryRun, nil)
	if err != nil || op.DryRun {
		return pod, err
	}
	f.mu.Lock()
	_, bound := f.nodes[pod.Spec.NodeName]
	f.mu.Unlock()
	if !bound {
		return pod, nil
	}
	what := fmt.Sprintf("resize pod %s/%s on node %q", op.Namespace, op.Name, pod.Spec.NodeName)
	err = f.onNode(ctx, what, pod.Spec.NodeName, func(n *Node, _ bool) error { return n.update(ctx, pod) })
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return pod, nil
}

// DeletePod deletes the pod: the kubelet of the node it is bound to tears
// it down and deletes it from the API server (Node.DeletePod). A pod bound
// to no node is deleted from the API server at once, as the API server
// deletes a pod the scheduler has not placed; one bound to a node the
// fleet does not have is refused (ErrUnknownNode).
func (f *Fleet) DeletePod(ctx context.Context, namespace, name string) error {
	if !f.made() {
		return notMade("delete pod")
	}
	if ctx == nil {
		return &argumentError{op: "delete pod", msg: "nil context"}
	}
	if err := checkPodName("delete pod", namespace, name); err != nil {
		return err
	}
	if f.isClosed() {
		return ErrFleetClosed
	}
	pod, err := f.cluster.GetPod(ctx, namespace, name)
	if err != nil {
		return fmt.Errorf("delete pod %s/%s: %w", namespace, name, err)
	}
	if pod.Spec.NodeName == "" {
		return f.cluster.DeletePod(ctx, namespace, name)
	}
	return f.onNode(ctx, fmt.Sprintf("delete pod %s/%s", namespace, name), pod.Spec.NodeName, func(n *Node, again bool) error {
		err := n.DeletePod(ctx, namespace, name)
		if again && errors.Is(err, ErrPodNotFound) {
			// The kubelet that was closed under this call marked the
			// pod deleted; its successor found the mark when it started
			// and finished the teardown. Unless the pod is still there,
			// the deletion is done.
			if p, gerr := f.cluster.GetPod(ctx, namespace, name); errors.Is(gerr, ErrPodNotFound) || (gerr == nil && p.UID != pod.UID) {
				return nil
			}
		}
		return err
	})
}

func (f *Fleet) isClosed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

// Advance moves the fleet's clock forward by d, once, and takes every node
// to the new time: each fires its timers up to it in time order and runs
// until quiet after each, skipping idle stretches once settled, as
// Node.Advance does. Nodes advance at the same time (FleetOptions.Workers
// at once). The error joins every node's, each naming its node; the
// fleet's clock has moved either way, and a node that stopped early
// catches up at the next Advance. A node that restarts meanwhile is
// advanced once its new kubelet runs.
func (f *Fleet) Advance(ctx context.Context, d time.Duration) error {
	if !f.made() {
		return notMade("advance")
	}
	if ctx == nil {
		return &argumentError{op: "advance", msg: "nil context"}
	}
	if d < 0 {
		return &argumentError{op: "advance", msg: fmt.Sprintf("negative duration %s", d)}
	}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return ErrFleetClosed
	}
	// Moving the fleet's clock under the lock makes concurrent Advances
	// add up, each taking the nodes to its own target.
	target := f.clock.Now().Add(d)
	f.clock.Set(target)
	nodes := slices.Clone(f.order)
	f.mu.Unlock()
	return f.each(ctx, "advance", nodes, func(fn *fleetNode, n *Node) error {
		if fn.clock.Now().After(target) {
			return nil // this node was advanced on its own, beyond the fleet
		}
		return n.advanceFleet(ctx, fn.clock, target)
	})
}

// Sync runs Node.Sync on every node at once (FleetOptions.Workers at a
// time), and joins their errors, each naming its node.
func (f *Fleet) Sync(ctx context.Context) error {
	if !f.made() {
		return notMade("sync")
	}
	if ctx == nil {
		return &argumentError{op: "sync", msg: "nil context"}
	}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return ErrFleetClosed
	}
	nodes := slices.Clone(f.order)
	f.mu.Unlock()
	return f.each(ctx, "sync", nodes, func(_ *fleetNode, n *Node) error { return n.Sync(ctx) })
}

// Close stops every node (Node.Close; a node that is starting or
// restarting is stopped once it has started) and the fleet: its calls
// return ErrFleetClosed afterwards. The API server, the runtimes, cgroups
// and checkpoints are left as they are. It returns the nodes' errors,
// joined; a second Close waits for the first and returns the same.
func (f *Fleet) Close() error {
	if !f.made() {
		return notMade("close fleet")
	}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		<-f.closeDone
		return f.closeErr
	}
	f.closed = true
	nodes := slices.Clone(f.order)
	f.mu.Unlock()
	var errs []error
	for _, fn := range nodes {
		for {
			f.mu.Lock()
			n, ready := fn.node, fn.ready
			f.mu.Unlock()
			if ready != nil {
				<-ready
				continue
			}
			if n != nil {
				if err := n.Close(); err != nil {
					errs = append(errs, fmt.Errorf("node %q: %w", fn.name, err))
				}
			}
			break
		}
	}
	f.closeErr = errors.Join(errs...)
	close(f.closeDone)
	return f.closeErr
}

// each runs do on every node of nodes, FleetOptions.Workers at once,
// without the fleet's lock, each as onNode runs it (so on the new kubelet
// of a node that restarts meanwhile), and joins the errors, each naming
// its node. A node removed from the fleet since (an AddNode that failed)
// is skipped.
func (f *Fleet) each(ctx context.Context, op string, nodes []*fleetNode, do func(*fleetNode, *Node) error) error {
	workers := f.opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(nodes))
	errs := make([]error, len(nodes))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(nodes) {
					return
				}
				fn := nodes[i]
				err := f.onNode(ctx, op, fn.name, func(n *Node, _ bool) error { return do(fn, n) })
				if err != nil && !errors.Is(err, ErrUnknownNode) {
					errs[i] = fmt.Errorf("node %q: %w", fn.name, err)
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

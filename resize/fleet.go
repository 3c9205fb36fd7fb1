package resize

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/allocation/state"
	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/resize/apiserver"
	"github.com/resizelet/resizelet/resize/metrics"
)

// ErrFleetClosed is returned by the calls of a Fleet after Close.
var ErrFleetClosed = errors.New("the fleet is closed")

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
	// Start is the fleet clock's time at the start; zero means the Unix
	// epoch, the time a Node's default clock starts at.
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
// at the same time too.
type Fleet struct {
	cluster *Cluster
	opts    FleetOptions
	// clock is the fleet's time, which Advance moves once per call.
	clock *FakeClock

	mu     sync.Mutex
	nodes  map[string]*fleetNode
	order  []*fleetNode // in the order they were added
	closed bool
}

// fleetNode is one node of a fleet: what it was started with, so that it
// can be started again (RestartNode), and the Node running now.
type fleetNode struct {
	name  string
	cfg   NodeConfig // as given to AddNode, with the name set
	deps  Deps       // complete: the fleet's cluster and the node's clock
	clock *FakeClock // the node's own view of the fleet's time
	node  *Node      // guarded by Fleet.mu; nil while AddNode starts it
}

// NewFleet returns a fleet without nodes: an empty API server and a clock
// at opts.Start.
func NewFleet(opts FleetOptions) *Fleet {
	start := opts.Start
	if start.IsZero() {
		start = time.Unix(0, 0).UTC()
	}
	return &Fleet{
		cluster: NewCluster(opts.Cluster),
		opts:    opts,
		clock:   NewFakeClock(start),
		nodes:   map[string]*fleetNode{},
	}
}

// Cluster returns the API server every node of the fleet shares.
func (f *Fleet) Cluster() *apiserver.Cluster { return f.cluster }

// Now returns the fleet's time: where the last Advance took (or is taking)
// every node.
func (f *Fleet) Now() time.Time { return f.clock.Now() }

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
	// a node of that name; calls route to it once its node is set.
	fn := &fleetNode{name: cfg.Name, cfg: cfg, clock: NewFakeClock(f.clock.Now())}
	f.nodes[cfg.Name] = fn
	f.order = append(f.order, fn)
	f.mu.Unlock()

	n, err := fn.start(ctx, f.cluster, f.opts.Metrics, deps)
	f.mu.Lock()
	defer f.mu.Unlock()
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
	fn.node = n
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
	f.mu.Lock()
	defer f.mu.Unlock()
	fn, ok := f.nodes[name]
	if !ok || fn.node == nil {
		return Deps{}, false
	}
	return fn.deps, true
}

// RestartNode restarts the kubelet of the fleet's node of that name: a new
// Node on the same NodeConfig and Deps, which comes back from the
// checkpoints, the runtime and the API server's pods bound to it, and
// takes the old one's place in the fleet. Make no other call on that node
// while it restarts: two kubelets on one node would both act.
func (f *Fleet) RestartNode(ctx context.Context, name string) (*Node, error) {
	fn, old, err := f.route("restart node", name)
	if err != nil {
		return nil, err
	}
	n, err := NewNode(ctx, fn.cfg, fn.deps)
	if err != nil {
		return nil, fmt.Errorf("restart node %q: %w", name, err)
	}
	old.Close()
	f.mu.Lock()
	fn.node = n
	f.mu.Unlock()
	return n, nil
}

// route returns the fleet's node of that name and its Node, or an error
// that says what op could not do.
func (f *Fleet) route(op, name string) (*fleetNode, *Node, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, nil, ErrFleetClosed
	}
	fn, ok := f.nodes[name]
	if !ok || fn.node == nil {
		return nil, nil, fmt.Errorf("%s: node %q: %w", op, name, ErrUnknownNode)
	}
	return fn, fn.node, nil
}

// CreatePod creates the pod and starts it on the node its spec.nodeName
// names, as Node.AddPod does (the pod returned is a copy of the API
// server's after the kubelet's reaction; a pod the kubelet rejects comes
// back Failed, which is not an error). A pod without spec.nodeName is
// refused (ErrUnboundPod) unless FleetOptions.ScheduleUnbound places it
// (Schedule); one bound to a node the fleet does not have is refused
// (ErrUnknownNode).
func (f *Fleet) CreatePod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error) {
	if pod == nil {
		return nil, &argumentError{op: "create pod", msg: "nil pod"}
	}
	name := pod.Spec.NodeName
	if name == "" {
		if !f.opts.ScheduleUnbound {
			return nil, fmt.Errorf("create pod %s/%s: spec.nodeName is empty and the fleet does not schedule (FleetOptions.ScheduleUnbound): %w", pod.Namespace, pod.Name, ErrUnboundPod)
		}
		var err error
		if name, err = f.Schedule(pod); err != nil {
			return nil, fmt.Errorf("create pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		pod = pod.DeepCopy()
		pod.Spec.NodeName = name
	}
	_, n, err := f.route(fmt.Sprintf("create pod %s/%s", pod.Namespace, pod.Name), name)
	if err != nil {
		return nil, err
	}
	return n.AddPod(ctx, pod)
}

// ResizePod sends a resize through the API server's resize subresource (a
// patch of type pt, as Node.ResizePatch takes it) and hands the updated
// pod to the kubelet of the node it is bound to, which reacts until it is
// quiet (admits, defers or refuses it, and actuates it). It returns the
// pod the API server stored, as the API server answers a patch: before
// the kubelet's reaction, which the cluster's copy (GetPod) shows. That
// pod is shared, never changed in place: read it, or DeepCopy it before
// changing anything. The API server's refusal is returned as is and
// changes nothing. A pod bound to no node of the fleet is resized in the
// API server only, as for a pod no kubelet runs.
func (f *Fleet) ResizePod(ctx context.Context, namespace, name string, pt types.PatchType, patch []byte) (*v1.Pod, error) {
	if err := checkPodName("resize pod", namespace, name); err != nil {
		return nil, err
	}
	if f.isClosed() {
		return nil, ErrFleetClosed
	}
	pod, err := f.cluster.ResizePodPatch(namespace, name, pt, patch)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	var n *Node
	if fn, ok := f.nodes[pod.Spec.NodeName]; ok {
		n = fn.node
	}
	f.mu.Unlock()
	if n == nil {
		return pod, nil
	}
	if err := n.resized(ctx, pod); err != nil {
		return nil, fmt.Errorf("resize pod %s/%s on node %q: %w", namespace, name, pod.Spec.NodeName, err)
	}
	return pod, nil
}

// DeletePod deletes the pod: the kubelet of the node it is bound to tears
// it down and deletes it from the API server (Node.DeletePod). A pod bound
// to no node is deleted from the API server at once, as the API server
// deletes a pod the scheduler has not placed; one bound to a node the
// fleet does not have is refused (ErrUnknownNode).
func (f *Fleet) DeletePod(ctx context.Context, namespace, name string) error {
	if err := checkPodName("delete pod", namespace, name); err != nil {
		return err
	}
	if f.isClosed() {
		return ErrFleetClosed
	}
	pod, err := f.cluster.GetPod(namespace, name)
	if err != nil {
		return fmt.Errorf("delete pod %s/%s: %w", namespace, name, err)
	}
	if pod.Spec.NodeName == "" {
		return f.cluster.DeletePod(namespace, name)
	}
	_, n, err := f.route(fmt.Sprintf("delete pod %s/%s", namespace, name), pod.Spec.NodeName)
	if err != nil {
		return err
	}
	return n.DeletePod(ctx, namespace, name)
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
// catches up at the next Advance.
func (f *Fleet) Advance(ctx context.Context, d time.Duration) error {
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
	nodes := f.snapshot()
	f.mu.Unlock()
	return f.each(nodes, func(fn *fleetNode, n *Node) error {
		if fn.clock.Now().After(target) {
			return nil // this node was advanced on its own, beyond the fleet
		}
		return n.advanceTo(ctx, fn.clock, target)
	})
}

// Sync runs Node.Sync on every node at once (FleetOptions.Workers at a
// time), and joins their errors, each naming its node.
func (f *Fleet) Sync(ctx context.Context) error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return ErrFleetClosed
	}
	nodes := f.snapshot()
	f.mu.Unlock()
	return f.each(nodes, func(_ *fleetNode, n *Node) error { return n.Sync(ctx) })
}

// Close stops every node (Node.Close) and the fleet: its calls return
// ErrFleetClosed afterwards. The API server, the runtimes, cgroups and
// checkpoints are left as they are.
func (f *Fleet) Close() {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	f.closed = true
	nodes := f.snapshot()
	f.mu.Unlock()
	for _, fa := range nodes {
		fa.node.Close()
	}
}

// fleetAt is a node of the fleet and the Node that runs it at one moment.
type fleetAt struct {
	fn   *fleetNode
	node *Node
}

// snapshot lists the started nodes in order. The caller holds f.mu.
func (f *Fleet) snapshot() []fleetAt {
	out := make([]fleetAt, 0, len(f.order))
	for _, fn := range f.order {
		if fn.node != nil {
			out = append(out, fleetAt{fn, fn.node})
		}
	}
	return out
}

// each runs do on every node, FleetOptions.Workers at once, without the
// fleet's lock, and joins the errors, each naming its node.
func (f *Fleet) each(nodes []fleetAt, do func(*fleetNode, *Node) error) error {
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
				if err := do(nodes[i].fn, nodes[i].node); err != nil {
					errs[i] = fmt.Errorf("node %q: %w", nodes[i].fn.name, err)
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

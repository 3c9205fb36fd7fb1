package resize

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/resizelet/resizelet/allocation/state"
	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/resize/apiserver"
)

var fleetStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// namedSmallNode is smallNode (4 CPUs, 8Gi, 110 pods) named name.
func namedSmallNode(name string) NodeConfig {
	cfg := smallNode()
	cfg.Name = name
	return cfg
}

// podOnNode is cpuPod bound to node.
func podOnNode(name, cpu, node string) *v1.Pod {
	p := cpuPod(name, cpu)
	p.Spec.NodeName = node
	return p
}

// newTestFleet is a fleet of simulated small nodes with the names given.
func newTestFleet(t *testing.T, opts FleetOptions, names ...string) *Fleet {
	t.Helper()
	if opts.Start.IsZero() {
		opts.Start = fleetStart
	}
	f := NewFleet(opts)
	t.Cleanup(func() { f.Close() })
	for _, name := range names {
		if _, err := f.AddNode(context.Background(), namedSmallNode(name), Deps{}); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// knows reports whether the fleet's node of that name runs the pod.
func knows(t *testing.T, f *Fleet, node, pod string) bool {
	t.Helper()
	n, ok := f.Node(node)
	if !ok {
		t.Fatalf("no node %q", node)
	}
	_, err := n.Pod("default", pod)
	return err == nil
}

// TestFleetRoutesPodsToTheirNodes: each pod runs on the node its
// spec.nodeName names and on no other; a resize and a deletion through the
// fleet reach that node's kubelet.
func TestFleetRoutesPodsToTheirNodes(t *testing.T) {
	ctx := context.Background()
	f := newTestFleet(t, FleetOptions{}, "a", "b", "c")
	for _, p := range []*v1.Pod{podOnNode("pa", "1", "a"), podOnNode("pb", "1", "b"), podOnNode("pc", "1", "c")} {
		created, err := f.CreatePod(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if created.Status.Phase != v1.PodRunning || created.Spec.NodeName != p.Spec.NodeName {
			t.Fatalf("%s: phase %s on %q, want Running on %q", p.Name, created.Status.Phase, created.Spec.NodeName, p.Spec.NodeName)
		}
	}
	for _, node := range []string{"a", "b", "c"} {
		for _, pod := range []string{"pa", "pb", "pc"} {
			if want := pod == "p"+node; knows(t, f, node, pod) != want {
				t.Errorf("node %s runs %s: %v, want %v", node, pod, !want, want)
			}
		}
	}
	stored, err := f.Resize(ctx, ResizeOp{Namespace: "default", Name: "pb", PatchType: apiserver.StrategicMergePatch, Patch: []byte(cpuPatch("2"))})
	if err != nil {
		t.Fatal(err)
	}
	if stored.Generation != 2 || len(stored.Status.ContainerStatuses) == 0 || stored.Status.ContainerStatuses[0].Resources.Requests.Cpu().String() != "1" {
		t.Errorf("ResizePod returned generation %d, status %+v; want the API server's answer, before the kubelet's", stored.Generation, stored.Status.ContainerStatuses)
	}
	got, _ := f.Cluster().GetPod(ctx, "default", "pb")
	if cs := got.Status.ContainerStatuses[0]; cs.Resources.Requests.Cpu().String() != "2" {
		t.Errorf("pb's status after the resize: cpu %s, want 2 (actuated by node b)", cs.Resources.Requests.Cpu())
	}
	nb, _ := f.Node("b")
	if total := nb.AllocatedTotal(); total.Cpu().String() != "2" {
		t.Errorf("node b allocated %s, want 2", total.Cpu())
	}
	if err := f.DeletePod(ctx, "default", "pc"); err != nil {
		t.Fatal(err)
	}
	if knows(t, f, "c", "pc") {
		t.Error("node c still runs pc after DeletePod")
	}
	if _, err := f.Cluster().GetPod(ctx, "default", "pc"); !errors.Is(err, ErrPodNotFound) {
		t.Errorf("pc still in the API server: %v", err)
	}
}

// TestFleetRefusesWhatItCannotPlace: pods without a node (without the
// scheduler), pods on a node the fleet does not have, nil pods, and every
// call after Close are refused with typed errors that say what and where.
func TestFleetRefusesWhatItCannotPlace(t *testing.T) {
	ctx := context.Background()
	f := newTestFleet(t, FleetOptions{}, "a")
	_, err := f.CreatePod(ctx, cpuPod("loose", "1"))
	if !errors.Is(err, ErrUnboundPod) || !strings.Contains(err.Error(), "default/loose") {
		t.Errorf("unbound pod: %v, want ErrUnboundPod naming the pod", err)
	}
	_, err = f.CreatePod(ctx, podOnNode("lost", "1", "z"))
	if !errors.Is(err, ErrUnknownNode) || !strings.Contains(err.Error(), `node "z"`) {
		t.Errorf("pod on node z: %v, want ErrUnknownNode naming z", err)
	}
	if _, err := f.CreatePod(ctx, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("nil pod: %v, want ErrInvalidArgument", err)
	}
	if _, err := f.Cluster().GetPod(ctx, "default", "lost"); !errors.Is(err, ErrPodNotFound) {
		t.Errorf("a refused pod reached the API server: %v", err)
	}
	if _, err := f.AddNode(ctx, namedSmallNode("a"), Deps{}); !errors.Is(err, ErrNodeExists) {
		t.Errorf("second node a: %v, want ErrNodeExists", err)
	}
	if _, err := f.AddNode(ctx, namedSmallNode("x"), Deps{Cluster: NewCluster(ClusterOptions{})}); err == nil {
		t.Error("AddNode took a Deps.Cluster of its own")
	}
	if err := f.Advance(ctx, -time.Second); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Advance(-1s): %v, want ErrInvalidArgument", err)
	}
	f.Close()
	if _, err := f.CreatePod(ctx, podOnNode("late", "1", "a")); !errors.Is(err, ErrFleetClosed) {
		t.Errorf("CreatePod after Close: %v", err)
	}
	if err := f.Advance(ctx, time.Second); !errors.Is(err, ErrFleetClosed) {
		t.Errorf("Advance after Close: %v", err)
	}
	if _, err := f.AddNode(ctx, namedSmallNode("b"), Deps{}); !errors.Is(err, ErrFleetClosed) {
		t.Errorf("AddNode after Close: %v", err)
	}
}

// TestFleetNodeNames: nodes without a name are named node-N in the order
// they are added; Nodes lists them in that order.
func TestFleetNodeNames(t *testing.T) {
	f := NewFleet(FleetOptions{})
	defer f.Close()
	for range 3 {
		if _, err := f.AddNode(context.Background(), smallNode(), Deps{}); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	for _, n := range f.Nodes() {
		names = append(names, n.Config().Name)
	}
	if got := strings.Join(names, ","); got != "node-1,node-2,node-3" {
		t.Errorf("nodes %s, want node-1,node-2,node-3", got)
	}
	for _, name := range names {
		if _, ok := f.Cluster().Node(name); !ok {
			t.Errorf("%s is not registered with the API server", name)
		}
	}
}

// TestFleetSchedulesFirstFit: with ScheduleUnbound, a pod without a node
// goes to the first node with room for it, counting the requests of the
// pods bound there (a pending resize's larger spec included); when none
// has room the error is the scheduler's FitError.
func TestFleetSchedulesFirstFit(t *testing.T) {
	ctx := context.Background()
	f := newTestFleet(t, FleetOptions{ScheduleUnbound: true}, "a", "b")
	place := func(name, cpu string) string {
		t.Helper()
		p, err := f.CreatePod(ctx, cpuPod(name, cpu))
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		return p.Spec.NodeName
	}
	if got := place("p1", "3"); got != "a" {
		t.Fatalf("p1 on %s, want a", got)
	}
	if got := place("p2", "3"); got != "b" {
		t.Fatalf("p2 on %s, want b (a has 1 CPU left)", got)
	}
	if got := place("p3", "1"); got != "a" {
		t.Fatalf("p3 on %s, want a", got)
	}
	// p1 now asks for 4 CPUs: Deferred on a (p3 holds one), but the
	// scheduler counts the larger spec, so a has no room even for 1m.
	if _, err := f.Resize(ctx, ResizeOp{Namespace: "default", Name: "p3", Patch: []byte(cpuPatch("500m"))}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Resize(ctx, ResizeOp{Namespace: "default", Name: "p1", Patch: []byte(cpuPatch("4"))}); err != nil {
		t.Fatal(err)
	}
	if got := place("p4", "500m"); got != "b" {
		t.Fatalf("p4 on %s, want b: a is full with p1's pending 4 CPUs", got)
	}
	_, err := f.CreatePod(ctx, cpuPod("p5", "2"))
	var fe *FitError
	if !errors.As(err, &fe) || !errors.Is(err, ErrUnschedulable) {
		t.Fatalf("p5: %v, want a FitError", err)
	}
	want := "create pod default/p5: 0/2 nodes are available: 2 Insufficient cpu."
	if err.Error() != want {
		t.Errorf("p5: %q\nwant %q", err, want)
	}
}

// TestFitErrorMessage: the scheduler's message with its reasons sorted as
// strings, and its message for a fleet without nodes.
func TestFitErrorMessage(t *testing.T) {
	e := &FitError{NumAllNodes: 3, Reasons: map[string]int{"Insufficient cpu": 3, "Too many pods": 1, "Insufficient memory": 1}}
	if got, want := e.Error(), "0/3 nodes are available: 1 Insufficient memory, 1 Too many pods, 3 Insufficient cpu."; got != want {
		t.Errorf("%q\nwant %q", got, want)
	}
	f := NewFleet(FleetOptions{})
	defer f.Close()
	if _, err := f.Schedule(t.Context(), cpuPod("p", "1")); err == nil || err.Error() != "no nodes available to schedule pods" {
		t.Errorf("no nodes: %v", err)
	}
}

// standalone is a node on an API server and clock of its own, as the
// reference a fleet's node must behave like.
type standalone struct {
	node    *Node
	cluster *Cluster
	rt      *cri.SimContainerd
	clock   *FakeClock
}

func newStandalone(t *testing.T, cfg NodeConfig) *standalone {
	t.Helper()
	cg := cgroup.NewSimKernel(cgroup.V2)
	s := &standalone{cluster: NewCluster(ClusterOptions{}), rt: cri.NewSimContainerd(cg), clock: NewFakeClock(fleetStart)}
	n, err := NewNode(context.Background(), cfg, Deps{Cluster: s.cluster, Cgroups: cg, Runtime: s.rt, Clock: s.clock,
		Allocated: state.NewMemory(), Actuated: state.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	s.node = n
	return s
}

// eventsOf lists the events about the pods as "time reason message".
func eventsOf(c *Cluster, pods ...string) []string {
	var out []string
	for _, e := range c.Events() {
		for _, p := range pods {
			if e.Pod == p {
				out = append(out, fmt.Sprintf("%s %s %s %s", e.Time.Format(time.RFC3339), e.Pod, e.Reason, e.Message))
			}
		}
	}
	return out
}

// TestFleetAdvanceIsEveryNodesAdvance: one Advance of a fleet takes each
// node through the same timers at the same times as Advance on the node
// alone: a Deferred resize retried by the periodic retry on node a, a
// container that exited restarted by the next resync on node b, and the
// same events at the same times, the same statuses, and every node's
// clock at the fleet's time.
func TestFleetAdvanceIsEveryNodesAdvance(t *testing.T) {
	ctx := context.Background()
	f := newTestFleet(t, FleetOptions{}, "a", "b")
	alone := map[string]*standalone{"a": newStandalone(t, namedSmallNode("a")), "b": newStandalone(t, namedSmallNode("b"))}
	pods := map[string][]*v1.Pod{
		"a": {podOnNode("a1", "2", "a"), podOnNode("a2", "1", "a")},
		"b": {podOnNode("b1", "1", "b")},
	}
	for node, ps := range pods {
		for _, p := range ps {
			if _, err := f.CreatePod(ctx, p); err != nil {
				t.Fatal(err)
			}
			if _, err := alone[node].node.AddPod(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	// a2 asks for 3 CPUs beside a1's 2: Deferred, retried every 3 min.
	if _, err := f.Resize(ctx, ResizeOp{Namespace: "default", Name: "a2", Patch: []byte(cpuPatch("3"))}); err != nil {
		t.Fatal(err)
	}
	if _, err := alone["a"].node.Resize(ctx, ResizeOp{Namespace: "default", Name: "a2", Patch: []byte(cpuPatch("3"))}); err != nil {
		t.Fatal(err)
	}
	exit := func(n *Node, rt cri.Runtime, pod string) {
		t.Helper()
		info, err := n.Pod("default", pod)
		if err != nil {
			t.Fatal(err)
		}
		if err := rt.(*cri.SimContainerd).Exit(info.ContainerIDs["c"], 1, ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Advance(ctx, 50*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := alone["a"].node.Advance(ctx, 50*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := alone["b"].node.Advance(ctx, 50*time.Second); err != nil {
		t.Fatal(err)
	}
	nb, _ := f.Node("b")
	deps, _ := f.Deps("b")
	exit(nb, deps.Runtime, "b1")
	exit(alone["b"].node, alone["b"].rt, "b1")
	if err := f.Advance(ctx, 7*time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, s := range alone {
		if err := s.node.Advance(ctx, 7*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	end := fleetStart.Add(7*time.Minute + 50*time.Second)
	if !f.Now().Equal(end) {
		t.Errorf("fleet time %s, want %s", f.Now(), end)
	}
	for node, ps := range pods {
		deps, _ := f.Deps(node)
		if now := deps.Clock.Now(); !now.Equal(end) {
			t.Errorf("node %s at %s, want %s", node, now, end)
		}
		var names []string
		for _, p := range ps {
			names = append(names, p.Name)
			got, _ := f.Cluster().GetPod(ctx, "default", p.Name)
			want, _ := alone[node].cluster.GetPod(ctx, "default", p.Name)
			if !apiequality.Semantic.DeepEqual(got.Status, want.Status) {
				t.Errorf("pod %s: status in the fleet\n%+v\nalone\n%+v", p.Name, got.Status, want.Status)
			}
		}
		got, want := eventsOf(f.Cluster(), names...), eventsOf(alone[node].cluster, names...)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("node %s: events in the fleet\n%s\nalone\n%s", node, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	// The story happened: the retry refreshed a2's Deferred condition and
	// b1 was restarted by a resync.
	a2, _ := f.Cluster().GetPod(ctx, "default", "a2")
	if c := pendingOf(t, a2); c == nil || c.Reason != v1.PodReasonDeferred || !c.LastProbeTime.After(fleetStart.Add(time.Minute)) {
		t.Errorf("a2's pending condition %+v, want Deferred probed by a later retry", c)
	}
	b1, _ := f.Cluster().GetPod(ctx, "default", "b1")
	if cs := statusOf(t, b1, "c"); cs.RestartCount != 1 {
		t.Errorf("b1 restart count %d, want 1", cs.RestartCount)
	}
}

// TestFleetRestartNode: a kubelet restart of one node of a fleet comes
// back from its checkpoints, runtime and the API server's pods bound to
// it, takes its place in the fleet, and goes on resizing; the other node
// is not touched.
func TestFleetRestartNode(t *testing.T) {
	ctx := context.Background()
	f := newTestFleet(t, FleetOptions{}, "a", "b")
	for _, p := range []*v1.Pod{podOnNode("a1", "1", "a"), podOnNode("b1", "1", "b")} {
		if _, err := f.CreatePod(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.Resize(ctx, ResizeOp{Namespace: "default", Name: "a1", Patch: []byte(cpuPatch("2"))}); err != nil {
		t.Fatal(err)
	}
	old, _ := f.Node("a")
	before, _ := old.Pod("default", "a1")
	oldB, _ := f.Node("b")
	restarted, err := f.RestartNode(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := f.Node("a"); n != restarted || n == old {
		t.Fatal("the fleet does not route to the restarted node")
	}
	if n, _ := f.Node("b"); n != oldB {
		t.Error("restarting a replaced b")
	}
	after, err := restarted.Pod("default", "a1")
	if err != nil {
		t.Fatal(err)
	}
	if before.UID != after.UID || before.ContainerIDs["c"] != after.ContainerIDs["c"] ||
		!apiequality.Semantic.DeepEqual(before.Allocated, after.Allocated) {
		t.Errorf("after the restart a1 is %+v, want %+v", after, before)
	}
	if _, err := restarted.Pod("default", "b1"); err == nil {
		t.Error("the restarted node a took b's pod")
	}
	if _, err := f.Resize(ctx, ResizeOp{Namespace: "default", Name: "a1", Patch: []byte(cpuPatch("3"))}); err != nil {
		t.Fatal(err)
	}
	if total := restarted.AllocatedTotal(); total.Cpu().String() != "3" {
		t.Errorf("restarted node allocated %s, want 3", total.Cpu())
	}
	if _, err := f.RestartNode(ctx, "z"); !errors.Is(err, ErrUnknownNode) {
		t.Errorf("RestartNode(z): %v, want ErrUnknownNode", err)
	}
}

// TestNodeTakesOnlyItsPods: a node takes the pods bound to it and, unless
// Deps.BoundPodsOnly, the pods without a nodeName; never another node's.
// AddPod of another node's pod is refused; with BoundPodsOnly, AddPod binds
// an unbound pod to the node.
func TestNodeTakesOnlyItsPods(t *testing.T) {
	ctx := context.Background()
	cluster := NewCluster(ClusterOptions{})
	for _, p := range []*v1.Pod{podOnNode("mine", "1", "a"), podOnNode("theirs", "1", "b"), cpuPod("loose", "1")} {
		if _, err := cluster.CreatePod(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, boundOnly := range []bool{false, true} {
		cg := cgroup.NewSimKernel(cgroup.V2)
		n, err := NewNode(ctx, namedSmallNode("a"), Deps{Cluster: cluster, Cgroups: cg, Runtime: cri.NewSimContainerd(cg), BoundPodsOnly: boundOnly})
		if err != nil {
			t.Fatal(err)
		}
		for pod, want := range map[string]bool{"mine": true, "theirs": false, "loose": !boundOnly} {
			if _, err := n.Pod("default", pod); (err == nil) != want {
				t.Errorf("BoundPodsOnly=%v: node a runs %s: %v, want %v", boundOnly, pod, err == nil, want)
			}
		}
		_, err = n.AddPod(ctx, podOnNode(fmt.Sprintf("other-%v", boundOnly), "1", "b"))
		if !errors.Is(err, ErrOtherNode) || !strings.Contains(err.Error(), `"b", not this node "a"`) {
			t.Errorf("BoundPodsOnly=%v: AddPod of b's pod: %v, want ErrOtherNode", boundOnly, err)
		}
		if _, err := n.AddPods(ctx, []*v1.Pod{podOnNode("x", "1", "a"), podOnNode("y", "1", "b")}); !errors.Is(err, ErrOtherNode) {
			t.Errorf("BoundPodsOnly=%v: AddPods with b's pod: %v, want ErrOtherNode", boundOnly, err)
		}
		if _, err := cluster.GetPod(ctx, "default", "x"); !errors.Is(err, ErrPodNotFound) {
			t.Errorf("BoundPodsOnly=%v: the refused AddPods created x: %v", boundOnly, err)
		}
		name := fmt.Sprintf("new-%v", boundOnly)
		p, err := n.AddPod(ctx, cpuPod(name, "100m"))
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]string{false: "", true: "a"}[boundOnly]; p.Spec.NodeName != want {
			t.Errorf("BoundPodsOnly=%v: AddPod left nodeName %q, want %q", boundOnly, p.Spec.NodeName, want)
		}
	}
}

// TestFleetConcurrentCalls drives the nodes of a fleet at once: resizes on
// every node from several goroutines while the fleet advances and syncs.
// Run with -race; every resize must end admitted.
func TestFleetConcurrentCalls(t *testing.T) {
	ctx := context.Background()
	names := []string{"a", "b", "c", "d"}
	f := newTestFleet(t, FleetOptions{Workers: 4}, names...)
	for _, node := range names {
		for i := range 4 {
			if _, err := f.CreatePod(ctx, podOnNode(fmt.Sprintf("%s%d", node, i), "100m", node)); err != nil {
				t.Fatal(err)
			}
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for _, node := range names {
		for i := range 4 {
			wg.Go(func() {
				for k := range 5 {
					cpu := fmt.Sprintf("%dm", 100+50*((k+i)%3))
					if _, err := f.Resize(ctx, ResizeOp{Namespace: "default", Name: fmt.Sprintf("%s%d", node, i), Patch: []byte(cpuPatch(cpu))}); err != nil {
						errs <- err
						return
					}
				}
			})
		}
	}
	wg.Go(func() {
		for range 5 {
			if err := f.Advance(ctx, 2*time.Minute); err != nil {
				errs <- err
				return
			}
			if err := f.Sync(ctx); err != nil {
				errs <- err
				return
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, node := range names {
		for i := range 4 {
			p, _ := f.Cluster().GetPod(ctx, "default", fmt.Sprintf("%s%d", node, i))
			if len(p.Status.Conditions) != 0 {
				t.Errorf("%s: conditions %+v, want none (every resize completed)", p.Name, p.Status.Conditions)
			}
			spec, status := p.Spec.Containers[0].Resources.Requests.Cpu(), p.Status.ContainerStatuses[0].Resources.Requests.Cpu()
			if spec.Cmp(*status) != 0 {
				t.Errorf("%s: spec cpu %s, status %s", p.Name, spec, status)
			}
		}
	}
	if want := fleetStart.Add(10 * time.Minute); !f.Now().Equal(want) {
		t.Errorf("fleet time %s, want %s", f.Now(), want)
	}
}

// TestFleetUnboundAndForeignPods: a pod created in the API server without a
// node is resized there only and deleted at once through the fleet; a
// resize admission of 1.36 checks each pod against its own node.
func TestFleetUnboundAndForeignPods(t *testing.T) {
	ctx := context.Background()
	f := NewFleet(FleetOptions{Start: fleetStart, Cluster: ClusterOptions{Profile: Profile136}})
	defer f.Close()
	big := namedSmallNode("big")
	big.Capacity = v1.ResourceList{v1.ResourceCPU: resource.MustParse("16"), v1.ResourceMemory: resource.MustParse("64Gi"), v1.ResourcePods: resource.MustParse("110")}
	for _, cfg := range []NodeConfig{namedSmallNode("small"), big} {
		cfg.Profile = Profile136
		if _, err := f.AddNode(ctx, cfg, Deps{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []*v1.Pod{podOnNode("s", "1", "small"), podOnNode("b", "1", "big")} {
		if _, err := f.CreatePod(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.Resize(ctx, ResizeOp{Namespace: "default", Name: "s", Patch: []byte(cpuPatch("6"))}); err == nil || !strings.Contains(err.Error(), "allocatable: 4000") {
		t.Errorf("6 CPUs on the small node: %v, want refused against its 4 CPUs", err)
	}
	if _, err := f.Resize(ctx, ResizeOp{Namespace: "default", Name: "b", Patch: []byte(cpuPatch("6"))}); err != nil {
		t.Errorf("6 CPUs on the big node: %v", err)
	}
	if _, err := f.Cluster().CreatePod(ctx, cpuPod("loose", "1")); err != nil {
		t.Fatal(err)
	}
	if p, err := f.Resize(ctx, ResizeOp{Namespace: "default", Name: "loose", Patch: []byte(cpuPatch("100"))}); err != nil || p.Generation != 2 {
		t.Errorf("resize of an unbound pod: %v, want the API server's update", err)
	}
	if err := f.DeletePod(ctx, "default", "loose"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Cluster().GetPod(ctx, "default", "loose"); !errors.Is(err, ErrPodNotFound) {
		t.Errorf("unbound pod still there: %v", err)
	}
}

// TestFleetScheduleReadsNodeByNode: Schedule, which weighs each node by
// the load the API server keeps from every pod write (Cluster.NodeLoad),
// places every pod where weighing every node on the whole list of pods
// places it (fitAll), with the same FitError when none fits: on a fleet
// whose nodes run out of cpu, pods and memory as the pods placed are
// created, with a pod that finishes and one deleted after the loads are
// first counted, a pod bound to a node outside the fleet and an unbound
// one (neither counted).
func TestFleetScheduleReadsNodeByNode(t *testing.T) {
	ctx := context.Background()
	f := NewFleet(FleetOptions{Start: fleetStart})
	defer f.Close()
	few, small := namedSmallNode("few"), namedSmallNode("small")
	few.Capacity = v1.ResourceList{v1.ResourceCPU: resource.MustParse("8"), v1.ResourceMemory: resource.MustParse("8Gi"), v1.ResourcePods: resource.MustParse("2")}
	small.Capacity = v1.ResourceList{v1.ResourceCPU: resource.MustParse("8"), v1.ResourceMemory: resource.MustParse("1Gi"), v1.ResourcePods: resource.MustParse("110")}
	for _, cfg := range []NodeConfig{namedSmallNode("a"), few, small} {
		if _, err := f.AddNode(ctx, cfg, Deps{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []*v1.Pod{podOnNode("a1", "3", "a"), podOnNode("a2", "1", "a"), podOnNode("f1", "10m", "few"), podOnNode("f2", "10m", "few"), podOnNode("s1", "1", "small")} {
		if _, err := f.CreatePod(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []*v1.Pod{podOnNode("elsewhere", "100", "z"), cpuPod("loose", "100")} {
		if _, err := f.Cluster().CreatePod(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	fitAll := func(pod *v1.Pod) string {
		type load struct{ pods, milliCPU, memory, allowedPods, cpuAlloc, memAlloc int64 }
		loads := map[string]*load{}
		var order []string
		for _, n := range f.Nodes() {
			alloc := n.Config().Allocatable
			order = append(order, n.Config().Name)
			loads[n.Config().Name] = &load{allowedPods: alloc.Pods().Value(), cpuAlloc: alloc.Cpu().MilliValue(), memAlloc: alloc.Memory().Value()}
		}
		requests := func(p *v1.Pod) (int64, int64) {
			reqs := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{UseStatusResources: true})
			return reqs.Cpu().MilliValue(), reqs.Memory().Value()
		}
		for _, p := range f.Cluster().ListPods(ctx) {
			if l := loads[p.Spec.NodeName]; l != nil && p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed {
				cpu, mem := requests(p)
				l.pods, l.milliCPU, l.memory = l.pods+1, l.milliCPU+cpu, l.memory+mem
			}
		}
		cpu, mem := requests(pod)
		reasons := map[string]int{}
		for _, name := range order {
			l := loads[name]
			fits := true
			for reason, short := range map[string]bool{"Too many pods": l.pods+1 > l.allowedPods,
				"Insufficient cpu": cpu > l.cpuAlloc-l.milliCPU, "Insufficient memory": mem > l.memAlloc-l.memory} {
				if short {
					reasons[reason]++
					fits = false
				}
			}
			if fits {
				return name
			}
		}
		return (&FitError{NumAllNodes: len(order), Reasons: reasons}).Error()
	}
	memPod := func(name, mem string) *v1.Pod {
		p := cpuPod(name, "10m")
		p.Spec.Containers[0].Resources = resources("10m", mem, "10m", mem)
		return p
	}
	for i, pod := range []*v1.Pod{cpuPod("one", "1"), cpuPod("two", "2"), cpuPod("five", "5"), cpuPod("nine", "9"), memPod("2g", "2Gi"), memPod("8g", "8Gi"), cpuPod("six", "6")} {
		got, err := f.Schedule(ctx, pod)
		if err != nil {
			got = err.Error()
		}
		if want := fitAll(pod); got != want {
			t.Errorf("%s: Schedule() = %s, want %s", pod.Name, got, want)
		}
		if err == nil {
			pod.Spec.NodeName = got
			if _, err := f.CreatePod(ctx, pod); err != nil {
				t.Fatal(err)
			}
		}
		switch i {
		case 0:
			// The loads are counted now: a pod that finishes leaves its
			// node's.
			a2, err := f.Cluster().GetPod(ctx, "default", "a2")
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Cluster().UpdatePodStatus(ctx, "default", "a2", a2.UID, v1.PodStatus{Phase: v1.PodSucceeded}); err != nil {
				t.Fatal(err)
			}
		case 4:
			if err := f.DeletePod(ctx, "default", "a1"); err != nil {
				t.Fatal(err)
			}
		}
	}
}

package resize

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/resizelet/resizelet/allocation/state"
	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
)

// watchedNode is a simulated node whose runtime, cgroups and API calls are
// counted (ioWatch), with its checkpoints in a directory.
type watchedNode struct {
	ctx     context.Context
	w       *ioWatch
	cluster *Cluster
	cg      *cgroup.SimKernel
	cfg     NodeConfig
	deps    Deps
	dir     string
	node    *Node
}

func newWatchedNode(t *testing.T) *watchedNode {
	t.Helper()
	wn := &watchedNode{ctx: context.Background(), w: &ioWatch{}, cfg: smallNode(), dir: t.TempDir()}
	wn.cluster = NewCluster(ClusterOptions{})
	wn.cg = cgroup.NewSimKernel(cgroup.V2)
	rt := cri.NewSimContainerd(wn.cg)
	wn.deps = Deps{
		Cluster:       &watchAPI{api: wn.cluster, w: wn.w},
		Cgroups:       &watchCgroups{m: wn.cg, w: wn.w},
		Runtime:       &watchRuntime{rt: rt, w: wn.w},
		Clock:         NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		CheckpointDir: wn.dir,
	}
	wn.start(t)
	return wn
}

// start starts a kubelet on the node's parts.
func (wn *watchedNode) start(t *testing.T) {
	t.Helper()
	n, err := NewNode(wn.ctx, wn.cfg, wn.deps)
	if err != nil {
		t.Fatalf("NewNode: %v", err)
	}
	wn.node = n
	t.Cleanup(func() { n.Close() })
}

// files returns the checkpoint directory's files and their contents.
func (wn *watchedNode) files(t *testing.T) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(wn.dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(wn.dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

// nodeCalls are a call of each of Node's methods that take a context,
// each on a pod that exists, with arguments that would change something.
func nodeCalls(n *Node) map[string]func(ctx context.Context) error {
	patch := []byte(cpuPatch("2"))
	return map[string]func(ctx context.Context) error{
		"AddPod": func(ctx context.Context) error { _, err := n.AddPod(ctx, cpuPod("new", "100m")); return err },
		"AddPods": func(ctx context.Context) error {
			_, err := n.AddPods(ctx, []*v1.Pod{cpuPod("new2", "100m")})
			return err
		},
		"Resize": func(ctx context.Context) error {
			return errOf(n.Resize(ctx, ResizeOp{Namespace: "default", Name: "a", Patch: patch}))
		},
		"Resize dry run": func(ctx context.Context) error {
			return errOf(n.Resize(ctx, ResizeOp{Namespace: "default", Name: "a", Patch: patch, DryRun: true}))
		},
		"Resize typed": func(ctx context.Context) error {
			return errOf(n.Resize(ctx, ResizeOp{Namespace: "default", Name: "a", Request: ResizeRequest{Containers: []ContainerResize{{Name: "c", Requests: CPUMemory(2000, 0), Limits: CPUMemory(2000, 0)}}}}))
		},
		"DeletePod": func(ctx context.Context) error { return n.DeletePod(ctx, "default", "a") },
		"Sync":      func(ctx context.Context) error { return n.Sync(ctx) },
		"Tick":      func(ctx context.Context) error { return n.Tick(ctx) },
		"Advance":   func(ctx context.Context) error { return n.Advance(ctx, time.Hour) },
		"Audit":     func(ctx context.Context) error { _, err := n.Audit(ctx); return err },
		"Plan": func(ctx context.Context) error {
			_, err := n.Plan(ctx, ResizeOp{Namespace: "default", Name: "a", Patch: patch})
			return err
		},
		"Plan typed": func(ctx context.Context) error {
			_, err := n.Plan(ctx, ResizeOp{Namespace: "default", Name: "a", Request: ResizeRequest{Containers: []ContainerResize{{Name: "c", Requests: CPU(2000), Limits: CPU(2000)}}}})
			return err
		},
		"Pod": func(context.Context) error { _, err := n.Pod("default", "a"); return err },
	}
}

// TestCloseRefusesEveryCall: after Close every call of the node returns an
// error matching ErrClosed and does no I/O at all (no runtime, cgroup or
// API call, no checkpoint write), and Close again is a no-op.
func TestCloseRefusesEveryCall(t *testing.T) {
	wn := newWatchedNode(t)
	if _, err := wn.node.AddPod(wn.ctx, cpuPod("a", "1")); err != nil {
		t.Fatal(err)
	}
	if err := wn.node.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	calls, files, rv, events := wn.w.calls.Load(), wn.files(t), wn.cluster.ResourceVersion(), wn.cluster.EventCount()
	for name, call := range nodeCalls(wn.node) {
		if err := call(wn.ctx); !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v, want an error matching ErrClosed", name, err)
		}
	}
	if err := wn.node.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if got := wn.w.calls.Load(); got != calls {
		t.Errorf("the closed node made %d runtime, cgroup or API calls", got-calls)
	}
	if got := wn.files(t); !equalMaps(got, files) {
		t.Errorf("the closed node changed its checkpoint directory: %v, was %v", keys(got), keys(files))
	}
	if wn.cluster.ResourceVersion() != rv || wn.cluster.EventCount() != events {
		t.Errorf("the closed node changed the API server")
	}
	if _, err := wn.cluster.GetPod(t.Context(), "default", "new"); !errors.Is(err, ErrPodNotFound) {
		t.Errorf("AddPod on the closed node created the pod: %v", err)
	}
}

// TestZeroNodeRefusesEveryCall: a Node that NewNode did not make (the zero
// value, a nil pointer) answers every call with an error matching
// ErrClosed, and its other methods with zero values, without panicking.
func TestZeroNodeRefusesEveryCall(t *testing.T) {
	ctx := context.Background()
	for _, n := range []*Node{nil, {}} {
		for name, call := range nodeCalls(n) {
			if err := call(ctx); !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "not made by NewNode") {
				t.Errorf("%s on %#v: %v, want an error matching ErrClosed that says why", name, n, err)
			}
		}
		if err := n.Close(); !errors.Is(err, ErrClosed) {
			t.Errorf("Close on %#v: %v", n, err)
		}
		if n.Gate(GateInPlacePodVerticalScaling) || n.AllocatedTotal() != nil || n.Config().Name != "" {
			t.Errorf("%#v: Gate, AllocatedTotal or Config answered as a node that runs", n)
		}
	}
}

// TestNilContextIsAnError: every call that takes a context refuses a nil
// one with an error matching ErrInvalidArgument, and NewNode too.
func TestNilContextIsAnError(t *testing.T) {
	wn := newWatchedNode(t)
	if _, err := wn.node.AddPod(wn.ctx, cpuPod("a", "1")); err != nil {
		t.Fatal(err)
	}
	for name, call := range nodeCalls(wn.node) {
		if name == "Pod" {
			continue // takes no context
		}
		if err := call(nil); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s with a nil context: %v, want an error matching ErrInvalidArgument", name, err)
		}
	}
	//lint:ignore SA1012 a nil context is what the test gives
	if _, err := NewNode(nil, wn.cfg, wn.deps); !errors.Is(err, ErrInvalidArgument) { //nolint:staticcheck
		t.Errorf("NewNode with a nil context: %v", err)
	}
}

// TestCloseWaitsForTheBatchInFlight: Close lets the batch a call is
// performing finish and returns only then; the call stops there with an
// error matching ErrClosed, the node does nothing more, and the kubelet
// started after it finishes the resize: its allocation, checkpoint,
// cgroups, runtime and status all say 3 CPUs (before, a closed node and
// its successor wrote over each other and the checkpoint went back to 1
// CPU while the cgroup ran at 3).
func TestCloseWaitsForTheBatchInFlight(t *testing.T) {
	wn := newWatchedNode(t)
	if _, err := wn.node.AddPod(wn.ctx, cpuPod("a", "1")); err != nil {
		t.Fatal(err)
	}
	started, release := wn.w.holdUpdates()
	defer release()
	resized := make(chan error, 1)
	go func() {
		resized <- errOf(wn.node.Resize(wn.ctx, ResizeOp{Namespace: "default", Name: "a", Patch: []byte(cpuPatch("3"))}))
	}()
	<-started
	closed := make(chan error, 1)
	go func() { closed <- wn.node.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a batch was in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	// A successor cannot start while the node holds its checkpoints.
	if _, err := NewNode(wn.ctx, wn.cfg, wn.deps); !errors.Is(err, ErrCheckpointsHeld) {
		t.Fatalf("NewNode while the node is open: %v, want an error matching ErrCheckpointsHeld", err)
	}
	release()
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-resized; err != nil && !errors.Is(err, ErrClosed) {
		t.Fatalf("the resize cut short by Close: %v, want nil or an error matching ErrClosed", err)
	}
	calls := wn.w.calls.Load()
	time.Sleep(10 * time.Millisecond)
	if got := wn.w.calls.Load(); got != calls {
		t.Fatalf("the node made %d calls after Close returned", got-calls)
	}

	wn.start(t)
	if err := wn.node.Sync(wn.ctx); err != nil {
		t.Fatal(err)
	}
	if diffs, err := wn.node.Audit(wn.ctx); err != nil || len(diffs) != 0 {
		t.Fatalf("after the restart, Audit: %v %v", diffs, err)
	}
	info, err := wn.node.Pod("default", "a")
	if err != nil {
		t.Fatal(err)
	}
	if got := allocatedCPULimit(info).String(); got != "3" {
		t.Fatalf("allocated cpu limit %s, want 3", got)
	}
	if got := wn.files(t)[state.AllocatedStateFile]; !strings.Contains(got, `\"cpu\":\"3\"`) {
		t.Fatalf("allocated_pods_state does not hold the 3 CPUs: %s", got)
	}
	pod, err := wn.cluster.GetPod(t.Context(), "default", "a")
	if err != nil {
		t.Fatal(err)
	}
	if got := qty(statusOf(t, pod, "c").Resources.Limits, "cpu"); got != "3" {
		t.Fatalf("status cpu limit %s, want 3", got)
	}
}

// TestNewNodeRefusesHeldCheckpoints: a node on checkpoints that another
// open node holds is refused with an error naming both nodes, for a
// checkpoint directory (its lock file, as the kubelet's --lock-file) and
// for in-memory stores; once the holder is closed, it starts.
func TestNewNodeRefusesHeldCheckpoints(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		deps func(t *testing.T) Deps
	}{
		{"directory", func(t *testing.T) Deps { return Deps{CheckpointDir: t.TempDir()} }},
		{"in memory", func(*testing.T) Deps { return Deps{Allocated: state.NewMemory(), Actuated: state.NewMemory()} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			deps := tc.deps(t)
			deps.Cluster = NewCluster(ClusterOptions{})
			kernel := cgroup.NewSimKernel(cgroup.V2)
			deps.Cgroups, deps.Runtime = kernel, cri.NewSimContainerd(kernel)
			first := smallNode()
			first.Name = "first"
			n, err := NewNode(ctx, first, deps)
			if err != nil {
				t.Fatal(err)
			}
			second := smallNode()
			second.Name = "second"
			_, err = NewNode(ctx, second, deps)
			if !errors.Is(err, ErrCheckpointsHeld) || !strings.Contains(err.Error(), `"first"`) || !strings.Contains(err.Error(), `"second"`) {
				t.Fatalf("NewNode on held checkpoints: %v, want an error matching ErrCheckpointsHeld naming both nodes", err)
			}
			if err := n.Close(); err != nil {
				t.Fatal(err)
			}
			n, err = NewNode(ctx, second, deps)
			if err != nil {
				t.Fatalf("NewNode after the holder closed: %v", err)
			}
			n.Close()
		})
	}
}

// TestClosedBackendRefusesNewNodes: Backend.Close stops the nodes that run
// on it, and refuses new ones.
func TestClosedBackendRefusesNewNodes(t *testing.T) {
	ctx := context.Background()
	b, err := Simulated(smallNode())
	if err != nil {
		t.Fatal(err)
	}
	cluster := NewCluster(ClusterOptions{})
	n, err := NewNode(ctx, b.Config(), b.Deps(Deps{Cluster: cluster}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.AddPod(ctx, cpuPod("a", "1")); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := n.Sync(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("a node of a closed backend: Sync: %v, want an error matching ErrClosed", err)
	}
	_, err = NewNode(ctx, b.Config(), b.Deps(Deps{Cluster: cluster}))
	if !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "backend") {
		t.Fatalf("NewNode on a closed backend: %v, want an error matching ErrClosed that names the backend", err)
	}
}

// TestCloseWakesWaitingCallers: a call waiting for another caller's batch
// (a Sync while a resize performs) returns when the node closes, instead
// of waiting for ever.
func TestCloseWakesWaitingCallers(t *testing.T) {
	wn := newWatchedNode(t)
	for _, p := range []string{"a", "b"} {
		if _, err := wn.node.AddPod(wn.ctx, cpuPod(p, "500m")); err != nil {
			t.Fatal(err)
		}
	}
	started, release := wn.w.holdUpdates()
	defer release()
	resized := make(chan error, 1)
	go func() {
		resized <- errOf(wn.node.Resize(wn.ctx, ResizeOp{Namespace: "default", Name: "a", Patch: []byte(cpuPatch("1"))}))
	}()
	<-started
	synced := make(chan error, 1)
	go func() { synced <- wn.node.Sync(wn.ctx) }()
	closed := make(chan error, 1)
	go func() { closed <- wn.node.Close() }()
	time.Sleep(20 * time.Millisecond)
	release()
	for what, c := range map[string]chan error{"Close": closed, "Resize": resized, "Sync": synced} {
		select {
		case err := <-c:
			if err != nil && !errors.Is(err, ErrClosed) {
				t.Errorf("%s: %v", what, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s did not return after Close", what)
		}
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

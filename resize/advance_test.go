package resize

import (
	"errors"
	"fmt"
	"math/rand"
	"testing"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/resize/core"
)

// advanceInSteps advances tn by d in steps too short for Advance to skip
// anything: timer by timer, the reference a skipping Advance must match.
func advanceInSteps(t *testing.T, tn *testNode, d time.Duration) {
	t.Helper()
	step := core.SkipPeriod - time.Second
	for d > 0 {
		s := min(d, step)
		if err := tn.node.Advance(tn.ctx, s); err != nil {
			t.Fatal(err)
		}
		d -= s
	}
}

// sameNodes fails unless the two nodes show the same pods (spec and
// status, with every condition time), the same events (with their times),
// the same allocations and the same runtime calls that change something.
func sameNodes(t *testing.T, what string, a, b *testNode) {
	t.Helper()
	if !a.clock.Now().Equal(b.clock.Now()) {
		t.Fatalf("%s: clocks at %v and %v", what, a.clock.Now(), b.clock.Now())
	}
	if pa, pb := a.cluster.ListPods(t.Context()), b.cluster.ListPods(t.Context()); !apiequality.Semantic.DeepEqual(pa, pb) {
		t.Fatalf("%s: the pods differ:\n%v\n%v", what, pa, pb)
	}
	ea, eb := a.cluster.Events(), b.cluster.Events()
	if len(ea) != len(eb) {
		t.Fatalf("%s: %d and %d events", what, len(ea), len(eb))
	}
	for i := range ea {
		x, y := ea[i], eb[i]
		if !x.Time.Equal(y.Time) || x.Reason != y.Reason || x.Message != y.Message || x.Pod != y.Pod {
			t.Fatalf("%s: event %d differs:\n%+v\n%+v", what, i, x, y)
		}
	}
	if ta, tb := a.node.AllocatedTotal(), b.node.AllocatedTotal(); !apiequality.Semantic.DeepEqual(ta, tb) {
		t.Fatalf("%s: allocated %v and %v", what, ta, tb)
	}
	ca, cb := a.calls.Calls(), b.calls.Calls()
	if len(ca) != len(cb) {
		t.Fatalf("%s: %d and %d runtime calls", what, len(ca), len(cb))
	}
	for i := range ca {
		if ca[i].Method != cb[i].Method || ca[i].Pod != cb[i].Pod || ca[i].Container != cb[i].Container {
			t.Fatalf("%s: runtime call %d: %+v and %+v", what, i, ca[i], cb[i])
		}
	}
}

// TestAdvanceSkipIsExact: a long Advance of a settled node skips most of
// the span (so "advance: 2562047h" takes milliseconds, not an hour and a
// half), and ends exactly where advancing timer by timer ends: the same
// pods, conditions and probe times, events and calls, and the timers in
// the same phase, which the resizes and advances after it show.
func TestAdvanceSkipIsExact(t *testing.T) {
	build := func() *testNode {
		tn := newTestNode(t, smallNode())
		for _, name := range []string{"a", "b", "c"} {
			if _, err := tn.node.AddPod(tn.ctx, cpuPod(name, "1")); err != nil {
				t.Fatal(err)
			}
		}
		if err := tn.node.Advance(tn.ctx, 17*time.Second); err != nil {
			t.Fatal(err)
		}
		mustResize(t, tn, "b", cpuPatch("2500m")) // Deferred: retried every 3 minutes
		mustResize(t, tn, "c", cpuPatch("5"))     // Infeasible: never retried
		mustResize(t, tn, "a", cpuPatch("900m"))  // completes
		return tn
	}
	skipping, stepping := build(), build()
	sameNodes(t, "before", skipping, stepping)

	const long = 10*time.Hour + 41*time.Second
	if err := skipping.node.Advance(skipping.ctx, long); err != nil {
		t.Fatal(err)
	}
	if got := time.Duration(skipping.node.watch.skipped.Load()); got < long-5*core.SkipPeriod {
		t.Fatalf("skipped %v of %v: the settled node was advanced timer by timer", got, long)
	}
	advanceInSteps(t, stepping, long)
	if got := stepping.node.watch.skipped.Load(); got != 0 {
		t.Fatalf("the stepping node skipped %v", time.Duration(got))
	}
	sameNodes(t, "after the long advance", skipping, stepping)

	// The timers are in phase: what happens next happens at the same
	// times on both.
	for _, tn := range []*testNode{skipping, stepping} {
		if err := tn.node.Advance(tn.ctx, 95*time.Second); err != nil {
			t.Fatal(err)
		}
		mustResize(t, tn, "b", cpuPatch("2800m"))
		if err := tn.node.Advance(tn.ctx, 100*time.Second); err != nil {
			t.Fatal(err)
		}
		mustResize(t, tn, "c", cpuPatch("1100m"))
		mustResize(t, tn, "a", cpuPatch("100m"))
		if err := tn.node.Advance(tn.ctx, 4*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	sameNodes(t, "after the steps that follow", skipping, stepping)
}

// TestAdvanceSkipIsExactOnRandomWalks holds skipping to stepping on random
// walks of resizes, deletions, pods added and faults, with long advances
// between them.
func TestAdvanceSkipIsExactOnRandomWalks(t *testing.T) {
	cpus := []string{"100m", "250m", "500m", "1", "1500m", "2", "3", "3500m", "5"}
	for seed := int64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			nodes := []*testNode{newTestNode(t, smallNode()), newTestNode(t, smallNode())}
			for _, tn := range nodes {
				for i := 0; i < 3; i++ {
					if _, err := tn.node.AddPod(tn.ctx, cpuPod(fmt.Sprintf("p%d", i), "500m")); err != nil {
						t.Fatal(err)
					}
				}
			}
			faults := make([]*cri.FaultInjector, len(nodes))
			for i, tn := range nodes {
				// The runtime under the node's recorder fails on demand.
				faults[i] = cri.NewFaultInjector(tn.rt)
				tn.calls = cri.NewRecorder(faults[i])
				tn.deps.Runtime = tn.calls
				tn.restart()
			}
			rng := rand.New(rand.NewSource(seed))
			next := 3
			for step := 0; step < 40; step++ {
				op, name, cpu := rng.Intn(10), fmt.Sprintf("p%d", rng.Intn(next)), cpus[rng.Intn(len(cpus))]
				d := time.Duration(rng.Intn(3))*time.Hour + time.Duration(rng.Intn(1000))*time.Second
				times := 1 + rng.Intn(3)
				for i, tn := range nodes {
					switch {
					case op < 5:
						_, _ = tn.node.Resize(tn.ctx, ResizeOp{Namespace: "default", Name: name, Patch: []byte(cpuPatch(cpu))})
					case op < 6:
						if err := tn.node.DeletePod(tn.ctx, "default", name); err != nil && !errors.Is(err, ErrPodNotFound) {
							t.Fatal(err)
						}
					case op < 7:
						if _, err := tn.node.AddPod(tn.ctx, cpuPod(fmt.Sprintf("p%d", next), cpu)); err != nil {
							t.Fatal(err)
						}
					case op < 8:
						faults[i].Inject(cri.Fault{Method: "UpdateContainerResources", Err: errors.New("injected"), Times: times})
					case i == 0:
						if err := tn.node.Advance(tn.ctx, d); err != nil {
							t.Fatal(err)
						}
					default:
						advanceInSteps(t, tn, d)
					}
				}
				if op == 6 {
					next++
				}
				sameNodes(t, fmt.Sprintf("step %d", step), nodes[0], nodes[1])
			}
			if nodes[0].node.watch.skipped.Load() == 0 {
				t.Fatal("the walk never skipped: it proved nothing")
			}
			t.Logf("skipped %v", time.Duration(nodes[0].node.watch.skipped.Load()))
		})
	}
}

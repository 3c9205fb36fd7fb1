package resize

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/resizelet/resizelet/allocation"
)

// TestRandomResizes drives a small node with random resizes, deletions
// and clock moves (fixed seeds, so a failure repeats) and checks the
// invariants that must hold whenever the node is quiet: admitted pods fit
// the node, a pod without a resize condition shows its allocation, and a
// pod with no pending resize has spec == allocation.
func TestRandomResizes(t *testing.T) {
	for seed := int64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			tn := newTestNode(t, smallNode())
			cpus := []string{"100m", "250m", "500m", "1", "1500m", "2", "3", "3500m", "5"}
			mems := []string{"64Mi", "128Mi", "256Mi", "512Mi"}
			live := map[string]bool{}
			for i := 0; i < 4; i++ {
				name := fmt.Sprintf("p%d", i)
				p := cpuPod(name, "250m")
				if rng.Intn(2) == 0 {
					p.Spec.Containers[0].Resources.Limits = nil // Burstable
				}
				if _, err := tn.node.AddPod(tn.ctx, p); err != nil {
					t.Fatal(err)
				}
				live[name] = true
			}
			for step := 0; step < 80; step++ {
				name := fmt.Sprintf("p%d", rng.Intn(4))
				if !live[name] {
					continue
				}
				switch op := rng.Intn(10); {
				case op < 7:
					cpu, mem := cpus[rng.Intn(len(cpus))], mems[rng.Intn(len(mems))]
					pod := tn.pod(name)
					patch := fmt.Sprintf(`{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":%q,"memory":%q}}}]}}`, cpu, mem)
					if pod.Spec.Containers[0].Resources.Limits != nil {
						patch = fmt.Sprintf(`{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":%q,"memory":%q},"limits":{"cpu":%q,"memory":%q}}}]}}`, cpu, mem, cpu, mem)
					}
					_, _ = tn.node.Resize(tn.ctx, ResizeOp{Namespace: "default", Name: name, Patch: []byte(patch)}) // API rejections are fine
				case op < 8:
					if err := tn.node.DeletePod(tn.ctx, "default", name); err != nil {
						t.Fatalf("step %d: delete %s: %v", step, name, err)
					}
					delete(live, name)
				default:
					if err := tn.node.Advance(tn.ctx, time.Duration(rng.Intn(240))*time.Second); err != nil {
						t.Fatal(err)
					}
				}
				checkInvariants(t, tn, live, step)
			}
			// The walk must have exercised both outcomes, or it proved nothing.
			seen := map[string]int{}
			for _, e := range tn.cluster.Events() {
				seen[e.Reason]++
			}
			if seen[ReasonResizeCompleted] == 0 || seen[ReasonResizeDeferred]+seen[ReasonResizeInfeasible] == 0 {
				t.Fatalf("the walk completed %d resizes and refused %d: too few to check anything", seen[ReasonResizeCompleted], seen[ReasonResizeDeferred]+seen[ReasonResizeInfeasible])
			}
		})
	}
}

func checkInvariants(t *testing.T, tn *testNode, live map[string]bool, step int) {
	t.Helper()
	total := tn.node.AllocatedTotal()
	if total.Cpu().MilliValue() > 4000 {
		t.Fatalf("step %d: allocated cpu %s exceeds the node's 4", step, total.Cpu())
	}
	for name := range live {
		p := tn.pod(name)
		info := tn.info(name)
		alloc := info.Allocated["c"]
		spec := p.Spec.Containers[0].Resources
		pending := pendingOf(t, p) != nil
		if !pending && !allocation.SameResources(&spec, &alloc) {
			t.Fatalf("step %d: %s has no pending resize but spec %v != allocation %v", step, name, spec, alloc)
		}
		if len(p.Status.Conditions) == 0 {
			got := statusOf(t, p, "c").Resources
			if got.Requests.Cpu().Cmp(*alloc.Requests.Cpu()) != 0 || got.Requests.Memory().Cmp(*alloc.Requests.Memory()) != 0 {
				t.Fatalf("step %d: %s is not resizing but status %v != allocation %v", step, name, got.Requests, alloc.Requests)
			}
		}
		if c := p.Status.Conditions; len(c) > 0 {
			for _, cond := range c {
				if cond.Type == v1.PodResizeInProgress && cond.Reason == "" {
					t.Fatalf("step %d: %s quiet with a resize in progress and no error: %+v", step, name, cond)
				}
			}
		}
	}
}

package core

import (
	"fmt"
	"math/rand"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/allocation"
)

// TestIncrementalAccountingMatchesTheWalk drives a core through random
// histories (pods added, resized up and down, deferred, made infeasible,
// deleted, their statuses written by syncs and failed resizes, the
// kubelet restarted, timers fired) and checks every admission decision,
// and after every step every pod's view of the node, against the walk the
// kubelet makes (allocation.UsageOf over the other pods, each overlaid
// with its allocation): the incremental usage must give the same numbers,
// the same outcome and the same Deferred message.
func TestIncrementalAccountingMatchesTheWalk(t *testing.T) {
	outcomes := map[allocation.Outcome]int{}
	defer func() {
		for _, o := range []allocation.Outcome{allocation.Admitted, allocation.Deferred, allocation.Infeasible} {
			if outcomes[o] == 0 {
				t.Errorf("no %s decision in any history: the histories do not exercise the accounting", o)
			}
		}
	}()
	for seed := int64(1); seed <= 20; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			r := rand.New(rand.NewSource(seed))
			node := NodeConfig{Capacity: v1.ResourceList{
				v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("4Gi"), v1.ResourcePods: resource.MustParse("8"),
				"example.com/dongle": resource.MustParse("3"),
			}}
			w := newWorld(t, node)
			decisions := 0
			hook := func(c *Core) {
				c.verify = func(ps *podState, used *allocation.Usage, d allocation.Decision) {
					decisions++
					outcomes[d.Outcome]++
					walk := allocation.UsageOf(c.otherPods(ps.uid), ps.uid, c.s.admit)
					if !walk.Equal(used) {
						t.Fatalf("decision for %s: incremental usage %+v, walk %+v", ps.pod().Name, *used, walk)
					}
					var want allocation.Decision
					if ps.admitted {
						alloc, _ := ps.allocatedPod()
						want = allocation.AdmitResize(ps.pod(), alloc, c.otherPods(ps.uid), c.s.admit, isStaticPod(ps.pod()))
					} else {
						alloc, _ := ps.allocatedPod()
						want = allocation.AdmitPod(alloc, c.otherPods(ps.uid), c.s.admit)
					}
					if want != d {
						t.Fatalf("decision for %s: %+v, the walk decides %+v", ps.pod().Name, d, want)
					}
				}
			}
			hook(w.c)
			check := func(step int) {
				for _, uid := range w.c.order {
					ps := w.c.pods[uid]
					walk := allocation.UsageOf(w.c.otherPods(uid), uid, w.c.s.admit)
					if got := w.c.othersUsage(ps); !walk.Equal(got) {
						t.Fatalf("step %d, pod %s: incremental usage %+v, walk %+v", step, ps.pod().Name, *got, walk)
					}
				}
			}
			req := func() v1.ResourceRequirements {
				cpu := fmt.Sprintf("%dm", 50*(1+r.Intn(40)))
				mem := fmt.Sprintf("%dMi", 64*(1+r.Intn(24)))
				rr := resources(cpu, mem, "", "")
				if r.Intn(3) == 0 {
					rr = resources(cpu, mem, cpu, mem)
				}
				if r.Intn(5) == 0 {
					rr.Requests["example.com/dongle"] = resource.MustParse("1")
					if rr.Limits == nil {
						rr.Limits = v1.ResourceList{}
					}
					rr.Limits["example.com/dongle"] = resource.MustParse("1")
				}
				return rr
			}
			next := 0
			for step := 0; step < 60; step++ {
				var names []string
				for _, uid := range w.c.order {
					names = append(names, w.c.pods[uid].pod().Name)
				}
				switch op := r.Intn(10); {
				case op < 3 || len(names) == 0:
					next++
					w.add(testPod(fmt.Sprintf("p%d", next), req(), req()))
				case op < 7:
					name := names[r.Intn(len(names))]
					p, _ := w.c.APIPod("default", name)
					if !w.c.pods[p.UID].admitted {
						continue
					}
					rr := make([]v1.ResourceRequirements, len(p.Spec.Containers))
					for i := range rr {
						rr[i] = req()
						// Keep the QoS class and the requests' and limits' presence, as the API server would.
						old := p.Spec.Containers[i].Resources
						rr[i].Limits = nil
						if old.Limits != nil {
							rr[i].Limits = rr[i].Requests.DeepCopy()
						}
						if _, ok := old.Requests["example.com/dongle"]; ok {
							rr[i].Requests["example.com/dongle"] = old.Requests["example.com/dongle"]
							rr[i].Limits["example.com/dongle"] = old.Limits["example.com/dongle"]
						} else {
							delete(rr[i].Requests, "example.com/dongle")
							delete(rr[i].Limits, "example.com/dongle")
						}
					}
					if r.Intn(6) == 0 {
						rr[0].Requests[v1.ResourceCPU] = resource.MustParse("5") // more than the node: Infeasible
						if rr[0].Limits != nil {
							rr[0].Limits[v1.ResourceCPU] = resource.MustParse("5")
						}
					}
					w.resize(name, rr...)
				case op == 7:
					name := names[r.Intn(len(names))]
					w.run(DeleteRequested{UID: w.c.podByName("default", name).uid, Now: w.now})
				case op == 8:
					w.now = w.now.Add(BackOffPeriod * 20)
					w.run(Tick{Now: w.now})
				default:
					w.restart()
					hook(w.c)
				}
				check(step)
			}
			if decisions == 0 {
				t.Fatal("no decision was made")
			}
		})
	}
}

// otherPods are the admitted, active pods other than uid, each overlaid
// with its allocation and carrying its status: what admission counts as
// used (getAllocatedPods over the active pods).
func (c *Core) otherPods(uid types.UID) []*v1.Pod {
	out := make([]*v1.Pod, 0, len(c.order))
	for _, id := range c.order {
		ps := c.pods[id]
		if id == uid || !c.counts(ps) {
			continue
		}
		p, _ := ps.allocatedPod()
		out = append(out, p)
	}
	return out
}

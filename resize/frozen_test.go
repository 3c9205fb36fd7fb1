package resize

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/resizelet/resizelet/allocation/state"
)

// TestFrozenPodsChangeNothing drives two nodes through the same random
// sequence of adds, resizes (patch and typed), deletes, clock moves and
// kubelet restarts: one keeps its default number of pods decoded, the
// other freezes every settled pod at once (HotPods -1, in the API server,
// the kubelet and the in-memory checkpoints). After every operation the
// two must agree on everything observable: the outcome, every pod, every
// event, every cgroup file and the kubelet's records.
func TestFrozenPodsChangeNothing(t *testing.T) {
	for seed := int64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			hot, cold := smallNode(), smallNode()
			cold.HotPods = -1
			nodes := []*testNode{newBenchNode(t, hot), newBenchNode(t, cold)}
			for _, tn := range nodes {
				// Checkpoints that survive the restarts below.
				tn.deps.Allocated, tn.deps.Actuated = state.NewMemory(), state.NewMemory()
				tn.restart()
			}
			cpus := []string{"100m", "250m", "500m", "1", "1500m", "2500m"}
			live := map[string]bool{}
			for step := 0; step < 150; step++ {
				name := fmt.Sprintf("p%d", rng.Intn(12))
				cpu := cpus[rng.Intn(len(cpus))]
				op := rng.Intn(10)
				advance := time.Duration(10+rng.Intn(200)) * time.Second
				var what string
				errs := make([]string, len(nodes))
				for i, tn := range nodes {
					var err error
					switch {
					case !live[name]:
						what = "add " + name
						p := cpuPod(name, cpu)
						if seed%2 == 0 {
							p.Spec.Containers[0].Resources.Limits = nil
						}
						_, err = tn.node.AddPod(tn.ctx, p)
					case op < 4:
						what = "resize " + name + " to " + cpu
						_, err = tn.node.Resize(tn.ctx, ResizeOp{Namespace: "default", Name: name, Patch: []byte(cpuPatch(cpu))})
					case op < 6:
						what = "typed resize " + name + " to " + cpu
						q := resource.MustParse(cpu)
						m := q.MilliValue()
						cpuOnly := ResizeRequest{Containers: []ContainerResize{{Name: "c",
							Requests: Amounts{MilliCPU: m, HasCPU: true}, Limits: Amounts{MilliCPU: m, HasCPU: true}}}}
						_, err = tn.node.Resize(tn.ctx, ResizeOp{Namespace: "default", Name: name, Request: cpuOnly})
					case op < 7:
						what = "delete " + name
						err = tn.node.DeletePod(tn.ctx, "default", name)
					case op < 9:
						what = "advance"
						err = tn.node.Advance(tn.ctx, advance)
					default:
						what = "restart"
						tn.restart()
					}
					if err != nil {
						errs[i] = err.Error()
					}
				}
				if !live[name] {
					live[name] = true
				} else if what == "delete "+name {
					delete(live, name)
				}
				if errs[0] != errs[1] {
					t.Fatalf("step %d (%s): errors differ: %q vs %q", step, what, errs[0], errs[1])
				}
				compareNodes(t, fmt.Sprintf("step %d (%s)", step, what), nodes[0], nodes[1])
			}
		})
	}
}

// compareNodes fails the test where a and b differ in what can be seen of
// them.
func compareNodes(t *testing.T, at string, a, b *testNode) {
	t.Helper()
	pa, pb := a.cluster.ListPods(t.Context()), b.cluster.ListPods(t.Context())
	if len(pa) != len(pb) {
		t.Fatalf("%s: %d pods and %d pods", at, len(pa), len(pb))
	}
	for i := range pa {
		ja, _ := json.Marshal(pa[i])
		jb, _ := json.Marshal(pb[i])
		if !bytes.Equal(ja, jb) || !equality.Semantic.DeepEqual(pa[i], pb[i]) {
			t.Fatalf("%s: pod %s differs:\n%s", at, pa[i].Name, cmp.Diff(string(ja), string(jb)))
		}
	}
	eventsOf := func(tn *testNode) []string {
		var out []string
		for _, e := range tn.cluster.Events() {
			out = append(out, fmt.Sprintf("%s %s/%s %s %s %s", e.Time.Format(time.RFC3339Nano), e.Namespace, e.Pod, e.Type, e.Reason, e.Message))
		}
		return out
	}
	if ea, eb := eventsOf(a), eventsOf(b); !slices.Equal(ea, eb) {
		t.Fatalf("%s: events differ:\n%q\n%q", at, ea, eb)
	}
	if !equality.Semantic.DeepEqual(allFiles(a.cg), allFiles(b.cg)) {
		t.Fatalf("%s: cgroup files differ", at)
	}
	for _, p := range pa {
		ia, erra := a.node.Pod(p.Namespace, p.Name)
		ib, errb := b.node.Pod(p.Namespace, p.Name)
		if (erra == nil) != (errb == nil) || !equality.Semantic.DeepEqual(ia, ib) {
			t.Fatalf("%s: kubelet records of %s differ:\n%+v (%v)\n%+v (%v)", at, p.Name, ia, erra, ib, errb)
		}
	}
	if !equality.Semantic.DeepEqual(a.node.AllocatedTotal(), b.node.AllocatedTotal()) {
		t.Fatalf("%s: allocated totals differ", at)
	}
}

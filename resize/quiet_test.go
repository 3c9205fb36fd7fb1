package resize

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cri"
)

// statusCounter is a runtime that counts the container status reads made
// through it. It has no Changes method, so a node on it cannot tell that
// its backends are unchanged and runs every resync.
type statusCounter struct {
	cri.Runtime
	reads atomic.Int64
}

func (r *statusCounter) ContainerStatus(ctx context.Context, id string, verbose bool) (*runtimeapi.ContainerStatusResponse, error) {
	r.reads.Add(1)
	return r.Runtime.ContainerStatus(ctx, id, verbose)
}

// changeTeller is a statusCounter that passes on the change count of the
// simulated runtime under it (the recorder and fault injector between them
// do not), so that the node's quiet pods skip their resyncs.
type changeTeller struct {
	*statusCounter
	sim *cri.SimContainerd
}

func (r changeTeller) Changes() uint64 { return r.sim.Changes() }

// TestQuietResyncsAreFullResyncs holds a node whose quiet pods skip their
// resyncs (its backends count their changes) to a node that runs every
// resync, on random walks of resizes (admitted, deferred, infeasible),
// deletions, pods added, runtime faults, and changes made from outside
// the node (a container exiting, memory usage moving), with advances
// between them timer by timer: the same pods with every resourceVersion,
// condition and time, the same events, allocations and runtime calls. The
// skipping node makes far fewer status reads, which shows it skipped.
func TestQuietResyncsAreFullResyncs(t *testing.T) {
	cpus := []string{"100m", "250m", "500m", "1", "1500m", "2", "3", "3500m", "5"}
	for seed := int64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			nodes := []*testNode{newTestNode(t, smallNode()), newTestNode(t, smallNode())}
			faults := make([]*cri.FaultInjector, len(nodes))
			counters := make([]*statusCounter, len(nodes))
			for i, tn := range nodes {
				for p := 0; p < 3; p++ {
					if _, err := tn.node.AddPod(tn.ctx, cpuPod(fmt.Sprintf("p%d", p), "500m")); err != nil {
						t.Fatal(err)
					}
				}
				faults[i] = cri.NewFaultInjector(tn.rt)
				tn.calls = cri.NewRecorder(faults[i])
				counters[i] = &statusCounter{Runtime: tn.calls}
				tn.deps.Runtime = counters[i]
				if i == 0 {
					tn.deps.Runtime = changeTeller{counters[i], tn.rt}
				}
				tn.restart()
			}
			rng := rand.New(rand.NewSource(seed))
			next := 3
			for step := 0; step < 40; step++ {
				op, name, cpu := rng.Intn(12), fmt.Sprintf("p%d", rng.Intn(next)), cpus[rng.Intn(len(cpus))]
				d := time.Duration(rng.Intn(40))*time.Minute + time.Duration(rng.Intn(60))*time.Second
				times := 1 + rng.Intn(3)
				for i, tn := range nodes {
					switch {
					case op < 4:
						_, _ = tn.node.Resize(tn.ctx, ResizeOp{Namespace: "default", Name: name, Patch: []byte(cpuPatch(cpu))})
					case op < 5:
						if err := tn.node.DeletePod(tn.ctx, "default", name); err != nil && !errors.Is(err, ErrPodNotFound) {
							t.Fatal(err)
						}
					case op < 6:
						if _, err := tn.node.AddPod(tn.ctx, cpuPod(fmt.Sprintf("p%d", next), cpu)); err != nil {
							t.Fatal(err)
						}
					case op < 7:
						faults[i].Inject(cri.Fault{Method: "UpdateContainerResources", Err: errors.New("injected"), Times: times})
					case op < 8:
						if id := runningContainer(t, tn, name); id != "" {
							if err := tn.rt.Exit(id, 137, "Error"); err != nil {
								t.Fatal(err)
							}
						}
					case op < 9:
						if id := runningContainer(t, tn, name); id != "" {
							if err := tn.rt.SetMemoryUsage(id, int64(1+rng.Intn(64))<<20); err != nil {
								t.Fatal(err)
							}
						}
					default:
						advanceInSteps(t, tn, d)
					}
				}
				if op == 5 {
					next++
				}
				sameNodes(t, fmt.Sprintf("step %d", step), nodes[0], nodes[1])
				pa, rva := nodes[0].cluster.ListPodsVersioned()
				pb, rvb := nodes[1].cluster.ListPodsVersioned()
				if rva != rvb || !apiequality.Semantic.DeepEqual(pa, pb) {
					t.Fatalf("step %d: the API server's pods differ (resourceVersion %d and %d)", step, rva, rvb)
				}
			}
			skipping, full := counters[0].reads.Load(), counters[1].reads.Load()
			if skipping*2 > full {
				t.Fatalf("the quiet node read %d container statuses, the full one %d: it did not skip", skipping, full)
			}
			t.Logf("container status reads: %d skipping, %d in full", skipping, full)
		})
	}
}

// runningContainer returns the ID of the pod's first running container,
// "" if it has none.
func runningContainer(t *testing.T, tn *testNode, pod string) string {
	t.Helper()
	list, err := tn.rt.ListContainers(tn.ctx, &runtimeapi.ContainerFilter{State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(list, func(a, b *runtimeapi.Container) int { return strings.Compare(a.Id, b.Id) })
	for _, c := range list {
		if c.Labels["io.kubernetes.pod.name"] == pod {
			return c.Id
		}
	}
	return ""
}

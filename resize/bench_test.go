package resize

import (
	"fmt"
	"runtime"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resizelet/resizelet/resize/core"
)

// The benchmarks run in the anchor world that README's Performance section
// describes (anchorNode, anchorPods), with N settled pods.
var benchPods = []int{10, 110, 1000, 5000}

// The resizes of target/c1 the benchmarks alternate between.
var (
	admittedPatches = [][]byte{
		[]byte(`{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":"300m","memory":"192Mi"},"limits":{"cpu":"600m","memory":"384Mi"}}}]}}`),
		[]byte(`{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":"200m","memory":"128Mi"},"limits":{"cpu":"400m","memory":"256Mi"}}}]}}`),
	}
	// admittedRequests are admittedPatches as typed requests.
	admittedRequests = []ResizeRequest{
		{Containers: []ContainerResize{{Name: "c1", Requests: CPUMemory(300, 192<<20), Limits: CPUMemory(600, 384<<20)}}},
		{Containers: []ContainerResize{{Name: "c1", Requests: CPUMemory(200, 128<<20), Limits: CPUMemory(400, 256<<20)}}},
	}
	// deferredPatches ask for the node's whole cpu but c2's 100m, and 1m
	// less: never admitted beside the other pods, a new generation each
	// time.
	deferredPatches = [][]byte{
		[]byte(`{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":"15999900m","memory":"192Mi"},"limits":{"cpu":"15999900m","memory":"384Mi"}}}]}}`),
		[]byte(`{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":"15999899m","memory":"160Mi"},"limits":{"cpu":"15999899m","memory":"320Mi"}}}]}}`),
	}
)

// benchDecision measures the node-side decision of a resize as README's
// benchmark table defines it: from the updated pod (the API server has
// applied the patch and bumped the generation, untimed) to the allocation
// decision, the condition and the event (reason); what follows (the
// actuation and the status write) settles untimed.
func benchDecision(b *testing.B, patches [][]byte, reason string) {
	for _, n := range benchPods {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			tn := newAnchorNode(b, n)
			node := tn.node
			var results []core.Result
			// The driver's way: one input of each kind, reused.
			resize, done := &core.ResizeRequested{}, &core.BatchDone{}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				pod, err := tn.cluster.ResizePod("default", "target", patches[i%2])
				if err != nil {
					b.Fatal(err)
				}
				own := *pod // as the driver hands it over: the top level the kubelet's
				b.StartTimer()
				*resize = core.ResizeRequested{Pod: &own, Now: tn.clock.Now()}
				rd, err := node.step(resize)
				for err == nil && rd.Batch != nil && !emits(rd.Batch, reason) {
					results = node.performInto(tn.ctx, rd.Batch, results)
					*done = core.BatchDone{ID: rd.Batch.ID, Results: results, Now: tn.clock.Now()}
					rd, err = node.step(done)
				}
				b.StopTimer()
				if err != nil || rd.Batch == nil {
					b.Fatalf("no %s event: %v", reason, err)
				}
				if err := node.drain(tn.ctx, rd); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}

// emits reports whether a batch records an event with the reason.
func emits(batch *core.Batch, reason string) bool {
	for _, a := range batch.Actions {
		if e, ok := a.(core.RecordEvent); ok && e.Event.Reason == reason {
			return true
		}
	}
	return false
}

// BenchmarkResizeDecision is the admitted resize decision.
func BenchmarkResizeDecision(b *testing.B) {
	benchDecision(b, admittedPatches, ReasonResizeStarted)
}

// BenchmarkResizeDecisionDeferred is "resize decision, deferred".
func BenchmarkResizeDecisionDeferred(b *testing.B) {
	benchDecision(b, deferredPatches, ReasonResizeDeferred)
}

// benchCycle measures a whole resize of target/c1 per op, alternating
// between the two sizes, made by resize.
func benchCycle(b *testing.B, resize func(tn *testNode, i int) error) {
	for _, n := range benchPods {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			tn := newAnchorNode(b, n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := resize(tn, i); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkResizeCycle is a whole resize through the JSON patch: the API
// server's resize subresource, the decision, the actuation on the
// in-memory kernel and containerd, and the status write.
func BenchmarkResizeCycle(b *testing.B) {
	benchCycle(b, func(tn *testNode, i int) error {
		return tn.node.Resize(tn.ctx, "default", "target", admittedPatches[i%2])
	})
}

// BenchmarkResizeCycleTyped is BenchmarkResizeCycle through the typed
// request: no JSON on the way.
func BenchmarkResizeCycleTyped(b *testing.B) {
	benchCycle(b, func(tn *testNode, i int) error {
		return tn.node.ResizeRequest(tn.ctx, "default", "target", admittedRequests[i%2])
	})
}

// BenchmarkAddPod admits and starts a new three-container Burstable pod
// beside N settled pods (c1 250m/256Mi limits 500m/512Mi, c2 100m/128Mi
// limits 200m/256Mi, c3 50m/64Mi limits 100m/128Mi); it is deleted again
// untimed, so that N stays constant.
func BenchmarkAddPod(b *testing.B) {
	for _, n := range benchPods {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			tn := newAnchorNode(b, n)
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "new", Namespace: "default"}, Spec: v1.PodSpec{Containers: []v1.Container{
				anchorContainer("c1", 250, 256, 500, 512), anchorContainer("c2", 100, 128, 200, 256), anchorContainer("c3", 50, 64, 100, 128),
			}}}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := tn.node.AddPod(tn.ctx, pod); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if err := tn.node.DeletePod(tn.ctx, "default", "new"); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}

// BenchmarkNodeHeap builds settled 110-pod nodes in the anchor world and
// reports the heap each keeps alive (heap-bytes/node, live heap after a
// GC): everything a simulated node holds, the API server's pods and
// events, the kubelet core, its checkpoints, the simulated kernel and
// runtime and their logs.
//
// Each node's pods are in a namespace of their own, so that nothing the
// node keeps frozen (package allocation/frozen interns equal content) is
// shared with an earlier node: the figure is a node's own. (Nodes of one
// world share their frozen pods, so a fleet of equal nodes takes less.)
// A first node, not counted, fills what the process sets up once for all
// nodes (type tables, pools, the first growth of intern maps), so that
// -benchtime 1x gives the same figure as a long run.
// Each reading follows two collections: the first leaves what a
// sync.Pool kept (package frozen's compressors, which belong to the
// process) to the second, which frees it.
func BenchmarkNodeHeap(b *testing.B) {
	warm := newBenchNode(b, anchorNode())
	if _, err := warm.node.AddPods(warm.ctx, heapPods("heap-warm")); err != nil {
		b.Fatal(err)
	}
	var total uint64
	var before, after runtime.MemStats
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pods := heapPods(fmt.Sprintf("heap-%d", i))
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&before)
		tn := newBenchNode(b, anchorNode())
		if _, err := tn.node.AddPods(tn.ctx, pods); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&after)
		total += after.HeapAlloc - before.HeapAlloc
		runtime.KeepAlive(tn)
		// The pods given were alive before: they must stay alive until
		// after, or their memory would be subtracted from the node's.
		runtime.KeepAlive(pods)
	}
	b.ReportMetric(float64(total)/float64(b.N), "heap-bytes/node")
	runtime.KeepAlive(warm)
}

// heapPods are the anchor world's 110 pods in namespace ns.
func heapPods(ns string) []*v1.Pod {
	pods := anchorPods(110)
	for _, p := range pods {
		p.Namespace = ns
	}
	return pods
}

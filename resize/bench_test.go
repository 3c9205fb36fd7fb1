package resize_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/benchworld"
)

// The benchmarks run in the world of the performance reference (README,
// Performance), which package benchworld builds, with N settled pods for N
// in benchworld.Sizes.

// newWorld is a world of n settled pods, closed when the benchmark ends.
func newWorld(b *testing.B, n int) *benchworld.World {
	b.Helper()
	w, err := benchworld.New(context.Background(), benchworld.Options{Pods: n})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { w.Close() })
	return w
}

// eachSize runs bench in a sub-benchmark per size of the world.
func eachSize(b *testing.B, bench func(b *testing.B, w *benchworld.World)) {
	for _, n := range benchworld.Sizes {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) { bench(b, newWorld(b, n)) })
	}
}

// BenchmarkResizeDecision is "resize decision, admitted": the node's
// handling of a resize of target/c1, from the updated pod to the
// allocation, the condition and the ResizeStarted event.
func BenchmarkResizeDecision(b *testing.B) {
	eachSize(b, func(b *testing.B, w *benchworld.World) {
		w.BenchmarkDecision(b, benchworld.Admitted(), resize.ReasonResizeStarted)
	})
}

// BenchmarkResizeDecisionDeferred is "resize decision, deferred".
func BenchmarkResizeDecisionDeferred(b *testing.B) {
	eachSize(b, func(b *testing.B, w *benchworld.World) {
		w.BenchmarkDecision(b, benchworld.Deferred(), resize.ReasonResizeDeferred)
	})
}

// BenchmarkResizeCycle is a whole resize through the JSON patch: the API
// server's resize subresource, the decision, the actuation on the
// in-memory kernel and containerd, and the status write.
func BenchmarkResizeCycle(b *testing.B) {
	eachSize(b, func(b *testing.B, w *benchworld.World) { w.BenchmarkCycle(b, benchworld.Admitted(), false) })
}

// BenchmarkResizeCycleTyped is BenchmarkResizeCycle through the typed
// request: no JSON on the way.
func BenchmarkResizeCycleTyped(b *testing.B) {
	eachSize(b, func(b *testing.B, w *benchworld.World) { w.BenchmarkCycle(b, benchworld.Admitted(), true) })
}

// BenchmarkAddPod admits and starts benchworld.NewPod beside N settled
// pods; it is deleted again untimed, so that N stays constant.
func BenchmarkAddPod(b *testing.B) {
	eachSize(b, func(b *testing.B, w *benchworld.World) {
		ctx, pod := context.Background(), benchworld.NewPod()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := w.Node.AddPod(ctx, pod); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if err := w.Node.DeletePod(ctx, "default", "new"); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	})
}

// BenchmarkNodeHeap builds settled 110-pod worlds and reports the heap
// each keeps alive (heap-bytes/node, live heap after a GC): everything a
// simulated node holds, the API server's pods and events, the kubelet
// core, its checkpoints, the simulated kernel and runtime and their logs.
//
// Each world's pods are in a namespace of their own, so that nothing the
// node keeps frozen (package allocation/frozen interns equal content) is
// shared with an earlier one: the figure is a node's own. (Nodes of one
// world share their frozen pods, so a fleet of equal nodes takes less.)
// A first world, not counted, fills what the process sets up once for all
// nodes (type tables, pools, the first growth of intern maps), so that
// -benchtime 1x gives the same figure as a long run. Each reading follows
// two collections: the first leaves what a sync.Pool kept (package
// frozen's compressors, which belong to the process) to the second, which
// frees it.
func BenchmarkNodeHeap(b *testing.B) {
	ctx := context.Background()
	warm, err := benchworld.New(ctx, benchworld.Options{Pods: 110, Namespace: "heap-warm"})
	if err != nil {
		b.Fatal(err)
	}
	var total uint64
	var before, after runtime.MemStats
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&before)
		w, err := benchworld.New(ctx, benchworld.Options{Pods: 110, Namespace: fmt.Sprintf("heap-%d", i)})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&after)
		total += after.HeapAlloc - before.HeapAlloc
		runtime.KeepAlive(w)
	}
	b.ReportMetric(float64(total)/float64(b.N), "heap-bytes/node")
	runtime.KeepAlive(warm)
}

package resize_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/benchworld"
)

// newFleet is a benchworld fleet, closed when the benchmark ends.
func newFleet(b *testing.B, nodes, n int, prefix string) *resize.Fleet {
	b.Helper()
	f, err := benchworld.NewFleet(context.Background(), nodes, n, prefix)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return f
}

// BenchmarkFleet measures a fleet of 10 world nodes with 100 settled pods
// each (benchworld.NewFleet):
//
//   - resize: one whole resize per op through Fleet.Resize (strategic
//     merge patch; API server, the decision on the pod's node, the cgroup
//     writes and CRI calls, the status), of target/c1 on node-1, node-2,
//     ... in turn, alternating between the two sizes of
//     BenchmarkResizeCycle;
//   - advance: one minute of virtual time per op through Fleet.Advance:
//     every node fires its pod resyncs and its periodic retry (the pods of
//     a node resync together, every minute), the nodes running at once.
func BenchmarkFleet(b *testing.B) {
	const nodes, pods = 10, 100
	name := fmt.Sprintf("nodes=%d,pods=%d", nodes, pods)
	b.Run(name+"/resize", func(b *testing.B) {
		f := newFleet(b, nodes, pods, "ns")
		ctx := context.Background()
		namespaces := make([]string, nodes)
		for i := range namespaces {
			namespaces[i] = fmt.Sprintf("ns-%d", i+1)
		}
		sizes := benchworld.Admitted()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			// Each node sees its target resized every 10th op, so the
			// patches alternate per node too.
			patch := sizes[(i/nodes)%2].Patch
			if _, err := f.Resize(ctx, resize.ResizeOp{Namespace: namespaces[i%nodes], Name: "target", Patch: patch}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run(name+"/advance", func(b *testing.B) {
		f := newFleet(b, nodes, pods, "ns")
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := f.Advance(ctx, time.Minute); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkFleetHeap builds fleets of 10 settled world nodes with 110
// pods each, the world of BenchmarkNodeHeap, and reports the heap each
// node keeps alive in a fleet (heap-bytes/node: the fleet's live heap
// after a GC, divided by its nodes). Every fleet's pods are in namespaces
// of their own, so that nothing frozen is shared with an earlier fleet.
// Each reading follows two collections, as in BenchmarkNodeHeap.
func BenchmarkFleetHeap(b *testing.B) {
	const nodes, pods = 10, 110
	var total uint64
	var before, after runtime.MemStats
	for i := 0; i < b.N; i++ {
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&before)
		f, err := benchworld.NewFleet(context.Background(), nodes, pods, fmt.Sprintf("heap-%d", i))
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&after)
		total += after.HeapAlloc - before.HeapAlloc
		runtime.KeepAlive(f)
		f.Close()
	}
	b.ReportMetric(float64(total)/float64(b.N*nodes), "heap-bytes/node")
}

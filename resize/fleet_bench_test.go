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

// fleetSizes are the fleets BenchmarkFleetBuild and BenchmarkFleetAdvance
// measure, in nodes of 110 world pods each: a cost per pod that stays flat
// from the first to the last is a fleet that scales in nodes.
var fleetSizes = []int{10, 100, 1000}

// fleetPods is the world pods of each node of those fleets, the reference's
// 110 (BenchmarkNodeHeap's node).
const fleetPods = 110

// BenchmarkFleetBuild builds fleets of N world nodes with 110 settled pods
// each, as benchworld.NewFleet builds them (every node's pods in a
// namespace of their own), and reports the build's cost per pod (ns/pod).
// Each fleet is closed outside the timer.
func BenchmarkFleetBuild(b *testing.B) {
	for _, nodes := range fleetSizes {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				f, err := benchworld.NewFleet(context.Background(), nodes, fleetPods, fmt.Sprintf("build-%d", i))
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				f.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nodes*fleetPods), "ns/pod")
		})
	}
}

// BenchmarkFleetAdvance advances fleets of N world nodes with 110 settled
// pods each by one simulated minute per op, and reports the cost per pod
// and simulated minute (ns/pod-minute):
//
//   - load=idle: nothing happens but the kubelet's own timers (every pod's
//     resync each minute, the pending-resize retry);
//   - load=vpa: before each minute, one resize per node (target/c1 through
//     Fleet.Resize, alternating between BenchmarkResizeCycle's two sizes),
//     as a vertical pod autoscaler keeping every node busy would send.
//
// The fleet is built and its first minute run before the timer starts.
func BenchmarkFleetAdvance(b *testing.B) {
	ctx := context.Background()
	for _, nodes := range fleetSizes {
		for _, load := range []string{"idle", "vpa"} {
			b.Run(fmt.Sprintf("nodes=%d/load=%s", nodes, load), func(b *testing.B) {
				f := newFleet(b, nodes, fleetPods, "advance-"+load)
				if err := f.Advance(ctx, time.Minute); err != nil {
					b.Fatal(err)
				}
				sizes := benchworld.Admitted()
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					for k := 1; load == "vpa" && k <= nodes; k++ {
						op := resize.ResizeOp{Namespace: fmt.Sprintf("advance-%s-%d", load, k), Name: "target", Patch: sizes[i%2].Patch}
						if _, err := f.Resize(ctx, op); err != nil {
							b.Fatal(err)
						}
					}
					if err := f.Advance(ctx, time.Minute); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nodes*fleetPods), "ns/pod-minute")
			})
		}
	}
}

package resize

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"
)

// newAnchorFleet is a fleet of nodes anchor-world nodes (anchorNode, named
// node-1, node-2, ...), each with the n anchor pods (anchorPods) settled
// on it, in a namespace of its own (ns-1, ns-2, ...) so that every node's
// pods have the same names.
func newAnchorFleet(tb testing.TB, nodes, n int) *Fleet {
	tb.Helper()
	return newFleetInNamespaces(tb, nodes, n, "ns")
}

// BenchmarkFleet measures a fleet of 10 anchor-world nodes with 100
// settled pods each:
//
//   - resize: one whole resize per op through Fleet.ResizePod (strategic
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
		f := newAnchorFleet(b, nodes, pods)
		defer f.Close()
		ctx := context.Background()
		namespaces := make([]string, nodes)
		for i := range namespaces {
			namespaces[i] = fmt.Sprintf("ns-%d", i+1)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			// Each node sees its target resized every 10th op, so the
			// patches alternate per node too.
			patch := admittedPatches[(i/nodes)%2]
			if _, err := f.ResizePod(ctx, namespaces[i%nodes], "target", "", patch); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run(name+"/advance", func(b *testing.B) {
		f := newAnchorFleet(b, nodes, pods)
		defer f.Close()
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

// BenchmarkFleetHeap builds fleets of 10 settled anchor-world nodes with
// 110 pods each, the world of BenchmarkNodeHeap, and reports the heap each
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
		f := newFleetInNamespaces(b, nodes, pods, fmt.Sprintf("heap-%d", i))
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&after)
		total += after.HeapAlloc - before.HeapAlloc
		runtime.KeepAlive(f)
	}
	b.ReportMetric(float64(total)/float64(b.N*nodes), "heap-bytes/node")
}

// newFleetInNamespaces is newAnchorFleet with the nodes' namespaces named
// prefix-1, prefix-2, ...
func newFleetInNamespaces(tb testing.TB, nodes, n int, prefix string) *Fleet {
	tb.Helper()
	ctx := context.Background()
	f := NewFleet(FleetOptions{Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	for i := 1; i <= nodes; i++ {
		cfg := anchorNode()
		cfg.Name = fmt.Sprintf("node-%d", i)
		node, err := f.AddNode(ctx, cfg, Deps{})
		if err != nil {
			tb.Fatal(err)
		}
		pods := anchorPods(n)
		for _, p := range pods {
			p.Namespace = fmt.Sprintf("%s-%d", prefix, i)
			p.Spec.NodeName = cfg.Name
		}
		if _, err := node.AddPods(ctx, pods); err != nil {
			tb.Fatal(err)
		}
	}
	return f
}

package resize

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
)

func TestZZHeapProfile(t *testing.T) {
	if os.Getenv("HEAPPROF") == "" {
		t.Skip("HEAPPROF unset")
	}
	runtime.MemProfileRate = 1
	var nodes []*testNode
	for i := 0; i < 4; i++ {
		pods := anchorPods(110)
		for _, p := range pods {
			p.Namespace = fmt.Sprintf("heap-%d", i)
		}
		tn := newBenchNode(t, anchorNode())
		if _, err := tn.node.AddPods(tn.ctx, pods); err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, tn)
	}
	runtime.GC()
	f, _ := os.Create(os.Getenv("HEAPPROF"))
	pprof.WriteHeapProfile(f)
	f.Close()
	runtime.KeepAlive(nodes)
}

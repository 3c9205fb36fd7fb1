package resize

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
)

// BenchmarkResizeCycle measures one in-place CPU resize, from the API
// request to the written status, on a simulated node with a number of
// other pods (admission looks at all of them).
func BenchmarkResizeCycle(b *testing.B) {
	for _, others := range []int{0, 10, 100} {
		b.Run(fmt.Sprintf("others=%d", others), func(b *testing.B) {
			ctx := context.Background()
			cg := cgroup.NewSimKernel(cgroup.V2)
			rt := cri.NewSimContainerd(cg)
			cluster := NewCluster(ClusterOptions{})
			node, err := NewNode(ctx, NodeConfig{}, Deps{Cluster: cluster, Cgroups: cg, Runtime: rt, Clock: NewFakeClock(time.Unix(0, 0))})
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < others; i++ {
				if _, err := node.AddPod(ctx, cpuPod(fmt.Sprintf("other-%d", i), "10m")); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := node.AddPod(ctx, cpuPod("target", "100m")); err != nil {
				b.Fatal(err)
			}
			patches := [][]byte{[]byte(cpuPatch("200m")), []byte(cpuPatch("100m"))}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := node.Resize(ctx, "default", "target", patches[i%2]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

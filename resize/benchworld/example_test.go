package benchworld_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/benchworld"
)

// A loop of one's own times the decision alone: the API server's part
// (UpdatedPod) and what follows the decision (Settle) stay outside the
// span. Here, three decisions on the world of 110 pods, alternating
// between the two admitted sizes.
func Example() {
	ctx := context.Background()
	w, err := benchworld.New(ctx, benchworld.Options{Pods: 110})
	if err != nil {
		panic(err)
	}
	defer w.Close()

	var decided time.Duration
	sizes := benchworld.Admitted()
	for i := range 3 {
		pod, err := w.UpdatedPod(sizes[i%2])
		if err != nil {
			panic(err)
		}
		start := time.Now()
		if err := w.Decide(pod, resize.ReasonResizeStarted); err != nil {
			panic(err)
		}
		decided += time.Since(start)
		if err := w.Settle(ctx); err != nil {
			panic(err)
		}
		p, err := w.Cluster.GetPod(ctx, "default", "target")
		if err != nil {
			panic(err)
		}
		r := p.Status.ContainerStatuses[0].Resources
		fmt.Printf("target/c1 now %s/%s, limits %s/%s\n", r.Requests.Cpu(), r.Requests.Memory(), r.Limits.Cpu(), r.Limits.Memory())
	}
	fmt.Println("decisions timed:", decided > 0)
	// Output:
	// target/c1 now 300m/192Mi, limits 600m/384Mi
	// target/c1 now 200m/128Mi, limits 400m/256Mi
	// target/c1 now 300m/192Mi, limits 600m/384Mi
	// decisions timed: true
}

// An outside benchmark suite's benchmarks: World.BenchmarkDecision and
// World.BenchmarkCycle run a testing.B's loop (here under
// testing.Benchmark; in a _test.go file, in a func BenchmarkX(b
// *testing.B)).
func Example_benchmarks() {
	ctx := context.Background()
	w, err := benchworld.New(ctx, benchworld.Options{Pods: 110})
	if err != nil {
		panic(err)
	}
	defer w.Close()
	decision := testing.Benchmark(func(b *testing.B) {
		w.BenchmarkDecision(b, benchworld.Admitted(), resize.ReasonResizeStarted)
	})
	cycle := testing.Benchmark(func(b *testing.B) {
		w.BenchmarkCycle(b, benchworld.Admitted(), true)
	})
	fmt.Println("decision:", decision, decision.MemString())
	fmt.Println("typed cycle:", cycle, cycle.MemString())
}

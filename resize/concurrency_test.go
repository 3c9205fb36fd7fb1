package resize

import (
	"fmt"
	"sync"
	"testing"
)

// TestConcurrentResizes drives several pods from several goroutines at
// once (run it with -race): every resize must end allocated and actuated,
// whatever the interleaving.
func TestConcurrentResizes(t *testing.T) {
	tn := newTestNode(t, NodeConfig{})
	const pods = 6
	for i := 0; i < pods; i++ {
		if _, err := tn.node.AddPod(tn.ctx, cpuPod(fmt.Sprintf("p%d", i), "100m")); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, pods*10)
	for i := 0; i < pods; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			name := fmt.Sprintf("p%d", i)
			for round := 1; round <= 5; round++ {
				if err := tn.node.Resize(tn.ctx, "default", name, []byte(cpuPatch(fmt.Sprintf("%dm", 100+round*10)))); err != nil {
					errs <- err
					return
				}
				if _, err := tn.node.Pod("default", name); err != nil {
					errs <- err
					return
				}
			}
		}(i)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for k := 0; k < 5; k++ {
			if err := tn.node.Sync(tn.ctx); err != nil {
				errs <- err
				return
			}
			_ = tn.node.AllocatedTotal()
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := tn.node.Sync(tn.ctx); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < pods; i++ {
		p := tn.pod(fmt.Sprintf("p%d", i))
		if got := qty(statusOf(t, p, "c").Resources.Limits, "cpu"); got != "150m" {
			t.Fatalf("%s status cpu limit = %s, want 150m", p.Name, got)
		}
		if len(p.Status.Conditions) != 0 {
			t.Fatalf("%s conditions: %+v", p.Name, p.Status.Conditions)
		}
	}
}

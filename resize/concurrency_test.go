package resize

import (
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/resizelet/resizelet/allocation/state"
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
				if _, err := tn.node.Resize(tn.ctx, ResizeOp{Namespace: "default", Name: name, Patch: []byte(cpuPatch(fmt.Sprintf("%dm", 100+round*10)))}); err != nil {
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

// TestConcurrentStress has 64 goroutines resize, delete, re-add, advance
// and sync pods on one node at once, a few thousand operations in all (run
// it with -race), and checks throughout, from every goroutine, that the
// node never counts more allocated than allocatable and that every pod the
// kubelet has admitted has an allocation for each of its containers; at
// the end, quiet, that the API, the kubelet and the allocated checkpoint
// agree pod for pod. Nothing may panic, and the only errors are the API's
// answers to a resize or a pod that is not there or not valid.
func TestConcurrentStress(t *testing.T) {
	const (
		workers = 64
		opsEach = 48 // 3072 operations
		pods    = 24
	)
	cfg := NodeConfig{Capacity: v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse("8"),
		v1.ResourceMemory: resource.MustParse("16Gi"),
		v1.ResourcePods:   resource.MustParse("110"),
	}}
	tn := newTestNode(t, cfg)
	allocated := state.NewMemory()
	tn.deps.CheckpointDir, tn.deps.Allocated, tn.deps.Actuated = "", allocated, state.NewMemory()
	tn.restart()
	allocatable := tn.node.Config().Allocatable
	name := func(i int) string { return fmt.Sprintf("p%d", i) }
	for i := 0; i < pods; i++ {
		if _, err := tn.node.AddPod(tn.ctx, cpuPod(name(i), "100m")); err != nil {
			t.Fatal(err)
		}
	}

	// expected reports whether err is an answer the API or the node may
	// give to a well-formed call racing with others.
	expected := func(err error) bool {
		return err == nil || errors.Is(err, ErrPodNotFound) || apierrors.IsInvalid(err) ||
			strings.Contains(err.Error(), "already exists") || strings.Contains(err.Error(), "already known")
	}
	// check checks the node's total and the named pods' allocations.
	check := func(names ...string) error {
		total := tn.node.AllocatedTotal()
		for _, r := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
			if got, limit := total[r], allocatable[r]; got.Cmp(limit) > 0 {
				return fmt.Errorf("allocated %s %s is more than allocatable %s", r, got.String(), limit.String())
			}
		}
		for _, p := range names {
			info, err := tn.node.Pod("default", p)
			if err != nil || !info.Admitted {
				continue
			}
			if r, ok := info.Allocated["c"]; !ok || r.Requests.Cpu().IsZero() {
				return fmt.Errorf("admitted pod %s has no allocation for its container: %+v", p, info.Allocated)
			}
		}
		return nil
	}
	all := make([]string, pods)
	for i := range all {
		all[i] = name(i)
	}

	cpus := []string{"50m", "100m", "250m", "500m", "1", "2", "3"}
	var wg sync.WaitGroup
	var failed atomic.Bool
	errs := make(chan error, workers+1)
	var ops atomic.Int64
	// A checker looks at every pod while the workers run; each worker
	// checks the total and its pod after each operation.
	done := make(chan struct{})
	checked := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-done:
				checked <- n
				return
			default:
			}
			if err := check(all...); err != nil && failed.CompareAndSwap(false, true) {
				errs <- fmt.Errorf("checker: %w", err)
			}
			n++
		}
	}()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(w)))
			fail := func(err error) {
				if failed.CompareAndSwap(false, true) {
					errs <- err
				}
			}
			for k := 0; k < opsEach && !failed.Load(); k++ {
				ops.Add(1)
				p := name(rng.Intn(pods))
				var err error
				switch op := rng.Intn(20); {
				case op < 10:
					_, err = tn.node.Resize(tn.ctx, ResizeOp{Namespace: "default", Name: p, Patch: []byte(cpuPatch(cpus[rng.Intn(len(cpus))]))})
				case op < 12:
					err = tn.node.DeletePod(tn.ctx, "default", p)
				case op < 15:
					_, err = tn.node.AddPod(tn.ctx, cpuPod(p, cpus[rng.Intn(3)]))
				case op < 16:
					err = tn.node.Advance(tn.ctx, time.Duration(rng.Intn(90))*time.Second)
				case op < 18:
					err = tn.node.Sync(tn.ctx)
				default:
					_, err = tn.node.Pod("default", p)
				}
				if !expected(err) {
					fail(fmt.Errorf("worker %d op %d on %s: %w", w, k, p, err))
					return
				}
				if err := check(p); err != nil {
					fail(fmt.Errorf("worker %d after op %d: %w", w, k, err))
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(done)
	rounds := <-checked
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := tn.node.Sync(tn.ctx); err != nil {
		t.Fatal(err)
	}
	if err := check(all...); err != nil {
		t.Fatal(err)
	}
	// Quiet now: the API's pods, the kubelet's and the allocated
	// checkpoint are the same pods.
	live := 0
	for _, p := range tn.cluster.ListPods(t.Context()) {
		info, err := tn.node.Pod(p.Namespace, p.Name)
		if err != nil {
			t.Fatalf("the API has %s/%s, the kubelet does not: %v", p.Namespace, p.Name, err)
		}
		if info.UID != p.UID {
			t.Fatalf("%s: the kubelet has UID %s, the API %s", p.Name, info.UID, p.UID)
		}
		if rec, ok := allocated.Get(p.UID); info.Admitted && (!ok || len(rec.ContainerResources) == 0) {
			t.Fatalf("admitted pod %s has no allocated checkpoint record", p.Name)
		}
		live++
	}
	if got := len(allocated.All()); got > live {
		t.Fatalf("the allocated checkpoint holds %d pods, the API %d", got, live)
	}
	t.Logf("%d operations, %d rounds of the checker, %d pods live at the end", ops.Load(), rounds, live)
}

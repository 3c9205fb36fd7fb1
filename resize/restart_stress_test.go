package resize

import (
	"context"
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
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
)

// stressDuration bounds the wall time of the restart stress tests'
// concurrent phase; under -race on a loaded 2-CPU machine that is a few
// thousand operations.
const stressDuration = 3 * time.Second

// racing reports whether err is an answer a well-formed call racing with
// others may get: the pod is gone or not there yet, its name is taken, or
// the API server refused the resize (a pod being deleted).
func racing(err error) bool {
	return err == nil || errors.Is(err, ErrPodNotFound) || apierrors.IsInvalid(err) || apierrors.IsAlreadyExists(err) ||
		strings.Contains(err.Error(), "already exists") || strings.Contains(err.Error(), "already known")
}

// TestFleetRestartWaitsAndGoesOn: a restart stops routing to the old
// kubelet, lets the batch it is performing finish, and starts the new one;
// a call made meanwhile waits and goes to the new kubelet, and the call
// the old one was cut short in goes on there too. Nothing is lost: both
// resizes end actuated.
func TestFleetRestartWaitsAndGoesOn(t *testing.T) {
	ctx := context.Background()
	w := &ioWatch{}
	f := NewFleet(FleetOptions{Start: fleetStart})
	t.Cleanup(func() { f.Close() })
	kernel := cgroup.NewSimKernel(cgroup.V2)
	deps := Deps{Cgroups: kernel, Runtime: &watchRuntime{rt: cri.NewSimContainerd(kernel), w: w}, CheckpointDir: t.TempDir()}
	if _, err := f.AddNode(ctx, namedSmallNode("a"), deps); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"p", "q"} {
		if _, err := f.CreatePod(ctx, podOnNode(p, "500m", "a")); err != nil {
			t.Fatal(err)
		}
	}
	started, release := w.holdUpdates()
	defer release()
	first := make(chan error, 1)
	go func() {
		_, err := f.Resize(ctx, ResizeOp{Namespace: "default", Name: "p", Patch: []byte(cpuPatch("1"))})
		first <- err
	}()
	<-started
	restarted := make(chan error, 1)
	go func() {
		_, err := f.RestartNode(ctx, "a")
		restarted <- err
	}()
	// Once the restart has taken the node out of routing, a resize waits.
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, ok := f.Node("a"); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the restart did not take the node out of routing")
		}
		time.Sleep(time.Millisecond)
	}
	second := make(chan error, 1)
	go func() {
		_, err := f.Resize(ctx, ResizeOp{Namespace: "default", Name: "q", Patch: []byte(cpuPatch("1500m"))})
		second <- err
	}()
	select {
	case err := <-second:
		t.Fatalf("a resize during the restart returned (%v) before the old kubelet's batch finished", err)
	case <-time.After(50 * time.Millisecond):
	}
	release()
	for what, c := range map[string]chan error{"the cut resize": first, "the restart": restarted, "the waiting resize": second} {
		if err := <-c; err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	n, _ := f.Node("a")
	if diffs, err := n.Audit(ctx); err != nil || len(diffs) != 0 {
		t.Fatalf("Audit after the restart: %v %v", diffs, err)
	}
	for pod, want := range map[string]string{"p": "1", "q": "1500m"} {
		info, err := n.Pod("default", pod)
		if err != nil {
			t.Fatal(err)
		}
		if got := allocatedCPULimit(info).String(); got != want {
			t.Errorf("%s: allocated cpu limit %s, want %s", pod, got, want)
		}
	}
}

// TestFleetRestartStress has 64 goroutines create, resize and delete pods
// on a fleet of 4 nodes, advance and sync it, audit its nodes and restart
// their kubelets, all at once, for stressDuration; then the fleet syncs
// and runs 10 minutes of virtual time. Every node's Audit must then find
// nothing (cgroups, runtime, checkpoints and status as the allocation
// says), and nothing may be lost: each pod of the API server is the pod
// its node's kubelet runs, and each has the resize it was last sent
// allocated, or a PodResizePending condition that says why not. Two of
// the nodes keep their checkpoints in files, two in memory.
func TestFleetRestartStress(t *testing.T) {
	const (
		workers = 64
		pods    = 8 // per node
	)
	ctx := context.Background()
	f := NewFleet(FleetOptions{Start: fleetStart})
	t.Cleanup(func() { f.Close() })
	names := []string{"n1", "n2", "n3", "n4"}
	for i, name := range names {
		deps := Deps{}
		if i%2 == 0 {
			deps.CheckpointDir = t.TempDir()
		}
		if _, err := f.AddNode(ctx, namedSmallNode(name), deps); err != nil {
			t.Fatal(err)
		}
	}
	podName := func(node string, i int) string { return fmt.Sprintf("%s-p%d", node, i) }
	for _, node := range names {
		for i := 0; i < pods; i += 2 {
			if _, err := f.CreatePod(ctx, podOnNode(podName(node, i), "100m", node)); err != nil {
				t.Fatal(err)
			}
		}
	}

	cpus := []string{"50m", "100m", "250m", "500m", "1", "2"}
	var ops atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Bool
	errs := make(chan error, workers)
	deadline := time.Now().Add(stressDuration)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(w)))
			for k := 0; time.Now().Before(deadline) && !failed.Load(); k++ {
				node := names[rng.Intn(len(names))]
				p := podName(node, rng.Intn(pods))
				var err error
				op := rng.Intn(100)
				switch {
				case op < 45:
					_, err = f.Resize(ctx, ResizeOp{Namespace: "default", Name: p, Patch: []byte(cpuPatch(cpus[rng.Intn(len(cpus))]))})
				case op < 57:
					_, err = f.CreatePod(ctx, podOnNode(p, cpus[rng.Intn(3)], node))
				case op < 67:
					err = f.DeletePod(ctx, "default", p)
				case op < 72:
					err = f.Advance(ctx, time.Duration(rng.Intn(90))*time.Second)
				case op < 77:
					err = f.Sync(ctx)
				case op < 92:
					if n, ok := f.Node(node); ok {
						_, err = n.Audit(ctx)
						if errors.Is(err, ErrClosed) {
							err = nil // restarted under the audit
						}
					}
				default:
					_, err = f.RestartNode(ctx, node)
				}
				ops.Add(1)
				if !racing(err) && failed.CompareAndSwap(false, true) {
					errs <- fmt.Errorf("worker %d op %d (%d) on %s: %w", w, k, op, p, err)
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := f.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := f.Advance(ctx, 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	checkSettledFleet(t, f, names)
	t.Logf("%d operations on %d pods", ops.Load(), len(f.Cluster().ListPods(ctx)))
}

// checkSettledFleet checks every node of a fleet that has settled
// (checkSettled).
func checkSettledFleet(t *testing.T, f *Fleet, names []string) {
	t.Helper()
	byNode := map[string][]*v1.Pod{}
	for _, p := range f.Cluster().ListPods(t.Context()) {
		byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p)
	}
	for _, name := range names {
		n, ok := f.Node(name)
		if !ok {
			t.Fatalf("node %s has no kubelet", name)
		}
		checkSettled(t, "node "+name, n, byNode[name])
	}
}

// checkSettled checks a node that has settled against pods, the API
// server's pods bound to it: its Audit finds nothing; each pod that has
// not finished (a kubelet that starts does not run finished pods) is the
// one the kubelet runs, and when it runs, it has its spec's resources
// allocated or a PodResizePending condition that says why not (otherwise
// a resize was lost); and the node's allocated checkpoint holds no pod the
// API server does not have (its own records: a file keeps a deleted pod's
// record until the next write, as the kubelet's does).
func checkSettled(t *testing.T, where string, n *Node, pods []*v1.Pod) {
	t.Helper()
	diffs, err := n.Audit(context.Background())
	if err != nil {
		t.Fatalf("%s: Audit: %v", where, err)
	}
	for _, d := range diffs {
		t.Errorf("%s: %s", where, d)
	}
	live := map[types.UID]bool{}
	for _, p := range pods {
		live[p.UID] = true
		if p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		info, err := n.Pod(p.Namespace, p.Name)
		if err != nil || info.UID != p.UID {
			t.Errorf("%s: the API server has %s (%s, phase %s, deleted %v), the kubelet %s: %v", where, p.Name, p.UID, p.Status.Phase, p.DeletionTimestamp, info.UID, err)
			continue
		}
		if !info.Admitted || p.Status.Phase != v1.PodRunning {
			continue
		}
		want, got := p.Spec.Containers[0].Resources.Limits.Cpu(), allocatedCPULimit(info)
		if want.Cmp(*got) != 0 && pendingCondition(p) == nil {
			kp, _ := n.core.APIPod(p.Namespace, p.Name)
			t.Errorf("%s: %s (generation %d) asks for %s, has %s allocated and no PodResizePending condition: a resize was lost (the kubelet has generation %d, limits %v; conditions %+v)",
				where, p.Name, p.Generation, want, got, kp.Generation, kp.Spec.Containers[0].Resources.Limits, p.Status.Conditions)
		}
	}
	for uid := range n.allocated.All() {
		if !live[uid] {
			t.Errorf("%s: allocated_pods_state holds pod %s, which the API server does not have", where, uid)
		}
	}
}

func pendingCondition(p *v1.Pod) *v1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == v1.PodResizePending {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// TestNodeCloseRestartStress: one node on a checkpoint directory, closed
// and started again (NewNode on the same Deps) over and over while 64
// goroutines resize, create, delete, advance, sync and audit through
// whichever kubelet runs; a call the closing kubelet refuses or cuts short
// goes to the next one. Then the node settles, and Audit finds nothing.
func TestNodeCloseRestartStress(t *testing.T) {
	const (
		workers = 64
		pods    = 16
	)
	ctx := context.Background()
	tn := newTestNode(t, smallNode())
	var mu sync.Mutex
	current := func() *Node {
		mu.Lock()
		defer mu.Unlock()
		return tn.node
	}
	name := func(i int) string { return fmt.Sprintf("p%d", i) }
	for i := 0; i < pods; i += 2 {
		if _, err := tn.node.AddPod(ctx, cpuPod(name(i), "100m")); err != nil {
			t.Fatal(err)
		}
	}
	cpus := []string{"50m", "100m", "250m", "500m", "1", "2"}
	var wg sync.WaitGroup
	var failed atomic.Bool
	var ops, restarts atomic.Int64
	errs := make(chan error, workers+1)
	deadline := time.Now().Add(stressDuration)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(w)))
			for k := 0; time.Now().Before(deadline) && !failed.Load(); k++ {
				p := name(rng.Intn(pods))
				op := rng.Intn(100)
				for {
					n := current()
					var err error
					switch {
					case op < 50:
						_, err = n.Resize(ctx, ResizeOp{Namespace: "default", Name: p, Patch: []byte(cpuPatch(cpus[rng.Intn(len(cpus))]))})
					case op < 62:
						_, err = n.AddPod(ctx, cpuPod(p, cpus[rng.Intn(3)]))
					case op < 72:
						err = n.DeletePod(ctx, "default", p)
					case op < 80:
						err = n.Advance(ctx, time.Duration(rng.Intn(90))*time.Second)
					case op < 88:
						err = n.Sync(ctx)
					default:
						_, err = n.Audit(ctx)
					}
					ops.Add(1)
					if errors.Is(err, ErrClosed) && current() != n {
						continue // the kubelet was replaced: go on with the next
					}
					if errors.Is(err, ErrClosed) {
						time.Sleep(time.Millisecond) // the next is starting
						continue
					}
					if !racing(err) && failed.CompareAndSwap(false, true) {
						errs <- fmt.Errorf("worker %d op %d (%d) on %s: %w", w, k, op, p, err)
					}
					break
				}
			}
		}(w)
	}
	// The restarter closes the kubelet and starts the next on the same
	// Deps every few milliseconds.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for time.Now().Before(deadline) && !failed.Load() {
			time.Sleep(20 * time.Millisecond)
			old := current()
			if err := old.Close(); err != nil {
				failed.Store(true)
				errs <- fmt.Errorf("close: %w", err)
				return
			}
			n, err := NewNode(ctx, tn.cfg, tn.deps)
			if err != nil {
				failed.Store(true)
				errs <- fmt.Errorf("restart: %w", err)
				return
			}
			mu.Lock()
			tn.node = n
			mu.Unlock()
			restarts.Add(1)
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	n := current()
	if err := n.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := n.Advance(ctx, 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	checkSettled(t, "node", n, tn.cluster.ListPods(ctx))
	t.Logf("%d operations, %d restarts", ops.Load(), restarts.Load())
}

// allocatedCPULimit is the cpu limit allocated to the pod's container c.
func allocatedCPULimit(info PodInfo) *resource.Quantity {
	q := info.Allocated["c"].Limits[v1.ResourceCPU]
	return &q
}

// TestRestartPicksUpWhatTheAPIServerAccepted: what the API server accepted
// while a node had no kubelet (a resize, a new pod bound to it, a pod
// marked for deletion) is what the kubelet that starts finds and acts on,
// as a restarted kubelet does from its informer's first list.
func TestRestartPicksUpWhatTheAPIServerAccepted(t *testing.T) {
	ctx := context.Background()
	f := newTestFleet(t, FleetOptions{}, "a")
	for _, p := range []string{"resized", "deleted"} {
		if _, err := f.CreatePod(ctx, podOnNode(p, "500m", "a")); err != nil {
			t.Fatal(err)
		}
	}
	old, _ := f.Node("a")
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	// The API server alone, while the node's kubelet is down.
	cluster := f.Cluster()
	if _, err := cluster.ResizePodPatch(ctx, "default", "resized", "", []byte(cpuPatch("1"))); err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.CreatePod(ctx, podOnNode("created", "250m", "a")); err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.MarkPodDeleted(ctx, "default", "deleted", "", f.Now()); err != nil {
		t.Fatal(err)
	}
	n, err := f.RestartNode(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if info, err := n.Pod("default", "resized"); err != nil || allocatedCPULimit(info).String() != "1" {
		t.Errorf("resized: %+v %v, want 1 CPU allocated", info.Allocated, err)
	}
	if p, err := cluster.GetPod(ctx, "default", "created"); err != nil || p.Status.Phase != v1.PodRunning {
		t.Errorf("created: %v, want it running", err)
	}
	if _, err := cluster.GetPod(ctx, "default", "deleted"); !errors.Is(err, ErrPodNotFound) {
		t.Errorf("deleted: %v, want it torn down and gone", err)
	}
	if diffs, err := n.Audit(ctx); err != nil || len(diffs) != 0 {
		t.Errorf("Audit: %v %v", diffs, err)
	}
}

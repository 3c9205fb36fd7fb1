package benchworld_test

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/benchworld"
)

// TestPodsAreTheReferenceWorld checks the world against the container
// counts of the world the kubelet was measured in: 23 / 232 / 1963 / 9878
// for 10 / 110 / 1000 / 5000 pods, and its first pods.
func TestPodsAreTheReferenceWorld(t *testing.T) {
	want := map[int]int{10: 23, 110: 232, 1000: 1963, 5000: 9878}
	for _, n := range benchworld.Sizes {
		got := 0
		pods := benchworld.Pods(n)
		for _, p := range pods {
			got += len(p.Spec.Containers)
		}
		if len(pods) != n || got != want[n] {
			t.Errorf("%d pods: %d pods with %d containers, want %d", n, len(pods), got, want[n])
		}
	}
	pods := benchworld.Pods(2)
	if pods[0].Name != "target" || pods[1].Name != "pod-0000" {
		t.Errorf("pods %s, %s; want target, pod-0000", pods[0].Name, pods[1].Name)
	}
	c1 := pods[0].Spec.Containers[0].Resources
	if c1.Requests.Cpu().String() != "200m" || c1.Limits.Memory().String() != "256Mi" {
		t.Errorf("target/c1 %v", c1)
	}
	if got := benchworld.Pods(0); got != nil {
		t.Errorf("Pods(0) = %v, want none", got)
	}
}

// TestResizesAreTheReference: the resizes are the reference's patches, and
// each typed request gives its patch.
func TestResizesAreTheReference(t *testing.T) {
	want := []string{
		`{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":"300m","memory":"192Mi"},"limits":{"cpu":"600m","memory":"384Mi"}}}]}}`,
		`{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":"200m","memory":"128Mi"},"limits":{"cpu":"400m","memory":"256Mi"}}}]}}`,
		`{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":"15999900m","memory":"192Mi"},"limits":{"cpu":"15999900m","memory":"384Mi"}}}]}}`,
		`{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":"15999899m","memory":"160Mi"},"limits":{"cpu":"15999899m","memory":"320Mi"}}}]}}`,
	}
	a, d := benchworld.Admitted(), benchworld.Deferred()
	for i, r := range []benchworld.Resize{a[0], a[1], d[0], d[1]} {
		if string(r.Patch) != want[i] || string(r.Request.Patch()) != want[i] {
			t.Errorf("resize %d: patch %s, request's patch %s; want %s", i, r.Patch, r.Request.Patch(), want[i])
		}
	}
}

// TestDecideAndSettle: a decision of each kind ends with its event and
// settles to the new size (admitted) or a pending resize (deferred).
func TestDecideAndSettle(t *testing.T) {
	ctx := context.Background()
	w, err := benchworld.New(ctx, benchworld.Options{Pods: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, tc := range []struct {
		r      benchworld.Resize
		reason string
	}{
		{benchworld.Admitted()[0], resize.ReasonResizeStarted},
		{benchworld.Deferred()[0], resize.ReasonResizeDeferred},
		{benchworld.Admitted()[1], resize.ReasonResizeStarted},
	} {
		pod, err := w.UpdatedPod(tc.r)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Decide(pod, tc.reason); err != nil {
			t.Fatal(err)
		}
		if err := w.Settle(ctx); err != nil {
			t.Fatal(err)
		}
		events := w.Cluster.Events()
		found := false
		for _, e := range events {
			found = found || (e.Pod == "target" && e.Reason == tc.reason)
		}
		if !found {
			t.Errorf("no %s event for target", tc.reason)
		}
	}
	p, err := w.Cluster.GetPod(ctx, "default", "target")
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Status.ContainerStatuses[0].Resources.Limits.Cpu().String(); got != "400m" {
		t.Errorf("target/c1's cpu limit %s after resizing back, want 400m", got)
	}
	if err := w.Decide(nil, resize.ReasonResizeStarted); err == nil {
		t.Error("Decide of no pod gave no error")
	}
	var zero benchworld.World
	if err := zero.Decide(nil, ""); err == nil {
		t.Error("Decide on a World New did not build gave no error")
	}
}

// TestAddPodsIsAddPodInTurn: a world built with AddPods (New) ends where
// AddPod on each pod in turn ends: the same pods with the same statuses,
// allocations and actuations, the same cgroup files, and each pod's events
// in the same order.
func TestAddPodsIsAddPodInTurn(t *testing.T) {
	ctx := context.Background()
	batch, err := benchworld.New(ctx, benchworld.Options{Pods: 40})
	if err != nil {
		t.Fatal(err)
	}
	defer batch.Close()
	one, err := benchworld.New(ctx, benchworld.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	pods := benchworld.Pods(40)
	for _, p := range pods {
		if _, err := one.Node.AddPod(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	eventsOf := func(w *benchworld.World) map[string][]string {
		out := map[string][]string{}
		for _, e := range w.Cluster.Events() {
			out[e.Pod] = append(out[e.Pod], e.Type+" "+e.Reason+" "+e.Message)
		}
		return out
	}
	if !equality.Semantic.DeepEqual(eventsOf(batch), eventsOf(one)) {
		t.Error("the pods' events differ")
	}
	for _, p := range pods {
		a, errA := batch.Cluster.GetPod(ctx, "default", p.Name)
		b, errB := one.Cluster.GetPod(ctx, "default", p.Name)
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		if !equality.Semantic.DeepEqual(a.Status, b.Status) || !equality.Semantic.DeepEqual(a.Spec, b.Spec) {
			t.Fatalf("pod %s differs:\n%+v\n%+v", p.Name, a.Status, b.Status)
		}
		ia, errA := batch.Node.Pod("default", p.Name)
		ib, errB := one.Node.Pod("default", p.Name)
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		if !equality.Semantic.DeepEqual(ia.Allocated, ib.Allocated) || !equality.Semantic.DeepEqual(ia.Actuated, ib.Actuated) || ia.PodCgroup != ib.PodCgroup {
			t.Fatalf("pod %s: kubelet records differ", p.Name)
		}
	}
	if !equality.Semantic.DeepEqual(files(batch.Kernel), files(one.Kernel)) {
		t.Error("the cgroup files differ")
	}
}

// files is every cgroup's files, by path.
func files(k *cgroup.SimKernel) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, p := range k.Paths() {
		out[p] = k.Files(p)
	}
	return out
}

// TestNewFleet: every node of a fleet has the world's pods in a namespace
// of its own.
func TestNewFleet(t *testing.T) {
	f, err := benchworld.NewFleet(context.Background(), 3, 5, "ns")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, ns := range []string{"ns-1", "ns-2", "ns-3"} {
		if _, err := f.Cluster().GetPod(t.Context(), ns, "target"); err != nil {
			t.Errorf("%s/target: %v", ns, err)
		}
	}
}

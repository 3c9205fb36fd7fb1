package kubeapi

import (
	"context"
	"errors"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cri/crilabels"
	"github.com/resizelet/resizelet/resize"
)

// guaranteed is a pod as the API server stores it (see pod) with one
// container of cpu and memory requests equal to limits, resizable in
// place.
func guaranteed(name string, uid types.UID, cpu string) *v1.Pod {
	p := pod("default", name, testNode, uid, time.Now())
	rl := v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse("128Mi")}
	p.Spec.Containers[0].Resources = v1.ResourceRequirements{Requests: rl, Limits: rl.DeepCopy()}
	p.Spec.Containers[0].ResizePolicy = []v1.ContainerResizePolicy{{ResourceName: v1.ResourceCPU, RestartPolicy: v1.NotRequired}}
	return p
}

// running reports whether the pod's status shows it running: phase
// Running and a running container.
func running(p *v1.Pod) bool {
	return p.Status.Phase == v1.PodRunning && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Running != nil
}

// startRun runs a on node until the test ends or the returned stop is
// called; stop waits for Run to return and fails the test if it does not,
// or returns an error.
func startRun(t *testing.T, a *API, node *resize.Node, opts RunOptions) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, node, opts) }()
	stopped := false
	stop = func() {
		t.Helper()
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run returned %v, want nil once its context ended", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("Run did not return after its context ended")
		}
	}
	t.Cleanup(stop)
	return stop
}

// TestRun drives a simulated node on the fake API server as a kubelet
// runs: it registers its Node and keeps a Lease; a pod created bound to it
// is admitted, started and gets its status; a resize (the spec and a new
// generation, as the resize subresource stores them) is actuated and
// reported; a pod marked for deletion (kubectl delete) is torn down and
// deleted with grace period 0, and one deleted at once by somebody else
// is torn down; Run returns once its context ends.
func TestRun(t *testing.T) {
	c := fake.NewClientset()
	a := newAPI(t, c, testNode)
	node, b := newNode(t, a, resize.NodeConfig{})
	stop := startRun(t, a, node, RunOptions{TickEvery: 10 * time.Millisecond, Heartbeat: Heartbeat{RenewEvery: 10 * time.Millisecond}})
	ctx := t.Context()
	pods := c.CoreV1().Pods("default")
	get := func(name string) *v1.Pod {
		t.Helper()
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get %s: %v", name, err)
		}
		return p
	}
	containersOf := func(uid types.UID) int {
		t.Helper()
		ctrs, err := b.Runtime().ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: map[string]string{crilabels.PodUID: string(uid)}})
		if err != nil {
			t.Fatal(err)
		}
		return len(ctrs)
	}

	eventually(t, "the Node and its Lease", func() bool {
		_, nerr := c.CoreV1().Nodes().Get(ctx, testNode, metav1.GetOptions{})
		_, lerr := c.CoordinationV1().Leases(NodeLeaseNamespace).Get(ctx, testNode, metav1.GetOptions{})
		return nerr == nil && lerr == nil
	})

	for _, p := range []*v1.Pod{guaranteed("web", "uid-web", "500m"), guaranteed("batch", "uid-batch", "250m")} {
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "both pods running", func() bool { return running(get("web")) && running(get("batch")) })
	if n := containersOf("uid-web"); n != 1 {
		t.Errorf("the runtime has %d containers of web, want 1", n)
	}

	// The resize subresource stores the new spec and bumps the
	// generation; the fake's patch does not bump it, so the test stores
	// what the API server would.
	resized := get("web")
	resized.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("700m")
	resized.Spec.Containers[0].Resources.Limits[v1.ResourceCPU] = resource.MustParse("700m")
	resized.Generation++
	if _, err := pods.Update(ctx, resized, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the resize reported in web's status", func() bool {
		p := get("web")
		r := p.Status.ContainerStatuses[0].Resources
		return r != nil && r.Limits.Cpu().String() == "700m" && !hasCondition(p, v1.PodResizeInProgress) && !hasCondition(p, v1.PodResizePending)
	})
	eventually(t, "a ResizeCompleted event", func() bool {
		for _, e := range eventsOf(t, c, "default") {
			if e.Reason == "ResizeCompleted" && e.InvolvedObject.UID == "uid-web" {
				return true
			}
		}
		return false
	})

	// kubectl delete: the API server marks the pod; the kubelet tears it
	// down and deletes it.
	marked := get("web")
	marked.DeletionTimestamp = new(metav1.NewTime(time.Now().Add(30 * time.Second)))
	marked.DeletionGracePeriodSeconds = new(int64(30))
	if _, err := pods.Update(ctx, marked, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "web deleted", func() bool {
		_, err := pods.Get(ctx, "web", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	var final *k8stesting.DeleteActionImpl
	for _, act := range actions(c, "delete", "pods", "") {
		if d := act.(k8stesting.DeleteActionImpl); d.GetName() == "web" {
			final = &d
		}
	}
	if final == nil {
		t.Fatal("web is gone with no delete of it recorded")
	}
	if opts := final.GetDeleteOptions(); opts.GracePeriodSeconds == nil || *opts.GracePeriodSeconds != 0 || opts.Preconditions == nil || *opts.Preconditions.UID != "uid-web" {
		t.Errorf("web deleted with %+v, want grace period 0 and its UID as a precondition", opts)
	}
	if n := containersOf("uid-web"); n != 0 {
		t.Errorf("the runtime still has %d containers of web", n)
	}

	// Deleted at once by somebody else: the watch's Deleted event tears
	// it down.
	if err := pods.Delete(ctx, "batch", metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "batch torn down", func() bool {
		_, err := node.Pod("default", "batch")
		return errors.Is(err, resize.ErrPodNotFound)
	})
	if n := containersOf("uid-batch"); n != 0 {
		t.Errorf("the runtime still has %d containers of batch", n)
	}

	stop()
}

// hasCondition reports whether p's status has a condition of type ct.
func hasCondition(p *v1.Pod, ct v1.PodConditionType) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == ct {
			return true
		}
	}
	return false
}

// TestRunIgnoresOtherNodesPods: a pod bound to another node that reaches
// the node anyway (the fake's watch ignores the field selector) is not
// admitted. With one worker the queue hands pods over in order, so once
// the node's own pod, created after it, runs, the other has been handed
// over.
func TestRunIgnoresOtherNodesPods(t *testing.T) {
	c := fake.NewClientset()
	a := newAPI(t, c, testNode)
	node, _ := newNode(t, a, resize.NodeConfig{})
	startRun(t, a, node, RunOptions{Workers: 1, TickEvery: 10 * time.Millisecond})
	ctx := t.Context()
	other := guaranteed("elsewhere", "uid-elsewhere", "500m")
	other.Spec.NodeName = "m"
	for _, p := range []*v1.Pod{other, guaranteed("mine", "uid-mine", "500m")} {
		if _, err := c.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "mine running", func() bool {
		p, err := c.CoreV1().Pods("default").Get(ctx, "mine", metav1.GetOptions{})
		return err == nil && running(p)
	})
	if _, err := node.Pod("default", "elsewhere"); !errors.Is(err, resize.ErrPodNotFound) {
		t.Errorf("the node took another node's pod: %v", err)
	}
	p, err := c.CoreV1().Pods("default").Get(ctx, "elsewhere", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Status.Phase != "" || len(p.Status.ContainerStatuses) != 0 {
		t.Errorf("another node's pod got a status: %+v", p.Status)
	}
}

// TestRunArguments: Run refuses a node made on another API, and an API
// New did not make.
func TestRunArguments(t *testing.T) {
	c := fake.NewClientset()
	a := newAPI(t, c, testNode)
	other := newAPI(t, fake.NewClientset(), testNode)
	node, _ := newNode(t, other, resize.NodeConfig{})
	if err := a.Run(t.Context(), node, RunOptions{}); err == nil {
		t.Error("Run accepted a node made on another API")
	}
	if err := new(API).Run(t.Context(), node, RunOptions{}); !errors.Is(err, errNotMade) {
		t.Errorf("Run on a zero API: %v, want errNotMade", err)
	}
	if n := len(actions(c, "create", "nodes", "")); n != 0 {
		t.Errorf("a refused Run registered %d nodes", n)
	}
}

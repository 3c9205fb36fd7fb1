package resize

import (
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cri/crilabels"
)

// The tests here change the cluster behind the node's back, as others do
// on a real API server (the scheduler binds a pod, kubectl resizes or
// deletes one), and then hand the node what the API server has, as its
// pod informer would.

// createBound stores demoPod, bound to node, directly in the cluster: the
// node is not told. It returns the stored pod.
func (tn *testNode) createBound(node string) *v1.Pod {
	tn.t.Helper()
	p := demoPod()
	p.Spec.NodeName = node
	if _, err := tn.cluster.CreatePod(tn.ctx, p); err != nil {
		tn.t.Fatalf("create pod: %v", err)
	}
	return tn.pod(p.Name)
}

// handle hands the node the cluster's pod of that name.
func (tn *testNode) handle(name string) {
	tn.t.Helper()
	if err := tn.node.HandlePod(tn.ctx, tn.pod(name)); err != nil {
		tn.t.Fatalf("HandlePod %s: %v", name, err)
	}
}

// containersOf returns the runtime's containers of the pod of that UID,
// whatever their state.
func (tn *testNode) containersOf(uid types.UID) []*runtimeapi.Container {
	tn.t.Helper()
	ctrs, err := tn.rt.ListContainers(tn.ctx, &runtimeapi.ContainerFilter{LabelSelector: map[string]string{crilabels.PodUID: string(uid)}})
	if err != nil {
		tn.t.Fatalf("list containers: %v", err)
	}
	return ctrs
}

// knows reports whether the node has the pod of that name.
func (tn *testNode) knows(name string) bool {
	tn.t.Helper()
	_, err := tn.node.Pod("default", name)
	if err != nil && !errors.Is(err, ErrPodNotFound) {
		tn.t.Fatalf("Pod %s: %v", name, err)
	}
	return err == nil
}

const cpu800m = `{"spec":{"containers":[{"name":"pause","resources":{"requests":{"cpu":"800m"},"limits":{"cpu":"800m"}}}]}}`

// TestHandlePodAdmitsABoundPod: a pod created in the cluster and bound to
// the node is admitted and started once the node is handed it, and its
// status is written to the cluster.
func TestHandlePodAdmitsABoundPod(t *testing.T) {
	tn := newTestNode(t, NodeConfig{})
	p := tn.createBound(tn.cfg.Name)
	if tn.knows(p.Name) {
		t.Fatal("the node has the pod before it was handed it")
	}
	tn.handle(p.Name)
	if info := tn.info(p.Name); info.UID != p.UID || info.ContainerIDs["pause"] == "" {
		t.Fatalf("the node's pod = %+v; want UID %s with a pause container", info, p.UID)
	}
	got := tn.pod(p.Name)
	if got.Status.Phase != v1.PodRunning || statusOf(t, got, "pause").State.Running == nil {
		t.Errorf("status after HandlePod: phase %s, container statuses %+v; want Running", got.Status.Phase, got.Status.ContainerStatuses)
	}
	if n := len(tn.containersOf(p.UID)); n != 1 {
		t.Errorf("the runtime has %d containers of the pod, want 1", n)
	}
}

// TestHandlePodActuatesAResizeMadeInTheCluster: a resize applied to the
// cluster's pod directly is not actuated until the node is handed the
// resized pod; then it is, as a resize the node made itself: cgroup,
// container status resources and the ResizeCompleted event.
func TestHandlePodActuatesAResizeMadeInTheCluster(t *testing.T) {
	tn := newTestNode(t, NodeConfig{})
	p := tn.createBound(tn.cfg.Name)
	tn.handle(p.Name)
	podCgroup := tn.info(p.Name).PodCgroup
	if _, err := tn.cluster.ResizePod(tn.ctx, "default", p.Name, []byte(cpu800m)); err != nil {
		t.Fatal(err)
	}
	if got := tn.file(podCgroup, "cpu.max"); got != "70000 100000" {
		t.Fatalf("cpu.max = %q before the node was handed the resize, want the old 70000 100000", got)
	}
	mark := len(tn.cluster.Events())
	tn.handle(p.Name)
	if got := tn.file(podCgroup, "cpu.max"); got != "80000 100000" {
		t.Errorf("cpu.max = %q, want 80000 100000", got)
	}
	cs := statusOf(t, tn.pod(p.Name), "pause")
	if qty(cs.Resources.Limits, v1.ResourceCPU) != "800m" || qty(cs.Resources.Requests, v1.ResourceCPU) != "800m" {
		t.Errorf("container status resources = %v, want cpu 800m", cs.Resources)
	}
	if got := tn.events(mark); !containsInOrder(got, "Normal ResizeStarted", "Normal ResizeCompleted") {
		t.Errorf("events:\n%s\nwant ResizeStarted then ResizeCompleted", strings.Join(got, "\n"))
	}
}

// TestHandlePodIgnoresAnOlderGeneration: the pod of an earlier generation
// delivered after the resized one (a late watch event) changes nothing: no
// cgroup write, runtime call or event, and the resize stays actuated.
func TestHandlePodIgnoresAnOlderGeneration(t *testing.T) {
	tn := newTestNode(t, NodeConfig{})
	p := tn.createBound(tn.cfg.Name)
	tn.handle(p.Name)
	old := tn.pod(p.Name)
	if _, err := tn.cluster.ResizePod(tn.ctx, "default", p.Name, []byte(cpu800m)); err != nil {
		t.Fatal(err)
	}
	tn.handle(p.Name)
	if g := tn.pod(p.Name).Generation; g <= old.Generation {
		t.Fatalf("generation %d after the resize, want more than %d", g, old.Generation)
	}
	writes, calls, events := len(tn.cg.Writes()), len(tn.calls.Calls()), len(tn.cluster.Events())
	if err := tn.node.HandlePod(tn.ctx, old); err != nil {
		t.Fatal(err)
	}
	if n := len(tn.cg.Writes()) - writes; n != 0 {
		t.Errorf("%d cgroup writes for an older generation", n)
	}
	if n := len(tn.calls.Calls()) - calls; n != 0 {
		t.Errorf("%d runtime calls for an older generation", n)
	}
	if got := tn.events(events); len(got) != 0 {
		t.Errorf("events for an older generation:\n%s", strings.Join(got, "\n"))
	}
	if got := tn.file(tn.info(p.Name).PodCgroup, "cpu.max"); got != "80000 100000" {
		t.Errorf("cpu.max = %q, want the resize's 80000 100000 kept", got)
	}
	if a := tn.info(p.Name).Allocated["pause"]; a.Limits.Cpu().String() != "800m" {
		t.Errorf("allocated cpu limit %s, want 800m kept", a.Limits.Cpu())
	}
}

// TestHandlePodIgnoresAnotherNodesPod: a pod bound to another node is not
// the node's: it is neither admitted nor started, and its status is left
// to that node.
func TestHandlePodIgnoresAnotherNodesPod(t *testing.T) {
	tn := newTestNode(t, NodeConfig{})
	p := tn.createBound("some-other-node")
	tn.handle(p.Name)
	if tn.knows(p.Name) {
		t.Error("the node took a pod bound to another node")
	}
	if n := len(tn.containersOf(p.UID)); n != 0 {
		t.Errorf("the runtime has %d containers of another node's pod", n)
	}
	if got := tn.pod(p.Name); got.Status.Phase != v1.PodPending || len(got.Status.ContainerStatuses) != 0 {
		t.Errorf("another node's pod got a status: phase %s, %d container statuses", got.Status.Phase, len(got.Status.ContainerStatuses))
	}
}

// TestHandlePodTearsDownAPodMarkedForDeletion: a pod the node runs that
// is marked for deletion in the cluster (kubectl delete, graceful) is torn
// down once the node is handed it, and then deleted from the cluster; one
// the node never ran is deleted at once.
func TestHandlePodTearsDownAPodMarkedForDeletion(t *testing.T) {
	tn := newTestNode(t, NodeConfig{})
	p := tn.createBound(tn.cfg.Name)
	tn.handle(p.Name)
	podCgroup := tn.info(p.Name).PodCgroup
	if _, err := tn.cluster.MarkPodDeleted(tn.ctx, "default", p.Name, "", tn.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if n := len(tn.containersOf(p.UID)); n != 1 {
		t.Fatalf("the runtime has %d containers of the pod before the node was handed the mark, want 1", n)
	}
	tn.handle(p.Name)
	if _, err := tn.cluster.GetPod(tn.ctx, "default", p.Name); !errors.Is(err, ErrPodNotFound) {
		t.Errorf("the cluster still has the pod after its teardown: %v", err)
	}
	if tn.knows(p.Name) {
		t.Error("the node still has the pod")
	}
	if n := len(tn.containersOf(p.UID)); n != 0 {
		t.Errorf("the runtime still has %d containers of the pod", n)
	}
	if tn.cg.Exists(podCgroup) {
		t.Errorf("the pod cgroup %s is still there", podCgroup)
	}

	// A pod marked before the node was ever handed it: nothing of it runs
	// here, so it is deleted without being started.
	q := demoPod()
	q.Name, q.Spec.NodeName = "never-ran", tn.cfg.Name
	if _, err := tn.cluster.CreatePod(tn.ctx, q); err != nil {
		t.Fatal(err)
	}
	marked, err := tn.cluster.MarkPodDeleted(tn.ctx, "default", q.Name, "", tn.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	starts := len(tn.startCalls())
	if err := tn.node.HandlePod(tn.ctx, marked.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	if _, err := tn.cluster.GetPod(tn.ctx, "default", q.Name); !errors.Is(err, ErrPodNotFound) {
		t.Errorf("the cluster still has the marked pod the node never ran: %v", err)
	}
	if n := len(tn.startCalls()) - starts; n != 0 || tn.knows(q.Name) {
		t.Errorf("the node took a pod marked for deletion (%d containers started)", n)
	}
}

// TestHandlePodRemoved: a pod deleted from the cluster at once (grace
// period 0, by somebody else) is torn down once the node is told of its
// removal; a removal of another UID under the name (a pod created anew
// and deleted again) leaves the node's pod running.
func TestHandlePodRemoved(t *testing.T) {
	tn := newTestNode(t, NodeConfig{})
	p := tn.createBound(tn.cfg.Name)
	tn.handle(p.Name)
	if err := tn.cluster.DeletePod(tn.ctx, "default", p.Name); err != nil {
		t.Fatal(err)
	}
	calls := len(tn.calls.Calls())
	if err := tn.node.HandlePodRemoved(tn.ctx, "default", p.Name, "not-"+p.UID); err != nil {
		t.Fatal(err)
	}
	if n := len(tn.calls.Calls()) - calls; n != 0 || !tn.knows(p.Name) {
		t.Fatalf("a removal of another UID: %d runtime calls, node has the pod: %v; want nothing changed", n, tn.knows(p.Name))
	}
	if n := len(tn.containersOf(p.UID)); n != 1 {
		t.Fatalf("the runtime has %d containers of the pod after a removal of another UID, want 1", n)
	}
	if err := tn.node.HandlePodRemoved(tn.ctx, "default", p.Name, p.UID); err != nil {
		t.Fatal(err)
	}
	if tn.knows(p.Name) {
		t.Error("the node still has the removed pod")
	}
	if n := len(tn.containersOf(p.UID)); n != 0 {
		t.Errorf("the runtime still has %d containers of the removed pod", n)
	}
}

// TestHandlePodArguments: a closed node refuses both calls with an error
// matching ErrClosed; a nil pod is an ErrInvalidArgument.
func TestHandlePodArguments(t *testing.T) {
	tn := newTestNode(t, NodeConfig{})
	if err := tn.node.HandlePod(tn.ctx, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("HandlePod(nil) = %v, want an error matching ErrInvalidArgument", err)
	}
	p := tn.createBound(tn.cfg.Name)
	tn.node.Close()
	if err := tn.node.HandlePod(tn.ctx, p); !errors.Is(err, ErrClosed) {
		t.Errorf("HandlePod on a closed node = %v, want an error matching ErrClosed", err)
	}
	if err := tn.node.HandlePodRemoved(tn.ctx, "default", p.Name, p.UID); !errors.Is(err, ErrClosed) {
		t.Errorf("HandlePodRemoved on a closed node = %v, want an error matching ErrClosed", err)
	}
	if n := len(tn.containersOf(p.UID)); n != 0 {
		t.Errorf("a closed node started %d containers", n)
	}
}

// TestHandlePodLateDeletionOfAnEarlierPod: the deletion mark of a pod
// the node never ran, delivered late, after that pod was deleted and its
// name taken by a new pod, deletes nothing: the mark is the earlier pod's
// (its UID), as the kubelet deletes a pod only with its UID as a
// precondition.
func TestHandlePodLateDeletionOfAnEarlierPod(t *testing.T) {
	tn := newTestNode(t, NodeConfig{})
	p := tn.createBound(tn.cfg.Name)
	marked, err := tn.cluster.MarkPodDeleted(tn.ctx, "default", p.Name, "", tn.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	late := marked.DeepCopy()
	if err := tn.cluster.DeletePod(tn.ctx, "default", p.Name); err != nil {
		t.Fatal(err)
	}
	again := tn.createBound(tn.cfg.Name)
	if again.UID == p.UID {
		t.Fatalf("the new pod has the earlier one's UID %s", p.UID)
	}
	if err := tn.node.HandlePod(tn.ctx, late); err != nil {
		t.Fatal(err)
	}
	if got, err := tn.cluster.GetPod(tn.ctx, "default", p.Name); err != nil || got.UID != again.UID {
		t.Fatalf("after the earlier pod's late deletion mark: %v, %v; want the new pod %s still there", got, err, again.UID)
	}
	tn.handle(p.Name)
	if info := tn.info(p.Name); info.UID != again.UID {
		t.Errorf("the node runs %s, want the new pod %s", info.UID, again.UID)
	}
}

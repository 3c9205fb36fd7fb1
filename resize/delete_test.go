package resize

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/cri"
)

// TestFailedTeardownIsRetried: a pod whose teardown fails stays in the API
// server with its deletionTimestamp (Terminating) and the bumped
// generation; its stopped container is not started again, and the node
// tries the teardown again after the pod worker's backoff until the pod is
// gone.
func TestFailedTeardownIsRetried(t *testing.T) {
	tn, faults := newFaultyNode(t, NodeConfig{})
	if _, err := tn.node.AddPod(tn.ctx, demoPod()); err != nil {
		t.Fatal(err)
	}
	generation := tn.pod("resize-demo").Generation
	faults.Inject(cri.Fault{Method: "RemovePodSandbox", PodName: "resize-demo", Err: errors.New("sandbox is busy"), Times: 2})
	if err := tn.node.DeletePod(tn.ctx, "default", "resize-demo"); err == nil {
		t.Fatal("DeletePod succeeded although the sandbox could not be removed")
	}
	p := tn.pod("resize-demo")
	if p.DeletionTimestamp == nil || p.DeletionGracePeriodSeconds == nil || *p.DeletionGracePeriodSeconds != 30 {
		t.Fatalf("deletion marks = %v, %v; want a timestamp and a 30 s grace period", p.DeletionTimestamp, p.DeletionGracePeriodSeconds)
	}
	if p.Generation != generation+1 {
		t.Errorf("generation = %d, want %d (graceful deletion bumps it)", p.Generation, generation+1)
	}
	started := len(tn.startCalls())
	// The first retry fails too; the second, 10 s later, succeeds.
	for i := 0; i < 3; i++ {
		if err := tn.node.Advance(tn.ctx, BackOffPeriod); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tn.cluster.GetPod(t.Context(), "default", "resize-demo"); !errors.Is(err, ErrPodNotFound) {
		t.Fatalf("the pod is still there after the retries: %v", err)
	}
	if n := len(tn.startCalls()); n != started {
		t.Errorf("%d containers started while the pod was being deleted", n-started)
	}
	if tn.node.core.Knows("default", "resize-demo") {
		t.Error("the kubelet still knows the pod")
	}
}

// TestRestartFinishesADeletion: a kubelet that stops in the middle of a
// teardown leaves the pod marked in the API server; the next kubelet finds
// the mark and finishes the teardown.
func TestRestartFinishesADeletion(t *testing.T) {
	tn, faults := newFaultyNode(t, NodeConfig{})
	if _, err := tn.node.AddPod(tn.ctx, demoPod()); err != nil {
		t.Fatal(err)
	}
	podCgroup := tn.info("resize-demo").PodCgroup
	faults.Inject(cri.Fault{Method: "StopContainer", PodName: "resize-demo", Err: errors.New("kubelet killed"), Times: 1})
	_ = tn.node.DeletePod(tn.ctx, "default", "resize-demo")
	if p := tn.pod("resize-demo"); p.DeletionTimestamp == nil {
		t.Fatal("the pod is not marked for deletion")
	}
	tn.restart()
	if _, err := tn.cluster.GetPod(t.Context(), "default", "resize-demo"); !errors.Is(err, ErrPodNotFound) {
		t.Fatalf("the restarted kubelet did not finish the deletion: %v", err)
	}
	if tn.cg.Exists(podCgroup) {
		t.Errorf("the pod cgroup %s is still there", podCgroup)
	}
}

// startCalls are the StartContainer calls the runtime recorded.
func (tn *testNode) startCalls() []cri.Call {
	var out []cri.Call
	for _, c := range tn.calls.Calls() {
		if c.Method == "StartContainer" {
			out = append(out, c)
		}
	}
	return out
}

// TestSandboxUpdateUnimplementedIsBestEffort: from 1.36 a runtime's
// refusal of UpdatePodSandboxResources rejects a resize, but a runtime
// that does not implement the call (gRPC Unimplemented, as containerd
// before 2.2 answers; or Unknown "not implemented", as 2.2 does) lets it
// go on (pkg/kubelet/kuberuntime/kuberuntime_container.go,
// updatePodSandboxResources).
func TestSandboxUpdateUnimplementedIsBestEffort(t *testing.T) {
	for name, err := range map[string]error{
		"unimplemented":      &cri.RemoteError{Method: "UpdatePodSandboxResources", Code: codes.Unimplemented, Message: "unknown method UpdatePodSandboxResources for service runtime.v1.RuntimeService"},
		"unknown, not impl.": &cri.RemoteError{Method: "UpdatePodSandboxResources", Code: codes.Unknown, Message: "not implemented yet"},
	} {
		t.Run(name, func(t *testing.T) {
			tn, faults := newFaultyNode(t, NodeConfig{Profile: Profile136})
			if _, err := tn.node.AddPod(tn.ctx, demoPod()); err != nil {
				t.Fatal(err)
			}
			faults.Inject(cri.Fault{Method: "UpdatePodSandboxResources", PodName: "resize-demo", Err: err, Times: 100})
			mustResize(t, tn, "resize-demo", `{"spec":{"containers":[{"name":"pause","resources":{"requests":{"cpu":"800m"},"limits":{"cpu":"800m"}}}]}}`)
			p := tn.pod("resize-demo")
			if len(p.Status.Conditions) != 0 {
				t.Fatalf("conditions: %+v", p.Status.Conditions)
			}
			if got := tn.file(tn.info("resize-demo").PodCgroup, "cpu.max"); got != "80000 100000" {
				t.Errorf("pod cpu.max = %q, want 80000 100000", got)
			}
		})
	}
	// Any other error still rejects the resize.
	tn, faults := newFaultyNode(t, NodeConfig{Profile: Profile136})
	if _, err := tn.node.AddPod(tn.ctx, demoPod()); err != nil {
		t.Fatal(err)
	}
	faults.Inject(cri.Fault{Method: "UpdatePodSandboxResources", PodName: "resize-demo", Err: errors.New("sandbox busy"), Times: 1})
	mustResize(t, tn, "resize-demo", `{"spec":{"containers":[{"name":"pause","resources":{"requests":{"cpu":"800m"},"limits":{"cpu":"800m"}}}]}}`)
	if c := tn.pod("resize-demo").Status.Conditions; len(c) != 1 || c[0].Reason != "Error" {
		t.Errorf("a refusal did not reject the resize: %+v", c)
	}
}

// recreatingAPI is a Cluster on which, the first time a pod is marked for
// deletion, another caller has just deleted that pod and created one anew
// under its name: the interleaving of a DeletePod and an AddPod of the
// same name racing with a DeletePod, forced.
type recreatingAPI struct {
	*Cluster
	recreated *v1.Pod
}

func (a *recreatingAPI) MarkPodDeleted(ctx context.Context, namespace, name string, uid types.UID, now time.Time) (*v1.Pod, error) {
	if a.recreated == nil {
		if err := a.Cluster.DeletePod(ctx, namespace, name); err != nil {
			return nil, err
		}
		p, err := a.Cluster.CreatePod(ctx, cpuPod(name, "100m"))
		if err != nil {
			return nil, err
		}
		a.recreated = p
	}
	return a.Cluster.MarkPodDeleted(ctx, namespace, name, uid, now)
}

// TestDeleteLeavesAPodCreatedAnewUnderTheName: a pod created anew under
// the name of the pod a DeletePod tears down, between the kubelet's
// lookup and its mark, is neither marked for deletion nor deleted: the
// mark and the deletion carry the torn-down pod's UID (the kubelet's
// status manager deletes with Preconditions.UID).
func TestDeleteLeavesAPodCreatedAnewUnderTheName(t *testing.T) {
	tn := newTestNode(t, NodeConfig{})
	api := &recreatingAPI{Cluster: tn.cluster}
	tn.deps.Cluster = api
	tn.restart()
	old, err := tn.node.AddPod(tn.ctx, cpuPod("p", "100m"))
	if err != nil {
		t.Fatal(err)
	}
	if err := tn.node.DeletePod(tn.ctx, "default", "p"); err != nil {
		t.Fatal(err)
	}
	if api.recreated == nil || api.recreated.UID == old.UID {
		t.Fatalf("the pod was not created anew: %v", api.recreated)
	}
	p := tn.pod("p")
	if p.UID != api.recreated.UID || p.DeletionTimestamp != nil {
		t.Errorf("the API's pod p is %s marked %v; want the new pod %s, unmarked", p.UID, p.DeletionTimestamp, api.recreated.UID)
	}
	if _, err := tn.node.Pod("default", "p"); !errors.Is(err, ErrPodNotFound) {
		t.Errorf("the kubelet still has p: %v", err)
	}
}

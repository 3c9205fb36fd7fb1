package kubeapi

import (
	"errors"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/resizelet/resizelet/resize"
)

// TestStatusPatch pins statusPatch to the bytes the kubelet's
// preparePatchBytesForPodStatus (pkg/util/pod/pod.go) sends: the two-way
// strategic merge patch from v1.Pod{Status: old} to v1.Pod{UID, Status:
// new}, so that the UID is always in it as a precondition, and unchanged
// exactly when the patch is the UID alone. The expected patches follow
// from the pod status's patch strategies: conditions merge by type (with
// $setElementOrder and $patch: delete), containerStatuses has none and is
// replaced whole, a cleared scalar is null.
func TestStatusPatch(t *testing.T) {
	const uid = types.UID("6f1c0d1e-uid")
	scheduled := v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionTrue}
	ready := v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue}
	pending := v1.PodCondition{Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: "Infeasible"}
	running := func(cpu string) []v1.ContainerStatus {
		return []v1.ContainerStatus{{
			Name: "c", Ready: true, Image: "pause", ImageID: "sha256:1",
			Resources: &v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}},
		}}
	}
	for _, tc := range []struct {
		name     string
		old, new v1.PodStatus
		want     string
	}{{
		name: "unchanged",
		old:  v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{scheduled, ready}, ContainerStatuses: running("700m")},
		new:  v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{scheduled, ready}, ContainerStatuses: running("700m")},
		want: `{"metadata":{"uid":"6f1c0d1e-uid"}}`,
	}, {
		name: "phase",
		old:  v1.PodStatus{Phase: v1.PodPending},
		new:  v1.PodStatus{Phase: v1.PodRunning},
		want: `{"metadata":{"uid":"6f1c0d1e-uid"},"status":{"phase":"Running"}}`,
	}, {
		name: "condition added",
		old:  v1.PodStatus{Conditions: []v1.PodCondition{scheduled}},
		new:  v1.PodStatus{Conditions: []v1.PodCondition{scheduled, ready}},
		want: `{"metadata":{"uid":"6f1c0d1e-uid"},"status":{"$setElementOrder/conditions":[{"type":"PodScheduled"},{"type":"Ready"}],` +
			`"conditions":[{"lastProbeTime":null,"lastTransitionTime":null,"status":"True","type":"Ready"}]}}`,
	}, {
		name: "condition removed",
		old:  v1.PodStatus{Conditions: []v1.PodCondition{scheduled, pending}},
		new:  v1.PodStatus{Conditions: []v1.PodCondition{scheduled}},
		want: `{"metadata":{"uid":"6f1c0d1e-uid"},"status":{"$setElementOrder/conditions":[{"type":"PodScheduled"}],` +
			`"conditions":[{"$patch":"delete","type":"PodResizePending"}]}}`,
	}, {
		name: "container status resources",
		old:  v1.PodStatus{ContainerStatuses: running("700m")},
		new:  v1.PodStatus{ContainerStatuses: running("800m")},
		// The whole list, each status as a map (keys sorted).
		want: `{"metadata":{"uid":"6f1c0d1e-uid"},"status":{"containerStatuses":[{"image":"pause","imageID":"sha256:1","lastState":{},` +
			`"name":"c","ready":true,"resources":{"limits":{"cpu":"800m"}},"restartCount":0,"state":{}}]}}`,
	}, {
		name: "message cleared",
		old:  v1.PodStatus{Phase: v1.PodRunning, Message: "was pending"},
		new:  v1.PodStatus{Phase: v1.PodRunning},
		want: `{"metadata":{"uid":"6f1c0d1e-uid"},"status":{"message":null}}`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			patch, unchanged, err := statusPatch(uid, tc.old, tc.new)
			if err != nil {
				t.Fatal(err)
			}
			if string(patch) != tc.want {
				t.Errorf("patch\n%s\nwant\n%s", patch, tc.want)
			}
			if want := tc.name == "unchanged"; unchanged != want {
				t.Errorf("unchanged = %v, want %v", unchanged, want)
			}
		})
	}
}

// TestMergeStatus: the stored conditions the kubelet does not own
// (DisruptionTarget, which the kubelet shares only when a pod turns
// terminal, and a custom readiness gate's) are kept, in front, while the
// kubelet-owned ones are the new status's, so a kubelet-owned condition
// the new status drops is dropped; the resource claim statuses are the
// stored ones whatever the new status says, as mergePodStatus keeps them.
func TestMergeStatus(t *testing.T) {
	at := metav1.Unix(1700000000, 0)
	disruption := v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: "EvictionByEvictionAPI"}
	gate := v1.PodCondition{Type: "example.com/feature-ready", Status: v1.ConditionTrue}
	claim := "gpu-claim"
	stored := v1.PodStatus{
		Phase: v1.PodRunning,
		Conditions: []v1.PodCondition{
			{Type: v1.PodScheduled, Status: v1.ConditionTrue},
			disruption,
			{Type: v1.PodReady, Status: v1.ConditionFalse},
			gate,
			{Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: "Deferred"},
		},
		ResourceClaimStatuses:       []v1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: &claim}},
		ExtendedResourceClaimStatus: &v1.PodExtendedResourceClaimStatus{ResourceClaimName: "extended"},
	}
	kubelet := v1.PodStatus{
		Phase: v1.PodRunning,
		Conditions: []v1.PodCondition{
			{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: at},
			{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: at},
			{Type: v1.PodResizeInProgress, Status: v1.ConditionTrue, LastTransitionTime: at},
			// Not the kubelet's to write on a running pod: dropped.
			{Type: v1.DisruptionTarget, Status: v1.ConditionFalse},
			{Type: "example.com/feature-ready", Status: v1.ConditionFalse},
		},
	}
	got := mergeStatus(stored, kubelet)
	want := []v1.PodCondition{disruption, gate, kubelet.Conditions[0], kubelet.Conditions[1], kubelet.Conditions[2]}
	if g, w := fmt.Sprint(got.Conditions), fmt.Sprint(want); g != w {
		t.Errorf("conditions\n%s\nwant\n%s", g, w)
	}
	if len(got.ResourceClaimStatuses) != 1 || got.ResourceClaimStatuses[0].Name != "gpu" {
		t.Errorf("resource claim statuses = %v, want the stored ones", got.ResourceClaimStatuses)
	}
	if got.ExtendedResourceClaimStatus != stored.ExtendedResourceClaimStatus {
		t.Errorf("extended resource claim status = %v, want the stored one", got.ExtendedResourceClaimStatus)
	}
	if len(stored.Conditions) != 5 || stored.Conditions[0].LastTransitionTime != (metav1.Time{}) {
		t.Errorf("mergeStatus changed the stored status's conditions: %v", stored.Conditions)
	}
}

// statusFixture is a fake API server holding one pod bound to testNode,
// with a condition the kubelet does not own.
func statusFixture(t *testing.T) (*fake.Clientset, *API, *v1.Pod) {
	t.Helper()
	p := pod("default", "p", testNode, "uid-1", metav1.Now().Time)
	p.Status = v1.PodStatus{
		Phase:      v1.PodPending,
		Conditions: []v1.PodCondition{{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: "PreemptionByScheduler"}},
	}
	c := fake.NewClientset(p)
	return c, newAPI(t, c, testNode), p
}

// TestUpdatePodStatus: the status write of the kubelet's status manager.
// A pod of another UID is left alone with an error; a status the stored
// pod has already (once merged: the condition the kubelet does not own is
// not lost by leaving it out) sends nothing; a change is one strategic
// merge patch of pods/status carrying the UID, which keeps the stored
// condition.
func TestUpdatePodStatus(t *testing.T) {
	c, a, p := statusFixture(t)
	ctx := t.Context()

	c.ClearActions()
	err := a.UpdatePodStatus(ctx, "default", "p", "uid-0", v1.PodStatus{Phase: v1.PodRunning})
	if err == nil || !errors.Is(err, errOtherUID) {
		t.Errorf("a status for another UID: %v, want an error", err)
	}
	if n := len(actions(c, "patch", "pods", "*")); n != 0 {
		t.Errorf("a status for another UID sent %d patches", n)
	}

	c.ClearActions()
	if err := a.UpdatePodStatus(ctx, "default", "p", p.UID, v1.PodStatus{Phase: v1.PodPending}); err != nil {
		t.Fatal(err)
	}
	if n := len(actions(c, "patch", "pods", "*")); n != 0 {
		t.Errorf("an unchanged status sent %d patches", n)
	}
	if n := len(actions(c, "get", "pods", "")); n != 0 {
		t.Errorf("%d GETs of the pod, want 0: a status equal to the informer's is not synced (needsReconcile)", n)
	}

	c.ClearActions()
	if err := a.UpdatePodStatus(ctx, "default", "p", p.UID, v1.PodStatus{Phase: v1.PodRunning}); err != nil {
		t.Fatal(err)
	}
	patches := actions(c, "patch", "pods", "*")
	if len(patches) != 1 {
		t.Fatalf("%d patches for a changed status, want 1", len(patches))
	}
	pa := patches[0].(k8stesting.PatchActionImpl)
	if pa.GetSubresource() != "status" || pa.GetPatchType() != types.StrategicMergePatchType {
		t.Errorf("patch of subresource %q, type %s; want status, %s", pa.GetSubresource(), pa.GetPatchType(), types.StrategicMergePatchType)
	}
	if want := `{"metadata":{"uid":"uid-1"},"status":{"phase":"Running"}}`; string(pa.GetPatch()) != want {
		t.Errorf("patch %s, want %s", pa.GetPatch(), want)
	}
	got, err := c.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != v1.PodRunning || len(got.Status.Conditions) != 1 || got.Status.Conditions[0].Type != v1.DisruptionTarget {
		t.Errorf("stored status %+v, want phase Running with the DisruptionTarget condition kept", got.Status)
	}
}

// TestUpdatePodStatusErrors: a pod gone is ErrPodNotFound, and a refused
// patch (409) ErrConflict, with the API server's StatusError under both,
// so that the node's retry logic sees what happened.
func TestUpdatePodStatusErrors(t *testing.T) {
	c, a, p := statusFixture(t)
	ctx := t.Context()
	err := a.UpdatePodStatus(ctx, "default", "gone", p.UID, v1.PodStatus{Phase: v1.PodRunning})
	if !errors.Is(err, resize.ErrPodNotFound) || !apierrors.IsNotFound(err) {
		t.Errorf("status of a missing pod: %v, want ErrPodNotFound and a 404", err)
	}
	c.PrependReactor("patch", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(v1.Resource("pods"), "p", errors.New("the object has been modified"))
	})
	err = a.UpdatePodStatus(ctx, "default", "p", p.UID, v1.PodStatus{Phase: v1.PodRunning})
	if !errors.Is(err, resize.ErrConflict) || !apierrors.IsConflict(err) {
		t.Errorf("a refused status patch: %v, want ErrConflict and a 409", err)
	}
}

package kubeapi

import (
	"context"
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// UpdatePodStatus writes the pod's status as the kubelet's status manager
// does (status_manager.go syncPod): it reads the pod from the API server,
// leaves it alone if its UID is not uid (the pod was deleted and created
// anew), merges the status with the conditions the kubelet does not own
// (mergePodStatus), and sends the difference as a strategic merge patch of
// the status subresource that carries the UID as a precondition
// (PatchPodStatus). A status equal to the stored one sends nothing, and a
// status equal to the one last written that the informer's pod shows
// sends not even the GET (sameAsWritten).
func (a *API) UpdatePodStatus(ctx context.Context, namespace, name string, uid types.UID, status v1.PodStatus) error {
	if err := a.ready(ctx); err != nil {
		return err
	}
	if a.sameAsWritten(namespace, name, uid, status) {
		return nil
	}
	pods := a.client.CoreV1().Pods(namespace)
	pod, err := pods.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return wrap(err)
	}
	if pod.UID != uid {
		return fmt.Errorf("update status of pod %s/%s: the API server's pod has UID %s, not %s: %w", namespace, name, pod.UID, uid, errOtherUID)
	}
	merged := mergeStatus(pod.Status, status)
	patch, unchanged, err := statusPatch(uid, pod.Status, merged)
	if err != nil {
		return fmt.Errorf("update status of pod %s/%s: %w", namespace, name, err)
	}
	if unchanged {
		a.wroteStatus(uid, status)
		return nil
	}
	if _, err := pods.Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		return fmt.Errorf("failed to patch status %q for pod %q/%q: %w", patch, namespace, name, wrap(err))
	}
	a.wroteStatus(uid, status)
	return nil
}

// sameAsWritten reports whether the status is the one last written for
// the pod (or found stored) and the informer's pod, of that UID, shows it.
// The kubelet's status manager sends nothing then: it ignores a status
// equal to the one it last set (SetPodStatus, "Ignoring same status for
// pod"), and writes one again only when the pod manager's pod, which the
// informer feeds, does not show it (syncBatch, needsReconcile). The node
// hands every status of every sync to UpdatePodStatus, the resync of an
// unchanged pod included; without this each would cost a GET (once a
// minute for every pod), which the kubelet does not send.
func (a *API) sameAsWritten(namespace, name string, uid types.UID, status v1.PodStatus) bool {
	a.statusMu.Lock()
	last, ok := a.written[uid]
	a.statusMu.Unlock()
	if !ok || !apiequality.Semantic.DeepEqual(last, status) {
		return false
	}
	cached := a.cached(namespace, name)
	if cached == nil || cached.UID != uid {
		return false
	}
	_, unchanged, err := statusPatch(uid, cached.Status, mergeStatus(cached.Status, status))
	return err == nil && unchanged
}

// wroteStatus records the status last written for the pod of that UID.
// Statuses are never changed in place once written (resize.API's
// contract), so it is kept as it is.
func (a *API) wroteStatus(uid types.UID, status v1.PodStatus) {
	a.statusMu.Lock()
	defer a.statusMu.Unlock()
	if a.written == nil {
		a.written = map[types.UID]v1.PodStatus{}
	}
	a.written[uid] = status
}

// forgetStatus drops the status last written for a pod that is gone.
func (a *API) forgetStatus(uid types.UID) {
	a.statusMu.Lock()
	defer a.statusMu.Unlock()
	delete(a.written, uid)
}

// errOtherUID is matched by UpdatePodStatus's error for a pod created anew
// under the name.
var errOtherUID = fmt.Errorf("the pod was deleted and created again")

// kubeletConditions are the pod condition types the kubelet owns
// (pkg/kubelet/types PodConditionsByKubelet, with the gated
// PodReadyToStartContainers, on by default): its status replaces them;
// every other condition the API server has is kept.
var kubeletConditions = map[v1.PodConditionType]bool{
	v1.PodScheduled: true, v1.PodReady: true, v1.PodInitialized: true, v1.ContainersReady: true,
	v1.PodResizeInProgress: true, v1.PodResizePending: true, v1.PodReadyToStartContainers: true,
}

// mergeStatus is the kubelet's mergePodStatus for a pod that is not
// moving to a terminal phase: the stored conditions the kubelet does not
// own come first, then the kubelet's own; resource claim statuses are the
// stored ones, which the kubelet never writes.
func mergeStatus(stored, kubelet v1.PodStatus) v1.PodStatus {
	conds := make([]v1.PodCondition, 0, len(stored.Conditions)+len(kubelet.Conditions))
	for _, c := range stored.Conditions {
		if !kubeletConditions[c.Type] {
			conds = append(conds, c)
		}
	}
	for _, c := range kubelet.Conditions {
		if kubeletConditions[c.Type] {
			conds = append(conds, c)
		}
	}
	kubelet.Conditions = conds
	kubelet.ResourceClaimStatuses = stored.ResourceClaimStatuses
	kubelet.ExtendedResourceClaimStatus = stored.ExtendedResourceClaimStatus
	return kubelet
}

// statusPatch is the status manager's patch (preparePatchBytesForPodStatus):
// the two-way strategic merge patch from the stored status to the new one,
// with the UID put only in the new object so that it appears in the patch
// as a precondition. unchanged reports a patch of the UID alone.
func statusPatch(uid types.UID, stored, status v1.PodStatus) (patch []byte, unchanged bool, err error) {
	oldData, err := json.Marshal(v1.Pod{Status: stored})
	if err != nil {
		return nil, false, err
	}
	newData, err := json.Marshal(v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid}, Status: status})
	if err != nil {
		return nil, false, err
	}
	patch, err = strategicpatch.CreateTwoWayMergePatch(oldData, newData, v1.Pod{})
	if err != nil {
		return nil, false, err
	}
	return patch, string(patch) == fmt.Sprintf(`{"metadata":{"uid":%q}}`, uid), nil
}

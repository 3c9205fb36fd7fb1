package resize

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/resize/core"
)

// HandlePod hands the node a pod as the API server has it now, as the
// kubelet's pod source (its watch of the pods bound to it) delivers an
// addition or an update. It is how a node learns of what others did
// through a real API server (a pod created and bound by the scheduler, a
// resize sent by kubectl, a deletion); a caller that goes through the node
// instead (AddPod, Resize, DeletePod) need not call it. What the pod is to
// the node decides what happens, and the node runs until quiet:
//
//   - a pod bound to another node (or, with Deps.BoundPodsOnly, to none)
//     is not the node's, and nothing happens;
//   - a pod marked for deletion (metadata.deletionTimestamp) is torn down
//     and then deleted from the API server, as DeletePod does and as the
//     kubelet's status manager deletes it once nothing of it runs; one the
//     node never ran is deleted at once;
//   - a pod the node does not know, neither finished nor torn down
//     before, is admitted and started, as HandlePodAdditions does (a pod
//     the kubelet rejects gets phase Failed, which is not an error);
//   - a pod the node knows, of a newer metadata.generation than it has,
//     is a resize: it joins the pending-resize queue and every pending
//     resize is retried (HandlePodUpdates);
//   - anything else (the node's own status writes coming back, an older
//     generation arriving late) changes nothing.
//
// The node keeps the top level of pod as its own (it never changes it);
// the caller must not change pod afterwards.
func (n *Node) HandlePod(ctx context.Context, pod *v1.Pod) error {
	if err := n.enter(ctx, "handle pod"); err != nil {
		return err
	}
	defer n.exit()
	if pod == nil {
		return &argumentError{op: "handle pod", msg: "nil pod"}
	}
	if !n.owns(pod) {
		return nil
	}
	n.mu.Lock()
	info, known := n.core.Pod(pod.Namespace, pod.Name)
	_, torn := n.gone[pod.UID]
	n.mu.Unlock()
	switch {
	case known && info.UID != pod.UID:
		// The name's earlier pod is still the node's: its removal comes
		// first, then this one again.
		return nil
	case pod.DeletionTimestamp != nil && known:
		return n.removePod(ctx, pod.Namespace, pod.Name)
	case pod.DeletionTimestamp != nil:
		// Nothing of it runs here, so nothing waits for a teardown. It
		// is deleted by its UID, so that the mark of a pod deleted since,
		// delivered late, never deletes a new pod that took its name.
		err := n.deleteFromAPI(ctx, core.DeletePod{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID})
		if err != nil && !errors.Is(err, ErrPodNotFound) {
			return fmt.Errorf("handle pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		return nil
	case known:
		return n.resized(ctx, pod)
	case torn || pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed:
		return nil
	}
	return n.admit(ctx, pod, false)
}

// HandlePodRemoved tells the node that the API server no longer has the
// pod of that name and UID (deleted at once, with no grace period, by
// somebody else): the node tears it down, as HandlePodRemoves does. A pod
// the node does not know, or knows under another UID, changes nothing.
func (n *Node) HandlePodRemoved(ctx context.Context, namespace, name string, uid types.UID) error {
	if err := n.enter(ctx, "handle pod removal"); err != nil {
		return err
	}
	defer n.exit()
	n.mu.Lock()
	info, known := n.core.Pod(namespace, name)
	n.mu.Unlock()
	if !known || info.UID != uid {
		return nil
	}
	return n.removePod(ctx, namespace, name)
}

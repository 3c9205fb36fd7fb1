package resize

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/resize/apiserver"
	"github.com/resizelet/resizelet/resize/core"
)

// Resize sends a resize request through the cluster's resize subresource
// (patch is a strategic merge patch, JSON or YAML). An API validation error
// is returned as is and changes nothing. Otherwise the kubelet handles the
// update: the pod joins the pending-resize queue, every pending resize is
// retried in queue order (pod_updated), and the node runs until quiet.
func (n *Node) Resize(ctx context.Context, namespace, name string, patch []byte) error {
	if err := n.enter(ctx, "resize pod"); err != nil {
		return err
	}
	defer n.exit()
	if err := checkPodName("resize pod", namespace, name); err != nil {
		return err
	}
	pod, err := n.cluster.ResizePod(namespace, name, patch)
	if err != nil {
		return err
	}
	return n.resized(ctx, pod)
}

// ResizePatch is Resize for a patch of type pt: a strategic merge patch
// ("" or apiserver.StrategicMergePatch), a JSON merge patch or a JSON
// patch, as the resize subresource takes them. An API that is not a
// PatchResizer takes strategic merge patches only.
func (n *Node) ResizePatch(ctx context.Context, namespace, name string, pt types.PatchType, patch []byte) error {
	if err := n.enter(ctx, "resize pod"); err != nil {
		return err
	}
	defer n.exit()
	if err := checkPodName("resize pod", namespace, name); err != nil {
		return err
	}
	var pod *v1.Pod
	var err error
	switch pr, ok := n.cluster.(PatchResizer); {
	case ok:
		pod, err = pr.ResizePodPatch(namespace, name, pt, patch)
	case pt == "" || pt == apiserver.StrategicMergePatch:
		pod, err = n.cluster.ResizePod(namespace, name, patch)
	default:
		return fmt.Errorf("resize pod %s/%s: the API takes strategic merge patches only, not %s: %w", namespace, name, pt, errors.ErrUnsupported)
	}
	if err != nil {
		return err
	}
	return n.resized(ctx, pod)
}

// ResizeRequest is Resize for a typed request: no JSON on the way, the
// same validation, the same pod and the same kubelet handling as Resize
// with req.Patch(). An API that is not a RequestResizer is sent the patch.
func (n *Node) ResizeRequest(ctx context.Context, namespace, name string, req ResizeRequest) error {
	if err := n.enter(ctx, "resize pod"); err != nil {
		return err
	}
	defer n.exit()
	if err := checkPodName("resize pod", namespace, name); err != nil {
		return err
	}
	var pod *v1.Pod
	var err error
	if rr, ok := n.cluster.(RequestResizer); ok {
		pod, err = rr.ResizePodRequest(namespace, name, req)
	} else {
		pod, err = n.cluster.ResizePod(namespace, name, req.Patch())
	}
	if err != nil {
		return err
	}
	return n.resized(ctx, pod)
}

// update is resized as a call of its own (Fleet.ResizePod).
func (n *Node) update(ctx context.Context, pod *v1.Pod) error {
	if err := n.enter(ctx, "resize pod"); err != nil {
		return err
	}
	defer n.exit()
	return n.resized(ctx, pod)
}

// resized hands the kubelet a pod the resize subresource updated: a copy
// of its top level, which the core takes as its own (the rest is shared
// with the API server, which never changes it). A pod the kubelet does not
// know (yet, or any more: another caller may delete it between the API's
// answer and this) is not its business, as before; nor is an older
// generation of the pod than the one it has (core.Stale: two callers'
// answers may arrive out of order). The check and the step are one step
// under the lock, so that a deletion cannot come between them.
func (n *Node) resized(ctx context.Context, pod *v1.Pod) error {
	own := *pod
	n.mu.Lock()
	if !n.core.Knows(pod.Namespace, pod.Name) || n.core.Stale(pod) {
		n.mu.Unlock()
		return nil
	}
	n.resizeIn = core.ResizeRequested{Pod: &own, Now: n.clock.Now()}
	rd, err := n.coreStep(&n.resizeIn)
	n.resizeIn = core.ResizeRequested{} // holds nothing between calls
	n.cond.Broadcast()
	n.mu.Unlock()
	if errors.Is(err, core.ErrUnknownPod) {
		// Another pod of that name: the one resized was deleted and
		// its name taken again.
		return nil
	}
	if err != nil {
		return err
	}
	return n.drain(ctx, rd)
}

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

// ResizeOp is one resize of a pod through the API server's resize
// subresource, as `kubectl patch pod NAME --subresource resize` sends it:
// a typed Request (no JSON on the way) or a Patch of PatchType, not both.
type ResizeOp struct {
	Namespace, Name string
	// Request is the resize as a typed edit: the same validation, the
	// same pod and the same kubelet handling as its Patch(). An API that
	// is not a RequestResizer is sent that patch. The zero
	// ResizeRequest is none.
	Request ResizeRequest
	// Patch is the resize as a patch of type PatchType: "" or
	// apiserver.StrategicMergePatch (JSON or YAML), apiserver.MergePatch
	// or apiserver.JSONPatch. An API that is not a PatchResizer takes
	// strategic merge patches only.
	Patch     []byte
	PatchType types.PatchType
	// DryRun has the API server validate the resize and answer with the
	// pod it would store, storing nothing (kubectl --dry-run=server); the
	// node does nothing. Node.Plan says what the node would do.
	DryRun bool
}

// check refuses an op without a pod name, or without exactly one of a
// Request and a Patch.
func (op *ResizeOp) check(what string) error {
	if err := checkPodName(what, op.Namespace, op.Name); err != nil {
		return err
	}
	var msg string
	switch {
	case !op.typed() && op.Patch == nil:
		msg = "the ResizeOp has neither a Request nor a Patch"
	case op.typed() && (op.Patch != nil || op.PatchType != ""):
		msg = "the ResizeOp has a Request and a Patch: give one"
	default:
		return nil
	}
	return &argumentError{op: fmt.Sprintf("%s %s/%s", what, op.Namespace, op.Name), msg: msg}
}

// typed reports whether op has a Request.
func (op *ResizeOp) typed() bool {
	r := &op.Request
	return r.Containers != nil || r.InitContainers != nil || r.PodLevel != nil
}

// send sends op to api's resize subresource, or with dryRun to its dry
// run; an API without one has the resize subresource's rules applied to
// its pod here, with the options of node n's version and gates (n may be
// nil: the default version's).
func (op *ResizeOp) send(ctx context.Context, api API, dryRun bool, n *Node) (*v1.Pod, error) {
	ns, name, pt, patch := op.Namespace, op.Name, op.PatchType, op.Patch
	if op.typed() {
		if rr, ok := api.(RequestResizer); ok && !dryRun {
			return rr.ResizePodRequest(ctx, ns, name, op.Request)
		}
		pt, patch = "", op.Request.Patch()
	}
	strategic := pt == "" || pt == apiserver.StrategicMergePatch
	if dryRun {
		dr, dryRuns := api.(DryRunResizer)
		dpr, dryRunsPatches := api.(DryRunPatchResizer)
		switch {
		case strategic && dryRuns:
			return dr.DryRunResizePod(ctx, ns, name, patch)
		case !strategic && dryRunsPatches:
			return dpr.DryRunResizePodPatch(ctx, ns, name, pt, patch)
		}
		old, err := api.GetPod(ctx, ns, name)
		if err != nil {
			return nil, err
		}
		var opts ResizeOptions
		if n != nil {
			opts = ResizeOptions{Profile: n.cfg.Profile, Gate: n.Gate}
		}
		return apiserver.ApplyResizePatch(old, pt, patch, opts)
	}
	switch pr, ok := api.(PatchResizer); {
	case ok:
		return pr.ResizePodPatch(ctx, ns, name, pt, patch)
	case strategic:
		return api.ResizePod(ctx, ns, name, patch)
	}
	return nil, fmt.Errorf("resize pod %s/%s: the API takes strategic merge patches only, not %s: %w", ns, name, pt, errors.ErrUnsupported)
}

// Resize sends op through the API server's resize subresource and returns
// the pod the API server answered with: before the kubelet's reaction,
// which the API's copy (GetPod) shows afterwards. That pod is shared,
// never changed in place: read it, or DeepCopy it before changing
// anything. The API server's refusal is returned as is and changes
// nothing. Otherwise the kubelet handles the update: the pod joins the
// pending-resize queue, every pending resize is retried in queue order
// (pod_updated), and the node runs until quiet; an error of that comes
// with the pod. With op.DryRun the node does nothing.
func (n *Node) Resize(ctx context.Context, op ResizeOp) (*v1.Pod, error) {
	if err := n.enter(ctx, "resize pod"); err != nil {
		return nil, err
	}
	defer n.exit()
	if err := op.check("resize pod"); err != nil {
		return nil, err
	}
	pod, err := op.send(ctx, n.cluster, op.DryRun, n)
	if err != nil || op.DryRun {
		return pod, err
	}
	return pod, n.resized(ctx, pod)
}

// update is resized as a call of its own (Fleet.Resize).
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

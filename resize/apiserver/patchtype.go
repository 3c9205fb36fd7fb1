package apiserver

import (
	"fmt"
	"net/http"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
)

// The patch types the resize subresource takes, as the API server takes
// them (the request's Content-Type): a strategic merge patch (kubectl's
// default), a JSON merge patch (RFC 7386) and a JSON patch (RFC 6902, what
// the VPA updater sends).
const (
	StrategicMergePatch = types.StrategicMergePatchType
	MergePatch          = types.MergePatchType
	JSONPatch           = types.JSONPatchType
)

// ApplyResizePatch is ApplyResize for a patch of type pt; "" means a
// strategic merge patch.
func ApplyResizePatch(old *v1.Pod, pt types.PatchType, patch []byte, opts ResizeOptions) (*v1.Pod, error) {
	switch pt {
	case "", StrategicMergePatch:
		return ApplyResize(old, patch, opts)
	}
	return nil, unsupportedPatchType(pt)
}

// unsupportedPatchType is the API server's answer to a patch type it does
// not take: 415 Unsupported Media Type.
func unsupportedPatchType(pt types.PatchType) error {
	return apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "patch", v1.Resource("pods"), "", fmt.Sprintf("the patch type %q is not supported", pt), 0, false)
}

// ResizePodPatch is ResizePod for a patch of type pt ("" is a strategic
// merge patch). The pod returned is the stored one, shared, as ResizePod's.
func (c *Cluster) ResizePodPatch(namespace, name string, pt types.PatchType, patch []byte) (*v1.Pod, error) {
	return c.resize(namespace, name, true, func(old *v1.Pod, o ResizeOptions) (*v1.Pod, error) {
		return ApplyResizePatch(old, pt, patch, o)
	})
}

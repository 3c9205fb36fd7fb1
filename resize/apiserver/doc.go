// Package apiserver is the API server side of in-place pod resize: the pod
// objects with their generation and status, the events about them, and the
// resize subresource.
//
// Start with Cluster, the in-memory API server a resize node talks to
// (CreatePod, ResizePod, ResizePodPatch, ResizePodRequest, UpdatePodStatus,
// RecordEvent, ...). ApplyResize is the resize subresource on its own:
// strategic merge patch, the resize strategy, v1 defaulting (DefaultPod)
// and validation (ValidateResize) with the API server's messages, per
// Kubernetes version (package profile); ApplyResizePatch takes JSON merge
// and JSON patches too (patchtype.go), and ApplyResizeRequest a typed
// ResizeRequest, giving what its patch gives.
//
// The cluster's errors are the API server's StatusErrors (apiserver.go), so
// that apierrors.IsNotFound, IsInvalid, IsConflict and the rest work on
// them. Its pods have resourceVersions, one per write as etcd counts them
// (GetPodVersioned, ListPodsVersioned), which a patch must repeat if it
// names one. Watch delivers pod changes and events on a bounded channel
// (watch.go), and Event.V1 and EventList give events as client-go sees
// them (events.go); package resize/kubeclient serves all of it as a
// client-go clientset. AdmitResize is the PodResizeValidator admission
// plugin of 1.36 on, which checks the resize against the node the pod is
// bound to among those kubelets registered (Cluster.RegisterNode).
//
// Every resize becomes one typed edit of the pod (resizeEdit, edit.go),
// applied by applyEdit, which shares what the edit does not change,
// defaults, validates and bumps the generation. ApplyResizeRequest makes
// the edit from the typed request; a patch of the narrow form (narrow.go)
// is decoded strictly into it; every other patch is applied with
// apimachinery as the API server applies it (patchedPod, patchtype.go)
// and the patched pod read back into the same edit (editOfPatched).
// Validation (validation.go, podvalidation.go, bounds.go) is the same on
// every path. Objects are shared and never changed in place. The
// differential tests (differential_test.go) hold every path, on random
// old pods and patches, to an oracle written the way the API server is.
package apiserver

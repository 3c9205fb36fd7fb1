// Package apiserver is the API server side of in-place pod resize: the pod
// objects with their generation and status, the events about them, and the
// resize subresource.
//
// Start with Cluster, the in-memory API server a resize node talks to
// (CreatePod, ResizePod, UpdatePodStatus, RecordEvent, ...). ApplyResize is
// the resize subresource on its own: strategic merge patch, the resize
// strategy, v1 defaulting (DefaultPod) and validation (ValidateResize) with
// the API server's messages, per Kubernetes version (package profile).
package apiserver

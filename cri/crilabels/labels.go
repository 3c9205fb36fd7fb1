// Package crilabels holds the labels the kubelet puts on every sandbox and
// container it creates (pkg/kubelet/types/labels.go). It is a leaf package
// so that the resize core, which builds the CRI configs, and the runtime
// decorators in package cri, which read the labels back to name the pod
// and container a call concerns, share them without the core importing a
// runtime.
package crilabels

// Sandboxes carry the three pod labels; containers carry those and
// ContainerName.
const (
	PodName       = "io.kubernetes.pod.name"
	PodNamespace  = "io.kubernetes.pod.namespace"
	PodUID        = "io.kubernetes.pod.uid"
	ContainerName = "io.kubernetes.container.name"
)

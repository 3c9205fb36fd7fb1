package cri

// The labels the kubelet puts on every sandbox and container it creates
// (pkg/kubelet/types/labels.go). Sandboxes carry the three pod labels;
// containers carry those and LabelContainerName. FaultInjector and Recorder
// use them to name the pod and container a call concerns, so they work on
// any Runtime that reports labels back.
const (
	LabelPodName       = "io.kubernetes.pod.name"
	LabelPodNamespace  = "io.kubernetes.pod.namespace"
	LabelPodUID        = "io.kubernetes.pod.uid"
	LabelContainerName = "io.kubernetes.container.name"
)

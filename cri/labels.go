package cri

import "github.com/resizelet/resizelet/cri/crilabels"

// The labels the kubelet puts on every sandbox and container it creates
// (package crilabels). FaultInjector and Recorder use them to name the pod
// and container a call concerns, so they work on any Runtime that reports
// labels back.
const (
	LabelPodName       = crilabels.PodName
	LabelPodNamespace  = crilabels.PodNamespace
	LabelPodUID        = crilabels.PodUID
	LabelContainerName = crilabels.ContainerName
)

// Package metrics is the kubelet's in-place resize metrics, with the names,
// help texts, labels and buckets of the kubelet v1.35.4
// (pkg/kubelet/metrics/metrics.go), registered on a Prometheus registry the
// caller passes in.
//
// Start with New: it registers the six metrics on a prometheus.Registerer
// and returns a *Metrics to hand to every node that should record there
// (resize.Deps.Metrics; nil records nothing and costs nothing). Read the
// values back with Value, or all of them in the Prometheus text format
// with WriteText; Metrics is also a prometheus.Gatherer of just these six.
//
// The metrics, and when a node records them (resize/kubelet-resize.md,
// reference 1.9, and the comments of package resize/core say which kubelet
// code each follows):
//
//   - kubelet_container_requested_resizes_total{resource, requirement,
//     operation}: when the kubelet receives a pod update whose container
//     resources differ from the pod it had (HandlePodUpdates), one count
//     per container and per value that changed.
//   - kubelet_pod_infeasible_resizes_total{reason_detail}: every time the
//     allocation manager finds a resize Infeasible.
//   - kubelet_pod_deferred_accepted_resizes_total{retry_trigger}: when a
//     retry of the pending resizes accepts one that was Deferred.
//   - kubelet_pod_resize_duration_milliseconds{success}: how long each
//     in-place actuation (doPodResizeAction) took on the node's clock.
//   - kubelet_pod_pending_resizes{reason} and
//     kubelet_pod_in_progress_resizes: the pods with a PodResizePending
//     (by reason, lower case) and a PodResizeInProgress condition, as the
//     status manager recounts them.
//
// One Metrics may be shared by many nodes: counters and histograms add up,
// and the gauges are the sum of the nodes' counts. Each node's share of the
// gauges is kept by the NodeRecorder it attaches with (Attach); a kubelet
// restart attaches with the same key and takes its predecessor's share
// over, so that nothing is counted twice.
package metrics

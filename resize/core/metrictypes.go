package core

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/qos"
)

// The kubelet's resize metrics (pkg/kubelet/metrics/metrics.go), as the
// core reports them: the core touches no metric library (it is pure), so
// each Step with metrics on (RecordMetrics) returns, in Ready.Metrics, the
// counts and observations the kubelet made during it and the values its
// gauges hold after it; the driver records them (package resize, on a
// resize/metrics.Metrics). With metrics off, the default, the core
// records nothing and Ready.Metrics is nil.

// MetricKind says which counter or histogram a MetricEvent is for.
type MetricKind uint8

// MetricEvent is one count or observation of the kubelet's.
type MetricEvent struct {
	Kind MetricKind
	// Resource ("cpu", "memory"), Requirement ("requests", "limits") and
	// Operation ("add", "remove", "increase", "decrease") label a
	// requested resize.
	Resource, Requirement, Operation string
	// Reason is the reason_detail of an infeasible resize and the
	// retry_trigger of a deferred one accepted.
	Reason string
	// Success and Duration are an actuation's outcome and how long it
	// took, on the driver's clock.
	Success  bool
	Duration time.Duration
}

// Gauges are the kubelet's two resize gauges on this node, as its status
// manager last set them: kubelet_pod_pending_resizes by reason and
// kubelet_pod_in_progress_resizes.
type Gauges struct {
	PendingDeferred, PendingInfeasible, InProgress int
}

// Metrics is what a Step reports of the metrics: the events of the step,
// in order, and the gauges after it. It is the core's own and valid until
// the next Step.
type Metrics struct {
	Events []MetricEvent
	Gauges Gauges
}

// metricState is the core's bookkeeping for the metrics, present only
// while they are on.
type metricState struct {
	// out is the current step's report; out.Gauges persists from step
	// to step: the values the status manager last set.
	out Metrics
	// actual counts the resize conditions the core holds (the status
	// manager's cache) as they are now. The gauges are recounted from it
	// only at some changes (see showPending), so they can lag behind.
	actual Gauges
	// known are the pods the status manager's podResizeConditions map
	// has an entry for: every pod that has had a resize condition set
	// (or backfilled) since the kubelet started, until it is removed.
	known map[types.UID]struct{}
}

// beginStep clears the last step's events.
func (m *metricState) beginStep() {
	clear(m.out.Events)
	m.out.Events = m.out.Events[:0]
}

func (m *metricState) emit(e MetricEvent) { m.out.Events = append(m.out.Events, e) }

// add counts the conditions of one pod into g, n times (n is 1 or -1).
func (g *Gauges) add(conds *resizeConditions, n int) {
	if p := conds.pending; p != nil {
		g.addPending(p.Reason, n)
	}
	if conds.inProgress != nil {
		g.InProgress += n
	}
}

// addPending counts a PodResizePending condition of the reason. The
// kubelet sets only Deferred and Infeasible.
func (g *Gauges) addPending(reason string, n int) {
	switch reason {
	case v1.PodReasonDeferred:
		g.PendingDeferred += n
	case v1.PodReasonInfeasible:
		g.PendingInfeasible += n
	}
}

// showPending is recordPendingResizeCount.
func (m *metricState) showPending() {
	m.out.Gauges.PendingDeferred, m.out.Gauges.PendingInfeasible = m.actual.PendingDeferred, m.actual.PendingInfeasible
}

// showInProgress is recordInProgressResizeCount.
func (m *metricState) showInProgress() { m.out.Gauges.InProgress = m.actual.InProgress }

// requestedChanges is the walk of recordContainerResizeOperations and
// recordResizeOperations (pkg/kubelet/kubelet.go, HandlePodUpdates): for
// each resizable container of old (sidecars, or with initResizable every
// init container, then regular containers) and the last resizable
// container of the same name and kind in updated, it calls f with each of
// its memory requests, memory limits, cpu requests and cpu limits, in that
// order, that changed, and the operation (resizeOperation). f returns
// false to stop the walk.
func requestedChanges(old, updated *v1.Pod, initResizable bool, f func(resource v1.ResourceName, requirement, op string) bool) {
	visit := func(oldC *v1.Container, list []v1.Container, init bool) bool {
		var newC *v1.Container
		for i := range list {
			if list[i].Name == oldC.Name && (!init || initResizable || qos.IsSidecar(&list[i])) {
				newC = &list[i]
			}
		}
		if newC == nil {
			// The API server keeps a pod's containers: no such update
			// reaches the kubelet (whose loop would fail on it).
			return true
		}
		for _, v := range [...]struct {
			resource    v1.ResourceName
			requirement string
		}{{v1.ResourceMemory, "requests"}, {v1.ResourceMemory, "limits"}, {v1.ResourceCPU, "requests"}, {v1.ResourceCPU, "limits"}} {
			before, after := oldC.Resources.Requests, newC.Resources.Requests
			if v.requirement == "limits" {
				before, after = oldC.Resources.Limits, newC.Resources.Limits
			}
			if op := resizeOperation(after[v.resource], before[v.resource]); op != "" && !f(v.resource, v.requirement, op) {
				return false
			}
		}
		return true
	}
	for i := range old.Spec.InitContainers {
		if oc := &old.Spec.InitContainers[i]; (initResizable || qos.IsSidecar(oc)) && !visit(oc, updated.Spec.InitContainers, true) {
			return
		}
	}
	for i := range old.Spec.Containers {
		if !visit(&old.Spec.Containers[i], updated.Spec.Containers, false) {
			return
		}
	}
}

// resizeOperation is resizeOperationForResources (pkg/kubelet/kubelet.go):
// a value that goes to zero is removed, one that comes from zero is added,
// otherwise it increases or decreases; "" when it did not change. A value
// that is not set is zero.
func resizeOperation(updated, old resource.Quantity) string {
	switch {
	case updated.IsZero() && !old.IsZero():
		return "remove"
	case old.IsZero() && !updated.IsZero():
		return "add"
	}
	switch updated.Cmp(old) {
	case -1:
		return "decrease"
	case 1:
		return "increase"
	}
	return ""
}

// The kinds.
const (
	// MetricRequestedResize is kubelet_container_requested_resizes_total
	// (Resource, Requirement, Operation).
	MetricRequestedResize MetricKind = iota + 1
	// MetricInfeasibleResize is kubelet_pod_infeasible_resizes_total
	// (Reason: the reason_detail).
	MetricInfeasibleResize
	// MetricDeferredAcceptedResize is
	// kubelet_pod_deferred_accepted_resizes_total (Reason: the
	// retry_trigger).
	MetricDeferredAcceptedResize
	// MetricResizeDuration is kubelet_pod_resize_duration_milliseconds
	// (Success, Duration).
	MetricResizeDuration
)

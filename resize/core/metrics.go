package core

import (
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// RecordMetrics turns the metrics on or off. Turned on, the core counts
// from then on, with gauges that start from the conditions as they are
// (a driver turns them on before Start, as the kubelet registers its
// metrics before it runs). The driver turns them on only when something
// records them: off, they cost nothing.
func (c *Core) RecordMetrics(on bool) {
	if c == nil {
		return
	}
	if !on {
		c.metrics = nil
		return
	}
	if c.metrics != nil {
		return
	}
	m := &metricState{known: map[types.UID]struct{}{}}
	for uid, ps := range c.pods {
		if ps.conds.pending != nil || ps.conds.inProgress != nil {
			m.known[uid] = struct{}{}
			m.actual.add(&ps.conds, 1)
		}
	}
	m.out.Gauges = m.actual
	c.metrics = m
}

// The status manager recounts its gauges from its condition cache
// (recordPendingResizeCount and recordInProgressResizeCount in
// pkg/kubelet/status/status_manager.go) only when a condition appears or
// goes: SetPodResizePendingCondition when the pod had no PodResizePending,
// ClearPodResizePendingCondition when it had one, the same for
// PodResizeInProgress, and both when it backfills the conditions of added
// pods (HandlePodAdditions) or forgets a pod. So a PodResizePending whose
// reason changes from Deferred to Infeasible, or back, leaves
// kubelet_pod_pending_resizes counting it under the old reason until the
// next recount, on a 1.35 node as here.

// setPending is resizeConditions.setPending as the status manager's
// SetPodResizePendingCondition does it, gauges included.
func (c *Core) setPending(ps *podState, reason, message string, generation int64, now metav1.Time) bool {
	m := c.metrics
	if m == nil {
		return ps.conds.setPending(reason, message, generation, now)
	}
	old := ps.conds.pending
	if old != nil {
		m.actual.addPending(old.Reason, -1)
	}
	newly := ps.conds.setPending(reason, message, generation, now)
	m.actual.addPending(reason, 1)
	m.known[ps.uid] = struct{}{}
	if old == nil {
		m.showPending()
	}
	return newly
}

// clearPending is ClearPodResizePendingCondition.
func (c *Core) clearPending(ps *podState) {
	old := ps.conds.pending
	if ps.conds.clearPending() && c.metrics != nil {
		c.metrics.actual.addPending(old.Reason, -1)
		c.metrics.showPending()
	}
}

// setInProgress is SetPodResizeInProgressCondition.
func (c *Core) setInProgress(ps *podState, reason, message string, generation int64, now metav1.Time) bool {
	had := ps.conds.inProgress != nil
	updated := ps.conds.setInProgress(reason, message, generation, now)
	if m := c.metrics; m != nil && !had {
		m.actual.InProgress++
		m.known[ps.uid] = struct{}{}
		m.showInProgress()
	}
	return updated
}

// clearInProgress is ClearPodResizeInProgressCondition.
func (c *Core) clearInProgress(ps *podState) (int64, bool) {
	generation, cleared := ps.conds.clearInProgress()
	if m := c.metrics; m != nil && cleared {
		m.actual.InProgress--
		m.showInProgress()
	}
	return generation, cleared
}

// resizeDeferred is IsPodResizeDeferred when a retry comes to the pod:
// whether the status manager's cache has its resize Deferred. A pod whose
// desired resources are its allocation again (a reverted resize) counts
// as not Deferred: from 1.35 the kubelet clears its PodResizePending as
// soon as it gets the update (HandlePodUpdates), before any retry, so the
// condition is gone by then; the 1.33 and 1.34 profiles leave the clearing
// to the retry, whose trigger the kubelet would then not count (see
// profile.RevertClearsPending). With the metrics off nothing asks.
func (c *Core) resizeDeferred(ps *podState) bool {
	return c.metrics != nil && ps.conds.pending != nil && ps.conds.pending.Reason == v1.PodReasonDeferred && ps.view().Changed()
}

// backfillConditions is BackfillPodResizeConditions for one pod: its
// resize conditions are taken over from conds (an API status's), with the
// counts behind the gauges kept in step. The caller recounts the gauges
// (recountAll) once the batch is done, as the status manager does.
func (c *Core) backfillConditions(ps *podState, conds []v1.PodCondition, now metav1.Time) {
	m := c.metrics
	if m != nil {
		m.actual.add(&ps.conds, -1)
	}
	ps.conds.backfill(conds, now)
	if m != nil {
		m.actual.add(&ps.conds, 1)
		if ps.conds.pending != nil || ps.conds.inProgress != nil {
			m.known[ps.uid] = struct{}{}
		}
	}
}

// recountAll is the recount of BackfillPodResizeConditions, which
// HandlePodAdditions calls for every batch of pods added (and the kubelet
// for all its pods when it starts).
func (c *Core) recountAll() {
	if m := c.metrics; m != nil {
		m.showPending()
		m.showInProgress()
	}
}

// forgetConditions drops a pod that is being removed from the counts:
// deletePodStatus and RemoveOrphanedStatuses recount both gauges when the
// pod had an entry in the condition cache.
func (c *Core) forgetConditions(ps *podState) {
	m := c.metrics
	if m == nil {
		return
	}
	m.actual.add(&ps.conds, -1)
	if _, ok := m.known[ps.uid]; ok {
		delete(m.known, ps.uid)
		m.showPending()
		m.showInProgress()
	}
}

// countRequested is recordContainerResizeOperations (pkg/kubelet/kubelet.go,
// HandlePodUpdates): one count per value that changed, in requestedChanges'
// order, with the resizable containers of 1.35 (sidecars and regular
// containers: ContainerIter and IsResizableContainer).
func (c *Core) countRequested(old, updated *v1.Pod) {
	m := c.metrics
	if m == nil || old == nil {
		return
	}
	requestedChanges(old, updated, false, func(resource v1.ResourceName, requirement, op string) bool {
		m.emit(MetricEvent{Kind: MetricRequestedResize, Resource: string(resource), Requirement: requirement, Operation: op})
		return true
	})
}

// countInfeasible counts an Infeasible decision under its reason_detail
// (handlePodResourcesResize and canResizePod in
// pkg/kubelet/allocation/allocation_manager.go count every one they
// make).
func (c *Core) countInfeasible(reasonDetail string) {
	if c.metrics != nil {
		c.metrics.emit(MetricEvent{Kind: MetricInfeasibleResize, Reason: reasonDetail})
	}
}

// countDeferredAccepted counts a resize that was Deferred before a retry
// and that the retry did not leave pending (retryPendingResizes).
func (c *Core) countDeferredAccepted(trigger string) {
	if c.metrics != nil {
		c.metrics.emit(MetricEvent{Kind: MetricDeferredAcceptedResize, Reason: trigger})
	}
}

// observeResize observes an actuation that started at start and ended
// now, successful or not (doPodResizeAction's deferred observation).
func (c *Core) observeResize(start time.Time, success bool) {
	if c.metrics != nil {
		c.metrics.emit(MetricEvent{Kind: MetricResizeDuration, Success: success, Duration: c.now.Sub(start)})
	}
}

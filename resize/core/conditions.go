package core

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// resizeConditions are a pod's two resize conditions as the kubelet's
// status manager keeps them (pkg/kubelet/status/status_manager.go).
type resizeConditions struct {
	pending    *v1.PodCondition
	inProgress *v1.PodCondition
}

// updatedCondition builds a resize condition: lastProbeTime is always now;
// lastTransitionTime moves only when the reason changes.
func updatedCondition(t v1.PodConditionType, old *v1.PodCondition, reason, message string, generation int64, now metav1.Time) *v1.PodCondition {
	transition := now
	if old != nil && old.Reason == reason {
		transition = old.LastTransitionTime
	}
	return &v1.PodCondition{
		Type:               t,
		Status:             v1.ConditionTrue,
		ObservedGeneration: generation,
		LastProbeTime:      now,
		LastTransitionTime: transition,
		Reason:             reason,
		Message:            message,
	}
}

// setPending sets PodResizePending and reports whether that counts as a
// change: only a new reason or a new observedGeneration does (detail 1), so
// a Deferred message whose numbers moved is updated in place without an
// event.
func (c *resizeConditions) setPending(reason, message string, generation int64, now metav1.Time) bool {
	old := c.pending
	c.pending = updatedCondition(v1.PodResizePending, old, reason, message, generation, now)
	return old == nil || old.Reason != reason || old.ObservedGeneration != generation
}

// clearPending drops PodResizePending.
func (c *resizeConditions) clearPending() bool {
	had := c.pending != nil
	c.pending = nil
	return had
}

// setInProgress sets PodResizeInProgress. An existing condition keeps its
// observedGeneration, and its reason and message when the new ones are
// empty; that is why a new allocation clears the condition first. It
// reports whether the condition newly got reason Error.
func (c *resizeConditions) setInProgress(reason, message string, generation int64, now metav1.Time) bool {
	old := c.inProgress
	if old != nil {
		generation = old.ObservedGeneration
		if reason == "" && message == "" {
			reason, message = old.Reason, old.Message
		}
	}
	c.inProgress = updatedCondition(v1.PodResizeInProgress, old, reason, message, generation, now)
	return reason == v1.PodReasonError && (old == nil || old.Reason != v1.PodReasonError)
}

// clearInProgress drops PodResizeInProgress and returns the generation it
// observed, and whether there was one.
func (c *resizeConditions) clearInProgress() (int64, bool) {
	if c.inProgress == nil {
		return 0, false
	}
	g := c.inProgress.ObservedGeneration
	c.inProgress = nil
	return g, true
}

// copy returns conditions that share nothing with c.
func (c resizeConditions) copy() resizeConditions {
	return resizeConditions{pending: c.pending.DeepCopy(), inProgress: c.inProgress.DeepCopy()}
}

// list returns the conditions in the order the kubelet writes them
// (PodResizePending before PodResizeInProgress), as copies.
func (c *resizeConditions) list() []v1.PodCondition {
	var out []v1.PodCondition
	if c.pending != nil {
		out = append(out, *c.pending.DeepCopy())
	}
	if c.inProgress != nil {
		out = append(out, *c.inProgress.DeepCopy())
	}
	return out
}

package core

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// resizeConditions are a pod's two resize conditions as the kubelet's
// status manager keeps them (pkg/kubelet/status/status_manager.go).
//
// pending and inProgress are nil when the condition is not set. When set
// by this type they point at the slots, so that setting a condition again
// and again (every retry of a Deferred resize does) allocates nothing. The
// slots are allocated the first time a condition is set and dropped when
// the pod is frozen without one (see release): most pods never resize.
type resizeConditions struct {
	pending    *v1.PodCondition
	inProgress *v1.PodCondition

	slots *[2]v1.PodCondition // pending, inProgress
}

// slot is the slot of condition i (0 pending, 1 inProgress).
func (c *resizeConditions) slot(i int) *v1.PodCondition {
	if c.slots == nil {
		c.slots = new([2]v1.PodCondition)
	}
	return &c.slots[i]
}

// release drops the slots when neither condition is set.
func (c *resizeConditions) release() {
	if c.pending == nil && c.inProgress == nil {
		c.slots = nil
	}
}

// updatedCondition writes a resize condition into slot: lastProbeTime is
// always now; lastTransitionTime moves only when the reason changes. old
// may be slot itself: it is read before slot is written.
func updatedCondition(slot *v1.PodCondition, t v1.PodConditionType, old *v1.PodCondition, reason, message string, generation int64, now metav1.Time) *v1.PodCondition {
	transition := now
	if old != nil && old.Reason == reason {
		transition = old.LastTransitionTime
	}
	*slot = v1.PodCondition{
		Type:               t,
		Status:             v1.ConditionTrue,
		ObservedGeneration: generation,
		LastProbeTime:      now,
		LastTransitionTime: transition,
		Reason:             reason,
		Message:            message,
	}
	return slot
}

// setPending sets PodResizePending and reports whether that counts as a
// change: only a new reason or a new observedGeneration does (detail 1), so
// a Deferred message whose numbers moved is updated in place without an
// event.
func (c *resizeConditions) setPending(reason, message string, generation int64, now metav1.Time) bool {
	old := c.pending
	changed := old == nil || old.Reason != reason || old.ObservedGeneration != generation
	c.pending = updatedCondition(c.slot(0), v1.PodResizePending, old, reason, message, generation, now)
	return changed
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
// reports whether the condition was updated, as the status manager's
// SetPodResizeInProgressCondition does (pkg/kubelet/status/
// status_manager.go): a condition that is new, or whose reason or message
// changed. The times do not count, and the generation cannot change. So a
// sync that fails with another error while the reason stays Error is an
// update too, and the kubelet emits another ResizeError for it
// (pkg/kubelet/kubelet.go, SyncPod); the same error again is not.
func (c *resizeConditions) setInProgress(reason, message string, generation int64, now metav1.Time) bool {
	old := c.inProgress
	if old != nil {
		generation = old.ObservedGeneration
		if reason == "" && message == "" {
			reason, message = old.Reason, old.Message
		}
	}
	changed := old == nil || old.Reason != reason || old.Message != message
	c.inProgress = updatedCondition(c.slot(1), v1.PodResizeInProgress, old, reason, message, generation, now)
	return changed
}

// backfill takes a pod's resize conditions over from an API status, as the
// status manager's BackfillPodResizeConditions does
// (pkg/kubelet/status/status_manager.go): each PodResizePending and
// PodResizeInProgress replaces the one held, with the API's reason,
// message and observedGeneration, status True, and lastProbeTime and
// lastTransitionTime now (updatedPodResizeCondition without an old
// condition). A condition of a type the status lacks is left as it is.
func (c *resizeConditions) backfill(conds []v1.PodCondition, now metav1.Time) {
	for i := range conds {
		switch cond := &conds[i]; cond.Type {
		case v1.PodResizePending:
			c.pending = updatedCondition(c.slot(0), v1.PodResizePending, nil, cond.Reason, cond.Message, cond.ObservedGeneration, now)
		case v1.PodResizeInProgress:
			c.inProgress = updatedCondition(c.slot(1), v1.PodResizeInProgress, nil, cond.Reason, cond.Message, cond.ObservedGeneration, now)
		}
	}
}

// condSnapshot is a copy of a pod's resize conditions, pending and
// inProgress, to tell afterwards whether anything changed. A condition not
// set is the zero condition: a set one always has its Type.
type condSnapshot [2]v1.PodCondition

// snapshot copies the conditions.
func (c *resizeConditions) snapshot() condSnapshot {
	var s condSnapshot
	for i, cond := range [2]*v1.PodCondition{c.pending, c.inProgress} {
		if cond != nil {
			s[i] = *cond
		}
	}
	return s
}

// changedSince reports whether the conditions differ from the snapshot in
// any field the status shows.
func (c *resizeConditions) changedSince(s condSnapshot) bool {
	now := c.snapshot()
	for i := range s {
		old, cur := &s[i], &now[i]
		if old.Type != cur.Type || old.Status != cur.Status || old.Reason != cur.Reason || old.Message != cur.Message ||
			old.ObservedGeneration != cur.ObservedGeneration ||
			!old.LastProbeTime.Equal(&cur.LastProbeTime) || !old.LastTransitionTime.Equal(&cur.LastTransitionTime) {
			return true
		}
	}
	return false
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
func (c *resizeConditions) copy() resizeConditions {
	return resizeConditions{pending: c.pending.DeepCopy(), inProgress: c.inProgress.DeepCopy()}
}

// listLike returns the conditions in the order the kubelet writes them
// (PodResizePending before PodResizeInProgress), as copies, or prev itself
// when it holds the very same conditions (statuses are never changed in
// place, so they may share it).
func (c *resizeConditions) listLike(prev []v1.PodCondition) []v1.PodCondition {
	all := [2]*v1.PodCondition{c.pending, c.inProgress}
	set := all[:0]
	for _, cond := range all {
		if cond != nil {
			set = append(set, cond)
		}
	}
	if len(set) == 0 {
		return nil
	}
	if slices.EqualFunc(prev, set, func(p v1.PodCondition, c *v1.PodCondition) bool { return p == *c }) {
		return prev
	}
	out := make([]v1.PodCondition, len(set))
	for i, cond := range set {
		out[i] = *cond
	}
	return out
}

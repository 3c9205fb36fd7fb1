package allocation

import (
	"time"
)

// The periodic retry of pending resizes (allocation_manager.go).
const (
	// InitialRetryDelay is the first period after the kubelet starts.
	InitialRetryDelay = 30 * time.Second
	// RetryDelay is the period after every retry.
	RetryDelay = 3 * time.Minute
)

// Retry triggers: the retry_trigger label of the kubelet's
// kubelet_pod_deferred_accepted_resizes_total metric, one per caller of
// RetryPendingResizes.
const (
	TriggerPodResized    = "pod_resized"    // a resize completed and the pod's status requests went down
	TriggerPodUpdated    = "pod_updated"    // a pod update reached the kubelet
	TriggerPodsAdded     = "pods_added"     // pods were added
	TriggerPodsRemoved   = "pods_removed"   // pods were removed
	TriggerPeriodicRetry = "periodic_retry" // the RetryTimer fired
	TriggerPodTerminated = "pod_terminated" // a pod terminated (1.36 and later)
)

// RetryTimer is the kubelet's pending-resize ticker on a virtual clock: due
// InitialRetryDelay after start, and RetryDelay after every retry of any
// trigger, since the kubelet resets its ticker at the top of every
// retryPendingResizes (allocation_manager.go). It is a plain value owned
// by the resize core. A nil *RetryTimer is due at the zero time and
// ignores Reset and Shift.
type RetryTimer struct {
	due time.Time
}

// NewRetryTimer returns a timer first due at start+InitialRetryDelay.
func NewRetryTimer(start time.Time) RetryTimer {
	return RetryTimer{due: start.Add(InitialRetryDelay)}
}

// Due returns when the periodic retry fires next.
func (t *RetryTimer) Due() time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.due
}

// Reset records a retry at now, whatever its trigger: the next periodic
// retry is due at now+RetryDelay.
func (t *RetryTimer) Reset(now time.Time) {
	if t == nil {
		return
	}
	t.due = now.Add(RetryDelay)
}

// Shift moves the timer's due time d later, keeping it in step with a
// clock that jumped over a span in which it would have fired and been
// reset every RetryDelay (the resize core's Skip).
func (t *RetryTimer) Shift(d time.Duration) {
	if t == nil {
		return
	}
	t.due = t.due.Add(d)
}

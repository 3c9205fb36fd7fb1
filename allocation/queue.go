package allocation

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// PendingResize is what the kubelet's pending-resize queue orders a pod by.
// The kubelet reads these from the live pod each time it sorts; here the
// driver records them when it pushes the pod.
type PendingResize struct {
	UID types.UID
	// Increasing is IsResizeIncreasing(allocated, desired): resizes that
	// increase no request go first.
	Increasing bool
	// Priority is spec.priority, nil counting as 0.
	Priority int32
	// Guaranteed is status.qosClass == Guaranteed.
	Guaranteed bool
	// DeferredAt is the lastTransitionTime of the pod's PodResizePending
	// condition; the zero time means there is no such condition, which
	// sorts last.
	DeferredAt time.Time
}

// IsResizeIncreasing is the kubelet's isResizeIncreasingRequests: whether
// the desired pod requests more cpu or more memory than the allocated pod,
// as qos.PodRequests counts them (pod-level requests only when podLevel, the
// PodLevelResources gate, is on). A resize that raises one container and
// lowers another by as much is not increasing.
func IsResizeIncreasing(allocated, desired *v1.Pod, podLevel bool) bool {
	return IsIncreasing(As(allocated), desired, podLevel)
}

// IsIncreasing is IsResizeIncreasing with the allocated pod as a view.
func IsIncreasing(allocated Allocated, desired *v1.Pod, podLevel bool) bool {
	opts := requestOptions{podLevel: podLevel}
	oldReq := podRequests(allocated, opts)
	newReq := podRequests(As(desired), opts)
	return newReq.memory > oldReq.memory || newReq.milliCPU > oldReq.milliCPU
}

// Less is the comparator of the kubelet's sortPendingResizes (§1.6): a
// resize that increases no request first; then higher priority; then
// Guaranteed before other QoS classes; then the longer-deferred (older
// PodResizePending transition time), with a pod without the condition last.
//
// It keeps the kubelet's quirk: the first key answers "a first" whenever a
// is non-increasing, without looking at b, so Less(a, b) and Less(b, a) are
// both true for two non-increasing resizes, and each re-sort swaps such a
// pair when they are adjacent. Equal transition times, or two pods without
// the condition, are not less (the kubelet's comparator answers 1).
func Less(a, b PendingResize) bool {
	if !a.Increasing {
		return true
	}
	if !b.Increasing {
		return false
	}
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	if a.Guaranteed != b.Guaranteed {
		return a.Guaranteed
	}
	if a.DeferredAt.IsZero() {
		return false
	}
	if b.DeferredAt.IsZero() {
		return true
	}
	return a.DeferredAt.Before(b.DeferredAt)
}

// Queue is the kubelet's podsWithPendingResizes: an ordered set of pending
// resizes by UID. The zero value is an empty queue. It is a plain value
// owned by the resize core, which is driven under one lock, so it has no
// lock of its own. A nil *Queue is an empty queue that keeps nothing
// pushed to it.
type Queue struct {
	items []PendingResize
}

// Push adds a pending resize, or replaces the record of one already queued.
//
// Like the kubelet's PushPendingResize, only the insertion of a new UID
// re-sorts the queue: a UID already queued keeps its place (the kubelet
// returns early), and its new record takes effect at the next sort. The
// sort is an insertion sort with Less, which is what the kubelet's
// slices.SortFunc does for up to 12 pods, so the quirk of Less moves pods
// exactly as in the kubelet; it is also stable for longer queues, so equal
// pods keep the order in which they were queued (detail 8).
func (q *Queue) Push(p PendingResize) {
	if q == nil {
		return
	}
	for i := range q.items {
		if q.items[i].UID == p.UID {
			q.items[i] = p
			return
		}
	}
	q.items = append(q.items, p)
	for i := 1; i < len(q.items); i++ {
		for j := i; j > 0 && Less(q.items[j], q.items[j-1]); j-- {
			q.items[j], q.items[j-1] = q.items[j-1], q.items[j]
		}
	}
}

// Remove drops the pod's pending resize, keeping the order of the rest (the
// kubelet rebuilds its queue in order after a retry).
func (q *Queue) Remove(uid types.UID) {
	if q == nil {
		return
	}
	for i := range q.items {
		if q.items[i].UID == uid {
			q.items = append(q.items[:i], q.items[i+1:]...)
			return
		}
	}
}

// Has reports whether the pod is queued.
func (q *Queue) Has(uid types.UID) bool {
	if q == nil {
		return false
	}
	for i := range q.items {
		if q.items[i].UID == uid {
			return true
		}
	}
	return false
}

// Items returns a copy of the queue in retry order.
func (q *Queue) Items() []PendingResize {
	if q == nil {
		return nil
	}
	return append([]PendingResize(nil), q.items...)
}

// AppendItems appends the queue in retry order to dst and returns it, so
// that a caller with a buffer of its own reads the queue without
// allocating.
func (q *Queue) AppendItems(dst []PendingResize) []PendingResize {
	if q == nil {
		return dst
	}
	return append(dst, q.items...)
}

// Clear empties the queue, keeping its memory for the next pushes.
func (q *Queue) Clear() {
	if q == nil {
		return
	}
	q.items = q.items[:0]
}

// Len returns the number of queued resizes.
func (q *Queue) Len() int {
	if q == nil {
		return 0
	}
	return len(q.items)
}

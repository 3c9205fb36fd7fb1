package core

import (
	v1 "k8s.io/api/core/v1"
	"slices"
)

// opOutput collects what an operation has decided but not yet handed out:
// actions that need no result (events), emitted with its next batch.
type opOutput struct {
	pending []Action
}

func (o *opOutput) emit(a ...Action) { o.pending = append(o.pending, a...) }

// take returns the pending actions followed by acts, and clears them.
func (o *opOutput) take(acts ...Action) []Action {
	out := append(o.pending, acts...)
	o.pending = nil
	return out
}

// event builds an event about pod at the core's time.
func (c *Core) event(pod *v1.Pod, eventType, reason, message string) RecordEvent {
	return RecordEvent{Event: Event{
		Time: c.now, Namespace: pod.Namespace, Pod: pod.Name,
		Type: eventType, Reason: reason, Message: message,
	}}
}

// resizeEvent builds a resize event about pod whose message is rendered
// when read.
func (c *Core) resizeEvent(pod *v1.Pod, eventType, reason string, msg ResizeMessage) RecordEvent {
	return RecordEvent{Event: Event{
		Time: c.now, Namespace: pod.Namespace, Pod: pod.Name,
		Type: eventType, Reason: reason, Resize: msg,
	}}
}

// resultOf finds the first action of type T among the performed ones and
// its result. Batches carry the events an operation decided before them,
// so an operation finds the result it waits for by the action's type.
func resultOf[T Action](done []Action, res []Result) (T, Result, bool) {
	for i, a := range done {
		if t, ok := a.(T); ok {
			return t, res[i], true
		}
	}
	var zero T
	return zero, Result{}, false
}

func containsID(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// sortedNames returns a resource list's names in order, for output that
// must not depend on map order.
func sortedNames(l v1.ResourceList) []v1.ResourceName {
	names := make([]v1.ResourceName, 0, len(l))
	for n := range l {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

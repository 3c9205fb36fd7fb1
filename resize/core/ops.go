package core

import (
	v1 "k8s.io/api/core/v1"
	"slices"
)

// opOutput is what every operation carries: the actions it has decided
// but not yet handed out (events, emitted with its next batch), and the
// memory of its batches, reused from one batch to the next (an operation
// has at most one batch in flight), so that handing out a batch allocates
// nothing.
type opOutput struct {
	pending []Action
	// bufs are two action buffers used in turn: the next batch is built in
	// one while the operation still reads the last one's actions.
	bufs  [2][]Action
	cur   int
	batch Batch
	fl    flight
	// evSlots hold the events of the batch being handed out and of the
	// next one (the side cur^1 until take flips it); evUsed counts the
	// slots in use on each side.
	evSlots [2][]*Event
	evUsed  [2]int
	// write is the allocation record of the batch that writes one.
	write AllocationRecord
}

// eventSlot returns a free event on the side of the next batch.
func (o *opOutput) eventSlot() *Event {
	i := o.cur ^ 1
	if o.evUsed[i] == len(o.evSlots[i]) {
		o.evSlots[i] = append(o.evSlots[i], new(Event))
	}
	e := o.evSlots[i][o.evUsed[i]]
	o.evUsed[i]++
	return e
}

func (o *opOutput) output() *opOutput { return o }

func (o *opOutput) emit(a ...Action) { o.pending = append(o.pending, a...) }

// take returns the pending actions followed by acts, and clears them.
func (o *opOutput) take(acts ...Action) []Action {
	o.cur ^= 1
	out := append(o.bufs[o.cur][:0], o.pending...)
	out = append(out, acts...)
	o.bufs[o.cur] = out
	clear(o.pending)
	o.pending = o.pending[:0]
	// The other side held the last batch's events, which are done with.
	o.evUsed[o.cur^1] = 0
	return out
}

// reset makes the output ready for another operation, keeping its memory.
func (o *opOutput) reset() {
	clear(o.pending)
	o.pending = o.pending[:0]
	for i := range o.bufs {
		clear(o.bufs[i])
		o.bufs[i] = o.bufs[i][:0]
	}
	o.batch, o.fl = Batch{}, flight{}
	o.evUsed = [2]int{}
	o.write = AllocationRecord{}
}

// event builds an event about pod at the core's time, in one of the
// operation's event slots.
func (c *Core) event(out *opOutput, pod *v1.Pod, eventType, reason, message string) RecordEvent {
	e := out.eventSlot()
	*e = Event{
		Time: c.now, Namespace: pod.Namespace, Pod: pod.Name,
		Type: eventType, Reason: reason, Message: message,
	}
	return RecordEvent{Event: e}
}

// resizeEvent builds a resize event about pod whose message is rendered
// when read.
func (c *Core) resizeEvent(out *opOutput, pod *v1.Pod, eventType, reason string, msg ResizeMessage) RecordEvent {
	e := out.eventSlot()
	*e = Event{
		Time: c.now, Namespace: pod.Namespace, Pod: pod.Name,
		Type: eventType, Reason: reason, Resize: msg,
	}
	return RecordEvent{Event: e}
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

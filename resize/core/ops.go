package core

import (
	v1 "k8s.io/api/core/v1"
)

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

// finish does nothing: the operations that have nothing to do when they
// end keep this one.
func (o *opOutput) finish(*Core) {}

func (o *opOutput) emit(a ...Action) { o.pending = append(o.pending, a...) }

// take returns the pending actions followed by acts, and clears them.
func (o *opOutput) take(acts ...Action) []Action {
	o.cur ^= 1
	out := append(o.bufs[o.cur][:0], o.pending...)
	out = append(out, acts...)
	o.bufs[o.cur] = out
	for _, a := range out {
		o.acted = o.acted || !IsRead(a)
	}
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
	o.acted = false
}

// event builds an event about pod (or its container, if named) at the
// core's time, in one of the operation's event slots.
func (c *Core) event(out *opOutput, pod *v1.Pod, container, eventType, reason, message string) RecordEvent {
	e := out.eventSlot()
	*e = Event{Time: c.now, Namespace: pod.Namespace, Pod: pod.Name, Container: container, Type: eventType, Reason: reason, Message: message}
	return RecordEvent{Event: e}
}

// resizeEvent builds a resize event about pod whose message is rendered
// when read.
func (c *Core) resizeEvent(out *opOutput, pod *v1.Pod, eventType, reason string, msg ResizeMessage) RecordEvent {
	ev := c.event(out, pod, "", eventType, reason, "")
	ev.Event.Resize = msg
	return ev
}

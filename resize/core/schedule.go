package core

import (
	"time"
)

// The core's work index: which pods need a sync, in admission order, and
// when the pods' resync timers fall due. Both are binary heaps over plain
// slices, so that finding the next piece of work costs O(log n) and does
// not walk the pods or allocate.

// markDirty asks for a sync of the pod, which is then not quiet.
func (c *Core) markDirty(ps *podState) {
	ps.quiet = false
	if ps.dirty {
		return
	}
	ps.dirty = true
	c.dirtyCount++
	c.dirtyHeap.push(seqEntry{seq: ps.seq, uid: ps.uid})
}

// setResync arms the pod's resync timer, replacing one already armed.
func (c *Core) setResync(ps *podState, at time.Time) {
	ps.resyncAt = at
	if ps.timerIdx >= 0 {
		c.timers.down(int(ps.timerIdx))
		c.timers.up(int(ps.timerIdx))
		return
	}
	ps.timerIdx = int32(len(c.timers))
	c.timers = append(c.timers, ps)
	c.timers.up(int(ps.timerIdx))
}

// disarm stops the pod's resync timer; a quiet pod is always armed
// (Core.tick clears the quiet through the timers).
func (c *Core) disarm(ps *podState) {
	ps.quiet = false
	if ps.timerIdx >= 0 {
		c.timers.remove(int(ps.timerIdx))
	}
	ps.resyncAt = time.Time{}
}

// nextDirty returns the first dirty pod in admission order that is not
// busy, and takes it off the dirty set; pods that are busy stay dirty.
func (c *Core) nextDirty() *podState {
	var found *podState
	busy := c.busyScratch[:0]
	for len(c.dirtyHeap) > 0 {
		e := c.dirtyHeap.pop()
		ps := c.pods[e.uid]
		if ps == nil || !ps.dirty || ps.seq != e.seq {
			continue
		}
		if ps.busy {
			busy = append(busy, e)
			continue
		}
		ps.dirty = false
		c.dirtyCount--
		found = ps
		break
	}
	for _, e := range busy {
		c.dirtyHeap.push(e)
	}
	c.busyScratch = busy[:0]
	return found
}

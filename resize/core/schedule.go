package core

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// The core's work index: which pods need a sync, in admission order, and
// when the pods' resync timers fall due. Both are binary heaps over plain
// slices, so that finding the next piece of work costs O(log n) and does
// not walk the pods or allocate.

// seqEntry is a pod by its admission sequence number.
type seqEntry struct {
	seq uint64
	uid types.UID
}

// seqHeap orders pods by admission sequence, smallest first.
type seqHeap []seqEntry

func (h *seqHeap) push(e seqEntry) {
	*h = append(*h, e)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p].seq <= s[i].seq {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *seqHeap) pop() seqEntry {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(s) && s[l].seq < s[m].seq {
			m = l
		}
		if r < len(s) && s[r].seq < s[m].seq {
			m = r
		}
		if m == i {
			break
		}
		s[m], s[i] = s[i], s[m]
		i = m
	}
	*h = s
	return top
}

// timerEntry is a pod's resync due at a time; an entry whose time is no
// longer the pod's resyncAt is stale and skipped.
type timerEntry struct {
	at  time.Time
	seq uint64
	uid types.UID
}

// timerHeap orders resyncs by due time, then admission order.
type timerHeap []timerEntry

func (e timerEntry) before(o timerEntry) bool {
	if !e.at.Equal(o.at) {
		return e.at.Before(o.at)
	}
	return e.seq < o.seq
}

func (h *timerHeap) push(e timerEntry) {
	*h = append(*h, e)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s[i].before(s[p]) {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *timerHeap) pop() timerEntry {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(s) && s[l].before(s[m]) {
			m = l
		}
		if r < len(s) && s[r].before(s[m]) {
			m = r
		}
		if m == i {
			break
		}
		s[m], s[i] = s[i], s[m]
		i = m
	}
	*h = s
	return top
}

// markDirty asks for a sync of the pod.
func (c *Core) markDirty(ps *podState) {
	if ps.dirty {
		return
	}
	ps.dirty = true
	c.dirtyCount++
	c.dirtyHeap.push(seqEntry{seq: ps.seq, uid: ps.uid})
}

// setResync arms the pod's resync timer.
func (c *Core) setResync(ps *podState, at time.Time) {
	ps.resyncAt = at
	c.timers.push(timerEntry{at: at, seq: ps.seq, uid: ps.uid})
}

// dropStaleTimers removes the timers at the top that no longer match
// their pod.
func (c *Core) dropStaleTimers() {
	for len(c.timers) > 0 {
		e := c.timers[0]
		if ps := c.pods[e.uid]; ps != nil && ps.resyncAt.Equal(e.at) && !e.at.IsZero() {
			return
		}
		c.timers.pop()
	}
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

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

// timerHeap holds the pods whose resync timer is armed, earliest first
// (then by admission order). Each pod knows its place in it (timerIdx),
// so that re-arming a pod's timer moves its one entry instead of leaving a
// stale one behind.
type timerHeap []*podState

func timerBefore(a, b *podState) bool {
	if !a.resyncAt.Equal(b.resyncAt) {
		return a.resyncAt.Before(b.resyncAt)
	}
	return a.seq < b.seq
}

func (h timerHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].timerIdx, h[j].timerIdx = i, j
}

func (h timerHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !timerBefore(h[i], h[p]) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h timerHeap) down(i int) {
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h) && timerBefore(h[l], h[m]) {
			m = l
		}
		if r < len(h) && timerBefore(h[r], h[m]) {
			m = r
		}
		if m == i {
			return
		}
		h.swap(i, m)
		i = m
	}
}

// remove takes the entry at i out.
func (h *timerHeap) remove(i int) {
	s := *h
	last := len(s) - 1
	s.swap(i, last)
	s[last].timerIdx = -1
	s[last] = nil
	*h = s[:last]
	if i < last {
		(*h).down(i)
		(*h).up(i)
	}
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

// setResync arms the pod's resync timer, replacing one already armed.
func (c *Core) setResync(ps *podState, at time.Time) {
	ps.resyncAt = at
	if ps.timerIdx >= 0 {
		c.timers.down(ps.timerIdx)
		c.timers.up(ps.timerIdx)
		return
	}
	ps.timerIdx = len(c.timers)
	c.timers = append(c.timers, ps)
	c.timers.up(ps.timerIdx)
}

// disarm stops the pod's resync timer.
func (c *Core) disarm(ps *podState) {
	if ps.timerIdx >= 0 {
		c.timers.remove(ps.timerIdx)
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

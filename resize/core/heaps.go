package core

import "k8s.io/apimachinery/pkg/types"

// The heaps of the core's work index (schedule.go): pods by admission
// order, and pods by when their resync timers fall due.

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
	h[i].timerIdx, h[j].timerIdx = int32(i), int32(j)
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

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

func (h seqHeap) less(i, j int) bool { return h[i].seq < h[j].seq }
func (h seqHeap) swap(i, j int)      { h[i], h[j] = h[j], h[i] }

func (h *seqHeap) push(e seqEntry) {
	*h = append(*h, e)
	siftUp(len(*h)-1, h.less, h.swap)
}

func (h *seqHeap) pop() seqEntry {
	s := *h
	top, last := s[0], len(s)-1
	s[0] = s[last]
	s = s[:last]
	siftDown(0, len(s), s.less, s.swap)
	*h = s
	return top
}

// timerHeap holds the pods whose resync timer is armed, earliest first
// (then by admission order). Each pod knows its place in it (timerIdx),
// so that re-arming a pod's timer moves its one entry instead of leaving a
// stale one behind.
type timerHeap []*podState

func (h timerHeap) less(i, j int) bool {
	a, b := h[i], h[j]
	if !a.resyncAt.Equal(b.resyncAt) {
		return a.resyncAt.Before(b.resyncAt)
	}
	return a.seq < b.seq
}

func (h timerHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].timerIdx, h[j].timerIdx = int32(i), int32(j)
}

func (h timerHeap) up(i int)   { siftUp(i, h.less, h.swap) }
func (h timerHeap) down(i int) { siftDown(i, len(h), h.less, h.swap) }

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

// siftUp moves entry i of a binary heap up to its place, and siftDown
// moves it down among the n entries: less orders the entries, swap
// exchanges two of them.
func siftUp(i int, less func(i, j int) bool, swap func(i, j int)) {
	for i > 0 {
		p := (i - 1) / 2
		if !less(i, p) {
			return
		}
		swap(i, p)
		i = p
	}
}

func siftDown(i, n int, less func(i, j int) bool, swap func(i, j int)) {
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && less(l, m) {
			m = l
		}
		if r < n && less(r, m) {
			m = r
		}
		if m == i {
			return
		}
		swap(i, m)
		i = m
	}
}

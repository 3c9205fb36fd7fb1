package frozen

import "slices"

// Recent tracks which of a holder's objects are thawed and when each was
// last used, so that the holder keeps at most Limit of them thawed and
// freezes the least recently used. A holder calls Touch when it uses a
// thawed object, Forget when it drops or freezes one, and Evict where
// freezing is safe. The zero Recent has a limit of 0. It is not safe for
// concurrent use; holders call it under their own lock.
type Recent[K comparable] struct {
	// Limit is how many objects may stay thawed after Evict.
	Limit int
	now   uint64
	used  map[K]uint64
	// last is the key touched last while hasLast: touching it again
	// changes no order, so it skips the map (a sync touches its pod at
	// every step).
	last    K
	hasLast bool
	// order is Evict's scratch space.
	order []recentEntry[K]
}

type recentEntry[K comparable] struct {
	key K
	at  uint64
}

// Touch records that k is thawed and was used just now.
func (r *Recent[K]) Touch(k K) {
	if r == nil {
		return
	}
	if r.hasLast && r.last == k {
		return
	}
	r.last, r.hasLast = k, true
	if r.used == nil {
		r.used = make(map[K]uint64, r.Limit+1)
	}
	r.now++
	r.used[k] = r.now
}

// Forget records that k is no longer thawed (frozen or dropped).
func (r *Recent[K]) Forget(k K) {
	if r == nil {
		return
	}
	if r.hasLast && r.last == k {
		r.hasLast = false
	}
	delete(r.used, k)
}

// Len is how many objects are thawed.
func (r *Recent[K]) Len() int {
	if r == nil {
		return 0
	}
	return len(r.used)
}

// Evict freezes the least recently used objects, oldest first, while more
// than Limit are thawed. freeze freezes k and returns true, or returns
// false when k cannot be frozen now (it stays thawed and counts against
// the limit until a later Evict). A nil freeze freezes nothing.
func (r *Recent[K]) Evict(freeze func(k K) bool) {
	if r == nil || freeze == nil {
		return
	}
	over := len(r.used) - max(r.Limit, 0)
	if over <= 0 {
		return
	}
	burst := len(r.used) > 4*r.Limit+16
	r.order = r.order[:0]
	for k, at := range r.used {
		r.order = append(r.order, recentEntry[K]{k, at})
	}
	slices.SortFunc(r.order, func(a, b recentEntry[K]) int {
		switch {
		case a.at < b.at:
			return -1
		case a.at > b.at:
			return 1
		}
		return 0
	})
	for _, e := range r.order {
		if over == 0 {
			break
		}
		if freeze(e.key) {
			r.Forget(e.key)
			over--
		}
	}
	clear(r.order)
	r.order = r.order[:0]
	// A burst of thawing (a node adding a hundred pods at once) must not
	// leave its scratch space behind, nor a map sized for the burst (Go
	// maps do not shrink).
	if burst {
		r.order = nil
		// A copy sized for what is left (maps.Clone keeps the size).
		used := make(map[K]uint64, len(r.used))
		for k, at := range r.used {
			used[k] = at
		}
		r.used = used
	}
}

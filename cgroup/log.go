package cgroup

// DefaultLogLimit is how many of the latest writes SimKernel and Recorder
// keep for Writes unless told otherwise (WithWriteLimit, RecordAtMost).
const DefaultLogLimit = 256

// logLimit turns a configured limit into the one to keep: 0 means
// DefaultLogLimit; a negative limit keeps everything.
func logLimit(n int) int {
	if n == 0 {
		return DefaultLogLimit
	}
	return n
}

// pushRing appends e to log, a ring of the latest limit entries whose
// oldest is log[next] once the ring is full, and returns the ring and its
// new next. Until then entries are appended, growing the ring by doubling
// up to the limit; after that each replaces the oldest, so that a full log
// holds exactly limit entries and appending never copies. A negative
// limit keeps every entry, appended, with next staying 0.
func pushRing[T any](log []T, next, limit int, e T) ([]T, int) {
	if limit < 0 {
		return append(log, e), next
	}
	if len(log) < limit {
		if len(log) == cap(log) {
			grown := make([]T, len(log), min(max(2*len(log), 8), limit))
			copy(grown, log)
			log = grown
		}
		return append(log, e), next
	}
	log[next] = e
	return log, (next + 1) % limit
}

// ringOrder returns the entries of a ring that pushRing keeps, oldest
// first, as two parts: older, then newer.
func ringOrder[T any](log []T, next int) (older, newer []T) {
	return log[next:], log[:next]
}

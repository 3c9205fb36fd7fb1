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

// appendBounded appends ws to log and, once the log holds twice the limit,
// keeps only the latest limit entries: appending stays O(1) amortized and
// the memory bounded, with no ring arithmetic for the readers.
func appendBounded(log []Write, limit int, ws ...Write) []Write {
	log = append(log, ws...)
	if limit > 0 && len(log) >= 2*limit {
		n := copy(log, log[len(log)-limit:])
		clear(log[n:])
		log = log[:n]
	}
	return log
}

// latest is the last limit entries of log (all of it for a negative
// limit), copied.
func latest(log []Write, limit int) []Write {
	if limit > 0 && len(log) > limit {
		log = log[len(log)-limit:]
	}
	return append([]Write(nil), log...)
}

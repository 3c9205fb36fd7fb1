package cgroup

import "sync"

// Recorder is a Manager decorator that keeps the Writes that Set returned
// (the latest DefaultLogLimit, unless RecordAtMost says otherwise), in the
// order the Sets returned them. Wrapping the manager a node and its
// runtime share gives one ordered log of the cgroup writes of a resize,
// whatever the Manager underneath (the SimKernel simulator or a real
// filesystem), which is what a transcript of a scenario prints.
//
// Recorder holds its lock only while appending, never across the inner
// Manager's calls, so it adds no ordering the inner Manager does not have.
//
// SetValues through a Recorder calls its Set, and so records alike.
type Recorder struct {
	Manager

	mu sync.Mutex
	// writes is a ring of the latest limit writes (see pushRing): once it
	// is full, writes[next] is the oldest.
	writes []Write
	next   int
	limit  int
}

// RecorderOption configures a Recorder.
type RecorderOption func(*Recorder)

// RecordAtMost keeps the latest n writes (0: DefaultLogLimit; a negative n
// keeps every write).
func RecordAtMost(n int) RecorderOption {
	return func(r *Recorder) { r.limit = logLimit(n) }
}

// NewRecorder returns a Recorder over m.
func NewRecorder(m Manager, opts ...RecorderOption) *Recorder {
	r := &Recorder{Manager: m, limit: DefaultLogLimit}
	for _, opt := range opts {
		opt(r)
	}
	return r
}

// Set calls the inner Manager's Set and records the writes it returned, the
// failed one included, before returning them unchanged.
func (r *Recorder) Set(path string, v Values) ([]Write, error) {
	ws, err := r.Manager.Set(path, v)
	if len(ws) > 0 {
		r.mu.Lock()
		for _, w := range ws {
			r.writes, r.next = pushRing(r.writes, r.next, r.limit, w)
		}
		r.mu.Unlock()
	}
	return ws, err
}

// Writes returns a copy of the recorded writes kept, oldest first.
func (r *Recorder) Writes() []Write {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.writes) == 0 {
		return nil
	}
	older, newer := ringOrder(r.writes, r.next)
	return append(append(make([]Write, 0, len(r.writes)), older...), newer...)
}

// Reset forgets the recorded writes, so that the next Writes returns only
// what was written after it.
func (r *Recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes, r.next = nil, 0
}

// Unwrap returns the wrapped Manager, so that code looking for a capability
// of the Manager underneath (SimKernel's usage and OOM hooks) can
// find it through the Recorder.
func (r *Recorder) Unwrap() Manager { return r.Manager }

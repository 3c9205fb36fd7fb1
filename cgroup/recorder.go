package cgroup

import (
	"fmt"
	"sync"
)

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
	if !r.wraps() {
		return nil, fmt.Errorf("set %s: %w", path, ErrNoManager)
	}
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
	if r == nil {
		return nil
	}
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
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes, r.next = nil, 0
}

// Unwrap returns the wrapped Manager, so that code looking for a capability
// of the Manager underneath (SimKernel's usage and OOM hooks) can
// find it through the Recorder.
func (r *Recorder) Unwrap() Manager {
	if r == nil {
		return nil
	}
	return r.Manager
}

// wraps reports whether r has a Manager to pass calls to; without one (nil
// r, the zero Recorder, NewRecorder(nil)) every call answers ErrNoManager
// or a zero value. The Manager methods below are the embedded Manager's,
// spelled out so that they can say so rather than call a nil interface.
func (r *Recorder) wraps() bool { return r != nil && r.Manager != nil }

// Version is the wrapped Manager's.
func (r *Recorder) Version() Version {
	if !r.wraps() {
		return 0
	}
	return r.Manager.Version()
}

// Create is the wrapped Manager's.
func (r *Recorder) Create(path string) error {
	if !r.wraps() {
		return fmt.Errorf("create %s: %w", path, ErrNoManager)
	}
	return r.Manager.Create(path)
}

// Delete is the wrapped Manager's.
func (r *Recorder) Delete(path string) error {
	if !r.wraps() {
		return fmt.Errorf("delete %s: %w", path, ErrNoManager)
	}
	return r.Manager.Delete(path)
}

// Exists is the wrapped Manager's.
func (r *Recorder) Exists(path string) bool { return r.wraps() && r.Manager.Exists(path) }

// Get is the wrapped Manager's.
func (r *Recorder) Get(path string) (Values, error) {
	if !r.wraps() {
		return Values{}, fmt.Errorf("get %s: %w", path, ErrNoManager)
	}
	return r.Manager.Get(path)
}

// ReadFile is the wrapped Manager's.
func (r *Recorder) ReadFile(path, file string) (string, error) {
	if !r.wraps() {
		return "", fmt.Errorf("read %s/%s: %w", path, file, ErrNoManager)
	}
	return r.Manager.ReadFile(path, file)
}

// MemoryUsage is the wrapped Manager's.
func (r *Recorder) MemoryUsage(path string) (int64, error) {
	if !r.wraps() {
		return 0, fmt.Errorf("memory usage of %s: %w", path, ErrNoManager)
	}
	return r.Manager.MemoryUsage(path)
}

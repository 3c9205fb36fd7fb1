package cgroup

import (
	"errors"
	"fmt"
	"sync"
)

// ErrInjected is the error an injected fault fails with when Inject is given
// a nil error.
var ErrInjected = errors.New("injected cgroup write fault")

// FaultInjector is a Manager that fails chosen Set calls of the Manager it
// wraps, for tests and for the scenario runner's CgroupWrite faults. Every
// other call, and every Set no fault matches, goes to the wrapped Manager.
// It is safe for concurrent use.
type FaultInjector struct {
	m      Manager
	mu     sync.Mutex
	faults []*cgroupFault // in injection order; exhausted ones are removed
}

// cgroupFault is one injected fault and how many more Set calls it fails.
type cgroupFault struct {
	match     func(path string) bool
	err       error
	remaining int
}

// NewFaultInjector wraps m.
func NewFaultInjector(m Manager) *FaultInjector {
	return &FaultInjector{m: m}
}

// Inject makes the next times Set calls whose path match accepts fail with
// err (ErrInjected if err is nil). A Set that would change no file does not
// count. When several faults match a path, the one injected first is used
// up first. match runs under the injector's lock and must not call it; a
// nil match matches every path; times <= 0 injects nothing.
func (f *FaultInjector) Inject(match func(path string) bool, err error, times int) {
	if f == nil || times <= 0 {
		return
	}
	if match == nil {
		match = func(string) bool { return true }
	}
	if err == nil {
		err = ErrInjected
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = append(f.faults, &cgroupFault{match: match, err: err, remaining: times})
}

// Pending returns how many failing Set calls the injected faults have left.
func (f *FaultInjector) Pending() int {
	if f == nil {
		return 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	total := 0
	for _, fl := range f.faults {
		total += fl.remaining
	}
	return total
}

// matching returns the index of the first fault that matches path, or -1.
// The caller holds f.mu.
func (f *FaultInjector) matching(path string) int {
	for i, fl := range f.faults {
		if fl.match(path) {
			return i
		}
	}
	return -1
}

// Set fails, writing nothing, when a fault matches path and the call would
// change a file: it returns the first file's write with the fault's error
// as the only Write, and the error "write <path>/<file>: <err>". Otherwise
// it is the wrapped Manager's Set.
func (f *FaultInjector) Set(path string, v Values) ([]Write, error) {
	if !f.wraps() {
		return nil, fmt.Errorf("set %s: %w", path, ErrNoManager)
	}
	f.mu.Lock()
	i := f.matching(path)
	f.mu.Unlock()
	if i < 0 || !f.m.Exists(path) {
		return f.m.Set(path, v)
	}
	// Find the first file the wrapped Manager would write, reading its
	// files without holding f.mu, and judging "would change" as the
	// kernel would read the value back.
	version := f.m.Version()
	read := func(file string) (string, bool) {
		s, err := f.m.ReadFile(path, file)
		return s, err == nil
	}
	plan, n := planSet(version, v, read)
	first, old := -1, ""
	for j := range plan[:n] {
		cur, ok := read(plan[j].file)
		if canon, err := Canonical(version, plan[j].file, plan[j].content, cur); err == nil && ok && canon == cur {
			continue
		}
		first, old = j, cur
		break
	}
	if first < 0 {
		return f.m.Set(path, v)
	}
	// Consume the fault; another Set may have used it up meanwhile.
	f.mu.Lock()
	i = f.matching(path)
	if i < 0 {
		f.mu.Unlock()
		return f.m.Set(path, v)
	}
	fl := f.faults[i]
	fl.remaining--
	if fl.remaining == 0 {
		f.faults = append(f.faults[:i], f.faults[i+1:]...)
	}
	f.mu.Unlock()
	w := Write{Path: path, File: plan[first].file, Old: old, New: plan[first].content, Err: fl.err}
	return []Write{w}, fmt.Errorf("write %s/%s: %w", path, w.File, fl.err)
}

// SetValues is Set without the writes, as the function SetValues is for
// the Managers it knows: when no fault matches path it is SetValues on the
// wrapped Manager, so that a wrapped SimKernel keeps its fast path;
// otherwise it is Set, returning the file of the write Set returns.
func (f *FaultInjector) SetValues(path string, v Values) (string, error) {
	if !f.wraps() {
		return "", fmt.Errorf("set %s: %w", path, ErrNoManager)
	}
	f.mu.Lock()
	i := f.matching(path)
	f.mu.Unlock()
	if i < 0 {
		return SetValues(f.m, path, v)
	}
	return setForFile(f, path, v)
}

// Version is the wrapped Manager's.
func (f *FaultInjector) Version() Version {
	if !f.wraps() {
		return 0
	}
	return f.m.Version()
}

// wraps reports whether f has a Manager to pass calls to; without one
// (nil f, the zero FaultInjector, NewFaultInjector(nil)) every call
// answers ErrNoManager or a zero value.
func (f *FaultInjector) wraps() bool { return f != nil && f.m != nil }

// Create is the wrapped Manager's.
func (f *FaultInjector) Create(path string) error {
	if !f.wraps() {
		return fmt.Errorf("create %s: %w", path, ErrNoManager)
	}
	return f.m.Create(path)
}

// Delete is the wrapped Manager's.
func (f *FaultInjector) Delete(path string) error {
	if !f.wraps() {
		return fmt.Errorf("delete %s: %w", path, ErrNoManager)
	}
	return f.m.Delete(path)
}

// Exists is the wrapped Manager's.
func (f *FaultInjector) Exists(path string) bool { return f.wraps() && f.m.Exists(path) }

// Get is the wrapped Manager's.
func (f *FaultInjector) Get(path string) (Values, error) {
	if !f.wraps() {
		return Values{}, fmt.Errorf("get %s: %w", path, ErrNoManager)
	}
	return f.m.Get(path)
}

// ReadFile is the wrapped Manager's.
func (f *FaultInjector) ReadFile(path, file string) (string, error) {
	if !f.wraps() {
		return "", fmt.Errorf("read %s/%s: %w", path, file, ErrNoManager)
	}
	return f.m.ReadFile(path, file)
}

// MemoryUsage is the wrapped Manager's.
func (f *FaultInjector) MemoryUsage(path string) (int64, error) {
	if !f.wraps() {
		return 0, fmt.Errorf("memory usage of %s: %w", path, ErrNoManager)
	}
	return f.m.MemoryUsage(path)
}

// Unwrap returns the wrapped Manager, so that callers can reach the
// extras of a wrapped SimKernel (SetUsage, OnOOMKill) through decorators.
func (f *FaultInjector) Unwrap() Manager {
	if f == nil {
		return nil
	}
	return f.m
}

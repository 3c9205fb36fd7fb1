package cgroup_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/resizelet/resizelet/cgroup"
)

// scriptedManager is a Manager whose Set returns, call after call, the
// writes and error it was given, so the tests control exactly what the
// Recorder sees.
type scriptedManager struct {
	cgroup.Manager // nil: the tests call only Set and Version

	mu     sync.Mutex
	script []scriptedSet
	calls  int
}

type scriptedSet struct {
	writes []cgroup.Write
	err    error
}

func (m *scriptedManager) Version() cgroup.Version { return cgroup.V2 }

func (m *scriptedManager) Set(path string, v cgroup.Values) ([]cgroup.Write, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.calls >= len(m.script) {
		m.calls++
		return nil, nil
	}
	s := m.script[m.calls]
	m.calls++
	return s.writes, s.err
}

func TestRecorderKeepsWritesInOrder(t *testing.T) {
	errBusy := errors.New("device or resource busy")
	w := func(path, file, old, new string, err error) cgroup.Write {
		return cgroup.Write{Path: path, File: file, Old: old, New: new, Err: err}
	}
	tests := []struct {
		name   string
		script []scriptedSet
		want   []cgroup.Write
	}{
		{
			name: "one set with two writes",
			script: []scriptedSet{{writes: []cgroup.Write{
				w("kubepods/podA", "memory.max", "max", "209715200", nil),
				w("kubepods/podA", "cpu.max", "max 100000", "70000 100000", nil),
			}}},
			want: []cgroup.Write{
				w("kubepods/podA", "memory.max", "max", "209715200", nil),
				w("kubepods/podA", "cpu.max", "max 100000", "70000 100000", nil),
			},
		},
		{
			name: "sets concatenate in call order and a no-op set adds nothing",
			script: []scriptedSet{
				{writes: []cgroup.Write{w("kubepods/podA", "cpu.weight", "28", "32", nil)}},
				{},
				{writes: []cgroup.Write{w("kubepods/podA/ctr-1", "cpu.max", "70000 100000", "80000 100000", nil)}},
			},
			want: []cgroup.Write{
				w("kubepods/podA", "cpu.weight", "28", "32", nil),
				w("kubepods/podA/ctr-1", "cpu.max", "70000 100000", "80000 100000", nil),
			},
		},
		{
			name: "a failed write is recorded with its error",
			script: []scriptedSet{{
				writes: []cgroup.Write{w("kubepods/podA", "memory.limit_in_bytes", "209715200", "10240", errBusy)},
				err:    fmt.Errorf("write kubepods/podA/memory.limit_in_bytes: %w", errBusy),
			}},
			want: []cgroup.Write{w("kubepods/podA", "memory.limit_in_bytes", "209715200", "10240", errBusy)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inner := &scriptedManager{script: tt.script}
			r := cgroup.NewRecorder(inner)
			for i, s := range tt.script {
				ws, err := r.Set("p", cgroup.Values{})
				if !errors.Is(err, s.err) {
					t.Fatalf("Set %d: error %v, want %v", i, err, s.err)
				}
				if diff := cmp.Diff(s.writes, ws, cmpopts.EquateErrors()); diff != "" {
					t.Fatalf("Set %d returned other writes than the inner manager (-inner +got):\n%s", i, diff)
				}
			}
			if diff := cmp.Diff(tt.want, r.Writes(), cmpopts.EquateErrors(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Writes() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRecorderResetForgetsEarlierWrites(t *testing.T) {
	first := cgroup.Write{Path: "a", File: "cpu.weight", Old: "1", New: "2"}
	second := cgroup.Write{Path: "b", File: "cpu.weight", Old: "2", New: "3"}
	inner := &scriptedManager{script: []scriptedSet{{writes: []cgroup.Write{first}}, {writes: []cgroup.Write{second}}}}
	r := cgroup.NewRecorder(inner)
	if _, err := r.Set("a", cgroup.Values{}); err != nil {
		t.Fatal(err)
	}
	r.Reset()
	if got := r.Writes(); len(got) != 0 {
		t.Fatalf("Writes() after Reset = %v, want none", got)
	}
	if _, err := r.Set("b", cgroup.Values{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]cgroup.Write{second}, r.Writes()); diff != "" {
		t.Errorf("Writes() after Reset and one Set (-want +got):\n%s", diff)
	}
}

func TestRecorderWritesReturnsACopy(t *testing.T) {
	inner := &scriptedManager{script: []scriptedSet{{writes: []cgroup.Write{{Path: "a", File: "memory.max", New: "1"}}}}}
	r := cgroup.NewRecorder(inner)
	if _, err := r.Set("a", cgroup.Values{}); err != nil {
		t.Fatal(err)
	}
	got := r.Writes()
	got[0].New = "changed"
	if again := r.Writes(); again[0].New != "1" {
		t.Errorf("changing the slice Writes returned changed the record: %q", again[0].New)
	}
}

func TestRecorderDelegatesOtherMethods(t *testing.T) {
	r := cgroup.NewRecorder(&scriptedManager{})
	if got := r.Version(); got != cgroup.V2 {
		t.Errorf("Version() = %v, want the inner manager's v2", got)
	}
}

func TestRecorderConcurrentSets(t *testing.T) {
	const n = 50
	script := make([]scriptedSet, n)
	for i := range script {
		script[i] = scriptedSet{writes: []cgroup.Write{{Path: fmt.Sprint(i), File: "cpu.weight"}}}
	}
	r := cgroup.NewRecorder(&scriptedManager{script: script})
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = r.Set("x", cgroup.Values{})
			_ = r.Writes()
		}()
	}
	wg.Wait()
	if got := len(r.Writes()); got != n {
		t.Errorf("recorded %d writes from %d concurrent Sets, want %d", got, n, n)
	}
}

func TestRecorderUnwrapReturnsInner(t *testing.T) {
	inner := &scriptedManager{}
	r := cgroup.NewRecorder(inner)
	if got := r.Unwrap(); got != cgroup.Manager(inner) {
		t.Errorf("Unwrap() = %v, want the wrapped manager", got)
	}
}

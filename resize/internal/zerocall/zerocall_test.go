package zerocall

import (
	"errors"
	"strings"
	"testing"
	"time"
)

type sample struct{ n int }

func (s *sample) Deref() int { return s.n }
func (s *sample) Guarded() (int, error) {
	if s == nil {
		return 0, errors.New("nil sample")
	}
	return s.n, nil
}
func (s sample) Value() int       { return s.n }
func (s *sample) Wait(c chan int) { <-c }
func (s *sample) Sum(base int, more ...int) int {
	for _, m := range more {
		base += m
	}
	return base
}

// TestMethods: a nil receiver's dereference panics and is reported with
// its method; a nil channel that is waited on blocks and is reported; a
// nil pointer's value methods are left out; variadic methods get no
// variadic arguments; skipped methods are reported as skipped.
func TestMethods(t *testing.T) {
	got := map[string]Result{}
	for _, r := range Methods("*sample", (*sample)(nil), Options{Skip: map[string]string{"Sum": "a reason"}, Timeout: 200 * time.Millisecond}) {
		got[r.Name] = r
	}
	if r := got["*sample.Deref"]; r.Panic == nil || !strings.Contains(r.String(), "*sample.Deref: panicked") || !strings.Contains(r.Stack, "Deref") {
		t.Errorf("Deref on nil: %+v, want a panic naming the method", r)
	}
	if r := got["*sample.Guarded"]; r.Failed() || r.Err() == nil || !r.ReturnsError() {
		t.Errorf("Guarded on nil: %+v, want the error it returns", r)
	}
	if r := got["*sample.Wait"]; !r.Blocked || !r.Failed() {
		t.Errorf("Wait on a nil channel: %+v, want it reported as blocked", r)
	}
	if r, ok := got["*sample.Value"]; ok {
		t.Errorf("a nil pointer's value method was called: %+v", r)
	}
	if r := got["*sample.Sum"]; r.Skipped != "a reason" || r.Failed() {
		t.Errorf("Sum: %+v, want it skipped", r)
	}
	if len(got) != 4 {
		t.Errorf("%d results, want 4: %v", len(got), got)
	}

	got = map[string]Result{}
	for _, r := range Methods("*sample", &sample{n: 2}, Options{Skip: map[string]string{"Wait": "blocks"}, Timeout: time.Second}) {
		got[r.Name] = r
	}
	for _, name := range []string{"Deref", "Guarded", "Value", "Sum"} {
		if r := got["*sample."+name]; r.Failed() || len(r.Out) != 1 && len(r.Out) != 2 {
			t.Errorf("%s on a real value: %+v", name, r)
		}
	}
	if r := got["*sample.Sum"]; r.Out[0].Int() != 0 {
		t.Errorf("Sum(0) = %v, want 0", r.Out[0])
	}

	// Only limits the calls.
	only := Methods("*sample", &sample{}, Options{Only: []string{"Value"}})
	if len(only) != 1 || only[0].Name != "*sample.Value" {
		t.Errorf("Only Value: %v", only)
	}
}

// TestCall: a function with zero arguments, one that panics, and a
// value that is not a function.
func TestCall(t *testing.T) {
	if r := Call("strings.Repeat", strings.Repeat, 0); r.Failed() || r.Out[0].String() != "" {
		t.Errorf("strings.Repeat: %+v", r)
	}
	if r := Call("panics", func(m map[string]int) { m["a"] = 1 }, 0); r.Panic == nil {
		t.Errorf("a write to a nil map: %+v, want a panic", r)
	}
	if r := Call("not a func", 3, 0); !r.Failed() {
		t.Errorf("a non-func: %+v, want a failure", r)
	}
	if names := MethodNames(&sample{}); len(names) != 5 {
		t.Errorf("MethodNames = %v, want the 5 exported methods", names)
	}
}

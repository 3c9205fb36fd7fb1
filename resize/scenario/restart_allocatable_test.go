package scenario_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/resizelet/resizelet/resize/scenario"
)

// TestRestartAllocatableParses: restartKubelet takes an optional
// allocatable, kept as the amounts the file names; empty braces, null,
// and an empty or null allocatable change nothing, and the step names its
// amounts.
func TestRestartAllocatableParses(t *testing.T) {
	s, err := scenario.Parse("ok.yaml", []byte(`
name: restarts
node: {capacity: {cpu: "4"}}
steps:
- restartKubelet: {allocatable: {cpu: 3500m}}
- restartKubelet: {}
- restartKubelet: null
- restartKubelet: {allocatable: {}}
- restartKubelet: {allocatable: null}
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Steps[0].Allocatable; len(got) != 1 || got.Cpu().Cmp(resource.MustParse("3500m")) != 0 {
		t.Errorf("steps[0] allocatable %v, want cpu 3500m only", got)
	}
	if got, want := s.Steps[0].String(), "restartKubelet allocatable {cpu: 3500m}"; got != want {
		t.Errorf("steps[0] is %q, want %q", got, want)
	}
	for _, i := range []int{1, 2, 3, 4} {
		if s.Steps[i].Allocatable != nil || s.Steps[i].String() != "restartKubelet" {
			t.Errorf("steps[%d]: %q with allocatable %v, want a plain restart", i, s.Steps[i], s.Steps[i].Allocatable)
		}
	}
}

// TestRestartAllocatableRejectsBadAmounts: a restart's allocatable, put
// in place of the amounts it names in the allocatable in force, must be
// one the node could have; the error names the step and the amount.
func TestRestartAllocatableRejectsBadAmounts(t *testing.T) {
	const head = "name: x\nnode: {capacity: {cpu: \"4\"}, allocatable: {cpu: \"3\"}}\nsteps:\n"
	for _, tc := range []struct {
		name, steps string
		step        int
		field, msg  string
	}{
		{"above the capacity", "- restartKubelet: {allocatable: {cpu: \"5\"}}\n", 0, "restartKubelet.allocatable.cpu", "more than the capacity 4"},
		{"negative", "- advance: 1s\n- restartKubelet: {allocatable: {memory: -1Gi}}\n", 1, "restartKubelet.allocatable.memory", "negative"},
		{"malformed", "- restartKubelet: {allocatable: {cpu: lots}}\n", 0, "restartKubelet.allocatable.cpu", "malformed quantity"},
		{"not a map", "- restartKubelet: {allocatable: 4}\n", 0, "restartKubelet.allocatable", "map"},
		{"unknown key", "- restartKubelet: {capacity: {cpu: \"8\"}}\n", 0, "restartKubelet.capacity", "unknown key (want one of allocatable)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := scenario.Parse("bad.yaml", []byte(head+tc.steps))
			var se *scenario.Error
			if !errors.As(err, &se) {
				t.Fatalf("Parse error = %v, want a *scenario.Error", err)
			}
			if se.Step != tc.step || se.Field != tc.field || !strings.Contains(se.Msg, tc.msg) {
				t.Errorf("error at step %d field %q: %q; want step %d field %q containing %q", se.Step, se.Field, se.Msg, tc.step, tc.field, tc.msg)
			}
		})
	}
}

// TestRestartAllocatableStays: the allocatable a restart sets is the one
// of every later kubelet: after a second plain restart a pod that fits
// the first allocatable but not the new one is still rejected, and one
// that fits is admitted.
func TestRestartAllocatableStays(t *testing.T) {
	s, err := scenario.Parse("stays.yaml", []byte(`
name: stays
node: {capacity: {cpu: "4"}}
pods:
- metadata: {name: a}
  spec:
    containers:
    - {name: c, resources: {requests: {cpu: "1"}}}
steps:
- restartKubelet: {allocatable: {cpu: "2"}}
- restartKubelet: {}
- add:
    pod:
      metadata: {name: big}
      spec:
        containers:
        - {name: c, resources: {requests: {cpu: 1500m}}}
- add:
    pod:
      metadata: {name: small}
      spec:
        containers:
        - {name: c, resources: {requests: {cpu: "1"}}}
- expect: {pod: big, admitted: false, node: {allocated: {cpu: "2"}}}
- expect: {pod: small, admitted: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := scenario.Run(context.Background(), s, scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range res.Mismatches {
		t.Errorf("mismatch: %s", m)
	}
	text := string(res.Transcript)
	if !strings.Contains(text, "== steps[0]: restartKubelet allocatable {cpu: 2}\n  kubelet stopped\n  allocatable now {cpu: 2, memory: 64Gi, pods: 110}\n") {
		t.Errorf("the transcript does not report the new allocatable:\n%s", text)
	}
	if strings.Count(text, "allocatable now") != 1 {
		t.Errorf("the plain restart reported an allocatable:\n%s", text)
	}
}

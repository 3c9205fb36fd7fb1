package scenario_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/resizelet/resizelet/resize/scenario"
)

// FuzzParse checks that Parse never panics, that every rejection is a
// *scenario.Error naming the file, and that an accepted scenario has a
// name and at least one step with exactly one action.
func FuzzParse(f *testing.F) {
	f.Add([]byte("name: x\nsteps: [{advance: 30s}]\n"))
	f.Add([]byte("name: x" + validPods + "steps:\n- resize: {pod: web, patch: '{\"spec\":{}}'}\n- expect: {pod: web, conditions: []}\n"))
	f.Add([]byte("name: x\nnode: {capacity: {cpu: 2}}\nsteps: [{restartKubelet: {}}]\n"))
	f.Add([]byte("name: [\n"))
	f.Add([]byte("{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := scenario.Parse("fuzz.yaml", data)
		if err != nil {
			var se *scenario.Error
			if !errors.As(err, &se) {
				t.Fatalf("error %v is a %T, not a *scenario.Error", err, err)
			}
			if !strings.HasPrefix(err.Error(), "fuzz.yaml: ") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if s.Name == "" || len(s.Steps) == 0 {
			t.Fatalf("accepted a scenario without a name or steps: %+v", s)
		}
		for i, st := range s.Steps {
			if st.Action == "" || (st.Action == scenario.ActionExpect) != (st.Expect != nil) {
				t.Fatalf("step %d is malformed: %+v", i, st)
			}
		}
	})
}

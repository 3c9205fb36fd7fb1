package scenario_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resizelet/resizelet/resize/scenario"
)

// unclaimedPods is one running pod; its container is app, so a resize of
// "ap" is refused by the API server.
const unclaimedPods = `name: unclaimed
pods:
- metadata: {name: web}
  spec:
    containers:
    - name: app
      resources: {requests: {cpu: 100m, memory: 64Mi}}
steps:
`

const (
	typoResize = `- resize: {pod: web, patch: '{"spec":{"containers":[{"name":"ap","resources":{"requests":{"cpu":"200m"}}}]}}'}` + "\n"
	goodResize = `- resize: {pod: web, patch: '{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"200m"}}}]}}'}` + "\n"
)

// TestUnclaimedStepErrorFailsTheFile: an action step whose call fails
// fails the file unless an expect.error after it, before the next action
// step, claims the error; error: "" claims any error.
func TestUnclaimedStepErrorFailsTheFile(t *testing.T) {
	tests := []struct {
		name  string
		steps string
		want  []int // the steps of the unclaimed errors
	}{
		{"last step", typoResize, []int{0}},
		{"next action", typoResize + goodResize, []int{0}},
		{"expect without error", typoResize + "- expect: {pod: web, generation: 1}\n" + goodResize, []int{0}},
		{"claimed", typoResize + `- expect: {error: "may not be added"}` + "\n" + goodResize, nil},
		{"claimed by a later expect", typoResize + "- expect: {pod: web, generation: 1}\n" + `- expect: {error: "may not be added"}` + "\n", nil},
		{"claimed as any error", typoResize + `- expect: {error: ""}` + "\n", nil},
		{"two", typoResize + typoResize + `- expect: {error: "may not be added"}` + "\n" + typoResize, []int{0, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := scenario.Parse("unclaimed.yaml", []byte(unclaimedPods+tt.steps))
			if err != nil {
				t.Fatal(err)
			}
			res, err := scenario.Run(context.Background(), s, scenario.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, m := range res.Mismatches {
				if m.Action != scenario.ActionResize || m.Path != "error" || !strings.Contains(m.Got, "containers may not be added or removed") {
					t.Errorf("mismatch %+v: want the resize's unclaimed error", m)
				}
				got = append(got, m.Step)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("steps with unclaimed errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUnclaimedErrorString: the mismatch names the step and the action,
// says what is missing and gives the error.
func TestUnclaimedErrorString(t *testing.T) {
	m := scenario.Mismatch{Step: 3, Path: "error", Want: "an expect.error after the step", Got: "boom", Action: scenario.ActionResize}
	want := "steps[3]: resize failed, and no expect.error after it claims the error:\n  boom"
	if got := m.String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

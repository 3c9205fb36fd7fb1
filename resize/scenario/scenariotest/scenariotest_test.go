package scenariotest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/resizelet/resizelet/resize/scenario"
)

// TestRunShippedScenarios runs some of the repository's own scenarios
// through the helper: every expectation holds and every golden transcript
// matches.
func TestRunShippedScenarios(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "testdata", "scenarios")
	Run(t, filepath.Join(dir, "walkthrough.yaml"), filepath.Join(dir, "deferred-*.yaml"))
}

// TestCheckReportsProblems: a right scenario has no problem; a wrong
// expectation and a transcript that differs from its golden are each
// reported; a file that does not parse is an error.
func TestCheckReportsProblems(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	story := func(name, qos string) string {
		return `name: ` + name + `
pods:
- metadata: {name: web}
  spec:
    containers:
    - name: app
      resources: {requests: {cpu: 500m, memory: 128Mi}, limits: {cpu: 500m, memory: 128Mi}}
steps:
- expect: {pod: web, qosClass: ` + qos + `}
`
	}
	right := write("right.yaml", story("right", "Guaranteed"))
	wrong := write("wrong.yaml", story("wrong", "Burstable"))
	drifted := write("drifted.yaml", story("drifted", "Guaranteed"))
	write("drifted.golden", "not the transcript\n")
	broken := write("broken.yaml", "name: broken\nsteps: 3\n")

	if _, problems, err := check(right, scenario.Options{}); err != nil || len(problems) != 0 {
		t.Errorf("right scenario: %v, %q", err, problems)
	}
	if _, problems, err := check(wrong, scenario.Options{}); err != nil || len(problems) != 1 || !strings.Contains(problems[0], "qosClass") {
		t.Errorf("wrong expectation: %v, %q; want one qosClass mismatch", err, problems)
	}
	if _, problems, err := check(drifted, scenario.Options{}); err != nil || len(problems) != 1 || !strings.Contains(problems[0], "transcript differs from") {
		t.Errorf("drifted transcript: %v, %q; want one transcript difference", err, problems)
	}
	if _, _, err := check(broken, scenario.Options{}); err == nil {
		t.Error("a scenario that does not parse gave no error")
	}
}

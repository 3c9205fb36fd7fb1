package scenariotest

import (
	"context"
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

	if _, problems, err := check(right, scenario.Options{}, false); err != nil || len(problems) != 0 {
		t.Errorf("right scenario: %v, %q", err, problems)
	}
	if _, problems, err := check(wrong, scenario.Options{}, false); err != nil || len(problems) != 1 || !strings.Contains(problems[0], "qosClass") {
		t.Errorf("wrong expectation: %v, %q; want one qosClass mismatch", err, problems)
	}
	if _, problems, err := check(drifted, scenario.Options{}, false); err != nil || len(problems) != 1 || !strings.Contains(problems[0], "transcript differs from") {
		t.Errorf("drifted transcript: %v, %q; want one transcript difference", err, problems)
	}
	if _, _, err := check(broken, scenario.Options{}, false); err == nil {
		t.Error("a scenario that does not parse gave no error")
	}
}

// TestCheckPointsAtTheYAML: a mismatch is reported at the file and the
// line of its step, as given to the test.
func TestCheckPointsAtTheYAML(t *testing.T) {
	path := filepath.Join(t.TempDir(), "web.yaml")
	story := "name: web\npods:\n- metadata: {name: web}\n  spec:\n    containers:\n    - {name: app, resources: {requests: {cpu: 100m}}}\nsteps:\n- advance: 1s\n- expect: {pod: web, qosClass: Guaranteed}\n"
	if err := os.WriteFile(path, []byte(story), 0o644); err != nil {
		t.Fatal(err)
	}
	_, problems, err := check(path, scenario.Options{}, false)
	if err != nil || len(problems) != 1 {
		t.Fatalf("check: %v, %q; want one mismatch", err, problems)
	}
	if want := path + ":9: steps[1]: expect.qosClass"; !strings.HasPrefix(problems[0], want) {
		t.Errorf("problem %q does not start with %q", problems[0], want)
	}
}

// TestCheckWritesGoldens: with write, check writes the golden transcript
// of a file that has none and replaces one that differs; the next check
// without write then finds the transcript equal to it.
func TestCheckWritesGoldens(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "web.yaml")
	story := "name: web\npods:\n- metadata: {name: web}\n  spec:\n    containers:\n    - {name: app, resources: {requests: {cpu: 100m}}}\nsteps:\n- expect: {pod: web, qosClass: Burstable}\n"
	if err := os.WriteFile(path, []byte(story), 0o644); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join(dir, "web.golden")
	for _, before := range []string{"", "an old transcript\n"} {
		if before != "" {
			if err := os.WriteFile(golden, []byte(before), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if _, problems, err := check(path, scenario.Options{}, true); err != nil || len(problems) != 0 {
			t.Fatalf("check with write: %v, %q", err, problems)
		}
		got, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if want := transcript(t, path); string(got) != want {
			t.Errorf("written golden:\n%s\nwant the transcript:\n%s", got, want)
		}
		if _, problems, err := check(path, scenario.Options{}, false); err != nil || len(problems) != 0 {
			t.Errorf("check after write: %v, %q; want the transcript equal to the golden", err, problems)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Errorf("directory holds %d files, want the scenario and its golden (no temporary file left)", len(entries))
	}
}

// transcript is the transcript of a run of the scenario file, named by its
// base name as check names it.
func transcript(t *testing.T, path string) string {
	t.Helper()
	s, err := scenario.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	s.File = filepath.Base(path)
	res, err := scenario.Run(context.Background(), s, scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return string(res.Transcript)
}

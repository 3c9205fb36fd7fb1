package scenario_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resizelet/resizelet/resize/scenario"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata/scenarios")

// scenarioDir holds the scenario suite and its golden transcripts.
const scenarioDir = "../../testdata/scenarios"

// TestScenarios runs every scenario of the suite against the engine: every
// expectation must hold, and the transcript must equal the golden file
// beside the scenario (go test ./resize/scenario/ -update rewrites them).
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(scenarioDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no scenarios in %s", scenarioDir)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			s, err := scenario.Load(file)
			if err != nil {
				t.Fatal(err)
			}
			s.File = filepath.Base(file) // the transcript names the file, not where the test runs from
			res, err := scenario.Run(context.Background(), s, scenario.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range res.Mismatches {
				t.Errorf("%s", m)
			}
			golden := strings.TrimSuffix(file, ".yaml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, res.Transcript, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), string(res.Transcript)); diff != "" {
				t.Errorf("transcript differs from %s (-golden +got):\n%s", golden, diff)
			}
		})
	}
}

// TestScenariosFrozen runs every scenario with every settled pod frozen at
// once (HotPods -1: the API server and the kubelet keep no pod decoded
// between inputs): the transcripts must be the golden ones, byte for byte,
// and every expectation must hold. Freezing changes memory, never
// behaviour.
func TestScenariosFrozen(t *testing.T) {
	checkGoldensWith(t, "frozen pods", func(*testing.T) scenario.Options { return scenario.Options{HotPods: -1} })
}

// checkGoldensWith runs every scenario of the suite with the options opts
// gives and fails when an expectation does not hold or a transcript is
// not the golden one: what changes only how the run is done (named by
// what) must not change what it does.
func checkGoldensWith(t *testing.T, what string, opts func(*testing.T) scenario.Options) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(scenarioDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios in %s (%v)", scenarioDir, err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			s, err := scenario.Load(file)
			if err != nil {
				t.Fatal(err)
			}
			s.File = filepath.Base(file)
			res, err := scenario.Run(context.Background(), s, opts(t))
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range res.Mismatches {
				t.Errorf("%s", m)
			}
			want, err := os.ReadFile(strings.TrimSuffix(file, ".yaml") + ".golden")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(res.Transcript)); diff != "" {
				t.Errorf("%s change the transcript (-golden +got):\n%s", what, diff)
			}
		})
	}
}

// TestTranscriptIsStable runs the same scenario twice: the transcripts must
// be the same bytes, so that they can be golden files.
func TestTranscriptIsStable(t *testing.T) {
	s, err := scenario.Load(filepath.Join(scenarioDir, "walkthrough.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	first, err := scenario.Run(context.Background(), s, scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	second, err := scenario.Run(context.Background(), s, scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Transcript, second.Transcript) {
		t.Errorf("two runs of the same scenario gave different transcripts:\n%s", cmp.Diff(string(first.Transcript), string(second.Transcript)))
	}
}

// TestRunReportsMismatches checks that a wrong expectation is a Mismatch
// naming the step, the key path, the wanted and the found value, and that
// a right one is not.
func TestRunReportsMismatches(t *testing.T) {
	s, err := scenario.Parse("wrong.yaml", []byte(`
name: wrong-expectations
pods:
- metadata: {name: web}
  spec:
    containers:
    - name: app
      resources: {requests: {cpu: 100m, memory: 64Mi}}
steps:
- expect:
    pod: web
    qosClass: Burstable
    containers:
      app:
        resources: {requests: {cpu: 900m, memory: 64Mi}}
- resize: {pod: web, patch: '{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"200m"}}}]}}'}
- expect:
    pod: web
    generation: 5
    error: "something"
`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := scenario.Run(context.Background(), s, scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []scenario.Mismatch{
		{Step: 0, Path: "containers.app.resources.requests.cpu", Want: "900m", Got: "100m"},
		{Step: 2, Path: "error", Want: `an error containing "something"`, Got: "no error"},
		{Step: 2, Path: "generation", Want: "5", Got: "2"},
	}
	if diff := cmp.Diff(want, res.Mismatches); diff != "" {
		t.Errorf("mismatches (-want +got):\n%s", diff)
	}
	if !bytes.Contains(res.Transcript, []byte("MISMATCH expect.generation: want 5, got 2")) {
		t.Errorf("the transcript does not show the generation mismatch:\n%s", res.Transcript)
	}
}

// TestRunRejectsPodThatDoesNotFit checks the rule of pods: a pod that is
// not admitted makes the scenario invalid unless an expect names it with
// admitted: false.
func TestRunRejectsPodThatDoesNotFit(t *testing.T) {
	const pods = `
node: {capacity: {cpu: "1"}}
pods:
- metadata: {name: big}
  spec:
    containers:
    - name: app
      resources: {requests: {cpu: "2"}}
`
	tests := []struct {
		name    string
		steps   string
		invalid bool
	}{
		{"not expected", "steps: [{expect: {pod: big, qosClass: Burstable}}]\n", true},
		{"expected rejected", "steps: [{expect: {pod: big, admitted: false}}]\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := scenario.Parse("fit.yaml", []byte("name: fit\n"+pods+tt.steps))
			if err != nil {
				t.Fatal(err)
			}
			res, err := scenario.Run(context.Background(), s, scenario.Options{})
			var se *scenario.Error
			if tt.invalid {
				if !errorsAs(err, &se) || se.Field != "pods[0]" {
					t.Fatalf("Run error = %v, want a *scenario.Error for pods[0]", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Mismatches) != 0 {
				t.Errorf("mismatches: %v", res.Mismatches)
			}
		})
	}
}

// TestNotApplicable: on a real runtime, files that need the in-memory
// runtime are refused with ErrNotApplicable and a reason, before anything
// is started; in simulation every file applies.
func TestNotApplicable(t *testing.T) {
	real := scenario.Options{CRIEndpoint: "unix:///nonexistent.sock", Image: "busybox"}
	for _, tc := range []struct {
		yaml string
		why  string
	}{
		{"name: x\nsteps: [{advance: 1s}]\n", ""},
		{"name: x\nnode: {cgroupDriver: systemd}\nsteps: [{advance: 1s}]\n", "systemd"},
		{"name: x\npods: [{metadata: {name: p}, spec: {containers: [{name: c}]}}]\nsteps: [{exit: {pod: p, container: c, exitCode: 1}}]\n", "exit steps"},
		{"name: x\npods: [{metadata: {name: p}, spec: {containers: [{name: c}]}}]\nsteps: [{usage: {pod: p, container: c, memory: 200Mi}}]\n", "/dev/shm"},
	} {
		s, err := scenario.Parse("x.yaml", []byte(tc.yaml))
		if err != nil {
			t.Fatal(err)
		}
		if why := scenario.NotApplicable(s, scenario.Options{}); why != "" {
			t.Errorf("%q: not applicable in simulation: %s", tc.yaml, why)
		}
		why := scenario.NotApplicable(s, real)
		if (why == "") != (tc.why == "") || !strings.Contains(why, tc.why) {
			t.Errorf("%q: NotApplicable = %q, want it to mention %q", tc.yaml, why, tc.why)
		}
		if tc.why != "" {
			if _, err := scenario.Run(context.Background(), s, real); !errorsIs(err, scenario.ErrNotApplicable) {
				t.Errorf("%q: Run error %v, want ErrNotApplicable", tc.yaml, err)
			}
		}
	}
	// On a runtime with the systemd driver the systemd files apply and the
	// cgroupfs ones do not.
	sd := real
	sd.CgroupDriver = "systemd"
	for yaml, why := range map[string]string{
		"name: x\nnode: {cgroupDriver: systemd}\nsteps: [{advance: 1s}]\n":  "",
		"name: x\nnode: {cgroupDriver: cgroupfs}\nsteps: [{advance: 1s}]\n": "the cgroupfs cgroup driver (the runtime is set up for systemd)",
		"name: x\nsteps: [{advance: 1s}]\n":                                 "the cgroupfs cgroup driver (the runtime is set up for systemd)",
	} {
		s, err := scenario.Parse("x.yaml", []byte(yaml))
		if err != nil {
			t.Fatal(err)
		}
		if got := scenario.NotApplicable(s, sd); got != why {
			t.Errorf("%q on a systemd runtime: NotApplicable = %q, want %q", yaml, got, why)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEmbeddedWalkthroughIsTheSuiteCopy(t *testing.T) {
	suite, err := os.ReadFile("../../testdata/scenarios/walkthrough.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(suite, walkthrough) {
		t.Error("examples/resizesim/walkthrough.yaml differs from testdata/scenarios/walkthrough.yaml; copy it over")
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const wrongExpectation = `
name: wrong
pods:
- metadata: {name: web}
  spec:
    containers:
    - name: app
      resources: {requests: {cpu: 100m}}
steps:
- resize: {pod: web, patch: '{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"200m"}}}]}}'}
- expect:
    pod: web
    containers:
      app: {resources: {requests: {cpu: 300m}}}
`

const badDuration = `
name: bad
steps:
- advance: 30s
- advance: soon
`

func TestRun(t *testing.T) {
	good := writeFile(t, "good.yaml", strings.Replace(wrongExpectation, "cpu: 300m", "cpu: 200m", 1))
	wrong := writeFile(t, "wrong.yaml", wrongExpectation)
	bad := writeFile(t, "bad.yaml", badDuration)
	notYAML := writeFile(t, "notyaml.yaml", "name: [\n")
	v137 := writeFile(t, "v137.yaml", "name: v137\nkubelet: \"1.37\"\npods: []\nsteps:\n- advance: 1s\n")
	v138 := writeFile(t, "v138.yaml", "name: v138\nkubelet: \"1.38\"\npods: []\nsteps: []\n")
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout []string
		wantStderr []string
	}{
		{
			name:     "no arguments runs the walkthrough",
			wantCode: exitOK,
			wantStdout: []string{
				"Scenario: walkthrough",
				"Pod resize started: {\"containers\":[{\"name\":\"pause\",\"resources\":{\"limits\":{\"cpu\":\"800m\",\"memory\":\"200Mi\"},\"requests\":{\"cpu\":\"800m\",\"memory\":\"200Mi\"}}}],\"generation\":2}",
				"Container pause resize requires restart",
				"Node didn't have enough capacity: cpu, requested: 1000000, capacity: 16000",
				"NAME", "READY", "STATUS", "RESTARTS", "AGE",
				"PASS walkthrough.yaml",
			},
		},
		{name: "passing file", args: []string{"run", good}, wantCode: exitOK, wantStdout: []string{"PASS " + good}},
		{
			name:     "wrong expectation",
			args:     []string{"run", wrong},
			wantCode: exitMismatch,
			wantStdout: []string{
				"FAIL " + wrong,
				wrong + ":11: steps[1]: expect.containers.app.resources.requests.cpu",
				"- want: 300m",
				"+ got:  200m",
			},
		},
		{name: "invalid step", args: []string{"run", bad}, wantCode: exitInvalid, wantStderr: []string{bad + ": steps[1]: advance: malformed duration"}},
		{name: "not YAML", args: []string{"run", notYAML}, wantCode: exitInvalid, wantStderr: []string{notYAML + ": not valid YAML"}},
		{name: "worst status wins", args: []string{"run", good, wrong, bad}, wantCode: exitInvalid, wantStdout: []string{"PASS " + good, "FAIL " + wrong}},
		{name: "missing file", args: []string{"run", filepath.Join(t.TempDir(), "none.yaml")}, wantCode: exitInvalid, wantStderr: []string{"none.yaml"}},
		{name: "run without files", args: []string{"run"}, wantCode: exitInvalid, wantStderr: []string{"at least one scenario file"}},
		{name: "unknown command", args: []string{"walk"}, wantCode: exitInvalid, wantStderr: []string{`unknown command "walk"`,
			"kubelet versions (a scenario's kubelet key): 1.33, 1.34, 1.35, 1.36, 1.37 (default 1.35)"}},
		{name: "1.37 is a kubelet version", args: []string{"run", v137}, wantCode: exitOK, wantStdout: []string{"Kubelet 1.37 on node", "PASS " + v137}},
		{name: "unknown kubelet version", args: []string{"run", v138}, wantCode: exitInvalid,
			wantStderr: []string{v138 + `: kubelet: unknown kubelet version "1.38": want one of 1.33, 1.34, 1.35, 1.36, 1.37`}},
		{name: "cgroup root that is no cgroup filesystem", args: []string{"--cgroup-root", t.TempDir(), "run", good}, wantCode: exitInvalid, wantStderr: []string{"--cgroup-root", "not supported on this host"}},
		// A relative directory is taken from the working directory (the
		// backend takes absolute ones only): this one is no cgroup
		// filesystem either.
		{name: "relative cgroup root", args: []string{"--cgroup-root", "./", "run", good}, wantCode: exitInvalid, wantStderr: []string{"--cgroup-root ./", "not supported on this host"}},
		{name: "runtime socket that is not there, flags after the files", args: []string{"run", good, "--cri-endpoint", "unix:///nonexistent/x.sock", "--image", "busybox"}, wantCode: exitInvalid, wantStderr: []string{"--cri-endpoint unix:///nonexistent/x.sock", "no such file"}},
		{name: "runtime without image", args: []string{"--cri-endpoint", "unix:///run/x.sock"}, wantCode: exitInvalid, wantStderr: []string{"needs --image"}},
		{name: "runtime handler without runtime", args: []string{"--runtime-handler", "crun", "run", "f.yaml"}, wantCode: exitInvalid, wantStderr: []string{"--runtime-handler needs --cri-endpoint"}},
		{name: "cgroup driver without runtime", args: []string{"--cgroup-driver", "systemd", "run", "f.yaml"}, wantCode: exitInvalid, wantStderr: []string{"--cgroup-driver needs --cri-endpoint"}},
		{name: "unknown cgroup driver", args: []string{"--cgroup-driver", "sd", "--cri-endpoint", "unix:///run/x.sock", "--image", "busybox", "run", "f.yaml"}, wantCode: exitInvalid, wantStderr: []string{`--cgroup-driver "sd": want cgroupfs or systemd`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tt.args, &stdout, &stderr)
			if code != tt.wantCode {
				t.Errorf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, stdout.String(), stderr.String())
			}
			for _, want := range tt.wantStdout {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
				}
			}
			for _, want := range tt.wantStderr {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
				}
			}
		})
	}
}

// TestPlanCommand: resizesim plan prints each resize step's dry run (the
// decision, the admission arithmetic and the actions), refusals by the API
// server as such, and exits 0 whatever the file's expectations say.
func TestPlanCommand(t *testing.T) {
	file := writeFile(t, "wrong.yaml", wrongExpectation+`- resize: {pod: web, patch: '{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":null}}}]}}'}
`)
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"plan", file}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"== steps[0]: resize default/web\nresize default/web generation 2: Admitted\n",
		"fit cpu: requested 200, used by other pods 0, allocatable 16000: fits",
		"UpdateContainerResources app {shares=204",
		"== steps[2]: resize default/web\nrefused by the API server: ",
		"resource requests cannot be removed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "FAIL") {
		t.Errorf("plan checked expectations:\n%s", out)
	}
}

// TestExploreCommand: resizesim explore prints a table per file and a
// summary, exits 0 when every drift is the kubelet's, and takes the
// opt-in fixes as flags.
func TestExploreCommand(t *testing.T) {
	file := "../../testdata/scenarios/cpu-decrease-guaranteed.yaml"
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"explore", file}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d, stderr %s\n%s", code, stderr.String(), stdout.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"Scenario: cpu-decrease-guaranteed (" + file + "), reconcilePodCgroups off, flushCheckpoints off",
		"drift (kubelet)",
		"[pod-cgroup-not-reconciled]",
		"Summary: 1 files (0 skipped), ",
		"points show the kubelet's gap [pod-cgroup-not-reconciled]",
		"PASS: nothing broken or stuck, every drift is the kubelet's own",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	stdout.Reset()
	if code := run(context.Background(), []string{"explore", "--reconcile-pod-cgroups", "--flush-checkpoints", "--steps", "resize", file}, &stdout, &stderr); code != exitOK {
		t.Fatalf("with the fixes: exit %d, stderr %s", code, stderr.String())
	}
	if out := stdout.String(); !strings.Contains(out, "reconcilePodCgroups on, flushCheckpoints on") || !strings.Contains(out, " converged, 0 drift (kubelet), 0 drift (resizelet), 0 stuck, 0 broken") {
		t.Errorf("with the fixes:\n%s", out)
	}

	stderr.Reset()
	if code := run(context.Background(), []string{"explore", "--steps", "some", file}, &stdout, &stderr); code != exitInvalid || !strings.Contains(stderr.String(), "--steps") {
		t.Errorf("--steps some: exit %d, stderr %s", code, stderr.String())
	}
	stderr.Reset()
	if code := run(context.Background(), []string{"explore", filepath.Join(t.TempDir(), "none.yaml")}, &stdout, &stderr); code != exitInvalid {
		t.Errorf("missing file: exit %d, stderr %s", code, stderr.String())
	}
}

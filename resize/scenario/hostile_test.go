package scenario_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resizelet/resizelet/resize/scenario"
)

// TestParseRejectsHostileFiles: each hostile file is an *Error that names
// the place, before anything runs.
func TestParseRejectsHostileFiles(t *testing.T) {
	const twoPods = `
pods:
- metadata: {name: web}
  spec:
    containers:
    - {name: app, resources: {requests: {cpu: 100m}}}
    - {name: side, resources: {requests: {cpu: 100m}}}
`
	for _, tc := range []struct {
		name, yaml    string
		step          int
		field, reason string
	}{
		{"a second document", "name: x\nsteps: [{advance: 1s}]\n---\nname: y\nsteps: [{advance: 1s}]\n", -1, "", `a second YAML document (after a "---" line) is not allowed`},
		{"a second document that is not YAML", "name: x\nsteps: [{advance: 1s}]\n---\n: : [\n", -1, "", "not valid YAML: document 2"},
		{"a NUL in the name", "name: \"a\\0b\"\nsteps: [{advance: 1s}]\n", -1, "name", `control character '\x00' at byte 1`},
		{"an escape in the name", "name: \"\\e[2J\"\nsteps: [{advance: 1s}]\n", -1, "name", "control character"},
		{"a NUL in the description", "name: x\ndescription: \"a\\0\"\nsteps: [{advance: 1s}]\n", -1, "description", "control character"},
		{"cpu 1e100 in a patch", "name: x" + twoPods + `steps:
- resize: {pod: web, patch: '{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"1e100"}}}]}}'}
`, 0, "resize.patch", `spec.containers[0].resources.requests[cpu]: Invalid value: "10e99": must be less than or equal to 9G`},
		{"cpu 9223372036854775807 in a patch", "name: x" + twoPods + `steps:
- resize: {pod: web, patch: {spec: {containers: [{name: side, resources: {limits: {cpu: "9223372036854775807"}}}]}}}
`, 0, "resize.patch", "spec.containers[0].resources.limits[cpu]"},
		{"a patch whose containers add up to too much", "name: x" + twoPods + `steps:
- resize: {pod: web, patch: {spec: {containers: [{name: app, resources: {requests: {cpu: 5G}}}, {name: side, resources: {requests: {cpu: 5G}}}]}}}
`, 0, "resize.patch", "the pod's cpu requests (containers, init containers, overhead and pod level together) add up to more than 9G"},
		{"memory 1e100 in a manifest", `name: x
pods:
- metadata: {name: web}
  spec: {containers: [{name: app, resources: {limits: {memory: 1e100}}}]}
steps: [{advance: 1s}]
`, -1, "pods[0].spec.containers[0].resources.limits[memory]", "must be less than or equal to 8Pi"},
		{"memory 1e100 in an added pod", `name: x
steps:
- add: {pod: {metadata: {name: web}, spec: {containers: [{name: app, resources: {requests: {memory: 1e100}}}]}}}
`, 0, "add.pod.spec.containers[0].resources.requests[memory]", "must be less than or equal to 8Pi"},
		{"node capacity 1e30", "name: x\nnode: {capacity: {cpu: 1e30}}\nsteps: [{advance: 1s}]\n", -1, "node.capacity.cpu", "is more than 9G"},
		{"node allocatable 1e30", "name: x\nnode: {allocatable: {memory: 1e30}}\nsteps: [{advance: 1s}]\n", -1, "node.allocatable.memory", "is more than 8Pi"},
		{"usage 1e100", "name: x" + twoPods + "steps: [{usage: {pod: web, container: app, memory: 1e100}}]\n", 0, "usage.memory", "is more than 8Pi"},
		{"a malformed UID", `name: x
pods:
- metadata: {name: web, uid: "a/b"}
  spec: {containers: [{name: app}]}
steps: [{advance: 1s}]
`, -1, "pods[0].metadata.uid", `Invalid value: "a/b"`},
		{"a UID another pod has", `name: x
pods:
- metadata: {name: a, uid: "0b1c4a2e-5d7f-4c3b-9a1e-2f6d8c0b7a51"}
  spec: {containers: [{name: app}]}
steps:
- add: {pod: {metadata: {name: b, uid: "0b1c4a2e-5d7f-4c3b-9a1e-2f6d8c0b7a51"}, spec: {containers: [{name: app}]}}}
`, 0, "add.pod.metadata.uid", "is already pod default/a's"},
		{"a 5,000-character pod name", "name: x\npods: [{metadata: {name: " + strings.Repeat("a", 5000) + "}, spec: {containers: [{name: app}]}}]\nsteps: [{advance: 1s}]\n", -1, "pods[0].metadata.name", "must be no more than 253 characters"},
		{"an exponent in the millions", "name: x\npods: [{metadata: {name: p}, spec: {containers: [{name: app, resources: {requests: {cpu: \"1e-54775807\"}}}]}}]\nsteps: [{advance: 1s}]\n", -1, "pods[0].spec.containers[0].resources.requests.cpu", "an exponent beyond ±1000 is not allowed"},
		{"an exponent in the millions in a patch", "name: x" + twoPods + `steps:
- resize: {pod: web, patch: '{"spec":{"containers":[{"name":"app","resources":{"limits":{"memory":"1e54775807"}}}]}}'}
`, 0, "resize.patch", "spec.containers[0].resources.limits.memory: \"1e54775807\": an exponent beyond"},
		{"an exponent in the millions in an expect", "name: x" + twoPods + "steps: [{expect: {node: {allocated: {cpu: 1e54775807}}}}]\n", 0, "expect.node.allocated.cpu", "an exponent beyond"},
		{"a pod name with a slash", "name: x\npods: [{metadata: {name: a/b}, spec: {containers: [{name: app}]}}]\nsteps: [{advance: 1s}]\n", -1, "pods[0].metadata.name", "invalid pod name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := scenario.Parse("hostile.yaml", []byte(tc.yaml))
			var se *scenario.Error
			if !errors.As(err, &se) {
				t.Fatalf("Parse = %v (%T), want a *scenario.Error", err, err)
			}
			if se.Step != tc.step || se.Field != tc.field || !strings.Contains(se.Msg, tc.reason) {
				t.Errorf("error %q: step %d field %q, want step %d field %q and %q", err, se.Step, se.Field, tc.step, tc.field, tc.reason)
			}
		})
	}
}

// TestParseAcceptsHarmlessVariants: what the limits leave alone.
func TestParseAcceptsHarmlessVariants(t *testing.T) {
	for _, y := range []string{
		"---\nname: x\nsteps: [{advance: 1s}]\n",
		"name: x\nsteps: [{advance: 1s}]\n---\n",
		"name: x\nsteps: [{advance: 1s}]\n---\n# nothing more\n",
		"name: x\ndescription: \"two\\nlines\\tand a tab\"\nsteps: [{advance: 1s}]\n",
		"name: x\nnode: {capacity: {cpu: 9G, memory: 8Pi}}\nsteps: [{advance: 2562047h}]\n",
	} {
		if _, err := scenario.Parse("ok.yaml", []byte(y)); err != nil {
			t.Errorf("Parse(%q) = %v", y, err)
		}
	}
}

// TestLoadRefusesWhatIsNotAScenarioFile: a device, a directory and a file
// over the size limit are refused at once, without reading them to the
// end; a pipe is read.
func TestLoadRefusesWhatIsNotAScenarioFile(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte("name: x\n# "+strings.Repeat("x", scenario.MaxFileSize)+"\nsteps: [{advance: 1s}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"/dev/zero": "not a regular file (a character device)",
		dir:         "not a regular file (a directory)",
		big:         "more than the 1048576 a scenario may have",
	} {
		start := time.Now()
		_, err := scenario.Load(path)
		var se *scenario.Error
		if !errors.As(err, &se) || se.File != path || !strings.Contains(err.Error(), want) {
			t.Errorf("Load(%s) = %v, want an *Error naming the file and %q", path, err, want)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("Load(%s) took %v", path, d)
		}
	}

	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	for content, want := range map[string]string{
		"name: piped\nsteps: [{advance: 1s}]\n":               "",
		strings.Repeat("#", scenario.MaxFileSize+1024) + "\n": "more than the 1048576 bytes a scenario may have",
	} {
		done := make(chan error, 1)
		go func() {
			f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				done <- err
				return
			}
			_, err = f.WriteString(content)
			f.Close()
			if errors.Is(err, syscall.EPIPE) {
				err = nil // the reader stopped at the limit
			}
			done <- err
		}()
		s, err := scenario.Load(fifo)
		if want == "" && (err != nil || s.Name != "piped") {
			t.Errorf("Load(a pipe) = %v, %v", s, err)
		}
		if want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("Load(a pipe of %d bytes) = %v, want %q", len(content), err, want)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// TestRunRefusesTotalsOnlyThePatchedPodShows: a resize whose amounts fit
// alone but add up to too much with the pod's other containers is an
// *Error of the file when the step runs, not an API error for an expect.
func TestRunRefusesTotalsOnlyThePatchedPodShows(t *testing.T) {
	s, err := scenario.Parse("totals.yaml", []byte(`
name: totals
node: {capacity: {cpu: 9G}}
pods:
- metadata: {name: web}
  spec:
    containers:
    - {name: app, resources: {requests: {cpu: 5G}}}
    - {name: side, resources: {requests: {cpu: 100m}}}
steps:
- resize: {pod: web, patch: {spec: {containers: [{name: side, resources: {requests: {cpu: 5G}}}]}}}
- expect: {error: "add up"}
`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = scenario.Run(context.Background(), s, scenario.Options{})
	var se *scenario.Error
	if !errors.As(err, &se) || se.Step != 0 || se.Field != "resize.patch" || !strings.Contains(se.Msg, "add up to more than 9G") {
		t.Fatalf("Run = %v, want an *Error at steps[0] resize.patch", err)
	}
}

// TestRunLongestAdvance: "advance: 2562047h", the longest duration Go
// parses, on a settled node and on one with a resize Deferred, takes a
// moment rather than the hour and a half of firing every resync.
func TestRunLongestAdvance(t *testing.T) {
	s, err := scenario.Parse("long.yaml", []byte(`
name: long
node: {capacity: {cpu: "2"}}
pods:
- metadata: {name: a}
  spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
- metadata: {name: b}
  spec: {containers: [{name: c, resources: {requests: {cpu: 500m}}}]}
steps:
- advance: 2562047h
- resize: {pod: b, patch: {spec: {containers: [{name: c, resources: {requests: {cpu: 1500m}}}]}}}
- advance: 2562047h
- expect:
    pod: b
    conditions: [{type: PodResizePending, reason: Deferred}]
`))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := scenario.Run(context.Background(), s, scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Mismatches) != 0 {
		t.Fatalf("mismatches: %v", res.Mismatches)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("the run took %v", d)
	}
	if !strings.Contains(string(res.Transcript), "end: clock at +5124094h0m0s\n") {
		t.Fatalf("transcript does not end 2 x 2562047h later:\n%s", res.Transcript)
	}
}

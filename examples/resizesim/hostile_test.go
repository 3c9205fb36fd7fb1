package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestHostileFilesExitTwo: every hostile input is refused with exit status
// 2 and an error naming the file and the place, promptly.
func TestHostileFilesExitTwo(t *testing.T) {
	pod := "\npods:\n- metadata: {name: web}\n  spec: {containers: [{name: app, resources: {requests: {cpu: 100m}, limits: {cpu: 100m}}}]}\n"
	for _, tc := range []struct {
		name, path, want string
	}{
		{"/dev/zero", "/dev/zero", "/dev/zero: not a regular file (a character device)"},
		{"a second document", writeFile(t, "two.yaml", "name: x\nsteps: [{advance: 1s}]\n---\nname: y\n"), "two.yaml: a second YAML document"},
		{"a NUL in the name", writeFile(t, "nul.yaml", "name: \"a\\0\"\nsteps: [{advance: 1s}]\n"), "nul.yaml: name: control character"},
		{"cpu 1e100", writeFile(t, "cpu.yaml", "name: x"+pod+"steps:\n- resize: {pod: web, patch: '{\"spec\":{\"containers\":[{\"name\":\"app\",\"resources\":{\"requests\":{\"cpu\":\"1e100\"},\"limits\":{\"cpu\":\"1e100\"}}}]}}'}\n"),
			"cpu.yaml: steps[0]: resize.patch: spec.containers[0].resources.limits[cpu]: Invalid value: \"10e99\": must be less than or equal to 9G"},
		{"memory 1e100", writeFile(t, "mem.yaml", "name: x"+pod+"steps:\n- resize: {pod: web, patch: {spec: {containers: [{name: app, resources: {limits: {memory: 1e100}}}]}}}\n"),
			"mem.yaml: steps[0]: resize.patch: spec.containers[0].resources.limits[memory]"},
		{"capacity 1e30", writeFile(t, "cap.yaml", "name: x\nnode: {capacity: {memory: 1e30}}\nsteps: [{advance: 1s}]\n"), "cap.yaml: node.capacity.memory: 1e+30 is more than 8Pi"},
		{"a pod name with a slash", writeFile(t, "name.yaml", "name: x\npods: [{metadata: {name: a/b}, spec: {containers: [{name: app}]}}]\nsteps: [{advance: 1s}]\n"), "name.yaml: pods[0].metadata.name: invalid pod name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			start := time.Now()
			code := run(context.Background(), []string{"run", tc.path}, &stdout, &stderr)
			if code != exitInvalid || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, stderr.String(), tc.want)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// TestLongestAdvanceRuns: "advance: 2562047h" runs to the end at once.
func TestLongestAdvanceRuns(t *testing.T) {
	path := writeFile(t, "long.yaml", "name: long\npods: [{metadata: {name: web}, spec: {containers: [{name: app}]}}]\nsteps: [{advance: 2562047h}]\n")
	var stdout, stderr bytes.Buffer
	start := time.Now()
	if code := run(context.Background(), []string{"run", path}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("took %v", d)
	}
	if !strings.Contains(stdout.String(), "end: clock at +2562047h0m0s") {
		t.Fatalf("transcript:\n%s", stdout.String())
	}
}

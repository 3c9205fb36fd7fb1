package scenario_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/resizelet/resizelet/resize/scenario"
)

// FuzzRun parses and runs arbitrary scenario files on the simulated node.
// Running must never panic; a run either ends, with a transcript that
// reaches its end and mismatches that point at expect steps (or at an
// action step whose error no expect.error claimed), or returns a
// *scenario.Error naming the file (a scenario only running shows to be
// invalid). Any other error is the engine's or a simulator's fault. Files
// are kept small (steps and pods) so that each run takes milliseconds.
func FuzzRun(f *testing.F) {
	f.Add([]byte("name: x\npods: [{metadata: {name: p}, spec: {containers: [{name: c, resources: {requests: {cpu: 100m}, limits: {cpu: 100m}}}]}}]\n" +
		"steps:\n- resize: {pod: p, patch: {spec: {containers: [{name: c, resources: {requests: {cpu: 200m}, limits: {cpu: 200m}}}]}}}\n" +
		"- expect: {pod: p, conditions: [], cgroups: {pod: {cpu.max: \"20000 100000\"}}}\n"))
	f.Add([]byte("name: x\nnode: {capacity: {cpu: \"2\"}}\npods: [{metadata: {name: a}, spec: {containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]}}, {metadata: {name: b}, spec: {containers: [{name: c, resources: {requests: {cpu: 500m}}}]}}]\n" +
		"steps:\n- resize: {pod: b, patch: {spec: {containers: [{name: c, resources: {requests: {cpu: 1500m}}}]}}}\n- advance: 2562047h\n- delete: {pod: a}\n- expect: {pod: b, conditions: []}\n"))
	f.Add([]byte("name: x\npods: [{metadata: {name: p}, spec: {containers: [{name: c, resources: {requests: {memory: 64Mi}, limits: {memory: 64Mi}}, resizePolicy: [{resourceName: memory, restartPolicy: RestartContainer}]}]}}]\n" +
		"steps:\n- fault: {call: UpdateContainerResources, times: 2}\n- usage: {pod: p, container: c, memory: 60Mi}\n- resize: {pod: p, patch: {spec: {containers: [{name: c, resources: {requests: {memory: 32Mi}, limits: {memory: 32Mi}}}]}}}\n" +
		"- restartKubelet: {}\n- exit: {pod: p, container: c, exitCode: 1}\n- advance: 10s\n- expect: {pod: p, containers: {c: {restartCount: 1}}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := scenario.Parse("fuzz.yaml", data)
		if err != nil {
			return
		}
		if len(s.Steps) > 24 || len(s.Pods) > 6 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		res, err := scenario.Run(ctx, s, scenario.Options{})
		if err != nil {
			var se *scenario.Error
			if !errors.As(err, &se) || !strings.HasPrefix(err.Error(), "fuzz.yaml: ") {
				t.Fatalf("Run returned %v (%T), not a *scenario.Error naming the file", err, err)
			}
			return
		}
		if !strings.Contains(string(res.Transcript), "== end: clock at +") {
			t.Fatalf("the transcript does not reach its end:\n%s", res.Transcript)
		}
		for _, m := range res.Mismatches {
			switch {
			case m.Step < 0 || m.Step >= len(s.Steps):
				t.Fatalf("mismatch %v is at no step", m)
			case m.Action != "":
				// An action step's error that no expect.error claimed.
				if m.Action != s.Steps[m.Step].Action || m.Path != "error" || m.Got == "" {
					t.Fatalf("mismatch %v is not the unclaimed error of step %d (%s)", m, m.Step, s.Steps[m.Step].Action)
				}
			case s.Steps[m.Step].Action != scenario.ActionExpect:
				t.Fatalf("mismatch %v is not at an expect step", m)
			}
		}
	})
}

package resize

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/resizelet/resizelet/allocation"
)

// TestPlanChangesNothing plans the walkthrough's three resizes on a
// running node and checks that each plan says what Resize then does,
// while planning itself changes nothing: not the API object, not the
// cgroups, not the runtime, not the events.
func TestPlanChangesNothing(t *testing.T) {
	tn := newTestNode(t, NodeConfig{})
	if _, err := tn.node.AddPod(tn.ctx, demoPod()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, patch string
		outcome     Outcome
		message     string
		// actions are prefixes of the plan's writes and calls, in order,
		// reads left out.
		actions  []string
		restarts string
	}{
		{
			name:    "cpu up in place",
			patch:   `{"spec":{"containers":[{"name":"pause","resources":{"requests":{"cpu":"800m"},"limits":{"cpu":"800m"}}}]}}`,
			outcome: OutcomeAdmitted,
			actions: []string{"checkpoint allocated", "event Normal ResizeStarted", "cgroup set", "UpdatePodSandboxResources",
				"cgroup set", "UpdatePodSandboxResources", "UpdateContainerResources pause {shares=819 quota=80000",
				"checkpoint actuated", "event Normal ResizeCompleted", "status default/resize-demo"},
		},
		{
			name:     "memory up with a restart",
			patch:    `{"spec":{"containers":[{"name":"pause","resources":{"requests":{"memory":"300Mi"},"limits":{"memory":"300Mi"}}}]}}`,
			outcome:  OutcomeAdmitted,
			restarts: "pause: memory limit 209715200 -> 314572800, memory resizePolicy RestartContainer",
			actions: []string{"checkpoint allocated", "event Normal ResizeStarted", "event Normal Killing", "StopContainer pause",
				"cgroup set", "UpdatePodSandboxResources", "cgroup set", "UpdatePodSandboxResources",
				"CreateContainer pause attempt 1", "checkpoint actuated", "event Normal Created", "StartContainer pause",
				"event Normal Started", "event Normal ResizeCompleted", "status default/resize-demo"},
		},
		{
			name:    "more than the node has",
			patch:   `{"spec":{"containers":[{"name":"pause","resources":{"requests":{"cpu":"1000"},"limits":{"cpu":"1000"}}}]}}`,
			outcome: OutcomeInfeasible, message: "Node didn't have enough capacity: cpu, requested: 1000000, capacity: 16000",
			actions: []string{"event Warning ResizeInfeasible", "status default/resize-demo"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			podBefore := tn.pod("resize-demo")
			writes, events := len(tn.cg.Writes()), len(tn.cluster.Events())
			tn.calls.Reset()
			plan, err := tn.node.Plan(tn.ctx, ResizeOp{Namespace: "default", Name: "resize-demo", Patch: []byte(tc.patch)})
			if err != nil {
				t.Fatal(err)
			}
			if plan.Outcome != tc.outcome || plan.Message != tc.message {
				t.Errorf("outcome = %s %q, want %s %q", plan.Outcome, plan.Message, tc.outcome, tc.message)
			}
			var got []string
			for _, a := range plan.Actions {
				s := a.String()
				if strings.HasPrefix(s, "cgroup exists?") || strings.HasPrefix(s, "cgroup read") || strings.HasPrefix(s, "ContainerStatus") {
					continue
				}
				got = append(got, s)
			}
			if diff := cmp.Diff(tc.actions, firstPrefixes(got, tc.actions)); diff != "" {
				t.Errorf("actions (-want +got):\n%s\nplan:\n%s", diff, plan)
			}
			if tc.restarts != "" && !strings.Contains(plan.String(), "restarts:\n  "+tc.restarts) {
				t.Errorf("the plan does not say why it restarts:\n%s", plan)
			}
			if !equality.Semantic.DeepEqual(podBefore, tn.pod("resize-demo")) {
				t.Error("planning changed the API object")
			}
			if n := len(tn.cg.Writes()); n != writes {
				t.Errorf("planning wrote %d cgroup files", n-writes)
			}
			if calls := tn.calls.Calls(); len(calls) != 0 {
				t.Errorf("planning called the runtime: %v", calls)
			}
			if n := len(tn.cluster.Events()); n != events {
				t.Errorf("planning recorded %d events", n-events)
			}
		})
	}
	// The plan of the cpu resize is what the resize does.
	mustResize(t, tn, "resize-demo", `{"spec":{"containers":[{"name":"pause","resources":{"requests":{"cpu":"800m"},"limits":{"cpu":"800m"}}}]}}`)
	if got := tn.file(tn.info("resize-demo").PodCgroup, "cpu.max"); got != "80000 100000" {
		t.Errorf("after the resize cpu.max = %q", got)
	}
}

// TestPlanAdmissionArithmetic: a Deferred plan shows the numbers the
// predicate compared and the resize's place in the pending queue.
func TestPlanAdmissionArithmetic(t *testing.T) {
	tn := newTestNode(t, smallNode())
	for _, p := range []string{"a", "b"} {
		if _, err := tn.node.AddPod(tn.ctx, cpuPod(p, "1")); err != nil {
			t.Fatal(err)
		}
	}
	plan, err := tn.node.Plan(tn.ctx, ResizeOp{Namespace: "default", Name: "b", Patch: []byte(cpuPatch("3500m"))})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Outcome != OutcomeDeferred {
		t.Fatalf("outcome %s, want Deferred:\n%s", plan.Outcome, plan)
	}
	if plan.Admission.QueuePosition != 0 || plan.Admission.QueueLength != 1 {
		t.Errorf("queue position %d of %d, want 0 of 1", plan.Admission.QueuePosition, plan.Admission.QueueLength)
	}
	var cpuFit *allocation.Check
	for i := range plan.Admission.Checks {
		if c := &plan.Admission.Checks[i]; c.Kind == "fit" && c.Resource == "cpu" {
			cpuFit = c
		}
	}
	if cpuFit == nil || cpuFit.Requested != 3500 || cpuFit.Used != 1000 || cpuFit.Capacity != 4000 || cpuFit.Fits() {
		t.Errorf("cpu fit check = %+v, want 3500 beside 1000 of 4000, not fitting", cpuFit)
	}
	if !strings.Contains(plan.String(), "fit cpu: requested 3500, used by other pods 1000, allocatable 4000: does not fit") {
		t.Errorf("plan text:\n%s", plan)
	}
}

// firstPrefixes cuts each got line to the length of the matching want
// line when it starts with it, so that tables can name actions by their
// beginning.
func firstPrefixes(got, want []string) []string {
	out := make([]string, len(got))
	for i, g := range got {
		out[i] = g
		if i < len(want) && strings.HasPrefix(g, want[i]) {
			out[i] = want[i]
		}
	}
	return out
}

package explore_test

import (
	"bytes"
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/explore"
	"github.com/resizelet/resizelet/resize/scenario"
)

const scenarioDir = "../../testdata/scenarios"

func explored(t *testing.T, name string, opts explore.Options) *explore.Report {
	t.Helper()
	s, err := scenario.Load(filepath.Join(scenarioDir, name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := explore.Scenario(context.Background(), s, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Skipped != "" {
		t.Fatalf("skipped: %s", rep.Skipped)
	}
	return rep
}

// find returns the point of the call whose description starts with op,
// in mode.
func find(t *testing.T, rep *explore.Report, op string, mode explore.Mode) explore.Point {
	t.Helper()
	for _, p := range rep.Points {
		if strings.HasPrefix(p.Op, op) && p.Mode == mode {
			return p
		}
	}
	var ops []string
	for _, p := range rep.Points {
		ops = append(ops, p.Op)
	}
	t.Fatalf("no point %q %s among\n%s", op, mode, strings.Join(ops, "\n"))
	return explore.Point{}
}

func diffStrings(ds []resize.Difference) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.String()
	}
	return out
}

// TestClassification: on the decrease of cpu-decrease-guaranteed (the
// container first, then the pod cgroup's cpu.weight, then its cpu.max), a
// crash after the container's update but before its actuated record
// converges (the restarted kubelet updates it again, then writes the pod
// cgroup); a crash after the first pod cgroup write drifts as the kubelet
// does, with the pod cgroup's cpu.max left behind; a failed pod cgroup
// write drifts the same way; a status write that fails once converges.
func TestClassification(t *testing.T) {
	rep := explored(t, "cpu-decrease-guaranteed", explore.Options{})
	if len(rep.Baselines) != 1 || rep.Baselines[0].Outcome != explore.Converged {
		t.Errorf("baselines %+v, want one converged", rep.Baselines)
	}

	p := find(t, rep, "UpdateContainerResources default/g c", explore.CrashAfter)
	if p.Outcome != explore.Converged || p.Kind != explore.KindCRIUpdate {
		t.Errorf("crash after UpdateContainerResources: %+v, want converged", p)
	}

	p = find(t, rep, "Set default/g cpu.weight=20", explore.CrashAfter)
	if p.Outcome != explore.Drifted || p.Owner != explore.OwnerKubelet || p.Kind != explore.KindPodCgroup {
		t.Fatalf("crash after the pod cgroup's cpu.weight: %+v, want the kubelet's drift", p)
	}
	if !reflect.DeepEqual(p.Gaps, []string{explore.GapPodCgroup.ID}) || p.Reason != explore.GapPodCgroup.Reason {
		t.Errorf("gaps %v reason %q, want %s", p.Gaps, p.Reason, explore.GapPodCgroup.ID)
	}
	if got, want := diffStrings(p.Differences), []string{"default/g: podCgroup cpu.max: want 50000 100000, got 150000 100000"}; !reflect.DeepEqual(got, want) {
		t.Errorf("differences %q, want %q", got, want)
	}
	if !strings.Contains(p.Reason, "pkg/kubelet/kuberuntime/kuberuntime_manager.go") {
		t.Errorf("the reason does not cite the kubelet's source: %s", p.Reason)
	}

	p = find(t, rep, "Set default/g cpu.weight=20", explore.FailOnce)
	if p.Outcome != explore.Drifted || p.Owner != explore.OwnerKubelet || len(p.Differences) != 2 {
		t.Errorf("failed pod cgroup write: %+v, want the kubelet's drift in cpu.weight and cpu.max", p)
	}

	p = find(t, rep, "UpdatePodStatus default/g", explore.FailOnce)
	if p.Outcome != explore.Converged {
		t.Errorf("failed status write: %+v, want converged", p)
	}

	c := rep.Counts()
	if !c.OK() || c.DriftKubelet == 0 || c.Points != c.Converged+c.DriftKubelet {
		t.Errorf("counts %s", c)
	}
}

// TestFixesConvergeEverywhere: with ReconcilePodCgroups and
// FlushCheckpoints every point of the decreases, the restarts and the
// failed writes converges, where the 1.35 default drifts at some.
func TestFixesConvergeEverywhere(t *testing.T) {
	for _, name := range []string{"cpu-decrease-guaranteed", "mixed-resize-restarts-for-memory", "pod-cgroup-drift-after-failed-write"} {
		t.Run(name, func(t *testing.T) {
			before := explored(t, name, explore.Options{}).Counts()
			if before.DriftKubelet == 0 || !before.OK() {
				t.Errorf("default: %s, want some of the kubelet's drifts and nothing else", before)
			}
			rep := explored(t, name, explore.Options{ReconcilePodCgroups: true, FlushCheckpoints: true})
			for _, p := range rep.Points {
				if p.Outcome != explore.Converged {
					t.Errorf("%s %s: %s: %s", p.ID(), p.Op, explore.Label(p.Outcome, p.Owner), p.Reason)
				}
			}
			for _, b := range rep.Baselines {
				if b.Outcome != explore.Converged {
					t.Errorf("steps[%d] without a fault: %s", b.Step, explore.Label(b.Outcome, b.Owner))
				}
			}
		})
	}
}

// TestSharedCrashStatesMatch: the points run once for a shared state give
// the outcome each of them gives when run on its own.
func TestSharedCrashStatesMatch(t *testing.T) {
	shared := explored(t, "mixed-increase-and-decrease", explore.Options{ShareCrashStates: true})
	every := explored(t, "mixed-increase-and-decrease", explore.Options{})
	if len(shared.Points) != len(every.Points) {
		t.Fatalf("%d points shared, %d all run", len(shared.Points), len(every.Points))
	}
	same := 0
	for i, p := range shared.Points {
		q := every.Points[i]
		if p.ID() != q.ID() || p.Op != q.Op {
			t.Fatalf("point %d is %s %q shared, %s %q all run", i, p.ID(), p.Op, q.ID(), q.Op)
		}
		if p.Same != "" {
			same++
		}
		if p.Outcome != q.Outcome || p.Owner != q.Owner || !reflect.DeepEqual(diffStrings(p.Differences), diffStrings(q.Differences)) {
			t.Errorf("%s (%s): %s %v, run on its own %s %v", p.ID(), p.Same, explore.Label(p.Outcome, p.Owner), p.Differences,
				explore.Label(q.Outcome, q.Owner), q.Differences)
		}
	}
	if same == 0 {
		t.Error("no point shared a state")
	}
}

// TestInterruptedDeletionIsFinished: a crash in the middle of a deletion
// that frees room for a deferred resize, or a teardown call that fails,
// converges on its own: the API server's pod carries its deletionTimestamp,
// which the restarted kubelet finds, and a failed teardown is tried again
// at the pod's next resync.
func TestInterruptedDeletionIsFinished(t *testing.T) {
	rep := explored(t, "deferred-retry-on-delete", explore.Options{})
	for _, mode := range []explore.Mode{explore.CrashBefore, explore.CrashAfter, explore.FailOnce} {
		if p := find(t, rep, "StopContainer default/a c", mode); p.Outcome != explore.Converged {
			t.Errorf("%s: %+v, want converged", mode, p)
		}
	}
}

// TestWriteTable: the table names the scenario, each point's step, call,
// kind, call made, mode and outcome, the counts and the kubelet's gaps.
func TestWriteTable(t *testing.T) {
	rep := explored(t, "cpu-decrease-guaranteed", explore.Options{})
	var buf bytes.Buffer
	rep.WriteTable(&buf)
	out := buf.String()
	for _, want := range []string{
		"Scenario: cpu-decrease-guaranteed (../../testdata/scenarios/cpu-decrease-guaranteed.yaml), reconcilePodCgroups off, flushCheckpoints off",
		"steps[0] without a fault: converged",
		"STEP", "CALL", "KIND", "CALL MADE", "MODE", "OUTCOME", "WHAT DISAGREED",
		"pod cgroup write",
		"drift (kubelet)",
		"[pod-cgroup-not-reconciled] default/g: podCgroup cpu.max: want 50000 100000, got 150000 100000",
		rep.Counts().String(),
		"[pod-cgroup-not-reconciled] kubelet v1.35.4 writes the pod cgroup only from doPodResizeAction",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// TestExploresEveryPatchType: the resize steps of a JSON and of a merge
// patch reach the node through the explorer's gated API as a strategic
// merge patch does, so their calls are explored.
func TestExploresEveryPatchType(t *testing.T) {
	for _, name := range []string{"resize-json-patch-vpa", "resize-merge-patch"} {
		rep := explored(t, name, explore.Options{Steps: func(_ int, st scenario.Step) bool { return st.Action == scenario.ActionResize }})
		p := find(t, rep, "UpdateContainerResources default/", explore.CrashAfter)
		if p.Step != 0 || p.Outcome != explore.Converged {
			t.Errorf("%s: crash after the first resize's update: %+v, want a converged point of steps[0]", name, p)
		}
	}
}

// findAt returns the point of step step whose call description starts
// with op, in mode.
func findAt(t *testing.T, rep *explore.Report, step int, op string, mode explore.Mode) explore.Point {
	t.Helper()
	for _, p := range rep.Points {
		if p.Step == step && strings.HasPrefix(p.Op, op) && p.Mode == mode {
			return p
		}
	}
	t.Fatalf("no point %q %s in steps[%d]", op, mode, step)
	return explore.Point{}
}

// TestStalePendingAfterRestart: a crash after a Deferred resize was
// allocated (kubelet-restart-with-deferred, steps[3]: a deleted, b's
// resize fits) or reverted (deferred-reverted, steps[2]), but before the
// status that drops its PodResizePending was written, leaves the
// condition to the restarted kubelet, which takes it over
// (BackfillPodResizeConditions) and, as the pod's spec is its allocation,
// never retries it: the kubelet's own drift, GapStalePending, whatever
// the opt-in fixes. The status write failing once converges: the same
// kubelet writes it again.
func TestStalePendingAfterRestart(t *testing.T) {
	for _, tc := range []struct {
		scenario string
		step     int
	}{{"kubelet-restart-with-deferred", 3}, {"deferred-reverted", 2}} {
		t.Run(tc.scenario, func(t *testing.T) {
			for _, opts := range []explore.Options{{}, {ReconcilePodCgroups: true, FlushCheckpoints: true}} {
				rep := explored(t, tc.scenario, opts)
				p := findAt(t, rep, tc.step, "UpdatePodStatus default/b", explore.CrashBefore)
				if p.Outcome != explore.Drifted || p.Owner != explore.OwnerKubelet ||
					!reflect.DeepEqual(p.Gaps, []string{explore.GapStalePending.ID}) || p.Reason != explore.GapStalePending.Reason {
					t.Errorf("%+v: crash before b's status write: %s %v %q, want the kubelet's drift %s", opts, explore.Label(p.Outcome, p.Owner),
						p.Gaps, p.Reason, explore.GapStalePending.ID)
				}
				if got, want := diffStrings(p.Differences), []string{"default/b: status condition PodResizePending: want absent, got reason Deferred"}; !reflect.DeepEqual(got, want) {
					t.Errorf("differences %q, want %q", got, want)
				}
				if p := findAt(t, rep, tc.step, "UpdatePodStatus default/b", explore.FailOnce); p.Outcome != explore.Converged {
					t.Errorf("%+v: b's status write failing once: %s, want converged", opts, explore.Label(p.Outcome, p.Owner))
				}
			}
		})
	}
}

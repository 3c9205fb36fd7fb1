package core

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resizelet/resizelet/resize/profile"
)

// restartWithConditions builds, on a 2-CPU node of version v, pod b with
// a Deferred resize (generation 2) and pod c with an allocated resize
// (generation 2) whose UpdateContainerResources keeps failing
// (PodResizeInProgress, reason Error) and a newer resize (generation 3)
// that is Deferred; then it restarts the kubelet a minute later and
// returns the index of the first event after the restart.
func restartWithConditions(t *testing.T, v profile.Version) (w *world, restartAt time.Time, ev int) {
	t.Helper()
	w = newWorld(t, smallNode(v))
	w.add(testPod("a", resources("1", "", "", "")))
	w.add(testPod("b", resources("500m", "", "", "")))
	w.add(testPod("c", resources("200m", "", "", "")))
	w.resize("b", resources("1500m", "", "", ""))
	cID := w.c.podByName("default", "c").containers.id("c1")
	w.fail = func(a Action) error {
		if u, ok := a.(UpdateContainerResources); ok && u.ID == cID {
			return errors.New("runtime busy")
		}
		return nil
	}
	w.resize("c", resources("300m", "", "", ""))
	w.resize("c", resources("600m", "", "", ""))
	if got := w.condition("c", v1.PodResizeInProgress); got == nil || got.Reason != v1.PodReasonError || got.ObservedGeneration != 2 {
		t.Fatalf("c's InProgress before the restart: %+v, want Error at generation 2", got)
	}
	if got := w.condition("c", v1.PodResizePending); got == nil || got.ObservedGeneration != 3 {
		t.Fatalf("c's Pending before the restart: %+v, want generation 3", got)
	}
	w.now = w.now.Add(time.Minute)
	ev = len(w.events)
	w.restart()
	return w, w.now, ev
}

// TestRestartBackfillsConditions: from 1.35 a restarted kubelet takes the
// resize conditions over from the API server's pods
// (BackfillPodResizeConditions, from HandlePodAdditions in
// pkg/kubelet/kubelet.go) with their reason, message and
// observedGeneration, and both times set to when it started. So the
// restart's retry of a still-Deferred resize changes nothing that counts
// and emits no second ResizeDeferred; the failing actuation keeps its
// InProgress condition at the generation it had (not the pod's newer one)
// and emits no second ResizeError; and once it succeeds, ResizeCompleted
// names that generation.
func TestRestartBackfillsConditions(t *testing.T) {
	w, restartAt, ev := restartWithConditions(t, profile.V135)
	if got := w.eventLines(ev); len(got) != 0 {
		t.Errorf("events after the restart: %q, want none", got)
	}
	at := metav1.NewTime(restartAt)
	want := map[string][]v1.PodCondition{
		"b": {{Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: v1.PodReasonDeferred, ObservedGeneration: 2,
			Message: "Node didn't have enough resource: cpu, requested: 1500, used: 1300, capacity: 2000", LastProbeTime: at, LastTransitionTime: at}},
		"c": {
			{Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: v1.PodReasonDeferred, ObservedGeneration: 3,
				Message: "Node didn't have enough resource: cpu, requested: 600, used: 1500, capacity: 2000", LastProbeTime: at, LastTransitionTime: at},
			{Type: v1.PodResizeInProgress, Status: v1.ConditionTrue, Reason: v1.PodReasonError, ObservedGeneration: 2,
				Message: w.condition("c", v1.PodResizeInProgress).Message, LastProbeTime: at, LastTransitionTime: at},
		},
	}
	for name, conds := range want {
		if diff := cmp.Diff(conds, w.statuses[name].Conditions); diff != "" {
			t.Errorf("%s's conditions after the restart (-want +got):\n%s", name, diff)
		}
	}
	if msg := w.condition("c", v1.PodResizeInProgress).Message; !strings.Contains(msg, "runtime busy") {
		t.Errorf("c's InProgress message %q, want the actuation's error", msg)
	}

	// The runtime recovers: the next sync completes generation 2.
	w.fail = nil
	ev = len(w.events)
	w.now = w.now.Add(BackOffPeriod)
	w.run(Tick{Now: w.now})
	got := w.events[ev:]
	if len(got) != 1 || got[0].Reason != ReasonResizeCompleted || got[0].Resize.Generation != 2 {
		t.Errorf("events once the runtime recovers: %+v, want ResizeCompleted of generation 2", got)
	}
}

// TestRestartBackfillByVersion: the 1.33 and 1.34 profiles keep
// resizelet's behaviour from before the backfill ([UNVERIFIED] for those
// releases, see profile.BackfillsResizeConditions): the restarted kubelet
// sets the conditions again as it decides and syncs, so the failing sync
// sets InProgress at the pod's current generation (those releases emit no
// ResizeDeferred or ResizeError). 1.36 and 1.37 backfill as 1.35 does:
// InProgress keeps its generation and no event repeats.
func TestRestartBackfillByVersion(t *testing.T) {
	for _, tc := range []struct {
		v          profile.Version
		generation int64 // of c's InProgress after the restart
	}{{profile.V133, 3}, {profile.V134, 3}, {profile.V136, 2}, {profile.V137, 2}} {
		t.Run(string(tc.v), func(t *testing.T) {
			w, _, ev := restartWithConditions(t, tc.v)
			if got := w.condition("c", v1.PodResizeInProgress).ObservedGeneration; got != tc.generation {
				t.Errorf("c's InProgress generation after the restart %d, want %d", got, tc.generation)
			}
			if tc.generation == 2 {
				if got := w.eventLines(ev); len(got) != 0 {
					t.Errorf("events after the restart: %q, want none", got)
				}
			}
		})
	}
}

// TestBackfillReplacesHeldConditions: the backfill takes each condition
// type the API status has, replacing the one held, forcing status True
// and setting both times to now; a type the status lacks is left as it
// is (resizeConditions.backfill).
func TestBackfillReplacesHeldConditions(t *testing.T) {
	t0, t1 := metav1.NewTime(epoch), metav1.NewTime(epoch.Add(time.Hour))
	var c resizeConditions
	c.setInProgress("", "", 1, t0)
	c.setPending(v1.PodReasonDeferred, "old", 1, t0)
	c.backfill([]v1.PodCondition{
		{Type: v1.PodReady, Status: v1.ConditionTrue},
		{Type: v1.PodResizePending, Status: v1.ConditionUnknown, Reason: v1.PodReasonInfeasible, Message: "m", ObservedGeneration: 4,
			LastProbeTime: t0, LastTransitionTime: t0},
	}, t1)
	want := v1.PodCondition{Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: v1.PodReasonInfeasible, Message: "m",
		ObservedGeneration: 4, LastProbeTime: t1, LastTransitionTime: t1}
	if diff := cmp.Diff(&want, c.pending); diff != "" {
		t.Errorf("pending (-want +got):\n%s", diff)
	}
	if c.inProgress == nil || c.inProgress.ObservedGeneration != 1 || !c.inProgress.LastProbeTime.Equal(&t0) {
		t.Errorf("inProgress %+v, want the one held", c.inProgress)
	}
}

package core

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Times the condition tests choose: condT0 is when an existing condition
// was written, condT1 when the call under test runs.
var (
	condT0 = metav1.NewTime(time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC))
	condT1 = metav1.NewTime(time.Date(2025, 3, 1, 10, 0, 5, 0, time.UTC))
)

// cond builds a resize condition as the status manager stores it.
func cond(t v1.PodConditionType, reason, message string, generation int64, probe, transition metav1.Time) *v1.PodCondition {
	return &v1.PodCondition{
		Type:               t,
		Status:             v1.ConditionTrue,
		ObservedGeneration: generation,
		LastProbeTime:      probe,
		LastTransitionTime: transition,
		Reason:             reason,
		Message:            message,
	}
}

func TestSetPending(t *testing.T) {
	const (
		deferred   = v1.PodReasonDeferred
		infeasible = v1.PodReasonInfeasible
	)
	cases := []struct {
		name        string
		old         *v1.PodCondition
		reason, msg string
		generation  int64
		wantChanged bool
		want        *v1.PodCondition
	}{
		{
			name:   "first condition",
			reason: deferred, msg: "Node didn't have enough resource: cpu", generation: 2,
			wantChanged: true,
			want:        cond(v1.PodResizePending, deferred, "Node didn't have enough resource: cpu", 2, condT1, condT1),
		},
		{
			// The Deferred message's numbers moved: the condition is
			// updated in place, its transition time kept, and no change is
			// reported (no new event).
			name:   "new message only",
			old:    cond(v1.PodResizePending, deferred, "requested: 3, available: 2", 2, condT0, condT0),
			reason: deferred, msg: "requested: 3, available: 1", generation: 2,
			wantChanged: false,
			want:        cond(v1.PodResizePending, deferred, "requested: 3, available: 1", 2, condT1, condT0),
		},
		{
			name:   "same everything",
			old:    cond(v1.PodResizePending, deferred, "m", 2, condT0, condT0),
			reason: deferred, msg: "m", generation: 2,
			wantChanged: false,
			want:        cond(v1.PodResizePending, deferred, "m", 2, condT1, condT0),
		},
		{
			name:   "new reason",
			old:    cond(v1.PodResizePending, deferred, "m", 2, condT0, condT0),
			reason: infeasible, msg: "m", generation: 2,
			wantChanged: true,
			want:        cond(v1.PodResizePending, infeasible, "m", 2, condT1, condT1),
		},
		{
			// A new generation is a change, but the reason is the same, so
			// the transition time stays.
			name:   "new generation",
			old:    cond(v1.PodResizePending, deferred, "m", 2, condT0, condT0),
			reason: deferred, msg: "m", generation: 3,
			wantChanged: true,
			want:        cond(v1.PodResizePending, deferred, "m", 3, condT1, condT0),
		},
		{
			name:   "new reason and generation",
			old:    cond(v1.PodResizePending, infeasible, "a", 1, condT0, condT0),
			reason: deferred, msg: "b", generation: 4,
			wantChanged: true,
			want:        cond(v1.PodResizePending, deferred, "b", 4, condT1, condT1),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// An InProgress condition is present to show setPending leaves
			// it alone.
			inProgress := cond(v1.PodResizeInProgress, "", "", 1, condT0, condT0)
			c := &resizeConditions{pending: tc.old, inProgress: inProgress}
			if got := c.setPending(tc.reason, tc.msg, tc.generation, condT1); got != tc.wantChanged {
				t.Errorf("setPending() = %v, want %v", got, tc.wantChanged)
			}
			if diff := cmp.Diff(tc.want, c.pending); diff != "" {
				t.Errorf("pending condition mismatch (-want +got):\n%s", diff)
			}
			if c.inProgress != inProgress {
				t.Errorf("setPending replaced the InProgress condition")
			}
		})
	}
}

func TestSetInProgress(t *testing.T) {
	const errReason = v1.PodReasonError
	cases := []struct {
		name        string
		old         *v1.PodCondition
		reason, msg string
		generation  int64
		wantUpdated bool
		want        *v1.PodCondition
	}{
		{
			// A new condition is an update (SyncPod's callers of this
			// kind ignore it).
			name:   "first condition, no reason",
			reason: "", msg: "", generation: 3,
			wantUpdated: true,
			want:        cond(v1.PodResizeInProgress, "", "", 3, condT1, condT1),
		},
		{
			name:   "first condition is an error",
			reason: errReason, msg: "failed to update container", generation: 3,
			wantUpdated: true,
			want:        cond(v1.PodResizeInProgress, errReason, "failed to update container", 3, condT1, condT1),
		},
		{
			// An existing condition keeps the generation it observed: the
			// resize in progress is still the one of that generation. Only
			// the probe time moves, which is no update.
			name:   "keeps observedGeneration",
			old:    cond(v1.PodResizeInProgress, "", "", 2, condT0, condT0),
			reason: "", msg: "", generation: 5,
			want: cond(v1.PodResizeInProgress, "", "", 2, condT1, condT0),
		},
		{
			// Empty reason and message keep the old ones, so an Error stays
			// until the condition is cleared, and that is no update.
			name:   "empty reason and message keep the error",
			old:    cond(v1.PodResizeInProgress, errReason, "boom", 2, condT0, condT0),
			reason: "", msg: "", generation: 4,
			wantUpdated: false,
			want:        cond(v1.PodResizeInProgress, errReason, "boom", 2, condT1, condT0),
		},
		{
			name:   "transition into Error",
			old:    cond(v1.PodResizeInProgress, "", "", 2, condT0, condT0),
			reason: errReason, msg: "boom", generation: 4,
			wantUpdated: true,
			want:        cond(v1.PodResizeInProgress, errReason, "boom", 2, condT1, condT1),
		},
		{
			// Set to Error again with another message: an update
			// (SetPodResizeInProgressCondition compares the message too),
			// so the kubelet emits another ResizeError; the transition
			// time is kept, as the reason is the same.
			name:   "Error again, another message",
			old:    cond(v1.PodResizeInProgress, errReason, "first", 2, condT0, condT0),
			reason: errReason, msg: "second", generation: 2,
			wantUpdated: true,
			want:        cond(v1.PodResizeInProgress, errReason, "second", 2, condT1, condT0),
		},
		{
			// The same error again is no update: no second event.
			name:   "Error again, same message",
			old:    cond(v1.PodResizeInProgress, errReason, "first", 2, condT0, condT0),
			reason: errReason, msg: "first", generation: 7,
			wantUpdated: false,
			want:        cond(v1.PodResizeInProgress, errReason, "first", 2, condT1, condT0),
		},
		{
			// Leaving Error for another non-empty reason moves the
			// transition time and is an update.
			name:   "out of Error",
			old:    cond(v1.PodResizeInProgress, errReason, "boom", 2, condT0, condT0),
			reason: "Retrying", msg: "again", generation: 2,
			wantUpdated: true,
			want:        cond(v1.PodResizeInProgress, "Retrying", "again", 2, condT1, condT1),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pending := cond(v1.PodResizePending, v1.PodReasonDeferred, "m", 1, condT0, condT0)
			c := &resizeConditions{pending: pending, inProgress: tc.old}
			if got := c.setInProgress(tc.reason, tc.msg, tc.generation, condT1); got != tc.wantUpdated {
				t.Errorf("setInProgress() = %v, want %v", got, tc.wantUpdated)
			}
			if diff := cmp.Diff(tc.want, c.inProgress); diff != "" {
				t.Errorf("InProgress condition mismatch (-want +got):\n%s", diff)
			}
			if c.pending != pending {
				t.Errorf("setInProgress replaced the Pending condition")
			}
		})
	}
}

// TestSetInProgressErrorOnce replays the sequence the kubelet goes through
// when an update keeps failing: the condition is updated (and ResizeError
// sent) on the first failure, on a failure with another message, and
// after the condition was cleared; a failure with the same message and a
// sync without news are no update.
func TestSetInProgressErrorOnce(t *testing.T) {
	var c resizeConditions
	steps := []struct {
		name  string
		do    func() bool
		wantB bool
	}{
		{"start", func() bool { return c.setInProgress("", "", 1, condT0) }, true},
		{"first failure", func() bool { return c.setInProgress(v1.PodReasonError, "e1", 1, condT0) }, true},
		{"same failure", func() bool { return c.setInProgress(v1.PodReasonError, "e1", 1, condT1) }, false},
		{"another failure", func() bool { return c.setInProgress(v1.PodReasonError, "e2", 1, condT1) }, true},
		{"sync without news", func() bool { return c.setInProgress("", "", 1, condT1) }, false},
		{"clear", func() bool { _, had := c.clearInProgress(); return had }, true},
		{"failure after clearing", func() bool { return c.setInProgress(v1.PodReasonError, "e3", 2, condT1) }, true},
	}
	for _, s := range steps {
		if got := s.do(); got != s.wantB {
			t.Fatalf("step %q = %v, want %v", s.name, got, s.wantB)
		}
	}
}

func TestClearInProgress(t *testing.T) {
	cases := []struct {
		name    string
		cur     *v1.PodCondition
		wantGen int64
		wantHad bool
	}{
		{name: "none", cur: nil, wantGen: 0, wantHad: false},
		{name: "generation 7", cur: cond(v1.PodResizeInProgress, "", "", 7, condT0, condT0), wantGen: 7, wantHad: true},
		// A condition that observed generation 0 is still a condition.
		{name: "generation 0", cur: cond(v1.PodResizeInProgress, v1.PodReasonError, "e", 0, condT0, condT0), wantGen: 0, wantHad: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pending := cond(v1.PodResizePending, v1.PodReasonDeferred, "m", 1, condT0, condT0)
			c := &resizeConditions{pending: pending, inProgress: tc.cur}
			gen, had := c.clearInProgress()
			if gen != tc.wantGen || had != tc.wantHad {
				t.Errorf("clearInProgress() = (%d, %v), want (%d, %v)", gen, had, tc.wantGen, tc.wantHad)
			}
			if c.inProgress != nil {
				t.Errorf("InProgress condition still set after clearInProgress")
			}
			if c.pending != pending {
				t.Errorf("clearInProgress changed the Pending condition")
			}
			// A second clear finds nothing.
			if gen, had := c.clearInProgress(); gen != 0 || had {
				t.Errorf("second clearInProgress() = (%d, %v), want (0, false)", gen, had)
			}
		})
	}
}

func TestClearPending(t *testing.T) {
	cases := []struct {
		name    string
		cur     *v1.PodCondition
		wantHad bool
	}{
		{name: "none", cur: nil, wantHad: false},
		{name: "deferred", cur: cond(v1.PodResizePending, v1.PodReasonDeferred, "m", 1, condT0, condT0), wantHad: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inProgress := cond(v1.PodResizeInProgress, "", "", 1, condT0, condT0)
			c := &resizeConditions{pending: tc.cur, inProgress: inProgress}
			if got := c.clearPending(); got != tc.wantHad {
				t.Errorf("clearPending() = %v, want %v", got, tc.wantHad)
			}
			if c.pending != nil {
				t.Errorf("Pending condition still set after clearPending")
			}
			if c.inProgress != inProgress {
				t.Errorf("clearPending changed the InProgress condition")
			}
			if got := c.clearPending(); got {
				t.Errorf("second clearPending() = true, want false")
			}
		})
	}
}

func TestConditionsList(t *testing.T) {
	pending := cond(v1.PodResizePending, v1.PodReasonInfeasible, "too big", 3, condT1, condT0)
	inProgress := cond(v1.PodResizeInProgress, v1.PodReasonError, "boom", 2, condT1, condT1)
	cases := []struct {
		name       string
		pending    *v1.PodCondition
		inProgress *v1.PodCondition
		want       []v1.PodCondition
	}{
		{name: "none", want: nil},
		{name: "pending only", pending: pending, want: []v1.PodCondition{*pending}},
		{name: "in progress only", inProgress: inProgress, want: []v1.PodCondition{*inProgress}},
		// The kubelet writes PodResizePending before PodResizeInProgress.
		{name: "both", pending: pending, inProgress: inProgress, want: []v1.PodCondition{*pending, *inProgress}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &resizeConditions{pending: tc.pending.DeepCopy(), inProgress: tc.inProgress.DeepCopy()}
			got := c.listLike(nil)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("list() mismatch (-want +got):\n%s", diff)
			}
			// The list is a copy: changing it must not change the stored
			// conditions.
			for i := range got {
				got[i].Reason = "Changed"
				got[i].Message = "changed"
				got[i].ObservedGeneration = 99
				got[i].LastTransitionTime = metav1.NewTime(condT1.Add(time.Hour))
			}
			if diff := cmp.Diff(tc.pending, c.pending); diff != "" {
				t.Errorf("changing the list changed the Pending condition (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.inProgress, c.inProgress); diff != "" {
				t.Errorf("changing the list changed the InProgress condition (-want +got):\n%s", diff)
			}
		})
	}
}

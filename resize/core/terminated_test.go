package core

import (
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/allocation"
	"github.com/resizelet/resizelet/resize/profile"
)

// TestTerminatedRetriesOnlyWhilePending: a status that makes a pod
// terminal retries the pending resizes from 1.36 (pod_terminated), once,
// and only while some resize is pending: HandlePodReconcile
// (pkg/kubelet/kubelet.go) checks HasPendingResizes first, so with none a
// finished pod leaves the retry timer alone. 1.35 never retries for it.
func TestTerminatedRetriesOnlyWhilePending(t *testing.T) {
	for _, tc := range []struct {
		v       profile.Version
		pending bool
		want    string // the trigger of the one retry, "" for none
	}{
		{profile.V135, true, ""},
		{profile.V136, true, allocation.TriggerPodTerminated},
		{profile.V137, true, allocation.TriggerPodTerminated},
		{profile.V136, false, ""},
		{profile.V137, false, ""},
	} {
		c, err := New(NodeConfig{Profile: tc.v})
		if err != nil {
			t.Fatal(err)
		}
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: "default", UID: "uid-job"},
			Spec:   v1.PodSpec{Containers: []v1.Container{{Name: "c", Resources: resources("1", "", "", "")}}},
			Status: v1.PodStatus{Phase: v1.PodRunning}}
		ps := c.newPodState(pod)
		ps.admitted = true
		if tc.pending {
			c.queue.Push(allocation.PendingResize{UID: "uid-other"})
		}
		c.allocTasks = nil
		done := pod.Status.DeepCopy()
		done.Phase = v1.PodSucceeded
		c.writeStatus(ps, done)
		var triggers []string
		for _, task := range c.allocTasks {
			if r, ok := task.(*retryTask); ok {
				triggers = append(triggers, r.trigger)
			}
		}
		switch {
		case tc.want == "" && len(triggers) != 0:
			t.Errorf("%s pending=%v: retries %v, want none", tc.v, tc.pending, triggers)
		case tc.want != "" && (len(triggers) != 1 || triggers[0] != tc.want):
			t.Errorf("%s pending=%v: retries %v, want one %s", tc.v, tc.pending, triggers, tc.want)
		}
	}
}

// finishJob makes the world's job pod (restartPolicy Never) with a
// Deferred resize and ends its container with exit code 0, then syncs. It
// returns the index of the first event after the exit.
func finishJob(t *testing.T, v profile.Version) (*world, int) {
	t.Helper()
	w := newWorld(t, smallNode(v))
	w.add(testPod("a", resources("1", "", "", "")))
	job := testPod("job", resources("500m", "", "", ""))
	job.Spec.RestartPolicy = v1.RestartPolicyNever
	w.add(job)
	w.resize("job", resources("1500m", "", "", ""))
	if c := w.condition("job", v1.PodResizePending); c == nil || c.Reason != v1.PodReasonDeferred {
		t.Fatalf("job's Pending %+v, want Deferred", c)
	}
	id := w.c.podByName("default", "job").containers.id("c1")
	ev := len(w.events)
	w.ctrs[id].State = runtimeapi.ContainerState_CONTAINER_EXITED
	w.run(SyncRequested{Now: w.now})
	if got := w.statuses["job"].Phase; got != v1.PodSucceeded {
		t.Fatalf("job's phase %s, want Succeeded", got)
	}
	return w, ev
}

// deferredEvents counts the job's ResizeDeferred events from index from.
func (w *world) deferredEvents(from int) int {
	n := 0
	for _, e := range w.events[from:] {
		if e.Pod == "job" && e.Reason == ReasonResizeDeferred {
			n++
		}
	}
	return n
}

// TestTerminalPodLosesResizeConditions: from 1.35 a pod that reaches a
// terminal phase is written without resize conditions, which the status
// manager clears without an event (determinePodResizeStatus with
// podIsTerminal, pkg/kubelet/kubelet_pods.go, from SyncTerminatingPod), and
// its pod worker is done with it: no resync, no sync. Its resize stays
// queued, so the next retry sets PodResizePending again, anew, with a
// second ResizeDeferred, in the status manager only: the finished pod's
// status keeps no condition. On 1.35 that retry is the periodic one; from
// 1.36 the terminal status itself retries (pod_terminated). The 1.34
// profile keeps the conditions and syncs on ([UNVERIFIED]).
func TestTerminalPodLosesResizeConditions(t *testing.T) {
	for _, v := range []profile.Version{profile.V134, profile.V135, profile.V136, profile.V137} {
		t.Run(string(v), func(t *testing.T) {
			w, ev := finishJob(t, v)
			ps := w.c.podByName("default", "job")
			p := profile.New(v, nil)
			if !p.TerminalClearsResizeConditions() {
				if w.condition("job", v1.PodResizePending) == nil || ps.timerIdx < 0 {
					t.Errorf("conditions %+v, resync armed %v: want the Pending kept and a resync", w.statuses["job"].Conditions, ps.timerIdx >= 0)
				}
				return
			}
			if c := w.statuses["job"].Conditions; len(c) != 0 {
				t.Errorf("the finished job's status has conditions %+v", c)
			}
			if ps.timerIdx >= 0 {
				t.Errorf("the finished job has a resync at %v", ps.resyncAt)
			}
			if !w.c.queue.Has(ps.uid) {
				t.Error("the finished job's resize left the queue")
			}
			wantNow := 0
			if p.RetryOnPodTerminated() {
				wantNow = 1
			}
			if got := w.deferredEvents(ev); got != wantNow || (ps.conds.pending != nil) != (wantNow == 1) {
				t.Errorf("on finishing: %d ResizeDeferred, Pending %+v; want %d event(s) and the condition with it", got, ps.conds.pending, wantNow)
			}

			lg := len(w.log)
			w.now = w.c.retry.Due()
			w.run(Tick{Now: w.now})
			if got := w.deferredEvents(ev); got != 1 || ps.conds.pending == nil {
				t.Errorf("after the periodic retry: %d ResizeDeferred since the job finished, Pending %+v; want one, and the condition set again", got, ps.conds.pending)
			}
			for _, l := range w.log[lg:] {
				if strings.Contains(l, "default/job") {
					t.Errorf("the finished job was synced: %s", l)
				}
			}
			w.run(SyncRequested{Now: w.now})
			if c := w.statuses["job"].Conditions; len(c) != 0 {
				t.Errorf("a sync request wrote the finished job's conditions %+v", c)
			}
		})
	}
}

// TestTerminalPodCompletesInProgress: a pod whose resize is allocated but
// not actuated when its container exits gets ResizeCompleted from the
// sync that finds nothing running (SyncPod's IsPodResizeInProgress check
// comes first), then loses the condition with the terminal status.
func TestTerminalPodCompletesInProgress(t *testing.T) {
	w := newWorld(t, smallNode(profile.V135))
	job := testPod("job", resources("500m", "", "", ""))
	job.Spec.RestartPolicy = v1.RestartPolicyNever
	w.add(job)
	ps := w.c.podByName("default", "job")
	id := ps.containers.id("c1")
	w.fail = func(a Action) error {
		if u, ok := a.(UpdateContainerResources); ok && u.ID == id {
			return errors.New("runtime busy")
		}
		return nil
	}
	w.resize("job", resources("600m", "", "", ""))
	if c := w.condition("job", v1.PodResizeInProgress); c == nil || c.Reason != v1.PodReasonError {
		t.Fatalf("job's InProgress %+v, want Error", c)
	}
	ev := len(w.events)
	w.ctrs[id].State = runtimeapi.ContainerState_CONTAINER_EXITED
	w.run(SyncRequested{Now: w.now})
	if got := w.events[ev:]; len(got) != 1 || got[0].Reason != ReasonResizeCompleted {
		t.Errorf("events when the job finishes: %+v, want ResizeCompleted", got)
	}
	if c := w.statuses["job"].Conditions; w.statuses["job"].Phase != v1.PodSucceeded || len(c) != 0 {
		t.Errorf("the job's status: phase %s, conditions %+v", w.statuses["job"].Phase, c)
	}
}

package core

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/allocation"
	"github.com/resizelet/resizelet/resize/profile"
)

// deferredB builds, on a 2-CPU node of version v, pod a (1 CPU, restart
// policy Never) and pod b whose resize to 1500m is Deferred, at the
// world's epoch.
func deferredB(t *testing.T, v profile.Version) *world {
	t.Helper()
	w := newWorld(t, smallNode(v))
	a := testPod("a", resources("1", "", "", ""))
	a.Spec.RestartPolicy = v1.RestartPolicyNever
	w.add(a)
	w.add(testPod("b", resources("500m", "", "", "")))
	w.resize("b", resources("1500m", "", "", ""))
	if c := w.condition("b", v1.PodResizePending); c == nil || c.Reason != v1.PodReasonDeferred {
		t.Fatalf("b's Pending %+v, want Deferred", c)
	}
	return w
}

// TestAddingPodsRetriesNothing: from 1.35 adding a pod does not retry the
// pending resizes: HandlePodAdditions (pkg/kubelet/kubelet.go) retries
// only when a pod it admits has desired resources other than its
// allocation (len(pendingResizes) > 0), and a new pod has none. So a
// Deferred resize is not decided again (its condition's probe time stays),
// and the periodic retry stays due when it was. The 1.33 and 1.34
// profiles keep resizelet's earlier retry after every batch
// ([UNVERIFIED]), which decides b again and resets the timer.
func TestAddingPodsRetriesNothing(t *testing.T) {
	for _, v := range profile.Versions() {
		t.Run(string(v), func(t *testing.T) {
			w := deferredB(t, v)
			probed := w.condition("b", v1.PodResizePending).LastProbeTime
			due := w.c.retry.Due()
			w.now = w.now.Add(time.Minute)
			w.add(testPod("c", resources("100m", "", "", "")))
			w.run(PodsAdded{Pods: []*v1.Pod{testPod("d", resources("100m", "", "", "")), testPod("e", resources("100m", "", "", ""))}, Now: w.now})
			c := w.condition("b", v1.PodResizePending)
			if c == nil || c.Reason != v1.PodReasonDeferred {
				t.Fatalf("b's Pending after the additions: %+v, want Deferred", c)
			}
			if profile.New(v, nil).RetriesAddedPodsOnlyWithChange() {
				if !c.LastProbeTime.Equal(&probed) {
					t.Errorf("b's Pending probed at %v, want %v: no retry decides it again", c.LastProbeTime, probed)
				}
				if got := w.c.retry.Due(); !got.Equal(due) {
					t.Errorf("retry due %v, want %v: no retry resets it", got, due)
				}
				return
			}
			if !c.LastProbeTime.Time.Equal(w.now) {
				t.Errorf("b's Pending probed at %v, want %v: the pods_added retry decides it again", c.LastProbeTime, w.now)
			}
			if got, want := w.c.retry.Due(), w.now.Add(allocation.RetryDelay); !got.Equal(want) {
				t.Errorf("retry due %v, want %v: the pods_added retry resets it", got, want)
			}
		})
	}
}

// TestFreedRoomWaitsForThePeriodicRetry: on 1.35 a pod that finishes
// retries nothing (pod_terminated comes with 1.36) and a pod added after
// it retries nothing either, so b's Deferred resize, which now fits, is
// accepted by the periodic retry, at the time the pod_updated retry of
// its request set, and not when c was added.
func TestFreedRoomWaitsForThePeriodicRetry(t *testing.T) {
	w := deferredB(t, profile.V135)
	due := w.c.retry.Due()
	if want := epoch.Add(allocation.RetryDelay); !due.Equal(want) {
		t.Fatalf("retry due %v, want %v", due, want)
	}
	id := w.c.podByName("default", "a").containers.id("c1")
	w.ctrs[id].State = runtimeapi.ContainerState_CONTAINER_EXITED
	w.ctrs[id].ExitCode = 1
	w.run(SyncRequested{Now: w.now})
	if got := w.statuses["a"].Phase; got != v1.PodFailed {
		t.Fatalf("a's phase %s, want Failed", got)
	}
	w.now = w.now.Add(time.Minute)
	ev := len(w.events)
	w.add(testPod("c", resources("100m", "", "", "")))
	if c := w.condition("b", v1.PodResizePending); c == nil {
		t.Fatal("b's resize was accepted when c was added")
	}
	w.now = due.Add(-time.Second)
	w.run(Tick{Now: w.now})
	if c := w.condition("b", v1.PodResizePending); c == nil {
		t.Fatal("b's resize was accepted before the periodic retry")
	}
	w.now = due
	w.run(Tick{Now: w.now})
	if c := w.condition("b", v1.PodResizePending); c != nil {
		t.Errorf("b still pending after the periodic retry: %+v", c)
	}
	var started []string
	for _, e := range w.events[ev:] {
		if e.Reason == ReasonResizeStarted {
			started = append(started, e.Pod+" "+e.Time.Sub(epoch).String())
		}
	}
	if diff := cmp.Diff([]string{"b 3m0s"}, started); diff != "" {
		t.Errorf("ResizeStarted (-want +got):\n%s", diff)
	}
}

// TestRestartRetriesOnlyWithPendingChange: a kubelet that starts retries
// the pending resizes (pods_added) only when a pod it admits has a spec
// that differs from its checkpointed allocation. Without one the periodic
// retry stays first due InitialRetryDelay after the start; with one the
// retry runs at the start and sets it RetryDelay later. The 1.33 and 1.34
// profiles retry at every start.
func TestRestartRetriesOnlyWithPendingChange(t *testing.T) {
	for _, v := range profile.Versions() {
		for _, pending := range []bool{false, true} {
			w := newWorld(t, smallNode(v))
			w.add(testPod("a", resources("1", "", "", "")))
			w.add(testPod("b", resources("500m", "", "", "")))
			if pending {
				w.resize("b", resources("1500m", "", "", ""))
			}
			w.now = w.now.Add(time.Hour)
			w.restart()
			want := w.now.Add(allocation.InitialRetryDelay)
			if pending || !profile.New(v, nil).RetriesAddedPodsOnlyWithChange() {
				want = w.now.Add(allocation.RetryDelay)
			}
			if got := w.c.retry.Due(); !got.Equal(want) {
				t.Errorf("%s, pending %v: retry due %v after the restart, want %v", v, pending, got.Sub(w.now), want.Sub(w.now))
			}
		}
	}
}

// TestRetryNextRunsBeforeQueuedTasks: the retry an allocation task
// decides on goes right after that task, before the tasks already queued
// behind it, wherever the queue starts in its slice.
func TestRetryNextRunsBeforeQueuedTasks(t *testing.T) {
	for _, head := range []int{0, 2} {
		c, err := New(NodeConfig{})
		if err != nil {
			t.Fatal(err)
		}
		running, queued := &updateTask{uid: "running"}, &updateTask{uid: "queued"}
		c.allocTasks = append(make([]op, head), running, queued)
		c.allocHead = head
		c.retryNext(allocation.TriggerPodsAdded)
		tasks := c.allocTasks[head:]
		if len(tasks) != 3 || tasks[0] != op(running) || tasks[2] != op(queued) {
			t.Fatalf("head %d: tasks %v, want the running task, the retry, the queued task", head, tasks)
		}
		if r, ok := tasks[1].(*retryTask); !ok || r.trigger != allocation.TriggerPodsAdded {
			t.Errorf("head %d: task after the running one is %#v, want a pods_added retry", head, tasks[1])
		}
	}
}

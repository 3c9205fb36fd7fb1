package core

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/resizelet/resizelet/resize/profile"
)

// TestRevertClearsPendingWithoutRetry: a Deferred resize reverted to the
// allocation loses its PodResizePending at once, and from 1.35 the kubelet
// neither queues the pod nor retries (HandlePodUpdates in
// pkg/kubelet/kubelet.go: recordResizeOperations, then
// ClearPodResizePendingCondition when UpdatePodFromAllocation finds
// nothing to change). So the periodic retry stays due when it was, and
// the pod stays queued until that retry drops it, silently. The 1.33 and
// 1.34 profiles keep resizelet's earlier pod_updated retry ([UNVERIFIED]),
// which drops the pod and resets the timer at once.
func TestRevertClearsPendingWithoutRetry(t *testing.T) {
	for _, v := range []profile.Version{profile.V134, profile.V135, profile.V136, profile.V137} {
		t.Run(string(v), func(t *testing.T) {
			w := newWorld(t, smallNode(v))
			w.add(testPod("a", resources("1", "", "", "")))
			w.add(testPod("b", resources("500m", "", "", "")))
			w.resize("b", resources("1500m", "", "", ""))
			if w.condition("b", v1.PodResizePending) == nil {
				t.Fatal("b's resize is not pending")
			}
			due := w.c.retry.Due()
			uid := w.c.podByName("default", "b").uid

			w.now = w.now.Add(time.Minute)
			ev := len(w.events)
			w.resize("b", resources("500m", "", "", ""))
			if c := w.condition("b", v1.PodResizePending); c != nil {
				t.Errorf("b's status after the revert still has %+v", c)
			}
			if got := w.eventLines(ev); len(got) != 0 {
				t.Errorf("events of the revert: %q, want none", got)
			}
			if !profile.New(v, nil).RevertClearsPending() {
				if got, want := w.c.retry.Due(), w.now.Add(3*time.Minute); !got.Equal(want) {
					t.Errorf("retry due %v, want %v (the pod_updated retry reset it)", got, want)
				}
				if w.c.queue.Has(uid) {
					t.Error("b still queued after the pod_updated retry")
				}
				return
			}
			if got := w.c.retry.Due(); !got.Equal(due) {
				t.Errorf("retry due %v after the revert, want %v: no retry resets it", got, due)
			}
			if !w.c.queue.Has(uid) {
				t.Error("b left the queue: only a retry drops it")
			}
			w.now = due
			w.run(Tick{Now: w.now})
			if w.c.queue.Has(uid) {
				t.Error("b still queued after the periodic retry")
			}
			if got := w.eventLines(ev); len(got) != 0 {
				t.Errorf("events by the periodic retry: %q, want none", got)
			}
		})
	}
}

// TestRevertOfInfeasibleLeavesQueueAlone: an Infeasible resize is not
// queued; reverted, its condition is cleared without the pod joining the
// queue or a retry (from 1.35).
func TestRevertOfInfeasibleLeavesQueueAlone(t *testing.T) {
	w := newWorld(t, smallNode(profile.V135))
	w.add(testPod("b", resources("500m", "", "", "")))
	w.resize("b", resources("3", "", "", ""))
	if c := w.condition("b", v1.PodResizePending); c == nil || c.Reason != v1.PodReasonInfeasible {
		t.Fatalf("b's Pending %+v, want Infeasible", c)
	}
	due := w.c.retry.Due()
	w.now = w.now.Add(time.Minute)
	w.resize("b", resources("500m", "", "", ""))
	if c := w.condition("b", v1.PodResizePending); c != nil {
		t.Errorf("b's status after the revert still has %+v", c)
	}
	if w.c.queue.Len() != 0 || !w.c.retry.Due().Equal(due) {
		t.Errorf("queue %v, retry due %v (want empty, %v)", w.c.queue.Items(), w.c.retry.Due(), due)
	}
}

// TestResizeOperations pins recordResizeOperations' answer: a change of a
// resizable container's cpu or memory request or limit, or of the
// pod-level resources, counts; a non-sidecar init container counts only
// where init containers are resizable; a change of another resource or
// of nothing does not.
func TestResizeOperations(t *testing.T) {
	base := testPod("p", resources("500m", "64Mi", "", ""))
	base.Spec.InitContainers = []v1.Container{{Name: "init", Resources: resources("100m", "", "", "")}}
	for _, tc := range []struct {
		name          string
		change        func(p *v1.Pod)
		want, initToo bool
	}{
		{"nothing", func(*v1.Pod) {}, false, false},
		{"cpu request", func(p *v1.Pod) { p.Spec.Containers[0].Resources = resources("600m", "64Mi", "", "") }, true, true},
		{"memory limit added", func(p *v1.Pod) { p.Spec.Containers[0].Resources = resources("500m", "64Mi", "", "64Mi") }, true, true},
		{"same amount, other format", func(p *v1.Pod) { p.Spec.Containers[0].Resources = resources("0.5", "64Mi", "", "") }, false, false},
		{"other resource", func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Requests["ephemeral-storage"] = resources("1", "", "", "").Requests[v1.ResourceCPU]
		}, false, false},
		{"init container", func(p *v1.Pod) { p.Spec.InitContainers[0].Resources = resources("200m", "", "", "") }, false, true},
		{"pod-level resources", func(p *v1.Pod) { r := resources("1", "", "", ""); p.Spec.Resources = &r }, true, true},
	} {
		updated := base.DeepCopy()
		tc.change(updated)
		if got := resizeOperations(base, updated, false); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
		if got := resizeOperations(base, updated, true); got != tc.initToo {
			t.Errorf("%s with init containers resizable: %v, want %v", tc.name, got, tc.initToo)
		}
	}
}

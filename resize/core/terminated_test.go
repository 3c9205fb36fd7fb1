package core

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

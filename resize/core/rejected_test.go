package core

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resizelet/resizelet/resize/profile"
)

// rejectedAtRestart builds, on a 2-CPU node of version v, pod a (1 CPU)
// and pod b (500m) whose resize to 1500m is Deferred, gives b's API
// status a Ready condition and a condition of another owner, and
// restarts the kubelet an hour later on a node with 1 CPU: b no longer
// fits. It returns b's API status from before the restart.
func rejectedAtRestart(t *testing.T, v profile.Version) (*world, *v1.PodStatus) {
	t.Helper()
	w := newWorld(t, smallNode(v))
	w.add(testPod("a", resources("1", "", "", "")))
	w.add(testPod("b", resources("500m", "", "", "")))
	w.resize("b", resources("1500m", "", "", ""))
	old := w.statuses["b"].DeepCopy()
	if len(old.ContainerStatuses) != 1 || old.StartTime == nil || len(old.Conditions) != 1 {
		t.Fatalf("b's status before the restart: %+v", old)
	}
	old.Conditions = append(old.Conditions,
		v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue},
		v1.PodCondition{Type: "example.com/Gate", Status: v1.ConditionTrue, Reason: "Passed"})
	w.statuses["b"] = old
	w.now = w.now.Add(time.Hour)
	w.cfg.Capacity = w.cfg.Capacity.DeepCopy()
	w.cfg.Capacity[v1.ResourceCPU] = resource.MustParse("1")
	w.restart()
	return w, old
}

// TestRejectedAtRestartGetsAFreshStatus: a pod the admit handlers refuse
// when the kubelet starts gets the status rejectPod (pkg/kubelet/kubelet.go)
// writes, not its API status with a failed phase: the QoS class, phase
// Failed, the reason and message, the generation as observedGeneration
// and the start time it had (SetPodStatus and updateStatusInternal in
// pkg/kubelet/status/status_manager.go), and of its old conditions only
// those the kubelet does not own (mergePodStatus). No container status,
// no resize condition, no Ready. The status manager still takes the
// resize conditions over in memory (BackfillPodResizeConditions runs for
// every pod of the batch), and the rejected pod is not queued or synced.
func TestRejectedAtRestartGetsAFreshStatus(t *testing.T) {
	w, old := rejectedAtRestart(t, profile.V135)
	want := &v1.PodStatus{
		Phase:              v1.PodFailed,
		Reason:             "OutOfcpu",
		Message:            "Pod was rejected: Node didn't have enough resource: cpu, requested: 500, used: 1000, capacity: 1000",
		QOSClass:           v1.PodQOSBurstable,
		ObservedGeneration: 2,
		StartTime:          old.StartTime,
		Conditions:         []v1.PodCondition{{Type: "example.com/Gate", Status: v1.ConditionTrue, Reason: "Passed"}},
	}
	if diff := cmp.Diff(want, w.statuses["b"]); diff != "" {
		t.Errorf("b's status after the restart (-want +got):\n%s", diff)
	}
	ps := w.c.podByName("default", "b")
	if ps.admitted || ps.conds.pending == nil || ps.conds.pending.Reason != v1.PodReasonDeferred {
		t.Errorf("b in the kubelet: admitted %v, Pending %+v; want rejected, with the Deferred condition taken over", ps.admitted, ps.conds.pending)
	}
	if w.c.queue.Has(ps.uid) {
		t.Error("the rejected b joined the pending-resize queue")
	}
}

// TestRejectedAtRestartByVersion: 1.36 and 1.37 write the fresh status as
// 1.35 does; the 1.33 and 1.34 profiles keep resizelet's earlier status,
// the API one with the failed phase, reason and message
// ([UNVERIFIED], profile.RejectionWritesFreshStatus).
func TestRejectedAtRestartByVersion(t *testing.T) {
	for _, v := range profile.Versions() {
		t.Run(string(v), func(t *testing.T) {
			w, old := rejectedAtRestart(t, v)
			got := w.statuses["b"]
			if got.Phase != v1.PodFailed || got.Reason != "OutOfcpu" {
				t.Fatalf("b's status: phase %s, reason %s; want Failed, OutOfcpu", got.Phase, got.Reason)
			}
			if profile.New(v, nil).RejectionWritesFreshStatus() {
				if len(got.ContainerStatuses) != 0 || len(got.Conditions) != 1 {
					t.Errorf("b's status keeps %d container statuses and conditions %+v", len(got.ContainerStatuses), got.Conditions)
				}
				return
			}
			if diff := cmp.Diff(old.Conditions, got.Conditions); diff != "" || len(got.ContainerStatuses) != 1 {
				t.Errorf("b's status: %d container statuses, conditions (-old +got):\n%s", len(got.ContainerStatuses), diff)
			}
		})
	}
}

// TestRejectedNewPodStatus: a new pod the admit handlers refuse gets the
// same fresh status; with no start time of its own it gets the time it
// was rejected (updateStatusInternal), and a pod with an observedGeneration
// above its generation keeps it.
func TestRejectedNewPodStatus(t *testing.T) {
	w := newWorld(t, smallNode(profile.V135))
	w.now = w.now.Add(time.Minute)
	big := testPod("big", resources("3", "", "", ""))
	big.Status.ObservedGeneration = 5
	big.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionTrue}}
	w.add(big)
	at := metav1.NewTime(w.now)
	want := &v1.PodStatus{
		Phase:              v1.PodFailed,
		Reason:             "OutOfcpu",
		Message:            "Pod was rejected: Node didn't have enough resource: cpu, requested: 3000, used: 0, capacity: 2000",
		QOSClass:           v1.PodQOSBurstable,
		ObservedGeneration: 5,
		StartTime:          &at,
	}
	if diff := cmp.Diff(want, w.statuses["big"]); diff != "" {
		t.Errorf("big's status (-want +got):\n%s", diff)
	}
}

// TestKubeletOwnsCondition: the condition types the kubelet owns, and so
// drops from a rejected pod's old status (PodConditionByKubelet,
// pkg/kubelet/types/pod_status.go, with each version's default gates).
func TestKubeletOwnsCondition(t *testing.T) {
	for _, v := range []profile.Version{profile.V135, profile.V136} {
		c, err := New(NodeConfig{Profile: v})
		if err != nil {
			t.Fatal(err)
		}
		for typ, want := range map[v1.PodConditionType]bool{
			v1.PodScheduled: true, v1.PodReady: true, v1.PodInitialized: true, v1.ContainersReady: true,
			v1.PodResizePending: true, v1.PodResizeInProgress: true, v1.PodReadyToStartContainers: true,
			v1.AllContainersRestarting: v == profile.V136,
			v1.DisruptionTarget:        false, "example.com/Gate": false,
		} {
			if got := c.kubeletOwnsCondition(typ); got != want {
				t.Errorf("%s: kubeletOwnsCondition(%s) = %v, want %v", v, typ, got, want)
			}
		}
	}
}

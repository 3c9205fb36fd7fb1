package core

import (
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/allocation"
	"github.com/resizelet/resizelet/qos"
)

// Pod admission: HandlePodAdditions (podsAdded) and the admission of one
// pod (admitTask), with the status the kubelet writes for a pod it
// refuses.

// podsAdded is HandlePodAdditions: the pods join the node's pods, each is
// admitted in turn (an allocation task each), then podsAddedTask ends the
// batch. Nothing changes when a pod is refused.
func (c *Core) podsAdded(pods []*v1.Pod, now time.Time) error {
	seen := map[types.UID]bool{}
	for _, pod := range pods {
		if pod == nil {
			return fmt.Errorf("pods added: nil pod")
		}
		if _, ok := c.pods[pod.UID]; ok || seen[pod.UID] {
			return fmt.Errorf("pods added: %s/%s (uid %s) is already known", pod.Namespace, pod.Name, pod.UID)
		}
		seen[pod.UID] = true
	}
	c.setNow(now)
	added := newPodsAddedTask(len(pods))
	for _, pod := range pods {
		c.newPodState(pod)
		c.enqueueAlloc(&admitTask{uid: pod.UID})
		added.add(c, pod)
	}
	c.enqueueAlloc(added)
	return nil
}

// podsAddedTask is the end of HandlePodAdditions (pkg/kubelet/kubelet.go),
// once every pod of the batch has been through admission: from 1.35 the
// status manager takes the pods' resize conditions over from their API
// status (BackfillPodResizeConditions, pkg/kubelet/status/
// status_manager.go), and it recounts the gauges; then every admitted pod
// of the batch whose desired resources differ from its allocation joins
// the pending-resize queue (PushPendingResize), in the batch's order and
// with the backfilled conditions' times as its keys. From 1.35 the pending
// resizes are retried (pods_added) only when a pod of the batch had such a
// change (len(pendingResizes) > 0), which a new pod never has: in practice
// only when the kubelet starts. Without a retry the periodic retry's timer
// stays due when it was. The 1.33 and 1.34 profiles retry after every
// batch (profile.RetriesAddedPodsOnlyWithChange). The retry is a task of
// its own, run next.
type podsAddedTask struct {
	opOutput
	uids []types.UID
	// one holds uids for a batch of one pod (AddPod), which then costs
	// no slice of its own.
	one [1]types.UID
	// backfill are the resize conditions of the pods' API statuses, as
	// they arrived (a pod admission rejects has a new status by the time
	// this task runs); only pods with one are listed.
	backfill []apiConditions
}

// newPodsAddedTask returns the task for a batch of n pods.
func newPodsAddedTask(n int) *podsAddedTask {
	t := &podsAddedTask{}
	if n <= len(t.one) {
		t.uids = t.one[:0]
	} else {
		t.uids = make([]types.UID, 0, n)
	}
	return t
}

// apiConditions are the conditions of a pod's API status. Statuses are
// never changed in place, so the slice is the API's own.
type apiConditions struct {
	uid   types.UID
	conds []v1.PodCondition
}

// add lists a pod of the batch, and its API conditions when the version
// takes them over and it has a resize condition.
func (t *podsAddedTask) add(c *Core, pod *v1.Pod) {
	t.uids = append(t.uids, pod.UID)
	if c.s.profile.BackfillsResizeConditions() && slices.ContainsFunc(pod.Status.Conditions, func(c v1.PodCondition) bool {
		return c.Type == v1.PodResizePending || c.Type == v1.PodResizeInProgress
	}) {
		t.backfill = append(t.backfill, apiConditions{uid: pod.UID, conds: pod.Status.Conditions})
	}
}

func (t *podsAddedTask) advance(c *Core, _ []Action, _ []Result) ([]Action, bool, bool) {
	now := metav1.NewTime(c.now)
	for _, b := range t.backfill {
		if ps := c.pods[b.uid]; ps != nil {
			c.backfillConditions(ps, b.conds, now)
		}
	}
	c.recountAll()
	pending := false
	for _, uid := range t.uids {
		if ps := c.pods[uid]; ps != nil && ps.admitted && ps.view().Changed() {
			c.pushPending(ps)
			pending = true
		}
	}
	if pending || !c.s.profile.RetriesAddedPodsOnlyWithChange() {
		c.retryNext(allocation.TriggerPodsAdded)
	}
	return nil, false, true
}

// admitTask admits one pod (HandlePodAdditions' canAdmitPod): against the
// other admitted pods, with the pod's checkpointed allocation if it has
// one. An admitted pod's allocation is checkpointed and the pod queued for
// sync; a rejected pod fails with the kubelet's reason and message.
type admitTask struct {
	opOutput
	uid   types.UID
	phase int
}

func (t *admitTask) advance(c *Core, done []Action, res []Result) ([]Action, bool, bool) {
	ps := c.pods[t.uid]
	if ps == nil {
		return t.take(), false, true
	}
	switch t.phase {
	case 0:
		used := c.othersUsage(ps)
		decision := allocation.DecidePod(ps.view(), used, c.s.admit)
		if c.verify != nil {
			c.verify(ps, used, decision)
		}
		if decision.Outcome != allocation.Admitted {
			c.logAdmissionDenied(ps.pod(), decision.Reason, decision.Message)
			t.emit(c.event(&t.opOutput, ps.pod(), "", v1.EventTypeWarning, decision.Reason, decision.Message))
			t.emit(c.writeStatus(ps, c.rejectedStatus(ps.pod(), decision.Reason, decision.Message)))
			return t.take(), false, true
		}
		t.phase = 1
		t.write = AllocationRecord{UID: ps.uid, Resources: c.allocationFromPod(ps, ps.view())}
		return t.take(WriteAllocated{&t.write}), false, false
	default:
		if _, r, _ := resultOf[WriteAllocated](done, res); r.Err != nil {
			err := r.Err
			// AddPod's line (pkg/kubelet/allocation/allocation_manager.go).
			c.podError(ps.pod(), err, "SetPodAllocation failed")
			t.emit(c.event(&t.opOutput, ps.pod(), "", v1.EventTypeWarning, ReasonFailed, err.Error()))
		}
		ps.admitted = true
		c.recount(ps)
		ps.podCgroup = c.s.cfg.PodCgroup(qos.GetPodQOS(ps.pod()), ps.uid)
		c.markDirty(ps)
		return t.take(), false, true
	}
}

// rejectedStatus is the status the kubelet writes for a pod the admit
// handlers refused, as the API server ends up with it. From 1.35
// (profile.RejectionWritesFreshStatus) that is a new status, not the pod's
// old one: rejectPod (pkg/kubelet/kubelet.go) gives the status manager
// only the QoS class (the pod's own, v1qos.GetPodQOS), phase Failed, the
// reason and "Pod was rejected: " and the message; SetPodStatus and
// updateStatusInternal (pkg/kubelet/status/status_manager.go) add the
// pod's generation as observedGeneration (never less than the old one)
// and the old start time, or now; and mergePodStatus, as the status
// manager writes it, keeps of the old status only the conditions the
// kubelet does not own and the resource claim statuses. So a pod rejected
// when the kubelet starts loses its container statuses and its resize
// conditions (which the status manager still takes over in memory:
// podsAddedTask). The 1.33 and 1.34 profiles keep resizelet's earlier
// status, the old one with the failed phase, reason and message
// ([UNVERIFIED]).
//
// mergePodStatus also keeps the old phase, reason and message while the
// pod could still have running containers, which at a start holds until
// the pod workers have first been synced (pkg/kubelet/pod_workers.go,
// CouldHaveRunningContainers), within seconds; the status manager writes
// the Failed phase at its next sync. resizelet writes that final status
// at once.
func (c *Core) rejectedStatus(pod *v1.Pod, reason, message string) *v1.PodStatus {
	old := &pod.Status
	if !c.s.profile.RejectionWritesFreshStatus() {
		status := old.DeepCopy()
		status.Phase = v1.PodFailed
		status.Reason = reason
		status.Message = "Pod was rejected: " + message
		return status
	}
	status := &v1.PodStatus{
		QOSClass:           qos.GetPodQOS(pod),
		Phase:              v1.PodFailed,
		Reason:             reason,
		Message:            "Pod was rejected: " + message,
		ObservedGeneration: max(pod.Generation, old.ObservedGeneration),
		StartTime:          old.StartTime.DeepCopy(),
	}
	if status.StartTime == nil || status.StartTime.IsZero() {
		status.StartTime = new(metav1.NewTime(c.now))
	}
	for i := range old.Conditions {
		if !c.kubeletOwnsCondition(old.Conditions[i].Type) {
			status.Conditions = append(status.Conditions, *old.Conditions[i].DeepCopy())
		}
	}
	for i := range old.ResourceClaimStatuses {
		status.ResourceClaimStatuses = append(status.ResourceClaimStatuses, *old.ResourceClaimStatuses[i].DeepCopy())
	}
	status.ExtendedResourceClaimStatus = old.ExtendedResourceClaimStatus.DeepCopy()
	return status
}

// kubeletOwnsCondition is PodConditionByKubelet
// (pkg/kubelet/types/pod_status.go) with the version's default gates:
// PodScheduled, Ready, Initialized, ContainersReady and the two resize
// conditions; PodReadyToStartContainers, whose gate is on in every version
// resizelet reproduces (beta from 1.29, GA in 1.37); and
// AllContainersRestarting where the version says
// (profile.KubeletOwnsAllContainersRestarting).
func (c *Core) kubeletOwnsCondition(t v1.PodConditionType) bool {
	switch t {
	case v1.PodScheduled, v1.PodReady, v1.PodInitialized, v1.ContainersReady,
		v1.PodResizeInProgress, v1.PodResizePending, v1.PodReadyToStartContainers:
		return true
	case v1.AllContainersRestarting:
		return c.s.profile.KubeletOwnsAllContainersRestarting()
	}
	return false
}

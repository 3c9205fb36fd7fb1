package core

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/allocation"
)

// resizeRequested is HandlePodUpdates for a resized pod: the new spec is
// taken (the kubelet's own status stays), then, for an admitted pod,
// podUpdated and a sync.
func (c *Core) resizeRequested(in ResizeRequested) error {
	if in.Pod == nil {
		return fmt.Errorf("resize requested: nil pod")
	}
	ps := c.pods[in.Pod.UID]
	if ps == nil {
		return fmt.Errorf("resize requested: %s/%s: %w", in.Pod.Namespace, in.Pod.Name, ErrUnknownPod)
	}
	c.setNow(in.Now)
	// HandlePodUpdates counts the requested changes against the pod it
	// had, admitted or not.
	c.countRequested(ps.pod(), in.Pod)
	hasResize := c.s.profile.RevertClearsPending() && resizeOperations(ps.pod(), in.Pod, c.s.profile.InitContainersResizable())
	ps.setPod(in.Pod)
	if !ps.admitted {
		return nil
	}
	c.recount(ps)
	c.markDirty(ps)
	if c.allocIdle() {
		c.podUpdated(ps, hasResize, false)
		return nil
	}
	// An allocation task is queued or running, and its decision for this
	// pod may be waiting for its checkpoint write: the allocation the
	// update is to be compared with is known only once it is done. The
	// kubelet's allocation manager holds its lock across a decision and
	// its checkpoint (allocationMutex in pkg/kubelet/allocation/
	// allocation_manager.go), so HandlePodUpdates sees the allocation
	// before a decision or after it, never in between: the update is taken
	// after the tasks queued, as an allocation task of its own. (Compared
	// with the allocation before the write, a resize back to it would be
	// taken for a revert, and the allocation written next would stand
	// against the spec with nothing pending.)
	c.enqueueAlloc(&updateTask{uid: ps.uid, hasResize: hasResize})
	return nil
}

// podUpdated is the allocation part of HandlePodUpdates for an admitted
// pod whose update hasResize says whether it changes the resources: a
// resize reverted to the allocation only clears PodResizePending (from
// 1.35, profile.RevertClearsPending: HandlePodUpdates finds nothing to
// allocate, UpdatePodFromAllocation, and neither queues the pod nor
// retries; a Deferred pod stays queued until the next retry drops it);
// otherwise the pod joins the pending-resize queue and every pending
// resize is retried (pod_updated), right after the allocation task
// running now when there is one (inTask).
func (c *Core) podUpdated(ps *podState, hasResize, inTask bool) {
	if hasResize && !ps.view().Changed() {
		c.clearPending(ps)
		return
	}
	c.pushPending(ps)
	if inTask {
		c.retryNext(allocation.TriggerPodUpdated)
	} else {
		c.enqueueRetry(allocation.TriggerPodUpdated)
	}
}

// resizeOperations is the answer of recordResizeOperations
// (pkg/kubelet/kubelet.go, HandlePodUpdates): whether the update changes
// the cpu or memory requests or limits of a resizable container of the
// pod the kubelet had (requestedChanges; initResizable says every init
// container is resizable, not only sidecars), or the pod-level resources.
// The counting that goes with it is countRequested's.
func resizeOperations(old, updated *v1.Pod, initResizable bool) bool {
	changed := false
	requestedChanges(old, updated, initResizable, func(v1.ResourceName, string, string) bool {
		changed = true
		return false
	})
	if changed {
		return true
	}
	a, b := old.Spec.Resources, updated.Spec.Resources
	if a == nil || b == nil {
		return a != b
	}
	return !allocation.SameResources(a, b)
}

// pushPending is PushPendingResize: a pod whose desired resources differ
// from its allocation, or that still shows a Pending condition, joins the
// queue once; the queue is re-sorted with every pod's current keys. (The
// kubelet pushes only pods with a change to allocate, which its callers
// check from 1.35; the 1.33 and 1.34 profiles push a reverted resize's
// pod too, so that their pod_updated retry clears its condition.)
func (c *Core) pushPending(ps *podState) {
	if !ps.view().Changed() && ps.conds.pending == nil || c.queue.Has(ps.uid) {
		return
	}
	// The queue is pushed again, item by item in its order, with every
	// pod's current keys: the kubelet's comparator is not a strict order,
	// so only the same sequence of insertions gives the same order.
	c.queueScratch = c.queue.AppendItems(c.queueScratch[:0])
	c.queue.Clear()
	for _, item := range c.queueScratch {
		if other := c.pods[item.UID]; other != nil {
			c.queue.Push(c.pendingKey(other))
		}
	}
	c.queue.Push(c.pendingKey(ps))
}

// pendingKey computes a pod's sort keys for the pending-resize queue.
func (c *Core) pendingKey(ps *podState) allocation.PendingResize {
	key := allocation.PendingResize{
		UID:        ps.uid,
		Increasing: allocation.IsIncreasing(ps.view(), ps.pod(), c.s.profile.PodLevelResources()),
		Guaranteed: ps.pod().Status.QOSClass == v1.PodQOSGuaranteed,
	}
	if ps.pod().Spec.Priority != nil {
		key.Priority = *ps.pod().Spec.Priority
	}
	if ps.conds.pending != nil {
		key.DeferredAt = ps.conds.pending.LastTransitionTime.Time
	}
	return key
}

// updateTask is the allocation part of a pod update that came while
// allocation tasks were queued or running (resizeRequested): podUpdated,
// once they are done.
type updateTask struct {
	opOutput
	uid       types.UID
	hasResize bool
}

func (t *updateTask) advance(c *Core, _ []Action, _ []Result) ([]Action, bool, bool) {
	if ps := c.pods[t.uid]; ps != nil && ps.admitted {
		c.podUpdated(ps, t.hasResize, true)
		c.markDirty(ps)
	}
	return nil, false, true
}

// handleResize is handlePodResourcesResize for one pod (the v1.35
// allocation manager): a pod whose desired resources equal its allocation
// clears Pending; otherwise the admission checks run. An admitted resize
// leaves the allocation to checkpoint in out.write (startResize follows
// once it succeeded); a refused one sets Pending, with a Warning event
// when the reason or generation changed.
func (c *Core) handleResize(ps *podState, out *opOutput) allocation.Outcome {
	out.write = AllocationRecord{}
	view := ps.view()
	if !view.Changed() {
		c.clearPending(ps)
		return allocation.Admitted
	}
	pod := ps.pod()
	used := c.othersUsage(ps)
	decision := allocation.DecideResize(pod, view, used, c.s.admit, isStaticPod(pod))
	if c.verify != nil {
		c.verify(ps, used, decision)
	}
	if decision.Outcome == allocation.Admitted {
		out.write = AllocationRecord{UID: ps.uid, Resources: c.allocationFromPod(ps, allocation.As(pod))}
		return allocation.Admitted
	}
	c.logResizeDecision(pod, decision)
	if decision.Outcome == allocation.Infeasible {
		c.countInfeasible(decision.ReasonDetail())
	}
	reason := string(decision.Outcome)
	newly := c.setPending(ps, reason, decision.Message, pod.Generation, metav1.NewTime(c.now))
	// The early Infeasible checks (platform, static pod, swap, pod-level
	// gate) set the condition without an event in 1.35 (Decision.Silent).
	if newly && c.s.profile.ResizeEvents() && !decision.Silent {
		eventReason, prefix := ReasonResizeDeferred, prefixDeferred
		switch {
		case decision.Outcome == allocation.Infeasible:
			eventReason, prefix = ReasonResizeInfeasible, prefixInfeasible
		case c.s.profile.PendingEventNamesHandlerReason():
			// From 1.36 the event names the reason of the admit handler
			// that refused the resize ("Pod resize OutOfcpu"), while the
			// condition still reads Deferred
			// (pkg/kubelet/allocation/allocation_manager.go,
			// handlePodResourcesResize).
			prefix = pendingPrefix(decision.Reason)
		}
		out.emit(c.resizeEvent(out, pod, v1.EventTypeWarning, eventReason,
			messageOf(prefix, pod, pod.Generation, decision.Message)))
	}
	return decision.Outcome
}

// startResize is what follows an admitted resize once its allocation is
// checkpointed: Pending is cleared, InProgress is cleared and set anew
// (which refreshes its generation and drops an old Error), and
// ResizeStarted is emitted for the newly allocated pod.
func (c *Core) startResize(ps *podState, pod *v1.Pod, out *opOutput) {
	now := metav1.NewTime(c.now)
	c.clearPending(ps)
	c.clearInProgress(ps)
	c.setInProgress(ps, "", "", pod.Generation, now)
	if c.s.profile.ResizeEvents() {
		out.emit(c.resizeEvent(out, pod, v1.EventTypeNormal, ReasonResizeStarted,
			messageOf(prefixStarted, pod, pod.Generation, "")))
	}
}

// writeStatus records a status the kubelet writes for a pod and returns
// the action that writes it. The API server's answer comes back to the
// kubelet as a pod update (HandlePodReconcile): when resizes are pending
// and the pod's requests, as its status shows them, went down, the pending
// resizes are retried (pod_resized); from 1.36 they are also retried when
// the pod has just reached a terminal phase (pod_terminated). Either way
// there is one retry, and none while no resize is pending (the kubelet
// checks HasPendingResizes first, so the retry timer is left alone).
func (c *Core) writeStatus(ps *podState, status *v1.PodStatus) WriteStatus {
	// The core's pod is its own at the top level (Input's contract), so
	// the status goes in in place; the pod as it was is kept only for the
	// reconcile test below.
	var old *v1.Pod
	if c.queue.Len() > 0 {
		old = new(*ps.pod())
	}
	ps.pod().Status = *status
	ps.quiet = false
	c.recount(ps)
	if old != nil {
		terminated := c.s.profile.RetryOnPodTerminated() && !isTerminal(old) && isTerminal(ps.pod())
		switch {
		case c.statusRequestsShrank(ps, old, ps.pod()):
			// The kubelet's shrink test comes after the terminal one and
			// its trigger wins: one retry either way.
			c.enqueueRetry(allocation.TriggerPodResized)
		case terminated:
			c.enqueueRetry(allocation.TriggerPodTerminated)
		}
	}
	// Statuses are never changed in place: the API may keep this one.
	c.statuses++
	return WriteStatus{Namespace: ps.pod().Namespace, Name: ps.pod().Name, UID: ps.uid, Status: status, Seq: c.statuses}
}

// statusRequestsShrank is HandlePodReconcile's test (kubelet.go): the old
// and the new pod are both overlaid with the pod's current allocation,
// then their requests are taken as PodRequests with UseStatusResources
// counts them (per container the largest of the spec, the status resources
// and the allocated resources). So the old figure counts the new
// allocation against the old status: a pod whose total grew can still
// shrink by this measure.
func (c *Core) statusRequestsShrank(ps *podState, old, updated *v1.Pod) bool {
	before := allocation.StatusRequests(viewOf(old, ps), c.s.admit)
	after := allocation.StatusRequests(viewOf(updated, ps), c.s.admit)
	return after.MilliCPU < before.MilliCPU || after.Memory < before.Memory
}

// retryTask is retryPendingResizes: it resets the periodic retry timer
// (every retry does, whatever its trigger), then re-evaluates every queued
// resize in queue order. Allocated and infeasible resizes leave the queue;
// deferred ones stay. A pod whose allocation or conditions changed is
// queued for sync.
type retryTask struct {
	opOutput
	trigger string
	started bool
	items   []allocation.PendingResize
	next    int
	keep    []allocation.PendingResize
	// waiting is set while the allocation of items[next] is being
	// checkpointed; before is that pod's conditions before the decision.
	waiting bool
	before  condSnapshot
	// deferredBefore is IsPodResizeDeferred before the decision, for the
	// metrics (false while they are off).
	deferredBefore bool
	decided        *v1.Pod
	// decidedState is the pod the decision was for: a pod torn down, or
	// torn down and added again, while its allocation was checkpointed is
	// another (or no) podState by then.
	decidedState *podState
	// retried are the pods (namespace/name) whose resize a periodic retry
	// allocated, for its log lines; kept only with logging on.
	retried []string
}

func (t *retryTask) advance(c *Core, done []Action, res []Result) ([]Action, bool, bool) {
	if !t.started {
		t.started = true
		c.retry.Reset(c.now)
		t.items = c.queue.AppendItems(t.items[:0])
	}
	if t.waiting {
		t.waiting = false
		item := t.items[t.next]
		ps := c.pods[item.UID]
		if ps != t.decidedState {
			// The kubelet's allocation manager holds its lock across the
			// decision and the checkpoint, so no pod goes away between
			// them; here a teardown that was under way can end first.
			// The resize is for a pod that is gone: drop the record
			// written for it (a pod added again under the UID writes its
			// own when it is admitted).
			t.next++
			if ps == nil {
				return t.take(DeleteCheckpoints{UID: item.UID}), false, false
			}
			return t.advance(c, nil, nil)
		}
		_, r, _ := resultOf[WriteAllocated](done, res)
		if err := r.Err; err != nil {
			// The allocation stays in memory (the checkpoint keeps it) but
			// the resize is not started: it stays queued.
			c.logRetryOutcome(ps.pod(), allocation.Admitted, err)
			t.emit(c.event(&t.opOutput, ps.pod(), "", v1.EventTypeWarning, ReasonFailed, err.Error()))
			t.keep = append(t.keep, item)
		} else {
			c.startResize(ps, t.decided, &t.opOutput)
			t.allocated(c, ps.pod())
		}
		t.settle(c, ps, r.Err == nil)
		t.next++
	}
	for ; t.next < len(t.items); t.next++ {
		item := t.items[t.next]
		ps := c.pods[item.UID]
		if ps == nil {
			c.logPendingPodGone(item.UID)
			continue
		}
		t.before = ps.conds.snapshot()
		t.deferredBefore = c.resizeDeferred(ps)
		outcome := c.handleResize(ps, &t.opOutput)
		if t.write.UID != "" {
			t.waiting = true
			t.decided, t.decidedState = ps.pod(), ps
			return t.take(WriteAllocated{&t.write}), false, false
		}
		if outcome == allocation.Deferred {
			t.keep = append(t.keep, item)
		}
		if outcome == allocation.Admitted {
			// Nothing to allocate: the kubelet's retry counts that as
			// accepted too, if the pod was Deferred before (see
			// Core.resizeDeferred).
			t.allocated(c, ps.pod())
		} else {
			c.logRetryOutcome(ps.pod(), outcome, nil)
		}
		t.settle(c, ps, false)
	}
	for _, pod := range t.retried {
		c.logRetriedAfterTimeout(pod)
	}
	c.queue.Clear()
	for _, item := range t.keep {
		c.queue.Push(item)
	}
	return t.take(), false, true
}

// allocated takes a resize the retry allocated, or found with nothing left
// to allocate (the kubelet's successful resizes). It counts the resize as
// accepted after being deferred if its pod was Deferred before the
// decision (retryPendingResizes counts every resize that neither failed
// nor stays pending nor is Infeasible, when IsPodResizeDeferred held
// before it), logs it, and keeps it for the line a periodic retry logs at
// its end.
func (t *retryTask) allocated(c *Core, pod *v1.Pod) {
	if t.deferredBefore {
		c.countDeferredAccepted(t.trigger)
	}
	if !c.logging {
		return
	}
	c.logRetryOutcome(pod, allocation.Admitted, nil)
	if t.trigger == allocation.TriggerPeriodicRetry {
		t.retried = append(t.retried, kObj(pod).Value.String())
	}
}

// settle queues the pod for sync when its allocation or conditions
// changed (triggerPodSync).
func (t *retryTask) settle(c *Core, ps *podState, allocated bool) {
	if allocated || ps.conds.changedSince(t.before) {
		c.markDirty(ps)
	}
}

// finish returns the task to the core's pool, keeping its memory.
func (t *retryTask) finish(c *Core) {
	out, items, keep := t.opOutput, t.items[:0], t.keep[:0]
	clear(items[:cap(items)])
	clear(keep[:cap(keep)])
	clear(t.retried)
	out.reset()
	*t = retryTask{opOutput: out, items: items, keep: keep, retried: t.retried[:0]}
	c.retryPool = append(c.retryPool, t)
}

// enqueueRetry queues a retry of the pending resizes, reusing a finished
// retry task's memory.
func (c *Core) enqueueRetry(trigger string) {
	c.enqueueAlloc(c.newRetry(trigger))
}

// retryNext queues a retry of the pending resizes right after the
// allocation task running now, before any queued behind it: the retry an
// allocation task decides on belongs to the same kubelet call (as
// HandlePodAdditions' RetryPendingResizes, after its pushes).
func (c *Core) retryNext(trigger string) {
	c.allocTasks = slices.Insert(c.allocTasks, c.allocHead+1, op(c.newRetry(trigger)))
}

// newRetry returns a retry task for trigger, reusing a finished one's
// memory.
func (c *Core) newRetry(trigger string) *retryTask {
	t := fromPool[retryTask](&c.retryPool)
	t.trigger = trigger
	return t
}

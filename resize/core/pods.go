package core

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/allocation"
	"github.com/resizelet/resizelet/allocation/frozen"
)

// The core's pod table: adding a pod's state, reading it (live thaws a
// frozen one), freezing the settled ones (settle, freeze), removing it,
// and keeping the node's usage by its pods up to date (recount).

func (c *Core) newPodState(pod *v1.Pod) *podState {
	c.nextSeq++
	ps := &podState{
		uid:         pod.UID,
		seq:         c.nextSeq,
		timerIdx:    -1,
		body:        podBody{pod: pod},
		recent:      &c.thawed,
		terminating: pod.DeletionTimestamp != nil,
	}
	c.pods[pod.UID] = ps
	c.thawed.Touch(ps.uid)
	c.order = append(c.order, pod.UID)
	c.byName[podName{pod.Namespace, pod.Name}] = pod.UID
	return ps
}

// live is ps's body, thawed if it was frozen, and marks ps as used now,
// so that it stays thawed while it is among the most recently used.
// Every read of the pod or its records goes through it (pod is the
// shorthand for the pod).
func (ps *podState) live() *podBody {
	if ps.body.pod == nil {
		ps.body = podBody{pod: ps.cold.pod.Thaw(), allocated: ps.cold.allocated.Thaw(), actuated: ps.cold.actuated.Thaw()}
		// The pod's frozen form stays, for freeze to reuse if nothing
		// changes.
		ps.cold = coldPod{pod: ps.cold.pod}
	}
	ps.recent.Touch(ps.uid)
	return &ps.body
}

// pod is ps's API object, thawed if it was frozen: spec as the API server
// gave it, status as the kubelet last wrote it.
func (ps *podState) pod() *v1.Pod { return ps.live().pod }

// setPod replaces ps's API object with pod, an update from the API
// server, taken as it is but with the kubelet's own status in place of the
// API server's (its top level is the core's: Input's contract).
func (ps *podState) setPod(pod *v1.Pod) {
	b := ps.live()
	pod.Status = b.pod.Status
	b.pod = pod
}

// isTerminal is isTerminal(ps.pod()), without thawing a frozen ps.
func (ps *podState) isTerminal() bool {
	if ps.body.pod == nil {
		return ps.terminal
	}
	return isTerminal(ps.body.pod)
}

// copyBody makes ps, a copy of another pod's state, hold a body of its
// own, tracked by recent: a deep copy of a thawed body; a frozen one is
// shared as it is, frozen values being immutable.
func (ps *podState) copyBody(recent *frozen.Recent[types.UID]) {
	ps.recent = recent
	if b := ps.body; b.pod != nil {
		ps.body = podBody{pod: b.pod.DeepCopy(), allocated: b.allocated.DeepCopy(), actuated: b.actuated.DeepCopy()}
		recent.Touch(ps.uid)
	}
}

// settle freezes the pods used least recently beyond the node's HotPods,
// when nothing is in flight: an operation between batches holds a pod's
// objects, and a pod that waits for a sync, a teardown or a place in the
// pending-resize queue is about to be used again. (A resync timer is no
// reason to stay thawed: every synced pod has one, a minute away.)
func (c *Core) settle() {
	if len(c.inflight) > 0 || !c.allocIdle() || c.thawed.Len() <= c.thawed.Limit {
		return
	}
	c.thawed.Evict(c.freeze)
	// A burst of work (a hundred pods added at once) must not leave its
	// working space behind once it is over.
	c.dirtyHeap = shrunk(c.dirtyHeap)
	c.busyScratch = shrunk(c.busyScratch)
	c.queueScratch = shrunk(c.queueScratch)
	c.allocTasks = shrunk(c.allocTasks)
}

// freeze freezes the pod uid if it is settled, and says whether it did.
// A pod that is gone counts as frozen: there is nothing left to keep.
func (c *Core) freeze(uid types.UID) bool {
	ps := c.pods[uid]
	if ps == nil || ps.body.pod == nil {
		return true
	}
	if ps.busy || ps.dirty || ps.deleteRequested || c.queue.Has(uid) {
		return false
	}
	// Its share is taken while the pod is at hand (it stays on the stale
	// list, unmarked).
	c.recountNow(ps)
	b := &ps.body
	f, ok := ps.cold.pod.Refreeze(b.pod)
	if !ok {
		return false
	}
	ps.cold = coldPod{pod: f}
	if ps.hasAllocated {
		ps.cold.allocated = frozen.FreezeResources(b.allocated)
	}
	if b.actuated.ContainerResources != nil || b.actuated.PodLevelResources != nil {
		ps.cold.actuated = frozen.FreezeResources(b.actuated)
	}
	ps.terminal = isTerminal(b.pod)
	ps.conds.release()
	ps.body = podBody{}
	return true
}

// removePod forgets a pod entirely.
func (c *Core) removePod(uid types.UID) {
	ps := c.pods[uid]
	if ps == nil {
		return
	}
	if ps.stale {
		ps.stale = false
		c.stale = slices.DeleteFunc(c.stale, func(x *podState) bool { return x == ps })
	}
	if ps.counted {
		c.used.Sub(&ps.usage)
	}
	if ps.dirty {
		c.dirtyCount--
	}
	if ps.deleteRequested {
		c.deletes--
	}
	c.disarm(ps)
	c.forgetConditions(ps)
	pod := ps.pod() // for its name
	c.thawed.Forget(uid)
	delete(c.byName, podName{pod.Namespace, pod.Name})
	delete(c.pods, uid)
	c.queue.Remove(uid)
	if i := slices.Index(c.order, uid); i >= 0 {
		c.order = slices.Delete(c.order, i, i+1)
	}
}

// podByName finds a known pod. A Core that New did not make knows none.
func (c *Core) podByName(namespace, name string) *podState {
	if !c.made() {
		return nil
	}
	return c.pods[c.byName[podName{namespace, name}]]
}

// recount brings the node's usage up to date with one pod after its
// allocation, spec, status or admission changed: what it takes is computed
// again from its allocation and its last written status, and it counts
// only while it is admitted and active.
//
// The count is taken when it is next needed (recountStale, before anything
// reads the node's usage), so that a pod whose allocation, spec and status
// all change between two decisions, as a resize's do, is counted once.
// What is counted is a function of the pod's state at that time, so
// taking it late gives what taking it at every change would.
func (c *Core) recount(ps *podState) {
	if !ps.stale {
		ps.stale = true
		c.stale = append(c.stale, ps)
	}
}

// recountStale takes the share of every pod recount marked.
func (c *Core) recountStale() {
	for i, ps := range c.stale {
		c.recountNow(ps)
		c.stale[i] = nil
	}
	c.stale = c.stale[:0]
}

// recountNow takes ps's share now, if it is marked.
func (c *Core) recountNow(ps *podState) {
	if !ps.stale {
		return
	}
	ps.stale = false
	if ps.counted {
		c.used.Sub(&ps.usage)
		ps.counted = false
	}
	if c.counts(ps) {
		ps.usage = allocation.PodUsage(ps.view(), c.s.admit)
		c.used.Add(&ps.usage)
		ps.counted = true
	}
}

// othersUsage is what admission counts as used beside ps: the node's usage
// without ps's own share, kept up to date by recount rather than summed
// over the pods (the tests keep that walk, otherPods, as the oracle). The
// result lives in the core's scratch space until the next call.
func (c *Core) othersUsage(ps *podState) *allocation.Usage {
	c.recountStale()
	c.scratch.Set(&c.used)
	if ps.counted {
		c.scratch.Sub(&ps.usage)
	}
	return &c.scratch
}

// allocationFromPod is the record of ps's allocation for pod, in the
// memory of the record ps's last allocation replaced (which nothing holds
// any more: the checkpoint has the current record, see state.State).
func (c *Core) allocationFromPod(ps *podState, pod allocation.Allocated) allocation.PodResources {
	b := ps.live()
	spare := b.spare
	b.spare = nil
	return allocationFromPod(pod, c.s.profile.InitContainersResizable(), spare)
}

// counts reports whether admission counts ps as using the node: an
// admitted pod that is still active and, from 1.37, has an allocation
// (getAllocatedPods in pkg/kubelet/allocation/allocation_manager.go skips
// the others). The core admits a pod only together with its allocation, so
// the 1.37 rule changes nothing it can reach today; it is kept so that the
// count stays the kubelet's if that ever changes.
func (c *Core) counts(ps *podState) bool {
	return ps.admitted && !ps.isTerminal() && (ps.hasAllocated || !c.s.profile.AdmissionSkipsUnallocatedPods())
}

// finished reports whether the kubelet's pod worker is done with the pod:
// from 1.35 (profile.TerminalClearsResizeConditions), a pod whose sync
// wrote a terminal phase has been through SyncTerminatingPod and
// SyncTerminatedPod, and UpdatePod ignores it from then on
// (pkg/kubelet/pod_workers.go): it is never synced again, and conditions
// the allocation manager sets for it later stay in the status manager
// without reaching its status. Its teardown, when it is deleted, still
// runs.
func (c *Core) finished(ps *podState) bool {
	return c.s.profile.TerminalClearsResizeConditions() && ps.isTerminal()
}

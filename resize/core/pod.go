package core

import (
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/allocation"
	"github.com/resizelet/resizelet/allocation/frozen"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/qos"
)

// podState is what the kubelet keeps of one pod: the API object (spec as
// the API server gave it, status as the kubelet last wrote it), the
// allocation and actuation records (the checkpoints' contents), the resize
// conditions, and what the runtime holds for it.
type podState struct {
	uid types.UID
	pod *v1.Pod

	podCgroup string
	sandboxID string
	// containers are the current runtime container of each container name.
	containers containerRecords
	// dead are stopped containers left for garbage collection.
	dead []string

	allocated allocation.PodResources
	// spare is the container map of the record the last allocation
	// replaced, for the next record to reuse.
	spare    map[string]v1.ResourceRequirements
	actuated allocation.PodResources

	// usage is the pod's share of the node's usage, as the predicate
	// counts it, while counted says it is in Core.used.
	usage allocation.Usage

	conds resizeConditions

	// seq is the pod's place in admission order.
	seq uint64
	// timerIdx is the pod's place in Core.timers, -1 when no resync is
	// armed.
	timerIdx  int
	deleteErr error
	resyncAt  time.Time

	// cold holds the pod and its records while it is frozen (see
	// Core.freeze): pod is nil and allocated, actuated and spare are
	// empty then, and terminal keeps isTerminal(pod) for the walks that
	// only need that.
	cold coldPod

	// The flags come last, together, where they take one word.
	admitted     bool
	hasAllocated bool
	counted      bool
	// dirty says the pod waits for a sync (see markDirty).
	dirty bool
	// busy is set while a sync or teardown of the pod is in flight.
	busy            bool
	deleteRequested bool
	// stale says the pod's share of the node's usage is to be taken again
	// (Core.recount).
	stale    bool
	terminal bool
	// terminating says the pod is being deleted (a deletion was asked
	// for, or the API server's pod carries a deletionTimestamp): it is
	// torn down until it is gone, never synced.
	terminating bool
}

// coldPod is a settled pod's API object and checkpoint records, frozen.
type coldPod struct {
	pod                 frozen.Pod
	allocated, actuated frozen.Resources
}

// containerRecord is one container the runtime runs for a pod.
type containerRecord struct {
	id      string
	attempt uint32
}

// containerRecords are a pod's current containers by name, sorted by
// name: a pod has a handful, for which a slice is a quarter of a map's
// memory and as fast.
type containerRecords []namedRecord

type namedRecord struct {
	name string
	containerRecord
}

// lookup returns the record of the container name, if there is one.
func (r containerRecords) lookup(name string) (containerRecord, bool) {
	for i := range r {
		if r[i].name == name {
			return r[i].containerRecord, true
		}
	}
	return containerRecord{}, false
}

// put sets the record of the container name.
func (r *containerRecords) put(name string, rec containerRecord) {
	i, found := slices.BinarySearchFunc(*r, name, func(n namedRecord, name string) int { return strings.Compare(n.name, name) })
	if found {
		(*r)[i].containerRecord = rec
		return
	}
	*r = slices.Insert(*r, i, namedRecord{name, rec})
}

// id is the runtime ID of the container name, "" if there is none.
func (r containerRecords) id(name string) string {
	rec, _ := r.lookup(name)
	return rec.id
}

// containerAttempt is the attempt of the pod's container name, 0 if there
// is none.
func (ps *podState) containerAttempt(name string) uint32 {
	rec, _ := ps.containers.lookup(name)
	return rec.attempt
}

// dropID drops the record of the container with runtime ID id.
func (r *containerRecords) dropID(id string) {
	*r = slices.DeleteFunc(*r, func(n namedRecord) bool { return n.id == id })
}

func (c *Core) newPodState(pod *v1.Pod) *podState {
	c.nextSeq++
	ps := &podState{
		uid:         pod.UID,
		seq:         c.nextSeq,
		timerIdx:    -1,
		pod:         pod,
		terminating: pod.DeletionTimestamp != nil,
	}
	c.pods[pod.UID] = ps
	c.thawed.Touch(ps.uid)
	c.order = append(c.order, pod.UID)
	c.byName[podName{pod.Namespace, pod.Name}] = pod.UID
	return ps
}

// hot makes ps usable: thawed if it was frozen, and marked as used now, so
// that it stays thawed while it is among the most recently used. Every
// place that takes a pod state from the core's maps goes through it
// (walks that only read admitted and isTerminal need not: see
// podState.isTerminal). It returns ps, and nil for nil.
func (c *Core) hot(ps *podState) *podState {
	if ps == nil {
		return nil
	}
	if ps.pod == nil {
		ps.pod = ps.cold.pod.Thaw()
		if !ps.cold.allocated.IsZero() {
			ps.allocated = ps.cold.allocated.Thaw()
		}
		if !ps.cold.actuated.IsZero() {
			ps.actuated = ps.cold.actuated.Thaw()
		}
		ps.cold = coldPod{}
	}
	c.thawed.Touch(ps.uid)
	return ps
}

// isTerminal is isTerminal(ps.pod), also while ps is frozen.
func (ps *podState) isTerminal() bool {
	if ps.pod == nil {
		return ps.terminal
	}
	return isTerminal(ps.pod)
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

// shrunk is s, or a copy of it with room for little more, when s has
// room for many more elements than it holds.
func shrunk[S ~[]E, E any](s S) S {
	if cap(s) <= 32 || cap(s) <= 4*len(s) {
		return s
	}
	return append(S(nil), s...)
}

// freeze freezes the pod uid if it is settled, and says whether it did.
// A pod that is gone counts as frozen: there is nothing left to keep.
func (c *Core) freeze(uid types.UID) bool {
	ps := c.pods[uid]
	if ps == nil || ps.pod == nil {
		return true
	}
	if ps.busy || ps.dirty || ps.deleteRequested || c.queue.Has(uid) {
		return false
	}
	// Its share is taken while the pod is at hand (it stays on the stale
	// list, unmarked).
	c.recountNow(ps)
	f, ok := frozen.FreezePod(ps.pod)
	if !ok {
		return false
	}
	ps.cold = coldPod{pod: f}
	if ps.hasAllocated {
		ps.cold.allocated = frozen.FreezeResources(ps.allocated)
	}
	if ps.actuated.ContainerResources != nil || ps.actuated.PodLevelResources != nil {
		ps.cold.actuated = frozen.FreezeResources(ps.actuated)
	}
	ps.terminal = isTerminal(ps.pod)
	ps.conds.release()
	ps.pod = nil
	ps.allocated = allocation.PodResources{}
	ps.actuated = allocation.PodResources{}
	ps.spare = nil
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
	c.hot(ps) // for its name
	c.thawed.Forget(uid)
	delete(c.byName, podName{ps.pod.Namespace, ps.pod.Name})
	delete(c.pods, uid)
	c.queue.Remove(uid)
	if i := slices.Index(c.order, uid); i >= 0 {
		c.order = slices.Delete(c.order, i, i+1)
	}
}

// podName is a pod's namespace and name, the key the kubelet is asked by.
type podName struct{ namespace, name string }

// podByName finds a known pod.
func (c *Core) podByName(namespace, name string) *podState {
	return c.pods[c.byName[podName{namespace, name}]]
}

// overlay is UpdatePodFromAllocation: the pod with its checkpointed
// allocation in place of the desired resources, and whether that differs
// from the spec (a resize is pending). The allocation is compared in
// place and the pod copied only where they differ.
func overlay(pod *v1.Pod, alloc allocation.PodResources, has bool) (*v1.Pod, bool) {
	if !has {
		return pod, false
	}
	out := pod
	changed := false
	copyOnce := func() {
		if !changed {
			out = pod.DeepCopy()
			changed = true
		}
	}
	for i := range pod.Spec.Containers {
		if r, ok := alloc.ContainerResources[pod.Spec.Containers[i].Name]; ok && !allocation.SameResources(&pod.Spec.Containers[i].Resources, &r) {
			copyOnce()
			out.Spec.Containers[i].Resources = *r.DeepCopy()
		}
	}
	for i := range pod.Spec.InitContainers {
		if r, ok := alloc.ContainerResources[pod.Spec.InitContainers[i].Name]; ok && !allocation.SameResources(&pod.Spec.InitContainers[i].Resources, &r) {
			copyOnce()
			out.Spec.InitContainers[i].Resources = *r.DeepCopy()
		}
	}
	if alloc.PodLevelResources != nil && pod.Spec.Resources != nil && !allocation.SameResources(pod.Spec.Resources, alloc.PodLevelResources) {
		copyOnce()
		out.Spec.Resources = alloc.PodLevelResources.DeepCopy()
	}
	return out, changed
}

// allocatedPod is the pod overlaid with its own allocation, a copy where
// they differ: for the sync, which hands the allocated pod on. Decisions
// read the pod through view instead.
func (ps *podState) allocatedPod() (*v1.Pod, bool) {
	return overlay(ps.pod, ps.allocated, ps.hasAllocated)
}

// view is the allocated pod without a copy.
func (ps *podState) view() allocation.Allocated {
	return viewOf(ps.pod, ps)
}

// viewOf is pod seen with ps's allocation.
func viewOf(pod *v1.Pod, ps *podState) allocation.Allocated {
	if !ps.hasAllocated {
		return allocation.Allocated{Pod: pod}
	}
	return allocation.Allocated{Pod: pod, Record: &ps.allocated}
}

// allocationFromPod is what the allocation checkpoint records of a pod
// (seen through its current allocation): the resources of every regular
// container and sidecar (and, where non-sidecar init containers are
// resizable, of those too), and the pod-level resources when set.
//
// The record shares its resource lists with the pod: pods and records are
// never changed in place (an update replaces them), so nothing is copied.
func allocationFromPod(pod allocation.Allocated, initContainers bool, reuse map[string]v1.ResourceRequirements) allocation.PodResources {
	spec := &pod.Pod.Spec
	if reuse == nil {
		reuse = make(map[string]v1.ResourceRequirements, len(spec.Containers)+len(spec.InitContainers))
	}
	clear(reuse)
	r := allocation.PodResources{ContainerResources: reuse}
	for i := range spec.Containers {
		r.ContainerResources[spec.Containers[i].Name] = pod.Resources(&spec.Containers[i])
	}
	for i := range spec.InitContainers {
		if initContainers || qos.IsSidecar(&spec.InitContainers[i]) {
			r.ContainerResources[spec.InitContainers[i].Name] = pod.Resources(&spec.InitContainers[i])
		}
	}
	r.PodLevelResources = pod.PodLevel()
	return r
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
// over the pods (otherPods is that walk, which the tests keep as the
// oracle). The result lives in the core's scratch space until the next
// call.
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
	spare := ps.spare
	ps.spare = nil
	return allocationFromPod(pod, c.s.profile.InitContainersResizable(), spare)
}

// counts reports whether admission counts ps as using the node: an
// admitted pod that is still active and, from 1.37, has an allocation
// (getAllocatedPods in pkg/kubelet/allocation/allocation_manager.go skips
// the others). The core admits a pod only together with its allocation, so
// the 1.37 rule changes nothing it can reach today; it is kept so that the
// count stays the kubelet's if that ever changes.
func (c *Core) counts(ps *podState) bool {
	if !ps.admitted || ps.isTerminal() {
		return false
	}
	return ps.hasAllocated || !c.s.profile.AdmissionSkipsUnallocatedPods()
}

// otherPods are the admitted, active pods other than uid, each overlaid
// with its allocation and carrying its status: what admission counts as
// used (getAllocatedPods over the active pods).
func (c *Core) otherPods(uid types.UID) []*v1.Pod {
	out := make([]*v1.Pod, 0, len(c.order))
	for _, id := range c.order {
		ps := c.pods[id]
		if id == uid || !c.counts(ps) {
			continue
		}
		c.hot(ps)
		p, _ := ps.allocatedPod()
		out = append(out, p)
	}
	return out
}

// podCgroupName is the pod's cgroup path below the hierarchy root.
func (s *settings) podCgroupName(qosClass v1.PodQOSClass, uid types.UID) string {
	return s.cfg.PodCgroup(qosClass, uid)
}

// PodCgroup is the path, below the cgroup hierarchy root, of the cgroup of
// a pod of the given QoS class and UID on this node: the kubelet's name
// for it (cgconfig.PodCgroupName, by the node's cgroup driver) under the
// node's --cgroup-root.
func (cfg NodeConfig) PodCgroup(qosClass v1.PodQOSClass, uid types.UID) string {
	name := cgconfig.PodCgroupName(qosClass, uid, cfg.CgroupDriver)
	if root := strings.Trim(cfg.CgroupRoot, "/"); root != "" {
		name = root + "/" + name
	}
	return name
}

// allContainers lists a pod's sidecars and regular containers, in start
// order: the containers a pod sync runs.
func allContainers(pod *v1.Pod) iter.Seq[*v1.Container] {
	return func(yield func(*v1.Container) bool) {
		for i := range pod.Spec.InitContainers {
			if qos.IsSidecar(&pod.Spec.InitContainers[i]) && !yield(&pod.Spec.InitContainers[i]) {
				return
			}
		}
		for i := range pod.Spec.Containers {
			if !yield(&pod.Spec.Containers[i]) {
				return
			}
		}
	}
}

// findContainer returns the pod's sidecar or regular container by name.
func findContainer(pod *v1.Pod, name string) *v1.Container {
	for c := range allContainers(pod) {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// isStaticPod reports whether the pod came from a file or URL source rather
// than the API server.
func isStaticPod(pod *v1.Pod) bool {
	src, ok := pod.Annotations["kubernetes.io/config.source"]
	return ok && src != "api"
}

// isTerminal reports whether a pod has finished: it no longer counts as an
// active pod for admission.
func isTerminal(pod *v1.Pod) bool {
	return isTerminalPhase(pod.Status.Phase)
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

// isTerminalPhase reports whether a phase is one a pod never leaves:
// Succeeded or Failed.
func isTerminalPhase(phase v1.PodPhase) bool {
	return phase == v1.PodSucceeded || phase == v1.PodFailed
}

// formatPod is the kubelet's format.Pod: name_namespace(uid).
func formatPod(pod *v1.Pod) string {
	return fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
}

// terminationGrace is the grace period the kubelet gives StopContainer.
func terminationGrace(pod *v1.Pod) int64 {
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		return *pod.Spec.TerminationGracePeriodSeconds
	}
	return int64(v1.DefaultTerminationGracePeriodSeconds)
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

package core

import (
	"fmt"
	"iter"
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
//
// The object and the records are kept frozen while the pod is settled
// (Core.freeze): they are read through pod and live, which thaw them
// first, and never through body, which only pods.go touches
// (TestOnlyThePodTableTouchesBodies).
type podState struct {
	uid  types.UID
	body podBody
	// cold holds the body while it is frozen, when body is empty; while
	// it is thawed, the pod as it was last frozen, if it was.
	cold coldPod
	// recent is the core's record of the thawed pods, which live keeps.
	recent *frozen.Recent[types.UID]

	podCgroup string
	sandboxID string
	// containers are the current runtime container of each container name.
	containers containerRecords
	// dead are stopped containers left for garbage collection.
	dead []string

	// usage is the pod's share of the node's usage, as the predicate
	// counts it, while counted says it is in Core.used.
	usage allocation.Usage

	conds resizeConditions

	// seq is the pod's place in admission order.
	seq       uint64
	deleteErr error
	resyncAt  time.Time
	// timerIdx is the pod's place in Core.timers, -1 when no resync is
	// armed.
	timerIdx int32

	// The flags come last, together, where they take one word with
	// timerIdx.
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
	stale bool
	// terminal keeps isTerminal(pod) while the pod is frozen, for the
	// walks that only need that.
	terminal bool
	// quiet says the pod's last sync only read, and nothing about the pod
	// or (Tick.Unchanged) its node changed since: its resync is not run
	// (Core.tick). markDirty and a Tick without Unchanged clear it.
	quiet bool
	// terminating says the pod is being deleted (a deletion was asked
	// for, or the API server's pod carries a deletionTimestamp): it is
	// torn down until it is gone, never synced.
	terminating bool
}

// podBody is the part of a pod's state that is frozen while the pod is
// settled.
type podBody struct {
	pod       *v1.Pod
	allocated allocation.PodResources
	// spare is the container map of the record the last allocation
	// replaced, for the next record to reuse: without it a resize
	// decision allocates twice, about half a KiB
	// (BenchmarkResizeDecision, whose target is none).
	spare    map[string]v1.ResourceRequirements
	actuated allocation.PodResources
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

// podName is a pod's namespace and name, the key the kubelet is asked by.
type podName struct{ namespace, name string }

// allocatedPod is UpdatePodFromAllocation: the pod with its checkpointed
// allocation in place of the desired resources, a copy where they differ,
// and whether they do (a resize is pending). It is for the sync, which
// hands the allocated pod on; decisions read the pod through view instead.
func (ps *podState) allocatedPod() (*v1.Pod, bool) {
	view := ps.view()
	if !view.Changed() {
		return view.Pod, false
	}
	out, alloc := view.Pod.DeepCopy(), view.Record
	for _, list := range [2][]v1.Container{out.Spec.Containers, out.Spec.InitContainers} {
		for i := range list {
			if r, ok := alloc.ContainerResources[list[i].Name]; ok && !allocation.SameResources(&list[i].Resources, &r) {
				list[i].Resources = *r.DeepCopy()
			}
		}
	}
	if alloc.PodLevelResources != nil && out.Spec.Resources != nil && !allocation.SameResources(out.Spec.Resources, alloc.PodLevelResources) {
		out.Spec.Resources = alloc.PodLevelResources.DeepCopy()
	}
	return out, true
}

// view is the allocated pod without a copy.
func (ps *podState) view() allocation.Allocated {
	return viewOf(ps.pod(), ps)
}

// viewOf is pod seen with ps's allocation.
func viewOf(pod *v1.Pod, ps *podState) allocation.Allocated {
	if !ps.hasAllocated {
		return allocation.Allocated{Pod: pod}
	}
	return allocation.Allocated{Pod: pod, Record: &ps.live().allocated}
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

// PodCgroup is the path, below the cgroup hierarchy root, of the cgroup of
// a pod of the given QoS class and UID on this node: the kubelet's name
// for it under the node's --cgroup-root, by the node's cgroup driver
// (cgconfig.PodCgroupPath; with systemd the root's components are slices
// of the chain too).
func (cfg NodeConfig) PodCgroup(qosClass v1.PodQOSClass, uid types.UID) string {
	return cgconfig.PodCgroupPath(cfg.CgroupRoot, qosClass, uid, cfg.CgroupDriver)
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

// PodInfo is what the kubelet knows of one pod beyond its API object.
type PodInfo struct {
	UID       types.UID
	Admitted  bool
	PodCgroup string // the pod cgroup's path below the cgroup root
	// Allocated is the allocated resources per container name (regular
	// containers and sidecars).
	Allocated map[string]v1.ResourceRequirements
	// Actuated is the actuated resources per container name.
	Actuated map[string]v1.ResourceRequirements
	// ContainerIDs is the current runtime container ID per container name.
	ContainerIDs map[string]string
	// ContainerCgroups is the current container cgroup path per container name.
	ContainerCgroups map[string]string
	SandboxID        string
}

// Pod returns what the kubelet knows of a pod, and whether it knows it.
func (c *Core) Pod(namespace, name string) (PodInfo, bool) {
	ps := c.podByName(namespace, name)
	if ps == nil {
		return PodInfo{}, false
	}
	info := PodInfo{
		UID:              ps.uid,
		Admitted:         ps.admitted,
		PodCgroup:        ps.podCgroup,
		SandboxID:        ps.sandboxID,
		ContainerIDs:     map[string]string{},
		ContainerCgroups: map[string]string{},
	}
	for _, rec := range ps.containers {
		info.ContainerIDs[rec.name] = rec.id
		info.ContainerCgroups[rec.name] = cgconfig.ContainerCgroupName(ps.podCgroup, rec.id, c.s.cfg.CgroupDriver)
	}
	if ps.hasAllocated {
		info.Allocated = ps.live().allocated.DeepCopy().ContainerResources
	}
	if ps.live().actuated.ContainerResources != nil {
		info.Actuated = ps.live().actuated.DeepCopy().ContainerResources
	}
	return info, true
}

// Knows reports whether the kubelet knows the pod, without copying
// anything of it.
func (c *Core) Knows(namespace, name string) bool {
	return c.podByName(namespace, name) != nil
}

// Has reports whether the kubelet knows the pod of that name with that
// UID.
func (c *Core) Has(namespace, name string, uid types.UID) bool {
	ps := c.podByName(namespace, name)
	return ps != nil && ps.uid == uid
}

// Stale reports whether pod is an older generation of a pod the kubelet
// has (the same UID, a lower metadata.generation): an update the kubelet's
// informer would never deliver after the newer one. A driver whose
// callers hand it the API server's answers concurrently drops such a pod
// rather than take the pod's spec back to what it was.
func (c *Core) Stale(pod *v1.Pod) bool {
	if pod == nil {
		return false
	}
	ps := c.podByName(pod.Namespace, pod.Name)
	return ps != nil && ps.uid == pod.UID && pod.Generation < ps.pod().Generation
}

// APIPod returns a copy of the pod as the kubelet sees it: the spec the
// API server last gave it and the status the kubelet last wrote.
func (c *Core) APIPod(namespace, name string) (*v1.Pod, bool) {
	ps := c.podByName(namespace, name)
	if ps == nil {
		return nil, false
	}
	return ps.pod().DeepCopy(), true
}

// AllocatedTotal is the sum of the admitted, active pods' allocated
// requests, with overhead: what admission counts as used by them.
func (c *Core) AllocatedTotal() v1.ResourceList {
	if !c.made() {
		return nil
	}
	total := v1.ResourceList{}
	opts := qos.Options{SkipPodLevelResources: !c.s.profile.PodLevelResources()}
	for _, uid := range c.order {
		ps := c.pods[uid]
		if !ps.admitted || ps.isTerminal() {
			continue
		}
		p, _ := ps.allocatedPod()
		for name, q := range qos.PodRequests(p, opts) {
			if cur, ok := total[name]; ok {
				cur.Add(q)
				total[name] = cur
			} else {
				total[name] = q.DeepCopy()
			}
		}
	}
	return total
}

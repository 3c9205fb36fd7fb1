package allocation

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/resizelet/resizelet/allocation/reslist"
	"github.com/resizelet/resizelet/qos"
)

// scalarAmount is one scalar resource (extended resources, hugepages,
// attachable volumes) in whole units.
type scalarAmount struct {
	name  v1.ResourceName
	value int64
}

// resVec is an amount of every resource the scheduler's Fits check looks
// at, in its units: cpu in millicores, memory and ephemeral storage in
// bytes, scalar resources in whole units. It replaces the ResourceLists the
// scheduler builds so that adding up a hundred pods allocates nothing unless
// a pod asks for scalar resources.
type resVec struct {
	milliCPU  int64
	memory    int64
	ephemeral int64
	scalars   []scalarAmount
}

// isScalarResource reports whether the scheduler keeps the resource in
// Resource.ScalarResources (schedutil.IsScalarResourceName): extended
// resources, hugepages, kubernetes.io-prefixed resources and attachable
// volumes. Other names (cpu, memory, ephemeral-storage, pods, and native
// names it does not know) are not scalar.
func isScalarResource(name v1.ResourceName) bool {
	s := string(name)
	return isExtendedResource(name) ||
		strings.HasPrefix(s, v1.ResourceHugePagesPrefix) ||
		strings.Contains(s, v1.ResourceDefaultNamespacePrefix) ||
		strings.HasPrefix(s, v1.ResourceAttachableVolumesPrefix)
}

// isExtendedResource is v1helper.IsExtendedResourceName without the
// qualified-name validation (the API server has validated the names): a
// name with a domain that is not kubernetes.io and not a quota "requests."
// name.
func isExtendedResource(name v1.ResourceName) bool {
	s := string(name)
	if !strings.Contains(s, "/") || strings.Contains(s, v1.ResourceDefaultNamespacePrefix) {
		return false
	}
	return !strings.HasPrefix(s, v1.DefaultResourceRequestsPrefix)
}

func (v *resVec) scalar(name v1.ResourceName) int64 {
	for i := range v.scalars {
		if v.scalars[i].name == name {
			return v.scalars[i].value
		}
	}
	return 0
}

// op is how apply combines a resource's current amount with a new one.
type op int

const (
	opAdd op = iota // cur + a
	opMax           // max(cur, a)
	opSet           // a
)

func (o op) combine(cur, a int64) int64 {
	switch o {
	case opAdd:
		return cur + a
	case opMax:
		return max(cur, a)
	}
	return a
}

// apply combines the resource's current amount with a. Resources the
// scheduler does not count (pods, unknown native names) are ignored.
func (v *resVec) apply(name v1.ResourceName, a int64, o op) {
	switch name {
	case v1.ResourceCPU:
		v.milliCPU = o.combine(v.milliCPU, a)
	case v1.ResourceMemory:
		v.memory = o.combine(v.memory, a)
	case v1.ResourceEphemeralStorage:
		v.ephemeral = o.combine(v.ephemeral, a)
	default:
		if !isScalarResource(name) {
			return
		}
		for i := range v.scalars {
			if v.scalars[i].name == name {
				v.scalars[i].value = o.combine(v.scalars[i].value, a)
				return
			}
		}
		v.scalars = append(v.scalars, scalarAmount{name: name, value: o.combine(0, a)})
	}
}

// amount converts a quantity to the scheduler's unit for the resource.
func amount(name v1.ResourceName, q *resource.Quantity) int64 {
	if name == v1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

// addList adds every resource of rl, skipping those keep rejects (nil keeps
// all).
func (v *resVec) addList(rl v1.ResourceList, keep func(v1.ResourceName) bool) {
	reslist.Each(rl, func(name v1.ResourceName, q resource.Quantity) {
		if keep == nil || keep(name) {
			v.apply(name, amount(name, &q), opAdd)
		}
	})
}

// maxList raises every resource to its amount in rl where that is larger
// (resourcehelper's maxResourceList; a zero vector starts it as max(rl)).
func (v *resVec) maxList(rl v1.ResourceList) {
	reslist.Each(rl, func(name v1.ResourceName, q resource.Quantity) {
		v.apply(name, amount(name, &q), opMax)
	})
}

// setList replaces every pod-level resource with its amount in rl
// (pod-level requests replace the container aggregate).
func (v *resVec) setList(rl v1.ResourceList) {
	reslist.Each(rl, func(name v1.ResourceName, q resource.Quantity) {
		if resourcehelper.IsSupportedPodLevelResource(name) {
			v.apply(name, amount(name, &q), opSet)
		}
	})
}

func (v *resVec) add(w *resVec) {
	v.milliCPU += w.milliCPU
	v.memory += w.memory
	v.ephemeral += w.ephemeral
	for _, s := range w.scalars {
		v.apply(s.name, s.value, opAdd)
	}
}

func (v *resVec) sub(w *resVec) {
	v.milliCPU -= w.milliCPU
	v.memory -= w.memory
	v.ephemeral -= w.ephemeral
	for _, s := range w.scalars {
		v.apply(s.name, -s.value, opAdd)
	}
}

func (v *resVec) maxWith(w *resVec) {
	v.milliCPU = max(v.milliCPU, w.milliCPU)
	v.memory = max(v.memory, w.memory)
	v.ephemeral = max(v.ephemeral, w.ephemeral)
	for _, s := range w.scalars {
		v.apply(s.name, s.value, opMax)
	}
}

// copyFrom makes v equal to w without sharing w's scalar slice.
func (v *resVec) copyFrom(w *resVec) {
	v.milliCPU, v.memory, v.ephemeral = w.milliCPU, w.memory, w.ephemeral
	v.scalars = append(v.scalars[:0], w.scalars...)
}

// requestOptions say how podRequests counts a pod.
type requestOptions struct {
	// useStatus counts each container at max(spec, status resources,
	// allocated resources), as the scheduler does for pods already on the
	// node (detail 4; resourcehelper UseStatusResources).
	useStatus bool
	// podLevel honours spec.resources (the PodLevelResources gate).
	podLevel bool
	// keep, if set, drops container requests it rejects (the predicate
	// handler's removeMissingExtendedResources for the pod being admitted).
	keep func(v1.ResourceName) bool
	// excludeOverhead leaves spec.overhead out.
	excludeOverhead bool
	// aggregateStatus, with useStatus, takes the largest of the pod's
	// aggregated spec, actuated and allocated requests (1.37) instead of
	// each container's largest (profile.Profile.StatusAggregatedPerPod).
	aggregateStatus bool
}

// podRequests is resourcehelper.PodRequests as the scheduler's NodeInfo and
// Fits use it, overhead included: regular containers and sidecars add up, a
// non-sidecar init container needs its own request plus the sidecars
// started before it, and the pod needs the larger of the two; pod-level
// requests replace the aggregate for the resources they set.
//
// With useStatus, each container whose status carries resources counts at
// the per-container max(spec, status.resources.requests,
// status.allocatedResources), or max(status, allocated) while the pod's
// resize is Infeasible (determineContainerReqs). Init containers take their
// status into account only if they are sidecars.
//
// Amounts are converted per container and then added, where the scheduler
// adds quantities and converts the sum; the two differ only for quantities
// finer than the unit (a cpu request below 1m), which round up here once per
// container.
func podRequests(a Allocated, opts requestOptions) resVec {
	if a.Pod == nil {
		return resVec{}
	}
	if opts.useStatus && opts.aggregateStatus {
		return podRequestsAggregated(a, opts)
	}
	var total, sidecars, initMax, c, use resVec
	pod := a.Pod
	infeasible := opts.useStatus && resourcehelper.IsPodResizeInfeasible(pod)
	for i := range pod.Spec.Containers {
		ctr := &pod.Spec.Containers[i]
		containerRequests(&c, a.Resources(ctr).Requests, ctr.Name, pod.Status.ContainerStatuses, opts, infeasible, true)
		total.add(&c)
	}
	for i := range pod.Spec.InitContainers {
		ctr := &pod.Spec.InitContainers[i]
		sidecar := qos.IsSidecar(ctr)
		containerRequests(&c, a.Resources(ctr).Requests, ctr.Name, pod.Status.InitContainerStatuses, opts, infeasible, sidecar)
		if sidecar {
			total.add(&c)
			sidecars.add(&c)
			initMax.maxWith(&sidecars)
			continue
		}
		use.copyFrom(&c)
		use.add(&sidecars)
		initMax.maxWith(&use)
	}
	total.maxWith(&initMax)
	if podLevel := a.PodLevel(); opts.podLevel && podLevel != nil && podLevelRequestsSet(podLevel) {
		total.setList(podLevel.Requests)
	}
	if !opts.excludeOverhead {
		total.addList(pod.Spec.Overhead, nil)
	}
	return total
}

// What a container counts for in the 1.37 aggregation: its spec, its
// allocated or its actuated requests.
const (
	countSpec = iota
	countAllocated
	countActuated
)

// podRequestsAggregated is podRequests with useStatus as the 1.37
// resourcehelper.AggregateContainerRequests computes it: the containers'
// spec, allocated and actuated requests are each aggregated over the pod
// (aggregateContainerResourcesByFn, with the KEP-753 init container rules,
// every init container's status now included), and the pod counts at the
// largest of the three sums, or of the allocated and actuated ones alone
// while its resize is Infeasible. Up to 1.36 the largest was taken per
// container and then summed, which counts a pod with one container growing
// and another shrinking at more.
//
// A container's allocated requests are status.allocatedResources, which
// the kubelet sets to the allocation for every container it reports; the
// core does not write that field, so a container with a status and
// without the field counts its allocation there. Its actuated requests are status.resources.requests,
// else the allocated ones. A container without either counts its spec
// (nothing while the resize is Infeasible).
func podRequestsAggregated(a Allocated, opts requestOptions) resVec {
	pod := a.Pod
	infeasible := resourcehelper.IsPodResizeInfeasible(pod)
	var total, allocated, actuated resVec
	if !infeasible {
		aggregateBy(&total, a, countSpec, false)
	}
	aggregateBy(&allocated, a, countAllocated, infeasible)
	aggregateBy(&actuated, a, countActuated, infeasible)
	total.maxWith(&allocated)
	total.maxWith(&actuated)
	if podLevel := a.PodLevel(); opts.podLevel && podLevel != nil && podLevelRequestsSet(podLevel) {
		total.setList(podLevel.Requests)
	}
	if !opts.excludeOverhead {
		total.addList(pod.Spec.Overhead, nil)
	}
	return total
}

// aggregateBy is aggregateContainerResourcesByFn for one kind of count:
// regular containers and sidecars add up, a non-sidecar init container
// needs its own plus the sidecars started before it, and the pod needs the
// larger of the two.
func aggregateBy(out *resVec, a Allocated, kind int, infeasible bool) {
	var c, sidecars, initMax, use resVec
	pod := a.Pod
	for i := range pod.Spec.Containers {
		ctr := &pod.Spec.Containers[i]
		countContainer(&c, a, ctr, findStatus(pod.Status.ContainerStatuses, ctr.Name), kind, infeasible)
		out.add(&c)
	}
	for i := range pod.Spec.InitContainers {
		ctr := &pod.Spec.InitContainers[i]
		cs := findStatus(pod.Status.ContainerStatuses, ctr.Name)
		if cs == nil {
			cs = findStatus(pod.Status.InitContainerStatuses, ctr.Name)
		}
		countContainer(&c, a, ctr, cs, kind, infeasible)
		if qos.IsSidecar(ctr) {
			out.add(&c)
			sidecars.add(&c)
			initMax.maxWith(&sidecars)
			continue
		}
		use.copyFrom(&c)
		use.add(&sidecars)
		initMax.maxWith(&use)
	}
	out.maxWith(&initMax)
}

// countContainer sets c to one container's requests of the given kind
// (containerSpecRequests, containerAllocatedRequests and
// containerActuatedRequests of the 1.37 resourcehelper).
func countContainer(c *resVec, a Allocated, ctr *v1.Container, cs *v1.ContainerStatus, kind int, infeasible bool) {
	c.milliCPU, c.memory, c.ephemeral = 0, 0, 0
	c.scalars = c.scalars[:0]
	spec := a.Resources(ctr).Requests
	// The kubelet reports the allocation as allocatedResources of every
	// container it has a status for; the core does not write the field,
	// so the allocation stands in for it when it is absent.
	var allocatedList v1.ResourceList
	switch {
	case cs != nil && cs.AllocatedResources != nil:
		allocatedList = cs.AllocatedResources
	case cs != nil:
		allocatedList = spec
	}
	var list v1.ResourceList
	switch {
	case kind == countSpec:
		list = spec
	case kind == countActuated && cs != nil && cs.Resources != nil && cs.Resources.Requests != nil:
		list = cs.Resources.Requests
	case allocatedList != nil:
		list = allocatedList
	case !infeasible:
		list = spec
	}
	c.addList(list, nil)
}

// podLevelRequestsSet is resourcehelper.IsPodLevelRequestsSet for the
// allocated pod-level resources.
func podLevelRequestsSet(r *v1.ResourceRequirements) bool {
	for name := range r.Requests {
		if resourcehelper.IsSupportedPodLevelResource(name) {
			return true
		}
	}
	return false
}

// containerRequests sets c to one container's effective requests.
func containerRequests(c *resVec, requests v1.ResourceList, name string, statuses []v1.ContainerStatus,
	opts requestOptions, infeasible, statusApplies bool) {
	c.milliCPU, c.memory, c.ephemeral = 0, 0, 0
	c.scalars = c.scalars[:0]
	if opts.useStatus && statusApplies {
		if cs := findStatus(statuses, name); cs != nil && cs.Resources != nil {
			if !infeasible {
				c.maxList(requests)
			}
			c.maxList(cs.Resources.Requests)
			c.maxList(cs.AllocatedResources)
			return
		}
	}
	c.addList(requests, opts.keep)
}

func findStatus(statuses []v1.ContainerStatus, name string) *v1.ContainerStatus {
	for i := range statuses {
		if statuses[i].Name == name {
			return &statuses[i]
		}
	}
	return nil
}

// Requests are a pod's cpu and memory requests in the scheduler's units.
type Requests struct {
	MilliCPU int64 // millicores
	Memory   int64 // bytes
}

// StatusRequests is resourcehelper.PodRequests with UseStatusResources, as
// the kubelet's HandlePodReconcile takes it: per container the largest of
// the spec, the status resources and the allocated resources (the status
// and allocated ones alone while the pod's resize is Infeasible), sidecar
// and init-container rules, pod-level requests where the PodLevelResources
// gate honours them, and the overhead.
func StatusRequests(pod Allocated, node NodeConfig) Requests {
	r := podRequests(pod, requestOptions{useStatus: true, podLevel: node.Profile.PodLevelResources(),
		aggregateStatus: node.Profile.StatusAggregatedPerPod()})
	return Requests{MilliCPU: r.milliCPU, Memory: r.memory}
}

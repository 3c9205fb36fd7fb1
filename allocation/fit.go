package allocation

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// MessageCache keeps the last few insufficient-resource messages with the
// numbers they were built from. The zero value is ready to use.
type MessageCache struct {
	entries [8]cachedMessage
	next    int
}

type cachedMessage struct {
	name                      v1.ResourceName
	requested, used, capacity int64
	msg                       string
}

// insufficient returns the message for a shortfall, from the cache when it
// holds it (a nil cache builds it every time).
func (c *MessageCache) insufficient(name v1.ResourceName, requested, used, capacity int64) string {
	if c == nil {
		return insufficient(name, requested, used, capacity)
	}
	for i := range c.entries {
		e := &c.entries[i]
		if e.msg != "" && e.name == name && e.requested == requested && e.used == used && e.capacity == capacity {
			return e.msg
		}
	}
	msg := insufficient(name, requested, used, capacity)
	c.entries[c.next] = cachedMessage{name: name, requested: requested, used: used, capacity: capacity, msg: msg}
	c.next = (c.next + 1) % len(c.entries)
	return msg
}

// ResourcesFit is the predicate admission handler's resource check
// (lifecycle/predicate.go generalFilter → the scheduler's noderesources
// Fits): the pod, counted by its spec with overhead, must fit in the node's
// allocatable beside the others, each counted at max(spec, status resources,
// allocated) per container (the scheduler's NodeInfo, detail 4). Extended
// resources the node does not report are dropped from the pod first
// (removeMissingExtendedResources). The checks run in the scheduler's order:
// pod count, cpu, memory, ephemeral-storage, then scalar resources by name;
// the first shortfall is reported as reason "OutOf<resource>" and message
// "Node didn't have enough resource: <resource>, requested: %d, used: %d,
// capacity: %d". Others with the pod's own UID are skipped.
func ResourcesFit(pod *v1.Pod, others []*v1.Pod, node NodeConfig) (ok bool, reason, message string) {
	if pod == nil {
		d := nilPod("pod")
		return false, d.Reason, d.Message
	}
	used := UsageOf(others, pod.UID, node)
	return Fits(As(pod), &used, node)
}

// Fits is ResourcesFit with the pod as a view and the other pods' usage
// already summed.
func Fits(pod Allocated, others *Usage, node NodeConfig) (ok bool, reason, message string) {
	if pod.Pod == nil {
		d := nilPod("pod")
		return false, d.Reason, d.Message
	}
	f := fitInputs(pod, others, node)
	if f.count+1 > f.allowedPods {
		return false, "OutOfpods", node.Messages.insufficient(v1.ResourcePods, 1, f.count, f.allowedPods)
	}
	check := func(name v1.ResourceName, requested, usedAmount int64) (bool, string, string) {
		capacity := allocatableAmount(node, name)
		if requested > 0 && requested > capacity-usedAmount {
			return false, outOf(name), node.Messages.insufficient(name, requested, usedAmount, capacity)
		}
		return true, "", ""
	}
	if ok, reason, message = check(v1.ResourceCPU, f.req.milliCPU, f.used.milliCPU); !ok {
		return ok, reason, message
	}
	if ok, reason, message = check(v1.ResourceMemory, f.req.memory, f.used.memory); !ok {
		return ok, reason, message
	}
	if ok, reason, message = check(v1.ResourceEphemeralStorage, f.req.ephemeral, f.used.ephemeral); !ok {
		return ok, reason, message
	}
	for _, s := range f.req.scalars {
		if ok, reason, message = check(s.name, s.value, f.used.scalar(s.name)); !ok {
			return ok, reason, message
		}
	}
	return true, "", ""
}

// fit is what the predicate handler's resource check compares: the pod's
// requests (its scalar resources sorted by name, since the scheduler walks
// its map in random order and a deterministic report needs an order), the
// others' usage, how many others there are and how many pods may run.
type fit struct {
	req, used          resVec
	count, allowedPods int64
}

func fitInputs(pod Allocated, others *Usage, node NodeConfig) fit {
	podLevel := node.Profile.PodLevelResources()
	f := fit{used: others.req, count: others.Pods}
	keep := func(name v1.ResourceName) bool {
		if !isExtendedResource(name) {
			return true
		}
		_, found := node.Allocatable[name]
		return found
	}
	f.req = podRequests(pod, requestOptions{podLevel: podLevel, keep: keep})
	slices.SortFunc(f.req.scalars, func(a, b scalarAmount) int { return strings.Compare(string(a.name), string(b.name)) })
	f.allowedPods = int64(defaultMaxPods)
	if q, found := node.Allocatable[v1.ResourcePods]; found {
		f.allowedPods = q.Value()
	}
	return f
}

// allocatableAmount is the node's allocatable amount of a resource in the
// scheduler's unit, 0 when the node does not report it.
func allocatableAmount(node NodeConfig, name v1.ResourceName) int64 {
	if q, found := node.Allocatable[name]; found {
		return amount(name, &q)
	}
	return 0
}

// Check is one comparison admission makes, with its numbers in the
// scheduler's units (millicores, bytes, counts).
type Check struct {
	// Kind is "capacity" for the whole pod against the node's allocatable
	// (an Infeasible resize when it fails) or "fit" for the pod beside the
	// other pods' allocations (Deferred when it fails).
	Kind      string
	Resource  v1.ResourceName
	Requested int64
	Used      int64
	Capacity  int64
}

// Fits reports whether the check passes.
func (c Check) Fits() bool {
	if c.Resource == v1.ResourcePods {
		return c.Used+c.Requested <= c.Capacity
	}
	return c.Requested <= 0 || c.Requested <= c.Capacity-c.Used
}

// ExplainResize returns the numbers a resize's admission compares, in the
// order the kubelet compares them: the capacity check of canResizePod
// (memory, then cpu, against allocatable; up to 1.35 only, see
// KubeletCapacityCheck) and the predicate's fit beside
// the others (pods, cpu, memory, ephemeral storage, then scalar resources
// by name). It is for plans and reports; AdmitResize decides.
func ExplainResize(desired *v1.Pod, others *Usage, node NodeConfig) []Check {
	if desired == nil {
		return nil
	}
	var checks []Check
	if node.Profile.KubeletCapacityCheck() {
		checks = append(checks,
			Check{Kind: "capacity", Resource: v1.ResourceMemory, Requested: resourceRequest(desired, v1.ResourceMemory, node), Capacity: node.Allocatable.Memory().Value()},
			Check{Kind: "capacity", Resource: v1.ResourceCPU, Requested: resourceRequest(desired, v1.ResourceCPU, node), Capacity: node.Allocatable.Cpu().MilliValue()},
		)
	}
	f := fitInputs(As(desired), others, node)
	checks = append(checks,
		Check{Kind: "fit", Resource: v1.ResourcePods, Requested: 1, Used: f.count, Capacity: f.allowedPods},
		Check{Kind: "fit", Resource: v1.ResourceCPU, Requested: f.req.milliCPU, Used: f.used.milliCPU, Capacity: allocatableAmount(node, v1.ResourceCPU)},
		Check{Kind: "fit", Resource: v1.ResourceMemory, Requested: f.req.memory, Used: f.used.memory, Capacity: allocatableAmount(node, v1.ResourceMemory)},
	)
	if f.req.ephemeral > 0 {
		checks = append(checks, Check{Kind: "fit", Resource: v1.ResourceEphemeralStorage, Requested: f.req.ephemeral, Used: f.used.ephemeral, Capacity: allocatableAmount(node, v1.ResourceEphemeralStorage)})
	}
	for _, s := range f.req.scalars {
		checks = append(checks, Check{Kind: "fit", Resource: s.name, Requested: s.value, Used: f.used.scalar(s.name), Capacity: allocatableAmount(node, s.name)})
	}
	return checks
}

// insufficient is InsufficientResourceError.Error() of the kubelet's
// predicate handler.
func insufficient(name v1.ResourceName, requested, used, capacity int64) string {
	// Built by hand: a Deferred decision is made on every retry, and this
	// is its one allocation.
	var buf [160]byte
	b := append(buf[:0], "Node didn't have enough resource: "...)
	b = append(b, name...)
	b = append(b, ", requested: "...)
	b = strconv.AppendInt(b, requested, 10)
	b = append(b, ", used: "...)
	b = strconv.AppendInt(b, used, 10)
	b = append(b, ", capacity: "...)
	b = strconv.AppendInt(b, capacity, 10)
	return string(b)
}

// outOf is the predicate's rejection reason for a resource, "OutOfcpu".
func outOf(name v1.ResourceName) string {
	switch name {
	case v1.ResourceCPU:
		return "OutOfcpu"
	case v1.ResourceMemory:
		return "OutOfmemory"
	case v1.ResourceEphemeralStorage:
		return "OutOfephemeral-storage"
	case v1.ResourcePods:
		return "OutOfpods"
	}
	return "OutOf" + string(name)
}

// capacityFits is canResizePod's capacity check: the whole desired pod's cpu
// (millicores) and memory (bytes) requests, as GetResourceRequest computes
// them, against the node's allocatable; memory is reported first.
func capacityFits(pod *v1.Pod, node NodeConfig) (string, bool) {
	cpuRequests, memRequests := cpuMemoryRequests(pod, node)
	cpuAvailable := node.Allocatable.Cpu().MilliValue()
	memAvailable := node.Allocatable.Memory().Value()
	switch {
	case memRequests > memAvailable:
		return fmt.Sprintf("Node didn't have enough capacity: memory, requested: %d, capacity: %d", memRequests, memAvailable), false
	case cpuRequests > cpuAvailable:
		return fmt.Sprintf("Node didn't have enough capacity: cpu, requested: %d, capacity: %d", cpuRequests, cpuAvailable), false
	}
	return "", true
}

// resourceRequest is the kubelet's resource.GetResourceRequest: the pod's
// requests without overhead, plus the overhead only if that total is not
// zero; cpu in millicores, memory in bytes. Pod-level requests replace the
// container aggregate whenever the pod sets them; with the PodLevelResources
// gate on and pod-level resources set, container requests are skipped
// altogether (SkipContainerLevelResources).
func resourceRequest(pod *v1.Pod, name v1.ResourceName, node NodeConfig) int64 {
	var total int64
	if node.Profile.PodLevelResources() && resourcehelper.IsPodLevelResourcesSet(pod) {
		if pq, ok := pod.Spec.Resources.Requests[name]; ok {
			total = amount(name, &pq)
		}
	} else {
		r := podRequests(As(pod), requestOptions{podLevel: true, excludeOverhead: true})
		switch name {
		case v1.ResourceCPU:
			total = r.milliCPU
		case v1.ResourceMemory:
			total = r.memory
		}
	}
	if oh, ok := pod.Spec.Overhead[name]; ok && total != 0 {
		total += amount(name, &oh)
	}
	return total
}

// cpuMemoryRequests is resourceRequest for cpu and for memory from one
// walk of the pod's containers: capacityFits needs both, and each
// resourceRequest would add up the whole pod again.
func cpuMemoryRequests(pod *v1.Pod, node NodeConfig) (cpu, memory int64) {
	if node.Profile.PodLevelResources() && resourcehelper.IsPodLevelResourcesSet(pod) {
		if pq, ok := pod.Spec.Resources.Requests[v1.ResourceCPU]; ok {
			cpu = amount(v1.ResourceCPU, &pq)
		}
		if pq, ok := pod.Spec.Resources.Requests[v1.ResourceMemory]; ok {
			memory = amount(v1.ResourceMemory, &pq)
		}
	} else {
		r := podRequests(As(pod), requestOptions{podLevel: true, excludeOverhead: true})
		cpu, memory = r.milliCPU, r.memory
	}
	if oh, ok := pod.Spec.Overhead[v1.ResourceCPU]; ok && cpu != 0 {
		cpu += amount(v1.ResourceCPU, &oh)
	}
	if oh, ok := pod.Spec.Overhead[v1.ResourceMemory]; ok && memory != 0 {
		memory += amount(v1.ResourceMemory, &oh)
	}
	return cpu, memory
}

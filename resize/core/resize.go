package core

import (
	"cmp"
	"maps"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/allocation"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/cri/kubeletcri"
)

// PodCgroupReading is a pod cgroup's current configuration in the
// kubelet's units, as GetPodCgroupConfig reads it back.
type PodCgroupReading struct {
	Memory int64  // bytes; -1 for "max" on v2, cgconfig.V1UnlimitedMemory for no limit on v1
	Quota  int64  // -1 for no limit
	Period uint64 // microseconds
	Shares uint64 // on v2 read back from cpu.weight through the lossy inverse
}

// readingOf converts the values a manager read back. The kubelet compares
// raw values, so on v1 an unlimited memory.limit_in_bytes keeps the huge
// number the kernel shows (adding a pod limit then counts as a decrease),
// while on v2 "max" reads as -1 (adding a limit counts as an increase); on
// v2 the shares come back from cpu.weight through WeightToShares, which is
// lossy (cgroup_v2_manager_linux.go).
func readingOf(v cgconfig.Values, version cgconfig.Version) PodCgroupReading {
	r := PodCgroupReading{Memory: cgconfig.Unlimited, Quota: cgconfig.Unlimited, Period: cgconfig.QuotaPeriod}
	if v.MemoryLimit != nil {
		r.Memory = *v.MemoryLimit
		if r.Memory == cgconfig.Unlimited && version == cgconfig.V1 {
			r.Memory = cgconfig.V1UnlimitedMemory
		}
	}
	if v.CPUQuota != nil {
		r.Quota = *v.CPUQuota
	}
	if v.CPUPeriod != nil {
		r.Period = *v.CPUPeriod
	}
	if version == cgconfig.V2 {
		if v.CPUWeight != nil {
			r.Shares = cgconfig.WeightToShares(*v.CPUWeight)
		}
	} else if v.CPUShares != nil {
		r.Shares = *v.CPUShares
	}
	return r
}

// ResizeTarget is everything the write order of a resize depends on.
type ResizeTarget struct {
	UID       types.UID
	Pod       *v1.Pod // the allocated pod
	PodCgroup string
	SandboxID string
	Actions   PodActions
	Current   PodCgroupReading
	// Actuated is the pod's actuated record before the resize.
	Actuated allocation.PodResources
}

// sandboxRollback is the UpdatePodSandboxResources that undoes a 1.36
// sandbox update when the pod cgroup write after it (at index in the
// writes) fails.
type sandboxRollback struct {
	index  int
	action UpdatePodSandboxResources
}

// appendResizeWrites appends to out (an op's reused buffer) the write
// order of doPodResizeAction (kuberuntime_manager.go), as data: per
// resource, memory first and then cpu, the pod cgroup grows before the
// containers and shrinks after them, limits before requests on the way up
// and after them on the way down.
// After every pod cgroup write the runtime is told the pod's new totals
// (UpdatePodSandboxResources, best effort); after every container update
// its actuated record is written. Memory requests are never written to a
// cgroup, and a pod without a limit keeps its current one (limits are
// never removed). With pod-level resize the actuated pod-level record is
// written last. The first failure stops the list: the next sync retries.
//
// From 1.36 (profile.Profile.SandboxUpdateFirst) each pod cgroup write is
// preceded by UpdatePodSandboxResources with the totals it makes, whose
// failure rejects the resize, and a failed write is undone on the runtime
// side by a second call with the previous totals: the writes returned carry
// that rollback in rollbacks (when not nil, indexes counting in out), for
// the sync to send only if the write fails. The actuated pod-level record
// is then written after each resource's writes, only when the pod-level
// resources changed.
//
// desired is the pod cgroup config of t.Pod (cgconfig.PodConfig), which a
// sync takes once for its memory check and its writes; the values it
// points at are only read.
func (s *settings) appendResizeWrites(out []Action, t ResizeTarget, desired cgconfig.ResourceConfig, rollbacks *[]sandboxRollback) []Action {
	start := len(out)
	sandboxFirst := s.profile.SandboxUpdateFirst()
	cur := t.Current
	// current is what the pod cgroup holds as the writes go, for the
	// totals told to the runtime.
	current := cgconfig.ResourceConfig{Memory: &cur.Memory, CPUQuota: &cur.Quota, CPUPeriod: &cur.Period, CPUShares: &cur.Shares}
	setPod := func(name v1.ResourceName, limit bool) {
		var rc cgconfig.ResourceConfig
		previous := current
		switch {
		case name == v1.ResourceCPU && limit:
			rc.CPUQuota, rc.CPUPeriod = desired.CPUQuota, desired.CPUPeriod
			current.CPUQuota, current.CPUPeriod = rc.CPUQuota, rc.CPUPeriod
		case name == v1.ResourceCPU:
			rc.CPUShares = desired.CPUShares
			current.CPUShares = rc.CPUShares
		case limit:
			rc.Memory = desired.Memory
			current.Memory = rc.Memory
		default:
			return // memory requests are not written to cgroups
		}
		write := SetCgroup{Path: t.PodCgroup, Values: s.podValues(rc)}
		if !sandboxFirst {
			out = append(out, write,
				UpdatePodSandboxResources{Request: s.cri.SandboxResources(t.SandboxID, t.Pod, current)})
			return
		}
		// doPodResizeAction's setPodCgroupConfig from 1.36: the runtime
		// first (a refusal rejects the resize), then the write, and the
		// runtime told the previous totals again if the write fails.
		out = append(out,
			UpdatePodSandboxResources{Request: s.cri.SandboxResources(t.SandboxID, t.Pod, current), RejectsResize: true, Resource: name},
			write)
		if rollbacks != nil {
			*rollbacks = append(*rollbacks, sandboxRollback{index: len(out) - 1, action: UpdatePodSandboxResources{
				Request: s.cri.SandboxResources(t.SandboxID, t.Pod, previous), Resource: name,
			}})
		}
	}
	// actuated follows each container's values as the updates go: the
	// second call for a container sends what the first made actual.
	actuated := map[string]ContainerValues{}
	for _, list := range [][]ContainerUpdate{t.Actions.UpdateMemory, t.Actions.UpdateCPU} {
		for _, u := range list {
			actuated[u.Name] = u.Current
		}
	}
	updateContainers := func(name v1.ResourceName, updates []ContainerUpdate) {
		for _, u := range updates {
			c := findContainer(t.Pod, u.Name)
			if c == nil {
				continue
			}
			v := actuated[u.Name]
			if name == v1.ResourceMemory {
				v.MemoryLimit, v.MemoryRequest = u.Desired.MemoryLimit, u.Desired.MemoryRequest
			} else {
				v.CPULimit, v.CPURequest = u.Desired.CPULimit, u.Desired.CPURequest
			}
			actuated[u.Name] = v
			// The container as the kubelet hands it to the runtime: its
			// resources are the values this update makes actual.
			sent := *c
			sent.Resources = requirementsLike(v, c.Resources)
			// The message and its Linux part are one allocation.
			msg := new(struct {
				cr  runtimeapi.ContainerResources
				lcr runtimeapi.LinuxContainerResources
			})
			s.cri.FillContainerResources(&msg.lcr, t.Pod, &sent)
			msg.cr.Linux = &msg.lcr
			out = append(out,
				UpdateContainerResources{Name: u.Name, ID: u.ID, Resources: &msg.cr},
				WriteActuatedContainer{UID: t.UID, Name: u.Name, Resources: actuatedRequirements(t.Pod.Spec.Resources, sent.Resources, s.profile.PodLevelResize())})
		}
	}
	// podLevel is the actuated pod-level record as the 1.36 writes leave
	// it, one resource at a time (updateActuatedPodLevelResources).
	podLevelChanged := sandboxFirst && s.profile.PodLevelResize() && t.Pod.Spec.Resources != nil &&
		!podLevelActuated(t.Pod, t.Actuated)
	podLevel := t.Actuated.PodLevelResources
	resizeContainers := func(name v1.ResourceName, curLimit, newLimit, curRequest, newRequest int64, updates []ContainerUpdate) {
		if newLimit > curLimit {
			setPod(name, true)
		}
		if newRequest > curRequest {
			setPod(name, false)
		}
		updateContainers(name, updates)
		if newRequest < curRequest {
			setPod(name, false)
		}
		if newLimit < curLimit {
			setPod(name, true)
		}
		if podLevelChanged {
			podLevel = actuatedPodLevel(podLevel, t.Pod.Spec.Resources, name)
			out = append(out, s.actuatedRecord(t, out[start:], podLevel))
		}
	}
	a := t.Actions
	if len(a.UpdateMemory) > 0 || a.UpdatePodResources {
		desired.Memory = cmp.Or(desired.Memory, &cur.Memory)
		resizeContainers(v1.ResourceMemory, cur.Memory, *desired.Memory, 0, 0, a.UpdateMemory)
	}
	if len(a.UpdateCPU) > 0 || a.UpdatePodResources {
		desired.CPUQuota = cmp.Or(desired.CPUQuota, &cur.Quota)
		resizeContainers(v1.ResourceCPU, cur.Quota, *desired.CPUQuota, int64(cur.Shares), int64(*desired.CPUShares), a.UpdateCPU)
	}
	if !sandboxFirst && s.profile.PodLevelResize() && t.Pod.Spec.Resources != nil {
		// updateActuatedPodLevelResources: the pod's whole record, with the
		// container records as the updates above leave them.
		out = append(out, s.actuatedRecord(t, out[start:], t.Pod.Spec.Resources))
	}
	return out
}

// actuatedRecord is the pod's whole actuated record with podLevel as its
// pod-level resources and the container records as the writes so far
// leave them. Requirements are never changed in place: a new map of them
// shares their values.
func (s *settings) actuatedRecord(t ResizeTarget, writes []Action, podLevel *v1.ResourceRequirements) WriteActuated {
	rec := t.Actuated
	rec.ContainerResources = maps.Clone(rec.ContainerResources)
	if rec.ContainerResources == nil {
		rec.ContainerResources = map[string]v1.ResourceRequirements{}
	}
	for _, a := range writes {
		if w, ok := a.(WriteActuatedContainer); ok {
			rec.ContainerResources[w.Name] = w.Resources
		}
	}
	rec.PodLevelResources = podLevel
	return WriteActuated{UID: t.UID, Resources: rec}
}

// actuatedPodLevel is the 1.36 updateActuatedPodLevelResources for one
// resource: the actuated pod-level record with that resource's request and
// limit taken from the allocation, for each of the two lists the
// allocation has (a list the allocation has without the resource gives a
// zero amount, as the kubelet's map lookup does). The record given (nil
// for none) is not changed: a new one is returned.
func actuatedPodLevel(actuated, allocated *v1.ResourceRequirements, name v1.ResourceName) *v1.ResourceRequirements {
	out := &v1.ResourceRequirements{}
	if actuated != nil {
		*out = *actuated
	}
	with := func(list, from v1.ResourceList) v1.ResourceList {
		if from == nil {
			return list
		}
		list = maps.Clone(list)
		if list == nil {
			list = v1.ResourceList{}
		}
		list[name] = from[name]
		return list
	}
	out.Requests, out.Limits = with(out.Requests, allocated.Requests), with(out.Limits, allocated.Limits)
	return out
}

// requirementsLike turns compared values back into requirements with
// every field set, as the kubelet's updatePodContainerResources builds the
// container it hands to the runtime; or returns have itself when it holds
// the very same quantities (the same amounts in the same formats, so they
// print the same): after a resize the second update of a container sends
// its allocation, which then needs no new maps.
func requirementsLike(v ContainerValues, have v1.ResourceRequirements) v1.ResourceRequirements {
	same := func(list v1.ResourceList, cpu, memory int64) bool {
		if len(list) != 2 {
			return false
		}
		c, okc := list[v1.ResourceCPU]
		m, okm := list[v1.ResourceMemory]
		var wantCPU, wantMemory resource.Quantity
		wantCPU.SetMilli(cpu)
		wantMemory.Set(memory)
		return okc && okm && c.Format == resource.DecimalSI && m.Format == resource.BinarySI &&
			c.Cmp(wantCPU) == 0 && m.Cmp(wantMemory) == 0
	}
	if len(have.Claims) == 0 && same(have.Limits, v.CPULimit, v.MemoryLimit) && same(have.Requests, v.CPURequest, v.MemoryRequest) {
		return have
	}
	return v1.ResourceRequirements{
		Limits: v1.ResourceList{
			v1.ResourceCPU:    *resource.NewMilliQuantity(v.CPULimit, resource.DecimalSI),
			v1.ResourceMemory: *resource.NewQuantity(v.MemoryLimit, resource.BinarySI),
		},
		Requests: v1.ResourceList{
			v1.ResourceCPU:    *resource.NewMilliQuantity(v.CPURequest, resource.DecimalSI),
			v1.ResourceMemory: *resource.NewQuantity(v.MemoryRequest, resource.BinarySI),
		},
	}
}

// memoryCheck is the usage check before a memory limit goes down
// (kubeletcri.MemoryCheck), with the reads it needs as actions.
type memoryCheck struct{ kubeletcri.MemoryCheck }

// planMemoryCheck decides the check (kubeletcri.PlanMemoryCheck) with
// desired, the pod cgroup config of pod (cgconfig.PodConfig). ok is false
// when nothing needs checking.
func (s *settings) planMemoryCheck(pod *v1.Pod, desired cgconfig.ResourceConfig, cur PodCgroupReading, a PodActions, ids containerRecords) (memoryCheck, bool) {
	lowered := map[string]int64{}
	for _, u := range a.UpdateMemory {
		if u.Desired.MemoryLimit != 0 && (u.Current.MemoryLimit == 0 || u.Desired.MemoryLimit < u.Current.MemoryLimit) {
			lowered[u.Name] = u.Desired.MemoryLimit
		}
	}
	mc, ok := s.cri.PlanMemoryCheck(pod, desired.Memory, cur.Memory, lowered, ids.id)
	return memoryCheck{mc}, ok
}

// appendReads appends to out the actions the check needs: the pod's
// usage, then each checked container's statistics (best effort).
func (mc memoryCheck) appendReads(out []Action, podCgroup string) []Action {
	out = append(out, ReadMemoryUsage{Path: podCgroup})
	for _, c := range mc.Containers {
		if c.ID != "" {
			out = append(out, ReadContainerStats{Name: c.Name, ID: c.ID})
		}
	}
	return out
}

// verdict judges the reads' results and returns the kubelet's error, or
// nil.
func (mc memoryCheck) verdict(pod *v1.Pod, done []Action, res []Result) error {
	var usage *int64
	if _, r, ok := resultOf[ReadMemoryUsage](done, res); ok && r.Err == nil {
		usage = &r.Usage
	}
	stats := map[string]*runtimeapi.ContainerStats{}
	for i := range done {
		if r, ok := done[i].(ReadContainerStats); ok && res[i].Err == nil {
			stats[r.Name] = res[i].Stats
		}
	}
	return mc.Verdict(pod, usage, stats)
}

// PodExpectation is what one pod's cgroups, runtime containers and
// records should hold, by its allocation. The core does no I/O: an audit
// (resize.Node.Audit) reads the real state and compares it with this.
type PodExpectation struct {
	UID       types.UID
	Namespace string
	Name      string
	PodCgroup string
	// PodCgroupValues are the pod cgroup's values for the allocation, as
	// the kubelet writes them (ResourceConfigForPod; on cgroup v2 the
	// kubelet's linear cpu.weight). A nil field is one the kubelet leaves
	// as it finds it.
	PodCgroupValues cgconfig.Values
	// Containers are the pod's sidecars and regular containers, in the
	// pod's order.
	Containers []ContainerExpectation
}

// ContainerExpectation is what one container should have.
type ContainerExpectation struct {
	Name string
	// ID is the runtime container the kubelet holds for the name; "" when
	// it has none (not created yet).
	ID string
	// Cgroup is the container cgroup's path below the cgroup root.
	Cgroup string
	// Allocated are the allocated requirements.
	Allocated v1.ResourceRequirements
	// WantActuated is the actuated record the allocation calls for: what
	// setActuatedContainerResources (kuberuntime_container.go) writes,
	// Allocated with, under pod-level resize, the pod-level limits for
	// those the container lacks.
	WantActuated v1.ResourceRequirements
	// Actuated is the actuated record, when there is one.
	Actuated    v1.ResourceRequirements
	HasActuated bool
	// Resources are what the kubelet sends the runtime for the allocation
	// (generateLinuxContainerResources).
	Resources *runtimeapi.LinuxContainerResources
	// Status is what the pod's status shows for the container while it
	// runs with Resources (convertContainerStatusResources).
	Status v1.ResourceRequirements
	// StatusKeepsCPULimit is set when such a runtime reports no cpu limit
	// (--cpu-cfs-quota=false): the status then keeps the cpu limit it
	// showed before, whatever the allocation says.
	StatusKeepsCPULimit bool
}

// asActuated is the container as the runtime last got it when its
// actuated record holds the allocated requests: the record's requests,
// which after an in-place update carry an explicit zero where the
// allocation has none (updatePodContainerResources sets every field,
// kuberuntime_manager.go), and calculateLinuxResources then takes the cpu
// shares from that zero request rather than from the limit. Otherwise it
// is the allocated container itself.
func asActuated(ctr *v1.Container, rec v1.ResourceRequirements, has bool) *v1.Container {
	if !has || maps.EqualFunc(ctr.Resources.Requests, rec.Requests, resource.Quantity.Equal) ||
		!quantityEqual(ctr.Resources.Requests, rec.Requests, v1.ResourceCPU) ||
		!quantityEqual(ctr.Resources.Requests, rec.Requests, v1.ResourceMemory) {
		return ctr
	}
	out := *ctr
	out.Resources.Requests = rec.Requests
	return &out
}

// Expectations returns what every admitted pod that has not finished
// should hold by its allocation, in admission order. Rejected and
// finished pods hold nothing to compare.
func (c *Core) Expectations() []PodExpectation {
	if !c.made() {
		return nil
	}
	var out []PodExpectation
	for _, uid := range c.order {
		ps := c.pods[uid]
		if ps == nil || !ps.admitted || ps.isTerminal() {
			continue
		}
		alloc, _ := ps.allocatedPod()
		pe := PodExpectation{
			UID:             uid,
			Namespace:       ps.pod().Namespace,
			Name:            ps.pod().Name,
			PodCgroup:       ps.podCgroup,
			PodCgroupValues: c.s.podCgroupValues(alloc),
		}
		for ctr := range allContainers(alloc) {
			ce := ContainerExpectation{
				Name:         ctr.Name,
				Allocated:    ctr.Resources,
				WantActuated: actuatedRequirements(alloc.Spec.Resources, ctr.Resources, c.s.profile.PodLevelResize()),
			}
			if rec, ok := ps.containers.lookup(ctr.Name); ok {
				ce.ID = rec.id
				ce.Cgroup = cgconfig.ContainerCgroupName(ps.podCgroup, rec.id, c.s.cfg.CgroupDriver)
			}
			ce.Actuated, ce.HasActuated = ps.live().actuated.ContainerResources[ctr.Name]
			ce.Resources = c.s.cri.ContainerResources(alloc, asActuated(ctr, ce.Actuated, ce.HasActuated))
			ce.Status = *statusResources(ctr.Resources, true, &runtimeapi.ContainerResources{Linux: ce.Resources}, nil, "")
			ce.StatusKeepsCPULimit = !c.s.enforceCPULimits
			pe.Containers = append(pe.Containers, ce)
		}
		out = append(out, pe)
	}
	return out
}

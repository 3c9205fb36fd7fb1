package core

import (
	"maps"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

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

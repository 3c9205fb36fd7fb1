package core

import (
	v1 "k8s.io/api/core/v1"
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

// Expectations returns what every admitted pod that has not finished
// should hold by its allocation, in admission order. Rejected and
// finished pods hold nothing to compare.
func (c *Core) Expectations() []PodExpectation {
	var out []PodExpectation
	for _, uid := range c.order {
		ps := c.pods[uid]
		if ps == nil || !ps.admitted || ps.isTerminal() {
			continue
		}
		alloc, _ := c.hot(ps).allocatedPod()
		pe := PodExpectation{
			UID:             uid,
			Namespace:       ps.pod.Namespace,
			Name:            ps.pod.Name,
			PodCgroup:       ps.podCgroup,
			PodCgroupValues: c.s.podCgroupValues(alloc),
		}
		for ctr := range allContainers(alloc) {
			ce := ContainerExpectation{
				Name:      ctr.Name,
				Allocated: ctr.Resources,
				Resources: c.s.containerResources(alloc, ctr),
			}
			if rec, ok := ps.containers.lookup(ctr.Name); ok {
				ce.ID = rec.id
				ce.Cgroup = cgconfig.ContainerCgroupName(ps.podCgroup, rec.id, c.s.cfg.CgroupDriver)
			}
			ce.Actuated, ce.HasActuated = ps.actuated.ContainerResources[ctr.Name]
			ce.Status = *statusResources(ctr.Resources, true, &runtimeapi.ContainerResources{Linux: ce.Resources}, nil, "")
			ce.StatusKeepsCPULimit = !c.s.enforceCPULimits
			pe.Containers = append(pe.Containers, ce)
		}
		out = append(out, pe)
	}
	return out
}

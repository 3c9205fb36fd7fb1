package core

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/cri/crilabels"
	"github.com/resizelet/resizelet/qos"
)

// OOM score adjustments the kubelet gives containers (pkg/kubelet/qos).
const (
	guaranteedOOMScoreAdj = -997
	bestEffortOOMScoreAdj = 1000
)

// sandboxConfig is the CRI config the kubelet sends for a pod: host
// network, so no CNI is needed, and the pod cgroup as the cgroup parent.
func (s *settings) sandboxConfig(pod *v1.Pod, podCgroup string) *runtimeapi.PodSandboxConfig {
	return &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: pod.Name, Namespace: pod.Namespace, Uid: string(pod.UID)},
		Labels: map[string]string{
			crilabels.PodName:      pod.Name,
			crilabels.PodNamespace: pod.Namespace,
			crilabels.PodUID:       string(pod.UID),
		},
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			CgroupParent: "/" + podCgroup,
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
				NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE},
			},
			Overhead:  s.overheadResources(pod),
			Resources: s.podResources(pod),
		},
	}
}

// podResources are the pod's requests and limits without overhead, in CRI
// terms, for the sandbox config.
func (s *settings) podResources(pod *v1.Pod) *runtimeapi.LinuxContainerResources {
	opts := qos.Options{ExcludeOverhead: true, SkipPodLevelResources: !s.profile.PodLevelResources()}
	reqs, limits := qos.PodRequests(pod, opts), qos.PodLimits(pod, opts)
	return s.calculateLinuxResources(requestOf(reqs), limits[v1.ResourceCPU], limits[v1.ResourceMemory])
}

// containerConfig is the CRI config for one container of the allocated
// pod, with the node's image and command overrides.
func (s *settings) containerConfig(pod *v1.Pod, c *v1.Container, attempt uint32) *runtimeapi.ContainerConfig {
	image, command, args := c.Image, c.Command, c.Args
	if s.cfg.Image != "" {
		image = s.cfg.Image
	}
	if len(s.cfg.Command) > 0 {
		command, args = s.cfg.Command, nil
	}
	return &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: c.Name, Attempt: attempt},
		Image:    &runtimeapi.ImageSpec{Image: image},
		Command:  command,
		Args:     args,
		Labels: map[string]string{
			crilabels.PodName:       pod.Name,
			crilabels.PodNamespace:  pod.Namespace,
			crilabels.PodUID:        string(pod.UID),
			crilabels.ContainerName: c.Name,
		},
		Annotations: map[string]string{"io.kubernetes.container.restartCount": fmt.Sprint(attempt)},
		Linux:       &runtimeapi.LinuxContainerConfig{Resources: s.containerResources(pod, c)},
	}
}

// containerResources is generateLinuxContainerResources: the cpu and
// memory fields of calculateLinuxResources, with the pod-level limits for
// those the container lacks when pod-level resources count and are set
// (getCPULimit, getMemoryLimit), the OOM score, and on cgroup v2
// memory.oom.group so the whole container is killed on OOM, with from 1.37
// the MemoryQoS settings (profile.Profile.ContainerMemoryProtection and
// ResetsContainerMemoryHigh).
func (s *settings) containerResources(pod *v1.Pod, c *v1.Container) *runtimeapi.LinuxContainerResources {
	lcr := new(runtimeapi.LinuxContainerResources)
	s.fillContainerResources(lcr, pod, c)
	return lcr
}

// fillContainerResources is containerResources into a message the caller
// allocated (zero), so that it may share an allocation with the message
// that holds it.
func (s *settings) fillContainerResources(lcr *runtimeapi.LinuxContainerResources, pod *v1.Pod, c *v1.Container) {
	cpuLimit, memoryLimit := c.Resources.Limits[v1.ResourceCPU], c.Resources.Limits[v1.ResourceMemory]
	if s.profile.PodLevelResources() && resourcehelper.IsPodLevelResourcesSet(pod) {
		// getCPULimit and getMemoryLimit (kuberuntime_container_linux.go):
		// a container without a limit of its own gets the pod's, which
		// may be none.
		if cpuLimit.IsZero() {
			cpuLimit = pod.Spec.Resources.Limits[v1.ResourceCPU]
		}
		if memoryLimit.IsZero() {
			memoryLimit = pod.Spec.Resources.Limits[v1.ResourceMemory]
		}
	}
	s.fillLinuxResources(lcr, requestOf(c.Resources.Requests), cpuLimit, memoryLimit)
	lcr.OomScoreAdj = s.oomScoreAdj(pod, c)
	if s.cfg.CgroupVersion == cgconfig.V2 {
		switch {
		case s.profile.ContainerMemoryProtection():
			lcr.Unified = oomGroupMemoryProtection
		case s.profile.ResetsContainerMemoryHigh():
			lcr.Unified = oomGroupMemoryHighMax
		default:
			lcr.Unified = oomGroup
		}
	}
}

// oomGroup is the unified setting the kubelet sends with every container
// on cgroup v2 (its SingleProcessOOMKill off): the container is killed as
// a whole. Actions are never changed once handed out, so every message
// shares this one map.
var oomGroup = map[string]string{"memory.oom.group": "1"}

// oomGroupMemoryProtection is oomGroup with 1.37's MemoryQoS settings under
// the default memoryReservationPolicy None: no protection, written as
// zeros, and no memory.high without a throttling factor.
var oomGroupMemoryProtection = map[string]string{"memory.oom.group": "1", "memory.min": "0", "memory.low": "0"}

// oomGroupMemoryHighMax is oomGroup with the memory.high reset 1.37 sends
// when MemoryQoS is off.
var oomGroupMemoryHighMax = map[string]string{"memory.oom.group": "1", "memory.high": "max"}

// linuxResources is calculateLinuxResources with a zero cpuRequest taken
// as no request: shares from the request (or the limit when there is no
// request), the memory limit when set, and with CFS quota on, the quota
// for the limit (0 for none) and the period. An absent quantity is the
// zero Quantity.
func (s *settings) linuxResources(cpuRequest, cpuLimit, memoryLimit resource.Quantity) *runtimeapi.LinuxContainerResources {
	if cpuRequest.IsZero() {
		return s.calculateLinuxResources(nil, cpuLimit, memoryLimit)
	}
	return s.calculateLinuxResources(&cpuRequest, cpuLimit, memoryLimit)
}

// requestOf is the cpu request of list, nil when the list has none: an
// explicit "0" is a request (generateLinuxContainerResources and
// generatePodSandboxLinuxConfig test the key's presence).
func requestOf(list v1.ResourceList) *resource.Quantity {
	q, ok := list[v1.ResourceCPU]
	if !ok {
		return nil
	}
	return &q
}

// calculateLinuxResources is the kubelet's calculateLinuxResources
// (kuberuntime_container_linux.go): shares from the limit only when there
// is no cpu request at all (nil), otherwise from the request, even an
// explicit zero one (the minimum shares); the memory limit when set; and
// with CFS quota on, the quota for the limit (0 for none) and the period.
// An absent limit is the zero Quantity.
func (s *settings) calculateLinuxResources(cpuRequest *resource.Quantity, cpuLimit, memoryLimit resource.Quantity) *runtimeapi.LinuxContainerResources {
	lcr := new(runtimeapi.LinuxContainerResources)
	s.fillLinuxResources(lcr, cpuRequest, cpuLimit, memoryLimit)
	return lcr
}

// fillLinuxResources is calculateLinuxResources into a zero message the
// caller allocated.
func (s *settings) fillLinuxResources(lcr *runtimeapi.LinuxContainerResources, cpuRequest *resource.Quantity, cpuLimit, memoryLimit resource.Quantity) {
	if cpuRequest == nil {
		lcr.CpuShares = int64(cgconfig.MilliCPUToShares(cpuLimit.MilliValue()))
	} else {
		lcr.CpuShares = int64(cgconfig.MilliCPUToShares(cpuRequest.MilliValue()))
	}
	if m := memoryLimit.Value(); m != 0 {
		lcr.MemoryLimitInBytes = m
	}
	if s.enforceCPULimits {
		period := int64(s.cpuPeriod)
		lcr.CpuQuota = cgconfig.MilliCPUToQuota(cpuLimit.MilliValue(), period)
		lcr.CpuPeriod = period
	}
}

// noOverhead is the overhead of a pod without one. Messages the core
// hands out are never changed, so they all share it.
var noOverhead = &runtimeapi.LinuxContainerResources{}

// overheadResources is convertOverheadToLinuxResources: the overhead
// treated as guaranteed (requests == limits).
func (s *settings) overheadResources(pod *v1.Pod) *runtimeapi.LinuxContainerResources {
	if pod.Spec.Overhead == nil {
		return noOverhead
	}
	// convertOverheadToLinuxResources passes Overhead.Cpu(), never nil:
	// the request is always there, zero or not.
	cpu := pod.Spec.Overhead[v1.ResourceCPU]
	return s.calculateLinuxResources(&cpu, cpu, pod.Spec.Overhead[v1.ResourceMemory])
}

// oomScoreAdj is GetContainerOOMScoreAdjust.
func (s *settings) oomScoreAdj(pod *v1.Pod, c *v1.Container) int64 {
	switch pod.Status.QOSClass {
	case v1.PodQOSGuaranteed:
		return guaranteedOOMScoreAdj
	case v1.PodQOSBestEffort:
		return bestEffortOOMScoreAdj
	}
	capacity := quantityOf(s.cfg.Capacity, v1.ResourceMemory).Value()
	if capacity <= 0 {
		return 1000 + guaranteedOOMScoreAdj
	}
	adj := 1000 - (1000*quantityOf(c.Resources.Requests, v1.ResourceMemory).Value())/capacity
	if adj < 1000+guaranteedOOMScoreAdj {
		return 1000 + guaranteedOOMScoreAdj
	}
	if adj == bestEffortOOMScoreAdj {
		return adj - 1
	}
	return adj
}

// sandboxResourcesRequest is generateUpdatePodSandboxResourcesRequest: the
// overhead, and the pod cgroup values minus the overhead.
func (s *settings) sandboxResourcesRequest(sandboxID string, pod *v1.Pod, rc cgconfig.ResourceConfig) *runtimeapi.UpdatePodSandboxResourcesRequest {
	if cpu, ok := pod.Spec.Overhead[v1.ResourceCPU]; ok {
		if rc.CPUPeriod != nil && rc.CPUQuota != nil {
			q := *rc.CPUQuota - cgconfig.MilliCPUToQuota(cpu.MilliValue(), int64(*rc.CPUPeriod))
			rc.CPUQuota = &q
		}
		if rc.CPUShares != nil {
			s := cgconfig.MilliCPUToShares(cgconfig.SharesToMilliCPU(int64(*rc.CPUShares)) - cpu.MilliValue())
			rc.CPUShares = &s
		}
	}
	if mem, ok := pod.Spec.Overhead[v1.ResourceMemory]; ok && rc.Memory != nil {
		if m, ok := mem.AsInt64(); ok {
			v := *rc.Memory - m
			rc.Memory = &v
		}
	}
	// The request and its resources are one allocation.
	msg := new(struct {
		req runtimeapi.UpdatePodSandboxResourcesRequest
		lcr runtimeapi.LinuxContainerResources
	})
	lcr := &msg.lcr
	if rc.CPUPeriod != nil {
		lcr.CpuPeriod = int64(*rc.CPUPeriod)
	}
	if rc.CPUQuota != nil {
		lcr.CpuQuota = *rc.CPUQuota
	}
	if rc.CPUShares != nil {
		lcr.CpuShares = int64(*rc.CPUShares)
	}
	if rc.Memory != nil {
		lcr.MemoryLimitInBytes = *rc.Memory
	}
	msg.req.PodSandboxId = sandboxID
	msg.req.Overhead = s.overheadResources(pod)
	msg.req.Resources = lcr
	return &msg.req
}

package kubeletcri

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

// Settings are the node settings the messages depend on. The caller
// derives them from its node configuration, so that this package needs
// none of its own.
type Settings struct {
	// CgroupVersion decides whether containers get unified settings
	// (cgroup v2).
	CgroupVersion cgconfig.Version
	// EnforceCPULimits is --cpu-cfs-quota: with it, limits become a CFS
	// quota for CPUPeriod, the CFS period in microseconds.
	EnforceCPULimits bool
	CPUPeriod        uint64
	// PodLevelResources is the PodLevelResources feature: pod-level
	// limits count for containers without their own.
	PodLevelResources bool
	// ContainerMemoryProtection and ResetsContainerMemoryHigh are 1.37's
	// MemoryQoS unified settings, with and without the feature.
	ContainerMemoryProtection bool
	ResetsContainerMemoryHigh bool
	// PodOnlyMemoryCheck is 1.33's memory check: the pod only.
	PodOnlyMemoryCheck bool
	// MemoryCapacity is the node's memory in bytes, which a Burstable
	// container's OOM score is relative to.
	MemoryCapacity int64
	// Image and Command, when set, replace every container's image, and
	// its command and arguments.
	Image   string
	Command []string
}

// Messages builds the messages for one node's Settings. The zero Messages
// builds them for the zero Settings; a nil one, or a nil pod or container,
// builds nothing (nil). Pods are read, never changed; their
// status.qosClass decides the OOM score. Messages it hands out share
// read-only parts (the unified maps, the empty overhead), so they must
// not be changed either.
type Messages struct {
	s Settings
}

// New returns the builder for s.
func New(s Settings) Messages { return Messages{s: s} }

// OOM score adjustments the kubelet gives containers (pkg/kubelet/qos).
const (
	guaranteedOOMScoreAdj = -997
	bestEffortOOMScoreAdj = 1000
)

// SandboxConfig is the RunPodSandbox config for pod: host network, so no
// CNI is needed, and podCgroup (a path below the hierarchy root) as the
// cgroup parent.
func (m *Messages) SandboxConfig(pod *v1.Pod, podCgroup string) *runtimeapi.PodSandboxConfig {
	if m == nil || pod == nil {
		return nil
	}
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
			Overhead:  m.overheadResources(pod),
			Resources: m.podResources(pod),
		},
	}
}

// podResources are the pod's requests and limits without overhead, in CRI
// terms, for the sandbox config.
func (m *Messages) podResources(pod *v1.Pod) *runtimeapi.LinuxContainerResources {
	opts := qos.Options{ExcludeOverhead: true, SkipPodLevelResources: !m.s.PodLevelResources}
	reqs, limits := qos.PodRequests(pod, opts), qos.PodLimits(pod, opts)
	return m.calculateLinuxResources(requestOf(reqs), limits[v1.ResourceCPU], limits[v1.ResourceMemory])
}

// ContainerConfig is the CreateContainer config of the pod's container c
// at a restart attempt, with the settings' image and command overrides.
func (m *Messages) ContainerConfig(pod *v1.Pod, c *v1.Container, attempt uint32) *runtimeapi.ContainerConfig {
	if m == nil || pod == nil || c == nil {
		return nil
	}
	image, command, args := c.Image, c.Command, c.Args
	if m.s.Image != "" {
		image = m.s.Image
	}
	if len(m.s.Command) > 0 {
		command, args = m.s.Command, nil
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
		Linux:       &runtimeapi.LinuxContainerConfig{Resources: m.ContainerResources(pod, c)},
	}
}

// ContainerResources is generateLinuxContainerResources, the message of
// UpdateContainerResources: the cpu and memory fields of
// calculateLinuxResources, with the pod-level limits for those the
// container lacks when pod-level resources count and are set (getCPULimit,
// getMemoryLimit), the OOM score, and on cgroup v2 memory.oom.group so the
// whole container is killed on OOM, with from 1.37 the MemoryQoS settings.
func (m *Messages) ContainerResources(pod *v1.Pod, c *v1.Container) *runtimeapi.LinuxContainerResources {
	if m == nil || pod == nil || c == nil {
		return nil
	}
	lcr := new(runtimeapi.LinuxContainerResources)
	m.FillContainerResources(lcr, pod, c)
	return lcr
}

// FillContainerResources is ContainerResources into a zero message the
// caller allocated, so that it may share an allocation with the message
// that holds it.
func (m *Messages) FillContainerResources(lcr *runtimeapi.LinuxContainerResources, pod *v1.Pod, c *v1.Container) {
	if m == nil || lcr == nil || pod == nil || c == nil {
		return
	}
	cpuLimit, memoryLimit := c.Resources.Limits[v1.ResourceCPU], c.Resources.Limits[v1.ResourceMemory]
	if m.s.PodLevelResources && resourcehelper.IsPodLevelResourcesSet(pod) {
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
	m.fillLinuxResources(lcr, requestOf(c.Resources.Requests), cpuLimit, memoryLimit)
	lcr.OomScoreAdj = m.oomScoreAdj(pod, c)
	if m.s.CgroupVersion == cgconfig.V2 {
		switch {
		case m.s.ContainerMemoryProtection:
			lcr.Unified = oomGroupMemoryProtection
		case m.s.ResetsContainerMemoryHigh:
			lcr.Unified = oomGroupMemoryHighMax
		default:
			lcr.Unified = oomGroup
		}
	}
}

// oomGroup is the unified setting the kubelet sends with every container
// on cgroup v2 (its SingleProcessOOMKill off): the container is killed as
// a whole. Messages are never changed once handed out, so every message
// shares this one map.
var oomGroup = map[string]string{"memory.oom.group": "1"}

// oomGroupMemoryProtection is oomGroup with 1.37's MemoryQoS settings under
// the default memoryReservationPolicy None: no protection, written as
// zeros, and no memory.high without a throttling factor.
var oomGroupMemoryProtection = map[string]string{"memory.oom.group": "1", "memory.min": "0", "memory.low": "0"}

// oomGroupMemoryHighMax is oomGroup with the memory.high reset 1.37 sends
// when MemoryQoS is off.
var oomGroupMemoryHighMax = map[string]string{"memory.oom.group": "1", "memory.high": "max"}

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
func (m *Messages) calculateLinuxResources(cpuRequest *resource.Quantity, cpuLimit, memoryLimit resource.Quantity) *runtimeapi.LinuxContainerResources {
	lcr := new(runtimeapi.LinuxContainerResources)
	m.fillLinuxResources(lcr, cpuRequest, cpuLimit, memoryLimit)
	return lcr
}

// fillLinuxResources is calculateLinuxResources into a zero message the
// caller allocated.
func (m *Messages) fillLinuxResources(lcr *runtimeapi.LinuxContainerResources, cpuRequest *resource.Quantity, cpuLimit, memoryLimit resource.Quantity) {
	if cpuRequest == nil {
		lcr.CpuShares = int64(cgconfig.MilliCPUToShares(cpuLimit.MilliValue()))
	} else {
		lcr.CpuShares = int64(cgconfig.MilliCPUToShares(cpuRequest.MilliValue()))
	}
	if v := memoryLimit.Value(); v != 0 {
		lcr.MemoryLimitInBytes = v
	}
	if m.s.EnforceCPULimits {
		period := int64(m.s.CPUPeriod)
		lcr.CpuQuota = cgconfig.MilliCPUToQuota(cpuLimit.MilliValue(), period)
		lcr.CpuPeriod = period
	}
}

// noOverhead is the overhead of a pod without one, shared by every
// message.
var noOverhead = &runtimeapi.LinuxContainerResources{}

// overheadResources is convertOverheadToLinuxResources: the overhead
// treated as guaranteed (requests == limits).
func (m *Messages) overheadResources(pod *v1.Pod) *runtimeapi.LinuxContainerResources {
	if pod.Spec.Overhead == nil {
		return noOverhead
	}
	// convertOverheadToLinuxResources passes Overhead.Cpu(), never nil:
	// the request is always there, zero or not.
	cpu := pod.Spec.Overhead[v1.ResourceCPU]
	return m.calculateLinuxResources(&cpu, cpu, pod.Spec.Overhead[v1.ResourceMemory])
}

// oomScoreAdj is GetContainerOOMScoreAdjust.
func (m *Messages) oomScoreAdj(pod *v1.Pod, c *v1.Container) int64 {
	switch pod.Status.QOSClass {
	case v1.PodQOSGuaranteed:
		return guaranteedOOMScoreAdj
	case v1.PodQOSBestEffort:
		return bestEffortOOMScoreAdj
	}
	capacity := m.s.MemoryCapacity
	if capacity <= 0 {
		return 1000 + guaranteedOOMScoreAdj
	}
	request := c.Resources.Requests[v1.ResourceMemory]
	adj := 1000 - (1000*request.Value())/capacity
	if adj < 1000+guaranteedOOMScoreAdj {
		return 1000 + guaranteedOOMScoreAdj
	}
	if adj == bestEffortOOMScoreAdj {
		return adj - 1
	}
	return adj
}

// SandboxResources is generateUpdatePodSandboxResourcesRequest: for a pod
// cgroup that holds rc, the overhead, and the pod cgroup values minus the
// overhead.
func (m *Messages) SandboxResources(sandboxID string, pod *v1.Pod, rc cgconfig.ResourceConfig) *runtimeapi.UpdatePodSandboxResourcesRequest {
	if m == nil || pod == nil {
		return nil
	}
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
		if v, ok := mem.AsInt64(); ok {
			left := *rc.Memory - v
			rc.Memory = &left
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
	msg.req.Overhead = m.overheadResources(pod)
	msg.req.Resources = lcr
	return &msg.req
}

// PodConfigOptions are the settings that shape a pod cgroup
// (cgconfig.PodConfig).
func (m *Messages) PodConfigOptions() cgconfig.PodConfigOptions {
	if m == nil {
		return cgconfig.PodConfigOptions{}
	}
	return cgconfig.PodConfigOptions{
		EnforceCPULimits:  m.s.EnforceCPULimits,
		CPUPeriod:         m.s.CPUPeriod,
		PodLevelResources: m.s.PodLevelResources,
	}
}

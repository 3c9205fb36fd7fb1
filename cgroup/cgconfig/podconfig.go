package cgconfig

import (
	v1 "k8s.io/api/core/v1"

	"github.com/resizelet/resizelet/qos"
)

// ResourceConfig is a cgroup configuration in the kubelet's units (its
// cm.ResourceConfig): cpu shares, CFS quota and period, memory limit in
// bytes. A nil field is not set: on a resize it means "keep the current
// value".
type ResourceConfig struct {
	CPUShares *uint64
	CPUQuota  *int64 // Unlimited (-1) for no limit
	CPUPeriod *uint64
	Memory    *int64 // bytes
}

// PodConfigOptions are the kubelet settings that shape a pod cgroup.
type PodConfigOptions struct {
	// EnforceCPULimits is the kubelet's --cpu-cfs-quota; false leaves the
	// quota unlimited.
	EnforceCPULimits bool
	// CPUPeriod is the CFS period in microseconds; 0 means QuotaPeriod.
	CPUPeriod uint64
	// PodLevelResources honours spec.resources (the PodLevelResources gate).
	PodLevelResources bool
}

// PodConfig is the kubelet's ResourceConfigForPod: the pod cgroup values for
// the pod's (allocated) spec. Guaranteed pods get shares, quota, period and
// memory limit. Burstable pods always get shares, and get the quota only if
// every container (init containers too) declares a cpu limit or the pod sets
// a pod-level one, and the memory limit likewise. BestEffort pods get
// MinShares only. Requests and limits include spec.overhead.
func PodConfig(pod *v1.Pod, opts PodConfigOptions) ResourceConfig {
	if pod == nil {
		return ResourceConfig{} // no pod, nothing to set
	}
	period := opts.CPUPeriod
	if period == 0 {
		period = QuotaPeriod
	}
	cpuRequest, cpuLimit, memoryLimit, ok := podAmounts(pod, opts.PodLevelResources)
	if !ok {
		cpuRequest, cpuLimit, memoryLimit = podAmountsFromLists(pod, opts.PodLevelResources)
	}
	cpuLimitsDeclared := qos.AllContainersHaveLimit(pod, v1.ResourceCPU)
	memoryLimitsDeclared := qos.AllContainersHaveLimit(pod, v1.ResourceMemory)
	if opts.PodLevelResources && pod.Spec.Resources != nil {
		if q, ok := pod.Spec.Resources.Limits[v1.ResourceCPU]; ok && !q.IsZero() {
			cpuLimitsDeclared = true
		}
		if q, ok := pod.Spec.Resources.Limits[v1.ResourceMemory]; ok && !q.IsZero() {
			memoryLimitsDeclared = true
		}
	}
	// One allocation holds the values the config points at.
	v := &struct {
		shares, period uint64
		quota, memory  int64
	}{shares: MilliCPUToShares(cpuRequest), period: period, quota: MilliCPUToQuota(cpuLimit, int64(period)), memory: memoryLimit}
	if !opts.EnforceCPULimits {
		v.quota = Unlimited
	}
	var cfg ResourceConfig
	switch qos.GetPodQOS(pod) {
	case v1.PodQOSGuaranteed:
		cfg.CPUShares, cfg.CPUQuota, cfg.CPUPeriod, cfg.Memory = &v.shares, &v.quota, &v.period, &v.memory
	case v1.PodQOSBurstable:
		cfg.CPUShares = &v.shares
		if cpuLimitsDeclared {
			cfg.CPUQuota, cfg.CPUPeriod = &v.quota, &v.period
		}
		if memoryLimitsDeclared {
			cfg.Memory = &v.memory
		}
	default:
		v.shares = MinShares
		cfg.CPUShares = &v.shares
	}
	return cfg
}

// podAmountsFromLists is the pod's cpu request, cpu limit (millicores) and
// memory limit (bytes) as the kubelet takes them: from
// k8s.io/component-helpers' PodRequests and PodLimits, overhead included.
func podAmountsFromLists(pod *v1.Pod, podLevel bool) (cpuRequest, cpuLimit, memoryLimit int64) {
	rOpts := qos.Options{SkipPodLevelResources: !podLevel}
	reqs := qos.PodRequests(pod, rOpts)
	limits := qos.PodLimits(pod, rOpts)
	if q, ok := reqs[v1.ResourceCPU]; ok {
		cpuRequest = q.MilliValue()
	}
	if q, ok := limits[v1.ResourceCPU]; ok {
		cpuLimit = q.MilliValue()
	}
	if q, ok := limits[v1.ResourceMemory]; ok {
		memoryLimit = q.Value()
	}
	return cpuRequest, cpuLimit, memoryLimit
}

// Values turns a ResourceConfig into file values for a cgroup version:
// shares become cpu.weight on v2 through weight; a quota of 0 means no
// limit and is written as Unlimited; a memory limit of 0 is left unset.
func (c ResourceConfig) Values(version Version, weight WeightFunc) Values {
	var v Values
	// One allocation holds the values v points at.
	hold := &struct {
		shares, weight, period uint64
		quota, memory          int64
	}{}
	if c.CPUShares != nil {
		s := *c.CPUShares
		if version == V2 {
			hold.weight = weight(s)
			v.CPUWeight = &hold.weight
		} else {
			hold.shares = s
			v.CPUShares = &hold.shares
		}
	}
	if c.CPUQuota != nil {
		hold.quota = *c.CPUQuota
		if hold.quota <= 0 {
			hold.quota = Unlimited
		}
		v.CPUQuota = &hold.quota
	}
	if c.CPUPeriod != nil {
		hold.period = *c.CPUPeriod
		v.CPUPeriod = &hold.period
	}
	if c.Memory != nil && *c.Memory != 0 {
		hold.memory = *c.Memory
		v.MemoryLimit = &hold.memory
	}
	return v
}

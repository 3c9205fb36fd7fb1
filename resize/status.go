package resize

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// runtimeResources are the limits and request a runtime reports for a
// container, converted back to Kubernetes quantities the way the kubelet's
// toKubeContainerResources does; nil means "not reported".
type runtimeResources struct {
	cpuLimit, cpuRequest, memoryLimit *resource.Quantity
}

func fromRuntime(r *runtimeapi.ContainerResources) runtimeResources {
	var out runtimeResources
	linux := r.GetLinux()
	if linux == nil {
		return out
	}
	if linux.CpuPeriod > 0 {
		if m := cgconfig.QuotaToMilliCPU(linux.CpuQuota, linux.CpuPeriod); m > 0 {
			out.cpuLimit = resource.NewMilliQuantity(m, resource.DecimalSI)
		}
	}
	if linux.CpuShares > 0 {
		if m := cgconfig.SharesToMilliCPU(linux.CpuShares); m > 0 {
			out.cpuRequest = resource.NewMilliQuantity(m, resource.DecimalSI)
		}
	}
	if linux.MemoryLimitInBytes > 0 {
		out.memoryLimit = resource.NewQuantity(linux.MemoryLimitInBytes, resource.BinarySI)
	}
	return out
}

// statusResources is convertContainerStatusResources (kubelet_pods.go):
// what status.containerStatuses[].resources shows for a container. A
// container that is not running shows its allocation. A running one starts
// from the allocation and takes the runtime's cpu limit, memory limit and
// cpu request; tiny cpu values at or below what the cgroup can express
// (10m for a limit, 2m for a request) keep the allocated value when both
// sides are that small; a value the runtime does not report keeps the
// previous status value of the same running container. The memory request
// is always the allocated one.
func statusResources(alloc v1.ResourceRequirements, running bool, reported *runtimeapi.ContainerResources, prev *v1.ContainerStatus, containerID string) *v1.ResourceRequirements {
	res := alloc.DeepCopy()
	if !running {
		return res
	}
	rt := fromRuntime(reported)
	var prevRes *v1.ResourceRequirements
	if prev != nil && prev.State.Running != nil && prev.ContainerID == containerID && prev.Resources != nil {
		prevRes = prev.Resources
	}
	keepPrevious := func(name v1.ResourceName, prevList, list v1.ResourceList) {
		if prevRes == nil || prevList == nil {
			return
		}
		if q, ok := prevList[name]; ok {
			list[name] = q.DeepCopy()
		}
	}
	if res.Limits != nil {
		if rt.cpuLimit != nil {
			if rt.cpuLimit.MilliValue() > cgconfig.MinMilliCPULimit || res.Limits.Cpu().MilliValue() > cgconfig.MinMilliCPULimit {
				res.Limits[v1.ResourceCPU] = rt.cpuLimit.DeepCopy()
			}
		} else if prevRes != nil {
			keepPrevious(v1.ResourceCPU, prevRes.Limits, res.Limits)
		}
		if rt.memoryLimit != nil {
			res.Limits[v1.ResourceMemory] = rt.memoryLimit.DeepCopy()
		} else if prevRes != nil {
			keepPrevious(v1.ResourceMemory, prevRes.Limits, res.Limits)
		}
	}
	if res.Requests != nil {
		if rt.cpuRequest != nil {
			if rt.cpuRequest.MilliValue() > cgconfig.MinShares || res.Requests.Cpu().MilliValue() > cgconfig.MinShares {
				res.Requests[v1.ResourceCPU] = rt.cpuRequest.DeepCopy()
			}
		} else if prevRes != nil {
			keepPrevious(v1.ResourceCPU, prevRes.Requests, res.Requests)
		}
	}
	return res
}

package core

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"time"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/qos"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// buildStatus generates the pod's API status from the allocation, the
// runtime's view and the resize conditions (generateAPIPodStatus, as far
// as resize needs it). states and statuses are nil when the sync did not
// get as far as asking the runtime.
func (c *Core) buildStatus(ps *podState, alloc *v1.Pod, states map[string]ContainerState, statuses map[string]*runtimeapi.ContainerStatus) *v1.PodStatus {
	pod := ps.pod
	status := pod.Status.DeepCopy()
	status.ObservedGeneration = pod.Generation
	status.Conditions = ps.conds.list()
	if status.StartTime == nil {
		t := metav1.NewTime(c.now)
		status.StartTime = &t
	}
	prev := map[string]*v1.ContainerStatus{}
	for i := range pod.Status.InitContainerStatuses {
		prev[pod.Status.InitContainerStatuses[i].Name] = &pod.Status.InitContainerStatuses[i]
	}
	for i := range pod.Status.ContainerStatuses {
		prev[pod.Status.ContainerStatuses[i].Name] = &pod.Status.ContainerStatuses[i]
	}
	allocOf := func(ctr *v1.Container) v1.ResourceRequirements {
		if r, ok := ps.allocated.ContainerResources[ctr.Name]; ok && ps.hasAllocated {
			return r
		}
		return ctr.Resources
	}
	build := func(ctr *v1.Container) v1.ContainerStatus {
		cs := v1.ContainerStatus{Name: ctr.Name, Image: ctr.Image, ImageID: ctr.Image}
		st, ok := states[ctr.Name]
		rt := statuses[ctr.Name]
		if ok {
			cs.ContainerID = "containerd://" + st.ID
			cs.RestartCount = int32(st.Attempt)
		}
		switch {
		case ok && st.Running:
			cs.State.Running = &v1.ContainerStateRunning{StartedAt: metav1.NewTime(timeFromNanos(rt.GetStartedAt()))}
			cs.Ready = true
		case ok && st.Exited:
			cs.State.Terminated = &v1.ContainerStateTerminated{ExitCode: st.ExitCode, Reason: rt.GetReason(), ContainerID: cs.ContainerID}
		default:
			cs.State.Waiting = &v1.ContainerStateWaiting{Reason: "ContainerCreating"}
		}
		started := cs.State.Running != nil
		cs.Started = &started
		cs.Resources = statusResources(allocOf(ctr), ok && st.Running, rt.GetResources(), prev[ctr.Name], cs.ContainerID)
		return cs
	}
	status.InitContainerStatuses = nil
	status.ContainerStatuses = nil
	running := 0
	for i := range alloc.Spec.InitContainers {
		ctr := &alloc.Spec.InitContainers[i]
		if qos.IsSidecar(ctr) {
			status.InitContainerStatuses = append(status.InitContainerStatuses, build(ctr))
			continue
		}
		// Non-sidecar init containers are not run by resizelet: they are
		// reported as completed (a documented limitation).
		status.InitContainerStatuses = append(status.InitContainerStatuses, v1.ContainerStatus{
			Name: ctr.Name, Image: ctr.Image, ImageID: ctr.Image, Started: new(bool), Ready: true,
			State:     v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}},
			Resources: ctr.Resources.DeepCopy(),
		})
	}
	for i := range alloc.Spec.Containers {
		cs := build(&alloc.Spec.Containers[i])
		if cs.State.Running != nil {
			running++
		}
		status.ContainerStatuses = append(status.ContainerStatuses, cs)
	}
	status.Phase = podPhase(alloc, status.ContainerStatuses, running)
	return status
}

func timeFromNanos(ns int64) time.Time {
	return time.Unix(0, ns).UTC()
}

// podPhase is the pod's phase from its regular containers: Running while
// any runs; Succeeded or Failed once all have exited and the restart policy
// will not start them again; Pending otherwise.
func podPhase(pod *v1.Pod, statuses []v1.ContainerStatus, running int) v1.PodPhase {
	if running > 0 {
		return v1.PodRunning
	}
	if len(statuses) == 0 {
		return v1.PodPending
	}
	failed := false
	for _, cs := range statuses {
		t := cs.State.Terminated
		if t == nil {
			return v1.PodPending
		}
		if shouldRestart(pod.Spec.RestartPolicy, ContainerState{Exited: true, ExitCode: t.ExitCode}) {
			return v1.PodRunning // about to be restarted
		}
		if t.ExitCode != 0 {
			failed = true
		}
	}
	if failed {
		return v1.PodFailed
	}
	return v1.PodSucceeded
}

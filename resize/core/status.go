package core

import (
	"maps"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/allocation/reslist"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/qos"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// runtimeResources are the limits and request a runtime reports for a
// container, converted back to Kubernetes quantities the way the kubelet's
// toKubeContainerResources does; a value not reported has its has flag
// unset.
type runtimeResources struct {
	cpuLimit, cpuRequest, memoryLimit          resource.Quantity
	hasCPULimit, hasCPURequest, hasMemoryLimit bool
}

func fromRuntime(r *runtimeapi.ContainerResources) runtimeResources {
	var out runtimeResources
	linux := r.GetLinux()
	if m := cgconfig.QuotaToMilliCPU(linux.GetCpuQuota(), linux.GetCpuPeriod()); m > 0 {
		out.cpuLimit, out.hasCPULimit = *resource.NewMilliQuantity(m, resource.DecimalSI), true
	}
	if m := cgconfig.SharesToMilliCPU(linux.GetCpuShares()); m > 0 {
		out.cpuRequest, out.hasCPURequest = *resource.NewMilliQuantity(m, resource.DecimalSI), true
	}
	if memory := linux.GetMemoryLimitInBytes(); memory > 0 {
		out.memoryLimit, out.hasMemoryLimit = *resource.NewQuantity(memory, resource.BinarySI), true
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
//
// Statuses are never changed in place, so the result shares what it can:
// the allocation's lists where the runtime's values are the same
// quantities, and the previous status's Resources when it holds the very
// same lists.
func statusResources(alloc v1.ResourceRequirements, running bool, reported *runtimeapi.ContainerResources, prev *v1.ContainerStatus, containerID string) *v1.ResourceRequirements {
	limits := sharedList{list: alloc.Limits}
	requests := sharedList{list: alloc.Requests}
	if running {
		rt := fromRuntime(reported)
		// The previous values, of the same running container only.
		var prevLimits, prevRequests v1.ResourceList
		if prev != nil && prev.State.Running != nil && prev.ContainerID == containerID && prev.Resources != nil {
			prevLimits, prevRequests = prev.Resources.Limits, prev.Resources.Requests
		}
		keepPrevious := func(list *sharedList, prevList v1.ResourceList, name v1.ResourceName) {
			if q, ok := prevList[name]; ok {
				list.set(name, q)
			}
		}
		if alloc.Limits != nil {
			if !rt.hasCPULimit {
				keepPrevious(&limits, prevLimits, v1.ResourceCPU)
			} else if rt.cpuLimit.MilliValue() > cgconfig.MinMilliCPULimit || quantityOf(alloc.Limits, v1.ResourceCPU).MilliValue() > cgconfig.MinMilliCPULimit {
				limits.set(v1.ResourceCPU, rt.cpuLimit)
			}
			if rt.hasMemoryLimit {
				limits.set(v1.ResourceMemory, rt.memoryLimit)
			} else {
				keepPrevious(&limits, prevLimits, v1.ResourceMemory)
			}
		}
		if alloc.Requests != nil {
			if !rt.hasCPURequest {
				keepPrevious(&requests, prevRequests, v1.ResourceCPU)
			} else if rt.cpuRequest.MilliValue() > cgconfig.MinShares || quantityOf(alloc.Requests, v1.ResourceCPU).MilliValue() > cgconfig.MinShares {
				requests.set(v1.ResourceCPU, rt.cpuRequest)
			}
		}
	}
	if prev != nil && prev.Resources != nil && reslist.Same(prev.Resources.Limits, limits.list) &&
		reslist.Same(prev.Resources.Requests, requests.list) && sameClaims(prev.Resources.Claims, alloc.Claims) {
		return prev.Resources
	}
	return &v1.ResourceRequirements{Limits: limits.list, Requests: requests.list, Claims: alloc.Claims}
}

// sharedList is a resource list that is shared until it must change: set
// copies it the first time it changes a value.
type sharedList struct {
	list  v1.ResourceList
	owned bool
}

// set puts q in the list under name, unless the list holds the same
// quantity there already (the same amount in the same format: it prints
// the same).
func (l *sharedList) set(name v1.ResourceName, q resource.Quantity) {
	if cur, ok := l.list[name]; ok && cur.Format == q.Format && cur.Cmp(q) == 0 {
		return
	}
	if !l.owned {
		l.list = maps.Clone(l.list)
		if l.list == nil {
			l.list = v1.ResourceList{}
		}
		l.owned = true
	}
	l.list[name] = q
}

// sameClaims reports whether a and b are the same slice.
func sameClaims(a, b []v1.ResourceClaim) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// Statuses share these: nothing changes a status in place.
var (
	startedTrue, startedFalse = true, false
	containerCreating         = v1.ContainerStateWaiting{Reason: "ContainerCreating"}
	initCompleted             = v1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}
)

// buildStatus generates the pod's API status from the allocation, the
// runtime's view and the resize conditions (generateAPIPodStatus, as far
// as resize needs it). states and statuses are nil when the sync did not
// get as far as asking the runtime.
//
// The new status shares with the last one whatever did not change
// (statuses are never changed in place): unchanged container states,
// IDs and resources cost nothing.
func (c *Core) buildStatus(ps *podState, alloc *v1.Pod, states map[string]ContainerState, statuses map[string]*runtimeapi.ContainerStatus) *v1.PodStatus {
	pod := ps.pod()
	status := new(pod.Status)
	status.ObservedGeneration = pod.Generation
	status.Conditions = ps.conds.listLike(pod.Status.Conditions)
	if status.StartTime == nil {
		status.StartTime = new(metav1.NewTime(c.now))
	}
	view := ps.view()
	build := func(ctr *v1.Container) v1.ContainerStatus {
		prev := previousStatus(pod, ctr.Name)
		cs := v1.ContainerStatus{Name: ctr.Name, Image: ctr.Image, ImageID: ctr.Image, Started: &startedFalse}
		st, ok := states[ctr.Name]
		rt := statuses[ctr.Name]
		if ok {
			cs.ContainerID = containerIDOf(prev, st.ID)
			cs.RestartCount = int32(st.Attempt)
		}
		switch {
		case ok && st.Running:
			running := v1.ContainerStateRunning{StartedAt: metav1.NewTime(time.Unix(0, rt.GetStartedAt()).UTC())}
			if prev != nil && prev.State.Running != nil && *prev.State.Running == running {
				cs.State.Running = prev.State.Running
			} else {
				// A copy escapes, so that running, compared above, need not.
				cs.State.Running = new(running)
			}
			cs.Ready, cs.Started = true, &startedTrue
		case ok && st.Exited:
			terminated := v1.ContainerStateTerminated{ExitCode: st.ExitCode, Reason: rt.GetReason(), ContainerID: cs.ContainerID}
			if prev != nil && prev.State.Terminated != nil && *prev.State.Terminated == terminated {
				cs.State.Terminated = prev.State.Terminated
			} else {
				cs.State.Terminated = new(terminated)
			}
		default:
			cs.State.Waiting = &containerCreating
		}
		cs.Resources = statusResources(view.Resources(ctr), ok && st.Running, rt.GetResources(), prev, cs.ContainerID)
		return cs
	}
	status.InitContainerStatuses = slices.Grow([]v1.ContainerStatus(nil), len(alloc.Spec.InitContainers))
	status.ContainerStatuses = slices.Grow([]v1.ContainerStatus(nil), len(alloc.Spec.Containers))
	for i := range alloc.Spec.InitContainers {
		ctr := &alloc.Spec.InitContainers[i]
		if qos.IsSidecar(ctr) {
			status.InitContainerStatuses = append(status.InitContainerStatuses, build(ctr))
			continue
		}
		// Non-sidecar init containers are not run by resizelet: they are
		// reported as completed (a documented limitation), with their spec's
		// resources.
		status.InitContainerStatuses = append(status.InitContainerStatuses, v1.ContainerStatus{
			Name: ctr.Name, Image: ctr.Image, ImageID: ctr.Image, Started: &startedFalse, Ready: true,
			State:     v1.ContainerState{Terminated: &initCompleted},
			Resources: statusResources(ctr.Resources, false, nil, previousStatus(pod, ctr.Name), ""),
		})
	}
	running := 0
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

// previousStatus is the container's status in the pod's last status, or
// nil.
func previousStatus(pod *v1.Pod, name string) *v1.ContainerStatus {
	for _, list := range [2][]v1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// containerIDOf is the status's container ID for the runtime's id, the
// previous status's string when it is the same.
func containerIDOf(prev *v1.ContainerStatus, id string) string {
	if prev != nil && strings.HasPrefix(prev.ContainerID, containerIDPrefix) && prev.ContainerID[len(containerIDPrefix):] == id {
		return prev.ContainerID
	}
	return containerIDPrefix + id
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

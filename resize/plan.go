package resize

import (
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/resizelet/resizelet/qos"
)

// containerValues are the four numbers the kubelet compares to decide a
// container resize: limits and requests as raw integers (memory in bytes,
// cpu in millicores), as computePodResizeAction reads them.
type containerValues struct {
	memoryLimit, memoryRequest int64
	cpuLimit, cpuRequest       int64
}

func valuesOf(r v1.ResourceRequirements) containerValues {
	return containerValues{
		memoryLimit:   r.Limits.Memory().Value(),
		memoryRequest: r.Requests.Memory().Value(),
		cpuLimit:      r.Limits.Cpu().MilliValue(),
		cpuRequest:    r.Requests.Cpu().MilliValue(),
	}
}

// ContainerUpdate is one queued UpdateContainerResources for one resource.
// Current is shared by the memory and cpu entries of the same container, so
// that the second call sends what the first one made actual.
type ContainerUpdate struct {
	Name    string
	ID      string
	desired containerValues
	current *containerValues
}

// ContainerKill is a container the sync stops, with the event message.
type ContainerKill struct {
	Name, ID, Message string
}

// ContainerState is what a sync knows of one container from the runtime.
type ContainerState struct {
	Name     string
	ID       string
	Running  bool
	Exited   bool
	ExitCode int32
	Attempt  uint32
}

// PodActions is the result of planning a pod sync: a pure decision the
// driver carries out in the kubelet's order (kill, resize, start).
type PodActions struct {
	Kill []ContainerKill
	// Start lists container names to (re)start, sidecars first.
	Start []string
	// UpdateMemory and UpdateCPU are the in-place updates per resource,
	// decreases first.
	UpdateMemory []ContainerUpdate
	UpdateCPU    []ContainerUpdate
	// UpdatePodResources is set when a container restarts for a resize, so
	// the pod cgroup is brought to the allocation too.
	UpdatePodResources bool
}

// Resizing reports whether the actions include a resize (step 7 of SyncPod).
func (a *PodActions) Resizing() bool {
	return len(a.UpdateMemory) > 0 || len(a.UpdateCPU) > 0 || a.UpdatePodResources
}

// actuatedLookup returns the actuated resources of a container and whether
// a record exists.
type actuatedLookup func(name string) (v1.ResourceRequirements, bool)

// planPod is computePodActions for a running sandbox: containers that are
// missing or exited are started per the restart policy; running resizable
// containers are compared, allocated against actuated, field by field
// (computePodResizeAction); a changed field whose resource has policy
// RestartContainer restarts the container, otherwise the change is queued
// as an update, decreases prepended and increases appended.
func planPod(allocated *v1.Pod, states map[string]ContainerState, actuated actuatedLookup, resizeAllowed bool) PodActions {
	var a PodActions
	consider := func(c *v1.Container, resizable bool) {
		st, ok := states[c.Name]
		if !ok || st.ID == "" {
			a.Start = append(a.Start, c.Name)
			return
		}
		if !st.Running {
			if shouldRestart(allocated.Spec.RestartPolicy, st) {
				a.Start = append(a.Start, c.Name)
			}
			return
		}
		if !resizeAllowed || !resizable {
			return
		}
		planContainerResize(&a, c, st, actuated)
	}
	for i := range allocated.Spec.InitContainers {
		c := &allocated.Spec.InitContainers[i]
		if qos.IsSidecar(c) {
			consider(c, true)
		}
	}
	for i := range allocated.Spec.Containers {
		consider(&allocated.Spec.Containers[i], true)
	}
	return a
}

// shouldRestart applies the pod's restartPolicy to an exited container.
func shouldRestart(policy v1.RestartPolicy, st ContainerState) bool {
	switch policy {
	case v1.RestartPolicyNever:
		return false
	case v1.RestartPolicyOnFailure:
		return st.ExitCode != 0
	}
	return true
}

func planContainerResize(a *PodActions, c *v1.Container, st ContainerState, actuated actuatedLookup) {
	// A missing record is treated as zeros, as the kubelet does: one extra
	// idempotent update, or a restart under RestartContainer.
	cur, _ := actuated(c.Name)
	desired := valuesOf(c.Resources)
	current := valuesOf(cur)
	if desired == current {
		return
	}
	policyOf := func(name v1.ResourceName) v1.ResourceResizeRestartPolicy {
		for _, p := range c.ResizePolicy {
			if p.ResourceName == name {
				return p.RestartPolicy
			}
		}
		return v1.NotRequired
	}
	restart := false
	for _, f := range []struct {
		name      v1.ResourceName
		want, got int64
	}{
		{v1.ResourceMemory, desired.memoryLimit, current.memoryLimit},
		{v1.ResourceMemory, desired.memoryRequest, current.memoryRequest},
		{v1.ResourceCPU, desired.cpuLimit, current.cpuLimit},
		{v1.ResourceCPU, desired.cpuRequest, current.cpuRequest},
	} {
		if f.want != f.got && policyOf(f.name) == v1.RestartContainer {
			restart = true
		}
	}
	if restart {
		a.Kill = append(a.Kill, ContainerKill{Name: c.Name, ID: st.ID, Message: fmt.Sprintf("Container %s resize requires restart", c.Name)})
		a.Start = append(a.Start, c.Name)
		a.UpdatePodResources = true
		return
	}
	shared := current
	update := ContainerUpdate{Name: c.Name, ID: st.ID, desired: desired, current: &shared}
	queue := func(list *[]ContainerUpdate, want, got int64) {
		switch {
		case want > got:
			*list = append(*list, update)
		case want < got:
			*list = append([]ContainerUpdate{update}, *list...)
		}
	}
	if desired.memoryLimit != current.memoryLimit {
		queue(&a.UpdateMemory, desired.memoryLimit, current.memoryLimit)
	} else if desired.memoryRequest != current.memoryRequest {
		queue(&a.UpdateMemory, desired.memoryRequest, current.memoryRequest)
	}
	if desired.cpuLimit != current.cpuLimit {
		queue(&a.UpdateCPU, desired.cpuLimit, current.cpuLimit)
	} else if desired.cpuRequest != current.cpuRequest {
		queue(&a.UpdateCPU, desired.cpuRequest, current.cpuRequest)
	}
}

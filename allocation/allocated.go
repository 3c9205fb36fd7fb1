package allocation

import (
	v1 "k8s.io/api/core/v1"
)

// Allocated is a pod as the kubelet's UpdatePodFromAllocation makes it,
// without copying it: the pod's spec and status with the resources Record
// holds in place of the desired ones (each container Record names, and
// the pod-level resources when both Record and the pod set them). A nil
// Record is the pod as it is. The decisions read pods through it so that
// a decision about an allocated pod copies nothing.
type Allocated struct {
	Pod    *v1.Pod
	Record *PodResources
}

// As returns the view of a pod that already carries its allocation.
func As(pod *v1.Pod) Allocated { return Allocated{Pod: pod} }

// Resources returns a container's resources in the allocated pod. The
// container is one of a.Pod's.
func (a Allocated) Resources(c *v1.Container) v1.ResourceRequirements {
	if c == nil {
		return v1.ResourceRequirements{}
	}
	if a.Record != nil {
		if r, ok := a.Record.ContainerResources[c.Name]; ok {
			return r
		}
	}
	return c.Resources
}

// PodLevel returns the allocated pod's pod-level resources, nil when it
// has none.
func (a Allocated) PodLevel() *v1.ResourceRequirements {
	if a.Pod == nil {
		return nil
	}
	if a.Record != nil && a.Record.PodLevelResources != nil && a.Pod.Spec.Resources != nil {
		return a.Record.PodLevelResources
	}
	return a.Pod.Spec.Resources
}

// Changed reports whether the allocation differs from the pod's desired
// resources where UpdatePodFromAllocation overlays it: whether the
// materialized allocated pod would differ from the pod.
func (a Allocated) Changed() bool {
	if a.Record == nil {
		return false
	}
	for _, list := range [2][]v1.Container{a.Pod.Spec.Containers, a.Pod.Spec.InitContainers} {
		for i := range list {
			if r, ok := a.Record.ContainerResources[list[i].Name]; ok && !SameResources(&list[i].Resources, &r) {
				return true
			}
		}
	}
	if p := a.Record.PodLevelResources; p != nil && a.Pod.Spec.Resources != nil && !SameResources(a.Pod.Spec.Resources, p) {
		return true
	}
	return false
}

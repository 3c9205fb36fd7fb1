package allocation

import (
	v1 "k8s.io/api/core/v1"
)

// PodResources is what one checkpoint holds for a pod: the resources of each
// resizable container by name, and the pod-level resources if the pod sets
// them.
//
// The field names are the JSON names: the kubelet's PodResourceInfo has no
// json tags. PodLevelResources has no omitempty either, so a pod without
// pod-level resources is written as "PodLevelResources":null, as a v1.35
// kubelet writes it; both forms are read.
type PodResources struct {
	ContainerResources map[string]v1.ResourceRequirements
	PodLevelResources  *v1.ResourceRequirements
}

// DeepCopy returns a copy of r that shares no memory with it.
func (r PodResources) DeepCopy() PodResources {
	var out PodResources
	if r.ContainerResources != nil {
		out.ContainerResources = make(map[string]v1.ResourceRequirements, len(r.ContainerResources))
		for name, rr := range r.ContainerResources {
			out.ContainerResources[name] = *rr.DeepCopy()
		}
	}
	if r.PodLevelResources != nil {
		out.PodLevelResources = r.PodLevelResources.DeepCopy()
	}
	return out
}

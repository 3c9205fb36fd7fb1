package qos

import (
	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// IsSidecar reports whether an init container is a sidecar (a restartable
// init container, restartPolicy Always).
func IsSidecar(c *v1.Container) bool {
	return c != nil && c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
}

// Options changes what PodRequests and PodLimits count.
type Options struct {
	// ExcludeOverhead leaves spec.overhead out.
	ExcludeOverhead bool
	// SkipPodLevelResources ignores spec.resources even when it is set
	// (the PodLevelResources gate off).
	SkipPodLevelResources bool
}

// PodRequests returns the pod's effective requests as the kubelet computes
// them for its spec: k8s.io/component-helpers/resource.PodRequests, the one
// copy of the KEP-753 rules (regular containers and sidecars add up; an
// init container needs its own request plus the sidecars started before
// it; the pod needs the larger of the two), with spec.resources replacing
// the aggregate for the resources it sets (cpu, memory, hugepages) and
// spec.overhead added.
func PodRequests(pod *v1.Pod, opts Options) v1.ResourceList {
	if pod == nil {
		return nil
	}
	return resourcehelper.PodRequests(pod, helperOptions(opts))
}

// PodLimits returns the pod's effective limits by the same rules
// (resourcehelper.PodLimits): overhead is added only to limits that are set
// and not zero. A resource missing from the result has no limit for at
// least the aggregate: callers that need "every container declares a
// limit" check that themselves (see AllContainersHaveLimit).
func PodLimits(pod *v1.Pod, opts Options) v1.ResourceList {
	if pod == nil {
		return nil
	}
	return resourcehelper.PodLimits(pod, helperOptions(opts))
}

func helperOptions(opts Options) resourcehelper.PodResourcesOptions {
	return resourcehelper.PodResourcesOptions{
		ExcludeOverhead:       opts.ExcludeOverhead,
		SkipPodLevelResources: opts.SkipPodLevelResources,
	}
}

// AllContainersHaveLimit reports whether every regular and init container
// declares a limit for the resource: the kubelet sets a pod cgroup limit for
// a Burstable pod only then (or when the pod sets a pod-level one).
func AllContainersHaveLimit(pod *v1.Pod, name v1.ResourceName) bool {
	if pod == nil {
		return false
	}
	for i := range pod.Spec.Containers {
		if q, ok := pod.Spec.Containers[i].Resources.Limits[name]; !ok || q.IsZero() {
			return false
		}
	}
	for i := range pod.Spec.InitContainers {
		if q, ok := pod.Spec.InitContainers[i].Resources.Limits[name]; !ok || q.IsZero() {
			return false
		}
	}
	return true
}

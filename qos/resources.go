package qos

import (
	v1 "k8s.io/api/core/v1"
)

// IsSidecar reports whether an init container is a sidecar (a restartable
// init container, restartPolicy Always).
func IsSidecar(c *v1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
}

// Options changes what PodRequests and PodLimits count.
type Options struct {
	// ExcludeOverhead leaves spec.overhead out.
	ExcludeOverhead bool
	// SkipPodLevelResources ignores spec.resources even when it is set
	// (the PodLevelResources gate off).
	SkipPodLevelResources bool
}

// podLevelResource reports whether spec.resources may set this resource.
func podLevelResource(name v1.ResourceName) bool {
	return name == v1.ResourceCPU || name == v1.ResourceMemory
}

// PodRequests returns the pod's effective requests, as
// k8s.io/component-helpers/resource.PodRequests computes them: the sum over
// regular containers and sidecars, raised to what any init container needs
// while it runs (its own request plus the sidecars started before it),
// replaced by spec.resources.requests for cpu and memory where the pod sets
// them, plus spec.overhead.
func PodRequests(pod *v1.Pod, opts Options) v1.ResourceList {
	reqs := aggregate(pod, func(c *v1.Container) v1.ResourceList { return c.Resources.Requests })
	if !opts.SkipPodLevelResources && pod.Spec.Resources != nil {
		for name, q := range pod.Spec.Resources.Requests {
			if podLevelResource(name) {
				reqs[name] = q.DeepCopy()
			}
		}
	}
	if !opts.ExcludeOverhead {
		for name, q := range pod.Spec.Overhead {
			addQuantity(reqs, name, q)
		}
	}
	return reqs
}

// PodLimits returns the pod's effective limits by the same rules as
// PodRequests, except that overhead is added only to limits that are set.
// A resource missing from the result has no limit for at least the
// aggregate: callers that need "every container declares a limit" check
// that themselves (see AllContainersHaveLimit).
func PodLimits(pod *v1.Pod, opts Options) v1.ResourceList {
	limits := aggregate(pod, func(c *v1.Container) v1.ResourceList { return c.Resources.Limits })
	if !opts.SkipPodLevelResources && pod.Spec.Resources != nil {
		for name, q := range pod.Spec.Resources.Limits {
			if podLevelResource(name) {
				limits[name] = q.DeepCopy()
			}
		}
	}
	if !opts.ExcludeOverhead {
		for name, q := range pod.Spec.Overhead {
			if cur, ok := limits[name]; ok {
				cur.Add(q)
				limits[name] = cur
			}
		}
	}
	return limits
}

// aggregate applies KEP-753's rule to one side (requests or limits) of
// every container: regular containers and sidecars add up; a non-sidecar
// init container needs its own value plus the sidecars before it; the pod
// needs the larger of the two.
func aggregate(pod *v1.Pod, side func(*v1.Container) v1.ResourceList) v1.ResourceList {
	total := v1.ResourceList{}
	for i := range pod.Spec.Containers {
		for name, q := range side(&pod.Spec.Containers[i]) {
			addQuantity(total, name, q)
		}
	}
	sidecars := v1.ResourceList{}
	initMax := v1.ResourceList{}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		var use v1.ResourceList
		if IsSidecar(c) {
			for name, q := range side(c) {
				addQuantity(total, name, q)
				addQuantity(sidecars, name, q)
			}
			use = sidecars
		} else {
			use = v1.ResourceList{}
			for name, q := range side(c) {
				addQuantity(use, name, q)
			}
			for name, q := range sidecars {
				addQuantity(use, name, q)
			}
		}
		maxInto(initMax, use)
	}
	maxInto(total, initMax)
	return total
}

// maxInto raises each resource of dst to the value in src where src is
// larger or dst lacks it.
func maxInto(dst, src v1.ResourceList) {
	for name, q := range src {
		if cur, ok := dst[name]; !ok || q.Cmp(cur) > 0 {
			dst[name] = q.DeepCopy()
		}
	}
}

// AllContainersHaveLimit reports whether every regular and init container
// declares a limit for the resource: the kubelet sets a pod cgroup limit for
// a Burstable pod only then (or when the pod sets a pod-level limit).
func AllContainersHaveLimit(pod *v1.Pod, name v1.ResourceName) bool {
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

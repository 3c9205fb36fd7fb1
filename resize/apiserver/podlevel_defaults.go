package apiserver

import (
	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// defaultPodLevelResources is the 1.37 API server's DefaultPodLevelResources
// (pkg/api/pod/util.go), which its pod strategy applies on create and the
// resize strategy on every resize of a pod with pod-level resources while
// PodLevelResourcesFixDefaulting is on (profile.Profile.
// DefaultsPodLevelResources). On a pod that sets pod-level requests or
// limits, in this order:
//
//  1. hugepage limits the containers declare and the pod does not request
//     or limit become pod-level limits (their aggregate);
//  2. cpu and memory (and the other overcommittable pod-level resources)
//     the containers request and the pod does not become pod-level
//     requests (their aggregate), then pod-level limits without a request
//     become requests (defaultPodLevelRequests);
//  3. a pod-level request without a limit gets one when every container
//     (init and ephemeral ones included) declares a limit for it: the
//     containers' aggregated limit, or the request if that is larger.
//
// The pod's resources are changed in place: give it its own.
func defaultPodLevelResources(pod *v1.Pod) {
	r := pod.Spec.Resources
	if r == nil || len(r.Requests)+len(r.Limits) == 0 {
		return
	}
	// The aggregates are the containers' alone: the helper is given a pod
	// with nothing but them.
	containers := &v1.Pod{Spec: v1.PodSpec{Containers: pod.Spec.Containers, InitContainers: pod.Spec.InitContainers}}
	defaultHugePagePodLevelLimits(r, containers)
	defaultPodLevelRequests(pod)
	defaultPodLevelLimits(pod, containers)
}

// defaultHugePagePodLevelLimits is step 1 of defaultPodLevelResources.
func defaultHugePagePodLevelLimits(r *v1.ResourceRequirements, containers *v1.Pod) {
	limits := r.Limits
	if limits == nil {
		limits = v1.ResourceList{}
	}
	for name, q := range resourcehelper.AggregateContainerLimits(containers, resourcehelper.PodResourcesOptions{}) {
		if !resourcehelper.IsSupportedPodLevelResource(name) || !isHugePages(name) {
			continue
		}
		if _, ok := r.Requests[name]; ok {
			continue
		}
		if _, ok := limits[name]; !ok {
			limits[name] = q
		}
	}
	if len(limits) > 0 {
		r.Limits = limits
	}
}

// defaultPodLevelLimits is step 3 of defaultPodLevelResources.
func defaultPodLevelLimits(pod *v1.Pod, containers *v1.Pod) {
	r := pod.Spec.Resources
	var candidates []v1.ResourceName
	for name := range r.Requests {
		if !resourcehelper.IsSupportedPodLevelResource(name) {
			continue
		}
		if _, ok := r.Limits[name]; !ok {
			candidates = append(candidates, name)
		}
	}
	declared := func(list v1.ResourceList) {
		kept := candidates[:0]
		for _, name := range candidates {
			if _, ok := list[name]; ok {
				kept = append(kept, name)
			}
		}
		candidates = kept
	}
	for i := range pod.Spec.InitContainers {
		declared(pod.Spec.InitContainers[i].Resources.Limits)
	}
	for i := range pod.Spec.Containers {
		declared(pod.Spec.Containers[i].Resources.Limits)
	}
	for i := range pod.Spec.EphemeralContainers {
		declared(pod.Spec.EphemeralContainers[i].Resources.Limits)
	}
	if len(candidates) == 0 {
		return
	}
	aggregate := resourcehelper.AggregateContainerLimits(containers, resourcehelper.PodResourcesOptions{})
	for _, name := range candidates {
		q, ok := aggregate[name]
		if !ok {
			continue
		}
		// A request above the containers' limits raises the limit to it,
		// so that the pod stays valid.
		if req := r.Requests[name]; req.Cmp(q) > 0 {
			q = req
		}
		if r.Limits == nil {
			r.Limits = v1.ResourceList{}
		}
		r.Limits[name] = q.DeepCopy()
	}
}

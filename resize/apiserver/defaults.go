package apiserver

import (
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/resizelet/resizelet/qos"
)

// DefaultPod applies the part of the API server's v1 defaulting
// (pkg/apis/core/v1/defaults.go, SetDefaults_Pod) that matters for resize:
// each container's and init container's missing requests are copied from
// its limits (reference detail 6), pod-level requests are filled in when
// pod-level limits are set, and an empty namespace becomes "default". It
// does not default resizePolicy, as the v1.35.4 API server does not
// (resize/kubelet-resize.md §2.1): unset means NotRequired where read.
func DefaultPod(pod *v1.Pod) {
	if pod == nil {
		return
	}
	if pod.Namespace == "" {
		pod.Namespace = metav1.NamespaceDefault
	}
	for i := range pod.Spec.Containers {
		defaultRequestsFromLimits(&pod.Spec.Containers[i].Resources)
	}
	for i := range pod.Spec.InitContainers {
		defaultRequestsFromLimits(&pod.Spec.InitContainers[i].Resources)
	}
	// After the containers', as the API server does: they may come from
	// the containers' requests.
	if r := pod.Spec.Resources; r != nil && len(r.Limits) > 0 {
		defaultPodLevelRequests(pod)
	}
	for _, c := range slices.Concat(pod.Spec.Containers, pod.Spec.InitContainers) {
		roundUpToMilli(c.Resources.Requests, c.Resources.Limits)
	}
	if r := pod.Spec.Resources; r != nil {
		roundUpToMilli(r.Requests, r.Limits)
	}
}

// roundUpToMilli is SetDefaults_ResourceList, which runs last: an amount
// finer than a thousandth ("0.1m") is rounded up to one, away from zero.
func roundUpToMilli(lists ...v1.ResourceList) {
	for _, list := range lists {
		for name, q := range list {
			if !q.RoundUp(resource.Milli) {
				list[name] = q
			}
		}
	}
}

// defaultRequestsFromLimits copies every limit without a request.
func defaultRequestsFromLimits(r *v1.ResourceRequirements) {
	if r.Limits == nil {
		return
	}
	if r.Requests == nil {
		r.Requests = make(v1.ResourceList, len(r.Limits))
	}
	for name, q := range r.Limits {
		if _, ok := r.Requests[name]; !ok {
			r.Requests[name] = q.DeepCopy()
		}
	}
}

// defaultPodLevelRequests fills spec.resources.requests (KEP-2837): a
// resource the containers request takes their effective request; one they
// do not takes the pod-level limit.
func defaultPodLevelRequests(pod *v1.Pod) {
	r := pod.Spec.Resources
	aggregate := qos.PodRequests(pod, qos.Options{ExcludeOverhead: true, SkipPodLevelResources: true})
	fillMissing(&r.Requests, aggregate, func(name v1.ResourceName) bool {
		return resourcehelper.IsSupportedPodLevelResource(name) && overcommitAllowed(name)
	})
	fillMissing(&r.Requests, r.Limits, resourcehelper.IsSupportedPodLevelResource)
}

// fillMissing sets in *list a copy of each amount of from whose resource
// the list lacks and take admits; the list is made when it gets one.
func fillMissing(list *v1.ResourceList, from v1.ResourceList, take func(v1.ResourceName) bool) {
	for name, q := range from {
		if _, ok := (*list)[name]; !ok && take(name) {
			if *list == nil {
				*list = v1.ResourceList{}
			}
			(*list)[name] = q.DeepCopy()
		}
	}
}

// isHugePages reports whether the resource is a huge page size.
func isHugePages(name v1.ResourceName) bool {
	return strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix)
}

// isNativeResource reports whether the resource has no domain, or a
// kubernetes.io one.
func isNativeResource(name v1.ResourceName) bool {
	s := string(name)
	return !strings.Contains(s, "/") || strings.Contains(s, v1.ResourceDefaultNamespacePrefix)
}

// overcommitAllowed reports whether a request may be below the limit.
func overcommitAllowed(name v1.ResourceName) bool {
	return isNativeResource(name) && !isHugePages(name)
}

// defaultPodLevelResources is the 1.37 API server's DefaultPodLevelResources
// (pkg/api/pod/util.go), which its pod strategy applies on create and the
// resize strategy on every resize while PodLevelResourcesFixDefaulting is
// on (profile.Profile.DefaultsPodLevelResources). On a pod that sets
// pod-level requests or limits, in this order:
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
	aggregate := resourcehelper.AggregateContainerLimits(&v1.Pod{Spec: v1.PodSpec{Containers: pod.Spec.Containers, InitContainers: pod.Spec.InitContainers}}, resourcehelper.PodResourcesOptions{})
	// Step 1.
	fillMissing(&r.Limits, aggregate, func(name v1.ResourceName) bool {
		_, requested := r.Requests[name]
		return resourcehelper.IsSupportedPodLevelResource(name) && isHugePages(name) && !requested
	})
	defaultPodLevelRequests(pod)
	defaultPodLevelLimits(pod, aggregate)
}

// defaultPodLevelLimits is step 3 of defaultPodLevelResources.
func defaultPodLevelLimits(pod *v1.Pod, aggregate v1.ResourceList) {
	r := pod.Spec.Resources
	var candidates []v1.ResourceName
	for name := range r.Requests {
		if _, ok := r.Limits[name]; !ok && resourcehelper.IsSupportedPodLevelResource(name) {
			candidates = append(candidates, name)
		}
	}
	declared := func(list v1.ResourceList) {
		candidates = slices.DeleteFunc(candidates, func(name v1.ResourceName) bool { _, ok := list[name]; return !ok })
	}
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			declared(list[i].Resources.Limits)
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		declared(pod.Spec.EphemeralContainers[i].Resources.Limits)
	}
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

package apiserver

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/resizelet/resizelet/qos"
)

// DefaultPod applies the part of the API server's v1 defaulting
// (pkg/apis/core/v1/defaults.go, SetDefaults_Pod) that matters for resize:
// each container's and init container's missing requests are copied from
// its limits (reference detail 6), pod-level requests are filled in when
// pod-level limits are set, and an empty namespace becomes "default".
//
// It does not default resizePolicy: neither does the v1.35.4 API server
// (resize/kubelet-resize.md §2.1), and an unset policy means NotRequired
// everywhere it is read.
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
	// Pod-level requests are defaulted after the containers', as the API
	// server does, because they may come from the containers' requests.
	if r := pod.Spec.Resources; r != nil && len(r.Limits) > 0 {
		defaultPodLevelRequests(pod)
	}
}

// defaultRequestsFromLimits copies every limit that has no request into
// the requests.
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

// defaultPodLevelRequests fills spec.resources.requests (KEP-2837
// defaulting rules): a resource the containers request takes the
// containers' effective request; one they do not takes the pod-level
// limit. v1 defaulting runs it when pod-level limits are set, the 1.37
// strategy (defaultPodLevelResources) when requests or limits are.
func defaultPodLevelRequests(pod *v1.Pod) {
	r := pod.Spec.Resources
	reqs := r.Requests
	if reqs == nil {
		reqs = v1.ResourceList{}
	}
	aggregate := qos.PodRequests(pod, qos.Options{ExcludeOverhead: true, SkipPodLevelResources: true})
	for name, q := range aggregate {
		if _, ok := reqs[name]; !ok && resourcehelper.IsSupportedPodLevelResource(name) && overcommitAllowed(name) {
			reqs[name] = q.DeepCopy()
		}
	}
	for name, q := range r.Limits {
		if _, ok := reqs[name]; !ok && resourcehelper.IsSupportedPodLevelResource(name) {
			reqs[name] = q.DeepCopy()
		}
	}
	if len(reqs) > 0 {
		r.Requests = reqs
	}
}

// isHugePages reports whether the resource is a huge page size.
func isHugePages(name v1.ResourceName) bool {
	return strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix)
}

// isNativeResource reports whether the resource belongs to Kubernetes: no
// domain, or a kubernetes.io domain.
func isNativeResource(name v1.ResourceName) bool {
	s := string(name)
	return !strings.Contains(s, "/") || strings.Contains(s, v1.ResourceDefaultNamespacePrefix)
}

// overcommitAllowed reports whether a request may be below the limit:
// native resources other than huge pages.
func overcommitAllowed(name v1.ResourceName) bool {
	return isNativeResource(name) && !isHugePages(name)
}

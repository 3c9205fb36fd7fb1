// Package qos computes what the kubelet and the API server derive from a
// pod's resources: its QoS class (PodQOSClass), and the effective pod
// requests and limits that admission, the pod cgroup and the pending-resize
// queue work with (PodRequests, PodLimits), with the init-container and
// sidecar rules of KEP-753, pod overhead and pod-level resources.
//
// Everything here is a pure function of the pod; start with PodQOSClass.
package qos

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// isQOSResource reports whether a resource counts for the QoS class: only
// cpu and memory do.
func isQOSResource(name v1.ResourceName) bool {
	return name == v1.ResourceCPU || name == v1.ResourceMemory
}

// PodQOSClass computes the pod's QoS class from its spec the way the API
// server's ComputePodQOS does: pod-level resources decide when the pod sets
// them (and podLevel is true); otherwise every regular and init container
// counts (ephemeral containers cannot declare resources). A pod is
// Guaranteed when every container sets cpu and memory limits and the summed
// requests equal the summed limits; BestEffort when no cpu or memory request
// or limit is set anywhere; Burstable otherwise.
func PodQOSClass(pod *v1.Pod) v1.PodQOSClass {
	return podQOSClass(pod, true)
}

// GetPodQOS is the kubelet's v1qos.GetPodQOS: the class the API server
// recorded in status.qosClass, or the computed one for a pod that has none
// yet. The kubelet and admission read the class this way, so a resize can
// never move a pod between QoS cgroups.
func GetPodQOS(pod *v1.Pod) v1.PodQOSClass {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	return PodQOSClass(pod)
}

func podQOSClass(pod *v1.Pod, podLevel bool) v1.PodQOSClass {
	requests := v1.ResourceList{}
	limits := v1.ResourceList{}
	guaranteed := true
	// account adds one set of requirements; a set whose limits do not
	// cover both cpu and memory rules Guaranteed out. Pod-level resources
	// without limits leave that to the requests-equal-limits check.
	account := func(r v1.ResourceRequirements, limitsOptional bool) {
		addQOSResources(requests, r.Requests)
		if found := addQOSResources(limits, r.Limits); found != 2 && !(limitsOptional && len(r.Limits) == 0) {
			guaranteed = false
		}
	}
	if podLevel && pod.Spec.Resources != nil {
		account(*pod.Spec.Resources, true)
	} else {
		for i := range pod.Spec.Containers {
			account(pod.Spec.Containers[i].Resources, false)
		}
		for i := range pod.Spec.InitContainers {
			account(pod.Spec.InitContainers[i].Resources, false)
		}
	}
	if len(requests) == 0 && len(limits) == 0 {
		return v1.PodQOSBestEffort
	}
	if guaranteed {
		for name, req := range requests {
			if lim, ok := limits[name]; !ok || lim.Cmp(req) != 0 {
				guaranteed = false
				break
			}
		}
	}
	if guaranteed && len(requests) == len(limits) {
		return v1.PodQOSGuaranteed
	}
	return v1.PodQOSBurstable
}

// addQOSResources adds the positive cpu and memory quantities of from to
// list and returns how many it added.
func addQOSResources(list, from v1.ResourceList) int {
	found := 0
	for name, q := range from {
		if isQOSResource(name) && q.Sign() > 0 {
			found++
			addQuantity(list, name, q)
		}
	}
	return found
}

func addQuantity(list v1.ResourceList, name v1.ResourceName, q resource.Quantity) {
	if cur, ok := list[name]; ok {
		cur.Add(q)
		list[name] = cur
		return
	}
	list[name] = q.DeepCopy()
}

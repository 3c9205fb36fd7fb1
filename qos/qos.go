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
	resourcehelper "k8s.io/component-helpers/resource"
)

// PodQOSClass computes the pod's QoS class from its spec the way the API
// server's ComputePodQOS does: pod-level resources decide when the pod sets
// them (and podLevel is true); otherwise every regular and init container
// counts (ephemeral containers cannot declare resources). A pod is
// Guaranteed when every container sets cpu and memory limits and the summed
// requests equal the summed limits; BestEffort when no cpu or memory request
// or limit is set anywhere; Burstable otherwise. A nil pod has no class
// (""), here and in the other functions of this package, which answer a
// nil pod or container with the zero value.
func PodQOSClass(pod *v1.Pod) v1.PodQOSClass {
	if pod == nil {
		return "" // no pod, no class
	}
	return podQOSClass(pod, true)
}

// PodQOSClassWhenSet is PodQOSClass with 1.37's
// PodLevelResourcesFixKubeletQOSClass (pkg/apis/core/v1/helper/qos/qos.go,
// ComputePodQOS): pod-level resources decide only when they set a
// supported resource (resourcehelper.IsPodLevelResourcesSet). A pod whose
// spec.resources is present but sets nothing takes its class from its
// containers, where PodQOSClass makes it BestEffort.
func PodQOSClassWhenSet(pod *v1.Pod) v1.PodQOSClass {
	if pod == nil {
		return ""
	}
	return podQOSClass(pod, resourcehelper.IsPodLevelResourcesSet(pod))
}

// GetPodQOS is the kubelet's v1qos.GetPodQOS: the class the API server
// recorded in status.qosClass, or the computed one for a pod that has none
// yet. The kubelet and admission read the class this way, so a resize can
// never move a pod between QoS cgroups.
func GetPodQOS(pod *v1.Pod) v1.PodQOSClass {
	if pod == nil {
		return ""
	}
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	return PodQOSClass(pod)
}

func podQOSClass(pod *v1.Pod, podLevel bool) v1.PodQOSClass {
	// The sums of the positive cpu and memory requests and limits, the
	// only resources QoS looks at, as quantities (no lists to build).
	var requests, limits qosSums
	guaranteed := true
	// account adds one set of requirements; a set whose limits do not
	// cover both cpu and memory rules Guaranteed out. Pod-level resources
	// without limits leave that to the requests-equal-limits check.
	account := func(r *v1.ResourceRequirements, limitsOptional bool) {
		requests.add(r.Requests)
		if found := limits.add(r.Limits); found != 2 && !(limitsOptional && len(r.Limits) == 0) {
			guaranteed = false
		}
	}
	if podLevel && pod.Spec.Resources != nil {
		account(pod.Spec.Resources, true)
	} else {
		for i := range pod.Spec.Containers {
			account(&pod.Spec.Containers[i].Resources, false)
		}
		for i := range pod.Spec.InitContainers {
			account(&pod.Spec.InitContainers[i].Resources, false)
		}
	}
	if requests.count() == 0 && limits.count() == 0 {
		return v1.PodQOSBestEffort
	}
	if guaranteed {
		for i := range requests.sum {
			if requests.has[i] && (!limits.has[i] || limits.sum[i].Cmp(requests.sum[i]) != 0) {
				guaranteed = false
				break
			}
		}
	}
	if guaranteed && requests.count() == limits.count() {
		return v1.PodQOSGuaranteed
	}
	return v1.PodQOSBurstable
}

// qosSums are the sums of positive cpu (index 0) and memory (index 1)
// amounts over resource lists, with whether any list had the resource.
type qosSums struct {
	sum [2]resource.Quantity
	has [2]bool
}

// add adds the positive cpu and memory quantities of list and returns how
// many it added.
func (s *qosSums) add(list v1.ResourceList) int {
	found := 0
	for i, name := range [2]v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
		q, ok := list[name]
		if !ok || q.Sign() <= 0 {
			continue
		}
		found++
		if s.has[i] {
			s.sum[i].Add(q)
		} else {
			s.sum[i], s.has[i] = q.DeepCopy(), true
		}
	}
	return found
}

func (s *qosSums) count() int {
	n := 0
	for _, h := range s.has {
		if h {
			n++
		}
	}
	return n
}

package core

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// resources builds requirements; an empty quantity is not set.
func resources(cpuReq, memReq, cpuLim, memLim string) v1.ResourceRequirements {
	var r v1.ResourceRequirements
	set := func(list *v1.ResourceList, name v1.ResourceName, q string) {
		if q == "" {
			return
		}
		if *list == nil {
			*list = v1.ResourceList{}
		}
		(*list)[name] = resource.MustParse(q)
	}
	set(&r.Requests, v1.ResourceCPU, cpuReq)
	set(&r.Requests, v1.ResourceMemory, memReq)
	set(&r.Limits, v1.ResourceCPU, cpuLim)
	set(&r.Limits, v1.ResourceMemory, memLim)
	return r
}

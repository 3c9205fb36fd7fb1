package apiserver

import (
	"iter"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/resizelet/resizelet/allocation/reslist"
)

// resources yields the resources of list with their amounts, as every walk
// of a resource list here does. A list of cpu, memory or both, as almost
// all are, is read with two lookups (reslist.CPUMemoryOf), in name order,
// cheaper than ranging over a map (its iterator's random seed); any other
// is ranged over, in no order (TestResourcesYieldsTheList).
func resources(list v1.ResourceList) iter.Seq2[v1.ResourceName, resource.Quantity] {
	return func(yield func(v1.ResourceName, resource.Quantity) bool) {
		cm, only := reslist.CPUMemoryOf(list)
		if !only {
			for name, q := range list {
				if !yield(name, q) {
					return
				}
			}
			return
		}
		if cm.HasCPU && !yield(v1.ResourceCPU, cm.CPU) {
			return
		}
		if cm.HasMemory {
			yield(v1.ResourceMemory, cm.Memory)
		}
	}
}

// onlyCPUMemory reports whether list holds nothing but cpu and memory.
func onlyCPUMemory(list v1.ResourceList) bool {
	_, _, only := reslist.CPUMemoryKeys(list)
	return only
}

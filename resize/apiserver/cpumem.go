package apiserver

import (
	"iter"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/resizelet/resizelet/allocation/reslist"
)

// resources yields the resources of list with their amounts. Almost every
// list a resize reads holds cpu, memory or both and nothing else: such a
// list is read with two lookups (reslist.CPUMemoryOf), cpu first, so in
// name order, since ranging over a map starts an iterator with a random
// seed, which costs more. Any other list is ranged over, in no order.
// Every walk of a resource list in this package goes through it
// (TestResourcesYieldsTheList holds it to the map).
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

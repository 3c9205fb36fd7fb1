package apiserver

import (
	v1 "k8s.io/api/core/v1"

	"github.com/resizelet/resizelet/allocation/reslist"
)

// Almost every resource list a resize reads holds cpu, memory or both and
// nothing else. Ranging over a map starts an iterator with a random seed,
// which costs more than the two direct lookups that, in that case, find
// everything the list holds (reslist.CPUMemoryOf); the functions that walk
// lists have a fast path for it. A list holding anything else still takes
// the walk, and since the walks visit names in sorted order or in an order
// that does not matter, both paths give the same results
// (TestCPUMemoryFastPathsMatchTheWalks, FuzzCPUMemoryFastPaths).

// onlyCPUMemory reports whether list holds nothing but cpu and memory.
func onlyCPUMemory(list v1.ResourceList) bool {
	_, _, only := reslist.CPUMemoryKeys(list)
	return only
}

// hasResource reports whether list holds the resource.
func hasResource(list v1.ResourceList, name v1.ResourceName) bool {
	_, ok := list[name]
	return ok
}

package apiserver

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Almost every resource list a resize reads holds cpu, memory or both and
// nothing else. Ranging over a map starts an iterator with a random seed,
// which costs more than the two direct lookups that, in that case, find
// everything the list holds; the helpers here give the functions that
// walk lists a fast path for it. A list holding anything else still takes
// the walk, and since the walks visit names in sorted order or in an order
// that does not matter, both paths give the same results
// (TestCPUMemoryFastPathsMatchTheWalks, FuzzCPUMemoryFastPaths).

// cpuMemory is a resource list's cpu and memory amounts, looked up
// directly.
type cpuMemory struct {
	cpu, memory       resource.Quantity
	hasCPU, hasMemory bool
}

// cpuMemoryOf looks cpu and memory up in list, and reports whether list
// holds nothing else: only then does cm say everything list holds (a nil
// or empty list is one). When it reports false, cm may be incomplete.
func cpuMemoryOf(list v1.ResourceList) (cm cpuMemory, only bool) {
	switch len(list) {
	case 0:
		return cm, true
	case 1, 2:
	default:
		return cm, false
	}
	cm.cpu, cm.hasCPU = list[v1.ResourceCPU]
	cm.memory, cm.hasMemory = list[v1.ResourceMemory]
	return cm, len(list) == cm.len()
}

// edit sets the amounts the edits set, in order (a later edit of the same
// resource wins), and reports whether they name nothing but cpu and
// memory; when they name another resource it reports false, and cm is
// then partly edited.
func (cm *cpuMemory) edit(edits []quantityEdit) bool {
	for i := range edits {
		switch edits[i].name {
		case v1.ResourceCPU:
			cm.cpu, cm.hasCPU = edits[i].q, true
		case v1.ResourceMemory:
			cm.memory, cm.hasMemory = edits[i].q, true
		default:
			return false
		}
	}
	return true
}

// len is how many of the two amounts are set.
func (cm *cpuMemory) len() int {
	n := 0
	if cm.hasCPU {
		n++
	}
	if cm.hasMemory {
		n++
	}
	return n
}

// cpuMemoryKeys is cpuMemoryOf without the amounts, for callers that
// only ask which of the two list holds (copying the amounts costs about
// as much as the lookups).
func cpuMemoryKeys(list v1.ResourceList) (hasCPU, hasMemory, only bool) {
	switch len(list) {
	case 0:
		return false, false, true
	case 1, 2:
	default:
		return false, false, false
	}
	hasCPU, hasMemory = hasResource(list, v1.ResourceCPU), hasResource(list, v1.ResourceMemory)
	n := 0
	if hasCPU {
		n++
	}
	if hasMemory {
		n++
	}
	return hasCPU, hasMemory, len(list) == n
}

// onlyCPUMemory reports whether list holds nothing but cpu and memory
// (cpuMemoryOf without the amounts).
func onlyCPUMemory(list v1.ResourceList) bool {
	_, _, only := cpuMemoryKeys(list)
	return only
}

// hasResource reports whether list holds the resource.
func hasResource(list v1.ResourceList, name v1.ResourceName) bool {
	_, ok := list[name]
	return ok
}

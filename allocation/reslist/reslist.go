// Package reslist reads v1.ResourceLists on hot paths without starting a
// map iterator where it need not.
//
// Nearly every list a pod carries holds cpu, memory or both. Ranging over a
// map, even a two-entry one, starts an iterator that draws a random
// starting point, which costs about twice as much as looking both names up.
// Each looks cpu and memory up first and ranges over the list only when it
// holds anything else. Start with Each; CPUMemoryOf is the lookup it makes,
// for callers with a fast path of their own; Equal compares two lists the
// way the API's semantic equality does.
package reslist

import (
	"reflect"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// CPUMemory is a list's cpu and memory amounts, looked up directly.
type CPUMemory struct {
	CPU, Memory       resource.Quantity
	HasCPU, HasMemory bool
}

// CPUMemoryOf looks cpu and memory up in rl and reports whether rl holds
// nothing else: only then does cm say everything rl holds (a nil or empty
// list is one). When it reports false, cm may be incomplete.
func CPUMemoryOf(rl v1.ResourceList) (cm CPUMemory, only bool) {
	switch len(rl) {
	case 0:
		return cm, true
	case 1, 2:
	default:
		return cm, false
	}
	cm.CPU, cm.HasCPU = rl[v1.ResourceCPU]
	cm.Memory, cm.HasMemory = rl[v1.ResourceMemory]
	return cm, len(rl) == cm.Len()
}

// Len is how many of the two amounts cm holds.
func (cm *CPUMemory) Len() int {
	if cm == nil {
		return 0
	}
	return count(cm.HasCPU) + count(cm.HasMemory)
}

// CPUMemoryKeys is CPUMemoryOf without the amounts, for callers that only
// ask which of the two rl holds (copying the amounts costs about as much
// as the lookups).
func CPUMemoryKeys(rl v1.ResourceList) (hasCPU, hasMemory, only bool) {
	switch len(rl) {
	case 0:
		return false, false, true
	case 1, 2:
	default:
		return false, false, false
	}
	_, hasCPU = rl[v1.ResourceCPU]
	_, hasMemory = rl[v1.ResourceMemory]
	return hasCPU, hasMemory, len(rl) == count(hasCPU)+count(hasMemory)
}

// Each calls f once for every entry of rl. The order is unspecified, as
// a map's is: cpu before memory when those are all rl holds, the map's
// order otherwise. f gets each quantity by value, so that a caller's
// closure keeps it on the stack.
func Each(rl v1.ResourceList, f func(name v1.ResourceName, q resource.Quantity)) {
	if cm, only := CPUMemoryOf(rl); only {
		if cm.HasCPU {
			f(v1.ResourceCPU, cm.CPU)
		}
		if cm.HasMemory {
			f(v1.ResourceMemory, cm.Memory)
		}
		return
	}
	for name, q := range rl {
		f(name, q)
	}
}

// Equal reports whether a and b hold the same resources with equal
// amounts (Quantity.Cmp, so 1 and 1000m are equal), as
// apiequality.Semantic.DeepEqual compares ResourceLists; nil and empty
// are equal.
func Equal(a, b v1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	if Same(a, b) {
		// Lists are shared rather than copied (a checkpoint record holds
		// the lists of the spec it was taken from): nothing to compare.
		return true
	}
	equal := true
	Each(a, func(name v1.ResourceName, qa resource.Quantity) {
		if !equal {
			return
		}
		qb, ok := b[name]
		equal = ok && qa.Cmp(qb) == 0
	})
	return equal
}

// Same reports whether a and b are the same map (not merely equal); two
// nil lists are the same.
func Same(a, b v1.ResourceList) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func count(b bool) int {
	if b {
		return 1
	}
	return 0
}

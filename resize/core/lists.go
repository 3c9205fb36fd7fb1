package core

import (
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Small helpers over lists and maps that the rules share; they know
// nothing of the core.

func containsID(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// sortedNames returns a resource list's names in order, for output that
// must not depend on map order.
func sortedNames(l v1.ResourceList) []v1.ResourceName {
	names := make([]v1.ResourceName, 0, len(l))
	for n := range l {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// shrunk is s, or a copy of it with room for little more, when s has
// room for many more elements than it holds.
func shrunk[S ~[]E, E any](s S) S {
	if cap(s) <= 32 || cap(s) <= 4*len(s) {
		return s
	}
	return append(S(nil), s...)
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// quantityOf is list[name], the zero quantity when absent: what
// ResourceList.Cpu and Memory return, without their allocation.
func quantityOf(list v1.ResourceList, name v1.ResourceName) *resource.Quantity {
	q := list[name]
	return &q
}

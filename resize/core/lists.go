package core

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Small helpers over lists and maps that the rules share; they know
// nothing of the core.

// shrunk is s, or a copy of it with room for little more, when s has
// room for many more elements than it holds.
func shrunk[S ~[]E, E any](s S) S {
	if cap(s) <= 32 || cap(s) <= 4*len(s) {
		return s
	}
	return append(S(nil), s...)
}

// quantityOf is list[name], the zero quantity when absent: what
// ResourceList.Cpu and Memory return, without their allocation.
func quantityOf(list v1.ResourceList, name v1.ResourceName) *resource.Quantity {
	return new(list[name])
}

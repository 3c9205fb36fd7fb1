package apiserver

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
)

// equalOutsideResources reports whether two containers are semantically
// equal in everything but their resources. With edited (validateResize),
// c is a copy of o with resources and resizePolicy set by applyEdit, so
// only resizePolicy can differ (slices.Equal is its semantic equality: a
// nil list equals an empty one).
func equalOutsideResources(c, o *v1.Container, edited bool) bool {
	if edited {
		return slices.Equal(c.ResizePolicy, o.ResizePolicy)
	}
	cc, oc := *c, *o
	cc.Resources, oc.Resources = v1.ResourceRequirements{}, v1.ResourceRequirements{}
	return apiequality.Semantic.DeepEqual(cc, oc)
}

// specEqualOutsideContainers reports whether two pod specs are
// semantically equal in everything but their containers and init
// containers, and but spec.resources when skipResources is set.
//
// With edited (validateResize), a is b with its containers and resources
// set by applyEdit, the rest shared, so equal.
func specEqualOutsideContainers(a, b *v1.PodSpec, skipResources, edited bool) bool {
	if !skipResources && !podResourcesEqual(a.Resources, b.Resources) {
		return false
	}
	if edited {
		return true
	}
	ac, bc := *a, *b
	ac.Containers, bc.Containers = nil, nil
	ac.InitContainers, bc.InitContainers = nil, nil
	ac.Resources, bc.Resources = nil, nil
	return apiequality.Semantic.DeepEqual(ac, bc)
}

// podResourcesEqual is semantic equality of spec.resources: absent equals
// only absent.
func podResourcesEqual(a, b *v1.ResourceRequirements) bool {
	if a == nil || b == nil {
		return a == b
	}
	return requirementsEqual(a, b)
}

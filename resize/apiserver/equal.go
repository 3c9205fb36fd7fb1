package apiserver

import (
	"reflect"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
)

// The resize validation compares containers and specs that are, in the
// common case, the very same memory apart from the resources the resize
// changed: the API server's objects are shared and never changed in place,
// and a resize builds its new pod from the old one. identical finds that
// case without a reflective deep comparison; anything it cannot vouch for
// goes to apiequality.Semantic.DeepEqual, so the answers are the deep
// comparison's.

// The fields the comparisons look at, found once: a container's but its
// resources, a spec's but its containers, init containers and resources.
var (
	containerFields = fieldsBut(reflect.TypeFor[v1.Container](), "Resources")
	specFields      = fieldsBut(reflect.TypeFor[v1.PodSpec](), "Containers", "InitContainers", "Resources")
)

// fieldsBut returns the indexes of t's fields but the named ones, each of
// which t must have.
func fieldsBut(t reflect.Type, names ...string) []int {
	var out []int
	for i := range t.NumField() {
		if !slices.Contains(names, t.Field(i).Name) {
			out = append(out, i)
		}
	}
	if len(out) != t.NumField()-len(names) {
		panic("apiserver: " + t.String() + " lacks a field of " + strings.Join(names, ", "))
	}
	return out
}

// identicalFields reports whether the structs a and b are identical in
// the fields at the indexes.
func identicalFields(a, b reflect.Value, fields []int) bool {
	for _, i := range fields {
		if !identical(a.Field(i), b.Field(i)) {
			return false
		}
	}
	return true
}

// identical reports whether a and b, two values of one type, hold the
// same thing: equal strings, numbers and booleans, and slices, maps and
// pointers that refer to the same memory with the same length. Identical
// values are semantically equal; values that are not may still be.
func identical(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Struct:
		for i, n := 0, a.NumField(); i < n; i++ {
			if !identical(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.String:
		return a.String() == b.String()
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint()
	case reflect.Slice:
		return a.Len() == b.Len() && a.Pointer() == b.Pointer()
	case reflect.Map, reflect.Pointer:
		return a.Pointer() == b.Pointer()
	case reflect.Array:
		for i, n := 0, a.Len(); i < n; i++ {
			if !identical(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	}
	// Floats (NaN), interfaces, funcs: leave them to the deep comparison.
	return false
}

// equalOutsideResources reports whether two containers are semantically
// equal in everything but their resources. With edited (validateResize),
// c is a copy of o with resources and resizePolicy set by applyEdit, so
// only resizePolicy can differ (slices.Equal is its semantic equality: a
// nil list equals an empty one).
func equalOutsideResources(c, o *v1.Container, edited bool) bool {
	if edited {
		return slices.Equal(c.ResizePolicy, o.ResizePolicy)
	}
	if identicalFields(reflect.ValueOf(c).Elem(), reflect.ValueOf(o).Elem(), containerFields) {
		return true
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
	if identicalFields(reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem(), specFields) {
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

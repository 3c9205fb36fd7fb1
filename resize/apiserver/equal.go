package apiserver

import (
	"reflect"

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

// Field indexes the comparisons leave out, found once.
var (
	containerResourcesField = fieldIndex(reflect.TypeFor[v1.Container](), "Resources")
	specContainersField     = fieldIndex(reflect.TypeFor[v1.PodSpec](), "Containers")
	specInitContainersField = fieldIndex(reflect.TypeFor[v1.PodSpec](), "InitContainers")
	specResourcesField      = fieldIndex(reflect.TypeFor[v1.PodSpec](), "Resources")
)

func fieldIndex(t reflect.Type, name string) int {
	f, ok := t.FieldByName(name)
	if !ok {
		panic("apiserver: " + t.String() + " has no field " + name)
	}
	return f.Index[0]
}

// identical reports whether a and b, two values of one type, hold the
// same thing in every field but the skipped ones (by index, for a
// struct): equal strings, numbers and booleans, and slices, maps and
// pointers that refer to the same memory with the same length. Identical
// values are semantically equal; values that are not may still be.
func identical(a, b reflect.Value, skip ...int) bool {
	switch a.Kind() {
	case reflect.Struct:
		for i, n := 0, a.NumField(); i < n; i++ {
			if isSkipped(i, skip) {
				continue
			}
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

func isSkipped(i int, skip []int) bool {
	for _, s := range skip {
		if s == i {
			return true
		}
	}
	return false
}

// equalOutsideResources reports whether two containers are semantically
// equal in everything but their resources.
func equalOutsideResources(c, o *v1.Container) bool {
	if identical(reflect.ValueOf(c).Elem(), reflect.ValueOf(o).Elem(), containerResourcesField) {
		return true
	}
	cc, oc := *c, *o
	cc.Resources, oc.Resources = v1.ResourceRequirements{}, v1.ResourceRequirements{}
	return apiequality.Semantic.DeepEqual(cc, oc)
}

// specEqualOutsideContainers reports whether two pod specs are
// semantically equal in everything but their containers and init
// containers, and but spec.resources when skipResources is set.
func specEqualOutsideContainers(a, b *v1.PodSpec, skipResources bool) bool {
	if !skipResources && !podResourcesEqual(a.Resources, b.Resources) {
		return false
	}
	if identical(reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem(), specContainersField, specInitContainersField, specResourcesField) {
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

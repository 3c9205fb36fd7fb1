package apiserver

import (
	"bytes"
	"reflect"
	"slices"
	"unsafe"

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

// The byte ranges of the two types outside the fields the comparisons
// leave out, found once (sameBytes).
var (
	containerOutsideResources = outsideFields(reflect.TypeFor[v1.Container](), containerResourcesField)
	wholeContainer            = outsideFields(reflect.TypeFor[v1.Container]())
	specOutsideContainers     = outsideFields(reflect.TypeFor[v1.PodSpec](), specContainersField, specInitContainersField, specResourcesField)
)

// byteRange is a span of a struct's memory: [from, to).
type byteRange struct{ from, to uintptr }

// outsideFields returns the spans of t's memory that the fields at skip
// (indexes in t) do not cover.
func outsideFields(t reflect.Type, skip ...int) []byteRange {
	skip = slices.Sorted(slices.Values(skip))
	var out []byteRange
	from := uintptr(0)
	for _, i := range skip {
		f := t.Field(i)
		if f.Offset > from {
			out = append(out, byteRange{from, f.Offset})
		}
		from = f.Offset + f.Type.Size()
	}
	if from < t.Size() {
		out = append(out, byteRange{from, t.Size()})
	}
	return out
}

// sameBytes reports whether *a and *b hold the same bytes in every span
// of spans. Equal bytes mean identical fields: the same strings, numbers
// and booleans, and slices, maps and pointers to the same memory (neither
// type has a float or an interface field, whose equal bits could still
// differ semantically). Different bytes (a padding byte included) prove
// nothing: the callers go on to the field-by-field comparison. It reads
// the structs' memory as bytes and writes nothing, which is what makes it
// safe beside the garbage collector.
func sameBytes[T any](a, b *T, spans []byteRange) bool {
	if a == b {
		return true
	}
	size := unsafe.Sizeof(*a)
	ab := unsafe.Slice((*byte)(unsafe.Pointer(a)), size)
	bb := unsafe.Slice((*byte)(unsafe.Pointer(b)), size)
	for _, r := range spans {
		if !bytes.Equal(ab[r.from:r.to], bb[r.from:r.to]) {
			return false
		}
	}
	return true
}

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
	if sameBytes(c, o, containerOutsideResources) || identical(reflect.ValueOf(c).Elem(), reflect.ValueOf(o).Elem(), containerResourcesField) {
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
	if sameBytes(a, b, specOutsideContainers) || identical(reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem(), specContainersField, specInitContainersField, specResourcesField) {
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

// sameResourceLists reports whether a and b hold the very same request
// map and the very same limit map (a nil map is the same only as a nil
// one), as a container the resize did not touch shares them with the old
// pod's. Comparisons of a list with itself then need no walk: nothing is
// missing, and every amount equals itself.
func sameResourceLists(a, b *v1.ResourceRequirements) bool {
	return sameMap(a.Requests, b.Requests) && sameMap(a.Limits, b.Limits)
}

// sameMap reports whether a and b are the same map (both nil included). A
// map value is a pointer to the map's header.
func sameMap(a, b v1.ResourceList) bool {
	return *(*unsafe.Pointer)(unsafe.Pointer(&a)) == *(*unsafe.Pointer)(unsafe.Pointer(&b))
}

package apiserver

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestSameBytesTypesHaveNoFloatsOrInterfaces pins what sameBytes relies
// on: no field held inline in a v1.Container or v1.PodSpec (outside what
// pointers, slices and maps refer to) is a float or an interface, whose
// equal bits could compare unequal (NaN) or whose different bits could
// compare equal. A new Kubernetes version that adds one fails here.
func TestSameBytesTypesHaveNoFloatsOrInterfaces(t *testing.T) {
	var check func(path string, ty reflect.Type)
	check = func(path string, ty reflect.Type) {
		switch ty.Kind() {
		case reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.Interface:
			t.Errorf("%s is a %s held inline", path, ty.Kind())
		case reflect.Struct:
			for i := 0; i < ty.NumField(); i++ {
				check(path+"."+ty.Field(i).Name, ty.Field(i).Type)
			}
		case reflect.Array:
			check(path+"[]", ty.Elem())
		}
	}
	check("Container", reflect.TypeFor[v1.Container]())
	check("PodSpec", reflect.TypeFor[v1.PodSpec]())
}

// TestSameBytesAgreesWithIdentical compares the byte comparison with the
// field-by-field one on containers and specs the resize builds: a copy
// with other resources, and copies with one field outside them changed.
func TestSameBytesAgreesWithIdentical(t *testing.T) {
	old := v1.Container{Name: "c", Image: "img", Resources: v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}}}
	same := old
	same.Resources = v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("200m")}}
	renamed := same
	renamed.Name = "d"
	policy := same
	policy.ResizePolicy = []v1.ContainerResizePolicy{{ResourceName: v1.ResourceCPU, RestartPolicy: v1.NotRequired}}
	for _, tc := range []struct {
		name string
		c    v1.Container
		want bool
	}{{"resources only", same, true}, {"name", renamed, false}, {"resize policy", policy, false}} {
		got := sameBytes(&tc.c, &old, containerOutsideResources)
		ref := identical(reflect.ValueOf(&tc.c).Elem(), reflect.ValueOf(&old).Elem(), containerResourcesField)
		if got != tc.want || ref != tc.want {
			t.Errorf("container %s: sameBytes %v, identical %v, want %v", tc.name, got, ref, tc.want)
		}
	}

	spec := v1.PodSpec{Containers: []v1.Container{old}, NodeName: "n"}
	other := spec
	other.Containers = []v1.Container{same}
	other.Resources = &v1.ResourceRequirements{}
	moved := other
	moved.NodeName = "m"
	for _, tc := range []struct {
		name string
		s    v1.PodSpec
		want bool
	}{{"containers and resources", other, true}, {"node name", moved, false}} {
		got := sameBytes(&tc.s, &spec, specOutsideContainers)
		ref := identical(reflect.ValueOf(&tc.s).Elem(), reflect.ValueOf(&spec).Elem(), specContainersField, specInitContainersField, specResourcesField)
		if got != tc.want || ref != tc.want {
			t.Errorf("spec %s: sameBytes %v, identical %v, want %v", tc.name, got, ref, tc.want)
		}
	}
}

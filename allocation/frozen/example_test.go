package frozen_test

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resizelet/resizelet/allocation/frozen"
)

// A frozen pod is a few hundred bytes, shared by everyone who freezes the
// same content; Thaw gives back an equal pod of the caller's own.
func ExampleFreezePod() {
	rl := v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m"), v1.ResourceMemory: resource.MustParse("64Mi")}
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "nginx", Resources: v1.ResourceRequirements{Requests: rl, Limits: rl}}}},
	}
	a, ok := frozen.FreezePod(pod)
	if !ok {
		panic("not freezable")
	}
	b, _ := frozen.FreezePod(pod.DeepCopy())
	fmt.Println("shared:", a == b)
	fmt.Println("equal after thawing:", equality.Semantic.DeepEqual(a.Thaw(), pod))
	// Output:
	// shared: true
	// equal after thawing: true
}

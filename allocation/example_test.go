package allocation_test

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/allocation"
	"github.com/resizelet/resizelet/resize/profile"
)

func cpuPod(name, cpu string) *v1.Pod {
	rl := v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse("64Mi")}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: rl, Limits: rl}}}},
	}
}

// AdmitResize is the kubelet's decision on a resize: the pod as the API
// server has it (desired), the same pod with what the kubelet allocated,
// and the other admitted pods.
func ExampleAdmitResize() {
	node := allocation.NodeConfig{
		Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("8Gi")},
		Profile:     profile.New(profile.Default, nil),
	}
	allocated := cpuPod("web", "1")
	other := cpuPod("batch", "2500m")
	for _, cpu := range []string{"1500m", "2", "5"} {
		desired := cpuPod("web", cpu)
		d := allocation.AdmitResize(desired, allocated, []*v1.Pod{other}, node, false)
		fmt.Println(strings.TrimSpace(fmt.Sprintf("%s: %s %s", cpu, d.Outcome, d.Message)))
	}
	// Output:
	// 1500m: Admitted
	// 2: Deferred Node didn't have enough resource: cpu, requested: 2000, used: 2500, capacity: 4000
	// 5: Infeasible Node didn't have enough capacity: cpu, requested: 5000, capacity: 4000
}

package allocation

import (
	"fmt"
	"math/rand"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

// TestPodRequestsAgainstComponentHelpers compares the integer podRequests
// of admission's hot path with k8s.io/component-helpers/resource's
// PodRequests, the kubelet's and the scheduler's own, on random pods:
// regular, init and sidecar containers, container statuses with resources
// and allocated resources, a PodResizePending condition, overhead and
// pod-level requests, with and without status resources and pod-level
// resources.
func TestPodRequestsAgainstComponentHelpers(t *testing.T) {
	r := rand.New(rand.NewSource(20261201))
	always := v1.ContainerRestartPolicyAlways
	list := func() v1.ResourceList {
		l := v1.ResourceList{}
		if r.Intn(4) > 0 {
			l[v1.ResourceCPU] = *resource.NewMilliQuantity(int64(r.Intn(4000)), resource.DecimalSI)
		}
		if r.Intn(4) > 0 {
			l[v1.ResourceMemory] = *resource.NewQuantity(int64(r.Intn(1<<20))*1024, resource.BinarySI)
		}
		if r.Intn(6) == 0 {
			l["example.com/dongle"] = *resource.NewQuantity(int64(r.Intn(4)), resource.DecimalSI)
		}
		return l
	}
	for i := 0; i < 2000; i++ {
		pod := &v1.Pod{}
		for c := 0; c < 1+r.Intn(3); c++ {
			pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: fmt.Sprintf("c%d", c), Resources: v1.ResourceRequirements{Requests: list()}})
		}
		for c := 0; c < r.Intn(3); c++ {
			ic := v1.Container{Name: fmt.Sprintf("i%d", c), Resources: v1.ResourceRequirements{Requests: list()}}
			if r.Intn(2) == 0 {
				ic.RestartPolicy = &always
			}
			pod.Spec.InitContainers = append(pod.Spec.InitContainers, ic)
		}
		status := func(name string) v1.ContainerStatus {
			cs := v1.ContainerStatus{Name: name}
			if r.Intn(3) > 0 {
				cs.Resources = &v1.ResourceRequirements{Requests: list()}
			}
			if r.Intn(2) == 0 {
				cs.AllocatedResources = list()
			}
			return cs
		}
		for _, c := range pod.Spec.Containers {
			if r.Intn(4) > 0 {
				pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, status(c.Name))
			}
		}
		for _, c := range pod.Spec.InitContainers {
			if r.Intn(2) == 0 {
				pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, status(c.Name))
			}
		}
		switch r.Intn(4) {
		case 0:
			pod.Status.Conditions = []v1.PodCondition{{Type: v1.PodResizePending, Reason: v1.PodReasonInfeasible}}
		case 1:
			pod.Status.Conditions = []v1.PodCondition{{Type: v1.PodResizePending, Reason: v1.PodReasonDeferred}}
		}
		if r.Intn(3) == 0 {
			pod.Spec.Overhead = list()
		}
		if r.Intn(4) == 0 {
			pod.Spec.Resources = &v1.ResourceRequirements{Requests: list()}
		}
		for _, useStatus := range []bool{false, true} {
			for _, podLevel := range []bool{false, true} {
				want := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{UseStatusResources: useStatus, SkipPodLevelResources: !podLevel})
				got := podRequests(pod, requestOptions{useStatus: useStatus, podLevel: podLevel})
				dongle := want["example.com/dongle"]
				if got.milliCPU != want.Cpu().MilliValue() || got.memory != want.Memory().Value() || got.scalar("example.com/dongle") != dongle.Value() {
					t.Fatalf("pod %d, useStatus %v, podLevel %v: podRequests = %dm, %d bytes, %d dongles; component-helpers = %s, %s, %s\n%+v",
						i, useStatus, podLevel, got.milliCPU, got.memory, got.scalar("example.com/dongle"),
						want.Cpu(), want.Memory(), dongle.String(), pod)
				}
			}
		}
	}
}

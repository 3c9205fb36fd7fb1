package allocation

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

// randomRequests is a random list of requests for the differential tests:
// cpu and memory each three times in four, an extended resource one time
// in six; with zeros, cpu and memory are zero a third of the time.
func randomRequests(r *rand.Rand, zeros bool) v1.ResourceList {
	scale := func() int {
		if zeros {
			return r.Intn(3)
		}
		return 1
	}
	l := v1.ResourceList{}
	if r.Intn(4) > 0 {
		s := scale()
		l[v1.ResourceCPU] = *resource.NewMilliQuantity(int64(s*r.Intn(4000)), resource.DecimalSI)
	}
	if r.Intn(4) > 0 {
		s := scale()
		l[v1.ResourceMemory] = *resource.NewQuantity(int64(s*r.Intn(1<<20))*1024, resource.BinarySI)
	}
	if r.Intn(6) == 0 {
		l["example.com/dongle"] = *resource.NewQuantity(int64(r.Intn(4)), resource.DecimalSI)
	}
	return l
}

// addRandomContainers gives pod regular containers c0, c1, ... (at least
// minRegular, fewer than minRegular+spread) and up to two init containers
// i0, i1, half of them sidecars, each requesting a list().
func addRandomContainers(r *rand.Rand, pod *v1.Pod, minRegular, spread int, list func() v1.ResourceList) {
	always := v1.ContainerRestartPolicyAlways
	for c := 0; c < minRegular+r.Intn(spread); c++ {
		pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: fmt.Sprintf("c%d", c), Resources: v1.ResourceRequirements{Requests: list()}})
	}
	for c := 0; c < r.Intn(3); c++ {
		ic := v1.Container{Name: fmt.Sprintf("i%d", c), Resources: v1.ResourceRequirements{Requests: list()}}
		if r.Intn(2) == 0 {
			ic.RestartPolicy = &always
		}
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, ic)
	}
}

// TestPodRequestsAgainstComponentHelpers compares the integer podRequests
// of admission's hot path with k8s.io/component-helpers/resource's
// PodRequests, the kubelet's and the scheduler's own, on random pods:
// regular, init and sidecar containers, container statuses with resources
// and allocated resources, a PodResizePending condition, overhead and
// pod-level requests, with and without status resources and pod-level
// resources.
func TestPodRequestsAgainstComponentHelpers(t *testing.T) {
	r := rand.New(rand.NewSource(20261201))
	list := func() v1.ResourceList { return randomRequests(r, false) }
	for i := 0; i < 2000; i++ {
		pod := &v1.Pod{}
		addRandomContainers(r, pod, 1, 3, list)
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
				got := podRequests(As(pod), requestOptions{useStatus: useStatus, podLevel: podLevel})
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

// TestAllocatedViewIsTheOverlay: reading a pod through Allocated gives what
// reading the materialized allocated pod gives (UpdatePodFromAllocation:
// each recorded container's resources, and the recorded pod-level
// resources when the pod sets some, in place of the desired ones), for the
// requests, the change test and the decision, on random pods and records.
func TestAllocatedViewIsTheOverlay(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	list := func() v1.ResourceList {
		return v1.ResourceList{
			v1.ResourceCPU:    *resource.NewMilliQuantity(int64(50*(1+r.Intn(40))), resource.DecimalSI),
			v1.ResourceMemory: *resource.NewQuantity(int64(1+r.Intn(64))<<20, resource.BinarySI),
		}
	}
	always := v1.ContainerRestartPolicyAlways
	node := linuxNode(rl("cpu=16", "memory=64Gi", "pods=110"))
	for i := 0; i < 1000; i++ {
		pod := mkPod(fmt.Sprintf("p%d", i))
		record := PodResources{ContainerResources: map[string]v1.ResourceRequirements{}}
		for c := 0; c < 1+r.Intn(3); c++ {
			ctr := v1.Container{Name: fmt.Sprintf("c%d", c), Resources: v1.ResourceRequirements{Requests: list()}}
			if c == 0 && r.Intn(3) == 0 {
				ctr.RestartPolicy = &always
				pod.Spec.InitContainers = append(pod.Spec.InitContainers, ctr)
			} else {
				pod.Spec.Containers = append(pod.Spec.Containers, ctr)
			}
			if r.Intn(3) > 0 {
				record.ContainerResources[ctr.Name] = v1.ResourceRequirements{Requests: list()}
			}
		}
		if r.Intn(3) == 0 {
			pod.Spec.Resources = &v1.ResourceRequirements{Requests: list()}
		}
		if r.Intn(2) == 0 {
			record.PodLevelResources = &v1.ResourceRequirements{Requests: list()}
		}
		view := Allocated{Pod: pod, Record: &record}
		overlaid := overlayForTest(pod, record)
		for _, podLevel := range []bool{false, true} {
			a, b := podRequests(view, requestOptions{podLevel: podLevel}), podRequests(As(overlaid), requestOptions{podLevel: podLevel})
			if a.milliCPU != b.milliCPU || a.memory != b.memory {
				t.Fatalf("pod %d podLevel %v: view %dm %d, overlay %dm %d", i, podLevel, a.milliCPU, a.memory, b.milliCPU, b.memory)
			}
		}
		if got, want := view.Changed(), !reflect.DeepEqual(overlaid, pod); got != want {
			t.Fatalf("pod %d: Changed %v, overlay differs %v", i, got, want)
		}
		used := Usage{}
		if got, want := DecideResize(pod, view, &used, node, false), DecideResize(pod, As(overlaid), &used, node, false); got != want {
			t.Fatalf("pod %d: view decides %+v, overlay %+v", i, got, want)
		}
	}
}

// overlayForTest materializes UpdatePodFromAllocation the plain way.
func overlayForTest(pod *v1.Pod, record PodResources) *v1.Pod {
	out := pod.DeepCopy()
	for _, list := range [][]v1.Container{out.Spec.Containers, out.Spec.InitContainers} {
		for i := range list {
			if r, ok := record.ContainerResources[list[i].Name]; ok && !SameResources(&list[i].Resources, &r) {
				list[i].Resources = *r.DeepCopy()
			}
		}
	}
	if record.PodLevelResources != nil && out.Spec.Resources != nil && !SameResources(out.Spec.Resources, record.PodLevelResources) {
		out.Spec.Resources = record.PodLevelResources.DeepCopy()
	}
	return out
}

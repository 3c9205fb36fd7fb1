package allocation

import (
	"fmt"
	"math/rand"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/resizelet/resizelet/resize/profile"
)

// randomCapacityPod is a pod for the capacity check's differential tests,
// drawn from seed: regular, init and sidecar containers with cpu, memory
// and extended requests (each possibly absent or zero), and possibly
// overhead and pod-level requests.
func randomCapacityPod(seed int64) *v1.Pod {
	r := rand.New(rand.NewSource(seed))
	always := v1.ContainerRestartPolicyAlways
	list := func() v1.ResourceList {
		l := v1.ResourceList{}
		if r.Intn(4) > 0 {
			l[v1.ResourceCPU] = *resource.NewMilliQuantity(int64(r.Intn(3)*r.Intn(4000)), resource.DecimalSI)
		}
		if r.Intn(4) > 0 {
			l[v1.ResourceMemory] = *resource.NewQuantity(int64(r.Intn(3)*r.Intn(1<<20))*1024, resource.BinarySI)
		}
		if r.Intn(6) == 0 {
			l["example.com/dongle"] = *resource.NewQuantity(int64(r.Intn(4)), resource.DecimalSI)
		}
		return l
	}
	pod := &v1.Pod{}
	for c := 0; c < r.Intn(4); c++ {
		pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: fmt.Sprintf("c%d", c), Resources: v1.ResourceRequirements{Requests: list()}})
	}
	for c := 0; c < r.Intn(3); c++ {
		ic := v1.Container{Name: fmt.Sprintf("i%d", c), Resources: v1.ResourceRequirements{Requests: list()}}
		if r.Intn(2) == 0 {
			ic.RestartPolicy = &always
		}
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, ic)
	}
	if r.Intn(3) == 0 {
		pod.Spec.Overhead = list()
	}
	if r.Intn(3) == 0 {
		pod.Spec.Resources = &v1.ResourceRequirements{Requests: list()}
		if r.Intn(2) == 0 {
			pod.Spec.Resources.Limits = list()
		}
	}
	return pod
}

// checkCPUMemoryRequests holds cpuMemoryRequests, capacityFits' one walk,
// to resourceRequest for cpu and for memory, with the PodLevelResources
// gate on and off.
func checkCPUMemoryRequests(t *testing.T, pod *v1.Pod) {
	t.Helper()
	for _, gate := range []bool{false, true} {
		node := linuxNode(nil)
		node.Profile = profile.New(profile.V135, map[string]bool{profile.GatePodLevelResources: gate})
		cpu, memory := cpuMemoryRequests(pod, node)
		wantCPU, wantMemory := resourceRequest(pod, v1.ResourceCPU, node), resourceRequest(pod, v1.ResourceMemory, node)
		if cpu != wantCPU || memory != wantMemory {
			t.Fatalf("gate %v, pod %+v: cpuMemoryRequests = %d, %d; resourceRequest = %d, %d", gate, pod.Spec, cpu, memory, wantCPU, wantMemory)
		}
	}
}

// TestCPUMemoryRequestsIsResourceRequest compares the two on random pods.
func TestCPUMemoryRequestsIsResourceRequest(t *testing.T) {
	for seed := int64(0); seed < 3000; seed++ {
		checkCPUMemoryRequests(t, randomCapacityPod(seed))
	}
}

// FuzzCPUMemoryRequests compares the two on pods drawn from the fuzzed
// seed.
func FuzzCPUMemoryRequests(f *testing.F) {
	f.Fuzz(func(t *testing.T, seed int64) {
		checkCPUMemoryRequests(t, randomCapacityPod(seed))
	})
}

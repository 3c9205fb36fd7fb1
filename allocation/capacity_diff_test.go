package allocation

import (
	"math/rand"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/resizelet/resizelet/resize/profile"
)

// randomCapacityPod is a pod for the capacity check's differential tests,
// drawn from seed: regular, init and sidecar containers with cpu, memory
// and extended requests (each possibly absent or zero), and possibly
// overhead and pod-level requests.
func randomCapacityPod(seed int64) *v1.Pod {
	r := rand.New(rand.NewSource(seed))
	list := func() v1.ResourceList { return randomRequests(r, true) }
	pod := &v1.Pod{}
	addRandomContainers(r, pod, 0, 4, list)
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

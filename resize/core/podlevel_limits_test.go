package core

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/resizelet/resizelet/allocation"
	"github.com/resizelet/resizelet/resize/profile"
)

// TestContainerResourcesPodLevelLimits pins getCPULimit and getMemoryLimit
// (kuberuntime_container_linux.go): with PodLevelResources on and
// pod-level resources set, a container without a limit of its own is
// created with the pod's; its own limit wins; with the gate off the pod's
// limits are ignored. Shares come from the (pod-derived) limit only when
// the container has no cpu request at all.
func TestContainerResourcesPodLevelLimits(t *testing.T) {
	podLevel := resources("500m", "128Mi", "500m", "128Mi")
	for _, tc := range []struct {
		name                  string
		gate                  bool
		own                   v1.ResourceRequirements
		quota, shares, memory int64
	}{
		{"no limits: the pod's", true, v1.ResourceRequirements{}, 50000, 512, 128 << 20},
		{"own cpu limit wins, memory from the pod", true, resources("", "", "200m", ""), 20000, 204, 128 << 20},
		{"explicit zero cpu request: minimum shares", true, resources("0", "", "", ""), 50000, 2, 128 << 20},
		{"gate off: no limits", false, v1.ResourceRequirements{}, 0, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSettings(NodeConfig{Profile: profile.V135, FeatureGates: map[string]bool{profile.GatePodLevelResources: tc.gate}}.WithDefaults())
			pod := &v1.Pod{Spec: v1.PodSpec{Resources: &podLevel, Containers: []v1.Container{{Name: "c", Resources: tc.own}}}}
			pod.Status.QOSClass = v1.PodQOSBurstable
			got := s.cri.ContainerResources(pod, &pod.Spec.Containers[0])
			if got.CpuQuota != tc.quota || got.CpuShares != tc.shares || got.MemoryLimitInBytes != tc.memory {
				t.Errorf("got %s, want quota %d shares %d memory %d", FormatLinux(got), tc.quota, tc.shares, tc.memory)
			}
		})
	}
}

// TestPlanPodLevelLimits pins computePodResizeAction with
// containerResourcesFromRequirements (kuberuntime_manager.go): under
// pod-level resize a running container without limits of its own is
// compared with the allocated pod-level limits against its record with the
// actuated pod-level ones, so a pod-level limit change updates it; with the
// gate off it is left alone.
func TestPlanPodLevelLimits(t *testing.T) {
	oldPod, newPod := resources("500m", "128Mi", "500m", "128Mi"), resources("800m", "128Mi", "800m", "128Mi")
	pod := &v1.Pod{Spec: v1.PodSpec{Resources: &newPod, Containers: []v1.Container{{Name: "a"}}}}
	states := map[string]ContainerState{"a": {Name: "a", ID: "id-a", Running: true}}
	// The record setActuatedContainerResources writes at creation under
	// the gate: the pod-level limits of the time.
	rec := allocation.PodResources{
		ContainerResources: map[string]v1.ResourceRequirements{"a": {Limits: oldPod.Limits}},
		PodLevelResources:  &oldPod,
	}
	a := planPod(PodActions{}, pod, states, rec, true, true)
	if len(a.UpdateCPU) != 1 || a.UpdateCPU[0].Desired.CPULimit != 800 || a.UpdateCPU[0].Current.CPULimit != 500 || len(a.UpdateMemory) != 0 {
		t.Errorf("gate on: cpu updates %+v, memory updates %+v; want one cpu update 500 -> 800", a.UpdateCPU, a.UpdateMemory)
	}
	if !resizeInProgress(pod, states, rec, true) {
		t.Error("gate on: resizeInProgress = false, want true")
	}
	if a := planPod(PodActions{}, pod, states, allocation.PodResources{ContainerResources: map[string]v1.ResourceRequirements{"a": {}}}, true, false); len(a.UpdateCPU)+len(a.UpdateMemory) != 0 {
		t.Errorf("gate off: updates %+v %+v, want none", a.UpdateCPU, a.UpdateMemory)
	}
	// Once actuated (record and pod-level record at the new values),
	// nothing is left to do.
	done := allocation.PodResources{
		ContainerResources: map[string]v1.ResourceRequirements{"a": {Limits: newPod.Limits}},
		PodLevelResources:  &newPod,
	}
	if a := planPod(PodActions{}, pod, states, done, true, true); a.Resizing() {
		t.Errorf("actuated: actions %+v, want none", a)
	}
	if resizeInProgress(pod, states, done, true) {
		t.Error("actuated: resizeInProgress = true, want false")
	}
}

// TestActuatedLimits pins GetLimits (pkg/kubelet/util/util.go) as the
// actuated record takes it: the pod-level limits fill the ones a container
// lacks, its own win, nothing changes with the gate off, and the lists
// given are never changed.
func TestActuatedLimits(t *testing.T) {
	podLevel := resources("", "", "1", "1Gi")
	own := resources("", "", "200m", "").Limits
	got := actuatedLimits(&podLevel, own, true)
	cpu, mem := got[v1.ResourceCPU], got[v1.ResourceMemory]
	if cpu.String() != "200m" || mem.String() != "1Gi" || len(got) != 2 {
		t.Errorf("gate on: %v, want cpu 200m memory 1Gi", got)
	}
	if len(own) != 1 {
		t.Errorf("own limits changed to %v", own)
	}
	if got := actuatedLimits(&podLevel, own, false); len(got) != 1 {
		t.Errorf("gate off: %v, want the container's own", got)
	}
	if got := actuatedLimits(&podLevel, nil, true); len(got) != 2 {
		t.Errorf("no own limits: %v, want the pod's two", got)
	}
}

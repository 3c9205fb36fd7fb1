package core

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestStatusResources pins convertContainerStatusResources (§4.8).
func TestStatusResources(t *testing.T) {
	running := &v1.ContainerStatus{ContainerID: "containerd://c1", State: v1.ContainerState{Running: &v1.ContainerStateRunning{}},
		Resources: &v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceCPU: resource.MustParse("300m"), v1.ResourceMemory: resource.MustParse("1Gi")}}}
	for _, tc := range []struct {
		name     string
		alloc    v1.ResourceRequirements
		running  bool
		reported *runtimeapi.LinuxContainerResources
		prev     *v1.ContainerStatus
		want     v1.ResourceRequirements
	}{
		{
			name:     "not running shows the allocation",
			alloc:    resources("500m", "1Gi", "1", "2Gi"),
			reported: &runtimeapi.LinuxContainerResources{CpuShares: 2, CpuQuota: 1000, CpuPeriod: 100000},
			want:     resources("500m", "1Gi", "1", "2Gi"),
		},
		{
			name:     "running takes the runtime's cpu and memory limits and cpu request",
			alloc:    resources("500m", "1Gi", "1", "2Gi"),
			running:  true,
			reported: &runtimeapi.LinuxContainerResources{CpuShares: 307, CpuQuota: 30000, CpuPeriod: 100000, MemoryLimitInBytes: 3 << 30},
			want:     resources("300m", "1Gi", "300m", "3Gi"),
		},
		{
			name:     "shares round back up to the milli value (100m -> 102 shares -> 100m)",
			alloc:    resources("100m", "", "", ""),
			running:  true,
			reported: &runtimeapi.LinuxContainerResources{CpuShares: 102, CpuPeriod: 100000},
			want:     resources("100m", "", "", ""),
		},
		{
			name:     "tiny values keep the allocation (1m/5m, cgroup holds 2 shares and 1000us)",
			alloc:    resources("1m", "", "5m", ""),
			running:  true,
			reported: &runtimeapi.LinuxContainerResources{CpuShares: 2, CpuQuota: 1000, CpuPeriod: 100000},
			want:     resources("1m", "", "5m", ""),
		},
		{
			name:     "a tiny allocation against a larger actual value shows the actual one",
			alloc:    resources("2m", "", "10m", ""),
			running:  true,
			reported: &runtimeapi.LinuxContainerResources{CpuShares: 20, CpuQuota: 2000, CpuPeriod: 100000},
			want:     resources("20m", "", "20m", ""),
		},
		{
			name:     "memory request is always the allocated one",
			alloc:    resources("", "300Mi", "", "1Gi"),
			running:  true,
			reported: &runtimeapi.LinuxContainerResources{CpuShares: 2, MemoryLimitInBytes: 1 << 30},
			want:     resources("", "300Mi", "", "1Gi"),
		},
		{
			name:     "unreported limits keep the previous status value of the same container",
			alloc:    resources("", "", "500m", "2Gi"),
			running:  true,
			reported: &runtimeapi.LinuxContainerResources{},
			prev:     running,
			want:     resources("", "", "300m", "1Gi"),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := statusResources(tc.alloc, tc.running, &runtimeapi.ContainerResources{Linux: tc.reported}, tc.prev, "containerd://c1")
			for _, pair := range []struct {
				side      string
				got, want v1.ResourceList
			}{{"requests", got.Requests, tc.want.Requests}, {"limits", got.Limits, tc.want.Limits}} {
				if len(pair.got) != len(pair.want) {
					t.Fatalf("%s = %v, want %v", pair.side, pair.got, pair.want)
				}
				for name, q := range pair.want {
					if g, ok := pair.got[name]; !ok || g.Cmp(q) != 0 {
						t.Fatalf("%s[%s] = %v, want %v", pair.side, name, pair.got[name], q.String())
					}
				}
			}
		})
	}
}

// TestPodPhase pins the phase the status reports from the regular
// containers and the restart policy.
func TestPodPhase(t *testing.T) {
	running := v1.ContainerStatus{State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}
	exited := func(code int32) v1.ContainerStatus {
		return v1.ContainerStatus{State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code}}}
	}
	waiting := v1.ContainerStatus{State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{}}}
	for _, tc := range []struct {
		name     string
		policy   v1.RestartPolicy
		statuses []v1.ContainerStatus
		want     v1.PodPhase
	}{
		{"one running", v1.RestartPolicyNever, []v1.ContainerStatus{running, exited(1)}, v1.PodRunning},
		{"none yet", v1.RestartPolicyAlways, nil, v1.PodPending},
		{"waiting", v1.RestartPolicyAlways, []v1.ContainerStatus{waiting}, v1.PodPending},
		{"exited, will restart", v1.RestartPolicyAlways, []v1.ContainerStatus{exited(0)}, v1.PodRunning},
		{"all succeeded", v1.RestartPolicyNever, []v1.ContainerStatus{exited(0), exited(0)}, v1.PodSucceeded},
		{"one failed", v1.RestartPolicyNever, []v1.ContainerStatus{exited(0), exited(2)}, v1.PodFailed},
		{"failed under OnFailure restarts", v1.RestartPolicyOnFailure, []v1.ContainerStatus{exited(2)}, v1.PodRunning},
	} {
		running := 0
		for _, s := range tc.statuses {
			if s.State.Running != nil {
				running++
			}
		}
		pod := &v1.Pod{Spec: v1.PodSpec{RestartPolicy: tc.policy}}
		if got := podPhase(pod, tc.statuses, running); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

package core

import (
	"maps"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/resize/profile"
)

// TestReadingOf pins how the pod cgroup's values read back: v2 shares come
// through the lossy inverse of the weight, v1 keeps the huge unlimited
// memory value, and missing files read as unlimited at the default period.
func TestReadingOf(t *testing.T) {
	w, quota, mem := uint64(28), int64(70000), cgconfig.Unlimited
	for _, tc := range []struct {
		name    string
		version cgconfig.Version
		values  cgconfig.Values
		want    PodCgroupReading
	}{
		{"v2", cgconfig.V2, cgconfig.Values{CPUWeight: &w, CPUQuota: &quota, MemoryLimit: &mem},
			PodCgroupReading{Memory: -1, Quota: 70000, Period: 100000, Shares: 709}}, // 27*262142/9999 + 2
		{"v1 unlimited memory", cgconfig.V1, cgconfig.Values{MemoryLimit: &mem},
			PodCgroupReading{Memory: cgconfig.V1UnlimitedMemory, Quota: -1, Period: 100000}},
		{"nothing", cgconfig.V2, cgconfig.Values{}, PodCgroupReading{Memory: -1, Quota: -1, Period: 100000}},
	} {
		if got := readingOf(tc.values, tc.version); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
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

// TestContainerUnifiedByVersion pins the unified settings of a container's
// resources (generateLinuxContainerResources in
// pkg/kubelet/kuberuntime/kuberuntime_container_linux.go): memory.oom.group
// on cgroup v2 in every version; from 1.37 with MemoryQoS on (its default)
// memory.min and memory.low of "0" under the default reservation policy
// None, and no memory.high without a throttling factor; with MemoryQoS off
// on 1.37, memory.high "max"; nothing on cgroup v1.
func TestContainerUnifiedByVersion(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  NodeConfig
		want map[string]string
	}{
		{"1.35", NodeConfig{Profile: profile.V135}, map[string]string{"memory.oom.group": "1"}},
		{"1.36", NodeConfig{Profile: profile.V136}, map[string]string{"memory.oom.group": "1"}},
		{"1.36 MemoryQoS gate on is not reproduced", NodeConfig{Profile: profile.V136, FeatureGates: map[string]bool{profile.GateMemoryQoS: true}},
			map[string]string{"memory.oom.group": "1"}},
		{"1.37", NodeConfig{Profile: profile.V137}, map[string]string{"memory.oom.group": "1", "memory.min": "0", "memory.low": "0"}},
		{"1.37 MemoryQoS off", NodeConfig{Profile: profile.V137, FeatureGates: map[string]bool{profile.GateMemoryQoS: false}},
			map[string]string{"memory.oom.group": "1", "memory.high": "max"}},
		{"1.37 cgroup v1", NodeConfig{Profile: profile.V137, CgroupVersion: cgconfig.V1}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSettings(tc.cfg.WithDefaults())
			pod := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Resources: resources("100m", "64Mi", "", "128Mi")}}}}
			pod.Status.QOSClass = v1.PodQOSBurstable
			got := s.cri.ContainerResources(pod, &pod.Spec.Containers[0]).Unified
			if !maps.Equal(got, tc.want) {
				t.Errorf("unified = %v, want %v", got, tc.want)
			}
		})
	}
}

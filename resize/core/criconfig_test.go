package core

import (
	"maps"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/resize/profile"
)

// TestLinuxResources pins calculateLinuxResources
// (kuberuntime_container_linux.go): shares from the request, or from the
// limit when there is no request; the memory limit when set; with CFS
// quota on, the quota of the limit (0 for none) and the period.
func TestLinuxResources(t *testing.T) {
	q := func(s string) *resource.Quantity {
		if s == "" {
			return &resource.Quantity{}
		}
		v := resource.MustParse(s)
		return &v
	}
	off := false
	for _, tc := range []struct {
		name                       string
		cfg                        NodeConfig
		cpuReq, cpuLim, memLim     string
		shares, quota, period, mem int64
	}{
		{name: "request and limit", cpuReq: "250m", cpuLim: "500m", memLim: "128Mi", shares: 256, quota: 50000, period: 100000, mem: 128 << 20},
		{name: "limit only gives the shares too", cpuLim: "500m", shares: 512, quota: 50000, period: 100000},
		{name: "nothing: minimum shares, no quota", shares: 2, quota: 0, period: 100000},
		{name: "a tiny limit gets the minimum quota", cpuReq: "1m", cpuLim: "1m", shares: 2, quota: 1000, period: 100000},
		{name: "CFS quota off: no quota, no period", cfg: NodeConfig{CPUCFSQuota: &off}, cpuReq: "250m", cpuLim: "500m", shares: 256},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSettings(tc.cfg.WithDefaults())
			got := s.linuxResources(*q(tc.cpuReq), *q(tc.cpuLim), *q(tc.memLim))
			if got.CpuShares != tc.shares || got.CpuQuota != tc.quota || got.CpuPeriod != tc.period || got.MemoryLimitInBytes != tc.mem {
				t.Errorf("got %s, want shares %d quota %d period %d memory %d", FormatLinux(got), tc.shares, tc.quota, tc.period, tc.mem)
			}
		})
	}
}

// TestOOMScoreAdj pins GetContainerOOMScoreAdjust (pkg/kubelet/qos):
// Guaranteed -997, BestEffort 1000, Burstable 1000 - 1000*request/capacity
// kept within [3, 999].
func TestOOMScoreAdj(t *testing.T) {
	s := newSettings(NodeConfig{Capacity: v1.ResourceList{v1.ResourceMemory: resource.MustParse("1000Mi")}}.WithDefaults())
	for _, tc := range []struct {
		class  v1.PodQOSClass
		memReq string
		want   int64
	}{
		{v1.PodQOSGuaranteed, "100Mi", -997},
		{v1.PodQOSBestEffort, "", 1000},
		{v1.PodQOSBurstable, "100Mi", 900},
		{v1.PodQOSBurstable, "999Mi", 3},
		{v1.PodQOSBurstable, "", 999},
	} {
		c := &v1.Container{Resources: resources("", tc.memReq, "", "")}
		pod := &v1.Pod{Status: v1.PodStatus{QOSClass: tc.class}}
		if got := s.oomScoreAdj(pod, c); got != tc.want {
			t.Errorf("%s with %q: %d, want %d", tc.class, tc.memReq, got, tc.want)
		}
	}
}

// TestContainerResourcesOnCgroupV2: on cgroup v2 the kubelet asks for
// memory.oom.group so that the whole container is killed on OOM; on v1 it
// cannot.
func TestContainerResourcesOnCgroupV2(t *testing.T) {
	for _, tc := range []struct {
		version cgconfig.Version
		want    string
	}{{cgconfig.V2, "1"}, {cgconfig.V1, ""}} {
		s := newSettings(NodeConfig{CgroupVersion: tc.version}.WithDefaults())
		got := s.containerResources(&v1.Pod{}, &v1.Container{})
		if got.Unified["memory.oom.group"] != tc.want {
			t.Errorf("%s: unified = %v, want memory.oom.group %q", tc.version, got.Unified, tc.want)
		}
	}
}

// TestSandboxResourcesRequest pins generateUpdatePodSandboxResourcesRequest:
// the runtime is sent the overhead and the pod cgroup's values minus the
// overhead.
func TestSandboxResourcesRequest(t *testing.T) {
	s := newSettings(NodeConfig{}.WithDefaults())
	pod := &v1.Pod{Spec: v1.PodSpec{Overhead: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("10Mi")}}}
	shares, quota, period, mem := uint64(1126), int64(110000), uint64(100000), int64(110<<20)
	req := s.sandboxResourcesRequest("sb", pod, cgconfig.ResourceConfig{CPUShares: &shares, CPUQuota: &quota, CPUPeriod: &period, Memory: &mem})
	want := &runtimeapi.LinuxContainerResources{CpuShares: 1024, CpuQuota: 100000, CpuPeriod: 100000, MemoryLimitInBytes: 100 << 20}
	if got := req.GetResources(); FormatLinux(got) != FormatLinux(want) {
		t.Errorf("resources = %s, want %s", FormatLinux(got), FormatLinux(want))
	}
	if got := req.GetOverhead(); got.CpuShares != 102 || got.CpuQuota != 10000 || got.MemoryLimitInBytes != 10<<20 {
		t.Errorf("overhead = %s", FormatLinux(got))
	}
	if req.PodSandboxId != "sb" {
		t.Errorf("sandbox = %q", req.PodSandboxId)
	}
}

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
			got := s.containerResources(pod, &pod.Spec.Containers[0]).Unified
			if !maps.Equal(got, tc.want) {
				t.Errorf("unified = %v, want %v", got, tc.want)
			}
		})
	}
}

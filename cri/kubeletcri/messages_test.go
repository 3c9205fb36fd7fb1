package kubeletcri

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// defaults are the settings of a kubelet at its defaults: CFS quota on
// with the kernel's period.
var defaults = Settings{CgroupVersion: cgconfig.V2, EnforceCPULimits: true, CPUPeriod: cgconfig.QuotaPeriod}

// resources makes requirements from quantities; "" leaves one out.
func resources(cpuReq, memReq, cpuLim, memLim string) v1.ResourceRequirements {
	var r v1.ResourceRequirements
	set := func(list *v1.ResourceList, name v1.ResourceName, q string) {
		if q == "" {
			return
		}
		if *list == nil {
			*list = v1.ResourceList{}
		}
		(*list)[name] = resource.MustParse(q)
	}
	set(&r.Requests, v1.ResourceCPU, cpuReq)
	set(&r.Requests, v1.ResourceMemory, memReq)
	set(&r.Limits, v1.ResourceCPU, cpuLim)
	set(&r.Limits, v1.ResourceMemory, memLim)
	return r
}

// TestLinuxResources pins calculateLinuxResources
// (kuberuntime_container_linux.go): shares from the request, or from the
// limit when there is no request, and from an explicit zero request the
// minimum; the memory limit when set; with CFS quota on, the quota of the
// limit (0 for none) and the period.
func TestLinuxResources(t *testing.T) {
	q := func(s string) resource.Quantity {
		if s == "" {
			return resource.Quantity{}
		}
		return resource.MustParse(s)
	}
	off := defaults
	off.EnforceCPULimits = false
	for _, tc := range []struct {
		name                       string
		s                          *Settings
		cpuReq, cpuLim, memLim     string
		shares, quota, period, mem int64
	}{
		{name: "request and limit", cpuReq: "250m", cpuLim: "500m", memLim: "128Mi", shares: 256, quota: 50000, period: 100000, mem: 128 << 20},
		{name: "limit only gives the shares too", cpuLim: "500m", shares: 512, quota: 50000, period: 100000},
		{name: "explicit zero request: minimum shares", cpuReq: "0", cpuLim: "500m", shares: 2, quota: 50000, period: 100000},
		{name: "nothing: minimum shares, no quota", shares: 2, quota: 0, period: 100000},
		{name: "a tiny limit gets the minimum quota", cpuReq: "1m", cpuLim: "1m", shares: 2, quota: 1000, period: 100000},
		{name: "CFS quota off: no quota, no period", s: &off, cpuReq: "250m", cpuLim: "500m", shares: 256},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(defaults)
			if tc.s != nil {
				m = New(*tc.s)
			}
			var req *resource.Quantity
			if tc.cpuReq != "" {
				r := q(tc.cpuReq)
				req = &r
			}
			got := m.calculateLinuxResources(req, q(tc.cpuLim), q(tc.memLim))
			if got.CpuShares != tc.shares || got.CpuQuota != tc.quota || got.CpuPeriod != tc.period || got.MemoryLimitInBytes != tc.mem {
				t.Errorf("got %v, want shares %d quota %d period %d memory %d", got, tc.shares, tc.quota, tc.period, tc.mem)
			}
		})
	}
}

// TestOOMScoreAdj pins GetContainerOOMScoreAdjust (pkg/kubelet/qos):
// Guaranteed -997, BestEffort 1000, Burstable 1000 - 1000*request/capacity
// kept within [3, 999].
func TestOOMScoreAdj(t *testing.T) {
	m := New(Settings{MemoryCapacity: 1000 << 20})
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
		if got := m.oomScoreAdj(pod, c); got != tc.want {
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
		m := New(Settings{CgroupVersion: tc.version})
		got := m.ContainerResources(&v1.Pod{}, &v1.Container{})
		if got.Unified["memory.oom.group"] != tc.want {
			t.Errorf("%s: unified = %v, want memory.oom.group %q", tc.version, got.Unified, tc.want)
		}
	}
}

// TestSandboxResources pins generateUpdatePodSandboxResourcesRequest: the
// runtime is sent the overhead and the pod cgroup's values minus the
// overhead.
func TestSandboxResources(t *testing.T) {
	m := New(defaults)
	pod := &v1.Pod{Spec: v1.PodSpec{Overhead: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("10Mi")}}}
	shares, quota, period, mem := uint64(1126), int64(110000), uint64(100000), int64(110<<20)
	req := m.SandboxResources("sb", pod, cgconfig.ResourceConfig{CPUShares: &shares, CPUQuota: &quota, CPUPeriod: &period, Memory: &mem})
	got := req.GetResources()
	if got.CpuShares != 1024 || got.CpuQuota != 100000 || got.CpuPeriod != 100000 || got.MemoryLimitInBytes != 100<<20 {
		t.Errorf("resources = %v, want shares 1024 quota 100000 period 100000 memory 100Mi", got)
	}
	if got := req.GetOverhead(); got.CpuShares != 102 || got.CpuQuota != 10000 || got.MemoryLimitInBytes != 10<<20 {
		t.Errorf("overhead = %v", got)
	}
	if req.PodSandboxId != "sb" {
		t.Errorf("sandbox = %q", req.PodSandboxId)
	}
}

// TestResizeMemoryCheck: the check runs on a decrease, container and pod
// alike, and not on an increase.
func TestResizeMemoryCheck(t *testing.T) {
	m := New(Settings{CgroupVersion: cgconfig.V1, EnforceCPULimits: true, CPUPeriod: cgconfig.QuotaPeriod})
	pod := func(r v1.ResourceRequirements) *v1.Pod {
		p := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c1", Resources: r}}}}
		p.Name, p.Namespace, p.UID = "p", "default", "uid-p"
		p.Status.QOSClass = v1.PodQOSBurstable
		return p
	}
	old := pod(resources("250m", "64Mi", "500m", "96Mi"))
	lower := pod(resources("250m", "32Mi", "500m", "32Mi"))
	id := func(string) string { return "ctr-1" }
	stats := map[string]*runtimeapi.ContainerStats{"c1": {Memory: &runtimeapi.MemoryUsage{UsageBytes: &runtimeapi.UInt64Value{Value: 40 << 20}}}}
	mc, ok := m.ResizeMemoryCheck(old, lower, id)
	if !ok || len(mc.Containers) != 1 || mc.Containers[0].ID != "ctr-1" {
		t.Fatalf("decrease: check %+v, %v; want one container, ctr-1", mc, ok)
	}
	usage := int64(41 << 20)
	want := `cannot decrease memory limits: [attempting to set pod memory limit (33554432) below current usage (42991616), attempting to set container "c1" memory limit (33554432) below current usage (42991616)]`
	if err := mc.Verdict(lower, &usage, stats); err == nil || err.Error() != want {
		t.Errorf("below usage: %v; want %s", err, want)
	}
	usage = 1 << 20
	want = `cannot decrease memory limits: missing container "c1" memory usage`
	if err := mc.Verdict(lower, &usage, nil); err == nil || err.Error() != want {
		t.Errorf("no stats: %v; want %s", err, want)
	}
	if _, ok := m.ResizeMemoryCheck(lower, old, id); ok {
		t.Error("increase: checked, want no check")
	}
}

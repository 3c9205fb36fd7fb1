package cgconfig

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestPodCgroupName(t *testing.T) {
	tests := []struct {
		qos    v1.PodQOSClass
		driver Driver
		want   string
	}{
		{v1.PodQOSGuaranteed, DriverCgroupfs, "kubepods/pod1234-5678"},
		{v1.PodQOSBurstable, DriverCgroupfs, "kubepods/burstable/pod1234-5678"},
		{v1.PodQOSBestEffort, DriverCgroupfs, "kubepods/besteffort/pod1234-5678"},
		{v1.PodQOSGuaranteed, DriverSystemd, "kubepods.slice/kubepods-pod1234_5678.slice"},
		{v1.PodQOSBurstable, DriverSystemd, "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234_5678.slice"},
		{v1.PodQOSBestEffort, DriverSystemd, "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1234_5678.slice"},
	}
	for _, tt := range tests {
		if got := PodCgroupName(tt.qos, types.UID("1234-5678"), tt.driver); got != tt.want {
			t.Errorf("PodCgroupName(%s, %s) = %q, want %q", tt.qos, tt.driver, got, tt.want)
		}
	}
}

func TestContainerCgroupName(t *testing.T) {
	tests := []struct {
		driver Driver
		pod    string
		want   string
	}{
		{DriverCgroupfs, "kubepods/burstable/pod1234-5678", "kubepods/burstable/pod1234-5678/abc123"},
		{DriverSystemd, "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234_5678.slice",
			"kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234_5678.slice/cri-containerd-abc123.scope"},
	}
	for _, tt := range tests {
		if got := ContainerCgroupName(tt.pod, "abc123", tt.driver); got != tt.want {
			t.Errorf("ContainerCgroupName(%q, %s) = %q, want %q", tt.pod, tt.driver, got, tt.want)
		}
	}
}

// TestPodCgroupPathBelowARoot: the kubelet's cgroup name is the root's
// components, then kubepods and the rest; the systemd driver makes one
// chain of slices of all of them (container_manager_linux.go:
// ParseCgroupfsToCgroupName, NewCgroupName; CgroupName.ToSystemd).
func TestPodCgroupPathBelowARoot(t *testing.T) {
	tests := []struct {
		root   string
		driver Driver
		want   string
	}{
		{"/", DriverSystemd, "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234_5678.slice"},
		{"/resizelet-12-1", DriverCgroupfs, "resizelet-12-1/kubepods/burstable/pod1234-5678"},
		{"/resizelet-12-1", DriverSystemd, "resizelet_12_1.slice/resizelet_12_1-kubepods.slice/resizelet_12_1-kubepods-burstable.slice/resizelet_12_1-kubepods-burstable-pod1234_5678.slice"},
		{"a/b/", DriverSystemd, "a.slice/a-b.slice/a-b-kubepods.slice/a-b-kubepods-burstable.slice/a-b-kubepods-burstable-pod1234_5678.slice"},
	}
	for _, tt := range tests {
		if got := PodCgroupPath(tt.root, v1.PodQOSBurstable, types.UID("1234-5678"), tt.driver); got != tt.want {
			t.Errorf("PodCgroupPath(%q, %s) = %q, want %q", tt.root, tt.driver, got, tt.want)
		}
	}
}

// TestExpandSlice holds ExpandSlice to runc's and libcontainer's: the
// prefixes' slices, the root slice "-.slice" as the root, and errors for
// names systemd refuses.
func TestExpandSlice(t *testing.T) {
	for in, want := range map[string]string{
		"-.slice":          "",
		"a.slice":          "a.slice",
		"a-b-c.slice":      "a.slice/a-b.slice/a-b-c.slice",
		"kubepods_x.slice": "kubepods_x.slice",
	} {
		if got, err := ExpandSlice(in); err != nil || got != want {
			t.Errorf("ExpandSlice(%q) = %q, %v, want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", ".slice", "a", "a.scope", "-a.slice", "a-.slice", "a--b.slice", "a/b.slice"} {
		if got, err := ExpandSlice(in); err == nil {
			t.Errorf("ExpandSlice(%q) = %q, want an error", in, got)
		}
	}
	if got := SystemdName(); got != "" {
		t.Errorf("SystemdName() = %q, want the root", got)
	}
}

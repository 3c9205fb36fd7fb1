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

package cgroup

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// TestPodCgroupNamesAreValidPaths checks that every pod cgroup name the
// kubelet forms is a path both managers accept.
func TestPodCgroupNamesAreValidPaths(t *testing.T) {
	for _, driver := range []Driver{DriverCgroupfs, DriverSystemd} {
		for _, class := range []v1.PodQOSClass{v1.PodQOSGuaranteed, v1.PodQOSBurstable, v1.PodQOSBestEffort} {
			name := cgconfig.PodCgroupName(class, types.UID("1234-5678"), driver)
			if err := simCheckPath(name); err != nil {
				t.Errorf("SimKernel: %q is not a valid cgroup path: %v", name, err)
			}
			if err := validatePath(name); err != nil {
				t.Errorf("cgroupfs manager: %q is not a valid cgroup path: %v", name, err)
			}
		}
	}
}

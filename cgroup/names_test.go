package cgroup

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/cgroup/internal/cgrouptest"
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

// TestSimKernelPathRule checks that SimKernel refuses cgrouptest.BadPaths in
// every call with ErrInvalidPath naming the path, and takes
// cgrouptest.OddPaths.
func TestSimKernelPathRule(t *testing.T) {
	for _, version := range []Version{V1, V2} {
		m := NewSimKernel(version)
		for _, p := range cgrouptest.BadPaths {
			errs := map[string]error{"Create": m.Create(p), "Delete": m.Delete(p), "SetUsage": m.SetUsage(p, 1)}
			_, errs["Get"] = m.Get(p)
			_, errs["Set"] = m.Set(p, Values{CPUWeight: mtPtr(uint64(5)), CPUShares: mtPtr(uint64(5))})
			_, errs["ReadFile"] = m.ReadFile(p, "cpu.max")
			_, errs["MemoryUsage"] = m.MemoryUsage(p)
			for op, err := range errs {
				if !errors.Is(err, ErrInvalidPath) || !containsQuoted(err.Error(), p) {
					t.Errorf("%v: %s(%q) = %v, want ErrInvalidPath naming the path", version, op, p, err)
				}
			}
			if m.Exists(p) || m.Files(p) != nil {
				t.Errorf("%v: %q exists", version, p)
			}
		}
		if diff := cmp.Diff([]string{""}, m.Paths()); diff != "" {
			t.Errorf("%v: bad paths made cgroups (-want +got):\n%s", version, diff)
		}
		for _, p := range cgrouptest.OddPaths {
			if err := m.Create(p); err != nil || !m.Exists(p) {
				t.Errorf("%v: Create(%q) = %v, exists %v; want it made", version, p, err, m.Exists(p))
			}
		}
	}
}

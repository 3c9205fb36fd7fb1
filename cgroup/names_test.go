package cgroup

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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

// The cgroup paths both managers refuse, and some unusual ones both take.
// The refused ones hold an empty, "." or ".." component, a leading or
// trailing "/", a component longer than 255 bytes, or a control
// character: the kernel refuses a newline in a cgroup name, and the other
// control characters are refused with it.
var (
	badCgroupPaths = []string{
		"a\nb", "pod/c\n", "a\x00b", "a\tb", "a\rb", "a\x1bb", "a\x7fb", "\x01",
		"..", "../x", "a/../b", "a/..", ".", "a/./b",
		"/abs", "a/", "a//b",
		strings.Repeat("n", 256), "a/" + strings.Repeat("n", 256),
	}
	oddCgroupPaths = []string{
		"a b", "pod-ü", "a\u00a0b", "...", ".hidden", "a.b", "a:b", `a\b`, "a-1/b_2", strings.Repeat("n", 255),
	}
)

// TestSimKernelPathRule checks that SimKernel refuses badCgroupPaths in
// every call with ErrInvalidPath naming the path, and takes
// oddCgroupPaths.
func TestSimKernelPathRule(t *testing.T) {
	for _, version := range []Version{V1, V2} {
		m := NewSimKernel(version)
		for _, p := range badCgroupPaths {
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
		for _, p := range oddCgroupPaths {
			if err := m.Create(p); err != nil || !m.Exists(p) {
				t.Errorf("%v: Create(%q) = %v, exists %v; want it made", version, p, err, m.Exists(p))
			}
		}
	}
}

package cri

import (
	"context"
	"testing"

	"github.com/resizelet/resizelet/cgroup"
)

// TestCgroupDriverOfSimContainerd: the in-memory runtime reports the driver
// it was given, also from below decorators, and the version of the cgroup
// manager it writes through.
func TestCgroupDriverOfSimContainerd(t *testing.T) {
	ctx := context.Background()
	for _, d := range []cgroup.Driver{cgroup.DriverCgroupfs, cgroup.DriverSystemd} {
		mem := NewSimContainerd(cgroup.NewSimKernel(cgroup.V1), WithDriver(d))
		rt := NewRecorder(NewFaultInjector(mem))
		got, known, err := CgroupDriverOf(ctx, rt)
		if err != nil || !known || got != d {
			t.Errorf("CgroupDriverOf(SimContainerd with %s) = %q, %v, %v; want %q, true, nil", d, got, known, err, d)
		}
		if v, ok := CgroupVersionOf(rt); !ok || v != cgroup.V1 {
			t.Errorf("CgroupVersionOf = %v, %v; want v1, true", v, ok)
		}
	}
	// A runtime without RuntimeConfig, and a wrapper that hides what it
	// wraps, cannot tell.
	hidden := struct{ Runtime }{NewSimContainerd(cgroup.NewSimKernel(cgroup.V2), WithDriver(cgroup.DriverSystemd))}
	if d, known, err := CgroupDriverOf(ctx, hidden); known || err != nil {
		t.Errorf("CgroupDriverOf(a runtime without RuntimeConfig) = %q, %v, %v; want unknown, no error", d, known, err)
	}
	if v, ok := CgroupVersionOf(hidden); ok {
		t.Errorf("CgroupVersionOf(a runtime that does not say) = %v, true", v)
	}
}

package cri

import (
	"testing"

	"github.com/resizelet/resizelet/cgroup"
)

// TestDeprecatedNames checks that the simulated runtime's old names still
// build and behave as the new ones: NewMemory makes a *SimContainerd with
// its options applied that finds the cgroup model it is given.
func TestDeprecatedNames(t *testing.T) {
	var opt MemoryOption = WithDriver(cgroup.DriverSystemd)
	var rt *Memory = NewMemory(cgroup.NewSimKernel(cgroup.V2), opt)
	if rt.driver != cgroup.DriverSystemd || rt.model == nil {
		t.Errorf("NewMemory(SimKernel, WithDriver(systemd)) = driver %q, model %v", rt.driver, rt.model)
	}
}

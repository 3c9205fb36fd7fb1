package cgroup

import "testing"

// TestDeprecatedNames checks that the simulator's old names still build
// and behave as the new ones: NewMemory makes a *SimKernel with its
// options applied, and panics on an unknown version like NewSimKernel.
func TestDeprecatedNames(t *testing.T) {
	var opt MemoryOption = WithHostMemory(1 << 30)
	var m *Memory = NewMemory(V1, opt)
	if m.Version() != V1 || m.hostMemory != 1<<30 {
		t.Errorf("NewMemory(V1, WithHostMemory(1Gi)) = version %v, host memory %d", m.Version(), m.hostMemory)
	}
	defer func() {
		if recover() == nil {
			t.Error("NewMemory(3) did not panic")
		}
	}()
	NewMemory(Version(3))
}

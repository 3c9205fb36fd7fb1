//go:build linux

package cgroupfs

import (
	"errors"
	"testing"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/internal/cgrouptest"
)

// TestManagersShareThePathRule runs cgrouptest.BadPaths and cgrouptest.OddPaths
// through FS, on a temp-dir tree, and through cgroup.SimKernel, and checks that
// each call of one refuses a path exactly when the same call of the other
// does, both with cgroup.ErrInvalidPath.
func TestManagersShareThePathRule(t *testing.T) {
	for _, version := range []cgroup.Version{cgroup.V1, cgroup.V2} {
		t.Run(version.String(), func(t *testing.T) {
			managers := map[string]cgroup.Manager{"FS": newFakeFS(t, version), "SimKernel": cgroup.NewSimKernel(version)}
			for _, p := range append(append([]string{}, cgrouptest.BadPaths...), cgrouptest.OddPaths...) {
				refused := map[string]map[string]bool{}
				for name, m := range managers {
					errs := map[string]error{"Create": m.Create(p)}
					_, errs["Get"] = m.Get(p)
					_, errs["ReadFile"] = m.ReadFile(p, "cpu.shares")
					_, errs["MemoryUsage"] = m.MemoryUsage(p)
					refused[name] = map[string]bool{"Exists": !m.Exists(p)}
					errs["Delete"] = m.Delete(p)
					for op, err := range errs {
						refused[name][op] = errors.Is(err, cgroup.ErrInvalidPath)
					}
				}
				for op, fs := range refused["FS"] {
					if sim := refused["SimKernel"][op]; sim != fs {
						t.Errorf("%s(%q): FS refuses it %v, cgroup.SimKernel %v", op, p, fs, sim)
					}
				}
			}
		})
	}
}

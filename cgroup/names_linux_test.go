//go:build linux

package cgroup

import (
	"errors"
	"testing"
)

// TestManagersShareThePathRule runs badCgroupPaths and oddCgroupPaths
// through FS, on a temp-dir tree, and through SimKernel, and checks that
// each call of one refuses a path exactly when the same call of the other
// does, both with ErrInvalidPath.
func TestManagersShareThePathRule(t *testing.T) {
	for _, version := range []Version{V1, V2} {
		t.Run(version.String(), func(t *testing.T) {
			managers := map[string]Manager{"FS": newFakeFS(t, version), "SimKernel": NewSimKernel(version)}
			for _, p := range append(append([]string{}, badCgroupPaths...), oddCgroupPaths...) {
				refused := map[string]map[string]bool{}
				for name, m := range managers {
					errs := map[string]error{"Create": m.Create(p)}
					_, errs["Get"] = m.Get(p)
					_, errs["ReadFile"] = m.ReadFile(p, "cpu.shares")
					_, errs["MemoryUsage"] = m.MemoryUsage(p)
					refused[name] = map[string]bool{"Exists": !m.Exists(p)}
					errs["Delete"] = m.Delete(p)
					for op, err := range errs {
						refused[name][op] = errors.Is(err, ErrInvalidPath)
					}
				}
				for op, fs := range refused["FS"] {
					if sim := refused["SimKernel"][op]; sim != fs {
						t.Errorf("%s(%q): FS refuses it %v, SimKernel %v", op, p, fs, sim)
					}
				}
			}
		})
	}
}

//go:build linux

package cgroupfs

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/resizelet/resizelet/cgroup"
)

// TestRemoveTreeOnDirectoryTrees: on an FS over an ordinary directory tree
// the cgroups are removed with their files, from both v1 hierarchies.
func TestRemoveTreeOnDirectoryTrees(t *testing.T) {
	for _, v := range []cgroup.Version{cgroup.V1, cgroup.V2} {
		t.Run(v.String(), func(t *testing.T) {
			f := newFakeFS(t, v)
			for _, p := range []string{"priv/kubepods/pod1", "other"} {
				if err := f.Create(p); err != nil {
					t.Fatal(err)
				}
			}
			removed, err := cgroup.RemoveTree(f, "priv")
			if err != nil {
				t.Fatalf("RemoveTree: %v", err)
			}
			if want := []string{"priv/kubepods/pod1", "priv/kubepods", "priv"}; !slices.Equal(removed, want) {
				t.Errorf("removed %v, want %v", removed, want)
			}
			if f.Exists("priv") || !f.Exists("other") {
				t.Errorf("after cgroup.RemoveTree: priv exists %v, other exists %v; want false, true", f.Exists("priv"), f.Exists("other"))
			}
			for _, dir := range []string{f.root, f.mounts["cpu"], f.mounts["memory"]} {
				if dir == "" {
					continue
				}
				if _, err := os.Stat(filepath.Join(dir, "priv")); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s/priv: %v, want it gone", dir, err)
				}
			}
		})
	}
}

// TestRemoveTreeRealHostEveryHierarchy: on the host's cgroup filesystem
// RemoveTree removes the cgroup from every hierarchy, also those the FS
// does not write (a runtime creates pod cgroups in pids, cpuset, ...).
func TestRemoveTreeRealHostEveryHierarchy(t *testing.T) {
	f := realHostFS(t)
	parent := "resizelet-treetest-" + strconv.Itoa(os.Getpid())
	t.Cleanup(func() { removeTree(t, f, parent) })
	if err := f.Create(parent + "/kubepods/pod1"); err != nil {
		t.Fatal(err)
	}
	mounts, err := Mounts(f.Root())
	if err != nil {
		t.Fatal(err)
	}
	// A directory in every other hierarchy, as runc makes them.
	var extra []string
	for _, m := range mounts {
		dir := filepath.Join(m, parent, "kubepods", "pod1")
		if _, err := os.Stat(dir); err == nil {
			continue
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatalf("mkdir %s: %v", dir, err)
		}
		extra = append(extra, dir)
	}
	removed, err := cgroup.RemoveTree(f, parent)
	if err != nil {
		t.Fatalf("RemoveTree: %v", err)
	}
	for _, dir := range extra {
		if !slices.Contains(removed, dir) {
			t.Errorf("RemoveTree did not report removing %s (removed %v)", dir, removed)
		}
	}
	for _, m := range mounts {
		if _, err := os.Stat(filepath.Join(m, parent)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s/%s: %v, want it gone", m, parent, err)
		}
	}
}

// realHostFS returns an FS over the host's /sys/fs/cgroup, of whichever
// version, or skips without root or cgroups (or fails when
// RESIZELET_REQUIRE_CGROUP is set).
func realHostFS(t *testing.T) *FS {
	t.Helper()
	skip := t.Skipf
	if os.Getenv(requireEnv) != "" {
		skip = t.Fatalf
	}
	if os.Geteuid() != 0 {
		skip("real cgroup test needs root")
	}
	f, err := New("/sys/fs/cgroup")
	if err != nil {
		skip("no usable cgroup hierarchy at /sys/fs/cgroup: %v", err)
	}
	return f
}

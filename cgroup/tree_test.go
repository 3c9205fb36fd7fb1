package cgroup

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
)

// TestRemoveTreeOnSimKernel: the cgroup and everything below it go,
// children first; its siblings and the root stay; a cgroup that does not
// exist is no error.
func TestRemoveTreeOnSimKernel(t *testing.T) {
	k := NewSimKernel(V2)
	for _, p := range []string{"priv/kubepods/burstable/pod1/ctr", "priv/kubepods/besteffort", "privy/x", "kubepods/pod2"} {
		if err := k.Create(p); err != nil {
			t.Fatal(err)
		}
	}
	// Through a decorator, as the node's manager usually is.
	removed, err := RemoveTree(NewRecorder(k), "priv")
	if err != nil {
		t.Fatalf("RemoveTree: %v", err)
	}
	want := []string{"priv/kubepods/burstable/pod1/ctr", "priv/kubepods/burstable/pod1", "priv/kubepods/besteffort", "priv/kubepods/burstable", "priv/kubepods", "priv"}
	if !slices.Equal(removed, want) {
		t.Errorf("removed %v, want deepest first %v", removed, want)
	}
	if got, want := k.Paths(), []string{"", "kubepods", "kubepods/pod2", "privy", "privy/x"}; !slices.Equal(got, want) {
		t.Errorf("left %v, want %v", got, want)
	}
	if removed, err := RemoveTree(k, "priv"); err != nil || len(removed) != 0 {
		t.Errorf("RemoveTree of a cgroup that is gone = %v, %v; want nothing and no error", removed, err)
	}
}

// TestRemoveTreeRefusesTheRootAndBadPaths: the root is never removed, and
// a path that would leave the root is refused before anything is touched.
func TestRemoveTreeRefusesTheRootAndBadPaths(t *testing.T) {
	k := NewSimKernel(V1)
	if err := k.Create("a/b"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"", "../a", "a/../..", "/a"} {
		if _, err := RemoveTree(k, name); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("RemoveTree(%q) = %v, want ErrInvalidPath", name, err)
		}
	}
	if !k.Exists("a/b") {
		t.Error("a refused RemoveTree removed a cgroup")
	}
}

// TestRemoveTreeKeepsGoingPastABusyCgroup: a cgroup with memory charged
// (a process) is refused as rmdir refuses it; the rest is removed and the
// error names the busy one.
func TestRemoveTreeKeepsGoingPastABusyCgroup(t *testing.T) {
	k := NewSimKernel(V2)
	for _, p := range []string{"priv/a", "priv/b"} {
		if err := k.Create(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := k.SetUsage("priv/a", 1<<20); err != nil {
		t.Fatal(err)
	}
	removed, err := RemoveTree(k, "priv")
	if !errors.Is(err, syscall.EBUSY) {
		t.Fatalf("RemoveTree with a busy cgroup: %v, want EBUSY", err)
	}
	if !slices.Equal(removed, []string{"priv/b"}) {
		t.Errorf("removed %v, want [priv/b]", removed)
	}
	if !k.Exists("priv/a") || !k.Exists("priv") {
		t.Error("the busy cgroup or its parent is gone")
	}
}

// TestRemoveTreeOnDirectoryTrees: on an FS over an ordinary directory tree
// the cgroups are removed with their files, from both v1 hierarchies.
func TestRemoveTreeOnDirectoryTrees(t *testing.T) {
	for _, v := range []Version{V1, V2} {
		t.Run(v.String(), func(t *testing.T) {
			f := newFakeFS(t, v)
			for _, p := range []string{"priv/kubepods/pod1", "other"} {
				if err := f.Create(p); err != nil {
					t.Fatal(err)
				}
			}
			removed, err := RemoveTree(f, "priv")
			if err != nil {
				t.Fatalf("RemoveTree: %v", err)
			}
			if want := []string{"priv/kubepods/pod1", "priv/kubepods", "priv"}; !slices.Equal(removed, want) {
				t.Errorf("removed %v, want %v", removed, want)
			}
			if f.Exists("priv") || !f.Exists("other") {
				t.Errorf("after RemoveTree: priv exists %v, other exists %v; want false, true", f.Exists("priv"), f.Exists("other"))
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
	removed, err := RemoveTree(f, parent)
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
	f, err := NewFS("/sys/fs/cgroup")
	if err != nil {
		skip("no usable cgroup hierarchy at /sys/fs/cgroup: %v", err)
	}
	return f
}

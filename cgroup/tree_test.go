package cgroup

import (
	"errors"
	"slices"
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

package cgroup

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// pathLister is a Manager that can list its cgroups, as SimKernel can.
type pathLister interface{ Paths() []string }

// TreeManager is a Manager whose cgroups are not one tree it can list:
// cgroupfs.FS, whose cgroups are directories in one or more hierarchies,
// and which must also visit the hierarchies it does not write (a container
// runtime creates a pod's cgroups in all of them). RemoveTree,
// SnapshotTree and RemoveCreated look through decorators for one and hand
// it the work.
type TreeManager interface {
	Manager
	// RemoveTree removes the cgroup name (never the root) and every cgroup
	// below it, deepest first, and returns what it removed; see the
	// function RemoveTree.
	RemoveTree(name string) ([]string, error)
	// TreeView returns how SnapshotTree and RemoveCreated see the
	// manager's cgroups.
	TreeView() (TreeView, error)
}

// RemoveTree removes the cgroup name and every cgroup below it, deepest
// first, and returns what it removed: the directories on a cgroup
// filesystem, the paths on SimKernel. A cgroup that does not exist is not
// an error; one that still has processes is, and the rest is removed all
// the same. The root ("") is never removed.
//
// It looks through decorators (Unwrap() Manager) for the manager that
// holds the cgroups. A TreeManager removes the tree itself: a cgroupfs.FS
// over a kernel cgroup filesystem visits every hierarchy mounted at or
// below its root (cgroupfs.Mounts), not only cpu and memory, because a
// container runtime creates a pod's cgroups in all of them, and tries a
// cgroup the kernel refuses with EBUSY again for a few seconds; one over
// an ordinary directory tree (tests) deletes through itself. On SimKernel
// it deletes the paths the kernel lists. On any other Manager it can only
// delete name itself, which fails while name has children. To keep what existed of the tree at some moment, take a
// TreeSnapshot then and remove with RemoveCreated.
func RemoveTree(m Manager, name string) ([]string, error) {
	if m == nil {
		return nil, fmt.Errorf("remove cgroup tree %s: %w", name, ErrNoManager)
	}
	if name == "" {
		return nil, fmt.Errorf("remove cgroup tree: the root cgroup: %w", ErrInvalidPath)
	}
	if err := validatePath(name); err != nil {
		return nil, fmt.Errorf("remove cgroup tree %s: %w", name, err)
	}
	inner := cgroupHolder(m)
	switch x := inner.(type) {
	case TreeManager:
		return x.RemoveTree(name)
	case pathLister:
		return DeleteDeepestFirst(inner, below(x.Paths(), name))
	}
	if !m.Exists(name) {
		return nil, nil
	}
	return DeleteDeepestFirst(m, []string{name})
}

// cgroupHolder returns the manager that holds m's cgroups, looking through
// decorators (Unwrap() Manager): the first TreeManager or pathLister
// found, or m itself when there is none.
func cgroupHolder(m Manager) Manager {
	inner := m
	for range 16 { // decorator chains are short; the bound guards against a cycle
		switch inner.(type) {
		case TreeManager, pathLister:
			return inner
		}
		u, ok := inner.(interface{ Unwrap() Manager })
		if !ok {
			break
		}
		inner = u.Unwrap()
	}
	return m
}

// below returns the paths that are name or below it.
func below(paths []string, name string) []string {
	var out []string
	for _, p := range paths {
		if p == name || strings.HasPrefix(p, name+"/") {
			out = append(out, p)
		}
	}
	return out
}

// SortDeepestFirst sorts cgroup paths (or the directories of cgroups)
// children first: by their number of "/", the deepest first, keeping the
// order of paths of one depth.
func SortDeepestFirst(paths []string) {
	slices.SortStableFunc(paths, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
}

// DeleteDeepestFirst deletes the cgroups at paths through m, children
// first (SortDeepestFirst, which sorts paths in place), carries on past
// failures, and returns the paths it deleted with the failures joined.
func DeleteDeepestFirst(m Manager, paths []string) ([]string, error) {
	if m == nil {
		return nil, fmt.Errorf("delete cgroups %v: %w", paths, ErrNoManager)
	}
	SortDeepestFirst(paths)
	var removed []string
	var errs []error
	for _, p := range paths {
		if err := m.Delete(p); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, p)
	}
	return removed, errors.Join(errs...)
}

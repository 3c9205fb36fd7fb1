package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// busyRetry is how long RemoveTree keeps trying a cgroup the kernel
// refuses with EBUSY, and how long it waits between tries: the kernel
// refuses a cgroup for a moment after its last process was killed, until
// the exit has been reaped.
const (
	busyRetry    = 5 * time.Second
	busyInterval = 100 * time.Millisecond
)

// pathLister is a Manager that can list its cgroups, as SimKernel can.
type pathLister interface{ Paths() []string }

// RemoveTree removes the cgroup name and every cgroup below it, deepest
// first, and returns what it removed: the directories on a cgroup
// filesystem, the paths on SimKernel. A cgroup that does not exist is not
// an error; one that still has processes is, and the rest is removed all
// the same. The root ("") is never removed.
//
// It looks through decorators (Unwrap() Manager) for the manager that
// holds the cgroups. On an FS over a kernel cgroup filesystem it visits
// every hierarchy mounted at or below the FS's root (Mounts), not only cpu
// and memory, because a container runtime creates a pod's cgroups in all
// of them; a cgroup the kernel refuses with EBUSY is tried again for a few
// seconds. On an FS over an ordinary directory tree (tests) it deletes
// through the FS. On SimKernel it deletes the paths the kernel lists. On
// any other Manager it can only delete name itself, which fails while name
// has children. To keep what existed of the tree at some moment, take a
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
	case *FS:
		return x.removeTree(name)
	case pathLister:
		return deleteDeepestFirst(inner, below(x.Paths(), name))
	}
	if !m.Exists(name) {
		return nil, nil
	}
	return deleteDeepestFirst(m, []string{name})
}

// cgroupHolder returns the manager that holds m's cgroups, looking through
// decorators (Unwrap() Manager): the first *FS or pathLister found, or m
// itself when there is none.
func cgroupHolder(m Manager) Manager {
	inner := m
	for range 16 { // decorator chains are short; the bound guards against a cycle
		switch inner.(type) {
		case *FS, pathLister:
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

// byDepth sorts paths deepest first, so that children go before parents.
func byDepth(paths []string) {
	slices.SortStableFunc(paths, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
}

// deleteDeepestFirst deletes the cgroups through m, children first, and
// carries on past failures.
func deleteDeepestFirst(m Manager, paths []string) ([]string, error) {
	byDepth(paths)
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

// walkDirs returns dir and the directories below it; none when dir does
// not exist.
func walkDirs(dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// rmdirRetry removes a cgroup directory, trying again while the kernel
// answers EBUSY, for at most busyRetry.
func rmdirRetry(dir string) error {
	deadline := time.Now().Add(busyRetry)
	for {
		err := os.Remove(dir)
		if err == nil || !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(busyInterval)
	}
}

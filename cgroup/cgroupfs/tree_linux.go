//go:build linux

package cgroupfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/resizelet/resizelet/cgroup"
)

// removeTree is RemoveTree on a valid name.
func (f *FS) removeTree(name string) ([]string, error) {
	f.forget(name)
	if !f.kernelFS {
		return f.removeOrdinaryTree(name)
	}
	mounts, err := Mounts(f.root)
	if err != nil {
		return nil, fmt.Errorf("remove cgroup tree %s: %w", name, err)
	}
	if len(mounts) == 0 {
		// A root inside a hierarchy rather than at or above its mount:
		// the cgroups are those the FS itself reaches.
		return f.removeOrdinaryTree(name)
	}
	var dirs []string
	for _, m := range mounts {
		dirs = append(dirs, walkDirs(filepath.Join(m, name))...)
	}
	cgroup.SortDeepestFirst(dirs)
	var removed []string
	var errs []error
	for _, d := range dirs {
		err := rmdirRetry(d)
		switch {
		case err == nil:
			removed = append(removed, d)
		case errors.Is(err, fs.ErrNotExist):
		default:
			errs = append(errs, fmt.Errorf("remove cgroup %s: %w", d, kernelErr(err)))
		}
	}
	return removed, errors.Join(errs...)
}

// removeOrdinaryTree removes a cgroup tree through Delete, from the
// hierarchies the FS writes (on a directory tree laid out like a cgroup
// filesystem, Delete also removes the files).
func (f *FS) removeOrdinaryTree(name string) ([]string, error) {
	roots := []string{f.root}
	if f.version == cgroup.V1 {
		roots = []string{f.mounts["cpu"], f.mounts["memory"]}
	}
	seen := map[string]bool{}
	var paths []string
	for _, r := range roots {
		for _, d := range walkDirs(join(r, name)) {
			rel, err := filepath.Rel(r, d)
			if err != nil || seen[rel] {
				continue
			}
			seen[rel] = true
			paths = append(paths, filepath.ToSlash(rel))
		}
	}
	return cgroup.DeleteDeepestFirst(f, paths)
}

// treeView is TreeView on an FS that New made.
func (f *FS) treeView() (cgroup.TreeView, error) {
	if f.kernelFS {
		mounts, err := Mounts(f.root)
		if err != nil {
			return nil, err
		}
		if len(mounts) > 0 {
			return fsView{f: f, dirs: dedupe(mounts), kernel: true}, nil
		}
	}
	if f.version == cgroup.V1 {
		return fsView{f: f, dirs: dedupe([]string{f.mounts["cpu"], f.mounts["memory"]})}, nil
	}
	return fsView{f: f, dirs: []string{f.root}}, nil
}

// dedupe returns dirs without repeats, in their order.
func dedupe(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// fsView is the cgroup.TreeView of an FS.
type fsView struct {
	f    *FS
	dirs []string // the hierarchies' directories
	// kernel is set when every hierarchy is visited on a kernel cgroup
	// filesystem, where a cgroup is removed with rmdir (and its files go
	// with it).
	kernel bool
}

// Hierarchies returns the hierarchies' directories.
func (v fsView) Hierarchies() []string { return v.dirs }

// OnPath lists the directories that exist on name's path in the
// hierarchy h, as paths relative to h.
func (v fsView) OnPath(h, name string) []string {
	var out []string
	for _, a := range cgroup.Ancestors(name) {
		if isDir(join(h, a)) {
			out = append(out, a)
		}
	}
	for _, d := range walkDirs(join(h, name)) {
		if rel, err := filepath.Rel(h, d); err == nil {
			out = append(out, filepath.ToSlash(rel))
		}
	}
	return out
}

// HasChildren reports whether the cgroup's directory has a subdirectory.
func (v fsView) HasChildren(h, path string) bool {
	entries, _ := os.ReadDir(join(h, path))
	return slices.ContainsFunc(entries, fs.DirEntry.IsDir)
}

// Remove removes the cgroup's directory in the hierarchy h: with rmdir on
// a kernel cgroup filesystem (retried while EBUSY), else as Delete removes
// it, with its files.
func (v fsView) Remove(h, path string) (string, error) {
	dir := join(h, path)
	if v.kernel {
		err := rmdirRetry(dir)
		switch {
		case err == nil:
			return dir, nil
		case errors.Is(err, fs.ErrNotExist):
			return "", nil
		}
		return "", fmt.Errorf("remove cgroup %s: %w", dir, kernelErr(err))
	}
	if !isDir(dir) {
		return "", nil
	}
	if err := v.f.removeDir(path, dir); err != nil {
		return "", err
	}
	return dir, nil
}

// Forget drops what the FS remembers of the files of the cgroup at path
// and below it.
func (v fsView) Forget(path string) { v.f.forget(path) }

// busyRetry is how long RemoveTree and RemoveCreated keep trying a cgroup
// the kernel refuses with EBUSY, and how long they wait between tries: the
// kernel refuses a cgroup for a moment after its last process was killed,
// until the exit has been reaped.
const (
	busyRetry    = 5 * time.Second
	busyInterval = 100 * time.Millisecond
)

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

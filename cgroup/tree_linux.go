//go:build linux

package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// removeTree is RemoveTree on an FS.
func (f *FS) removeTree(name string) ([]string, error) {
	f.forget(name)
	if !f.cgroupfs {
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
	byDepth(dirs)
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
	if f.version == V1 {
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
	removed, err := deleteDeepestFirst(f, paths)
	return removed, err
}

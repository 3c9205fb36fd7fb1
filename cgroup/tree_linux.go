//go:build linux

package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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

// treeView returns how SnapshotTree and RemoveCreated see the FS's
// cgroups, in the hierarchies removeTree visits: on a kernel cgroup
// filesystem with hierarchies mounted at or below the root, every one of
// them, each cgroup removed with rmdir; otherwise the hierarchies the FS
// writes, each cgroup removed with its files as Delete removes it.
func (f *FS) treeView() (treeView, error) {
	if f.cgroupfs {
		mounts, err := Mounts(f.root)
		if err != nil {
			return nil, err
		}
		if len(mounts) > 0 {
			return fsView{f: f, dirs: dedupe(mounts), kernel: true}, nil
		}
	}
	if f.version == V1 {
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

// fsView is the treeView of an FS.
type fsView struct {
	f    *FS
	dirs []string // the hierarchies' directories
	// kernel is set when every hierarchy is visited on a kernel cgroup
	// filesystem, where a cgroup is removed with rmdir (and its files go
	// with it).
	kernel bool
}

func (v fsView) hierarchies() []string { return v.dirs }

func (v fsView) onPath(h, name string) []string {
	var out []string
	for _, a := range ancestorsOf(name) {
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

func (v fsView) hasChildren(c cgroupAt) bool {
	entries, _ := os.ReadDir(join(c.hierarchy, c.path))
	return slices.ContainsFunc(entries, fs.DirEntry.IsDir)
}

func (v fsView) remove(c cgroupAt) (string, error) {
	dir := join(c.hierarchy, c.path)
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
	if err := v.f.removeDir(c.path, dir); err != nil {
		return "", err
	}
	return dir, nil
}

func (v fsView) forget(path string) { v.f.forget(path) }

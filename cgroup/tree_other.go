//go:build !linux

package cgroup

import "fmt"

// removeTree returns ErrNotSupported: NewFS never returns an FS here.
func (f *FS) removeTree(name string) ([]string, error) {
	return nil, fmt.Errorf("remove cgroup tree %s: %w", name, ErrNotSupported)
}

// treeView returns ErrNotSupported: NewFS never returns an FS here.
func (f *FS) treeView() (treeView, error) {
	return nil, fmt.Errorf("cgroup tree below %s: %w", f.root, ErrNotSupported)
}

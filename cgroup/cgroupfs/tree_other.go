//go:build !linux

package cgroupfs

import (
	"fmt"

	"github.com/resizelet/resizelet/cgroup"
)

// removeTree returns cgroup.ErrNotSupported: New never returns an FS here.
func (f *FS) removeTree(name string) ([]string, error) {
	return nil, fmt.Errorf("remove cgroup tree %s: %w", name, cgroup.ErrNotSupported)
}

// treeView returns cgroup.ErrNotSupported: New never returns an FS here.
func (f *FS) treeView() (cgroup.TreeView, error) {
	return nil, fmt.Errorf("cgroup tree below %s: %w", f.root, cgroup.ErrNotSupported)
}

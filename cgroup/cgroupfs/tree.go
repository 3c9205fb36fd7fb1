package cgroupfs

import (
	"fmt"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// RemoveTree removes the cgroup name and every cgroup below it, deepest
// first, and returns what it removed; cgroup.RemoveTree, which also
// finds an FS behind decorators, calls it. Over a kernel cgroup filesystem
// it visits every hierarchy mounted at or below the FS's root (Mounts),
// not only cpu and memory, because a container runtime creates a pod's
// cgroups in all of them, and returns the directories it removed; a
// cgroup the kernel refuses with EBUSY is tried again for a few seconds.
// Over an ordinary directory tree, or a root inside a hierarchy, it
// deletes the paths through Delete and returns them. The root ("") and an
// invalid path are refused with cgroup.ErrInvalidPath.
func (f *FS) RemoveTree(name string) ([]string, error) {
	if !f.made() {
		return nil, fmt.Errorf("remove cgroup tree %s: %w", name, errNotMade)
	}
	if name == "" {
		return nil, fmt.Errorf("remove cgroup tree: the root cgroup: %w", cgroup.ErrInvalidPath)
	}
	if err := cgconfig.ValidatePath(name); err != nil {
		return nil, fmt.Errorf("remove cgroup tree %s: %w", name, err)
	}
	return f.removeTree(name)
}

// TreeView returns how cgroup.SnapshotTree and cgroup.RemoveCreated see
// the FS's cgroups, in the hierarchies RemoveTree visits: on a kernel
// cgroup filesystem with hierarchies mounted at or below the root, every
// one of them, each cgroup removed with rmdir; otherwise the hierarchies
// the FS writes, each cgroup removed with its files as Delete removes it.
func (f *FS) TreeView() (cgroup.TreeView, error) {
	if !f.made() {
		return nil, fmt.Errorf("cgroup tree: %w", errNotMade)
	}
	return f.treeView()
}

var _ cgroup.TreeManager = (*FS)(nil)

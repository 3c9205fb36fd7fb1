package systemd

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/resizelet/resizelet/cgroup"
)

// RemoveTree removes the cgroup name and every cgroup below it, deepest
// first, in every hierarchy the FS's TreeView visits, and returns what it
// removed: a slice by stopping its unit once it is empty (TreeView's
// Remove), anything else as the FS removes it. The root ("") and an
// invalid path are refused with cgroup.ErrInvalidPath.
func (m *Manager) RemoveTree(name string) ([]string, error) {
	if !m.made() {
		return nil, fmt.Errorf("remove cgroup tree %s: %w", name, errNotMade)
	}
	if name == "" {
		return nil, fmt.Errorf("remove cgroup tree: the root cgroup: %w", cgroup.ErrInvalidPath)
	}
	if err := checkSlices(name); err != nil {
		return nil, fmt.Errorf("remove cgroup tree %s: %w", name, err)
	}
	v, err := m.TreeView()
	if err != nil {
		return nil, fmt.Errorf("remove cgroup tree %s: %w", name, err)
	}
	type at struct{ hierarchy, path string }
	var below []at
	for _, h := range v.Hierarchies() {
		for _, p := range v.OnPath(h, name) {
			if p == name || strings.HasPrefix(p, name+"/") {
				below = append(below, at{h, p})
			}
		}
	}
	slices.SortStableFunc(below, func(a, b at) int { return strings.Count(b.path, "/") - strings.Count(a.path, "/") })
	var removed []string
	var errs []error
	for _, c := range below {
		what, err := v.Remove(c.hierarchy, c.path)
		if err != nil {
			errs = append(errs, err)
		} else if what != "" {
			removed = append(removed, what)
		}
	}
	return removed, errors.Join(errs...)
}

// TreeView returns the FS's view of the hierarchies, in which a slice is
// removed by stopping its unit once nothing is left in it, so that
// cgroup.RemoveCreated and cgroup.RemoveTree leave no unit behind.
func (m *Manager) TreeView() (cgroup.TreeView, error) {
	if !m.made() {
		return nil, fmt.Errorf("cgroup tree: %w", errNotMade)
	}
	v, err := m.fs.TreeView()
	if err != nil {
		return nil, err
	}
	return sliceView{TreeView: v, m: m}, nil
}

// sliceView is the FS's TreeView with slices removed through systemd.
type sliceView struct {
	cgroup.TreeView
	m *Manager
}

// Remove stops the unit of a slice that has no child and no process
// (then the directory is gone in every hierarchy), or of a scope Create
// started, with its idle process, and removes what is left as the FS
// does.
func (v sliceView) Remove(hierarchy, path string) (string, error) {
	existed := v.m.fs.Exists(path)
	if err := v.m.release(path); err != nil {
		return "", err
	}
	what, err := v.TreeView.Remove(hierarchy, path)
	if what == "" && err == nil && existed {
		// systemd removed the directory with the unit.
		what = path
	}
	return what, err
}

var _ cgroup.TreeManager = (*Manager)(nil)

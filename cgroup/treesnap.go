package cgroup

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// TreeSnapshot records which cgroups existed, at one moment, on the path
// of one cgroup: its ancestors, the cgroup itself and every cgroup below
// it, in each hierarchy RemoveTree visits. RemoveCreated later removes
// what was made on that path since, and nothing the snapshot saw. Package
// resize's Backend takes one of its private cgroup parent when it is made,
// so that its Close removes the parent and the ancestors its nodes created
// ("abs" of the parent "abs/x") and keeps the cgroups that were there
// before it, in every hierarchy separately: on a cgroup v1 host "abs" may
// have existed in the cpu hierarchy and not in pids.
type TreeSnapshot struct {
	name string
	// hierarchies are the hierarchies the snapshot looked in; RemoveCreated
	// looks in no other, since it cannot tell what existed there.
	hierarchies map[string]bool
	had         map[cgroupAt]bool
}

// cgroupAt is one cgroup in one hierarchy.
type cgroupAt struct {
	// hierarchy is the directory of the hierarchy on a cgroupfs.FS, and ""
	// on other managers, whose cgroups form one tree.
	hierarchy string
	path      string // relative to the hierarchy's root
}

// Name returns the cgroup the snapshot was taken of ("" for a nil
// snapshot).
func (s *TreeSnapshot) Name() string {
	if s == nil {
		return ""
	}
	return s.name
}

// SnapshotTree takes a TreeSnapshot of the path of the cgroup name in m.
// It looks through decorators (Unwrap() Manager) and in the hierarchies
// RemoveTree visits: on a TreeManager those of its TreeView (on a
// cgroupfs.FS over a kernel cgroup filesystem every hierarchy mounted at
// or below its root, on one over an ordinary directory tree the
// hierarchies the FS writes), on a SimKernel its one tree. On any other
// Manager it sees name and its ancestors only, through Exists. The root ("") and an invalid path are refused with
// ErrInvalidPath.
func SnapshotTree(m Manager, name string) (*TreeSnapshot, error) {
	if name == "" {
		return nil, fmt.Errorf("snapshot cgroup tree: the root cgroup: %w", ErrInvalidPath)
	}
	if err := validatePath(name); err != nil {
		return nil, fmt.Errorf("snapshot cgroup tree %s: %w", name, err)
	}
	v, err := viewOf(m)
	if err != nil {
		return nil, fmt.Errorf("snapshot cgroup tree %s: %w", name, err)
	}
	s := &TreeSnapshot{name: name, hierarchies: map[string]bool{}, had: map[cgroupAt]bool{}}
	for _, h := range v.Hierarchies() {
		s.hierarchies[h] = true
		for _, p := range v.OnPath(h, name) {
			s.had[cgroupAt{h, p}] = true
		}
	}
	return s, nil
}

// RemoveCreated removes, through m (the manager s was taken on), the
// cgroups on the path of s's cgroup that did not exist when s was taken,
// and returns what it removed: the directories on a cgroupfs.FS, the paths on
// other managers. First those at and below the snapshot's cgroup, deepest
// first, as RemoveTree removes a tree: one that still has processes is an
// error and the rest is removed all the same, and on a kernel cgroup
// filesystem one the kernel refuses with EBUSY is tried again for a few
// seconds. Then each ancestor created since, deepest first, if it has no
// child cgroup left; one that has (another backend's parent made beside
// this one since, or the tree a failed removal left) is kept without an
// error. On a Manager that cannot list its cgroups (see SnapshotTree), an
// ancestor with a child is refused by Delete, and that is an error.
//
// A cgroup the snapshot saw is never removed, in any hierarchy, nor
// anything in a hierarchy the snapshot did not look in (one mounted since).
func RemoveCreated(m Manager, s *TreeSnapshot) ([]string, error) {
	if s == nil || s.name == "" {
		return nil, errors.New("remove created cgroups: no snapshot (take one with SnapshotTree)")
	}
	v, err := viewOf(m)
	if err != nil {
		return nil, fmt.Errorf("remove created cgroups of %s: %w", s.name, err)
	}
	var tree, ancestors []cgroupAt
	for _, h := range v.Hierarchies() {
		if !s.hierarchies[h] {
			continue
		}
		for _, p := range v.OnPath(h, s.name) {
			c := cgroupAt{h, p}
			switch {
			case s.had[c]:
			case p == s.name || strings.HasPrefix(p, s.name+"/"):
				tree = append(tree, c)
			default:
				ancestors = append(ancestors, c)
			}
		}
	}
	v.Forget(s.name)
	deepestFirst(tree)
	deepestFirst(ancestors)
	var removed []string
	var errs []error
	remove := func(c cgroupAt) {
		what, err := v.Remove(c.hierarchy, c.path)
		if err != nil {
			errs = append(errs, err)
		} else if what != "" {
			removed = append(removed, what)
		}
	}
	for _, c := range tree {
		remove(c)
	}
	for _, c := range ancestors {
		if !v.HasChildren(c.hierarchy, c.path) {
			v.Forget(c.path)
			remove(c)
		}
	}
	return removed, errors.Join(errs...)
}

// deepestFirst sorts cgroups children first.
func deepestFirst(cs []cgroupAt) {
	slices.SortStableFunc(cs, func(a, b cgroupAt) int {
		return strings.Count(b.path, "/") - strings.Count(a.path, "/")
	})
}

// Ancestors returns the ancestors of the cgroup name below the root, the
// topmost first: "a" and "a/b" for "a/b/c".
func Ancestors(name string) []string {
	var out []string
	for i := 0; i < len(name); i++ {
		if name[i] == '/' {
			out = append(out, name[:i])
		}
	}
	return out
}

// onPathOf reports whether the cgroup p is an ancestor of name, name
// itself or below it.
func onPathOf(p, name string) bool {
	return p == name || strings.HasPrefix(name, p+"/") || strings.HasPrefix(p, name+"/")
}

// TreeView is how SnapshotTree and RemoveCreated see the cgroups of a
// manager, in each of its hierarchies. A TreeManager gives its own; the
// others are seen as one tree, listed (SimKernel) or probed with Exists.
type TreeView interface {
	// Hierarchies lists the hierarchies to look in, by the directory of
	// each on a cgroup filesystem ("" for a manager with one tree).
	Hierarchies() []string
	// OnPath lists the cgroups of the hierarchy that exist among name's
	// ancestors, name itself and the cgroups below it, by their paths.
	OnPath(hierarchy, name string) []string
	// HasChildren reports whether the cgroup at path in the hierarchy has
	// a child cgroup.
	HasChildren(hierarchy, path string) bool
	// Remove removes the cgroup at path in the hierarchy and returns what
	// it removed (its directory, or its path), "" when it was gone
	// already.
	Remove(hierarchy, path string) (string, error)
	// Forget drops what the manager remembers of the cgroup at path and
	// below it, before they are removed.
	Forget(path string)
}

// viewOf returns the TreeView of the manager that holds m's cgroups.
func viewOf(m Manager) (TreeView, error) {
	inner := cgroupHolder(m)
	switch x := inner.(type) {
	case TreeManager:
		return x.TreeView()
	case pathLister:
		return listerView{m: inner, l: x}, nil
	}
	return existsView{m}, nil
}

// listerView is the TreeView of a manager that lists its cgroups
// (SimKernel): one tree.
type listerView struct {
	m Manager
	l pathLister
}

// Hierarchies is the one tree.
func (listerView) Hierarchies() []string { return []string{""} }

// OnPath lists the cgroups on name's path among those the manager lists.
func (v listerView) OnPath(_, name string) []string {
	var out []string
	for _, p := range v.l.Paths() {
		if p != "" && onPathOf(p, name) {
			out = append(out, p)
		}
	}
	return out
}

// HasChildren looks for a listed cgroup below path.
func (v listerView) HasChildren(_, path string) bool {
	return slices.ContainsFunc(v.l.Paths(), func(p string) bool { return strings.HasPrefix(p, path+"/") })
}

// Remove deletes the cgroup through the manager.
func (v listerView) Remove(_, path string) (string, error) {
	if err := v.m.Delete(path); err != nil {
		return "", err
	}
	return path, nil
}

// Forget does nothing: the manager remembers nothing of its files.
func (listerView) Forget(string) {}

// existsView is the TreeView of a manager that can only tell whether a
// cgroup exists: it sees a cgroup's ancestors and the cgroup itself, not
// what is below it.
type existsView struct{ m Manager }

// Hierarchies is the one tree.
func (existsView) Hierarchies() []string { return []string{""} }

// OnPath lists name and those of its ancestors that exist.
func (v existsView) OnPath(_, name string) []string {
	var out []string
	for _, p := range append(Ancestors(name), name) {
		if v.m.Exists(p) {
			out = append(out, p)
		}
	}
	return out
}

// HasChildren is false: the manager cannot tell, and its Delete refuses a
// cgroup that has a child.
func (existsView) HasChildren(_, _ string) bool { return false }

// Remove deletes the cgroup through the manager.
func (v existsView) Remove(_, path string) (string, error) {
	if err := v.m.Delete(path); err != nil {
		return "", err
	}
	return path, nil
}

// Forget does nothing: the manager remembers nothing of its files.
func (existsView) Forget(string) {}

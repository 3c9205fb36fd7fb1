//go:build linux

package cgroupfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/containerd/cgroups/v3/cgroup1"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// Exists reports whether the cgroup exists (on v1: in both the cpu and the
// memory hierarchy).
func (f *FS) Exists(path string) bool {
	if !f.made() {
		return false
	}
	if cgconfig.ValidatePath(path) != nil {
		return false
	}
	if f.version == cgroup.V2 {
		return isDir(join(f.root, path))
	}
	return isDir(join(f.mounts["cpu"], path)) && isDir(join(f.mounts["memory"], path))
}

// Create makes the cgroup and any missing parent. On v2 it first enables
// the cpu and memory controllers in cgroup.subtree_control of every
// ancestor (the root included, the new cgroup itself not), so the new
// cgroup has cpu.max, cpu.weight and memory.max; a cgroup v2 with
// processes in it cannot enable controllers for children (EBUSY), so
// processes belong in leaves only. On v1 it makes the directory in the cpu
// and the memory hierarchy.
func (f *FS) Create(path string) error {
	if !f.made() {
		return fmt.Errorf("create %s: %w", path, errNotMade)
	}
	if err := cgconfig.ValidatePath(path); err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	f.forget(path)
	if f.version == cgroup.V1 {
		return f.createV1(path)
	}
	parent := f.root
	for rest := path; rest != ""; {
		comp, next, _ := strings.Cut(rest, "/")
		if err := enableControllers(parent); err != nil {
			return fmt.Errorf("create %s: %w", path, err)
		}
		dir := parent + "/" + comp
		if err := os.Mkdir(dir, 0o755); err == nil {
			if f.afterMkdir != nil {
				if err := f.afterMkdir(dir); err != nil {
					return fmt.Errorf("create %s: %w", path, err)
				}
			}
		} else if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create %s: mkdir %s: %w", path, dir, kernelErr(err))
		}
		parent, rest = dir, next
	}
	return nil
}

// enableControllers makes sure cpu and memory are enabled in the
// cgroup.subtree_control of dir, writing only the missing ones.
func enableControllers(dir string) error {
	file := dir + "/cgroup.subtree_control"
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("read %s: %w", file, kernelErr(err))
	}
	var missing []string
	for _, c := range [...]string{"cpu", "memory"} {
		found := false
		for _, have := range strings.Fields(string(data)) {
			if strings.TrimPrefix(have, "+") == c {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, "+"+c)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if err := writeExisting(file, strings.Join(missing, " ")); err != nil {
		return fmt.Errorf("write %s %q: %w", file, strings.Join(missing, " "), kernelErr(err))
	}
	return nil
}

// writeExisting writes data to a file that must exist, the way cgroup files
// are written: no O_CREATE, so a missing file is ENOENT rather than a new
// ordinary file in a temp-dir tree.
func writeExisting(file, data string) error {
	fd, err := os.OpenFile(file, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = fd.WriteString(data)
	if cerr := fd.Close(); err == nil {
		err = cerr
	}
	return err
}

func (f *FS) createV1(path string) error {
	var fresh []string
	if f.afterMkdir != nil {
		for _, c := range [...]string{"cpu", "memory"} {
			dir := f.mounts[c]
			for rest := path; rest != ""; {
				comp, next, _ := strings.Cut(rest, "/")
				dir += "/" + comp
				if !isDir(dir) {
					fresh = append(fresh, dir)
				}
				rest = next
			}
		}
	}
	_, err := cgroup1.New(f.v1Path(path), &specs.LinuxResources{},
		cgroup1.WithHierarchy(f.v1Hierarchy("cpu", "memory")))
	if err != nil {
		return fmt.Errorf("create %s: %w", path, kernelErr(err))
	}
	for _, dir := range fresh {
		if err := f.afterMkdir(dir); err != nil {
			return fmt.Errorf("create %s: %w", path, err)
		}
	}
	return nil
}

// v1Root returns the root to give a containerd/cgroups v1 controller
// constructor (which appends the controller's name to it) and the prefix
// that makes a cgroup path land in mount. When the mount is not named after
// the controller (cpu,cpuacct), the prefix "/.." steps back out of the name
// the constructor appended.
func v1Root(controller, mount string) (root, prefix string) {
	if filepath.Base(mount) == controller {
		return filepath.Dir(mount), "/"
	}
	return mount, "/../"
}

// v1Hierarchy returns a cgroup1.Hierarchy of the named controllers' mounts.
func (f *FS) v1Hierarchy(controllers ...string) cgroup1.Hierarchy {
	subs := make([]cgroup1.Subsystem, 0, len(controllers))
	for _, c := range controllers {
		root, _ := v1Root(c, f.mounts[c])
		switch c {
		case "cpu":
			subs = append(subs, cgroup1.NewCpu(root))
		case "memory":
			subs = append(subs, cgroup1.NewMemory(root))
		}
	}
	return func() ([]cgroup1.Subsystem, error) { return subs, nil }
}

// v1Path returns the cgroup1.Path of path in each hierarchy.
func (f *FS) v1Path(path string) cgroup1.Path {
	return func(name cgroup1.Name) (string, error) {
		_, prefix := v1Root(string(name), f.mounts[string(name)])
		return prefix + path, nil
	}
}

// Delete removes the cgroup (on v1 from the memory and the cpu hierarchy).
// The kernel refuses (EBUSY) while the cgroup has children or processes; on
// a temp-dir tree FS refuses the same way, then removes the files.
func (f *FS) Delete(path string) error {
	if !f.made() {
		return fmt.Errorf("delete %s: %w", path, errNotMade)
	}
	if err := cgconfig.ValidatePath(path); err != nil {
		return fmt.Errorf("delete %s: %w", path, err)
	}
	if path == "" {
		return fmt.Errorf("delete the root cgroup: %w", syscall.EBUSY)
	}
	f.forget(path)
	if f.version == cgroup.V2 {
		return f.removeDir(path, join(f.root, path))
	}
	// Check both hierarchies before removing from either, so that a refused
	// Delete leaves the cgroup whole.
	if err := f.busy(path); err != nil {
		return err
	}
	for _, c := range [...]string{"memory", "cpu"} {
		if err := f.removeDir(path, join(f.mounts[c], path)); err != nil {
			return err
		}
	}
	return nil
}

// Busy returns the error, wrapping EBUSY, that Delete refuses the cgroup
// with while it has a child cgroup or a process in a hierarchy the FS
// writes (on v1 the memory or the cpu one), and nil otherwise; a cgroup
// that does not exist is not busy. A manager that removes cgroups by other
// means asks first: the systemd manager stops a slice's unit, which would
// kill whatever runs below it.
func (f *FS) Busy(path string) error {
	if !f.made() {
		return fmt.Errorf("delete %s: %w", path, errNotMade)
	}
	if err := cgconfig.ValidatePath(path); err != nil {
		return fmt.Errorf("delete %s: %w", path, err)
	}
	return f.busy(path)
}

// busy is Busy on a valid path.
func (f *FS) busy(path string) error {
	if f.version == cgroup.V2 {
		return busy(path, join(f.root, path))
	}
	for _, c := range [...]string{"memory", "cpu"} {
		if err := busy(path, join(f.mounts[c], path)); err != nil {
			return err
		}
	}
	return nil
}

// busy returns an error wrapping EBUSY, as rmdir would, when the cgroup in
// dir has a child cgroup or a process.
func busy(path, dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("delete %s: %w", path, err)
	}
	for _, e := range entries {
		if e.IsDir() {
			return fmt.Errorf("delete %s: child cgroup %s: %w", path, e.Name(), syscall.EBUSY)
		}
	}
	if procs, err := os.ReadFile(dir + "/cgroup.procs"); err == nil && strings.TrimSpace(string(procs)) != "" {
		return fmt.Errorf("delete %s: has processes: %w", path, syscall.EBUSY)
	}
	return nil
}

func (f *FS) removeDir(path, dir string) error {
	if f.kernelFS {
		if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("delete %s: rmdir %s: %w", path, dir, kernelErr(err))
		}
		return nil
	}
	if err := busy(path, dir); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("delete %s: %w", path, err)
	}
	for _, e := range entries {
		if err := os.Remove(dir + "/" + e.Name()); err != nil {
			return fmt.Errorf("delete %s: %w", path, err)
		}
	}
	if err := os.Remove(dir); err != nil {
		return fmt.Errorf("delete %s: %w", path, err)
	}
	return nil
}

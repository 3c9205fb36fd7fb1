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

	"github.com/resizelet/resizelet/cgroup"
)

// The statfs magic numbers of the kernel's cgroup filesystems.
const (
	cgroup2SuperMagic = 0x63677270
	cgroupSuperMagic  = 0x27e0eb
)

// New returns a cgroup.Manager for the cgroups below root.
//
// Unless WithVersion says otherwise, the version is detected from root
// itself, never from containerd/cgroups' process-wide cached Mode(): root is
// cgroup v2 if it is a cgroup2 mount or holds a cgroup.controllers file, and
// cgroup v1 otherwise. On v2 root's cgroup.controllers must list cpu and
// memory. On v1 the cpu and memory hierarchies are the cgroup mounts
// directly below root in /proc/self/mountinfo (so a host whose cpu
// controller is mounted at cpu,cpuacct works), else the directories
// root/cpu and root/memory (a temp-dir tree); WithV1Mounts overrides both.
// A missing root, version or controller gives an error wrapping
// cgroup.ErrNotSupported.
func New(root string, opts ...Option) (*FS, error) {
	cfg := config{mountinfo: "/proc/self/mountinfo"}
	for _, o := range opts {
		o(&cfg)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("cgroup root %s: %w", root, err)
	}
	if st, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("cgroup root %s: %w: %w", abs, cgroup.ErrNotSupported, err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("cgroup root %s: not a directory: %w", abs, cgroup.ErrNotSupported)
	}
	magic := statfsMagic(abs)
	version := cfg.version
	if version == 0 {
		version = cgroup.V1
		if magic == cgroup2SuperMagic || isFile(abs+"/cgroup.controllers") {
			version = cgroup.V2
		}
	}
	f := &FS{root: abs, version: version, afterMkdir: cfg.onCreate}
	switch version {
	case cgroup.V2:
		data, err := os.ReadFile(abs + "/cgroup.controllers")
		if err != nil {
			return nil, fmt.Errorf("cgroup v2 at %s: %w: %w", abs, cgroup.ErrNotSupported, err)
		}
		have := strings.Fields(string(data))
		for _, c := range [...]string{"cpu", "memory"} {
			if !contains(have, c) {
				return nil, fmt.Errorf("cgroup v2 at %s: controller %s not available (cgroup.controllers: %q): %w",
					abs, c, strings.TrimSpace(string(data)), cgroup.ErrNotSupported)
			}
		}
		f.kernelFS = magic == cgroup2SuperMagic
	case cgroup.V1:
		mounts := cfg.v1Mounts
		if mounts == nil {
			mounts = map[string]string{}
			if data, err := os.ReadFile(cfg.mountinfo); err == nil {
				mounts = parseMountInfo(string(data), abs)
			}
			for _, c := range [...]string{"cpu", "memory"} {
				if _, ok := mounts[c]; !ok && isDir(abs+"/"+c) {
					mounts[c] = abs + "/" + c
				}
			}
		}
		for _, c := range [...]string{"cpu", "memory"} {
			m, ok := mounts[c]
			if !ok || !isDir(m) {
				return nil, fmt.Errorf("cgroup v1 below %s: no %s hierarchy: %w", abs, c, cgroup.ErrNotSupported)
			}
		}
		f.mounts = make(map[string]string, len(mounts))
		for c, m := range mounts {
			if a, err := filepath.Abs(m); err == nil {
				f.mounts[c] = a
			}
		}
		f.kernelFS = statfsMagic(f.mounts["memory"]) == cgroupSuperMagic
	default:
		return nil, fmt.Errorf("cgroup version %d: %w", int(version), cgroup.ErrNotSupported)
	}
	return f, nil
}

// forget drops what the FS remembers of the files of the cgroup at path
// and below it.
func (f *FS) forget(path string) {
	if f.version == cgroup.V2 {
		f.known.forget(join(f.root, path))
		return
	}
	for _, m := range f.mounts {
		f.known.forget(join(m, path))
	}
}

func statfsMagic(dir string) int64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0
	}
	return int64(st.Type)
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// kernelErr returns the errno inside a *fs.PathError, which is what both
// containerd/cgroups packages return unwrapped; the cgroup path and file are
// added back by the caller, relative to the root, as every cgroup.Manager does.
func kernelErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

//go:build linux

package cgroupfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// fileDir returns the directory that holds file of the cgroup at path.
func (f *FS) fileDir(path, file string) (string, error) {
	if f.version == cgroup.V2 {
		return join(f.root, path), nil
	}
	m, ok := f.mounts[controllerOf(file)]
	if !ok {
		return "", fmt.Errorf("read %s/%s: no %s hierarchy: %w", path, file, controllerOf(file), cgroup.ErrNotSupported)
	}
	return join(m, path), nil
}

// read returns the trimmed content of one file in dir. A missing file is
// cgroup.ErrNotExist when its cgroup is missing too and cgroup.ErrNotSupported otherwise
// (the controller is not enabled for the cgroup).
func read(dir, file string) (string, error) {
	data, err := os.ReadFile(dir + "/" + file)
	if err == nil {
		return strings.TrimSpace(string(data)), nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		if !isDir(dir) {
			return "", cgroup.ErrNotExist
		}
		return "", cgroup.ErrNotSupported
	}
	return "", kernelErr(err)
}

// ReadFile returns the trimmed content of one file of the cgroup. On v1
// the file is read from the hierarchy of the controller its name starts
// with (cgroup.procs from the cpu hierarchy).
func (f *FS) ReadFile(path, file string) (string, error) {
	if !f.made() {
		return "", fmt.Errorf("read %s/%s: %w", path, file, errNotMade)
	}
	if err := cgconfig.ValidatePath(path); err != nil {
		return "", fmt.Errorf("read %s/%s: %w", path, file, err)
	}
	if err := validateFile(file); err != nil {
		return "", fmt.Errorf("read %s/%s: %w", path, file, err)
	}
	dir, err := f.fileDir(path, file)
	if err != nil {
		return "", err
	}
	s, err := read(dir, file)
	if err != nil {
		return "", fmt.Errorf("read %s/%s: %w", path, file, err)
	}
	return s, nil
}

// MemoryUsage returns memory.current (v2) or memory.usage_in_bytes (v1).
func (f *FS) MemoryUsage(path string) (int64, error) {
	if !f.made() {
		return 0, fmt.Errorf("memory usage of %s: %w", path, errNotMade)
	}
	file := cgroup.FileMemoryCurrent
	if f.version == cgroup.V1 {
		file = cgroup.FileMemoryUsage
	}
	s, err := f.ReadFile(path, file)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, parseErr(path, file, s, err)
	}
	return n, nil
}

// Get reads the cgroup's CPU and memory values back. A file the cgroup does
// not have, or an empty one, leaves its field nil; a missing cgroup is
// cgroup.ErrNotExist. Content that does not parse is an error wrapping errParse;
// the fields read before it are returned with it.
func (f *FS) Get(path string) (cgroup.Values, error) {
	if !f.made() {
		return cgroup.Values{}, fmt.Errorf("get %s: %w", path, errNotMade)
	}
	if err := cgconfig.ValidatePath(path); err != nil {
		return cgroup.Values{}, fmt.Errorf("get %s: %w", path, err)
	}
	// No stat first: a missing cgroup shows in the first read, which
	// tells a missing cgroup from a missing file. What is read is
	// remembered for the Sets that follow (fileCache).
	v, err := cgroup.ParseValues(f.version, func(file string) (string, bool, error) {
		dir, err := f.fileDir(path, file)
		if err != nil {
			return "", false, err
		}
		s, err := read(dir, file)
		if errors.Is(err, cgroup.ErrNotSupported) {
			return "", false, nil
		}
		if errors.Is(err, cgroup.ErrNotExist) {
			return "", false, fmt.Errorf("get %s: %w", path, cgroup.ErrNotExist)
		}
		if err != nil {
			return "", false, fmt.Errorf("read %s/%s: %w", path, file, err)
		}
		f.known.put(dir, file, s)
		return s, s != "", nil
	})
	var ce *cgroup.ContentError
	if errors.As(err, &ce) {
		return v, parseErr(path, ce.File, ce.Content, ce.Err)
	}
	return v, err
}

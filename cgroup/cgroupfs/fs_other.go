//go:build !linux

package cgroupfs

import (
	"fmt"

	"github.com/resizelet/resizelet/cgroup"
)

// usageState is empty: there are no cgroups to charge here.
type usageState struct{}

// SetUsage returns cgroup.ErrNotSupported.
func (f *FS) SetUsage(path string, bytes int64) error { return cgroup.ErrNotSupported }

// StartIdle returns cgroup.ErrNotSupported.
func StartIdle() (pid int, end func(), err error) { return 0, nil, cgroup.ErrNotSupported }

// OnOOMKill does nothing.
func (f *FS) OnOOMKill(fn func(path string)) {}

// New returns cgroup.ErrNotSupported: cgroups exist on Linux only.
func New(root string, opts ...Option) (*FS, error) {
	return nil, fmt.Errorf("cgroup filesystem at %s: %w", root, cgroup.ErrNotSupported)
}

// The methods below are never reached, since New never returns an FS
// here; they exist so that *FS is a cgroup.Manager on every platform.

// Exists reports false.
func (f *FS) Exists(path string) bool { return false }

// Create returns cgroup.ErrNotSupported.
func (f *FS) Create(path string) error { return cgroup.ErrNotSupported }

// Delete returns cgroup.ErrNotSupported.
func (f *FS) Delete(path string) error { return cgroup.ErrNotSupported }

// Busy returns cgroup.ErrNotSupported.
func (f *FS) Busy(path string) error { return cgroup.ErrNotSupported }

// Get returns cgroup.ErrNotSupported.
func (f *FS) Get(path string) (cgroup.Values, error) { return cgroup.Values{}, cgroup.ErrNotSupported }

// Set returns cgroup.ErrNotSupported.
func (f *FS) Set(path string, v cgroup.Values) ([]cgroup.Write, error) {
	return nil, cgroup.ErrNotSupported
}

// ReadFile returns cgroup.ErrNotSupported.
func (f *FS) ReadFile(path, file string) (string, error) { return "", cgroup.ErrNotSupported }

// MemoryUsage returns cgroup.ErrNotSupported.
func (f *FS) MemoryUsage(path string) (int64, error) { return 0, cgroup.ErrNotSupported }

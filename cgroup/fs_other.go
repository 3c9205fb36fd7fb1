//go:build !linux

package cgroup

import "fmt"

// usageState is empty: there are no cgroups to charge here.
type usageState struct{}

// SetUsage returns ErrNotSupported.
func (f *FS) SetUsage(path string, bytes int64) error { return ErrNotSupported }

// OnOOMKill does nothing.
func (f *FS) OnOOMKill(fn func(path string)) {}

// NewFS returns ErrNotSupported: cgroups exist on Linux only.
func NewFS(root string, opts ...FSOption) (*FS, error) {
	return nil, fmt.Errorf("cgroup filesystem at %s: %w", root, ErrNotSupported)
}

// The methods below are never reached, since NewFS never returns an FS
// here; they exist so that *FS is a Manager on every platform.

// Exists reports false.
func (f *FS) Exists(path string) bool { return false }

// Create returns ErrNotSupported.
func (f *FS) Create(path string) error { return ErrNotSupported }

// Delete returns ErrNotSupported.
func (f *FS) Delete(path string) error { return ErrNotSupported }

// Get returns ErrNotSupported.
func (f *FS) Get(path string) (Values, error) { return Values{}, ErrNotSupported }

// Set returns ErrNotSupported.
func (f *FS) Set(path string, v Values) ([]Write, error) { return nil, ErrNotSupported }

// ReadFile returns ErrNotSupported.
func (f *FS) ReadFile(path, file string) (string, error) { return "", ErrNotSupported }

// MemoryUsage returns ErrNotSupported.
func (f *FS) MemoryUsage(path string) (int64, error) { return 0, ErrNotSupported }

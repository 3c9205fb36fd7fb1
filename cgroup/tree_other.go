//go:build !linux

package cgroup

import "fmt"

// removeTree returns ErrNotSupported: NewFS never returns an FS here.
func (f *FS) removeTree(name string) ([]string, error) {
	return nil, fmt.Errorf("remove cgroup tree %s: %w", name, ErrNotSupported)
}

//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package state

import (
	"errors"
	"fmt"
	"os"
)

// tryLock returns an error wrapping errors.ErrUnsupported: there is no
// flock here.
func tryLock(f *os.File) (held bool, err error) {
	return false, fmt.Errorf("no flock on this system: %w", errors.ErrUnsupported)
}

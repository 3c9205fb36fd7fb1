//go:build !unix

package state

import "os"

// openRegular opens path for reading (or, with create, for reading and
// writing, creating a missing file with mode 0o600) if, after following
// symlinks, it is a regular file, and returns it with its size; anything else is an error
// wrapping ErrNotRegular. The type is taken from the opened file.
func openRegular(path string, create bool) (*os.File, int64, error) {
	flags := os.O_RDONLY
	if create {
		flags = os.O_RDWR | os.O_CREATE
	}
	f, err := os.OpenFile(path, flags, 0o600)
	if err != nil {
		return nil, 0, err
	}
	info, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, 0, err
	}
	if !info.Mode().IsRegular() {
		_ = f.Close()
		return nil, 0, notRegular(info.Mode())
	}
	return f, info.Size(), nil
}

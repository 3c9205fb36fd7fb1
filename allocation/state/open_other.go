//go:build !unix

package state

import "os"

// openRegular opens path for reading if, after following symlinks, it is
// a regular file, and returns it with its size; anything else is an error
// wrapping ErrNotRegular. The type is taken from the opened file.
func openRegular(path string) (*os.File, int64, error) {
	f, err := os.Open(path)
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
		return nil, 0, notRegular(path, info.Mode())
	}
	return f, info.Size(), nil
}

//go:build unix

package state

import (
	"io/fs"
	"os"
	"syscall"
)

// openRegular opens path for reading (or, with create, for reading and
// writing, creating a missing file with mode 0o600) if, after following
// symlinks, it is a regular file, and returns it with its size. The open does not block
// (O_NONBLOCK: opening a FIFO for reading would wait for a writer) and the
// type is taken from the opened descriptor (fstat), so that the file
// cannot be swapped between the check and the open. Anything else is an
// error wrapping ErrNotRegular that says what it is; a missing file is an
// error wrapping fs.ErrNotExist.
func openRegular(path string, create bool) (*os.File, int64, error) {
	flags := syscall.O_RDONLY
	if create {
		flags = syscall.O_RDWR | syscall.O_CREAT
	}
	fd, err := syscall.Open(path, flags|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		// A socket cannot be opened (ENXIO); say what is there.
		if info, serr := os.Stat(path); serr == nil && !info.Mode().IsRegular() {
			return nil, 0, notRegular(info.Mode())
		}
		return nil, 0, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		_ = syscall.Close(fd)
		return nil, 0, &fs.PathError{Op: "fstat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		_ = syscall.Close(fd)
		return nil, 0, notRegular(unixType(uint32(st.Mode)))
	}
	return os.NewFile(uintptr(fd), path), st.Size, nil
}

// unixType is the fs.FileMode type bits of a stat mode.
func unixType(mode uint32) fs.FileMode {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		return fs.ModeDir
	case syscall.S_IFIFO:
		return fs.ModeNamedPipe
	case syscall.S_IFSOCK:
		return fs.ModeSocket
	case syscall.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		return fs.ModeDevice
	}
	return fs.ModeIrregular
}

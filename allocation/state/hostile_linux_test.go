package state

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOpenCheckpointRefusesAFIFO: a FIFO without a writer would block a
// reading open forever; it is refused at once.
func TestOpenCheckpointRefusesAFIFO(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, AllocatedStateFile)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := openWithin(t, dir)
	wantRefused(t, s, err, ErrNotRegular, path, "it is a FIFO")
}

// TestOpenCheckpointRefusesASymlinkToDevZero: /dev/zero never ends; the
// symlink is followed and the device refused before any read.
func TestOpenCheckpointRefusesASymlinkToDevZero(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, AllocatedStateFile)
	if err := os.Symlink("/dev/zero", path); err != nil {
		t.Fatal(err)
	}
	s, err := openWithin(t, dir)
	wantRefused(t, s, err, ErrNotRegular, path, "it is a character device")
}

func TestOpenCheckpointRefusesASocket(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, AllocatedStateFile)
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Skipf("cannot make a socket at %s: %v", path, err)
	}
	defer l.Close()
	s, err := openWithin(t, dir)
	wantRefused(t, s, err, ErrNotRegular, path, "it is a socket")
}

func TestOpenCheckpointRefusesABlockDevice(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, AllocatedStateFile)
	// A loop device's numbers; whether or not the device exists, the node
	// is not a file.
	if err := syscall.Mknod(path, syscall.S_IFBLK|0o600, 7<<8); err != nil {
		t.Skipf("cannot make a block device node: %v", err)
	}
	s, err := openWithin(t, dir)
	wantRefused(t, s, err, ErrNotRegular, path, "it is a block device")
}

// TestOpenCheckpointLimitsWhatItReads: a regular file whose stat size is
// 0 but which has more (a /proc file) is cut off by the limit on what is
// read, not trusted for its size.
func TestOpenCheckpointLimitsWhatItReads(t *testing.T) {
	const proc = "/proc/self/maps"
	if info, err := os.Stat(proc); err != nil || !info.Mode().IsRegular() || info.Size() != 0 {
		t.Skipf("%s is not a regular file of stat size 0 here (%v, %v)", proc, info, err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, AllocatedStateFile)
	if err := os.Symlink(proc, path); err != nil {
		t.Fatal(err)
	}
	s, err := openWithin(t, dir, WithMaxSize(64))
	wantRefused(t, s, err, ErrTooLarge, path, "more than the limit of 64 bytes")
}

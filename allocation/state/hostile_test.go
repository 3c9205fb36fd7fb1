package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// openWithin opens dir/AllocatedStateFile with opts and fails the test if
// that takes more than a few seconds (it is meant to return at once: the
// bound only keeps a test that would block from hanging the run).
func openWithin(t *testing.T, dir string, opts ...CheckpointOption) (*Store, error) {
	t.Helper()
	type result struct {
		s   *Store
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := OpenCheckpoint(t.Context(), dir, AllocatedStateFile, opts...)
		done <- result{s, err}
	}()
	select {
	case r := <-done:
		return r.s, r.err
	case <-time.After(10 * time.Second):
		t.Fatalf("OpenCheckpoint(%s) did not return within 10 s", dir)
		return nil, nil
	}
}

// wantRefused checks that err wraps want, is not ErrCorruptCheckpoint
// (nothing was decoded) and names path and what was wrong.
func wantRefused(t *testing.T, s *Store, err, want error, path, what string) {
	t.Helper()
	if !errors.Is(err, want) || errors.Is(err, ErrCorruptCheckpoint) {
		t.Fatalf("OpenCheckpoint() = %v, %v; want an error wrapping %v and not ErrCorruptCheckpoint", s, err, want)
	}
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), what) {
		t.Errorf("error %q does not name %s and %q", err, path, what)
	}
}

func TestOpenCheckpointRefusesADirectory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, AllocatedStateFile)
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	s, err := openWithin(t, dir)
	wantRefused(t, s, err, ErrNotRegular, path, "it is a directory")
}

func TestOpenCheckpointRefusesASymlinkToADirectory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, AllocatedStateFile)
	if err := os.Symlink(t.TempDir(), path); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	s, err := openWithin(t, dir)
	wantRefused(t, s, err, ErrNotRegular, path, "it is a directory")
}

// TestOpenCheckpointFollowsSymlinks: a symlink to a regular checkpoint is
// read, as the kubelet reads one.
func TestOpenCheckpointFollowsSymlinks(t *testing.T) {
	dir := t.TempDir()
	target := writeFixture(t, t.TempDir())
	if err := os.Symlink(target, filepath.Join(dir, AllocatedStateFile)); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	s, err := openWithin(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Get("pod1"); !ok {
		t.Error("the checkpoint behind the symlink was not loaded")
	}
}

func TestOpenCheckpointRefusesAnOversizeFile(t *testing.T) {
	dir := t.TempDir()
	path := writeFixture(t, dir)
	limit := int64(len(kubeletFixture) - 1)
	s, err := openWithin(t, dir, WithMaxSize(limit))
	wantRefused(t, s, err, ErrTooLarge, path, fmt.Sprintf("more than the limit of %d", limit))
	// At the limit it loads.
	if _, err := openWithin(t, dir, WithMaxSize(limit+1)); err != nil {
		t.Errorf("a file of exactly the limit: %v", err)
	}
	// A sparse file exceeds the default limit cheaply.
	if err := os.Truncate(path, DefaultMaxSize+1); err != nil {
		t.Fatal(err)
	}
	s, err = openWithin(t, dir)
	wantRefused(t, s, err, ErrTooLarge, path, fmt.Sprintf("%d bytes, more than the limit of %d", DefaultMaxSize+1, DefaultMaxSize))
}

func TestOpenCheckpointRefusesANonPositiveLimit(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int64{0, -1} {
		if s, err := OpenCheckpoint(t.Context(), dir, AllocatedStateFile, WithMaxSize(n)); err == nil || !strings.Contains(err.Error(), "not positive") {
			t.Errorf("WithMaxSize(%d): OpenCheckpoint() = %v, %v; want an error", n, s, err)
		}
	}
}

package state

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFixture writes the kubelet's fixture as dir/AllocatedStateFile and
// returns its path.
func writeFixture(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, AllocatedStateFile)
	if err := os.WriteFile(path, []byte(kubeletFixture), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestOpenCheckpointNilContext(t *testing.T) {
	dir := t.TempDir()
	path := writeFixture(t, dir)
	var ctx context.Context
	s, err := OpenCheckpoint(ctx, dir, AllocatedStateFile)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "nil context") {
		t.Fatalf("OpenCheckpoint(nil ctx) = %v, %v; want an error naming %s and the nil context", s, err, path)
	}
}

// TestOpenCheckpointCancelled: a context that is done stops the loading
// with its error, naming the file, whether or not the file exists.
func TestOpenCheckpointCancelled(t *testing.T) {
	for _, exists := range []bool{true, false} {
		dir := t.TempDir()
		path := filepath.Join(dir, AllocatedStateFile)
		if exists {
			writeFixture(t, dir)
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		s, err := OpenCheckpoint(ctx, dir, AllocatedStateFile)
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), path) {
			t.Errorf("file exists %v: OpenCheckpoint(cancelled) = %v, %v; want context.Canceled naming %s", exists, s, err, path)
		}
	}
}

// doneAfter is a context whose Err is nil for its first n calls and
// context.Canceled after them.
type doneAfter struct {
	context.Context
	n int
}

func (c *doneAfter) Err() error {
	if c.n > 0 {
		c.n--
		return nil
	}
	return context.Canceled
}

// TestOpenCheckpointCancelledWhileReading: the context is looked at
// between the chunks of a large file, not only before it is opened.
func TestOpenCheckpointCancelledWhileReading(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, AllocatedStateFile)
	if err := os.WriteFile(path, make([]byte, 3*readChunk), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := &doneAfter{Context: t.Context(), n: 2}
	_, err := OpenCheckpoint(ctx, dir, AllocatedStateFile)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "read checkpoint "+path) {
		t.Fatalf("OpenCheckpoint() = %v; want context.Canceled while reading %s", err, path)
	}
}

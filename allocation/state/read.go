package state

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
)

// DefaultMaxSize is the largest checkpoint file OpenCheckpoint reads
// unless WithMaxSize says otherwise: 64 MiB. A node's real checkpoints
// are kilobytes (a few hundred bytes per pod, and a node runs at most a
// few hundred pods), but the limit is there to refuse a file that is not
// a checkpoint at all, not to police the number of pods: it still holds
// 100,000 pods of one to three containers with cpu and memory requests
// and limits each (34 MB, BenchmarkCheckpointLoad's largest file), about
// the double of that.
const DefaultMaxSize int64 = 64 << 20

// ErrNotRegular is wrapped by the error OpenCheckpoint returns when the
// checkpoint path is not a regular file once symlinks are followed: a
// directory, a FIFO, a device or a socket. Reading one could block
// forever (a FIFO without a writer) or never end (/dev/zero), so it is
// refused before any read.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is wrapped by the error OpenCheckpoint returns for a
// checkpoint file larger than its size limit (DefaultMaxSize, or
// WithMaxSize). Such a file is not corrupt as far as anyone has looked,
// so this is not ErrCorruptCheckpoint: a node with that many pods can
// raise the limit.
var ErrTooLarge = errors.New("checkpoint too large")

// notRegular is the error for a file of type mode.
func notRegular(mode fs.FileMode) error {
	kind := "an irregular file"
	switch {
	case mode&fs.ModeDir != 0:
		kind = "a directory"
	case mode&fs.ModeNamedPipe != 0:
		kind = "a FIFO"
	case mode&fs.ModeSocket != 0:
		kind = "a socket"
	case mode&fs.ModeCharDevice != 0:
		kind = "a character device"
	case mode&fs.ModeDevice != 0:
		kind = "a block device"
	}
	return fmt.Errorf("it is %s: %w", kind, ErrNotRegular)
}

// readChunk is how much readCheckpoint reads between two looks at its
// context.
const readChunk = 1 << 20

// readCheckpoint reads the regular file at path (openRegular) in chunks
// of readChunk, giving up with ctx's error when ctx is done. A file of
// more than limit bytes is an error wrapping ErrTooLarge; the limit is
// enforced on what is read (the size can change after the open), the
// size the file had when opened only sizes the buffer and refuses a file
// too large at once. A missing file is an error wrapping fs.ErrNotExist.
func readCheckpoint(ctx context.Context, path string, limit int64) ([]byte, error) {
	f, size, err := openRegular(path, false)
	if err != nil {
		return nil, fmt.Errorf("read checkpoint %s: %w", path, err)
	}
	defer f.Close()
	if size > limit {
		return nil, fmt.Errorf("read checkpoint %s: %d bytes, more than the limit of %d: %w", path, size, limit, ErrTooLarge)
	}
	r := io.LimitReader(f, limit+1)
	blob := make([]byte, 0, size+1)
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("read checkpoint %s: %w", path, err)
		}
		if len(blob) == cap(blob) {
			blob = append(blob, 0)[:len(blob)]
		}
		n, err := r.Read(blob[len(blob):min(cap(blob), len(blob)+readChunk)])
		blob = blob[:len(blob)+n]
		if int64(len(blob)) > limit {
			return nil, fmt.Errorf("read checkpoint %s: more than the limit of %d bytes: %w", path, limit, ErrTooLarge)
		}
		if errors.Is(err, io.EOF) {
			return blob, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read checkpoint %s: %w", path, err)
		}
	}
}

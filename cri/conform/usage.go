package conform

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/resizelet/resizelet/cri"
)

// usageFile is where the run makes its container use memory: /dev/shm is
// tmpfs, whose pages cannot be reclaimed without swap and are charged to
// the cgroup of the process that writes them. It lives in the sandbox's
// own /dev/shm, which goes with the sandbox.
const usageFile = "/dev/shm/resizelet-conform-usage"

// usageExecTimeout bounds the command that writes the file; in an
// emulated VM it takes seconds.
const usageExecTimeout = 2 * time.Minute

// memoryUser is an in-process runtime that sets a container's usage
// itself, such as *cri.SimContainerd.
type memoryUser interface {
	SetMemoryUsage(containerID string, bytes int64) error
}

// useMemory makes the container use bytes (a whole number of MiB) of
// memory, replacing what it used before. An in-process runtime is asked
// directly (cri.SetMemoryUsage); a real one runs dd in the container,
// which writes in 1 MiB blocks (cri.SetMemoryUsage's head writes in small
// ones, which an emulated VM takes minutes over).
func (r *run) useMemory(ctx context.Context, id string, bytes int64) error {
	var rt cri.Runtime = r.rt
	for range 16 { // decorator chains are short; the bound guards against a cycle
		if _, ok := rt.(memoryUser); ok {
			return cri.SetMemoryUsage(ctx, r.rt, id, bytes)
		}
		u, ok := rt.(interface{ Unwrap() cri.Runtime })
		if !ok {
			break
		}
		rt = u.Unwrap()
	}
	cmd := []string{"sh", "-c", fmt.Sprintf("rm -f %[1]s; dd if=/dev/zero of=%[1]s bs=1048576 count=%[2]d 2>/dev/null", usageFile, bytes>>20)}
	_, stderr, err := r.rt.ExecSync(ctx, id, cmd, usageExecTimeout)
	if err != nil {
		if msg := strings.TrimSpace(string(stderr)); msg != "" {
			return fmt.Errorf("ExecSync %q: %w (stderr: %s)", cmd, err, msg)
		}
		return fmt.Errorf("ExecSync %q: %w", cmd, err)
	}
	return nil
}

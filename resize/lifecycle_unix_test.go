//go:build unix

package resize

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resizelet/resizelet/allocation/state"
	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
)

// TestNewNodeRefusesHostileCheckpoints: a node whose checkpoint path is a
// FIFO, a symlink to /dev/zero, a directory or a file over the size limit
// does not start, and says which file and why, within seconds (a FIFO used
// to make NewNode wait for ever, /dev/zero to grow memory until the
// process was killed); one whose context is done does not start either.
func TestNewNodeRefusesHostileCheckpoints(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(path string) error
		want error
	}{
		{"fifo", func(path string) error { return syscall.Mkfifo(path, 0o600) }, state.ErrNotRegular},
		{"symlink to /dev/zero", func(path string) error { return os.Symlink("/dev/zero", path) }, state.ErrNotRegular},
		{"directory", func(path string) error { return os.Mkdir(path, 0o700) }, state.ErrNotRegular},
		{"oversize", func(path string) error { return os.WriteFile(path, make([]byte, state.DefaultMaxSize+1), 0o600) }, state.ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, state.AllocatedStateFile)
			if err := tc.make(path); err != nil {
				t.Fatal(err)
			}
			kernel := cgroup.NewSimKernel(cgroup.V2)
			deps := Deps{Cluster: NewCluster(ClusterOptions{}), Cgroups: kernel, Runtime: cri.NewSimContainerd(kernel), CheckpointDir: dir}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			start := time.Now()
			_, err := NewNode(ctx, smallNode(), deps)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("NewNode: %v, want an error matching %v that names %s", err, tc.want, path)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Fatalf("NewNode took %s to refuse it", took)
			}
			// The refused node let go of the directory.
			if lock, err := state.LockDir(dir, "next"); err != nil {
				t.Fatalf("the directory is still held: %v", err)
			} else {
				lock.Unlock()
			}
		})
	}
	t.Run("cancelled context", func(t *testing.T) {
		kernel := cgroup.NewSimKernel(cgroup.V2)
		deps := Deps{Cluster: NewCluster(ClusterOptions{}), Cgroups: kernel, Runtime: cri.NewSimContainerd(kernel), CheckpointDir: t.TempDir()}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := NewNode(ctx, smallNode(), deps); !errors.Is(err, context.Canceled) {
			t.Fatalf("NewNode with a cancelled context: %v", err)
		}
	})
}

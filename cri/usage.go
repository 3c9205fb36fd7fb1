package cri

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// usageFilePrefix is where SetMemoryUsage keeps the memory it makes a
// container use. /dev/shm is tmpfs: its pages cannot be reclaimed and are
// charged to the cgroup of the process that writes them (examples/realhost/README.md §1).
// Containers of one pod share the sandbox's /dev/shm, so each container gets
// its own file, named after its ID.
const usageFilePrefix = "/dev/shm/resizelet-usage-"

// usageExecTimeout bounds the ExecSync that writes the usage file.
const usageExecTimeout = time.Minute

// memoryUser is a runtime that can set a container's memory usage itself,
// such as *SimContainerd.
type memoryUser interface {
	SetMemoryUsage(containerID string, bytes int64) error
}

// SetMemoryUsage makes the container use about bytes of memory. On a
// runtime that can set usage itself (*SimContainerd, also when wrapped by
// decorators with an Unwrap() Runtime method such as Recorder and
// FaultInjector) it asks it directly, so faults injected on ExecSync do
// not apply. On any other runtime it runs, through ExecSync,
//
//	sh -c "rm -f /dev/shm/resizelet-usage-<id>; head -c <bytes> /dev/zero > /dev/shm/resizelet-usage-<id>"
//
// which replaces the container's previous usage file with one of that size:
// unreclaimable memory charged to the container's cgroup.
//
// With the pod's own IPC namespace, containerd mounts a 64 MiB /dev/shm in
// the sandbox, so larger values need a sandbox in the host IPC namespace
// (whose files then outlive the pod and must be removed by whoever created
// them). If the kernel OOM-kills the writer, ExecSync reports the failure.
func SetMemoryUsage(ctx context.Context, rt Runtime, containerID string, bytes int64) error {
	if rt == nil {
		return fmt.Errorf("set memory usage of container %q: %w", containerID, ErrNoRuntime)
	}
	if bytes < 0 {
		return fmt.Errorf("set memory usage of container %q to %d: negative usage: %w", containerID, bytes, ErrInvalidArgument)
	}
	if u, ok := findRuntime[memoryUser](rt); ok {
		return u.SetMemoryUsage(containerID, bytes)
	}
	_, stderr, err := rt.ExecSync(ctx, containerID, usageCommand(containerID, bytes), usageExecTimeout)
	if err != nil {
		if msg := strings.TrimSpace(string(stderr)); msg != "" {
			return fmt.Errorf("set memory usage of container %q to %d: %w (stderr: %s)", containerID, bytes, err, msg)
		}
		return fmt.Errorf("set memory usage of container %q to %d: %w", containerID, bytes, err)
	}
	return nil
}

// usageFile is the container's usage file. The ID is reduced to characters
// that need no quoting in a shell word (containerd's IDs are hex already).
func usageFile(containerID string) string {
	b := []byte(containerID)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	return usageFilePrefix + string(b)
}

// usageCommand is the command SetMemoryUsage runs through ExecSync.
func usageCommand(containerID string, bytes int64) []string {
	f := usageFile(containerID)
	return []string{"sh", "-c", "rm -f " + f + "; head -c " + strconv.FormatInt(bytes, 10) + " /dev/zero > " + f}
}

// parseUsageCommand returns the byte count of a command usageCommand made
// for the container, and false for any other command.
func parseUsageCommand(containerID string, cmd []string) (int64, bool) {
	if len(cmd) != 3 || cmd[0] != "sh" || cmd[1] != "-c" {
		return 0, false
	}
	f := usageFile(containerID)
	rest, ok := strings.CutPrefix(cmd[2], "rm -f "+f+"; head -c ")
	if !ok {
		return 0, false
	}
	num, ok := strings.CutSuffix(rest, " /dev/zero > "+f)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// Package cgroup is how resizelet reads and writes Linux control groups:
// the Manager interface and its implementations. What the kubelet computes
// for cgroups (the formulas, the pod cgroup configuration, cgroup names)
// is in the pure package cgconfig.
//
// Start with Manager. SimKernel (simkernel.go) simulates the Linux kernel's
// cgroup hierarchy in memory, for tests and simulations: it shows the
// kernel's files for cgroup v1 and v2, records every write in order, and
// answers like the kernel where a resize can tell the difference (EBUSY on
// v1, an OOM kill on v2). The implementation over a real cgroup filesystem
// is cgroupfs.FS, in package cgroup/cgroupfs (and for the systemd cgroup
// driver, whose slices are systemd units, systemd.Manager in package
// cgroup/systemd, over an FS), so that a program that only
// simulates does not link containerd/cgroups. Both read and write the
// kernel's file formats through fileformat.go, so that the simulator and
// the real thing cannot drift apart (SimKernel checks its writes with
// Canonical's rules in numbers, simCanonical, which its tests hold to
// Canonical). FaultInjector
// (fault.go) and Recorder (recorder.go) wrap any Manager to fail chosen
// writes and to keep the writes made, for tests and transcripts. SetValues
// is Set for callers that need only its error: on the simulator it makes
// the writes without building their record. The names Memory and
// NewMemory of the simulator remain as deprecated aliases (deprecated.go).
package cgroup

import (
	"errors"
	"fmt"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// The value types and constants live in package cgconfig, which the
// resize core uses without importing any manager; these aliases keep them
// reachable under their old names.
type (
	// Version is cgconfig.Version: the cgroup hierarchy version of a host.
	Version = cgconfig.Version
	// Driver is cgconfig.Driver: the kubelet's cgroup driver.
	Driver = cgconfig.Driver
	// Values is cgconfig.Values: one cgroup's CPU and memory files.
	Values = cgconfig.Values
)

const (
	V1             = cgconfig.V1
	V2             = cgconfig.V2
	DriverCgroupfs = cgconfig.DriverCgroupfs
	DriverSystemd  = cgconfig.DriverSystemd
	Unlimited      = cgconfig.Unlimited
)

// Write is one cgroup file write: what a Manager changed, or (with Err set)
// what it tried to change.
type Write struct {
	Path string // the cgroup, relative to the manager's root, e.g. kubepods/burstable/pod1234
	File string // e.g. cpu.max, memory.limit_in_bytes
	Old  string // content before the write, trimmed
	New  string // content written, trimmed
	Err  error  // the kernel's answer; nil on success
}

// Manager reads and writes cgroups below one root. Paths are relative to that
// root and use "/" as separator ("kubepods/burstable/pod<uid>").
//
// Implementations must be safe for concurrent use. They hold no lock across
// calls, so two writers of the same cgroup race as they would on a kernel.
type Manager interface {
	// Version reports the cgroup version of the hierarchy the manager writes.
	Version() Version

	// Create makes the cgroup and any missing parent. Creating a cgroup that
	// exists is not an error.
	Create(path string) error

	// Delete removes the cgroup. It fails if the cgroup has children or
	// processes. Deleting a cgroup that does not exist is not an error.
	Delete(path string) error

	// Exists reports whether the cgroup exists.
	Exists(path string) bool

	// Get reads the cgroup's CPU and memory values back from its files
	// (cpu.shares or cpu.weight, the quota and period, the memory limit).
	Get(path string) (Values, error)

	// Set writes the fields of v that are set and differ from the files'
	// current content, in a fixed order: memory before CPU on both versions;
	// on v2 cpu.weight before cpu.max; on v1 cpu.shares, cpu.cfs_period_us,
	// cpu.cfs_quota_us. It stops at the first failure. It returns the writes
	// it made, the failed one last (with Err set), so a caller can report
	// exactly what changed. The returned error wraps the failed write's
	// error with the cgroup path and file.
	Set(path string, v Values) ([]Write, error)

	// ReadFile returns the trimmed content of one file of the cgroup.
	ReadFile(path, file string) (string, error)

	// MemoryUsage returns the memory charged to the cgroup and its
	// descendants, in bytes (memory.current on v2, memory.usage_in_bytes on v1).
	MemoryUsage(path string) (int64, error)
}

// ErrNoManager is what the functions of this package that take a Manager
// answer a nil one with, and what a FaultInjector or Recorder answers when
// it wraps none (it was given nil, or not made by its constructor): there
// is no hierarchy to act on.
var ErrNoManager = errors.New("cgroup: no Manager (nil, or a wrapper not made by its constructor)")

// SetValues is m.Set(path, v) for a caller that does not need the writes
// Set returns, only whether it failed: the same writes with the same
// effects, and the same error. On failure it also returns the File of the
// last Write Set would have returned (the failed write's), or "" when Set
// would have returned none.
//
// For a *SimKernel, and a *FaultInjector over one, it makes the writes
// without building the []Write and its texts (SimKernel.SetValues), which
// is most of what a simulated write costs; for any other Manager it calls
// Set. It looks for those exact types rather than for a SetValues method,
// because a decorator that embeds a *SimKernel and has a Set of its own
// (to log the writes Set returns, say) would have the SimKernel's
// SetValues promoted to it, which would go around its Set.
func SetValues(m Manager, path string, v Values) (failedFile string, err error) {
	if m == nil {
		return "", fmt.Errorf("set %s: %w", path, ErrNoManager)
	}
	switch m := m.(type) {
	case *SimKernel:
		return m.SetValues(path, v)
	case *FaultInjector:
		return m.SetValues(path, v)
	}
	return setForFile(m, path, v)
}

// setForFile is m.Set returning, on failure, the File of the last write
// Set returned instead of the writes.
func setForFile(m Manager, path string, v Values) (failedFile string, err error) {
	ws, err := m.Set(path, v)
	if err != nil && len(ws) > 0 {
		failedFile = ws[len(ws)-1].File
	}
	return failedFile, err
}

// Errors a Manager returns, wrapped with the path and file they concern.
// Callers test them with errors.Is.
var (
	// ErrNotExist means the cgroup does not exist.
	ErrNotExist = errors.New("cgroup does not exist")
	// ErrNotSupported means the host lacks a controller or cgroup version the
	// call needs.
	ErrNotSupported = errors.New("not supported on this host")
	// ErrInvalidPath means a path would leave the manager's root or holds a
	// character a cgroup name may not have. It is cgconfig.ErrInvalidPath,
	// the error of the rule every manager checks paths with
	// (cgconfig.ValidatePath), so that the resize core, which imports no
	// manager, refuses a NodeConfig.CgroupRoot with the same error.
	ErrInvalidPath = cgconfig.ErrInvalidPath
)

// validatePath checks a cgroup path relative to a manager's root with
// cgconfig.ValidatePath's rule: "" for the root itself, else "/"
// separated, no leading or trailing "/", no empty, "." or ".." component,
// no component longer than a file name may be, and no control character.
// Every pod UID and container ID that reaches a file path passes through
// it, in every manager (cgroupfs.FS calls cgconfig.ValidatePath itself),
// so no write can land outside the root.
func validatePath(path string) error {
	return cgconfig.ValidatePath(path)
}

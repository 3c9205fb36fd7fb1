// Package cgroup holds what the kubelet knows about Linux control groups for
// in-place pod resize: the formulas that turn CPU millicores and memory bytes
// into cgroup values (formulas.go), the pod cgroup
// configuration the kubelet derives from a pod (podconfig.go), pod cgroup
// names for the cgroupfs and systemd drivers (names.go), and the Manager
// interface through which the rest of resizelet reads and writes cgroups.
//
// Start with Manager. Memory (memory.go) is the in-memory implementation that
// tests and simulations share: it keeps files by name for cgroup v1 and v2,
// records every write in order, and answers like the kernel where a resize
// can tell the difference (EBUSY on v1, an OOM kill on v2). FS (fs.go) is the
// implementation over a real cgroup filesystem. FaultInjector (fault.go)
// and Recorder (recorder.go) wrap any Manager to fail chosen writes and to
// keep the writes made, for tests and transcripts.
package cgroup

import (
	"errors"
)

// Version is the cgroup hierarchy version of a host.
type Version int

const (
	// V1 is the legacy hierarchy: one mount per controller.
	V1 Version = 1
	// V2 is the unified hierarchy.
	V2 Version = 2
)

// String returns "v1" or "v2".
func (v Version) String() string {
	switch v {
	case V1:
		return "v1"
	case V2:
		return "v2"
	}
	return "unknown"
}

// Driver is the kubelet's cgroup driver; it decides how cgroups are named.
type Driver string

const (
	// DriverCgroupfs names cgroups as plain paths: kubepods/burstable/pod<uid>.
	DriverCgroupfs Driver = "cgroupfs"
	// DriverSystemd names cgroups as systemd slices:
	// kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid>.slice.
	DriverSystemd Driver = "systemd"
)

// Unlimited is the value of Values.CPUQuota and Values.MemoryLimit that means
// "no limit": -1 in the kubelet's and OCI's terms, written as "max" on cgroup v2
// and as -1 on cgroup v1.
const Unlimited int64 = -1

// Values is the CPU and memory configuration of one cgroup, in the units of
// the files themselves. A nil field is not set: Set leaves that file alone,
// and Get returns nil for a file the cgroup does not have.
//
// CPUShares is cpu.shares and is used on cgroup v1 only; CPUWeight is
// cpu.weight and is used on cgroup v2 only. The caller converts shares to a
// weight (the kubelet linearly for pod cgroups, the OCI runtime by its own
// formula for container cgroups; see WeightFunc), because the conversion is a
// property of the writer, not of the cgroup.
type Values struct {
	CPUShares   *uint64
	CPUWeight   *uint64
	CPUQuota    *int64 // microseconds per period; Unlimited for no limit
	CPUPeriod   *uint64
	MemoryLimit *int64 // bytes; Unlimited for no limit
}

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

// Errors a Manager returns, wrapped with the path and file they concern.
// Callers test them with errors.Is.
var (
	// ErrNotExist means the cgroup does not exist.
	ErrNotExist = errors.New("cgroup does not exist")
	// ErrNotSupported means the host lacks a controller or cgroup version the
	// call needs.
	ErrNotSupported = errors.New("not supported on this host")
	// ErrInvalidPath means a path would leave the manager's root or holds a
	// character a cgroup name may not have.
	ErrInvalidPath = errors.New("invalid cgroup path")
)

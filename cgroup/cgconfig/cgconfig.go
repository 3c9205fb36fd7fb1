// Package cgconfig is what the kubelet knows about the cgroups it and the
// runtime write during a resize, as pure functions: the formulas that turn
// millicores and bytes into cgroup values and back (formulas.go), the pod
// cgroup configuration of a pod (PodConfig, podconfig.go), the cgroup
// names of pods and containers for the cgroupfs and systemd drivers
// (names.go), and the value types the cgroup managers read and write.
//
// It does no I/O: the managers that touch cgroups live in the parent
// package cgroup, and the resize core computes with this package alone.
// Start with PodConfig and ResourceConfig.Values.
package cgconfig

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

// V1UnlimitedMemory is what cgroup v1 reads back from memory.limit_in_bytes
// after -1 was written: the page counter maximum in bytes with 4 KiB pages.
// The kubelet compares raw read-backs, so on v1 adding a pod memory limit
// counts as a decrease while on v2, where "max" reads as -1, it counts as
// an increase.
const V1UnlimitedMemory int64 = (1<<63 - 1) / PageSize * PageSize

// PageSize is the unit in which the kernel keeps memory limits: a limit
// reads back rounded down to a multiple of it.
const PageSize = 4096

// Values is the CPU and memory configuration of one cgroup, in the units of
// the files themselves. A nil field is not set: a manager's Set leaves that
// file alone, and Get returns nil for a file the cgroup does not have.
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

package cgroupfs

import (
	"strconv"
	"testing"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// v1Unlimited is the kernel's read-back of an unlimited v1 memory limit.
var v1Unlimited = strconv.FormatInt(cgconfig.V1UnlimitedMemory, 10)

// TestSameKeepsFSReading pins how FS's Set decides that a write would
// change nothing: by the kernel's read-back, except for the two memory
// limit cases where FS has its own reading.
func TestSameKeepsFSReading(t *testing.T) {
	tests := []struct {
		version         cgroup.Version
		file, old, want string
		same            bool
	}{
		{cgroup.V1, "cpu.shares", "2", "1", true},
		{cgroup.V1, "cpu.shares", "1024", "1", false},
		{cgroup.V1, "cpu.cfs_quota_us", "-1", "-5", true},
		{cgroup.V1, "cpu.cfs_quota_us", "-1", "500", false},
		{cgroup.V1, "memory.limit_in_bytes", "4096", "4097", true},
		{cgroup.V1, "memory.limit_in_bytes", v1Unlimited, "-1", true},
		// A temp-dir tree holds the -1 that was written.
		{cgroup.V1, "memory.limit_in_bytes", "-1", v1Unlimited, true},
		// FS reads every negative limit as unlimited.
		{cgroup.V1, "memory.limit_in_bytes", v1Unlimited, "-5", true},
		{cgroup.V1, "memory.limit_in_bytes", "4096", "-1", false},
		{cgroup.V2, "cpu.weight", "100", "100", true},
		{cgroup.V2, "cpu.weight", "100", "0", false},
		{cgroup.V2, "cpu.max", "max 100000", "max 100000", true},
		{cgroup.V2, "cpu.max", "max 100000", "500 100000", false},
		{cgroup.V2, "memory.max", "4096", "4097", true},
		{cgroup.V2, "memory.max", "max", "max", true},
		{cgroup.V2, "memory.max", "4096", "-5", false},
		// FS compares a limit at the page counter maximum as a number.
		{cgroup.V2, "memory.max", "max", "9223372036854775807", false},
		{cgroup.V2, "memory.max", v1Unlimited, "9223372036854775807", true},
	}
	for _, tt := range tests {
		if got := same(tt.version, tt.file, tt.old, tt.want); got != tt.same {
			t.Errorf("same(%v, %s, %q, %q) = %v, want %v", tt.version, tt.file, tt.old, tt.want, got, tt.same)
		}
	}
}

package cgconfig

import "math"

// The kubelet's constants for CPU values (pkg/kubelet/cm/helpers_linux.go).
const (
	// MinShares is the smallest cpu.shares value the kubelet writes.
	MinShares = 2
	// MaxShares is the largest cpu.shares value the kernel accepts.
	MaxShares = 262144
	// SharesPerCPU is the cpu.shares value of one whole CPU.
	SharesPerCPU = 1024
	// MilliCPUToCPU is the number of millicores in one CPU.
	MilliCPUToCPU = 1000
	// QuotaPeriod is the default CFS period in microseconds (100 ms).
	QuotaPeriod = 100000
	// MinQuotaPeriod is the smallest CFS quota the kubelet writes, in
	// microseconds (1 ms); it makes any CPU limit below 10m behave as 10m.
	MinQuotaPeriod = 1000
	// MinMilliCPULimit is the CPU limit, in millicores, that MinQuotaPeriod
	// gives at the default period.
	MinMilliCPULimit = 10
	// MaxWeight is the largest cgroup v2 cpu.weight.
	MaxWeight = 10000
)

// MilliCPUToShares turns a CPU request in millicores into cpu.shares:
// 0 gives MinShares; otherwise milli*1024/1000 (integer division), clamped to
// [MinShares, MaxShares].
func MilliCPUToShares(milliCPU int64) uint64 {
	if milliCPU == 0 {
		return MinShares
	}
	shares := milliCPU * SharesPerCPU / MilliCPUToCPU
	if shares < MinShares {
		return MinShares
	}
	if shares > MaxShares {
		return MaxShares
	}
	return uint64(shares)
}

// MilliCPUToQuota turns a CPU limit in millicores into a CFS quota for the
// given period (microseconds). 0 gives 0, which callers treat as "no limit";
// any other value is milli*period/1000, raised to at least MinQuotaPeriod.
func MilliCPUToQuota(milliCPU int64, period int64) int64 {
	if milliCPU == 0 {
		return 0
	}
	quota := milliCPU * period / MilliCPUToCPU
	if quota < MinQuotaPeriod {
		quota = MinQuotaPeriod
	}
	return quota
}

// SystemdQuota is the CFS quota the systemd cgroup driver writes for quota
// and period (0: the default period). libcontainer's systemd manager
// (opencontainers/cgroups v0.0.3, systemd/common.go addCPUQuota, which the
// kubelet v1.35.4 uses for pod slices and runc 1.3 for container scopes)
// gives systemd the quota as CPUQuotaPerSecUSec, which systemd keeps in
// whole percents of a CPU: the microseconds per second are rounded up to
// 10 ms, and the file gets the quota they give back, so that systemd and
// the file agree (runc issue #4622). 417m (41700) becomes 42000; a
// quota of 0 or less (no limit) is returned as it is.
func SystemdQuota(quota int64, period uint64) int64 {
	if quota <= 0 {
		return quota
	}
	if period == 0 {
		period = QuotaPeriod
	}
	if perSec := uint64(quota*1000000) / period; perSec%10000 == 0 {
		return quota
	}
	return int64(SystemdQuotaPerSec(quota, period)) * int64(period) / 1000000
}

// SystemdQuotaPerSec is the CPUQuotaPerSecUSec the systemd driver gives
// systemd for a positive quota and period (0: the default period): the
// quota's microseconds per second of CPU time, rounded up to 10 ms
// (addCPUQuota); SystemdQuota is the quota it gives back.
func SystemdQuotaPerSec(quota int64, period uint64) uint64 {
	if period == 0 {
		period = QuotaPeriod
	}
	perSec := uint64(quota*1000000) / period
	if perSec%10000 != 0 {
		perSec = (perSec/10000 + 1) * 10000
	}
	return perSec
}

// RoundSystemdQuota sets v's CPU quota, when set, to the one the systemd
// driver writes for it (SystemdQuota, with v's period or the default). It
// changes the value v points at.
func (v Values) RoundSystemdQuota() {
	if v.CPUQuota == nil {
		return
	}
	var period uint64
	if v.CPUPeriod != nil {
		period = *v.CPUPeriod
	}
	*v.CPUQuota = SystemdQuota(*v.CPUQuota, period)
}

// SharesToMilliCPU is the reverse of MilliCPUToShares that the kubelet uses
// for status: ceil(shares*1000/1024), and 0 below MinShares.
func SharesToMilliCPU(shares int64) int64 {
	if shares < MinShares {
		return 0
	}
	return int64(math.Ceil(float64(shares*MilliCPUToCPU) / SharesPerCPU))
}

// QuotaToMilliCPU is the reverse of MilliCPUToQuota: quota*1000/period, and
// 0 for an unlimited (-1) or zero quota.
func QuotaToMilliCPU(quota int64, period int64) int64 {
	if quota <= 0 || period <= 0 {
		return 0
	}
	return quota * MilliCPUToCPU / period
}

// WeightFunc turns cpu.shares into a cgroup v2 cpu.weight. Which one applies
// is a property of the writer: the kubelet uses LinearWeight for the pod,
// QoS and node cgroups it owns; the OCI runtime uses its own for container
// cgroups (QuadraticWeight for runc >= 1.3.2 and crun >= 1.23, LinearWeight
// before).
type WeightFunc func(shares uint64) uint64

// LinearWeight is the kubelet's mapping of [2, 262144] shares onto
// [1, 10000] weight: 1 + (shares-2)*9999/262142. 0 gives 0 (unset).
func LinearWeight(shares uint64) uint64 {
	if w, ok := weightAtBounds(shares); ok {
		return w
	}
	return 1 + ((shares-2)*9999)/262142
}

// weightAtBounds gives the weight both formulas agree on: 0 for unset
// shares, 1 at or below MinShares, MaxWeight at or above MaxShares.
func weightAtBounds(shares uint64) (uint64, bool) {
	switch {
	case shares == 0:
		return 0, true
	case shares <= MinShares:
		return 1, true
	case shares >= MaxShares:
		return MaxWeight, true
	}
	return 0, false
}

// QuadraticWeight is the mapping of runc >= 1.3.2, crun >= 1.23 and
// containerd/cgroups >= 3.1.0: with l = log2(shares),
// ceil(10^((l^2 + 125*l)/612 - 7/34)). It meets the linear one at 2 and
// 262144 and gives one CPU (1024 shares) the systemd default weight of 100.
func QuadraticWeight(shares uint64) uint64 {
	if w, ok := weightAtBounds(shares); ok {
		return w
	}
	l := math.Log2(float64(shares))
	exponent := (l*l+125*l)/612.0 - 7.0/34.0
	return uint64(math.Ceil(math.Pow(10, exponent)))
}

// WeightToShares is the kubelet's lossy read-back of a pod cgroup's
// cpu.weight as shares (cgroup_v2_manager_linux.go):
// ((weight-1)*262142)/9999 + 2. The kubelet compares the shares it wants
// with this value, not with the shares it last wrote, so a small change can
// leave cpu.weight as it was.
func WeightToShares(weight uint64) uint64 {
	if weight == 0 {
		return 0
	}
	return ((weight-1)*262142)/9999 + 2
}

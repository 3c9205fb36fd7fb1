package systemd

import (
	"math"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
	godbus "github.com/godbus/dbus/v5"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// sliceProperties are the properties of a slice the kubelet creates
// (cgroupCommon.Create -> libcontainer Apply(-1), opencontainers/cgroups
// v0.0.3 systemd/v2.go and v1.go): unitProperties with Wants= its parent
// slice ("-.slice" at the top, as the kubelet's libctCgroupConfig names
// the root).
func sliceProperties(version cgroup.Version, name, parent string) []sddbus.Property {
	return unitProperties(version, name, sddbus.PropWants(parent))
}

// scopeProperties are the properties libcontainer's Apply(pid) starts a
// container's scope with: unitProperties with Slice= the pod slice,
// Delegate=yes and the process.
func scopeProperties(version cgroup.Version, name, slice string, pid int) []sddbus.Property {
	return unitProperties(version, name, sddbus.PropSlice(slice), prop("Delegate", true), prop("PIDs", []uint32{uint32(pid)}))
}

// unitProperties are Apply's properties of a unit, in its order: a
// description naming it, where it goes (placement), accounting for
// memory, CPU, I/O (BlockIO on v1) and tasks, so that systemd enables
// those controllers, and no default dependencies.
func unitProperties(version cgroup.Version, name string, placement ...sddbus.Property) []sddbus.Property {
	io := "IOAccounting"
	if version == cgroup.V1 {
		io = "BlockIOAccounting"
	}
	props := append([]sddbus.Property{sddbus.PropDescription("libcontainer container " + name)}, placement...)
	return append(props,
		prop("MemoryAccounting", true),
		prop("CPUAccounting", true),
		prop(io, true),
		prop("TasksAccounting", true),
		prop("DefaultDependencies", false),
	)
}

// resourceProperties are the unit properties libcontainer's systemd Set
// gives a slice for the fields of v that are set (genV2ResourcesProperties
// and genV1ResourcesProperties, opencontainers/cgroups v0.0.3), in their
// order: on v2 MemoryMax and CPUWeight, on v1 MemoryLimit and CPUShares
// (a limit of cgroup.Unlimited is the maximum, systemd's "infinity"), then
// the CPU quota (cpuQuotaProperties). systemdVersion below 242 (or -1,
// unknown) leaves CPUQuotaPeriodUSec out, as libcontainer does.
func resourceProperties(version cgroup.Version, systemdVersion int, v cgroup.Values) []sddbus.Property {
	var props []sddbus.Property
	memory, cpu := "MemoryMax", "CPUWeight"
	weight := v.CPUWeight
	if version == cgroup.V1 {
		memory, cpu = "MemoryLimit", "CPUShares"
		weight = v.CPUShares
	}
	if v.MemoryLimit != nil && *v.MemoryLimit != 0 {
		props = append(props, prop(memory, uint64(*v.MemoryLimit)))
	}
	if weight != nil && *weight != 0 {
		props = append(props, prop(cpu, *weight))
	}
	var quota int64
	var period uint64
	if v.CPUQuota != nil {
		quota = *v.CPUQuota
	}
	if v.CPUPeriod != nil {
		period = *v.CPUPeriod
	}
	return append(props, cpuQuotaProperties(systemdVersion, quota, period)...)
}

// cpuQuotaProperties is libcontainer's addCPUQuota: with a period,
// CPUQuotaPeriodUSec (systemd 242 and later); with a quota or a period,
// CPUQuotaPerSecUSec, the quota per second of CPU time rounded up to
// 10 ms, systemd's granularity (cgconfig.SystemdQuota gives the quota
// that matches), or the maximum (no limit) for a quota of 0 or less.
// Neither: no property.
func cpuQuotaProperties(systemdVersion int, quota int64, period uint64) []sddbus.Property {
	var props []sddbus.Property
	if period != 0 && systemdVersion >= 242 {
		props = append(props, prop("CPUQuotaPeriodUSec", period))
	}
	if quota == 0 && period == 0 {
		return props
	}
	perSec := uint64(math.MaxUint64)
	if quota > 0 {
		perSec = cgconfig.SystemdQuotaPerSec(quota, period)
	}
	return append(props, prop("CPUQuotaPerSecUSec", perSec))
}

// prop is a unit property with its D-Bus value.
func prop(name string, value any) sddbus.Property {
	return sddbus.Property{Name: name, Value: godbus.MakeVariant(value)}
}

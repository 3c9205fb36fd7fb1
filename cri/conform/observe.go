package conform

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/cri"
)

// observation is a container as the runtime and the kernel show it.
type observation struct {
	state     runtimeapi.ContainerState
	reason    string
	exitCode  int32
	attempt   uint32
	startedAt int64
	pid       int
	status    *runtimeapi.LinuxContainerResources
	files     map[string]string
	filesErr  error
}

// fileNames are the container cgroup files the checks read, per version.
func (r *run) fileNames() []string {
	if r.cg.Version() == cgconfig.V2 {
		return []string{"cpu.weight", "cpu.max", "memory.max"}
	}
	return []string{"cpu.shares", "cpu.cfs_quota_us", "cpu.cfs_period_us", "memory.limit_in_bytes"}
}

// observe reads the container's status and cgroup files.
func (r *run) observe(ctx context.Context, c *container) (observation, error) {
	st, err := r.rt.ContainerStatus(ctx, c.id, false)
	if err != nil {
		return observation{}, fmt.Errorf("ContainerStatus %s: %w", c.id, err)
	}
	s := st.GetStatus()
	o := observation{
		state: s.GetState(), reason: s.GetReason(), exitCode: s.GetExitCode(),
		attempt: s.GetMetadata().GetAttempt(), startedAt: s.GetStartedAt(),
		status: s.GetResources().GetLinux(), files: map[string]string{},
	}
	if o.state == runtimeapi.ContainerState_CONTAINER_RUNNING {
		o.pid, _ = cri.ContainerPID(ctx, r.rt, c.id)
	}
	for _, f := range r.fileNames() {
		v, err := r.cg.ReadFile(c.cgroup, f)
		if err != nil {
			o.filesErr = err
			break
		}
		o.files[f] = v
	}
	return o, nil
}

// merge applies an update to what a container holds as the CRI says a
// runtime must: a zero field leaves the value unchanged.
func merge(have, upd *runtimeapi.LinuxContainerResources) *runtimeapi.LinuxContainerResources {
	out := &runtimeapi.LinuxContainerResources{
		CpuShares: have.GetCpuShares(), CpuQuota: have.GetCpuQuota(), CpuPeriod: have.GetCpuPeriod(),
		MemoryLimitInBytes: have.GetMemoryLimitInBytes(), OomScoreAdj: have.GetOomScoreAdj(),
	}
	if upd.GetCpuShares() != 0 {
		out.CpuShares = upd.CpuShares
	}
	if upd.GetCpuQuota() != 0 {
		out.CpuQuota = upd.CpuQuota
	}
	if upd.GetCpuPeriod() != 0 {
		out.CpuPeriod = upd.CpuPeriod
	}
	if upd.GetMemoryLimitInBytes() != 0 {
		out.MemoryLimitInBytes = upd.MemoryLimitInBytes
	}
	return out
}

// formatLinux renders the fields the kubelet sends, zeros included (a
// zero is part of the message: it means "leave unchanged").
func formatLinux(l *runtimeapi.LinuxContainerResources) string {
	if l == nil {
		return "(none)"
	}
	s := fmt.Sprintf("cpu_shares=%d cpu_quota=%d cpu_period=%d memory_limit_in_bytes=%d oom_score_adj=%d",
		l.GetCpuShares(), l.GetCpuQuota(), l.GetCpuPeriod(), l.GetMemoryLimitInBytes(), l.GetOomScoreAdj())
	if len(l.GetUnified()) > 0 {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(l.GetUnified())) {
			kv = append(kv, k+"="+l.GetUnified()[k])
		}
		s += " unified{" + strings.Join(kv, ",") + "}"
	}
	return s
}

// formatStatus renders the resources of a ContainerStatus.
func formatStatus(l *runtimeapi.LinuxContainerResources) string {
	if l == nil {
		return "(no resources)"
	}
	return fmt.Sprintf("cpu_shares=%d cpu_quota=%d cpu_period=%d memory_limit_in_bytes=%d",
		l.GetCpuShares(), l.GetCpuQuota(), l.GetCpuPeriod(), l.GetMemoryLimitInBytes())
}

// formatFiles renders cgroup files in a fixed order.
func (r *run) formatFiles(files map[string]string) string {
	var parts []string
	for _, f := range r.fileNames() {
		if v, ok := files[f]; ok {
			parts = append(parts, fmt.Sprintf("%s=%q", f, v))
		}
	}
	return strings.Join(parts, " ")
}

// fileMismatches compares a container's cgroup files with the resources
// it must hold, as runc writes them: on v1 the values themselves (-1 for
// no quota; the memory limit rounded down to a page); on v2 cpu.max as
// "quota period" ("max" for no quota), memory.max, and cpu.weight by
// either formula a runtime may use (the run names the one found). With
// the systemd driver the quota may also be the one systemd keeps, rounded
// up to 10 ms per second (runc 1.3 writes that, older runc the exact one;
// the kubelet's e2e tests accept either, getCPULimitCgroupExpectations).
func (r *run) fileMismatches(want *runtimeapi.LinuxContainerResources, files map[string]string) []string {
	var out []string
	check := func(file, wantValue string) {
		if got := files[file]; got != wantValue {
			out = append(out, fmt.Sprintf("%s is %q, want %q", file, got, wantValue))
		}
	}
	// quotaText is the quota as the file shows it: exact, or rounded as
	// the systemd driver does when the file holds that.
	quotaText := func(file string, q, period int64, suffix string) string {
		exact := strconv.FormatInt(q, 10)
		if r.opts.CgroupDriver == cgconfig.DriverSystemd {
			if rounded := strconv.FormatInt(cgconfig.SystemdQuota(q, uint64(period)), 10); files[file] == rounded+suffix {
				return rounded
			}
		}
		return exact
	}
	memory := "max"
	if m := want.GetMemoryLimitInBytes(); m > 0 {
		memory = strconv.FormatInt(m/cgconfig.PageSize*cgconfig.PageSize, 10)
	}
	if r.cg.Version() == cgconfig.V1 {
		if s := want.GetCpuShares(); s > 0 {
			check("cpu.shares", strconv.FormatInt(s, 10))
		}
		quota := "-1"
		if q := want.GetCpuQuota(); q > 0 {
			quota = quotaText("cpu.cfs_quota_us", q, want.GetCpuPeriod(), "")
		}
		check("cpu.cfs_quota_us", quota)
		if p := want.GetCpuPeriod(); p > 0 {
			check("cpu.cfs_period_us", strconv.FormatInt(p, 10))
		}
		if memory == "max" {
			// v1 shows "no limit" as the page counter's maximum.
			if n, err := strconv.ParseInt(files["memory.limit_in_bytes"], 10, 64); err != nil || n < cgconfig.V1UnlimitedMemory {
				out = append(out, fmt.Sprintf("memory.limit_in_bytes is %q, want no limit", files["memory.limit_in_bytes"]))
			}
		} else {
			check("memory.limit_in_bytes", memory)
		}
		return out
	}
	if s := want.GetCpuShares(); s > 0 {
		got, err := strconv.ParseUint(files["cpu.weight"], 10, 64)
		q, l := cgconfig.QuadraticWeight(uint64(s)), cgconfig.LinearWeight(uint64(s))
		if err != nil || (got != q && got != l) {
			out = append(out, fmt.Sprintf("cpu.weight is %q for cpu_shares %d, want %d (quadratic, runc >= 1.3.2) or %d (linear, older runc)", files["cpu.weight"], s, q, l))
		} else {
			r.weights[uint64(s)] = got
		}
	}
	period := want.GetCpuPeriod()
	if period <= 0 {
		period = cgconfig.QuotaPeriod
	}
	quota := "max"
	if q := want.GetCpuQuota(); q > 0 {
		quota = quotaText("cpu.max", q, period, " "+strconv.FormatInt(period, 10))
	}
	check("cpu.max", quota+" "+strconv.FormatInt(period, 10))
	check("memory.max", memory)
	return out
}

// statusMismatch compares ContainerStatus.resources with what the
// container holds: "" when they agree, "missing" when the runtime reports
// none, else what differs.
func statusMismatch(want, got *runtimeapi.LinuxContainerResources) string {
	if got == nil || (got.CpuShares == 0 && got.CpuQuota == 0 && got.CpuPeriod == 0 && got.MemoryLimitInBytes == 0) {
		return "missing"
	}
	var diffs []string
	for _, f := range []struct {
		name      string
		got, want int64
	}{
		{"cpu_shares", got.CpuShares, want.GetCpuShares()},
		{"cpu_quota", got.CpuQuota, want.GetCpuQuota()},
		{"cpu_period", got.CpuPeriod, want.GetCpuPeriod()},
		{"memory_limit_in_bytes", got.MemoryLimitInBytes, want.GetMemoryLimitInBytes()},
	} {
		if f.got != f.want {
			diffs = append(diffs, fmt.Sprintf("%s=%d (want %d)", f.name, f.got, f.want))
		}
	}
	return strings.Join(diffs, " ")
}

// statusFindings are the ContainerStatus readings of check 4.
type statusFindings struct {
	ok, missing, stale []string
}

// noteStatus records what ContainerStatus reported after a step.
func (r *run) noteStatus(step string, want *runtimeapi.LinuxContainerResources, o observation) {
	switch d := statusMismatch(want, o.status); d {
	case "":
		r.status.ok = append(r.status.ok, fmt.Sprintf("%s: %s", step, formatStatus(o.status)))
	case "missing":
		r.status.missing = append(r.status.missing, fmt.Sprintf("%s: %s", step, formatStatus(o.status)))
	default:
		r.status.stale = append(r.status.stale, fmt.Sprintf("%s: %s, while the container holds %s", step, d, formatStatus(want)))
	}
}

// finishStatus judges check 4 from the readings of the other checks.
func (r *run) finishStatus(c *CheckResult) {
	f := r.status
	for _, s := range f.ok {
		evidence(c, "matches after %s", s)
	}
	for _, s := range f.missing {
		evidence(c, "no resources after %s", s)
	}
	for _, s := range f.stale {
		evidence(c, "stale after %s", s)
	}
	switch {
	case len(f.stale) > 0:
		fail(c, "ContainerStatus.resources differ from what the container holds after %d of %d steps", len(f.stale), len(f.ok)+len(f.missing)+len(f.stale))
	case len(f.missing) > 0 && len(f.ok) == 0:
		c.Status = NotSupported
		c.Summary = "ContainerStatus carries no resources: the kubelet would show the allocated values as if every resize had been applied"
	case len(f.missing) > 0:
		fail(c, "ContainerStatus.resources are missing after %d of %d steps", len(f.missing), len(f.ok)+len(f.missing))
	case len(f.ok) == 0:
		c.Summary = "not run: no step reached a ContainerStatus reading"
	default:
		c.Status = Pass
		c.Summary = fmt.Sprintf("ContainerStatus.resources matched the applied values after all %d steps", len(f.ok))
	}
}

package conform

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/cri/remote"
)

// kubeletRuntimeTimeout is the kubelet's default --runtime-request-timeout:
// a CRI call that takes longer fails with DeadlineExceeded.
const kubeletRuntimeTimeout = remote.DefaultCallTimeout

// unknownUnifiedKey is the unified key no kernel has, for check 6.
const unknownUnifiedKey = "resizelet.unknown"

// The checks, by ID.
const (
	checkCPU = iota + 1
	checkMemory
	checkBelowUsage
	checkStatus
	checkSandbox
	checkZeroUnified
	checkRestart
	checkTiming
	checkCleanup
)

// newCheck returns check id with its name, whether it is required and
// what the kubelet does with the behaviour it checks.
func newCheck(id int) CheckResult {
	c := CheckResult{ID: id, Required: true, Status: NotRun}
	switch id {
	case checkCPU:
		c.Name = "CPU increase and decrease in place (UpdateContainerResources)"
		c.Kubelet = "a CPU resize with the NotRequired policy is one UpdateContainerResources call with the message sent; the kubelet records the resize as actuated when the call returns OK, so the cgroup must hold the new values then, on the same process"
	case checkMemory:
		c.Name = "memory limit increase and decrease above usage, in place"
		c.Kubelet = "before lowering a memory limit the kubelet compares ContainerStats usage_bytes (and the pod cgroup's usage) with the new limit; above usage it sends UpdateContainerResources and records the resize as actuated when the call returns OK"
	case checkBelowUsage:
		c.Name = "memory limit below current usage"
		c.Kubelet = "the kubelet's own usage check stops such a resize before any call (PodResizeInProgress with reason Error and that message, event ResizeError, retried at every sync); the runtime only gets the update when usage grew after the check. A refusal is then the resize's error, retried at the next sync; an accepted limit is recorded as actuated, and an OOM kill that follows is an ordinary exit, restarted by the pod's restartPolicy"
	case checkStatus:
		c.Name = "ContainerStatus reports the applied resources"
		c.Kubelet = "the pod status's containerStatuses[].resources (cpu limit and request, memory limit) come from ContainerStatus.resources; without them the kubelet shows the allocated values whether or not they were applied, and with stale ones it shows stale values although the resize is reported done"
	case checkSandbox:
		c.Name = "UpdatePodSandboxResources"
		c.Required = false
		c.Kubelet = "best effort in 1.35: after every pod cgroup write of a resize the kubelet sends the pod's new totals; Unimplemented is logged at V(3) and ignored, any other error is logged as an error and the resize goes on. From 1.36 (resizelet's profile.SandboxUpdateFirst) the call comes before each pod cgroup write and its failure rejects the resize"
	case checkZeroUnified:
		c.Name = "zero values leave resources unchanged; unknown unified keys"
		c.Kubelet = "the kubelet sends 0 for a quota or memory limit a container does not have and relies on 0 meaning \"leave unchanged\" (it never removes a limit); it sends unified keys only on cgroup v2 (memory.oom.group), and a key the runtime cannot apply must not poison the container's later updates"
	case checkRestart:
		c.Name = "restart path: stop, remove, create with new resources, start"
		c.Kubelet = "with resizePolicy RestartContainer the kubelet stops the container and creates a new one (restart attempt + 1) whose CreateContainer config carries the new resources: they must apply from the start"
	case checkTiming:
		c.Name = "latency of each call"
		c.Required = false
		c.Kubelet = "a pod's resize is made in its sync, one UpdateContainerResources call after the other (memory, then CPU, per container), each bounded by --runtime-request-timeout (2m by default); the resize takes as long as these calls"
	case checkCleanup:
		c.Name = "nothing left behind"
		c.Kubelet = "not a kubelet behaviour: the run removes its containers, sandbox and cgroups whatever happened, and checks that none remain"
	}
	return c
}

// newResults returns every check, not run yet, by ID.
func newResults() map[int]*CheckResult {
	results := map[int]*CheckResult{}
	for id := checkCPU; id <= checkCleanup; id++ {
		c := newCheck(id)
		results[id] = &c
	}
	return results
}

// checks runs the setup and every check but the cleanup's.
func (r *run) checks(ctx context.Context) {
	results := r.results
	if err := r.setup(ctx); err != nil {
		if ctx.Err() != nil {
			r.interrupted()
			return
		}
		r.report.SetupError = err.Error()
		for id := checkCPU; id < checkCleanup; id++ {
			results[id].Summary = "not run: the setup failed"
		}
		return
	}
	for _, step := range []struct {
		id int
		fn func(context.Context, *CheckResult)
	}{
		{checkCPU, r.checkCPU},
		{checkMemory, r.checkMemory},
		{checkZeroUnified, r.checkZeroUnified},
		{checkSandbox, r.checkSandbox},
		{checkBelowUsage, r.checkBelowUsage},
		{checkRestart, r.checkRestart},
	} {
		c := results[step.id]
		c.Status = Pass
		step.fn(ctx, c)
		if ctx.Err() != nil {
			// The check may have stopped half-way: what it found is kept
			// as evidence, but it did not run to a verdict.
			c.Status = NotRun
			c.Summary = "interrupted before the check finished"
			r.interrupted()
			return
		}
		r.progress("check %d: %s", c.ID, c.Status)
	}
	r.finishStatus(results[checkStatus])
	r.progress("check %d: %s", checkStatus, results[checkStatus].Status)
	r.finishTiming(results[checkTiming])
	r.progress("check %d: %s", checkTiming, results[checkTiming].Status)
}

// interrupted marks the run as interrupted and every check not run yet.
func (r *run) interrupted() {
	r.report.Interrupted = true
	for id, c := range r.results {
		if c.Status == NotRun && c.Summary == "" && id != checkCleanup {
			c.Summary = "not run: the run was interrupted"
		}
	}
}

// fail records a problem: the check fails, and the problem is its summary
// unless an earlier one is.
func fail(c *CheckResult, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	c.Status = Fail
	if c.Summary == "" || !strings.HasPrefix(c.Summary, "FAIL") {
		c.Summary = "FAIL: " + msg
	}
	c.Evidence = append(c.Evidence, "problem: "+msg)
}

func evidence(c *CheckResult, format string, args ...any) {
	c.Evidence = append(c.Evidence, fmt.Sprintf(format, args...))
}

// resizeInPlace sends the kubelet's UpdateContainerResources message for
// the pod at x (or sent, when not nil) and checks the outcome: accepted,
// the cgroup files and ContainerStatus hold the merged values, and the
// process is the same. It reports whether the runtime accepted the call.
func (r *run) resizeInPlace(ctx context.Context, c *CheckResult, step string, x res, sent *runtimeapi.LinuxContainerResources) bool {
	ctr := r.ctr
	if sent == nil {
		sent = r.sent(x)
	}
	before, err := r.observe(ctx, ctr)
	if err != nil {
		fail(c, "%s: %v", step, err)
		return false
	}
	err = r.rt.UpdateContainerResources(ctx, ctr.id, &runtimeapi.ContainerResources{Linux: sent})
	took := r.rt.last("UpdateContainerResources").Round(time.Microsecond)
	if err != nil {
		evidence(c, "%s (%s): sent %s; refused in %s: %v", step, x, formatLinux(sent), took, err)
		fail(c, "%s: UpdateContainerResources refused the kubelet's message: %v", step, err)
		return false
	}
	evidence(c, "%s (%s): sent %s; accepted in %s", step, x, formatLinux(sent), took)
	ctr.want = merge(ctr.want, sent)
	after, err := r.observe(ctx, ctr)
	if err != nil {
		fail(c, "%s: %v", step, err)
		return true
	}
	r.verifyApplied(c, step, ctr, before, after)
	return true
}

// verifyApplied checks, after an accepted update, the cgroup files and the
// process, and notes the status for check 4.
func (r *run) verifyApplied(c *CheckResult, step string, ctr *container, before, after observation) {
	if after.filesErr != nil {
		fail(c, "%s: reading the container's cgroup %s: %v", step, ctr.cgroup, after.filesErr)
	} else {
		evidence(c, "%s: cgroup files %s", step, r.formatFiles(after.files))
		for _, m := range r.fileMismatches(ctr.want, after.files) {
			fail(c, "%s: %s", step, m)
		}
	}
	switch {
	case after.state != runtimeapi.ContainerState_CONTAINER_RUNNING:
		fail(c, "%s: the container is %s (reason %q, exit code %d) after the update", step, after.state, after.reason, after.exitCode)
	case after.startedAt != before.startedAt || after.attempt != before.attempt || (before.pid != 0 && after.pid != before.pid):
		fail(c, "%s: the process changed: PID %d -> %d, startedAt %d -> %d, attempt %d -> %d",
			step, before.pid, after.pid, before.startedAt, after.startedAt, before.attempt, after.attempt)
	case before.pid != 0:
		evidence(c, "%s: PID %d kept, same startedAt (resized in place)", step, after.pid)
	default:
		evidence(c, "%s: same startedAt and attempt (the runtime reports no PID)", step)
	}
	r.noteStatus(step, ctr.want, after)
}

// checkCPU is check 1: CPU up and down with the kubelet's messages.
func (r *run) checkCPU(ctx context.Context, c *CheckResult) {
	r.step("1: cpu increase")
	r.resizeInPlace(ctx, c, "cpu increase", resCPUUp, nil)
	if ctx.Err() != nil {
		return
	}
	r.step("1: cpu decrease")
	r.resizeInPlace(ctx, c, "cpu decrease", resCPUDown, nil)
	r.report.WeightFormula = r.weightFormula()
	if c.Status == Pass {
		c.Summary = "applied in place: " + r.report.WeightFormula
	}
}

// weightFormula names how the runtime wrote cpu shares.
func (r *run) weightFormula() string {
	if r.cg.Version() == cgconfig.V1 {
		return "cpu.shares written as sent (cgroup v1 has no conversion)"
	}
	if len(r.weights) == 0 {
		return "unknown (no cpu.weight was read back)"
	}
	quadratic, linear := true, true
	var seen []string
	for _, s := range slices.Sorted(maps.Keys(r.weights)) {
		w := r.weights[s]
		seen = append(seen, fmt.Sprintf("%d->%d", s, w))
		quadratic = quadratic && w == cgconfig.QuadraticWeight(s)
		linear = linear && w == cgconfig.LinearWeight(s)
	}
	pairs := "shares->weight " + strings.Join(seen, ", ")
	switch {
	case quadratic && linear:
		return "cpu.weight fits both formulas (" + pairs + ")"
	case quadratic:
		return "cpu.weight by the quadratic formula of runc >= 1.3.2 and crun >= 1.23 (" + pairs + ")"
	case linear:
		return "cpu.weight by the linear formula of runc < 1.3.2 and crun < 1.23, the kubelet's own (" + pairs + ")"
	}
	return "cpu.weight by neither formula consistently (" + pairs + ")"
}

// setUsage makes the container use bytes of memory, or with a negative
// bytes leaves it at what its processes use, and reads what the pod
// cgroup and ContainerStats then report.
func (r *run) setUsage(ctx context.Context, c *CheckResult, bytes int64) (podUsage int64, stats *runtimeapi.ContainerStats, statsErr error, ok bool) {
	if bytes >= 0 {
		if err := r.useMemory(ctx, r.ctr.id, bytes); err != nil {
			fail(c, "making the container use %d bytes (a file in its /dev/shm, written by sh and dd in the image): %v", bytes, err)
			return 0, nil, nil, false
		}
	}
	podUsage, err := r.cg.MemoryUsage(r.podCgroup)
	if err != nil {
		fail(c, "reading the pod cgroup's memory usage: %v", err)
		return 0, nil, nil, false
	}
	stats, statsErr = r.rt.ContainerStats(ctx, r.ctr.id)
	usage := "none"
	switch {
	case statsErr != nil:
		usage = "error: " + statsErr.Error()
	case stats.GetMemory().GetUsageBytes() != nil:
		usage = strconv.FormatUint(stats.GetMemory().GetUsageBytes().GetValue(), 10)
	}
	set := "the container's own usage"
	if bytes >= 0 {
		set = fmt.Sprintf("usage set to %d bytes (a file in the pod's /dev/shm)", bytes)
	}
	evidence(c, "%s: pod cgroup usage %d, ContainerStats usage_bytes %s", set, podUsage, usage)
	return podUsage, stats, statsErr, true
}

// checkMemory is check 2: the memory limit up, then down above usage.
func (r *run) checkMemory(ctx context.Context, c *CheckResult) {
	r.step("2: memory increase")
	r.resizeInPlace(ctx, c, "memory increase", resMemUp, nil)
	if ctx.Err() != nil {
		return
	}
	r.step("2: memory decrease above usage")
	// The processes' own usage: writing more takes long in an emulated
	// VM, and the check is of the limit going down, not of the usage.
	podUsage, stats, statsErr, ok := r.setUsage(ctx, c, -1)
	if !ok {
		return
	}
	checked, err := r.memoryCheck(resMemUp, resMemDown, podUsage, stats, statsErr)
	switch {
	case err != nil:
		fail(c, "the kubelet's usage check would refuse this decrease above usage: %v", err)
		return
	case checked:
		evidence(c, "the kubelet's usage check passes: usage is below the new limit %d", resMemDown.memLim<<20)
	}
	r.resizeInPlace(ctx, c, "memory decrease above usage", resMemDown, nil)
	if c.Status == Pass {
		c.Summary = "applied in place, same process"
	}
}

// checkZeroUnified is check 6: zero fields, then an unknown unified key.
func (r *run) checkZeroUnified(ctx context.Context, c *CheckResult) {
	r.step("6: zero values")
	// A container with requests only: the kubelet sends cpu_quota 0 and
	// memory_limit_in_bytes 0, which must leave the quota and limit the
	// container has.
	if !r.resizeInPlace(ctx, c, "update with cpu_quota=0 memory_limit_in_bytes=0", resNoLimits, nil) || ctx.Err() != nil {
		return
	}
	zeroOK := c.Status == Pass

	r.step("6: unknown unified key")
	sent := r.sent(resUnified)
	withKey := &runtimeapi.LinuxContainerResources{
		CpuShares: sent.CpuShares, CpuQuota: sent.CpuQuota, CpuPeriod: sent.CpuPeriod,
		MemoryLimitInBytes: sent.MemoryLimitInBytes, OomScoreAdj: sent.OomScoreAdj,
		Unified: map[string]string{unknownUnifiedKey: "1"},
	}
	maps.Copy(withKey.Unified, sent.Unified)
	before, err := r.observe(ctx, r.ctr)
	if err != nil {
		fail(c, "%v", err)
		return
	}
	err = r.rt.UpdateContainerResources(ctx, r.ctr.id, &runtimeapi.ContainerResources{Linux: withKey})
	took := r.rt.last("UpdateContainerResources").Round(time.Microsecond)
	var unified string
	if err != nil {
		evidence(c, "unknown unified key: sent %s; refused in %s: %v", formatLinux(withKey), took, err)
		if origin := refusalOrigin(err); origin != "" {
			evidence(c, "%s", origin)
		}
		after, oerr := r.observe(ctx, r.ctr)
		switch {
		case oerr != nil:
			fail(c, "%v", oerr)
		case after.filesErr != nil:
			fail(c, "reading the container's cgroup: %v", after.filesErr)
		default:
			evidence(c, "after the refusal: cgroup files %s; ContainerStatus %s", r.formatFiles(after.files), formatStatus(after.status))
			if ms := r.fileMismatches(r.ctr.want, after.files); len(ms) > 0 {
				// The runtime wrote some files before it refused (runc
				// writes them in turn) and reports the values from before
				// the update: its status and the cgroup now disagree.
				c.Summary = ""
				fail(c, "the refused update was partly applied (%s) while ContainerStatus reports the values from before it: the pod status disagrees with the cgroup until a later update succeeds", strings.Join(ms, "; "))
			}
			if d := statusMismatch(r.ctr.want, after.status); d != "" && d != "missing" {
				fail(c, "the refused update changed ContainerStatus: %s", d)
			}
		}
		unified = "refused, and nothing changed"
	} else {
		evidence(c, "unknown unified key: sent %s; accepted in %s", formatLinux(withKey), took)
		r.ctr.want = merge(r.ctr.want, withKey)
		if after, err := r.observe(ctx, r.ctr); err != nil {
			fail(c, "%v", err)
		} else {
			r.verifyApplied(c, "update with an unknown unified key", r.ctr, before, after)
		}
		unified = "ignored, the other fields applied"
	}
	if ctx.Err() != nil {
		return
	}
	// The kubelet's next message must still go through: a runtime that
	// kept the unknown key in the container's spec would fail it.
	r.step("6: the kubelet's next update")
	if !r.resizeInPlace(ctx, c, "the kubelet's next update (without the key)", resUnified, nil) {
		c.Summary = "" // this is the finding, not the refusal it follows from
		fail(c, "after the unknown unified key the runtime refuses the kubelet's next update: every later resize of this container would fail")
		return
	}
	if c.Status == Pass {
		zero := "zero values left the quota and memory limit unchanged"
		if !zeroOK {
			zero = "zero values were not left unchanged"
		}
		c.Summary = fmt.Sprintf("%s; the unknown unified key %q was %s; the next update went through", zero, unknownUnifiedKey, unified)
	}
}

// checkSandbox is check 5: the kubelet's UpdatePodSandboxResources.
func (r *run) checkSandbox(ctx context.Context, c *CheckResult) {
	r.step("5: UpdatePodSandboxResources")
	pod := r.podWith(resUnified)
	req := r.msgs.SandboxResources(r.sandboxID, pod, cgconfig.PodConfig(pod, r.msgs.PodConfigOptions()))
	_, err := r.rt.UpdatePodSandboxResources(ctx, req)
	took := r.rt.last("UpdatePodSandboxResources").Round(time.Microsecond)
	sent := fmt.Sprintf("sent resources %s overhead %s", formatStatus(req.Resources), formatStatus(req.Overhead))
	switch {
	case err == nil:
		evidence(c, "%s; accepted in %s", sent, took)
		c.Summary = "implemented: the runtime accepted the pod's new totals"
	case isUnimplemented(err):
		evidence(c, "%s; answered in %s: %v", sent, took, err)
		c.Status = NotSupported
		c.Summary = "Unimplemented (allowed: the 1.35 kubelet treats the call as best effort)"
	default:
		evidence(c, "%s; failed in %s: %v", sent, took, err)
		fail(c, "UpdatePodSandboxResources failed with an error other than Unimplemented: %v", err)
	}
}

// isUnimplemented reports whether err is the gRPC Unimplemented code (or
// an in-process runtime's errors.ErrUnsupported).
func isUnimplemented(err error) bool {
	if s, ok := grpcstatus.FromError(err); ok && s.Code() == codes.Unimplemented {
		return true
	}
	var re *cri.RemoteError
	if errors.As(err, &re) && re.Code == codes.Unimplemented {
		return true
	}
	return errors.Is(err, errors.ErrUnsupported)
}

// checkBelowUsage is check 3: a memory limit below what the container
// uses.
func (r *run) checkBelowUsage(ctx context.Context, c *CheckResult) {
	r.step("3: memory limit below usage")
	podUsage, stats, statsErr, ok := r.setUsage(ctx, c, usageAboveLimit)
	if !ok {
		return
	}
	newLimit := resBelowUsage.memLim << 20
	checked, kerr := r.memoryCheck(resUnified, resBelowUsage, podUsage, stats, statsErr)
	switch {
	case kerr != nil:
		evidence(c, "the kubelet's usage check stops this resize before any CRI call: %v", kerr)
	case checked:
		evidence(c, "the kubelet's usage check would let this resize through (ContainerStats under-reports the usage): the runtime's answer below decides what happens")
	}
	if stats.GetMemory().GetUsageBytes() == nil {
		fail(c, "ContainerStats reports no memory usage_bytes: the kubelet can then never lower a memory limit (\"missing container %q memory usage\")", containerName)
	}
	sent := r.sent(resBelowUsage)
	before, err := r.observe(ctx, r.ctr)
	if err != nil {
		fail(c, "%v", err)
		return
	}
	err = r.rt.UpdateContainerResources(ctx, r.ctr.id, &runtimeapi.ContainerResources{Linux: sent})
	took := r.rt.last("UpdateContainerResources").Round(time.Microsecond)
	if err != nil {
		r.belowUsageRefused(ctx, c, sent, took, before, err)
		return
	}
	evidence(c, "sent anyway %s (limit %d below usage); accepted in %s", formatLinux(sent), newLimit, took)
	r.ctr.want = merge(r.ctr.want, sent)
	deadline := time.Now().Add(r.opts.OOMWait)
	after := before
	for {
		if after, err = r.observe(ctx, r.ctr); err != nil {
			fail(c, "%v", err)
			return
		}
		if after.state != runtimeapi.ContainerState_CONTAINER_RUNNING || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if after.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		evidence(c, "then the container is %s: reason %q, exit code %d", after.state, after.reason, after.exitCode)
		if after.reason != "OOMKilled" {
			fail(c, "the container ended with reason %q, not OOMKilled: the kubelet cannot tell the kernel's OOM kill from another end", after.reason)
			return
		}
		c.Summary = "accepted, then the kernel OOM-killed the container (reason OOMKilled), as cgroup v2 does"
		if r.cg.Version() == cgconfig.V1 {
			c.Summary = "accepted on cgroup v1 (where runc refuses), then the container was OOM-killed"
		}
		return
	}
	// Still running: the limit must be the new one, and the usage must fit
	// (the kernel reclaimed).
	if after.filesErr != nil {
		fail(c, "reading the container's cgroup: %v", after.filesErr)
		return
	}
	usage, _ := r.cg.MemoryUsage(r.ctr.cgroup)
	evidence(c, "after %s the container still runs: cgroup files %s, usage %d", r.opts.OOMWait, r.formatFiles(after.files), usage)
	for _, m := range r.fileMismatches(r.ctr.want, after.files) {
		fail(c, "the runtime accepted the limit but the cgroup does not hold it: %s: the kubelet would record the resize as done", m)
	}
	r.noteStatus("memory limit below usage (accepted)", r.ctr.want, after)
	if c.Status == Pass {
		c.Summary = fmt.Sprintf("accepted and applied; the kernel brought usage to %d without an OOM kill", usage)
	}
}

// belowUsageRefused judges a refused limit below usage: nothing may have
// changed, the container keeps running, and ContainerStatus keeps the old
// limit.
func (r *run) belowUsageRefused(ctx context.Context, c *CheckResult, sent *runtimeapi.LinuxContainerResources, took time.Duration, before observation, refusal error) {
	evidence(c, "sent anyway %s; refused in %s: %v", formatLinux(sent), took, refusal)
	if strings.Contains(refusal.Error(), "unable to set memory limit to") {
		evidence(c, "the refusal carries runc's message (\"unable to set memory limit to ... (current usage: ..., peak usage: ...)\")")
	}
	after, err := r.observe(ctx, r.ctr)
	if err != nil {
		fail(c, "%v", err)
		return
	}
	// A cgroup that is gone means the container has ended, or is about
	// to: the runtime's status can lag the kernel's kill.
	for deadline := time.Now().Add(r.opts.OOMWait); errors.Is(after.filesErr, cgroup.ErrNotExist) &&
		after.state == runtimeapi.ContainerState_CONTAINER_RUNNING && time.Now().Before(deadline) && ctx.Err() == nil; {
		time.Sleep(100 * time.Millisecond)
		if after, err = r.observe(ctx, r.ctr); err != nil {
			fail(c, "%v", err)
			return
		}
	}
	if after.state != runtimeapi.ContainerState_CONTAINER_RUNNING && after.startedAt == before.startedAt {
		// The limit reached the cgroup before the error: the kernel
		// killed the container, and the runtime then failed.
		why := ""
		if r.opts.CgroupDriver == cgconfig.DriverSystemd {
			why = " (with the systemd driver runc gives systemd the scope's MemoryMax first, the kernel OOM-kills the container's only process, systemd removes the scope with it, and runc's own write of the files then fails on the missing scope: libcontainer's systemd Set calls SetUnitProperties, then the fs2 manager's Set)"
		}
		fail(c, "the runtime refused the update, but the container ended anyway (%s, reason %q, exit code %d): the limit was applied before the refusal%s; the kubelet would record a failed resize of a container the resize killed",
			after.state, after.reason, after.exitCode, why)
		c.Summary = fmt.Sprintf("refused with an error, but the container ended (reason %q): the limit was applied before the refusal", after.reason)
		return
	}
	if after.filesErr != nil {
		fail(c, "reading the container's cgroup: %v", after.filesErr)
	} else {
		evidence(c, "after the refusal: cgroup files %s; ContainerStatus %s", r.formatFiles(after.files), formatStatus(after.status))
		for _, m := range r.fileMismatches(r.ctr.want, after.files) {
			fail(c, "the refused update changed the cgroup: %s", m)
		}
	}
	if after.state != runtimeapi.ContainerState_CONTAINER_RUNNING || after.startedAt != before.startedAt {
		fail(c, "the container did not keep running through the refusal: %s (reason %q)", after.state, after.reason)
	}
	r.noteStatus("memory limit below usage (refused)", r.ctr.want, after)
	if d := statusMismatch(r.ctr.want, after.status); d != "" && d != "missing" {
		fail(c, "after the refusal ContainerStatus reports %s: the kubelet would show a limit that is not applied", d)
	}
	if c.Status == Pass {
		c.Summary = "refused, nothing changed, the container keeps running with its old limit"
		if r.cg.Version() == cgconfig.V2 {
			c.Summary = "refused on cgroup v2 (where runc accepts and the kernel OOM-kills), nothing changed"
		}
	}
	// Give the memory back, so that the restart path starts clean.
	if err := r.useMemory(ctx, r.ctr.id, 0); err != nil {
		evidence(c, "could not release the usage: %v", err)
	}
}

// checkRestart is check 7: the restart path with new resources.
func (r *run) checkRestart(ctx context.Context, c *CheckResult) {
	r.step("7: restart with new resources")
	old := r.ctr
	oldPID := old.pid
	if err := r.rt.StopContainer(ctx, old.id, 30); err != nil {
		fail(c, "StopContainer %s: %v", old.id, err)
		return
	}
	evidence(c, "StopContainer (30 s grace) took %s", r.rt.last("StopContainer").Round(time.Microsecond))
	if err := r.rt.RemoveContainer(ctx, old.id); err != nil {
		fail(c, "RemoveContainer %s: %v", old.id, err)
		return
	}
	r.containers = slices.DeleteFunc(r.containers, func(id string) bool { return id == old.id })
	evidence(c, "RemoveContainer took %s", r.rt.last("RemoveContainer").Round(time.Microsecond))
	ctr, err := r.startContainer(ctx, resRestart, old.attempt+1)
	if err != nil {
		fail(c, "%v", err)
		return
	}
	r.ctr = ctr
	evidence(c, "CreateContainer (attempt %d, %s) with %s took %s; StartContainer took %s", ctr.attempt, resRestart, formatLinux(ctr.want),
		r.rt.last("CreateContainer").Round(time.Microsecond), r.rt.last("StartContainer").Round(time.Microsecond))
	o, err := r.observe(ctx, ctr)
	if err != nil {
		fail(c, "%v", err)
		return
	}
	if o.filesErr != nil {
		fail(c, "reading the new container's cgroup %s: %v", ctr.cgroup, o.filesErr)
	} else {
		evidence(c, "new container's cgroup files %s", r.formatFiles(o.files))
		for _, m := range r.fileMismatches(ctr.want, o.files) {
			fail(c, "the new container does not hold its config's resources: %s", m)
		}
	}
	if o.attempt != ctr.attempt {
		fail(c, "ContainerStatus reports attempt %d, want %d", o.attempt, ctr.attempt)
	}
	if oldPID != 0 && o.pid == oldPID {
		fail(c, "the new container has the old PID %d", oldPID)
	} else if oldPID != 0 {
		evidence(c, "PID %d -> %d (new process)", oldPID, o.pid)
	}
	r.noteStatus("restart with new resources", ctr.want, o)
	if c.Status == Pass {
		c.Summary = "the new container runs with the new resources"
	}
}

// finishTiming is check 8: the latency of every call, by method, and each
// resize call.
func (r *run) finishTiming(c *CheckResult) {
	calls := r.rt.timings()
	byMethod := map[string][]time.Duration{}
	for _, call := range calls {
		byMethod[call.Method] = append(byMethod[call.Method], call.Duration)
		if call.Method == "UpdateContainerResources" {
			result := "ok"
			if call.Err != "" {
				result = "error"
			}
			evidence(c, "UpdateContainerResources for %s: %s (%s)", call.Step, call.Duration.Round(time.Microsecond), result)
		}
		if call.Duration >= kubeletRuntimeTimeout || strings.Contains(call.Err, "DeadlineExceeded") || strings.Contains(call.Err, "deadline exceeded") {
			fail(c, "%s for %s took %s: a kubelet's call would time out (--runtime-request-timeout %s)", call.Method, call.Step, call.Duration, kubeletRuntimeTimeout)
		}
	}
	methods := slices.Sorted(maps.Keys(byMethod))
	for _, m := range methods {
		d := byMethod[m]
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		evidence(c, "%s: calls %d, min %s, median %s, max %s", m, len(d),
			d[0].Round(time.Microsecond), d[len(d)/2].Round(time.Microsecond), d[len(d)-1].Round(time.Microsecond))
	}
	if c.Status != Fail {
		c.Status = Pass
		if d := byMethod["UpdateContainerResources"]; len(d) > 0 {
			c.Summary = fmt.Sprintf("UpdateContainerResources took %s at the median and %s at most: an in-place resize of one container costs the kubelet about that per resource",
				d[len(d)/2].Round(time.Microsecond), d[len(d)-1].Round(time.Microsecond))
		} else {
			c.Summary = "no UpdateContainerResources call was timed"
		}
	}
}

// refusalOrigins are the refusals of an unknown unified key that check 6
// recognises, each with the OCI runtime whose message it is and the code
// that explains what the runtime wrote before it refused. Both runtimes
// write the cgroup files of the update's fields first and the unified
// keys last, so either leaves cpu.max (and memory.max) changed behind its
// refusal; they differ in the message.
var refusalOrigins = []struct{ marker, origin string }{
	{`can't be set: controller`, "the refusal is runc's: its cgroup v2 manager (libcontainer/cgroups/fs2, Manager.Set) writes the pids, memory, io and cpu files first and the unified keys last (setUnified), which refuses a key of a controller the cgroup does not have"},
	{"the requested cgroup controller", "the refusal is crun's: update_cgroup_v2_resources (src/libcrun/cgroup-resources.c) writes the memory, pids and cpu files first and the unified keys last (write_unified_resources), which refuses a key of a controller the cgroup does not have; the same writes as runc's before the refusal, with crun's own message"},
}

// refusalOrigin explains err by the OCI runtime whose message it carries,
// or returns "" for a message it does not know.
func refusalOrigin(err error) string {
	for _, o := range refusalOrigins {
		if strings.Contains(err.Error(), o.marker) {
			return o.origin
		}
	}
	return ""
}

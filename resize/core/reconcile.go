package core

import (
	"cmp"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// This file is NodeConfig.ReconcilePodCgroups, resizelet's opt-in fix for
// the gap its documentation describes: the kubelet v1.35.4 records each
// container as actuated right after its UpdateContainerResources
// (pkg/kubelet/kuberuntime/kuberuntime_container.go,
// updateContainerResources) and a decrease writes the pod cgroup last, so
// no later sync looks at a pod cgroup left behind. With the option on,
// every sync whose containers are all actuated reads the pod cgroup and
// writes back what differs from the allocation.

// podCgroupValues are the pod cgroup's values for the allocated pod as the
// kubelet writes them: ResourceConfigForPod, through podValues. A nil
// field is one the kubelet leaves as it finds it (a Burstable pod without
// limits keeps the ones its cgroup has).
func (s *settings) podCgroupValues(alloc *v1.Pod) cgconfig.Values {
	return s.podValues(cgconfig.PodConfig(alloc, s.cri.PodConfigOptions()))
}

// podValues are the files the kubelet's cgroup manager writes for a pod
// cgroup config (cgroup_manager_linux.go Update, a libcontainer Set): the
// linear cpu.weight on v2 and, with the systemd driver, the quota rounded
// as libcontainer's systemd manager writes it (cgconfig.SystemdQuota); the
// kubelet's own config keeps the exact quota.
func (s *settings) podValues(rc cgconfig.ResourceConfig) cgconfig.Values {
	v := rc.Values(s.cfg.CgroupVersion, cgconfig.LinearWeight)
	if s.cfg.CgroupDriver == cgconfig.DriverSystemd {
		v.RoundSystemdQuota()
	}
	return v
}

// reconcile starts the pod cgroup check when the option is on and the
// sync may touch resources; otherwise it leaves the sync where it is.
// The sync calls it only when every running container is actuated (no
// resize to do, or a resize that just succeeded), so that writing the pod
// cgroup to the allocation cannot undercut a container that still holds
// more: the order of doPodResizeAction has already been kept.
func (o *syncOp) reconcile(c *Core, ps *podState) []Action {
	if !c.s.cfg.ReconcilePodCgroups || !o.allowed {
		return nil
	}
	o.phase = syncReconcile
	return []Action{ReadCgroup{Path: ps.podCgroup}}
}

// reconcileWrites compares what the pod cgroup holds with the allocation
// and returns the write of the values that differ, followed by the pod's
// new totals for the runtime (best effort, as after every pod cgroup write
// of a resize). Nothing differs: nothing to do.
func (o *syncOp) reconcileWrites(c *Core, ps *podState, done []Action, res []Result) []Action {
	o.phase = syncStartNext
	s := &c.s
	_, r, _ := resultOf[ReadCgroup](done, res)
	if r.Err != nil {
		o.errs = append(o.errs, fmt.Errorf("reconcile pod cgroup %s: %w", ps.podCgroup, r.Err))
		return nil
	}
	desired := cgconfig.PodConfig(o.alloc, s.cri.PodConfigOptions())
	diff, ok := cgroupDrift(s.podValues(desired), r.Values, s.cfg.CgroupVersion)
	if !ok {
		return nil
	}
	o.phase = syncReconciled
	// The pod's totals once the write is done: the allocation's values
	// where the kubelet sets them, what the cgroup holds elsewhere.
	cur := readingOf(r.Values, s.cfg.CgroupVersion)
	desired.Memory = cmp.Or(desired.Memory, &cur.Memory)
	desired.CPUQuota = cmp.Or(desired.CPUQuota, &cur.Quota)
	desired.CPUPeriod = cmp.Or(desired.CPUPeriod, &cur.Period)
	desired.CPUShares = cmp.Or(desired.CPUShares, &cur.Shares)
	return []Action{
		SetCgroup{Path: ps.podCgroup, Values: diff},
		UpdatePodSandboxResources{Request: s.cri.SandboxResources(ps.sandboxID, o.alloc, desired)},
	}
}

// reconciled takes the reconcile write's outcome: a failure fails the
// sync, so that the pod is synced again after the back-off.
func (o *syncOp) reconciled(ps *podState, done []Action, res []Result) {
	o.phase = syncStartNext
	if _, r, ok := resultOf[SetCgroup](done, res); ok && r.Err != nil {
		o.errs = append(o.errs, fmt.Errorf("reconcile pod cgroup %s: %w", ps.podCgroup, r.Err))
	}
}

// cgroupDrift returns the fields of want that got does not hold, and
// whether there are any. Memory limits are compared as the kernel keeps
// them, rounded down to whole pages; a quota of 0 or less is no limit.
func cgroupDrift(want, got cgconfig.Values, version cgconfig.Version) (cgconfig.Values, bool) {
	var diff cgconfig.Values
	// read is a value got holds, Unlimited when it holds none.
	read := func(v *int64) int64 {
		if v == nil {
			return cgconfig.Unlimited
		}
		return *v
	}
	differs := func(w, g *uint64) bool { return w != nil && (g == nil || *g != *w) }
	if want.MemoryLimit != nil {
		w, g := *want.MemoryLimit, read(got.MemoryLimit)
		if w > 0 {
			w = w / cgconfig.PageSize * cgconfig.PageSize
		}
		if g >= cgconfig.V1UnlimitedMemory {
			g = cgconfig.Unlimited
		}
		if w != g {
			diff.MemoryLimit = want.MemoryLimit
		}
	}
	if version == cgconfig.V2 && differs(want.CPUWeight, got.CPUWeight) {
		diff.CPUWeight = want.CPUWeight
	}
	if version == cgconfig.V1 && differs(want.CPUShares, got.CPUShares) {
		diff.CPUShares = want.CPUShares
	}
	// Every quota of 0 or less is the same: no limit.
	if want.CPUQuota != nil && max(*want.CPUQuota, 0) != max(read(got.CPUQuota), 0) {
		diff.CPUQuota = want.CPUQuota
	}
	if differs(want.CPUPeriod, got.CPUPeriod) {
		diff.CPUPeriod = want.CPUPeriod
	}
	if version == cgconfig.V2 && (diff.CPUQuota != nil || diff.CPUPeriod != nil) {
		// cpu.max holds both: write both, so that the file ends as the
		// allocation says whichever half differed.
		diff.CPUQuota, diff.CPUPeriod = want.CPUQuota, want.CPUPeriod
	}
	return diff, diff != cgconfig.Values{}
}

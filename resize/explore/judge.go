package explore

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/allocation"
	"github.com/resizelet/resizelet/allocation/state"
	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/profile"
	"github.com/resizelet/resizelet/resize/scenario"
)

// Gap is a known gap of the kubelet v1.35.4: a way its real state can
// part from its allocation for good while its status says the resize is
// done. A drift with a gap's signature is labelled the kubelet's.
type Gap struct {
	ID     string // a short name, for tables
	Reason string // the cause, in the kubelet's source
}

// The kubelet's gaps the explorer knows.
var (
	// GapPodCgroup is the gap NodeConfig.ReconcilePodCgroups closes.
	GapPodCgroup = Gap{
		ID: "pod-cgroup-not-reconciled",
		Reason: "kubelet v1.35.4 writes the pod cgroup only from doPodResizeAction, which runs only while a container's " +
			"allocation differs from its actuated record (pkg/kubelet/kuberuntime/kuberuntime_manager.go, computePodActions " +
			"and computePodResizeAction); it records each container as actuated right after its UpdateContainerResources " +
			"(pkg/kubelet/kuberuntime/kuberuntime_container.go, updateContainerResources) and writes a shrinking pod cgroup " +
			"last, so once every record equals the allocation no sync compares the pod cgroup with it again",
	}
	// GapCheckpointFile is the kubelet's checkpoint keeping a record in
	// memory when writing its file fails; NodeConfig.FlushCheckpoints
	// closes it.
	GapCheckpointFile = Gap{
		ID: "checkpoint-file-behind",
		Reason: "kubelet v1.35.4 keeps a checkpoint record in memory when writing the file fails, and the file catches up " +
			"only with the next write that changes it (pkg/kubelet/allocation/state/state_checkpoint.go, " +
			"SetContainerResources and storeState): until then a restart loads the old record",
	}

	// GapStalePending is a PodResizePending condition a kubelet that
	// crashed takes over from the API server when it starts, for a resize
	// that had been allocated or reverted before the crash.
	GapStalePending = Gap{
		ID: "stale-resize-pending",
		Reason: "kubelet v1.35.4 takes the resize conditions over from the API server's pods when it starts " +
			"(pkg/kubelet/status/status_manager.go, BackfillPodResizeConditions, called from HandlePodAdditions in " +
			"pkg/kubelet/kubelet.go) and queues for a retry only the pods whose spec differs from their allocation: " +
			"a PodResizePending whose resize was allocated (or reverted) before the crash, while the status that drops " +
			"it was not yet written, is taken over and nothing clears it until the pod's next resize",
	}
)

// Gaps lists the known gaps.
var Gaps = []Gap{GapPodCgroup, GapCheckpointFile, GapStalePending}

// endState is how a replay ended, for judging.
type endState struct {
	// broken are what broke outright: panics, a kubelet that did not
	// start again, an audit that could not run.
	broken []string
	pods   map[string]*podEnd
	order  []string
}

// podEnd is how one pod ended.
type podEnd struct {
	admitted bool
	// terminal says the pod finished: a kubelet that starts again does
	// not admit a finished pod, and it holds nothing to compare.
	terminal bool
	// inProgress and pending are the reasons of the resize conditions,
	// "-" for one without a reason, "" when absent.
	inProgress, pending string
	// alloc is the allocation, rendered; specDiffers says the spec asks
	// for something else.
	alloc       string
	specDiffers string
	diffs       []resize.Difference
}

// observe records how the session's node ended.
func (x *explorer) observe(ctx context.Context, se *scenario.Session, end *endState) {
	end.pods = map[string]*podEnd{}
	n := se.Node()
	diffs, err := n.Audit(ctx)
	if err != nil {
		end.broken = append(end.broken, "audit: "+err.Error())
	}
	// What a restart would load: the checkpoint files themselves.
	files := map[resize.Where]map[types.UID]allocation.PodResources{}
	for _, f := range []struct {
		where resize.Where
		file  string
	}{{resize.WhereAllocated, state.AllocatedStateFile}, {resize.WhereActuated, state.ActuatedStateFile}} {
		st, err := state.OpenCheckpoint(ctx, se.CheckpointDir(), f.file)
		if err != nil {
			end.broken = append(end.broken, "a restart could not load "+f.file+": "+err.Error())
			continue
		}
		files[f.where] = st.All()
	}
	for _, p := range se.Cluster().ListPods(ctx) {
		key := p.Namespace + "/" + p.Name
		pe := &podEnd{}
		for _, c := range p.Status.Conditions {
			reason := c.Reason
			if reason == "" {
				reason = "-"
			}
			switch c.Type {
			case v1.PodResizeInProgress:
				pe.inProgress = reason
			case v1.PodResizePending:
				pe.pending = reason
			}
		}
		pe.terminal = p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed
		info, err := n.Pod(p.Namespace, p.Name)
		if err == nil && info.Admitted && !pe.terminal {
			pe.admitted = true
			pe.alloc = formatAllocation(info.Allocated)
			pe.specDiffers = specDifference(p, info.Allocated)
			for _, d := range diffs {
				if d.Namespace == p.Namespace && d.Pod == p.Name {
					pe.diffs = append(pe.diffs, d)
				}
			}
			pe.diffs = append(pe.diffs, fileDiffs(p, info, files)...)
		}
		end.pods[key] = pe
		end.order = append(end.order, key)
	}
}

// fileDiffs compares the checkpoint files' records of a pod with the
// node's.
func fileDiffs(p *v1.Pod, info resize.PodInfo, files map[resize.Where]map[types.UID]allocation.PodResources) []resize.Difference {
	var out []resize.Difference
	for _, f := range []struct {
		where resize.Where
		node  map[string]v1.ResourceRequirements
	}{{resize.WhereAllocated, info.Allocated}, {resize.WhereActuated, info.Actuated}} {
		recs, ok := files[f.where]
		if !ok {
			continue
		}
		file := recs[info.UID].ContainerResources
		for _, name := range slices.Sorted(maps.Keys(f.node)) {
			got, ok := file[name]
			if !ok {
				out = append(out, resize.Difference{Namespace: p.Namespace, Pod: p.Name, Container: name, Where: f.where,
					Field: "file", Want: formatRequirements(f.node[name]), Got: "no record in the file"})
				continue
			}
			if w, g := formatRequirements(f.node[name]), formatRequirements(got); w != g {
				out = append(out, resize.Difference{Namespace: p.Namespace, Pod: p.Name, Container: name, Where: f.where,
					Field: "file", Want: w, Got: g})
			}
		}
	}
	return out
}

// formatRequirements renders cpu and memory requests and limits by value.
func formatRequirements(r v1.ResourceRequirements) string {
	var parts []string
	for _, side := range []struct {
		name string
		list v1.ResourceList
	}{{"requests", r.Requests}, {"limits", r.Limits}} {
		for _, res := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
			if q, ok := side.list[res]; ok {
				if res == v1.ResourceCPU {
					parts = append(parts, fmt.Sprintf("%s.%s=%dm", side.name, res, q.MilliValue()))
				} else {
					parts = append(parts, fmt.Sprintf("%s.%s=%d", side.name, res, q.Value()))
				}
			}
		}
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func formatAllocation(alloc map[string]v1.ResourceRequirements) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(alloc)) {
		parts = append(parts, name+formatRequirements(alloc[name]))
	}
	return strings.Join(parts, " ")
}

// specDifference says how the pod's spec differs from its allocation, ""
// when it does not.
func specDifference(p *v1.Pod, alloc map[string]v1.ResourceRequirements) string {
	var parts []string
	check := func(c *v1.Container) {
		a, ok := alloc[c.Name]
		if !ok {
			return
		}
		if w, g := formatRequirements(c.Resources), formatRequirements(a); w != g {
			parts = append(parts, fmt.Sprintf("%s spec %s, allocated %s", c.Name, w, g))
		}
	}
	for i := range p.Spec.InitContainers {
		check(&p.Spec.InitContainers[i])
	}
	for i := range p.Spec.Containers {
		check(&p.Spec.Containers[i])
	}
	return strings.Join(parts, "; ")
}

// judge classifies how a point ended against how its step ends without
// the fault.
func (x *explorer) judge(end, base *endState, mode Mode) Verdict {
	if len(end.broken) > 0 {
		return Verdict{Outcome: Broken, Reason: strings.Join(end.broken, "; ")}
	}
	var broken, stuck []string
	var drift []resize.Difference
	for _, key := range base.order {
		b, e := base.pods[key], end.pods[key]
		// A PodResizePending the run without the fault does not have, on
		// a pod that has nothing left to allocate, after a crash: the
		// kubelet took a stale condition over (GapStalePending). The
		// pod's other states are judged as usual.
		stale := e != nil && mode != FailOnce && x.backfills() && e.admitted && e.pending != "" &&
			b.pending == "" && e.specDiffers == ""
		switch {
		case e == nil:
			broken = append(broken, key+": the pod is gone")
			continue
		case b.terminal != e.terminal:
			broken = append(broken, fmt.Sprintf("%s: finished %t, in the run without the fault %t", key, e.terminal, b.terminal))
			continue
		case b.terminal:
			continue
		case b.admitted && !e.admitted:
			broken = append(broken, key+": the node no longer has the pod admitted")
			continue
		case b.alloc != e.alloc:
			broken = append(broken, fmt.Sprintf("%s: allocation %s, the run without the fault has %s", key, e.alloc, b.alloc))
			continue
		case e.specDiffers != "" && e.pending == "" && b.pending == "":
			broken = append(broken, fmt.Sprintf("%s: the resize is lost: %s, and no PodResizePending", key, e.specDiffers))
			continue
		case e.pending != b.pending && !stale:
			broken = append(broken, fmt.Sprintf("%s: PodResizePending %q, the run without the fault has %q", key, e.pending, b.pending))
			continue
		case e.inProgress != b.inProgress && b.inProgress == "":
			stuck = append(stuck, fmt.Sprintf("%s: PodResizeInProgress (%s) after the settling time; the run without the fault finished", key, e.inProgress))
			continue
		case e.inProgress != b.inProgress:
			broken = append(broken, fmt.Sprintf("%s: PodResizeInProgress %q, the run without the fault has %q", key, e.inProgress, b.inProgress))
			continue
		}
		// The conditions are the run's without the fault: what is left is
		// whether the real state agrees with the allocation. A resize that
		// reports done must have no difference at all (the run without the
		// fault may drift too, when the scenario injects its own fault); a
		// resize the scenario leaves in progress has differences of its
		// own, and only those beyond them count.
		if stale {
			ns, name, _ := strings.Cut(key, "/")
			drift = append(drift, resize.Difference{Namespace: ns, Pod: name, Where: resize.WhereStatus,
				Field: "condition " + string(v1.PodResizePending), Want: "absent", Got: "reason " + e.pending})
		}
		if e.inProgress == "" {
			drift = append(drift, e.diffs...)
		} else {
			drift = append(drift, extraDiffs(e.diffs, b.diffs)...)
		}
	}
	for _, key := range end.order {
		if base.pods[key] == nil {
			broken = append(broken, key+": the pod is there, and not in the run without the fault")
		}
	}
	switch {
	case len(broken) > 0:
		return Verdict{Outcome: Broken, Reason: strings.Join(broken, "; ")}
	case len(stuck) > 0:
		return Verdict{Outcome: Stuck, Reason: strings.Join(stuck, "; ")}
	case len(drift) > 0:
		owner, gaps, reason := x.owner(drift, mode)
		return Verdict{Outcome: Drifted, Owner: owner, Gaps: gaps, Reason: reason, Differences: drift}
	}
	return Verdict{Outcome: Converged}
}

// Verdict is how a point or a baseline ended.
type Verdict struct {
	Outcome Outcome
	// Owner says whose a drift is; Gaps are the kubelet's gaps it shows.
	Owner Owner
	Gaps  []string
	// Reason is the kubelet's cause of a drift (its gaps' reasons), or
	// what broke, or what is stuck.
	Reason      string
	Differences []resize.Difference
}

// extraDiffs are the differences of got that want does not have (a pod
// whose resize the scenario leaves in progress has differences without
// any fault).
func extraDiffs(got, want []resize.Difference) []resize.Difference {
	seen := map[string]int{}
	for _, d := range want {
		seen[d.String()]++
	}
	var out []resize.Difference
	for _, d := range got {
		if seen[d.String()] > 0 {
			seen[d.String()]--
			continue
		}
		out = append(out, d)
	}
	return out
}

// owner labels a drift: the kubelet's when every difference has the
// signature of one of its known gaps (the gaps' IDs are returned),
// resizelet's otherwise.
func (x *explorer) owner(drift []resize.Difference, mode Mode) (Owner, []string, string) {
	var gaps []string
	var reasons []string
	use := func(g Gap) {
		for _, id := range gaps {
			if id == g.ID {
				return
			}
		}
		gaps = append(gaps, g.ID)
		reasons = append(reasons, g.Reason)
	}
	for _, d := range drift {
		switch {
		// A pod cgroup file disagrees while every container is actuated as
		// allocated (an actuated difference would show otherwise): the
		// kubelet v1.35.4 has nothing left to do and never looks at the pod
		// cgroup again. With the fix on, the same drift is resizelet's.
		case d.Where == resize.WherePodCgroup && d.Field != "record" && !x.s.Node.ReconcilePodCgroups:
			use(GapPodCgroup)
		// A checkpoint file is behind the node's record after a write that
		// failed to persist. With the flush on, the same drift is
		// resizelet's.
		case (d.Where == resize.WhereAllocated || d.Where == resize.WhereActuated) && d.Field == "file" && mode == FailOnce &&
			!x.s.Node.FlushCheckpoints:
			use(GapCheckpointFile)
		// A stale PodResizePending taken over by a restarted kubelet (see
		// judge): no opt-in fix closes it.
		case d.Where == resize.WhereStatus && d.Field == "condition "+string(v1.PodResizePending) && mode != FailOnce && mode != "":
			use(GapStalePending)
		default:
			return OwnerResizelet, nil, "resizelet's own drift: " + formatDiffs(drift)
		}
	}
	return OwnerKubelet, gaps, strings.Join(reasons, "; and ")
}

// backfills reports whether the scenario's kubelet takes the resize
// conditions over from the API server when it starts (1.35 and later).
func (x *explorer) backfills() bool {
	return profile.New(x.s.Node.Profile, x.s.Node.FeatureGates).BackfillsResizeConditions()
}

// judgeAlone classifies how a step ends without a fault: the reference
// the points are judged against, which can itself drift (a scenario that
// injects its own fault).
func (x *explorer) judgeAlone(end *endState) Verdict {
	if len(end.broken) > 0 {
		return Verdict{Outcome: Broken, Reason: strings.Join(end.broken, "; ")}
	}
	var drift []resize.Difference
	var notes []string
	for _, key := range end.order {
		e := end.pods[key]
		if !e.admitted {
			continue
		}
		if e.inProgress != "" {
			notes = append(notes, fmt.Sprintf("%s: the scenario leaves PodResizeInProgress (%s)", key, e.inProgress))
			continue
		}
		drift = append(drift, e.diffs...)
	}
	if len(drift) > 0 {
		owner, gaps, reason := x.owner(drift, "")
		return Verdict{Outcome: Drifted, Owner: owner, Gaps: gaps, Reason: reason, Differences: drift}
	}
	return Verdict{Outcome: Converged, Reason: strings.Join(notes, "; ")}
}

func formatDiffs(ds []resize.Difference) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.String()
	}
	return strings.Join(parts, "; ")
}

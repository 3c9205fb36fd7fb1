package scenario

import (
	"context"
	"sort"

	v1 "k8s.io/api/core/v1"

	"github.com/resizelet/resizelet/cri"
)

// snapshot is the state a step's report compares against.
type snapshot struct {
	events     int
	conditions map[PodRef][]v1.PodCondition
	restarts   map[PodRef]map[string]int32
	// pids are the containers' main process IDs, where the runtime tells.
	pids map[PodRef]map[string]int
}

func (r *runner) snapshot() snapshot {
	s := snapshot{
		events:     len(r.cluster.Events()),
		conditions: map[PodRef][]v1.PodCondition{},
		restarts:   map[PodRef]map[string]int32{},
		pids:       map[PodRef]map[string]int{},
	}
	n := r.currentNode()
	for _, p := range r.cluster.ListPods(context.Background()) {
		ref := PodRef{Namespace: p.Namespace, Name: p.Name}
		s.conditions[ref] = resizeConditions(p)
		s.restarts[ref] = restartCounts(p)
		if n == nil {
			continue
		}
		if info, err := n.Pod(p.Namespace, p.Name); err == nil {
			pids := map[string]int{}
			for name, id := range info.ContainerIDs {
				if pid, ok := cri.ContainerPID(context.Background(), r.b.base, id); ok {
					pids[name] = pid
				}
			}
			s.pids[ref] = pids
		}
	}
	return s
}

func resizeConditions(p *v1.Pod) []v1.PodCondition {
	var out []v1.PodCondition
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodResizePending || c.Type == v1.PodResizeInProgress {
			out = append(out, c)
		}
	}
	return out
}

func restartCounts(p *v1.Pod) map[string]int32 {
	out := map[string]int32{}
	for _, cs := range p.Status.InitContainerStatuses {
		out[cs.Name] = cs.RestartCount
	}
	for _, cs := range p.Status.ContainerStatuses {
		out[cs.Name] = cs.RestartCount
	}
	return out
}

// admission writes the admission decision for a pod just added.
func (r *runner) admission(ref PodRef) {
	info, err := r.currentNode().Pod(ref.Namespace, ref.Name)
	p, perr := r.cluster.GetPod(context.Background(), ref.Namespace, ref.Name)
	switch {
	case err == nil && info.Admitted:
		qos := ""
		if perr == nil {
			qos = string(p.Status.QOSClass)
		}
		r.t.line("admitted: %s (%s), pod cgroup %s", ref, qos, info.PodCgroup)
	case perr == nil:
		r.t.line("rejected: %s: phase %s, reason %s: %s", ref, p.Status.Phase, p.Status.Reason, p.Status.Message)
	default:
		r.t.line("rejected: %s", ref)
	}
}

// report writes what changed since snap: condition changes, restarts,
// events, cgroup writes and CRI calls, then forgets the recorded writes
// and calls.
func (r *runner) report(snap snapshot) {
	now := r.snapshot()
	pods := r.cluster.ListPods(context.Background())
	for _, p := range pods {
		ref := PodRef{Namespace: p.Namespace, Name: p.Name}
		r.t.conditionChanges(ref, snap.conditions[ref], now.conditions[ref])
		old := snap.restarts[ref]
		for _, name := range containerNames(p) {
			if c, o := now.restarts[ref][name], old[name]; c != o {
				r.t.line("restart: %s container %s restartCount %d -> %d", ref, name, o, c)
			}
		}
	}
	calls := r.b.runtime.Calls()
	r.processes(snap, now, calls)
	events := r.cluster.Events()
	if snap.events < len(events) {
		r.t.events(events[snap.events:], r.clock.Now())
	}
	r.t.writes(r.b.cgroups.Writes())
	r.b.cgroups.Reset()
	r.t.calls(calls)
	r.b.runtime.Reset()
}

// processes reports, for each container that was updated in place or
// replaced in this step, whether its main process stayed the same: an
// in-place resize keeps the PID, a restart gets a new one.
func (r *runner) processes(before, after snapshot, calls []cri.Call) {
	updated := map[string]bool{}
	for _, c := range calls {
		if c.Method == "UpdateContainerResources" && c.Err == nil {
			updated[c.Pod+"/"+c.Container] = true
		}
	}
	refs := make([]PodRef, 0, len(after.pids))
	for ref := range after.pids {
		refs = append(refs, ref)
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].String() < refs[j].String() })
	for _, ref := range refs {
		names := make([]string, 0, len(after.pids[ref]))
		for name := range after.pids[ref] {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			now := after.pids[ref][name]
			old, had := before.pids[ref][name]
			switch {
			case had && old != now:
				r.t.line("process: %s container %s pid %d -> %d (new process)", ref, name, old, now)
			case had && updated[ref.String()+"/"+name]:
				r.t.line("process: %s container %s pid %d (same process, resized in place)", ref, name, now)
			}
		}
	}
}

func containerNames(p *v1.Pod) []string {
	var out []string
	for _, c := range p.Spec.InitContainers {
		out = append(out, c.Name)
	}
	for _, c := range p.Spec.Containers {
		out = append(out, c.Name)
	}
	return out
}

// terminalPhase reports whether a pod in phase is finished.
func terminalPhase(phase v1.PodPhase) bool {
	return phase == v1.PodSucceeded || phase == v1.PodFailed
}

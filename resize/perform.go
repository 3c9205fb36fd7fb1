package resize

import (
	"context"
	"errors"
	"fmt"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/resize/core"
)

// performInto carries out a batch in order and returns one result per action
// performed. It stops after the first failed action that stops its batch
// (core.StopsOnFailure), unless the batch says KeepGoing. Once ctx is done
// the actions on the node's cgroups and runtime fail with its error
// without being tried; the kubelet's own records (checkpoints, events,
// status) are still kept, so that the checkpoints hold what the core
// believes they hold. It holds no lock. The results are appended to
// buf[:0]: a caller reuses buf from batch to batch (the core keeps nothing
// of a BatchDone's slice).
func (n *Node) performInto(ctx context.Context, b *core.Batch, buf []core.Result) []core.Result {
	results := buf[:0]
	changed := false
	n.backends.before()
	defer n.backends.after()
	for _, a := range b.Actions {
		// The result is filled in where it stays: a Result is large and
		// full of pointers, and copying it costs write barriers while the
		// garbage collector runs.
		results = append(results, core.Result{})
		r := &results[len(results)-1]
		if err := ctx.Err(); err != nil && onNode(a) {
			r.Err = err
		} else {
			n.doInto(ctx, a, r)
		}
		if r.Err != nil && errors.Is(r.Err, cri.ErrNotFound) {
			r.NotFound = true
		}
		changed = changed || r.Err != nil || n.changes(a)
		if r.Err != nil && !b.KeepGoing && core.StopsOnFailure(a) {
			break
		}
	}
	if changed {
		n.watch.changes.Add(1)
	}
	return results
}

// changes reports whether a (performed without error) changes anything on
// the node or in the API. Reads change nothing. A status write changes
// something only if the status differs from the one written before: the
// kubelet writes the status at the end of every sync, settled or not, and
// the API server keeps an equal one as it is. Statuses are compared only
// while an Advance watches the node (watch.watchers); otherwise every
// status write counts, which costs nothing and only delays a skip.
func (n *Node) changes(a core.Action) bool {
	if core.IsRead(a) {
		return false
	}
	switch a := a.(type) {
	case core.WriteStatus:
		return n.watch.statusChanged(a)
	case core.DeletePod:
		n.watch.forget()
	}
	return true
}

// do performs one action on the node's parts.
func (n *Node) do(ctx context.Context, a core.Action) core.Result {
	var r core.Result
	n.doInto(ctx, a, &r)
	return r
}

// doInto is do filling in r, which is zero.
func (n *Node) doInto(ctx context.Context, a core.Action, r *core.Result) {
	switch a := a.(type) {
	case core.ReadCgroupExists:
		r.Exists = n.cg.Exists(a.Path)
	case core.CreateCgroup:
		r.Err = n.cg.Create(a.Path)
	case core.SetCgroup:
		// The writes Set would return are not needed: SetValues makes
		// them without building the record, where the manager can.
		_, r.Err = cgroup.SetValues(n.cg, a.Path, a.Values)
	case core.ReadCgroup:
		r.Values, r.Err = n.cg.Get(a.Path)
	case core.ReadMemoryUsage:
		r.Usage, r.Err = n.cg.MemoryUsage(a.Path)
	case core.DeleteCgroup:
		r.Err = n.cg.Delete(a.Path)
	case core.RunPodSandbox:
		r.ID, r.Err = n.rt.RunPodSandbox(ctx, a.Config, "")
	case core.StopPodSandbox:
		r.Err = n.rt.StopPodSandbox(ctx, a.ID)
	case core.RemovePodSandbox:
		r.Err = n.rt.RemovePodSandbox(ctx, a.ID)
	case core.UpdatePodSandboxResources:
		_, r.Err = n.rt.UpdatePodSandboxResources(ctx, a.Request)
		if cri.IsUnimplemented(r.Err) {
			// The call is best effort in every version: a runtime that
			// does not implement it lets the resize go on, from 1.36 too
			// (pkg/kubelet/kuberuntime/kuberuntime_container.go,
			// updatePodSandboxResources), and logs it.
			r.Err, r.Unimplemented = nil, true
		}
	case core.CreateContainer:
		r.ID, r.Err = n.rt.CreateContainer(ctx, a.SandboxID, a.Config, a.SandboxConfig)
	case core.StartContainer:
		r.Err = n.rt.StartContainer(ctx, a.ID)
	case core.StopContainer:
		r.Err = n.rt.StopContainer(ctx, a.ID, a.Timeout)
	case core.RemoveContainer:
		r.Err = n.rt.RemoveContainer(ctx, a.ID)
	case core.ReadContainerStatus:
		st, err := n.rt.ContainerStatus(ctx, a.ID, false)
		r.Status, r.Err = st.GetStatus(), err
	case core.ReadContainerStats:
		r.Stats, r.Err = n.rt.ContainerStats(ctx, a.ID)
	case core.UpdateContainerResources:
		r.Err = n.rt.UpdateContainerResources(ctx, a.ID, a.Resources)
	case core.WriteAllocated:
		r.Err = n.allocated.Set(a.UID, a.Resources)
	case core.WriteActuatedContainer:
		r.Err = n.actuated.SetContainer(a.UID, a.Name, a.Resources)
	case core.WriteActuated:
		r.Err = n.actuated.Set(a.UID, a.Resources)
	case core.DeleteCheckpoints:
		n.allocated.Delete(a.UID)
		n.actuated.Delete(a.UID)
		n.forgotten(a.UID)
		n.statuses.forget(a.UID)
	case core.RecordEvent:
		n.cluster.RecordEvent(ctx, Event{
			Time:      a.Event.Time,
			Namespace: a.Event.Namespace,
			Pod:       a.Event.Pod,
			Container: a.Event.Container,
			Type:      a.Event.Type,
			Reason:    a.Event.Reason,
			Message:   a.Event.Message,
			Lazy:      lazyMessage(*a.Event),
			Source:    "kubelet",
			Host:      n.cfg.Name,
		})
	case core.WriteStatus:
		r.Err = n.writeStatus(ctx, a)
	case core.DeletePod:
		r.Err = n.deletePod(ctx, a)
	}
}

// onNode reports whether an action reads or changes the node's cgroups or
// runtime.
func onNode(a core.Action) bool {
	switch a.(type) {
	case core.WriteAllocated, core.WriteActuatedContainer, core.WriteActuated, core.DeleteCheckpoints,
		core.RecordEvent, core.WriteStatus, core.DeletePod:
		return false
	}
	return true
}

// lazyMessage hands a resize event's unformatted message to the API, so
// that it is formatted only when read.
func lazyMessage(e core.Event) fmt.Stringer {
	if e.Message != "" || !e.Resize.Listed {
		return nil
	}
	return e.Resize
}

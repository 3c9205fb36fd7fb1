package core

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/allocation"
	"github.com/resizelet/resizelet/allocation/reslist"
)

// ContainerValues are the four numbers the kubelet compares to decide a
// container resize: limits and requests as raw integers (memory in bytes,
// cpu in millicores), as computePodResizeAction reads them
// (kuberuntime_manager.go).
type ContainerValues struct {
	MemoryLimit, MemoryRequest int64
	CPULimit, CPURequest       int64
}

// valuesOf reads the four numbers from requirements; a missing value is 0.
func valuesOf(r v1.ResourceRequirements) ContainerValues {
	return ContainerValues{
		MemoryLimit:   quantityOf(r.Limits, v1.ResourceMemory).Value(),
		MemoryRequest: quantityOf(r.Requests, v1.ResourceMemory).Value(),
		CPULimit:      quantityOf(r.Limits, v1.ResourceCPU).MilliValue(),
		CPURequest:    quantityOf(r.Requests, v1.ResourceCPU).MilliValue(),
	}
}

// podLevelLimit is one resource's limit as GetLimits
// (pkg/kubelet/util/util.go) gives it: the container's own limit, or with
// pod-level resize on (the kubelet calls GetLimits only under the
// InPlacePodLevelResourcesVerticalScaling gate) and no limit of its own
// (absent or zero), the pod-level limit when that is set. It reads the
// lists in place, so it allocates nothing.
func podLevelLimit(pod *v1.ResourceRequirements, own v1.ResourceList, name v1.ResourceName, podLevelResize bool) resource.Quantity {
	q := own[name]
	if podLevelResize && pod != nil && q.IsZero() {
		if p, ok := pod.Limits[name]; ok && !p.IsZero() {
			return p
		}
	}
	return q
}

// valuesWithPod is containerResourcesFromRequirements
// (kuberuntime_manager.go): the four numbers of r, with the limits as
// podLevelLimit gives them for the pod-level requirements pod.
func valuesWithPod(pod *v1.ResourceRequirements, r v1.ResourceRequirements, podLevelResize bool) ContainerValues {
	v := valuesOf(r)
	if podLevelResize && pod != nil && len(pod.Limits) > 0 {
		cpu := podLevelLimit(pod, r.Limits, v1.ResourceCPU, true)
		memory := podLevelLimit(pod, r.Limits, v1.ResourceMemory, true)
		v.CPULimit, v.MemoryLimit = cpu.MilliValue(), memory.Value()
	}
	return v
}

// actuatedLimits is what setActuatedContainerResources
// (kuberuntime_container.go) records as a container's limits: with
// pod-level resize on, its own limits with the pod-level ones in place of
// those it lacks (GetLimits), otherwise its own. The lists given are never
// changed: a new one is made only when a pod-level limit is filled in.
func actuatedLimits(pod *v1.ResourceRequirements, own v1.ResourceList, podLevelResize bool) v1.ResourceList {
	if !podLevelResize || pod == nil || len(pod.Limits) == 0 {
		return own
	}
	out := sharedList{list: own}
	for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
		if p, ok := pod.Limits[name]; ok && !p.IsZero() && quantityOf(own, name).IsZero() {
			out.set(name, p)
		}
	}
	return out.list
}

// actuatedRequirements is the record setActuatedContainerResources writes
// for a container with requirements r in a pod with pod-level
// requirements pod: r with actuatedLimits as its limits.
func actuatedRequirements(pod *v1.ResourceRequirements, r v1.ResourceRequirements, podLevelResize bool) v1.ResourceRequirements {
	r.Limits = actuatedLimits(pod, r.Limits, podLevelResize)
	return r
}

// ContainerUpdate is one queued in-place update of a running container:
// its allocated (Desired) and actuated (Current) values.
type ContainerUpdate struct {
	Name    string
	ID      string
	Desired ContainerValues
	Current ContainerValues
}

// ContainerKill is a container the sync stops, with the event message and,
// for a resize restart, which value changed under which policy.
type ContainerKill struct {
	Name, ID, Message string
	Reason            string
}

// ContainerState is what a sync knows of one container from the runtime.
type ContainerState struct {
	Name     string
	ID       string
	Running  bool
	Exited   bool
	ExitCode int32
	Attempt  uint32
}

// PodActions is computePodActions for a running sandbox: what a sync
// does, decided before it does anything, and never changed afterwards.
type PodActions struct {
	Kill []ContainerKill
	// Start lists container names to (re)start, sidecars first.
	Start []string
	// UpdateMemory and UpdateCPU are the in-place updates per resource,
	// decreases first.
	UpdateMemory []ContainerUpdate
	UpdateCPU    []ContainerUpdate
	// UpdatePodResources is set when a container restarts for a resize, so
	// that the pod cgroup is brought to the allocation too, or when the
	// pod-level resources' allocation differs from what was actuated.
	UpdatePodResources bool
}

// Resizing reports whether the actions include a resize (step 7 of
// SyncPod).
func (a *PodActions) Resizing() bool {
	return a != nil && (len(a.UpdateMemory) > 0 || len(a.UpdateCPU) > 0 || a.UpdatePodResources)
}

// planPod is computePodActions: containers that are missing or exited are
// started per the restart policy; running resizable containers are
// compared, allocated against actuated (planContainerResize). With
// pod-level resize on, a pod whose pod-level allocation differs from its
// actuated record updates the pod cgroup too. The lists are appended to
// the (emptied) slices of reuse, which a sync keeps from one use to the
// next.
func planPod(reuse PodActions, alloc *v1.Pod, states map[string]ContainerState, actuated allocation.PodResources, resizeAllowed, podLevelResize bool) PodActions {
	a := PodActions{Kill: reuse.Kill[:0], Start: reuse.Start[:0], UpdateMemory: reuse.UpdateMemory[:0], UpdateCPU: reuse.UpdateCPU[:0]}
	for c := range allContainers(alloc) {
		st, ok := states[c.Name]
		switch {
		case !ok || st.ID == "":
			a.Start = append(a.Start, c.Name)
		case !st.Running:
			if shouldRestart(alloc.Spec.RestartPolicy, st) {
				a.Start = append(a.Start, c.Name)
			}
		case resizeAllowed:
			// A missing record is treated as zeros, as the kubelet does:
			// one extra idempotent update, or a restart under
			// RestartContainer.
			planContainerResize(&a, alloc, c, st, actuated, podLevelResize)
		}
	}
	if podLevelResize && alloc.Spec.Resources != nil && !podLevelActuated(alloc, actuated) {
		a.UpdatePodResources = true
	}
	return a
}

// startingResizedContainer is the 1.37 startingResizedContainer: whether a regular
// container about to start has allocated resources that differ from its
// actuated record (a missing record counts as zeros), compared as
// computePodResizeAction compares them (with the pod-level limits under
// pod-level resize).
func startingResizedContainer(alloc *v1.Pod, start []string, actuated allocation.PodResources, podLevelResize bool) bool {
	for _, name := range start {
		for i := range alloc.Spec.Containers {
			c := &alloc.Spec.Containers[i]
			if c.Name == name && valuesWithPod(alloc.Spec.Resources, c.Resources, podLevelResize) !=
				valuesWithPod(actuatedPodRecord(actuated, podLevelResize), actuated.ContainerResources[name], podLevelResize) {
				return true
			}
		}
	}
	return false
}

// podLevelActuated reports whether the pod-level allocation equals the
// actuated pod-level record, compared as the kubelet compares containers.
func podLevelActuated(alloc *v1.Pod, actuated allocation.PodResources) bool {
	var rec v1.ResourceRequirements
	if actuated.PodLevelResources != nil {
		rec = *actuated.PodLevelResources
	}
	return valuesOf(*alloc.Spec.Resources) == valuesOf(rec)
}

// shouldRestart applies the pod's restartPolicy to an exited container.
func shouldRestart(policy v1.RestartPolicy, st ContainerState) bool {
	switch policy {
	case v1.RestartPolicyNever:
		return false
	case v1.RestartPolicyOnFailure:
		return st.ExitCode != 0
	}
	return true
}

// resizePolicy returns the container's restart policy for a resource;
// unset means NotRequired.
func resizePolicy(c *v1.Container, name v1.ResourceName) v1.ResourceResizeRestartPolicy {
	for _, p := range c.ResizePolicy {
		if p.ResourceName == name {
			return p.RestartPolicy
		}
	}
	return v1.NotRequired
}

// actuatedPodRecord is the actuated pod-level record computePodResizeAction
// reads: none unless pod-level resize is on.
func actuatedPodRecord(actuated allocation.PodResources, podLevelResize bool) *v1.ResourceRequirements {
	if !podLevelResize {
		return nil
	}
	return actuated.PodLevelResources
}

// planContainerResize is computePodResizeAction for one running container:
// the allocation against the container's actuated record (a missing record
// is zeros), each with its pod-level limits for those the container lacks
// under pod-level resize (containerResourcesFromRequirements), field by
// field. A changed field whose resource has policy RestartContainer
// restarts the container; otherwise the change is queued as an update,
// decreases first.
func planContainerResize(a *PodActions, alloc *v1.Pod, c *v1.Container, st ContainerState, actuated allocation.PodResources, podLevelResize bool) {
	if sharesRecord(alloc, c, actuated, podLevelResize) {
		return
	}
	desired := valuesWithPod(alloc.Spec.Resources, c.Resources, podLevelResize)
	current := valuesWithPod(actuatedPodRecord(actuated, podLevelResize), actuated.ContainerResources[c.Name], podLevelResize)
	if desired == current {
		return
	}
	for _, f := range []struct {
		resource  v1.ResourceName
		field     string
		want, got int64
	}{
		{v1.ResourceMemory, "memory limit", desired.MemoryLimit, current.MemoryLimit},
		{v1.ResourceMemory, "memory request", desired.MemoryRequest, current.MemoryRequest},
		{v1.ResourceCPU, "cpu limit", desired.CPULimit, current.CPULimit},
		{v1.ResourceCPU, "cpu request", desired.CPURequest, current.CPURequest},
	} {
		if f.want != f.got && resizePolicy(c, f.resource) == v1.RestartContainer {
			a.Kill = append(a.Kill, ContainerKill{
				Name: c.Name, ID: st.ID,
				Message: fmt.Sprintf("Container %s resize requires restart", c.Name),
				Reason:  fmt.Sprintf("%s %d -> %d, %s resizePolicy RestartContainer", f.field, f.got, f.want, f.resource),
			})
			a.Start = append(a.Start, c.Name)
			a.UpdatePodResources = true
			return
		}
	}
	update := ContainerUpdate{Name: c.Name, ID: st.ID, Desired: desired, Current: current}
	// queue compares the limit, or the request when the limit is the
	// same, and prepends a decrease and appends an increase, so that
	// across containers the decreases run first.
	queue := func(list *[]ContainerUpdate, want, got, wantRequest, gotRequest int64) {
		if want == got {
			want, got = wantRequest, gotRequest
		}
		if want > got {
			*list = append(*list, update)
		} else if want < got {
			*list = slices.Insert(*list, 0, update)
		}
	}
	queue(&a.UpdateMemory, desired.MemoryLimit, current.MemoryLimit, desired.MemoryRequest, current.MemoryRequest)
	queue(&a.UpdateCPU, desired.CPULimit, current.CPULimit, desired.CPURequest, current.CPURequest)
}

// resizeInProgress is isPodResizeInProgress: a running resizable container
// whose allocated cpu or memory differs from its actuated record, or
// pod-level resources not yet actuated (with pod-level resize on). With
// pod-level resize on, the allocated limits are taken with the allocated
// pod-level ones (GetLimits) and the record's with the actuated pod-level
// ones, as computePodResizeAction compares them. The kubelet's
// isContainerResourceResizeInProgress takes the record as it is; the two
// agree on every record setActuatedContainerResources writes under the
// gate (it records the pod-level limits a container lacks), and differ
// only on a record written without the gate, where the kubelet would
// report a resize in progress that computePodResizeAction never acts on.
func resizeInProgress(alloc *v1.Pod, states map[string]ContainerState, actuated allocation.PodResources, podLevelResize bool) bool {
	for c := range allContainers(alloc) {
		st, ok := states[c.Name]
		if !ok || !st.Running {
			continue
		}
		if sharesRecord(alloc, c, actuated, podLevelResize) {
			continue
		}
		act := actuated.ContainerResources[c.Name]
		for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
			if !quantityEqual(c.Resources.Requests, act.Requests, name) {
				return true
			}
			want := podLevelLimit(alloc.Spec.Resources, c.Resources.Limits, name, podLevelResize)
			got := podLevelLimit(actuatedPodRecord(actuated, podLevelResize), act.Limits, name, podLevelResize)
			if !want.Equal(got) {
				return true
			}
		}
	}
	return podLevelResize && alloc.Spec.Resources != nil && !podLevelActuated(alloc, actuated)
}

// sharesRecord reports, cheaply, that a container's allocated resources
// are its actuated record's: the record holds the very lists of the spec
// (records share lists with the pods they come from, see
// actuatedRequirements and requirementsLike), and no pod-level limits take
// part in the comparison. false says nothing: compare the values.
func sharesRecord(alloc *v1.Pod, c *v1.Container, actuated allocation.PodResources, podLevelResize bool) bool {
	if podLevelResize && (alloc.Spec.Resources != nil || actuated.PodLevelResources != nil) {
		return false
	}
	act, ok := actuated.ContainerResources[c.Name]
	return ok && len(c.Resources.Requests) > 0 && len(c.Resources.Limits) > 0 &&
		reslist.Same(c.Resources.Requests, act.Requests) && reslist.Same(c.Resources.Limits, act.Limits)
}

func quantityEqual(a, b v1.ResourceList, name v1.ResourceName) bool {
	qa, qb := a[name], b[name]
	return qa.Equal(qb)
}

// ErrBusy is returned by Clone for a core with work in flight or queued:
// operations in flight hold state that belongs to their driver.
var ErrBusy = errors.New("core is not quiet")

// Clone returns an independent copy of a quiet core, for a dry run: what
// the copy is told and decides changes nothing in the original.
func (c *Core) Clone() (*Core, error) {
	if !c.made() {
		return nil, ErrNotMade
	}
	if !c.Quiet() {
		return nil, ErrBusy
	}
	s := c.s
	// The message cache is the original's working memory: the clone runs
	// beside it and gets its own.
	s.admit.Messages = &allocation.MessageCache{}
	// The clone takes the usage as it stands: every share taken.
	c.recountStale()
	out := &Core{
		s:        s,
		started:  c.started,
		now:      c.now,
		pods:     make(map[types.UID]*podState, len(c.pods)),
		byName:   maps.Clone(c.byName),
		nextSeq:  c.nextSeq,
		order:    slices.Clone(c.order),
		retry:    c.retry,
		used:     c.used.Clone(),
		inflight: map[uint64]*flight{},
		nextID:   c.nextID,
	}
	out.thawed.Limit = c.thawed.Limit
	for _, item := range c.queue.Items() {
		out.queue.Push(item)
	}
	for _, uid := range c.order {
		ps := c.pods[uid]
		cp := *ps
		cp.copyBody(&out.thawed)
		cp.containers = slices.Clone(ps.containers)
		cp.dead = slices.Clone(ps.dead)
		cp.conds = ps.conds.copy()
		cp.usage = ps.usage.Clone()
		cp.timerIdx = -1
		out.pods[uid] = &cp
		if !cp.resyncAt.IsZero() {
			out.setResync(&cp, cp.resyncAt)
		}
	}
	return out, nil
}

// AdmissionPlan is the arithmetic of a resize's admission, for a plan: the
// numbers the kubelet compares, and where the resize stands in the
// pending-resize queue once it has joined it.
type AdmissionPlan struct {
	Checks []allocation.Check
	// QueuePosition is the resize's index in the queue, counted from 0,
	// when the retry that decides it starts; -1 when there is nothing to
	// resize (the desired resources equal the allocation).
	QueuePosition int
	QueueLength   int
}

// PlanAdmission returns the admission arithmetic of a resize to pod (the
// pod as the API server would store it after the resize) on a quiet core,
// without changing it.
func (c *Core) PlanAdmission(pod *v1.Pod) (AdmissionPlan, error) {
	if !c.made() {
		return AdmissionPlan{}, ErrNotMade
	}
	if pod == nil {
		return AdmissionPlan{}, errors.New("plan admission: nil pod")
	}
	clone, err := c.Clone()
	if err != nil {
		return AdmissionPlan{}, err
	}
	ps := clone.pods[pod.UID]
	if ps == nil {
		return AdmissionPlan{}, fmt.Errorf("plan %s/%s: %w", pod.Namespace, pod.Name, ErrUnknownPod)
	}
	updated := pod.DeepCopy()
	ps.setPod(updated)
	plan := AdmissionPlan{QueuePosition: -1}
	if !ps.view().Changed() {
		return plan, nil
	}
	clone.pushPending(ps)
	items := clone.queue.Items()
	plan.QueueLength = len(items)
	plan.QueuePosition = slices.IndexFunc(items, func(item allocation.PendingResize) bool { return item.UID == ps.uid })
	plan.Checks = allocation.ExplainResize(updated, clone.othersUsage(ps), clone.s.admit)
	return plan, nil
}

package core

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/resize/profile"
)

func (o *syncOp) advance(c *Core, done []Action, res []Result) ([]Action, bool, bool) {
	ps := c.pods[o.uid]
	if ps == nil {
		return o.take(), false, true
	}
	for {
		acts := o.step(c, ps, done, res)
		done, res = nil, nil
		if o.phase == syncDone {
			return o.take(acts...), false, true
		}
		if len(acts) > 0 {
			return o.take(acts...), false, false
		}
	}
}

// fail ends the sync with err and the given last actions.
func (o *syncOp) fail(err error, acts ...Action) []Action {
	o.errs = append(o.errs, err)
	o.phase = syncDone
	return acts
}

// step runs the current phase with the results of the last batch and
// returns the actions of the next batch, or none to go on at once.
func (o *syncOp) step(c *Core, ps *podState, done []Action, res []Result) []Action {
	s := &c.s
	podLevelResize := s.profile.PodLevelResize()
	switch o.phase {
	case syncBegin:
		o.alloc, _ = ps.allocatedPod()
		o.phase = syncEnsure
		return o.one(ReadCgroupExists{Path: ps.podCgroup})

	case syncEnsure:
		acts := o.scratch[:0]
		if _, r, ok := resultOf[ReadCgroupExists](done, res); !ok || !r.Exists {
			acts = append(acts, CreateCgroup{Path: ps.podCgroup}, SetCgroup{Path: ps.podCgroup, Values: s.podCgroupValues(o.alloc)})
		}
		if ps.sandboxID == "" {
			o.newSandbox = true
			acts = append(acts, RunPodSandbox{Pod: ps.pod().Namespace + "/" + ps.pod().Name, Config: s.cri.SandboxConfig(o.alloc, ps.podCgroup)})
		}
		acts = o.appendStatusReads(acts, ps)
		o.scratch = acts
		o.phase = syncObserved
		return acts

	case syncObserved:
		for i, a := range done {
			err := res[i].Err
			switch a := a.(type) {
			case CreateCgroup:
				if err != nil {
					return o.cgroupFailed(c, ps, fmt.Errorf("create pod cgroup %s: %w", a.Path, err))
				}
			case SetCgroup:
				if err != nil {
					return o.cgroupFailed(c, ps, fmt.Errorf("configure pod cgroup %s: %w", a.Path, err))
				}
			case RunPodSandbox:
				if err != nil {
					return o.fail(err,
						c.event(&o.opOutput, ps.pod(), "", v1.EventTypeWarning, ReasonFailedCreatePodSandBox, fmt.Sprintf("Failed to create pod sandbox: %v", err)),
						c.writeStatus(ps, c.buildStatus(ps, o.alloc, nil, nil)))
				}
				ps.sandboxID = res[i].ID
			}
		}
		// The status reads come last: a failure before them stops the batch.
		if err := o.observe(ps, done, res); err != nil {
			return o.fail(err)
		}
		o.allowed = c.resizeAllowed(ps.pod())
		if o.allowed && resizeInProgress(o.alloc, o.states, ps.live().actuated, podLevelResize) {
			// CheckPodResizeInProgress runs before the runtime's sync: after
			// a kubelet restart it sets the condition again (the status
			// manager keeps conditions in memory only); otherwise it keeps
			// it as it is.
			c.setInProgress(ps, "", "", o.alloc.Generation, metav1.NewTime(c.now))
		}
		o.actions = planPod(o.actions, o.alloc, o.states, ps.live().actuated, o.allowed, podLevelResize)
		if s.profile.ResizesPodForStartingContainers() && !o.newSandbox && !o.actions.UpdatePodResources {
			// From 1.37 a container that starts with resources other
			// than its actuated ones brings the pod cgroup along
			// (computePodActions, startingResizedContainer); a new
			// sandbox returns before that check.
			o.actions.UpdatePodResources = startingResizedContainer(o.alloc, o.actions.Start, ps.live().actuated, podLevelResize)
		}
		var acts []Action
		for _, k := range o.actions.Kill {
			acts = append(acts,
				c.event(&o.opOutput, ps.pod(), k.Name, v1.EventTypeNormal, ReasonKilling, k.Message),
				StopContainer{Name: k.Name, ID: k.ID, Timeout: terminationGrace(ps.pod()), Reason: k.Reason})
		}
		o.phase = syncKilled
		return acts

	case syncKilled:
		c.logKills(ps.pod(), done, res)
		for i, a := range done {
			if stop, ok := a.(StopContainer); ok {
				if err := res[i].Err; err != nil {
					// SyncPod returns at the first container it cannot
					// kill: nothing is resized or started, and the next
					// sync tries again.
					return o.fail(fmt.Errorf("kill container %s: %w", stop.Name, err),
						c.writeStatus(ps, c.buildStatus(ps, o.alloc, o.states, nil)))
				}
				ps.dead = append(ps.dead, stop.ID)
			}
		}
		o.phase = syncResize
		return nil

	case syncResize:
		if !o.allowed || !o.actions.Resizing() {
			o.phase = syncStartNext
			return o.reconcile(c, ps)
		}
		// doPodResizeAction starts here: its duration is measured from
		// the time of the input that launches this batch (the last one's
		// results) to that of the results of its own last batch.
		o.resizeStart = c.now
		o.phase = syncResizeRead
		return o.one(ReadCgroup{Path: ps.podCgroup})

	case syncResizeRead:
		_, r, _ := resultOf[ReadCgroup](done, res)
		if err := r.Err; err != nil {
			// The kubelet logs the read's error and fails the resize with
			// a message without it (doPodResizeAction,
			// pkg/kubelet/kuberuntime/kuberuntime_manager.go), so the
			// condition's message, and whether another ResizeError is
			// due, do not depend on what the read said.
			c.podError(ps.pod(), err, "Unable to get pod cgroup memory config")
			o.resized(c, fmt.Errorf("unable to get pod cgroup memory config for pod %q", formatPod(o.alloc)))
			return nil
		}
		o.current = readingOf(r.Values, s.cfg.CgroupVersion)
		o.desired = cgconfig.PodConfig(o.alloc, s.cri.PodConfigOptions())
		o.phase = syncWrites
		if len(o.actions.UpdateMemory) > 0 || o.actions.UpdatePodResources {
			if mc, ok := s.planMemoryCheck(o.alloc, o.desired, o.current, o.actions, ps.containers); ok {
				o.check = mc
				o.phase = syncUsageRead
				// In the op's scratch buffer: the verdict reads the batch
				// before the writes take the buffer again.
				o.scratch = mc.appendReads(o.scratch[:0], ps.podCgroup)
				return o.scratch
			}
		}
		return nil

	case syncUsageRead:
		o.phase = syncWrites
		if err := o.check.verdict(o.alloc, done, res); err != nil {
			// doPodResizeAction's line (kuberuntime_manager.go).
			c.podError(ps.pod(), err, "Allocated pod resize is not currently feasible")
			o.resized(c, err)
		}
		return nil

	case syncWrites:
		o.phase = syncResized
		// Built in the op's scratch buffer: take copies the actions.
		o.rollbacks = o.rollbacks[:0]
		o.scratch = s.appendResizeWrites(o.scratch[:0], ResizeTarget{
			UID: o.uid, Pod: o.alloc, PodCgroup: ps.podCgroup, SandboxID: ps.sandboxID,
			Actions: o.actions, Current: o.current, Actuated: ps.live().actuated,
		}, o.desired, &o.rollbacks)
		return o.scratch

	case syncResized:
		c.logResizeWrites(ps.pod(), o.alloc, o.actions.UpdateMemory, done, res)
		var err error
		for i, a := range done {
			if res[i].Err == nil || !StopsOnFailure(a) {
				continue
			}
			err = res[i].Err
			if u, ok := a.(UpdatePodSandboxResources); ok {
				// From 1.36 the runtime's refusal rejects the resize
				// (doPodResizeAction's setPodCgroupConfig, around
				// updatePodSandboxResources' own wrapping, typo included:
				// pkg/kubelet/kuberuntime/kuberuntime_container.go).
				err = fmt.Errorf("failed to notify runtime for UpdatePodSandboxResources (resource=%s); resize rejected: updatePodSandboxResources failed for sanboxID %q: %w",
					u.Resource, u.Request.GetPodSandboxId(), err)
			}
			for _, rb := range o.rollbacks {
				if rb.index == i {
					// The pod cgroup write after a 1.36 sandbox update
					// failed: the runtime is told the previous totals
					// (best effort), then the resize ends with the
					// write's error.
					o.resizeErr = err
					o.phase = syncRolledBack
					return []Action{rb.action}
				}
			}
			break
		}
		o.resized(c, err)
		if err == nil {
			return o.reconcile(c, ps)
		}
		return nil

	case syncReconcile:
		return o.reconcileWrites(c, ps, done, res)

	case syncReconciled:
		o.reconciled(ps, done, res)
		return nil

	case syncRolledBack:
		err := o.resizeErr
		o.resizeErr = nil
		o.resized(c, err)
		return nil

	case syncStartNext:
		for o.startNext < len(o.actions.Start) {
			name := o.actions.Start[o.startNext]
			ctr := findContainer(o.alloc, name)
			if ctr == nil {
				o.errs = append(o.errs, fmt.Errorf("start container %s: not in the pod spec", name))
				o.startNext++
				continue
			}
			o.attempt = 0
			if rec, ok := ps.containers.lookup(name); ok {
				o.attempt = rec.attempt + 1
				if !slices.Contains(ps.dead, rec.id) {
					ps.dead = append(ps.dead, rec.id)
				}
			}
			o.phase = syncCreated
			return []Action{CreateContainer{
				Name: name, SandboxID: ps.sandboxID,
				Config:        s.cri.ContainerConfig(o.alloc, ctr, o.attempt),
				SandboxConfig: s.cri.SandboxConfig(o.alloc, ps.podCgroup),
			}}
		}
		o.phase = syncFinalRead
		return nil

	case syncCreated:
		name := o.actions.Start[o.startNext]
		_, r, _ := resultOf[CreateContainer](done, res)
		if err := r.Err; err != nil {
			o.emit(c.event(&o.opOutput, ps.pod(), name, v1.EventTypeWarning, ReasonFailed, fmt.Sprintf("Error: %v", err)))
			o.errs = append(o.errs, fmt.Errorf("create container %s: %w", name, err))
			o.startNext++
			o.phase = syncStartNext
			return nil
		}
		id := r.ID
		ps.containers.put(name, containerRecord{id: id, attempt: o.attempt})
		ctr := findContainer(o.alloc, name)
		o.phase = syncStarted
		return []Action{
			WriteActuatedContainer{UID: o.uid, Name: name, Resources: actuatedRequirements(o.alloc.Spec.Resources, ctr.Resources, c.s.profile.PodLevelResize())},
			c.event(&o.opOutput, ps.pod(), name, v1.EventTypeNormal, ReasonCreated, c.containerEventMessage("Created container: %s", "Container created", name)),
			StartContainer{Name: name, ID: id},
		}

	case syncStarted:
		name := o.actions.Start[o.startNext]
		for i, a := range done {
			err := res[i].Err
			switch a.(type) {
			case WriteActuatedContainer:
				if err != nil {
					o.errs = append(o.errs, fmt.Errorf("checkpoint actuated resources of %s: %w", name, err))
				}
			case StartContainer:
				if err != nil {
					o.emit(c.event(&o.opOutput, ps.pod(), name, v1.EventTypeWarning, ReasonFailed, fmt.Sprintf("Error: %v", err)))
					o.errs = append(o.errs, fmt.Errorf("start container %s: %w", name, err))
				} else {
					o.emit(c.event(&o.opOutput, ps.pod(), name, v1.EventTypeNormal, ReasonStarted, c.containerEventMessage("Started container %s", "Container started", name)))
				}
			}
		}
		o.startNext++
		o.phase = syncStartNext
		return nil

	case syncFinalRead:
		if o.resizeErr != nil {
			now := metav1.NewTime(c.now)
			// Every update of the condition emits ResizeError: a first
			// error, and another error while the reason stays Error
			// (SyncPod, pkg/kubelet/kubelet.go, on what
			// SetPodResizeInProgressCondition reports).
			updated := c.setInProgress(ps, v1.PodReasonError, o.resizeErr.Error(), ps.pod().Generation, now)
			if updated && s.profile.ResizeEvents() {
				generation := ps.conds.inProgress.ObservedGeneration
				o.emit(c.resizeEvent(&o.opOutput, ps.pod(), v1.EventTypeWarning, ReasonResizeError,
					messageOf(prefixError, o.alloc, generation, o.resizeErr.Error())))
			}
		}
		o.phase = syncFinalStatus
		o.scratch = o.appendStatusReads(o.scratch[:0], ps)
		return o.scratch

	case syncFinalStatus:
		if err := o.observe(ps, done, res); err != nil {
			return o.fail(err)
		}
		acts := o.scratch[:0]
		if o.allowed && !resizeInProgress(o.alloc, o.states, ps.live().actuated, podLevelResize) {
			// ResizeCompleted, as the version sends it.
			if generation, cleared := c.clearInProgress(ps); cleared && s.profile.ResizeCompletedEvent() {
				msg := messageOf(prefixCompleted, o.alloc, generation, "")
				msg.NoGeneration = !s.profile.ResizeCompletedGeneration()
				acts = append(acts, c.resizeEvent(&o.opOutput, ps.pod(), v1.EventTypeNormal, ReasonResizeCompleted, msg))
			}
		}
		status := c.buildStatus(ps, o.alloc, o.states, o.statuses)
		if isTerminalPhase(status.Phase) && s.profile.TerminalClearsResizeConditions() {
			// The pod has finished: SyncPod returns, and the pod worker
			// runs SyncTerminatingPod and SyncTerminatedPod at once, whose
			// generateAPIPodStatus(podIsTerminal=true) clears both
			// conditions in the status manager, without an event
			// (determinePodResizeStatus, pkg/kubelet/kubelet_pods.go), and
			// writes the status without them. The pod is not synced again
			// (Core.next).
			c.clearInProgress(ps)
			c.clearPending(ps)
			status.Conditions = nil
		}
		if !apiequality.Semantic.DeepEqual(&ps.pod().Status, status) {
			// The status manager ignores a status equal to the one it
			// has (updateStatusInternal, "Ignoring same status for pod",
			// pkg/kubelet/status/status_manager.go).
			acts = append(acts, c.writeStatus(ps, status))
		}
		o.scratch = acts
		if o.resizeErr != nil && len(o.errs) == 1 {
			c.logSyncError(ps.pod(), o.resizeErr)
		}
		o.phase = syncDone
		return acts
	}
	panic(fmt.Sprintf("core: sync in unknown phase %d", o.phase))
}

// resized records the outcome of the resize step (doPodResizeAction, whose
// duration it observes) and moves on to the starts: SyncPod goes on
// starting containers after a failed resize.
func (o *syncOp) resized(c *Core, err error) {
	c.observeResize(o.resizeStart, err == nil)
	if err != nil {
		o.resizeErr = err
		o.errs = append(o.errs, err)
	}
	o.phase = syncStartNext
}

// cgroupFailed ends a sync whose pod cgroup could not be made.
func (o *syncOp) cgroupFailed(c *Core, ps *podState, err error) []Action {
	return o.fail(err,
		c.event(&o.opOutput, ps.pod(), "", v1.EventTypeWarning, ReasonFailed, err.Error()),
		c.writeStatus(ps, c.buildStatus(ps, o.alloc, nil, nil)))
}

// appendStatusReads appends to acts a status read of each container the
// pod has, in name order (the records are sorted by name).
func (o *syncOp) appendStatusReads(acts []Action, ps *podState) []Action {
	for _, rec := range ps.containers {
		acts = append(acts, ReadContainerStatus{Name: rec.name, ID: rec.id})
	}
	return acts
}

// one returns a batch of the one action a, built in the op's scratch
// buffer (take copies it).
func (o *syncOp) one(a Action) []Action {
	o.scratch = append(o.scratch[:0], a)
	return o.scratch
}

// observe takes the runtime's view of the pod's containers, in maps
// emptied first, from the status reads performed; a failed read is the
// sync's error.
func (o *syncOp) observe(ps *podState, done []Action, res []Result) error {
	if o.states == nil {
		o.states, o.statuses = map[string]ContainerState{}, map[string]*runtimeapi.ContainerStatus{}
	}
	clear(o.states)
	clear(o.statuses)
	for i, a := range done {
		read, ok := a.(ReadContainerStatus)
		if !ok {
			continue
		}
		if err := res[i].Err; err != nil {
			return fmt.Errorf("container status %s: %w", read.Name, err)
		}
		st := res[i].Status
		rec, _ := ps.containers.lookup(read.Name)
		o.states[read.Name] = ContainerState{
			Name:     read.Name,
			ID:       read.ID,
			Running:  st.GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING,
			Exited:   st.GetState() == runtimeapi.ContainerState_CONTAINER_EXITED,
			ExitCode: st.GetExitCode(),
			Attempt:  rec.attempt,
		}
		o.statuses[read.Name] = st
	}
	return nil
}

// resizeAllowed is IsInPlacePodVerticalScalingAllowed for actuation: the
// gate, a linux node and, up to 1.35, not a static pod.
func (c *Core) resizeAllowed(pod *v1.Pod) bool {
	return c.s.profile.Gate(profile.GateInPlacePodVerticalScaling) && c.s.cfg.OS == "linux" &&
		(!c.s.profile.StaticPodResizeInfeasible() || !isStaticPod(pod))
}

// containerEventMessage is the message of a Created or Started event: with
// the container's name before 1.35, without from 1.35.
func (c *Core) containerEventMessage(named, unnamed, name string) string {
	if c.s.profile.ContainerNameInLifecycleEvents() {
		return fmt.Sprintf(named, name)
	}
	return unnamed
}

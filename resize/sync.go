package resize

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/allocation"
	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/qos"
)

// v1UnlimitedMemory is what cgroup v1 reads back for an unlimited memory
// limit. The kubelet compares raw values, so on v1 adding a pod memory
// limit counts as a decrease (written after the containers) while on v2,
// where "max" reads as -1, it counts as an increase.
const v1UnlimitedMemory int64 = 9223372036854771712

// formatPod is the kubelet's format.Pod: name_namespace(uid).
func formatPod(pod *v1.Pod) string {
	return fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
}

// resizeAllowed is IsInPlacePodVerticalScalingAllowed for actuation.
func (n *Node) resizeAllowed(pod *v1.Pod) bool {
	return n.Gate(GateInPlacePodVerticalScaling) && n.cfg.OS == "linux" && !isStaticPod(pod)
}

// containerStates asks the runtime for the state of each container the
// pod has.
func (n *Node) containerStates(ctx context.Context, ps *podState) (map[string]ContainerState, map[string]*runtimeapi.ContainerStatus, error) {
	states := map[string]ContainerState{}
	statuses := map[string]*runtimeapi.ContainerStatus{}
	for _, name := range slices.Sorted(maps.Keys(ps.containers)) {
		rec := ps.containers[name]
		resp, err := n.rt.ContainerStatus(ctx, rec.id, false)
		if err != nil {
			return nil, nil, fmt.Errorf("container status %s: %w", name, err)
		}
		st := resp.GetStatus()
		states[name] = ContainerState{
			Name:     name,
			ID:       rec.id,
			Running:  st.GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING,
			Exited:   st.GetState() == runtimeapi.ContainerState_CONTAINER_EXITED,
			ExitCode: st.GetExitCode(),
			Attempt:  rec.attempt,
		}
		statuses[name] = st
	}
	return states, statuses, nil
}

// syncPod is the kubelet's SyncPod for one admitted pod: make sure the pod
// cgroup and sandbox exist, plan (planPod), kill what must restart, resize
// in place (doPodResizeAction), start what must start, record the resize
// result, check whether the resize completed, and write the pod status.
func (n *Node) syncPod(ctx context.Context, uid types.UID) {
	ps, ok := n.podState(uid)
	if !ok {
		return
	}
	ps.mu.Lock()
	err := n.syncPodLocked(ctx, ps)
	ps.mu.Unlock()
	next := n.clock.Now().Add(ResyncInterval)
	if err != nil {
		next = n.clock.Now().Add(BackOffPeriod)
	}
	n.mu.Lock()
	if _, ok := n.pods[uid]; ok {
		n.resync[uid] = next
	}
	n.mu.Unlock()
}

func (n *Node) syncPodLocked(ctx context.Context, ps *podState) error {
	pod, err := n.cluster.GetPod(ps.namespace, ps.name)
	if err != nil || pod.UID != ps.uid || !ps.admitted {
		return nil
	}
	n.allocMu.Lock()
	allocatedPod, _ := n.overlay(pod)
	n.allocMu.Unlock()

	if err := n.ensurePodCgroup(ps, allocatedPod); err != nil {
		n.event(pod, v1.EventTypeWarning, ReasonFailed, err.Error())
		n.writeStatus(ps, pod, allocatedPod, nil, nil)
		return err
	}
	if ps.sandboxID == "" {
		id, err := n.rt.RunPodSandbox(ctx, n.sandboxConfig(allocatedPod, ps.podCgroup), "")
		if err != nil {
			n.event(pod, v1.EventTypeWarning, "FailedCreatePodSandBox", fmt.Sprintf("Failed to create pod sandbox: %v", err))
			n.writeStatus(ps, pod, allocatedPod, nil, nil)
			return err
		}
		n.mu.Lock()
		ps.sandboxID = id
		n.mu.Unlock()
	}
	states, _, err := n.containerStates(ctx, ps)
	if err != nil {
		return err
	}
	allowed := n.resizeAllowed(pod)
	if allowed && n.resizeInProgress(ps.uid, allocatedPod, states) {
		// CheckPodResizeInProgress runs before the runtime's sync: after a
		// kubelet restart it sets the condition again (the status manager
		// keeps conditions in memory only); otherwise it keeps it as it is.
		n.withConds(ps.uid, func(c *resizeConditions) { c.setInProgress("", "", allocatedPod.Generation, n.now()) })
	}
	actions := planPod(allocatedPod, states, n.actuatedLookup(ps.uid), allowed)
	n.addPodLevelAction(ps.uid, allocatedPod, &actions)

	var syncErrs []error
	for _, k := range actions.Kill {
		n.event(pod, v1.EventTypeNormal, ReasonKilling, k.Message)
		if err := n.rt.StopContainer(ctx, k.ID, terminationGrace(pod)); err != nil {
			// SyncPod returns at the first container it cannot kill:
			// nothing is resized or started, and the next sync tries again.
			n.writeStatus(ps, pod, allocatedPod, states, nil)
			return fmt.Errorf("kill container %s: %w", k.Name, err)
		}
		ps.dead = append(ps.dead, k.ID)
	}
	var resizeErr error
	if allowed && actions.Resizing() {
		resizeErr = n.doPodResizeAction(ctx, ps, allocatedPod, &actions)
		if resizeErr != nil {
			syncErrs = append(syncErrs, resizeErr)
		}
	}
	for _, name := range actions.Start {
		if err := n.startContainer(ctx, ps, pod, allocatedPod, name); err != nil {
			syncErrs = append(syncErrs, err)
		}
	}
	if resizeErr != nil {
		var newly bool
		var generation int64
		n.withConds(ps.uid, func(c *resizeConditions) {
			newly = c.setInProgress(v1.PodReasonError, resizeErr.Error(), pod.Generation, n.now())
			generation = c.inProgress.ObservedGeneration
		})
		if newly && n.resizeEvents() {
			n.event(pod, v1.EventTypeWarning, ReasonResizeError, ResizeErrorMessage(allocatedPod, generation, resizeErr.Error()))
		}
	}

	states, statuses, err := n.containerStates(ctx, ps)
	if err != nil {
		syncErrs = append(syncErrs, err)
		return errors.Join(syncErrs...)
	}
	completed := false
	if allowed {
		if !n.resizeInProgress(ps.uid, allocatedPod, states) {
			var generation int64
			var cleared bool
			n.withConds(ps.uid, func(c *resizeConditions) { generation, cleared = c.clearInProgress() })
			if cleared {
				completed = true
				n.emitCompleted(pod, allocatedPod, generation)
			}
		}
	}
	oldStatus := pod.Status
	newStatus := n.writeStatus(ps, pod, allocatedPod, states, statuses)
	if completed && statusRequestsDecreased(&oldStatus, newStatus) {
		n.retryPendingResizes(allocation.TriggerPodResized)
	}
	if !isTerminal(&v1.Pod{Status: oldStatus}) && (newStatus.Phase == v1.PodSucceeded || newStatus.Phase == v1.PodFailed) {
		// A finished pod frees its resources. Only 1.36 and later retry
		// pending resizes for it (pod_terminated); 1.35 waits for the
		// periodic retry.
		if n.cfg.Profile == Profile136 {
			n.retryPendingResizes(allocation.TriggerPodTerminated)
		}
	}
	return errors.Join(syncErrs...)
}

// emitCompleted sends ResizeCompleted; the 1.34 message has no generation
// (podResizeCompletionMsg), 1.33 sent no resize events at all.
func (n *Node) emitCompleted(pod, allocatedPod *v1.Pod, generation int64) {
	switch n.cfg.Profile {
	case Profile133:
	case Profile134:
		msg := ResizeCompletedMessage(allocatedPod, generation)
		n.event(pod, v1.EventTypeNormal, ReasonResizeCompleted, dropGeneration(msg))
	default:
		n.event(pod, v1.EventTypeNormal, ReasonResizeCompleted, ResizeCompletedMessage(allocatedPod, generation))
	}
}

func (n *Node) actuatedLookup(uid types.UID) actuatedLookup {
	rec, _ := n.actuated.Get(uid)
	return func(name string) (v1.ResourceRequirements, bool) {
		r, ok := rec.ContainerResources[name]
		return r, ok
	}
}

// addPodLevelAction sets UpdatePodResources when pod-level resources are
// resizable and their allocation differs from what was actuated.
func (n *Node) addPodLevelAction(uid types.UID, allocatedPod *v1.Pod, a *PodActions) {
	if !n.Gate(GateInPlacePodLevelResourcesVerticalScaling) || allocatedPod.Spec.Resources == nil {
		return
	}
	rec, _ := n.actuated.Get(uid)
	var actual v1.ResourceRequirements
	if rec.PodLevelResources != nil {
		actual = *rec.PodLevelResources
	}
	if valuesOf(*allocatedPod.Spec.Resources) != valuesOf(actual) {
		a.UpdatePodResources = true
	}
}

// resizeInProgress is isPodResizeInProgress: a running resizable container
// whose allocated cpu or memory differs from its actuated record, or
// pod-level resources not yet actuated.
func (n *Node) resizeInProgress(uid types.UID, allocatedPod *v1.Pod, states map[string]ContainerState) bool {
	rec, _ := n.actuated.Get(uid)
	for _, c := range allContainers(allocatedPod) {
		st, ok := states[c.Name]
		if !ok || !st.Running {
			continue
		}
		act := rec.ContainerResources[c.Name]
		for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
			if !quantityEqual(c.Resources.Requests, act.Requests, name) || !quantityEqual(c.Resources.Limits, act.Limits, name) {
				return true
			}
		}
	}
	if n.Gate(GateInPlacePodLevelResourcesVerticalScaling) && allocatedPod.Spec.Resources != nil {
		var actual v1.ResourceRequirements
		if rec.PodLevelResources != nil {
			actual = *rec.PodLevelResources
		}
		return valuesOf(*allocatedPod.Spec.Resources) != valuesOf(actual)
	}
	return false
}

func quantityEqual(a, b v1.ResourceList, name v1.ResourceName) bool {
	qa, qb := a[name], b[name]
	return qa.Equal(qb)
}

// statusRequestsDecreased reports whether the pod's requests, as its
// container statuses show them, went down: only then does a completed
// resize retry the pending ones (detail 2).
func statusRequestsDecreased(before, after *v1.PodStatus) bool {
	if after == nil {
		return false
	}
	sum := func(s *v1.PodStatus) (cpu, mem int64) {
		for _, cs := range append(append([]v1.ContainerStatus(nil), s.InitContainerStatuses...), s.ContainerStatuses...) {
			if cs.Resources == nil {
				continue
			}
			cpu += cs.Resources.Requests.Cpu().MilliValue()
			mem += cs.Resources.Requests.Memory().Value()
		}
		return
	}
	c0, m0 := sum(before)
	c1, m1 := sum(after)
	return c1 < c0 || m1 < m0
}

// ensurePodCgroup creates the pod cgroup with its configuration if it does
// not exist (the kubelet's EnsureExists).
func (n *Node) ensurePodCgroup(ps *podState, allocatedPod *v1.Pod) error {
	if n.cg.Exists(ps.podCgroup) {
		return nil
	}
	if err := n.cg.Create(ps.podCgroup); err != nil {
		return fmt.Errorf("create pod cgroup %s: %w", ps.podCgroup, err)
	}
	rc := n.podConfig(allocatedPod)
	if _, err := n.cg.Set(ps.podCgroup, rc.Values(n.cfg.CgroupVersion, cgconfig.LinearWeight)); err != nil {
		return fmt.Errorf("configure pod cgroup %s: %w", ps.podCgroup, err)
	}
	return nil
}

func (n *Node) podConfig(allocatedPod *v1.Pod) cgconfig.ResourceConfig {
	return cgconfig.PodConfig(allocatedPod, cgconfig.PodConfigOptions{
		EnforceCPULimits:  n.enforceCPULimits,
		CPUPeriod:         n.cpuPeriod,
		PodLevelResources: n.Gate(GatePodLevelResources),
	})
}

// startContainer creates and starts one container of the allocated pod,
// with the next attempt number, and records what was actuated.
func (n *Node) startContainer(ctx context.Context, ps *podState, pod, allocatedPod *v1.Pod, name string) error {
	var c *v1.Container
	for _, cc := range allContainers(allocatedPod) {
		if cc.Name == name {
			c = cc
		}
	}
	if c == nil {
		return fmt.Errorf("start container %s: not in the pod spec", name)
	}
	var attempt uint32
	if rec, ok := ps.containers[name]; ok {
		attempt = rec.attempt + 1
		if !containsID(ps.dead, rec.id) {
			ps.dead = append(ps.dead, rec.id)
		}
	}
	id, err := n.rt.CreateContainer(ctx, ps.sandboxID, n.containerConfig(allocatedPod, c, attempt), n.sandboxConfig(allocatedPod, ps.podCgroup))
	if err != nil {
		n.event(pod, v1.EventTypeWarning, ReasonFailed, fmt.Sprintf("Error: %v", err))
		return fmt.Errorf("create container %s: %w", name, err)
	}
	n.mu.Lock()
	ps.containers[name] = &containerRecord{id: id, attempt: attempt}
	n.mu.Unlock()
	if err := n.actuated.SetContainer(ps.uid, name, *c.Resources.DeepCopy()); err != nil {
		return fmt.Errorf("checkpoint actuated resources of %s: %w", name, err)
	}
	n.event(pod, v1.EventTypeNormal, ReasonCreated, n.containerEventMessage("Created container: %s", "Container created", name))
	if err := n.rt.StartContainer(ctx, id); err != nil {
		n.event(pod, v1.EventTypeWarning, ReasonFailed, fmt.Sprintf("Error: %v", err))
		return fmt.Errorf("start container %s: %w", name, err)
	}
	n.event(pod, v1.EventTypeNormal, ReasonStarted, n.containerEventMessage("Started container %s", "Container started", name))
	return nil
}

// containerEventMessage is the message of a Created or Started event. From
// 1.35 it no longer names the container, which the event's involved object
// already does (kubernetes/kubernetes#134043); before, it did.
func (n *Node) containerEventMessage(before135, from135, name string) string {
	if n.cfg.Profile == Profile133 || n.cfg.Profile == Profile134 {
		return fmt.Sprintf(before135, name)
	}
	return from135
}

func containsID(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// podCgroupReading is the pod cgroup's current configuration in the
// kubelet's units, as GetPodCgroupConfig reads it back.
type podCgroupReading struct {
	memory int64 // bytes; -1 for "max" on v2, the huge v1 value on v1
	quota  int64 // -1 for no limit
	period uint64
	shares uint64 // on v2 read back from cpu.weight through the lossy inverse
}

func (n *Node) readPodCgroup(pod *v1.Pod, path string) (podCgroupReading, error) {
	v, err := n.cg.Get(path)
	if err != nil {
		return podCgroupReading{}, fmt.Errorf("unable to get pod cgroup memory config for pod %q: %w", formatPod(pod), err)
	}
	r := podCgroupReading{memory: cgroup.Unlimited, quota: cgroup.Unlimited, period: cgconfig.QuotaPeriod}
	if v.MemoryLimit != nil {
		r.memory = *v.MemoryLimit
		if r.memory == cgroup.Unlimited && n.cfg.CgroupVersion == cgroup.V1 {
			r.memory = v1UnlimitedMemory
		}
	}
	if v.CPUQuota != nil {
		r.quota = *v.CPUQuota
	}
	if v.CPUPeriod != nil {
		r.period = *v.CPUPeriod
	}
	if n.cfg.CgroupVersion == cgroup.V2 {
		if v.CPUWeight != nil {
			r.shares = cgconfig.WeightToShares(*v.CPUWeight)
		}
	} else if v.CPUShares != nil {
		r.shares = *v.CPUShares
	}
	return r, nil
}

// doPodResizeAction carries out an in-place resize (§4.3): read the pod
// cgroup, check memory usage before any limit goes down, then per resource
// (memory, then cpu) grow the pod cgroup before the containers and shrink
// it after them, limits before requests on the way up and after them on
// the way down, telling the runtime the new pod totals after each pod
// cgroup write. The first error aborts; the next sync retries.
func (n *Node) doPodResizeAction(ctx context.Context, ps *podState, allocatedPod *v1.Pod, a *PodActions) error {
	desired := n.podConfig(allocatedPod)
	cur, err := n.readPodCgroup(allocatedPod, ps.podCgroup)
	if err != nil {
		return err
	}
	current := cgconfig.ResourceConfig{Memory: &cur.memory, CPUQuota: &cur.quota, CPUPeriod: &cur.period, CPUShares: &cur.shares}
	memoryPass := len(a.UpdateMemory) > 0 || a.UpdatePodResources
	cpuPass := len(a.UpdateCPU) > 0 || a.UpdatePodResources
	if memoryPass {
		if err := n.validateMemoryResize(ctx, ps, allocatedPod, cur, desired, a); err != nil {
			return err
		}
	}

	setPodCgroup := func(name v1.ResourceName, limit bool) error {
		var rc cgconfig.ResourceConfig
		switch {
		case name == v1.ResourceCPU && limit:
			rc.CPUQuota, rc.CPUPeriod = desired.CPUQuota, desired.CPUPeriod
		case name == v1.ResourceCPU:
			rc.CPUShares = desired.CPUShares
		case limit:
			rc.Memory = desired.Memory
		default:
			return nil // memory requests are not written to cgroups
		}
		if _, err := n.cg.Set(ps.podCgroup, rc.Values(n.cfg.CgroupVersion, cgconfig.LinearWeight)); err != nil {
			return err
		}
		if rc.CPUQuota != nil {
			current.CPUQuota, current.CPUPeriod = rc.CPUQuota, rc.CPUPeriod
		}
		if rc.CPUShares != nil {
			current.CPUShares = rc.CPUShares
		}
		if rc.Memory != nil {
			current.Memory = rc.Memory
		}
		// Best effort: the runtime is told, and its answer does not matter.
		_, _ = n.rt.UpdatePodSandboxResources(ctx, n.sandboxResourcesRequest(ps.sandboxID, allocatedPod, current))
		return nil
	}
	resizeContainers := func(name v1.ResourceName, curLimit, newLimit, curRequest, newRequest int64, updates []ContainerUpdate) error {
		if newLimit > curLimit {
			if err := setPodCgroup(name, true); err != nil {
				return err
			}
		}
		if newRequest > curRequest {
			if err := setPodCgroup(name, false); err != nil {
				return err
			}
		}
		if err := n.updateContainers(ctx, ps, allocatedPod, name, updates); err != nil {
			return err
		}
		if newRequest < curRequest {
			if err := setPodCgroup(name, false); err != nil {
				return err
			}
		}
		if newLimit < curLimit {
			if err := setPodCgroup(name, true); err != nil {
				return err
			}
		}
		return nil
	}
	if memoryPass {
		if desired.Memory == nil {
			// Limits are never removed: no pod limit keeps the current one.
			desired.Memory = &cur.memory
		}
		if err := resizeContainers(v1.ResourceMemory, cur.memory, *desired.Memory, 0, 0, a.UpdateMemory); err != nil {
			return err
		}
	}
	if cpuPass {
		if desired.CPUQuota == nil {
			desired.CPUQuota = &cur.quota
		}
		if err := resizeContainers(v1.ResourceCPU, cur.quota, *desired.CPUQuota, int64(cur.shares), int64(*desired.CPUShares), a.UpdateCPU); err != nil {
			return err
		}
	}
	if n.Gate(GateInPlacePodLevelResourcesVerticalScaling) && allocatedPod.Spec.Resources != nil {
		rec, _ := n.actuated.Get(ps.uid)
		rec.PodLevelResources = allocatedPod.Spec.Resources.DeepCopy()
		if rec.ContainerResources == nil {
			rec.ContainerResources = map[string]v1.ResourceRequirements{}
		}
		if err := n.actuated.Set(ps.uid, rec); err != nil {
			return err
		}
	}
	return nil
}

// validateMemoryResize is the usage check before a memory limit goes down
// (§3.2). From 1.34 it checks the pod and each container whose limit is
// added or lowered; 1.33 checks the pod only, with its own message.
func (n *Node) validateMemoryResize(ctx context.Context, ps *podState, pod *v1.Pod, cur podCgroupReading, desired cgconfig.ResourceConfig, a *PodActions) error {
	if n.cfg.Profile == Profile133 {
		if desired.Memory == nil {
			return nil
		}
		usage, err := n.cg.MemoryUsage(ps.podCgroup)
		if err != nil {
			return fmt.Errorf("unable to read memory usage for pod %q", formatPod(pod))
		}
		if usage >= *desired.Memory {
			return fmt.Errorf("aborting attempt to set pod memory limit less than current memory usage for pod %s", pod.Name)
		}
		return nil
	}
	podDecreasing := desired.Memory != nil && *desired.Memory < cur.memory
	decreasing := map[string]int64{}
	for _, u := range a.UpdateMemory {
		if u.desired.memoryLimit != 0 && (u.current.memoryLimit == 0 || u.desired.memoryLimit < u.current.memoryLimit) {
			decreasing[u.Name] = u.desired.memoryLimit
		}
	}
	if !podDecreasing && len(decreasing) == 0 {
		return nil
	}
	podUsage, err := n.cg.MemoryUsage(ps.podCgroup)
	if err != nil {
		return fmt.Errorf("unable to read memory usage for pod %q", formatPod(pod))
	}
	var errs []string
	if podDecreasing && podUsage >= *desired.Memory {
		errs = append(errs, fmt.Sprintf("attempting to set pod memory limit (%d) below current usage (%d)", *desired.Memory, podUsage))
	}
	for _, c := range allContainers(pod) {
		limit, ok := decreasing[c.Name]
		if !ok {
			continue
		}
		rec := ps.containers[c.Name]
		var stats *runtimeapi.ContainerStats
		if rec != nil {
			stats, err = n.rt.ContainerStats(ctx, rec.id)
		}
		if rec == nil || err != nil || stats.GetMemory().GetUsageBytes() == nil {
			errs = append(errs, fmt.Sprintf("missing container %q memory usage", c.Name))
			continue
		}
		if int64(stats.GetMemory().GetUsageBytes().GetValue()) >= limit {
			// The kubelet prints the pod's usage here, not the container's.
			errs = append(errs, fmt.Sprintf("attempting to set container %q memory limit (%d) below current usage (%d)", c.Name, limit, podUsage))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("cannot decrease memory limits: %s", aggregate(errs))
}

// aggregate formats errors as apimachinery's utilerrors.NewAggregate does:
// one error as itself, several as "[a, b]".
func aggregate(errs []string) string {
	if len(errs) == 1 {
		return errs[0]
	}
	s := "["
	for i, e := range errs {
		if i > 0 {
			s += ", "
		}
		s += e
	}
	return s + "]"
}

// updateContainers is updatePodContainerResources: for each queued
// container, the changed resource at its desired values and the other at
// its current (actuated) values, sent with UpdateContainerResources; after
// each success the actuated record and the shared current values move.
func (n *Node) updateContainers(ctx context.Context, ps *podState, pod *v1.Pod, name v1.ResourceName, updates []ContainerUpdate) error {
	for _, u := range updates {
		var c *v1.Container
		for _, cc := range allContainers(pod) {
			if cc.Name == u.Name {
				c = cc.DeepCopy()
			}
		}
		if c == nil {
			continue
		}
		cpuLimit, cpuRequest := u.current.cpuLimit, u.current.cpuRequest
		memLimit, memRequest := u.current.memoryLimit, u.current.memoryRequest
		if name == v1.ResourceMemory {
			memLimit, memRequest = u.desired.memoryLimit, u.desired.memoryRequest
		} else {
			cpuLimit, cpuRequest = u.desired.cpuLimit, u.desired.cpuRequest
		}
		c.Resources.Limits = v1.ResourceList{
			v1.ResourceCPU:    *resource.NewMilliQuantity(cpuLimit, resource.DecimalSI),
			v1.ResourceMemory: *resource.NewQuantity(memLimit, resource.BinarySI),
		}
		c.Resources.Requests = v1.ResourceList{
			v1.ResourceCPU:    *resource.NewMilliQuantity(cpuRequest, resource.DecimalSI),
			v1.ResourceMemory: *resource.NewQuantity(memRequest, resource.BinarySI),
		}
		res := &runtimeapi.ContainerResources{Linux: n.containerResources(pod, c)}
		if err := n.rt.UpdateContainerResources(ctx, u.ID, res); err != nil {
			return err
		}
		if err := n.actuated.SetContainer(ps.uid, c.Name, c.Resources); err != nil {
			return err
		}
		if name == v1.ResourceMemory {
			u.current.memoryLimit, u.current.memoryRequest = memLimit, memRequest
		} else {
			u.current.cpuLimit, u.current.cpuRequest = cpuLimit, cpuRequest
		}
	}
	return nil
}

// writeStatus generates the pod's API status from the allocation, the
// runtime's view and the resize conditions, and writes it to the cluster.
func (n *Node) writeStatus(ps *podState, pod, allocatedPod *v1.Pod, states map[string]ContainerState, statuses map[string]*runtimeapi.ContainerStatus) *v1.PodStatus {
	status := pod.Status.DeepCopy()
	status.ObservedGeneration = pod.Generation
	status.Conditions = n.conditionsOf(ps.uid)
	if status.StartTime == nil {
		t := n.now()
		status.StartTime = &t
	}
	alloc, _ := n.allocated.Get(ps.uid)
	allocOf := func(c *v1.Container) v1.ResourceRequirements {
		if r, ok := alloc.ContainerResources[c.Name]; ok {
			return r
		}
		return c.Resources
	}
	build := func(c *v1.Container) v1.ContainerStatus {
		cs := v1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: c.Image}
		st, ok := states[c.Name]
		rt := statuses[c.Name]
		if ok {
			cs.ContainerID = "containerd://" + st.ID
			cs.RestartCount = int32(st.Attempt)
		}
		switch {
		case ok && st.Running:
			started := metav1.NewTime(timeFromNanos(rt.GetStartedAt()))
			cs.State.Running = &v1.ContainerStateRunning{StartedAt: started}
			cs.Ready = true
		case ok && st.Exited:
			cs.State.Terminated = &v1.ContainerStateTerminated{ExitCode: st.ExitCode, Reason: rt.GetReason(), ContainerID: cs.ContainerID}
		default:
			cs.State.Waiting = &v1.ContainerStateWaiting{Reason: "ContainerCreating"}
		}
		t := cs.State.Running != nil
		cs.Started = &t
		var prev *v1.ContainerStatus
		if p, ok := ps.lastStatus[c.Name]; ok {
			prev = &p
		}
		cs.Resources = statusResources(allocOf(c), ok && st.Running, rt.GetResources(), prev, cs.ContainerID)
		return cs
	}
	status.InitContainerStatuses = nil
	status.ContainerStatuses = nil
	running := 0
	for i := range allocatedPod.Spec.InitContainers {
		c := &allocatedPod.Spec.InitContainers[i]
		if qos.IsSidecar(c) {
			status.InitContainerStatuses = append(status.InitContainerStatuses, build(c))
			continue
		}
		// Non-sidecar init containers are not run by the simulation: they
		// are reported as completed (resizelet limitation).
		done := true
		status.InitContainerStatuses = append(status.InitContainerStatuses, v1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: c.Image, Started: new(bool), Ready: done,
			State:     v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}},
			Resources: c.Resources.DeepCopy(),
		})
	}
	for i := range allocatedPod.Spec.Containers {
		cs := build(&allocatedPod.Spec.Containers[i])
		if cs.State.Running != nil {
			running++
		}
		status.ContainerStatuses = append(status.ContainerStatuses, cs)
	}
	status.Phase = podPhase(allocatedPod, status.ContainerStatuses, running)
	for _, cs := range append(append([]v1.ContainerStatus(nil), status.InitContainerStatuses...), status.ContainerStatuses...) {
		ps.lastStatus[cs.Name] = cs
	}
	_ = n.cluster.UpdatePodStatus(ps.namespace, ps.name, ps.uid, *status)
	return status
}

func timeFromNanos(ns int64) time.Time {
	if ns == 0 {
		return time.Unix(0, 0).UTC()
	}
	return time.Unix(0, ns).UTC()
}

// podPhase is the pod's phase from its regular containers: Running while
// any runs; Succeeded or Failed once all have exited and the restart policy
// will not start them again; Pending otherwise.
func podPhase(pod *v1.Pod, statuses []v1.ContainerStatus, running int) v1.PodPhase {
	if running > 0 {
		return v1.PodRunning
	}
	if len(statuses) == 0 {
		return v1.PodPending
	}
	failed := false
	for _, cs := range statuses {
		t := cs.State.Terminated
		if t == nil {
			return v1.PodPending
		}
		if shouldRestart(pod.Spec.RestartPolicy, ContainerState{Exited: true, ExitCode: t.ExitCode}) {
			return v1.PodRunning // about to be restarted
		}
		if t.ExitCode != 0 {
			failed = true
		}
	}
	if failed {
		return v1.PodFailed
	}
	return v1.PodSucceeded
}

// isTerminal reports whether a pod has finished: it no longer counts as
// an active pod for admission.
func isTerminal(pod *v1.Pod) bool {
	return pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed
}

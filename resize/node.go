package resize

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/allocation"
	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/qos"
)

// ErrPodNotFound is returned for a pod name the cluster or node does not know.
var ErrPodNotFound = errors.New("pod not found")

// ErrNotFakeClock is returned by Advance on a node whose clock is not a
// *FakeClock: real time cannot be moved.
var ErrNotFakeClock = errors.New("the node's clock is not a FakeClock")

// Timer periods of the pod workers (pkg/kubelet/pod_workers.go): a pod is
// synced again a minute after a successful sync and ten seconds after a
// failed one. The kubelet adds jitter; resizelet does not, so that runs
// repeat exactly.
const (
	ResyncInterval = time.Minute
	BackOffPeriod  = 10 * time.Second
)

// maxSyncRounds bounds one run until quiet; a node that is still busy after
// that many pod syncs has a loop, which is a bug, not a state.
const maxSyncRounds = 10000

// Node is a kubelet's resize path on one node: admission of pods and
// resizes, the pending-resize queue and its timers, actuation through the
// cgroup manager and the runtime, and pod status and events, written to its
// Cluster.
//
// Decisions are pure functions (allocation.AdmitResize, planPod,
// statusResources, cgconfig.PodConfig); Node is the driver that performs what
// they decide. It is safe for concurrent use: a pod's sync holds only that
// pod's lock (as a pod worker would), the allocation mutex guards admission
// decisions and the pending queue, and no node-wide lock is held across a
// runtime call or a cgroup write.
type Node struct {
	cfg              NodeConfig
	cluster          *Cluster
	cg               cgroup.Manager
	rt               cri.Runtime
	clock            Clock
	allocated        *allocation.Store
	actuated         *allocation.Store
	admitCfg         allocation.NodeConfig
	cpuPeriod        uint64
	enforceCPULimits bool

	// allocMu is the allocation manager's mutex: admission decisions and
	// the pending-resize queue. Checkpoint writes happen under it, runtime
	// calls and cgroup writes never do.
	allocMu sync.Mutex
	queue   *allocation.Queue
	retry   *allocation.RetryTimer

	// mu guards the maps below, for short critical sections only.
	mu     sync.Mutex
	pods   map[types.UID]*podState
	order  []types.UID
	conds  map[types.UID]*resizeConditions
	dirty  map[types.UID]bool
	resync map[types.UID]time.Time
}

// podState is what the kubelet keeps in memory of one pod.
//
// The pod's sync holds mu for its whole run. The fields that Node.Pod
// reports (admitted, podCgroup, sandboxID, containers) are written with
// both mu and the node's lock held and read by Pod with the node's lock
// only, so that a decorator under the node (a fault injector resolving
// names, say) can ask the node about a pod in the middle of its sync.
type podState struct {
	// mu is the pod worker: one sync of the pod at a time.
	mu         sync.Mutex
	uid        types.UID
	namespace  string
	name       string
	admitted   bool
	podCgroup  string
	sandboxID  string
	containers map[string]*containerRecord
	dead       []string // stopped containers left for garbage collection
	lastStatus map[string]v1.ContainerStatus
}

type containerRecord struct {
	id      string
	attempt uint32
}

// WithDefaults returns cfg with every unset field at the kubelet's default.
func (cfg NodeConfig) WithDefaults() NodeConfig {
	if cfg.Name == "" {
		cfg.Name = "node-1"
	}
	if cfg.Capacity == nil {
		cfg.Capacity = v1.ResourceList{
			v1.ResourceCPU:    resource.MustParse("16"),
			v1.ResourceMemory: resource.MustParse("64Gi"),
			v1.ResourcePods:   resource.MustParse("110"),
		}
	}
	if cfg.Allocatable == nil {
		cfg.Allocatable = cfg.Capacity.DeepCopy()
	}
	if cfg.OS == "" {
		cfg.OS = "linux"
	}
	if cfg.CgroupVersion == 0 {
		cfg.CgroupVersion = cgroup.V2
	}
	if cfg.CgroupDriver == "" {
		cfg.CgroupDriver = cgroup.DriverCgroupfs
	}
	if cfg.CPUManagerPolicy == "" {
		cfg.CPUManagerPolicy = "none"
	}
	if cfg.MemoryManagerPolicy == "" {
		cfg.MemoryManagerPolicy = "None"
	}
	if cfg.SwapBehavior == "" {
		cfg.SwapBehavior = "NoSwap"
	}
	if cfg.CPUCFSQuota == nil {
		t := true
		cfg.CPUCFSQuota = &t
	}
	if cfg.CPUCFSQuotaPeriod == 0 {
		cfg.CPUCFSQuotaPeriod = 100 * time.Millisecond
	}
	if cfg.Profile == "" {
		cfg.Profile = Profile135
	}
	return cfg
}

// Validate checks a defaulted NodeConfig and names the first field that
// holds a value the kubelet would not start with.
func (cfg NodeConfig) Validate() error {
	oneOf := func(field, value string, allowed ...string) error {
		for _, a := range allowed {
			if value == a {
				return nil
			}
		}
		return fmt.Errorf("node config: %s: %q is not one of %s", field, value, strings.Join(allowed, ", "))
	}
	for _, check := range []error{
		oneOf("profile", string(cfg.Profile), string(Profile133), string(Profile134), string(Profile135), string(Profile136)),
		oneOf("os", cfg.OS, "linux", "windows"),
		oneOf("cgroupVersion", cfg.CgroupVersion.String(), "v1", "v2"),
		oneOf("cgroupDriver", string(cfg.CgroupDriver), string(cgroup.DriverCgroupfs), string(cgroup.DriverSystemd)),
		oneOf("cpuManagerPolicy", cfg.CPUManagerPolicy, "none", "static"),
		oneOf("memoryManagerPolicy", cfg.MemoryManagerPolicy, "None", "Static"),
		oneOf("swapBehavior", cfg.SwapBehavior, "NoSwap", "LimitedSwap"),
	} {
		if check != nil {
			return check
		}
	}
	if cfg.CPUCFSQuotaPeriod < time.Millisecond || cfg.CPUCFSQuotaPeriod > time.Second {
		return fmt.Errorf("node config: cpuCFSQuotaPeriod: %s is outside 1ms..1s", cfg.CPUCFSQuotaPeriod)
	}
	for name, q := range cfg.Allocatable {
		if c, ok := cfg.Capacity[name]; ok && q.Cmp(c) > 0 {
			return fmt.Errorf("node config: allocatable %s %s is more than the capacity %s", name, q.String(), c.String())
		}
		if q.Sign() < 0 {
			return fmt.Errorf("node config: allocatable %s %s is negative", name, q.String())
		}
	}
	return nil
}

// Gate reports a feature gate of the node.
func (n *Node) Gate(name string) bool { return gateEnabled(n.cfg.Profile, n.cfg.FeatureGates, name) }

// NewNode starts a kubelet on cfg with deps: it loads the checkpoints,
// recovers the pods' sandboxes and containers from the runtime, admits the
// cluster's pods in creation order, retries pending resizes and syncs
// every pod until quiet. A kubelet restart is NewNode on the same deps.
func NewNode(ctx context.Context, cfg NodeConfig, deps Deps) (*Node, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("new node: %w", err)
	}
	if deps.Cluster == nil || deps.Cgroups == nil || deps.Runtime == nil {
		return nil, errors.New("new node: Deps.Cluster, Deps.Cgroups and Deps.Runtime are required")
	}
	if deps.Cgroups.Version() != cfg.CgroupVersion {
		cfg.CgroupVersion = deps.Cgroups.Version()
	}
	if deps.Clock == nil {
		deps.Clock = NewFakeClock(time.Unix(0, 0).UTC())
	}
	allocated, err := allocation.NewStore(deps.CheckpointDir, allocation.AllocatedStateFile)
	if err != nil {
		return nil, fmt.Errorf("new node: %w", err)
	}
	actuated, err := allocation.NewStore(deps.CheckpointDir, allocation.ActuatedStateFile)
	if err != nil {
		return nil, fmt.Errorf("new node: %w", err)
	}
	n := &Node{
		cfg:       cfg,
		cluster:   deps.Cluster,
		cg:        deps.Cgroups,
		rt:        deps.Runtime,
		clock:     deps.Clock,
		allocated: allocated,
		actuated:  actuated,
		pods:      map[types.UID]*podState{},
		conds:     map[types.UID]*resizeConditions{},
		dirty:     map[types.UID]bool{},
		resync:    map[types.UID]time.Time{},
		queue:     &allocation.Queue{},
	}
	n.enforceCPULimits = *cfg.CPUCFSQuota
	n.cpuPeriod = cgconfig.QuotaPeriod
	if n.Gate(GateCustomCPUCFSQuotaPeriod) {
		n.cpuPeriod = uint64(cfg.CPUCFSQuotaPeriod / time.Microsecond)
	}
	n.admitCfg = allocation.NodeConfig{
		Allocatable:         cfg.Allocatable,
		OS:                  cfg.OS,
		CPUManagerPolicy:    cfg.CPUManagerPolicy,
		MemoryManagerPolicy: cfg.MemoryManagerPolicy,
		SwapBehavior:        cfg.SwapBehavior,
		CgroupVersion:       cfg.CgroupVersion,
		Gate:                n.Gate,
		Profile:             string(cfg.Profile),
	}
	n.retry = allocation.NewRetryTimer(n.clock.Now())
	if err := n.recover(ctx); err != nil {
		return nil, err
	}
	return n, nil
}

// recover rebuilds the in-memory state after a (re)start: pods the cluster
// has, with their allocation and the containers the runtime still runs.
func (n *Node) recover(ctx context.Context) error {
	sandboxes, err := n.rt.ListPodSandbox(ctx, nil)
	if err != nil {
		return fmt.Errorf("new node: list sandboxes: %w", err)
	}
	containers, err := n.rt.ListContainers(ctx, nil)
	if err != nil {
		return fmt.Errorf("new node: list containers: %w", err)
	}
	for _, pod := range n.cluster.ListPods() {
		if pod.Status.Phase == v1.PodFailed || pod.Status.Phase == v1.PodSucceeded {
			continue
		}
		ps := n.newPodState(pod)
		for _, sb := range sandboxes {
			if sb.GetMetadata().GetUid() == string(pod.UID) && sb.State == runtimeapi.PodSandboxState_SANDBOX_READY {
				ps.sandboxID = sb.Id
			}
		}
		for _, c := range containers {
			if ps.sandboxID == "" || c.PodSandboxId != ps.sandboxID {
				continue
			}
			name := c.GetMetadata().GetName()
			attempt := c.GetMetadata().GetAttempt()
			if cur, ok := ps.containers[name]; ok {
				if cur.attempt > attempt {
					ps.dead = append(ps.dead, c.Id)
					continue
				}
				ps.dead = append(ps.dead, cur.id)
			}
			ps.containers[name] = &containerRecord{id: c.Id, attempt: attempt}
		}
		n.admitPod(pod, ps)
	}
	n.pushPendingForAll()
	n.retryPendingResizes(allocation.TriggerPodsAdded)
	return n.runUntilQuiet(ctx)
}

func (n *Node) newPodState(pod *v1.Pod) *podState {
	ps := &podState{
		uid:        pod.UID,
		namespace:  pod.Namespace,
		name:       pod.Name,
		containers: map[string]*containerRecord{},
		lastStatus: map[string]v1.ContainerStatus{},
	}
	for _, cs := range append(append([]v1.ContainerStatus(nil), pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
		ps.lastStatus[cs.Name] = cs
	}
	n.mu.Lock()
	n.pods[pod.UID] = ps
	n.order = append(n.order, pod.UID)
	n.conds[pod.UID] = &resizeConditions{}
	n.mu.Unlock()
	return ps
}

// admitPod is HandlePodAdditions for one pod: admission against the other
// admitted pods (with the checkpointed allocation if there is one), then
// either the allocation is checkpointed and the pod queued for sync, or the
// pod is rejected.
func (n *Node) admitPod(pod *v1.Pod, ps *podState) {
	n.allocMu.Lock()
	defer n.allocMu.Unlock()
	allocatedPod, _ := n.overlay(pod)
	decision := allocation.AdmitPod(allocatedPod, n.otherPods(pod.UID), n.admitCfg)
	if decision.Outcome != allocation.Admitted {
		n.event(pod, v1.EventTypeWarning, decision.Reason, decision.Message)
		status := pod.Status.DeepCopy()
		status.Phase = v1.PodFailed
		status.Reason = decision.Reason
		status.Message = "Pod was rejected: " + decision.Message
		_ = n.cluster.UpdatePodStatus(pod.Namespace, pod.Name, pod.UID, *status)
		return
	}
	if err := n.allocated.Set(pod.UID, allocationFromPod(allocatedPod, n.Gate(GateInPlacePodVerticalScalingInitContainers))); err != nil {
		n.event(pod, v1.EventTypeWarning, ReasonFailed, err.Error())
	}
	qosClass := pod.Status.QOSClass
	if qosClass == "" {
		qosClass = qos.PodQOSClass(pod)
	}
	n.mu.Lock()
	ps.admitted = true
	ps.podCgroup = n.podCgroupName(qosClass, pod.UID)
	n.dirty[pod.UID] = true
	n.mu.Unlock()
}

// podCgroupName is the pod's cgroup path below the hierarchy root.
func (n *Node) podCgroupName(qosClass v1.PodQOSClass, uid types.UID) string {
	name := cgconfig.PodCgroupName(qosClass, uid, n.cfg.CgroupDriver)
	if n.cfg.CgroupRoot != "" && n.cfg.CgroupRoot != "/" {
		name = trimSlashes(n.cfg.CgroupRoot) + "/" + name
	}
	return name
}

func trimSlashes(s string) string {
	for len(s) > 0 && s[0] == '/' {
		s = s[1:]
	}
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}

// allocationFromPod is what the allocation checkpoint records of a pod:
// the resources of every regular container and sidecar (and, where
// non-sidecar init containers are resizable, of those too), and the
// pod-level resources when set.
func allocationFromPod(pod *v1.Pod, initContainers bool) allocation.PodResources {
	r := allocation.PodResources{ContainerResources: map[string]v1.ResourceRequirements{}}
	for i := range pod.Spec.Containers {
		r.ContainerResources[pod.Spec.Containers[i].Name] = *pod.Spec.Containers[i].Resources.DeepCopy()
	}
	for i := range pod.Spec.InitContainers {
		if initContainers || qos.IsSidecar(&pod.Spec.InitContainers[i]) {
			r.ContainerResources[pod.Spec.InitContainers[i].Name] = *pod.Spec.InitContainers[i].Resources.DeepCopy()
		}
	}
	if pod.Spec.Resources != nil {
		r.PodLevelResources = pod.Spec.Resources.DeepCopy()
	}
	return r
}

// overlay is UpdatePodFromAllocation: the pod with its checkpointed
// allocation in place of the desired resources, and whether that differs
// from the spec (a resize is pending).
func (n *Node) overlay(pod *v1.Pod) (*v1.Pod, bool) {
	out := pod
	changed := false
	copyOnce := func() {
		if !changed {
			out = pod.DeepCopy()
			changed = true
		}
	}
	// The allocation is only read here, so it is compared in place and
	// copied only where it differs from the spec.
	n.allocated.View(pod.UID, func(alloc allocation.PodResources) {
		for i := range pod.Spec.Containers {
			if r, ok := alloc.ContainerResources[pod.Spec.Containers[i].Name]; ok && !allocation.SameResources(&pod.Spec.Containers[i].Resources, &r) {
				copyOnce()
				out.Spec.Containers[i].Resources = *r.DeepCopy()
			}
		}
		for i := range pod.Spec.InitContainers {
			if r, ok := alloc.ContainerResources[pod.Spec.InitContainers[i].Name]; ok && !allocation.SameResources(&pod.Spec.InitContainers[i].Resources, &r) {
				copyOnce()
				out.Spec.InitContainers[i].Resources = *r.DeepCopy()
			}
		}
		if alloc.PodLevelResources != nil && pod.Spec.Resources != nil && !allocation.SameResources(pod.Spec.Resources, alloc.PodLevelResources) {
			copyOnce()
			out.Spec.Resources = alloc.PodLevelResources.DeepCopy()
		}
	})
	return out, changed
}

// otherPods are the admitted, active pods other than uid, each overlaid
// with its allocation and carrying its status: what admission counts as
// used. Call with allocMu held.
func (n *Node) otherPods(uid types.UID) []*v1.Pod {
	n.mu.Lock()
	var states []*podState
	for _, id := range n.order {
		if ps := n.pods[id]; id != uid && ps.admitted {
			states = append(states, ps)
		}
	}
	n.mu.Unlock()
	out := make([]*v1.Pod, 0, len(states))
	for _, ps := range states {
		pod, ok := n.cluster.peekPod(ps.namespace, ps.name)
		if !ok || pod.UID != ps.uid || isTerminal(pod) {
			continue
		}
		p, _ := n.overlay(pod)
		out = append(out, p)
	}
	return out
}

func (n *Node) event(pod *v1.Pod, eventType, reason, message string) {
	n.cluster.RecordEvent(Event{
		Time:      n.clock.Now(),
		Namespace: pod.Namespace,
		Pod:       pod.Name,
		Type:      eventType,
		Reason:    reason,
		Message:   message,
		Source:    "kubelet",
		Host:      n.cfg.Name,
	})
}

func (n *Node) now() metav1.Time { return metav1.NewTime(n.clock.Now()) }

// resizeEvents reports whether the profile emits the resize events other
// than ResizeCompleted. The reference places them in 1.35 and marks the
// release of each event UNVERIFIED (§1.8, §6); resizelet chooses what a
// user upgrading to 1.35 sees: ResizeStarted, ResizeDeferred,
// ResizeInfeasible and ResizeError appear with 1.35, 1.34 sends only the
// generation-less ResizeCompleted, and 1.33 sends none.
func (n *Node) resizeEvents() bool {
	return n.cfg.Profile != Profile133 && n.cfg.Profile != Profile134
}

// podState returns the state of a pod by UID.
func (n *Node) podState(uid types.UID) (*podState, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	ps, ok := n.pods[uid]
	return ps, ok
}

func (n *Node) podStateByName(namespace, name string) (*podState, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, uid := range n.order {
		if ps := n.pods[uid]; ps.namespace == namespace && ps.name == name {
			return ps, true
		}
	}
	return nil, false
}

// AddPod creates the pod in the cluster, admits it (a rejected pod gets
// phase Failed with the kubelet's reason and message and a Warning event;
// that is not an error), starts its containers, retries pending resizes
// (pods_added) and runs until quiet.
func (n *Node) AddPod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error) {
	if pod.CreationTimestamp.IsZero() {
		pod = pod.DeepCopy()
		pod.CreationTimestamp = n.now()
	}
	created, err := n.cluster.CreatePod(pod)
	if err != nil {
		return nil, err
	}
	ps := n.newPodState(created)
	n.admitPod(created, ps)
	n.retryPendingResizes(allocation.TriggerPodsAdded)
	if err := n.runUntilQuiet(ctx); err != nil {
		return nil, err
	}
	return n.cluster.GetPod(created.Namespace, created.Name)
}

// DeletePod stops and removes the pod's containers and sandbox, removes its
// cgroup and allocation, deletes it from the cluster, retries pending
// resizes (pods_removed) and runs until quiet.
func (n *Node) DeletePod(ctx context.Context, namespace, name string) error {
	ps, ok := n.podStateByName(namespace, name)
	if !ok {
		return fmt.Errorf("delete pod %s/%s: %w", namespace, name, ErrPodNotFound)
	}
	pod, err := n.cluster.GetPod(namespace, name)
	if err != nil {
		return err
	}
	ps.mu.Lock()
	var errs []error
	for _, c := range allContainers(pod) {
		rec, ok := ps.containers[c.Name]
		if !ok {
			continue
		}
		n.event(pod, v1.EventTypeNormal, ReasonKilling, fmt.Sprintf("Stopping container %s", c.Name))
		if err := n.rt.StopContainer(ctx, rec.id, terminationGrace(pod)); err != nil {
			errs = append(errs, fmt.Errorf("stop container %s: %w", c.Name, err))
		}
		ps.dead = append(ps.dead, rec.id)
	}
	for _, id := range ps.dead {
		if err := n.rt.RemoveContainer(ctx, id); err != nil && !errors.Is(err, cri.ErrNotFound) {
			errs = append(errs, fmt.Errorf("remove container %s: %w", id, err))
		}
	}
	if ps.sandboxID != "" {
		if err := n.rt.StopPodSandbox(ctx, ps.sandboxID); err != nil {
			errs = append(errs, fmt.Errorf("stop sandbox: %w", err))
		}
		if err := n.rt.RemovePodSandbox(ctx, ps.sandboxID); err != nil {
			errs = append(errs, fmt.Errorf("remove sandbox: %w", err))
		}
	}
	if ps.podCgroup != "" && n.cg.Exists(ps.podCgroup) {
		if err := n.cg.Delete(ps.podCgroup); err != nil {
			errs = append(errs, fmt.Errorf("delete pod cgroup: %w", err))
		}
	}
	ps.mu.Unlock()
	if len(errs) > 0 {
		// The pod stays known so that a later DeletePod can finish the job.
		return fmt.Errorf("delete pod %s/%s: %w", namespace, name, errors.Join(errs...))
	}
	n.allocMu.Lock()
	n.allocated.Delete(ps.uid)
	n.actuated.Delete(ps.uid)
	n.queue.Remove(ps.uid)
	n.allocMu.Unlock()
	n.mu.Lock()
	delete(n.pods, ps.uid)
	delete(n.conds, ps.uid)
	delete(n.dirty, ps.uid)
	delete(n.resync, ps.uid)
	for i, id := range n.order {
		if id == ps.uid {
			n.order = append(n.order[:i], n.order[i+1:]...)
			break
		}
	}
	n.mu.Unlock()
	if err := n.cluster.DeletePod(namespace, name); err != nil {
		return err
	}
	n.retryPendingResizes(allocation.TriggerPodsRemoved)
	return n.runUntilQuiet(ctx)
}

// Resize sends a resize request through the cluster's resize subresource
// (patch is a strategic merge patch, JSON or YAML). An API validation error
// is returned as is and changes nothing. Otherwise the kubelet handles the
// update: the pod joins the pending-resize queue, every pending resize is
// retried in queue order (pod_updated), and the node runs until quiet.
func (n *Node) Resize(ctx context.Context, namespace, name string, patch []byte) error {
	pod, err := n.cluster.ResizePod(namespace, name, patch)
	if err != nil {
		return err
	}
	ps, ok := n.podState(pod.UID)
	if !ok || !ps.admitted {
		return nil
	}
	n.allocMu.Lock()
	n.pushPending(pod)
	n.allocMu.Unlock()
	n.retryPendingResizes(allocation.TriggerPodUpdated)
	n.markDirty(pod.UID)
	return n.runUntilQuiet(ctx)
}

func (n *Node) markDirty(uid types.UID) {
	n.mu.Lock()
	if _, ok := n.pods[uid]; ok {
		n.dirty[uid] = true
	}
	n.mu.Unlock()
}

// pushPending is PushPendingResize: a pod whose desired resources differ
// from its allocation, or that still shows a Pending condition, joins the
// queue once; the queue is re-sorted with every pod's current keys. Call
// with allocMu held.
func (n *Node) pushPending(pod *v1.Pod) {
	_, changed := n.overlay(pod)
	n.mu.Lock()
	hasPending := n.conds[pod.UID] != nil && n.conds[pod.UID].pending != nil
	n.mu.Unlock()
	if !changed && !hasPending {
		return
	}
	for _, item := range n.queue.Items() {
		if item.UID == pod.UID {
			return
		}
	}
	items := n.queue.Items()
	fresh := &allocation.Queue{}
	for _, item := range items {
		if p := n.podByUID(item.UID); p != nil {
			fresh.Push(n.pendingKey(p))
		}
	}
	fresh.Push(n.pendingKey(pod))
	n.queue = fresh
}

// pushPendingForAll queues every admitted pod with a pending change, as
// the kubelet's HandlePodAdditions does after a restart.
func (n *Node) pushPendingForAll() {
	n.allocMu.Lock()
	defer n.allocMu.Unlock()
	n.mu.Lock()
	uids := append([]types.UID(nil), n.order...)
	n.mu.Unlock()
	for _, uid := range uids {
		if ps, ok := n.podState(uid); ok && ps.admitted {
			if p := n.podByUID(uid); p != nil {
				n.pushPending(p)
			}
		}
	}
}

func (n *Node) podByUID(uid types.UID) *v1.Pod {
	ps, ok := n.podState(uid)
	if !ok {
		return nil
	}
	pod, err := n.cluster.GetPod(ps.namespace, ps.name)
	if err != nil || pod.UID != uid {
		return nil
	}
	return pod
}

// pendingKey computes a pod's sort keys for the pending-resize queue.
func (n *Node) pendingKey(pod *v1.Pod) allocation.PendingResize {
	allocatedPod, _ := n.overlay(pod)
	key := allocation.PendingResize{
		UID:        pod.UID,
		Increasing: allocation.IsResizeIncreasing(allocatedPod, pod, n.Gate(GatePodLevelResources)),
		Guaranteed: pod.Status.QOSClass == v1.PodQOSGuaranteed,
	}
	if pod.Spec.Priority != nil {
		key.Priority = *pod.Spec.Priority
	}
	n.mu.Lock()
	if c := n.conds[pod.UID]; c != nil && c.pending != nil {
		t := c.pending.LastTransitionTime.Time
		key.DeferredAt = &t
	}
	n.mu.Unlock()
	return key
}

// retryPendingResizes re-evaluates every queued resize in queue order and
// resets the periodic retry timer (detail 3). Allocated and infeasible
// resizes leave the queue; deferred ones stay. A pod whose allocation or
// conditions changed is queued for sync.
func (n *Node) retryPendingResizes(trigger string) {
	n.allocMu.Lock()
	defer n.allocMu.Unlock()
	n.retry.Reset(n.clock.Now())
	var keep []allocation.PendingResize
	for _, item := range n.queue.Items() {
		pod := n.podByUID(item.UID)
		if pod == nil {
			continue
		}
		before := n.conditionsOf(pod.UID)
		allocatedNow, outcome := n.handlePodResourcesResize(pod)
		if outcome == allocation.Deferred {
			keep = append(keep, item)
		}
		if allocatedNow || !apiequality.Semantic.DeepEqual(before, n.conditionsOf(pod.UID)) {
			n.markDirty(pod.UID)
		}
	}
	q := &allocation.Queue{}
	for _, item := range keep {
		q.Push(item)
	}
	n.queue = q
	_ = trigger
}

func (n *Node) conditionsOf(uid types.UID) []v1.PodCondition {
	n.mu.Lock()
	defer n.mu.Unlock()
	if c := n.conds[uid]; c != nil {
		return c.list()
	}
	return nil
}

// withConds runs f on a pod's conditions under the node lock.
func (n *Node) withConds(uid types.UID, f func(c *resizeConditions)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := n.conds[uid]
	if c == nil {
		c = &resizeConditions{}
		n.conds[uid] = c
	}
	f(c)
}

// handlePodResourcesResize decides one pod's pending resize (§1.2): a pod
// whose desired resources equal its allocation clears Pending; otherwise
// the admission checks run, and an admitted resize is checkpointed, clears
// Pending, sets InProgress anew and emits ResizeStarted, while a refused
// one sets Pending (with a Warning event when the reason or generation
// changed). It returns whether the allocation changed and the outcome.
// Call with allocMu held.
func (n *Node) handlePodResourcesResize(pod *v1.Pod) (bool, allocation.Outcome) {
	allocatedPod, changed := n.overlay(pod)
	if !changed {
		n.withConds(pod.UID, func(c *resizeConditions) { c.clearPending() })
		return false, allocation.Admitted
	}
	decision := allocation.AdmitResize(pod, allocatedPod, n.otherPods(pod.UID), n.admitCfg, isStaticPod(pod))
	now := n.now()
	if decision.Outcome == allocation.Admitted {
		if err := n.allocated.Set(pod.UID, allocationFromPod(pod, n.Gate(GateInPlacePodVerticalScalingInitContainers))); err != nil {
			n.event(pod, v1.EventTypeWarning, ReasonFailed, err.Error())
			return false, allocation.Deferred
		}
		n.withConds(pod.UID, func(c *resizeConditions) {
			c.clearPending()
			c.clearInProgress()
			c.setInProgress("", "", pod.Generation, now)
		})
		if n.resizeEvents() {
			n.event(pod, v1.EventTypeNormal, ReasonResizeStarted, ResizeStartedMessage(pod, pod.Generation))
		}
		return true, allocation.Admitted
	}
	reason := string(decision.Outcome)
	var newly bool
	n.withConds(pod.UID, func(c *resizeConditions) {
		newly = c.setPending(reason, decision.Message, pod.Generation, now)
	})
	// The early Infeasible checks (platform, static pod, swap, pod-level
	// gate) set the condition without an event in 1.35 (Decision.Silent).
	if newly && n.resizeEvents() && !decision.Silent {
		eventReason := ReasonResizeDeferred
		if decision.Outcome == allocation.Infeasible {
			eventReason = ReasonResizeInfeasible
		}
		n.event(pod, v1.EventTypeWarning, eventReason, ResizePendingMessage(pod, reason, decision.Message, pod.Generation))
	}
	return false, decision.Outcome
}

// isStaticPod reports whether the pod came from a file or URL source rather
// than the API server.
func isStaticPod(pod *v1.Pod) bool {
	src, ok := pod.Annotations["kubernetes.io/config.source"]
	return ok && src != "api"
}

// Sync runs the node until it is quiet: every pod that needs a sync is
// synced, and no work is left that is due now. Call it after changing
// something under the node (memory usage, a container exit).
func (n *Node) Sync(ctx context.Context) error {
	n.mu.Lock()
	for uid, ps := range n.pods {
		if ps.admitted {
			n.dirty[uid] = true
		}
	}
	n.mu.Unlock()
	return n.runUntilQuiet(ctx)
}

// runUntilQuiet syncs dirty pods, in admission order, until none is left.
func (n *Node) runUntilQuiet(ctx context.Context) error {
	for i := 0; i < maxSyncRounds; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		uid, ok := n.nextDirty()
		if !ok {
			return nil
		}
		n.syncPod(ctx, uid)
	}
	return errors.New("node did not become quiet: pods keep asking for syncs")
}

func (n *Node) nextDirty() (types.UID, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, uid := range n.order {
		if n.dirty[uid] {
			delete(n.dirty, uid)
			return uid, true
		}
	}
	return "", false
}

// Advance moves the node's FakeClock forward by d, firing the timers that
// fall due in time order (the pending-resize retry, pod resyncs and
// backoffs), and runs until quiet after each.
func (n *Node) Advance(ctx context.Context, d time.Duration) error {
	fc, ok := n.clock.(*FakeClock)
	if !ok {
		return ErrNotFakeClock
	}
	target := fc.Now().Add(d)
	for {
		next := n.nextTimer()
		if next.After(target) {
			break
		}
		if next.After(fc.Now()) {
			fc.Set(next)
		}
		if err := n.Tick(ctx); err != nil {
			return err
		}
	}
	fc.Set(target)
	return n.Tick(ctx)
}

// nextTimer is the earliest due time of any timer.
func (n *Node) nextTimer() time.Time {
	n.allocMu.Lock()
	next := n.retry.Due()
	n.allocMu.Unlock()
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, t := range n.resync {
		if t.Before(next) {
			next = t
		}
	}
	return next
}

// Tick fires every timer that is due at the clock's current time and runs
// until quiet. An embedder on a real clock calls it periodically.
func (n *Node) Tick(ctx context.Context) error {
	now := n.clock.Now()
	n.allocMu.Lock()
	retryDue := !n.retry.Due().After(now)
	n.allocMu.Unlock()
	if retryDue {
		n.retryPendingResizes(allocation.TriggerPeriodicRetry)
	}
	n.mu.Lock()
	for uid, t := range n.resync {
		if !t.After(now) {
			delete(n.resync, uid)
			n.dirty[uid] = true
		}
	}
	n.mu.Unlock()
	return n.runUntilQuiet(ctx)
}

// PodInfo is what the node knows of one pod beyond its API object.
type PodInfo struct {
	Admitted  bool
	PodCgroup string // the pod cgroup's path below the cgroup root
	// Allocated is the allocated resources per container name (regular
	// containers and sidecars).
	Allocated map[string]v1.ResourceRequirements
	// Actuated is the actuated resources per container name.
	Actuated map[string]v1.ResourceRequirements
	// ContainerIDs is the current runtime container ID per container name.
	ContainerIDs map[string]string
	// ContainerCgroups is the current container cgroup path per container name.
	ContainerCgroups map[string]string
	SandboxID        string
}

// Pod returns what the node knows of a pod.
func (n *Node) Pod(namespace, name string) (PodInfo, error) {
	ps, ok := n.podStateByName(namespace, name)
	if !ok {
		return PodInfo{}, fmt.Errorf("pod %s/%s: %w", namespace, name, ErrPodNotFound)
	}
	n.mu.Lock()
	info := PodInfo{
		Admitted:         ps.admitted,
		PodCgroup:        ps.podCgroup,
		SandboxID:        ps.sandboxID,
		ContainerIDs:     map[string]string{},
		ContainerCgroups: map[string]string{},
	}
	for name, rec := range ps.containers {
		info.ContainerIDs[name] = rec.id
		info.ContainerCgroups[name] = cgconfig.ContainerCgroupName(ps.podCgroup, rec.id, n.cfg.CgroupDriver)
	}
	n.mu.Unlock()
	if a, ok := n.allocated.Get(ps.uid); ok {
		info.Allocated = a.ContainerResources
	}
	if a, ok := n.actuated.Get(ps.uid); ok {
		info.Actuated = a.ContainerResources
	}
	return info, nil
}

// AllocatedTotal is the sum of the admitted pods' allocated requests, with
// overhead: what admission counts as used by them.
func (n *Node) AllocatedTotal() v1.ResourceList {
	total := v1.ResourceList{}
	n.mu.Lock()
	var states []*podState
	for _, uid := range n.order {
		if ps := n.pods[uid]; ps.admitted {
			states = append(states, ps)
		}
	}
	n.mu.Unlock()
	for _, ps := range states {
		pod, ok := n.cluster.peekPod(ps.namespace, ps.name)
		if !ok || pod.UID != ps.uid || isTerminal(pod) {
			continue
		}
		p, _ := n.overlay(pod)
		for name, q := range qos.PodRequests(p, qos.Options{SkipPodLevelResources: !n.Gate(GatePodLevelResources)}) {
			if cur, ok := total[name]; ok {
				cur.Add(q)
				total[name] = cur
			} else {
				total[name] = q.DeepCopy()
			}
		}
	}
	return total
}

// Close stops the node. The runtime, cgroups and checkpoints are left as
// they are, as a stopped kubelet leaves them.
func (n *Node) Close() {}

// allContainers lists a pod's sidecars and regular containers, in start order.
func allContainers(pod *v1.Pod) []*v1.Container {
	var out []*v1.Container
	for i := range pod.Spec.InitContainers {
		if qos.IsSidecar(&pod.Spec.InitContainers[i]) {
			out = append(out, &pod.Spec.InitContainers[i])
		}
	}
	for i := range pod.Spec.Containers {
		out = append(out, &pod.Spec.Containers[i])
	}
	return out
}

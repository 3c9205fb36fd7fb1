package allocation

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/resizelet/resizelet/allocation/reslist"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/qos"
	"github.com/resizelet/resizelet/resize/profile"
)

// Outcome is the result of an admission decision.
type Outcome string

// The outcomes. For a resize, Deferred and Infeasible are also the reason of
// the pod's PodResizePending condition. A new pod the kubelet rejects is
// Infeasible: it is never retried (the pod fails).
const (
	Admitted   Outcome = "Admitted"
	Deferred   Outcome = "Deferred"
	Infeasible Outcome = "Infeasible"
)

// ReasonUnchanged is the Reason of an Admitted decision on a "resize" whose
// desired resources equal the allocated ones: the kubelet then only clears
// PodResizePending; it writes no allocation, sets no PodResizeInProgress and
// emits no ResizeStarted event.
const ReasonUnchanged = "Unchanged"

// ReasonNilPod is the Reason of an Infeasible decision, and of a failed
// fit, on a nil pod: there is nothing to admit, and the message names the
// argument that was nil. The kubelet never decides on a nil pod; this
// package answers one rather than panicking.
const ReasonNilPod = "NilPod"

// nilPod is the Infeasible decision on a nil pod, the argument named by
// what ("desired pod").
func nilPod(what string) Decision {
	return Decision{Outcome: Infeasible, Reason: ReasonNilPod, Message: "allocation: nil " + what}
}

// Decision is an admission decision and why.
type Decision struct {
	Outcome Outcome
	// Reason is a short machine-readable cause. For a new pod it is the
	// kubelet's rejection reason ("OutOfcpu", "OutOfpods"). For a Deferred
	// resize it is the rejecting handler's reason ("OutOfmemory"), which the
	// v1.35 kubelet replaces with "Deferred" in the condition. For an
	// Infeasible resize it is the reason_detail label of the kubelet's
	// kubelet_pod_infeasible_resizes_total metric ("static_pod",
	// "swap_limitation", "insufficient_node_allocatable", ...).
	Reason string
	// Message is the kubelet's message, exactly: the condition message and
	// the error of the event.
	Message string
	// Silent reports that the kubelet sets the PodResizePending condition
	// for this decision without emitting a ResizeInfeasible event. In 1.35
	// the checks before canResizePod (platform, feature gate, static pod,
	// swap, pod-level gate) return early without an event; from 1.36 every
	// check runs in the resize admit handler and emits one.
	Silent bool
}

// ReasonDetail is the reason_detail label the kubelet counts an
// Infeasible resize decision under in kubelet_pod_infeasible_resizes_total
// (package resize/metrics), and "" for any other decision. It is Reason,
// except for the pod-level gate's check: Reason calls it feature_gate_off
// like the pod gate's (the kubelet's log and condition do not tell them
// apart), but the kubelet counts it as plr_feature_gate_off
// (IsInPlacePodLevelResourcesVerticalScalingAllowed in
// pkg/kubelet/allocation/features_linux.go).
func (d Decision) ReasonDetail() string {
	switch {
	case d.Outcome != Infeasible:
		return ""
	case d.Message == msgPodLevelGateOff:
		return "plr_feature_gate_off"
	}
	return d.Reason
}

// NodeConfig is what admission needs to know of the node.
type NodeConfig struct {
	// Allocatable is the node's allocatable resources (capacity minus
	// system- and kube-reserved). A missing "pods" entry means the
	// kubelet's default maxPods, 110.
	Allocatable         v1.ResourceList
	OS                  string // "linux" (or ""), "windows", or another OS
	CPUManagerPolicy    string // "none" | "static"
	MemoryManagerPolicy string // "None" | "Static"
	SwapBehavior        string // "NoSwap" (or "") | "LimitedSwap"
	// Profile is the kubelet version with the node's feature gates.
	Profile profile.Profile
	// CgroupVersion is the node's cgroup version; 0 means cgconfig.V2.
	// Swap is only ever given on cgroup v2.
	CgroupVersion cgconfig.Version
	// Messages, when set, keeps the messages of the latest shortfalls, so
	// that a decision that repeats one (a Deferred resize retried) reuses
	// its string instead of building it again. It is not safe for
	// concurrent use: give each decider its own.
	Messages *MessageCache
}

// defaultMaxPods is the kubelet's default --max-pods, which the node reports
// as its pods capacity.
const defaultMaxPods = 110

// criticalPriority is scheduling.SystemCriticalPriority: pods at or above it
// are critical and never get swap.
const criticalPriority = 2000000000

// Messages of the kubelet's resize checks (allocation_manager.go,
// features_*.go), exactly.
const (
	msgGateOff          = "InPlacePodVerticalScaling is disabled"
	msgStaticPod        = "In-place resize of static-pods is not supported"
	msgWindows          = "In-place pod resize is not supported on Windows"
	msgUnsupportedOS    = "In-place pod resize is not supported on this node"
	msgSwap             = "In-place resize of containers with swap is not supported."
	msgPodLevelGateOff  = "InPlacePodLevelResourcesVerticalScaling is disabled"
	msgStaticCPUManager = `Resize is infeasible for Guaranteed Pods alongside CPU Manager policy "static"`
	msgStaticMemManager = `Resize is infeasible for Guaranteed Pods alongside Memory Manager policy "Static"`
)

func (n *NodeConfig) cgroupV1() bool { return n.CgroupVersion == cgconfig.V1 }

// ResizeRequested reports whether desired differs from allocated where the
// kubelet's UpdatePodFromAllocation looks: the resources of every container
// (regular and init) present in both, compared semantically, and the
// pod-level resources only while the InPlacePodLevelResourcesVerticalScaling
// gate is on.
func ResizeRequested(desired, allocated *v1.Pod, node NodeConfig) bool {
	if allocated == nil {
		return false
	}
	return resizeRequested(desired, As(allocated), node)
}

func resizeRequested(desired *v1.Pod, allocated Allocated, node NodeConfig) bool {
	if desired == nil || allocated.Pod == nil {
		// Nothing to compare: no resize.
		return false
	}
	if node.Profile.PodLevelResize() &&
		!samePodLevel(desired.Spec.Resources, allocated.PodLevel()) {
		return true
	}
	for _, list := range [2][]v1.Container{desired.Spec.Containers, desired.Spec.InitContainers} {
		for i := range list {
			if a := findContainer(allocated.Pod, list[i].Name); a != nil {
				if r := allocated.Resources(a); !SameResources(&list[i].Resources, &r) {
					return true
				}
			}
		}
	}
	return false
}

// AdmitResize decides a resize of desired (the pod as the API shows it)
// against allocated (the same pod with its allocated resources overlaid) and
// others (every other admitted, active pod, each overlaid with its
// allocation and still carrying its status), in the order of the v1.35
// allocation manager's handlePodResourcesResize and canResizePod:
//
//  1. nothing to resize: Admitted with ReasonUnchanged;
//  2. platform, feature gate and static pod: Infeasible;
//  3. swap: Infeasible;
//  4. pod-level resources changed with the gate off: Infeasible;
//  5. Guaranteed pod with a static CPU or memory manager: Infeasible;
//  6. the whole pod's requests above the node's allocatable: Infeasible;
//  7. the pod does not fit beside the others (ResourcesFit): Deferred.
//
// From 1.36 steps 2 to 5 are the resize admit handler's, without the static
// pod check, which 1.36 dropped (pkg/kubelet/allocation/handlers.go,
// podResizesAdmitHandler.Admit, and features_linux.go), which
// runs first among the admit handlers, in the same order; step 6 is gone
// from the kubelet (profile.Profile.KubeletCapacityCheck), and step 7 is
// the predicate handler's, whose reason ("OutOfcpu") the Deferred decision
// keeps for the event.
//
// Step 4 compares the pod-level resources of desired and allocated as
// given. The kubelet's overlay copies the allocated pod-level resources only
// while InPlacePodLevelResourcesVerticalScaling is on, so with the gate off
// the two never differ there and the check cannot fire; a driver that
// overlays the same way gets the same result (ResizeRequested likewise
// ignores pod-level changes with the gate off).
//
// isStatic says whether the pod is a static pod (its
// kubernetes.io/config.source annotation is not "api").
func AdmitResize(desired, allocated *v1.Pod, others []*v1.Pod, node NodeConfig, isStatic bool) Decision {
	if desired == nil {
		return nilPod("desired pod")
	}
	used := UsageOf(others, desired.UID, node)
	return DecideResize(desired, As(allocated), &used, node, isStatic)
}

// DecideResize is AdmitResize with the allocated pod as a view of the
// desired pod and its allocation record, and the other pods' usage
// already summed (Usage): the decision a node that keeps its usage up to
// date makes without walking its pods or copying any.
func DecideResize(desired *v1.Pod, allocated Allocated, others *Usage, node NodeConfig, isStatic bool) Decision {
	switch {
	case desired == nil:
		return nilPod("desired pod")
	case allocated.Pod == nil:
		return nilPod("allocated pod")
	}
	if !resizeRequested(desired, allocated, node) {
		return Decision{Outcome: Admitted, Reason: ReasonUnchanged}
	}
	early := func(reason, msg string) Decision {
		return Decision{Outcome: Infeasible, Reason: reason, Message: msg, Silent: !node.Profile.EarlyInfeasibleEvents()}
	}
	switch node.OS {
	case "", "linux":
	case "windows":
		return early("windows", msgWindows)
	default:
		return early("unsupported_platform", msgUnsupportedOS)
	}
	if !node.Profile.Gate(profile.GateInPlacePodVerticalScaling) {
		return early("feature_gate_off", msgGateOff)
	}
	// From 1.36 IsInPlacePodVerticalScalingAllowed no longer refuses
	// static pods (pkg/kubelet/allocation/features_linux.go).
	if isStatic && node.Profile.StaticPodResizeInfeasible() {
		return early("static_pod", msgStaticPod)
	}
	if swapBlocksResize(desired, allocated, node, isStatic) {
		return early("swap_limitation", msgSwap)
	}
	if !samePodLevel(desired.Spec.Resources, allocated.PodLevel()) &&
		!node.Profile.PodLevelResize() {
		return early("feature_gate_off", msgPodLevelGateOff)
	}

	if qos.GetPodQOS(desired) == v1.PodQOSGuaranteed {
		if !node.Profile.Gate(profile.GateInPlacePodVerticalScalingExclusiveCPUs) &&
			node.CPUManagerPolicy == "static" &&
			requestChanged(desired, allocated, v1.ResourceCPU, node) {
			return Decision{Outcome: Infeasible, Reason: "guaranteed_pod_cpu_manager_static_policy", Message: msgStaticCPUManager}
		}
		if (!node.Profile.StaticMemoryManagerNeedsGate() || node.Profile.Gate(profile.GateMemoryManager)) &&
			!node.Profile.Gate(profile.GateInPlacePodVerticalScalingExclusiveMemory) &&
			node.MemoryManagerPolicy == "Static" &&
			requestChanged(desired, allocated, v1.ResourceMemory, node) {
			return Decision{Outcome: Infeasible, Reason: "guaranteed_pod_memory_manager_static_policy", Message: msgStaticMemManager}
		}
	}

	// From 1.36 the capacity check is the API server's (the PodResizeValidator
	// admission plugin): the kubelet's admit handlers only fit the pod beside
	// the others, so a resize above allocatable that reaches it is Deferred.
	if node.Profile.KubeletCapacityCheck() {
		if msg, ok := capacityFits(desired, node); !ok {
			return Decision{Outcome: Infeasible, Reason: "insufficient_node_allocatable", Message: msg}
		}
	}
	if ok, reason, msg := Fits(As(desired), others, node); !ok {
		return Decision{Outcome: Deferred, Reason: reason, Message: msg}
	}
	return Decision{Outcome: Admitted}
}

// AdmitPod decides a new pod against the others (every admitted, active pod,
// overlaid with its allocation and carrying its status) with the predicate
// admission handler's resource check (ResourcesFit). A rejection is
// Infeasible with the kubelet's reason ("OutOfcpu") and message. The
// handler's other checks (node name, ports, affinity, OS label) and the
// other admit handlers (eviction, sysctls, resource managers) are not
// modelled.
func AdmitPod(pod *v1.Pod, others []*v1.Pod, node NodeConfig) Decision {
	if pod == nil {
		return nilPod("pod")
	}
	used := UsageOf(others, pod.UID, node)
	return DecidePod(As(pod), &used, node)
}

// DecidePod is AdmitPod with the pod as a view of its allocation (a pod
// readmitted after a restart has one) and the other pods' usage already
// summed.
func DecidePod(pod Allocated, others *Usage, node NodeConfig) Decision {
	if ok, reason, msg := Fits(pod, others, node); !ok {
		return Decision{Outcome: Infeasible, Reason: reason, Message: msg}
	}
	return Decision{Outcome: Admitted}
}

// swapBlocksResize is disallowResizeForSwappableContainers: for every
// container in both pods whose memory request changes while its memory
// resize policy (read from the allocated container) is not
// RestartContainer, the resize is refused if the container would get swap
// in either its desired or its allocated form.
func swapBlocksResize(desired *v1.Pod, allocated Allocated, node NodeConfig, isStatic bool) bool {
	for _, list := range [2][]v1.Container{desired.Spec.Containers, desired.Spec.InitContainers} {
		for i := range list {
			d := &list[i]
			a := findContainer(allocated.Pod, d.Name)
			if a == nil {
				continue
			}
			ar := allocated.Resources(a)
			dq, aq := d.Resources.Requests[v1.ResourceMemory], ar.Requests[v1.ResourceMemory]
			if dq.Equal(aq) || restartsOnMemoryResize(a) {
				continue
			}
			if hasSwap(desired, &d.Resources, node, isStatic) || hasSwap(allocated.Pod, &ar, node, isStatic) {
				return true
			}
		}
	}
	return false
}

func restartsOnMemoryResize(c *v1.Container) bool {
	for _, p := range c.ResizePolicy {
		if p.ResourceName == v1.ResourceMemory {
			return p.RestartPolicy == v1.RestartContainer
		}
	}
	return false
}

// hasSwap is the kubelet's GetContainerSwapBehavior != NoSwap: with
// LimitedSwap configured on cgroup v2, a container gets swap only in a
// Burstable pod that is not critical, and only if it sets a memory request
// or limit and its request differs from its limit. The NodeSwap gate (GA)
// and a usable swap controller are assumed.
func hasSwap(pod *v1.Pod, r *v1.ResourceRequirements, node NodeConfig, isStatic bool) bool {
	if node.SwapBehavior != "LimitedSwap" || node.cgroupV1() || isCritical(pod, isStatic) {
		return false
	}
	if qos.GetPodQOS(pod) != v1.PodQOSBurstable {
		return false
	}
	req, lim := r.Requests[v1.ResourceMemory], r.Limits[v1.ResourceMemory]
	if req.IsZero() && lim.IsZero() {
		return false
	}
	return req.Cmp(lim) != 0
}

// isCritical is kubetypes.IsCriticalPod: static, mirror, or at system
// critical priority.
func isCritical(pod *v1.Pod, isStatic bool) bool {
	if isStatic {
		return true
	}
	if _, ok := pod.Annotations[v1.MirrorPodAnnotationKey]; ok {
		return true
	}
	return pod.Spec.Priority != nil && *pod.Spec.Priority >= criticalPriority
}

// requestChanged is guaranteedPodResourceResizeRequired: whether any
// resizable container's request for the resource differs from its
// allocation (a container with no allocation counts as allocated zero).
// Regular containers and sidecars are resizable; other init containers only
// with the InPlacePodVerticalScalingInitContainers gate.
func requestChanged(desired *v1.Pod, allocated Allocated, name v1.ResourceName, node NodeConfig) bool {
	changed := func(c *v1.Container) bool {
		var alloc resource.Quantity
		if a := findContainer(allocated.Pod, c.Name); a != nil {
			alloc = allocated.Resources(a).Requests[name]
		}
		want := c.Resources.Requests[name]
		return !want.Equal(alloc)
	}
	for i := range desired.Spec.InitContainers {
		c := &desired.Spec.InitContainers[i]
		if (qos.IsSidecar(c) || node.Profile.InitContainersResizable()) && changed(c) {
			return true
		}
	}
	for i := range desired.Spec.Containers {
		if changed(&desired.Spec.Containers[i]) {
			return true
		}
	}
	return false
}

func findContainer(pod *v1.Pod, name string) *v1.Container {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i]
		}
	}
	return nil
}

// SameResources is apiequality.Semantic.DeepEqual for resource
// requirements, without reflection: quantities compare by value, nil and
// empty lists are equal. It decides whether a resize is pending.
func SameResources(a, b *v1.ResourceRequirements) bool {
	// nil is no requirements, as an empty value is.
	if a == nil {
		a = &v1.ResourceRequirements{}
	}
	if b == nil {
		b = &v1.ResourceRequirements{}
	}
	return sameList(a.Requests, b.Requests) && sameList(a.Limits, b.Limits) &&
		slices.Equal(a.Claims, b.Claims)
}

func samePodLevel(a, b *v1.ResourceRequirements) bool {
	if a == nil || b == nil {
		return a == b
	}
	return SameResources(a, b)
}

func sameList(a, b v1.ResourceList) bool { return reslist.Equal(a, b) }

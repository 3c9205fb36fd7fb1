// Package profile is the one place where resizelet decides how Kubernetes
// versions differ on the in-place resize path. A Profile is a version (1.33
// to 1.37) with the node's feature gates applied; it answers one predicate
// per behaviour difference, and every package (the API server's validation,
// admission, the kubelet core) asks it instead of comparing versions.
//
// VERSIONS.md, next to this file, lists what changed in 1.36 and 1.37 and
// the kubelet and API server source behind each change.
//
// Start with New and the predicates below Gate. Each predicate names the
// release where the behaviour changed and the kubelet or API server source
// that shows it.
package profile

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a Kubernetes minor release whose behaviour a Profile
// reproduces, written "1.35".
type Version string

// The versions resizelet reproduces. V135 is the version of record and the
// default.
const (
	V133 Version = "1.33"
	V134 Version = "1.34"
	V135 Version = "1.35"
	V136 Version = "1.36"
	V137 Version = "1.37"
)

// Default is the version used when none is given.
const Default = V135

// Versions lists every known version, oldest first.
func Versions() []Version { return []Version{V133, V134, V135, V136, V137} }

// Known reports whether v is one of Versions.
func (v Version) Known() bool {
	_, ok := defaultGates[v]
	return ok
}

// Minor returns the minor number (35 for "1.35"), or 0 for a version that
// does not parse.
func (v Version) Minor() int {
	m, ok := strings.CutPrefix(string(v), "1.")
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(m)
	if err != nil {
		return 0
	}
	return n
}

// String returns the version as written.
func (v Version) String() string { return string(v) }

// Release returns the Kubernetes release whose behaviour the version
// reproduces, as a kubelet reports it (its nodes' kubeletVersion, the
// API server's gitVersion): v1.35.4 for 1.35, the version of record;
// v1.36.3 and v1.37.2, the releases VERSIONS.md reads; for 1.33 and 1.34,
// whose behaviour resizelet takes from the behaviour reference rather
// than from one patch release, the minor's first, v1.33.0 and v1.34.0.
// An unknown version gives Default's.
func (v Version) Release() string {
	switch v {
	case V133:
		return "v1.33.0"
	case V134:
		return "v1.34.0"
	case V136:
		return "v1.36.3"
	case V137:
		return "v1.37.2"
	}
	return "v1.35.4"
}

// ErrUnknownVersion is wrapped by Parse for a version resizelet does not
// reproduce.
var ErrUnknownVersion = fmt.Errorf("unknown Kubernetes version")

// Parse returns the Version s names ("" gives Default).
func Parse(s string) (Version, error) {
	if s == "" {
		return Default, nil
	}
	v := Version(s)
	if !v.Known() {
		return "", fmt.Errorf("%w %q: want one of %s", ErrUnknownVersion, s, joinVersions())
	}
	return v, nil
}

func joinVersions() string {
	var parts []string
	for _, v := range Versions() {
		parts = append(parts, string(v))
	}
	return strings.Join(parts, ", ")
}

// Profile is one version's behaviour with a node's (or an API server's)
// feature gates applied. The zero value is Default with default gates.
// A Profile is an immutable value: copy it freely.
type Profile struct {
	version Version
	// gates are explicit settings; they win over the version's defaults.
	gates map[string]bool
	// gateFunc, when set, answers instead of gates and the defaults.
	gateFunc func(name string) bool
	// hot holds the answers of the predicates asked on every decision,
	// worked out once by New (valid is false for the zero value and
	// once WithGateFunc replaces the gates): the minor version and three
	// gates.
	hot hotAnswers
}

type hotAnswers struct {
	valid                                          bool
	minor                                          int
	podLevelResize, podLevelResources, initResizes bool
}

// New returns the profile of version v ("" means Default) with the
// explicit gate settings in gates. An unknown version behaves as Default;
// callers that take a version from users check it with Parse first.
func New(v Version, gates map[string]bool) Profile {
	if !v.Known() {
		v = Default
	}
	var copied map[string]bool
	if len(gates) > 0 {
		copied = make(map[string]bool, len(gates))
		for k, val := range gates {
			copied[k] = val
		}
	}
	p := Profile{version: v, gates: copied}
	if copied == nil {
		p.hot = defaultHot[v]
		return p
	}
	p.hot = p.hotAnswers()
	return p
}

// hotAnswers works out the answers Profile keeps for the predicates asked
// on every decision.
func (p Profile) hotAnswers() hotAnswers {
	p.hot = hotAnswers{}
	return hotAnswers{
		valid:             true,
		minor:             p.Version().Minor(),
		podLevelResize:    p.PodLevelResize(),
		podLevelResources: p.PodLevelResources(),
		initResizes:       p.InitContainersResizable(),
	}
}

// defaultHot are the answers of each version with its default gates.
var defaultHot = func() map[Version]hotAnswers {
	out := map[Version]hotAnswers{}
	for _, v := range Versions() {
		out[v] = Profile{version: v}.hotAnswers()
	}
	return out
}()

// WithGateFunc returns p answering gates with f instead of its explicit
// settings and defaults (gates locked on stay on).
func (p Profile) WithGateFunc(f func(name string) bool) Profile {
	p.gateFunc = f
	p.hot = hotAnswers{}
	return p
}

// Version returns the profile's version.
func (p Profile) Version() Version {
	if p.version == "" {
		return Default
	}
	return p.version
}

func (p Profile) minor() int {
	if p.hot.valid {
		return p.hot.minor
	}
	return p.Version().Minor()
}

// Gate reports whether a feature gate is on: InPlacePodVerticalScaling is
// GA and locked on from 1.35, InPlacePodVerticalScalingInitContainers from
// 1.37; otherwise an explicit setting wins over the version's default.
func (p Profile) Gate(name string) bool {
	if name == GateInPlacePodVerticalScaling && p.ResizeGA() {
		return true
	}
	for _, locked := range lockedGates[p.Version()] {
		if name == locked {
			return defaultGates[p.Version()][name]
		}
	}
	if p.gateFunc != nil {
		return p.gateFunc(name)
	}
	if v, ok := p.gates[name]; ok {
		return v
	}
	return defaultGates[p.Version()][name]
}

// ResizeGA reports that in-place resize is GA and its gate locked on
// (1.35 and later; kube_features.go).
func (p Profile) ResizeGA() bool { return p.minor() >= 35 }

// ResizeEvents reports whether the kubelet emits ResizeStarted,
// ResizeDeferred, ResizeInfeasible and ResizeError (pkg/kubelet/events/
// resize.go). They are in 1.35; the release of each event was not confirmed
// (resize/kubelet-resize.md §1.8 and its open points), so resizelet chooses
// what a user upgrading to 1.35 sees: they appear with 1.35.
func (p Profile) ResizeEvents() bool { return p.minor() >= 35 }

// ResizeCompletedEvent reports whether the kubelet emits ResizeCompleted:
// from 1.34, whose allocation manager built podResizeCompletionMsg; 1.33
// sent no resize events (UNVERIFIED release, as ResizeEvents).
func (p Profile) ResizeCompletedEvent() bool { return p.minor() >= 34 }

// ResizeCompletedGeneration reports whether the ResizeCompleted message
// carries the generation: from 1.35 (events/resize.go
// PodResizeCompletedMsg); the 1.34 message had only the containers.
func (p Profile) ResizeCompletedGeneration() bool { return p.minor() >= 35 }

// ContainerNameInLifecycleEvents reports whether the Created and Started
// events name the container ("Created container: c", "Started container
// c"): before 1.35. From 1.35 they read "Container created" and "Container
// started" (kubernetes/kubernetes#134043).
func (p Profile) ContainerNameInLifecycleEvents() bool { return p.minor() < 35 }

// EarlyInfeasibleEvents reports whether the early Infeasible checks
// (platform, swap, pod-level gate; static pod up to 1.35, see
// StaticPodResizeInfeasible) emit a ResizeInfeasible
// event: from 1.36, where every check runs in the resize admit handler
// (pkg/kubelet/allocation/handlers.go, podResizesAdmitHandler.Admit), whose
// rejection handlePodResourcesResize reports with an event like any other.
// In 1.35 handlePodResourcesResize returns from them before the event.
func (p Profile) EarlyInfeasibleEvents() bool { return p.minor() >= 36 }

// StaticPodResizeInfeasible reports whether the kubelet refuses to resize a
// static pod in place ("In-place resize of static-pods is not supported",
// Infeasible, and no actuation): up to 1.35. The 1.36
// IsInPlacePodVerticalScalingAllowed (pkg/kubelet/allocation/
// features_linux.go) checks only the feature gate, so a static pod is
// resized like any other. (The API server still refuses a resize of the
// mirror pod: "static pods cannot be resized".)
func (p Profile) StaticPodResizeInfeasible() bool { return p.minor() < 36 }

// StaticMemoryManagerNeedsGate reports whether the "Guaranteed pod with the
// Static memory manager" Infeasible check also requires the MemoryManager
// gate: up to 1.35 (canResizePod); the 1.36 resize admit handler
// (pkg/kubelet/allocation/handlers.go, podResizesAdmitHandler.Admit)
// dropped it.
func (p Profile) StaticMemoryManagerNeedsGate() bool { return p.minor() < 36 }

// RetryOnPodTerminated reports whether a pod that finishes retries the
// pending resizes (trigger pod_terminated) when there are any: from 1.36
// (pkg/kubelet/kubelet.go, HandlePodReconcile). A 1.35 kubelet waits for
// the periodic retry.
func (p Profile) RetryOnPodTerminated() bool { return p.minor() >= 36 }

// BackfillsResizeConditions reports whether a kubelet that starts takes the
// PodResizePending and PodResizeInProgress conditions over from the API
// server's pods, with their reason, message and observedGeneration and
// with both times set to the moment it starts: from 1.35, where
// HandlePodAdditions (pkg/kubelet/kubelet.go) calls
// BackfillPodResizeConditions (pkg/kubelet/status/status_manager.go)
// after admitting every pod and before the pending resizes are pushed and
// retried; 1.36.3 and 1.37.2 do the same. [UNVERIFIED] for 1.33 and 1.34
// (no source at hand): they keep resizelet's earlier behaviour, which sets
// the conditions again only as it decides and syncs.
func (p Profile) BackfillsResizeConditions() bool { return p.minor() >= 35 }

// RevertClearsPending reports whether a pod update that brings the desired
// resources back to the allocation (a reverted pending resize) clears
// PodResizePending at once, without queueing the pod or retrying the
// pending resizes: from 1.35, in HandlePodUpdates (pkg/kubelet/kubelet.go:
// recordResizeOperations, then ClearPodResizePendingCondition when
// UpdatePodFromAllocation finds nothing to change); 1.36.3 and 1.37.2 do
// the same. [UNVERIFIED] for 1.33 and 1.34: they keep resizelet's earlier
// behaviour, a pod_updated retry of the whole queue that clears it.
func (p Profile) RevertClearsPending() bool { return p.minor() >= 35 }

// TerminalClearsResizeConditions reports whether a pod that reaches a
// terminal phase loses its resize conditions and is not synced again:
// from 1.35, where SyncPod returns for a terminal pod and the pod worker
// runs SyncTerminatingPod and SyncTerminatedPod, whose
// generateAPIPodStatus(podIsTerminal=true) clears both conditions in the
// status manager (determinePodResizeStatus, pkg/kubelet/kubelet_pods.go)
// and writes a status without them; the pod worker ignores later syncs of
// the finished pod (pkg/kubelet/pod_workers.go, UpdatePod). 1.36.3 and
// 1.37.2 do the same. [UNVERIFIED] for 1.33 and 1.34: they keep resizelet's
// earlier behaviour, where a finished pod keeps its conditions and is
// synced on.
func (p Profile) TerminalClearsResizeConditions() bool { return p.minor() >= 35 }

// RetriesAddedPodsOnlyWithChange reports whether pods added to the kubelet
// retry the pending resizes (trigger pods_added) only when one of them was
// admitted with desired resources that differ from its checkpointed
// allocation, which in practice happens only when the kubelet starts: from
// 1.35, where HandlePodAdditions (pkg/kubelet/kubelet.go) calls
// RetryPendingResizes only if len(pendingResizes) > 0; 1.36.3 and 1.37.2
// do the same. Without a retry the periodic retry's timer is left alone.
// [UNVERIFIED] for 1.33 and 1.34 (no source at hand): they keep
// resizelet's earlier behaviour, a retry after every batch of added pods
// and at every start.
func (p Profile) RetriesAddedPodsOnlyWithChange() bool { return p.minor() >= 35 }

// RejectionWritesFreshStatus reports whether a pod the admit handlers
// refuse gets a status of its own rather than its API status with a
// failed phase: from 1.35, where rejectPod (pkg/kubelet/kubelet.go) hands
// the status manager a new status holding only the QoS class, phase
// Failed, the reason and the message, to which SetPodStatus and
// updateStatusInternal (pkg/kubelet/status/status_manager.go) add the
// observedGeneration and keep the start time, and which mergePodStatus
// merges with the API status, keeping only the conditions the kubelet
// does not own (so no resize condition) and the resource claim statuses.
// A pod rejected when the kubelet starts thereby loses its container
// statuses and resize conditions. 1.36.3 and 1.37.2 do the same.
// [UNVERIFIED] for 1.33 and 1.34: they keep resizelet's earlier
// behaviour, the pod's API status with the failed phase, reason and
// message.
func (p Profile) RejectionWritesFreshStatus() bool { return p.minor() >= 35 }

// PodOnlyMemoryCheck reports whether the memory-usage check before a limit
// decrease looks at the pod cgroup only, with the message "aborting attempt
// to set pod memory limit less than current memory usage for pod <name>":
// 1.33 (KEP version skew note). From 1.34 the pod and each container whose
// limit goes down are checked.
func (p Profile) PodOnlyMemoryCheck() bool { return p.minor() < 34 }

// PodLevelResize reports whether pod-level resources may be resized: the
// InPlacePodLevelResourcesVerticalScaling gate, which exists from 1.35
// (alpha, off) and is on by default from 1.36. The API server validates
// such a resize and the kubelet actuates pod-level changes only then.
func (p Profile) PodLevelResize() bool {
	if p.hot.valid {
		return p.hot.podLevelResize
	}
	return p.minor() >= 35 && p.Gate(GateInPlacePodLevelResourcesVerticalScaling)
}

// PodLevelResizeForbidden reports whether the API server refuses any resize
// of a pod with pod-level resources ("pods with pod-level resources cannot
// be resized"): up to 1.34.
func (p Profile) PodLevelResizeForbidden() bool { return p.minor() < 35 }

// PodLevelResources reports whether pod-level resources count where they
// are set (the PodLevelResources gate: requests, limits, the pod cgroup).
func (p Profile) PodLevelResources() bool {
	if p.hot.valid {
		return p.hot.podLevelResources
	}
	return p.Gate(GatePodLevelResources)
}

// InitContainersResizable reports whether non-sidecar init containers may
// be resized (InPlacePodVerticalScalingInitContainers, from 1.35; beta and
// on in 1.36, GA and locked on in 1.37): the API server accepts their
// resize and the kubelet allocates them.
func (p Profile) InitContainersResizable() bool {
	if p.hot.valid {
		return p.hot.initResizes
	}
	return p.minor() >= 35 && p.Gate(GateInPlacePodVerticalScalingInitContainers)
}

// InitResizeErrorPerContainer reports whether the API server's "only cpu
// and memory resources are mutable" error for an init or sidecar container
// names the container's index (spec.initContainers[i]) with the 1.36 text;
// before, it was reported on spec with the sidecar text.
func (p Profile) InitResizeErrorPerContainer() bool { return p.minor() >= 36 }

// MemoryLimitNeedsRestartPolicy reports whether the API server refuses to
// lower or add a memory limit unless the memory resizePolicy is
// RestartContainer: 1.33 only (allowed since 1.34, KEP history).
func (p Profile) MemoryLimitNeedsRestartPolicy() bool { return p.minor() == 33 }

// ComparesAddedResourceLists reports whether the API server's resize
// validation keeps a requests or limits list the old container did not
// have when it checks that only cpu and memory changed: from 1.35, where
// the helper was rewritten for pod-level resize. Up to 1.34 such a list
// was dropped, so adding other resources went unnoticed.
func (p Profile) ComparesAddedResourceLists() bool { return p.minor() >= 35 }

// ResizeAdmissionPlugin reports whether the API server refuses a resize
// that does not fit the node before the kubelet sees it: from 1.36 the
// PodResizeValidator admission plugin, on by default, forbids a resize of
// a pod bound to a node that is not linux or whose allocatable is below
// the pod's new cpu or memory requests
// (plugin/pkg/admission/podresize/admission.go, validatePodResize).
func (p Profile) ResizeAdmissionPlugin() bool { return p.minor() >= 36 }

// KubeletCapacityCheck reports whether the kubelet itself refuses a resize
// whose requests exceed the node's allocatable as Infeasible ("Node didn't
// have enough capacity: ..."): up to 1.35 (canResizePod in
// pkg/kubelet/allocation/allocation_manager.go). From 1.36 the check lives
// in the API server (ResizeAdmissionPlugin) and the kubelet's admit
// handlers only know the predicate's fit beside the other pods, so a
// resize that got past the API server is Deferred.
func (p Profile) KubeletCapacityCheck() bool { return p.minor() < 36 }

// PendingEventNamesHandlerReason reports whether a ResizeDeferred event
// names the rejecting admit handler's reason ("Pod resize OutOfcpu: ...")
// rather than "Deferred": from 1.36, where handlePodResourcesResize passes
// the handler's reason to the event while SetPodResizePendingCondition
// still turns every reason but Infeasible into Deferred for the condition
// (pkg/kubelet/status/status_manager.go, SetPodResizePendingCondition).
func (p Profile) PendingEventNamesHandlerReason() bool { return p.minor() >= 36 }

// SandboxUpdateFirst reports whether each pod cgroup write of a resize is
// preceded by UpdatePodSandboxResources, whose failure rejects the resize,
// and followed on failure by a rollback UpdatePodSandboxResources with the
// previous totals: from 1.36 (doPodResizeAction's setPodCgroupConfig in
// pkg/kubelet/kuberuntime/kuberuntime_manager.go). Up to 1.35 the runtime
// is told after the write, and its answer is ignored. From 1.36 the
// actuated pod-level record is also written once per resource, after that
// resource's writes, and only when the pod-level resources changed.
func (p Profile) SandboxUpdateFirst() bool { return p.minor() >= 36 }

// AdmissionSkipsUnallocatedPods reports whether admission counts only the
// active pods that have an allocation: from 1.37 (getAllocatedPods in
// pkg/kubelet/allocation/allocation_manager.go filters on
// HasPodAllocatedResources, and HandlePodUpdates and HandlePodReconcile in
// pkg/kubelet/kubelet.go skip such pods). Up to 1.36 every active pod
// counts, with its spec when it has no allocation.
func (p Profile) AdmissionSkipsUnallocatedPods() bool { return p.minor() >= 37 }

// MemoryBackedVolumeResize reports whether a resize may change the
// sizeLimit of a memory-backed emptyDir volume: the
// InPlacePodVerticalScalingMemoryBackedVolumes gate, which exists from 1.37
// (alpha, off). With it off the API server's resize strategy drops every
// volume change silently (dropNonResizeUpdatesForVolumes in
// pkg/registry/core/pod/strategy.go), as every earlier release does.
func (p Profile) MemoryBackedVolumeResize() bool {
	return p.minor() >= 37 && p.Gate(GateInPlacePodVerticalScalingMemoryBackedVolumes)
}

// ContainerMemoryProtection reports whether, on cgroup v2, every
// container's resources carry the MemoryQoS protection settings: from 1.37,
// where MemoryQoS is on by default, while the gate is on. With the default
// memoryReservationPolicy None and no memoryThrottlingFactor (its default
// is nil from 1.37) that is memory.min and memory.low of "0" and no
// memory.high (generateLinuxContainerResources in
// pkg/kubelet/kuberuntime/kuberuntime_container_linux.go); the pod cgroup
// gets nothing more (ResourceConfigForPod and ApplyPodLevelMemoryHigh in
// pkg/kubelet/cm/helpers_linux.go need the TieredReservation policy or a
// throttling factor). The alpha MemoryQoS of earlier releases is not
// reproduced.
func (p Profile) ContainerMemoryProtection() bool {
	return p.minor() >= 37 && p.Gate(GateMemoryQoS)
}

// ResetsContainerMemoryHigh reports whether, on cgroup v2 with MemoryQoS
// off, every container's resources carry memory.high "max", so that a
// resize clears a throttle set while MemoryQoS was on: from 1.37
// (generateLinuxContainerResources in
// pkg/kubelet/kuberuntime/kuberuntime_container_linux.go).
func (p Profile) ResetsContainerMemoryHigh() bool {
	return p.minor() >= 37 && !p.Gate(GateMemoryQoS)
}

// StatusAggregatedPerPod reports how a pod already on the node counts when
// its status resources are taken into account (the kubelet's predicate
// admission counting the other pods, and HandlePodReconcile's shrink
// test): from 1.37 at the largest of its aggregated spec, actuated and
// allocated requests (staging/src/k8s.io/component-helpers/resource/
// helpers.go, AggregateContainerRequests), up to 1.36 at the sum of each
// container's largest.
func (p Profile) StatusAggregatedPerPod() bool { return p.minor() >= 37 }

// ResizesPodForStartingContainers reports whether a sync that starts a
// container of a running pod whose allocated resources differ from its
// actuated ones resizes the pod cgroup first (UpdatePodResources): from
// 1.37 (computePodActions and startingResizedContainer in
// pkg/kubelet/kuberuntime/kuberuntime_manager.go). Up to 1.36 such a
// container starts with its new resources and the pod cgroup keeps the old
// ones.
func (p Profile) ResizesPodForStartingContainers() bool { return p.minor() >= 37 }

// DefaultsPodLevelResources reports whether the API server's pod strategy
// defaults pod-level resources on create and on every resize of a pod that
// has them (DefaultPodLevelResources in pkg/api/pod/util.go, called from
// pkg/registry/core/pod/strategy.go): from 1.37, with the
// PodLevelResourcesFixDefaulting gate (beta, on) and PodLevelResources.
// A resize that drops spec.resources keeps the old ones. Up to 1.36 only
// v1 defaulting fills pod-level requests, and only when pod-level limits
// are set.
func (p Profile) DefaultsPodLevelResources() bool {
	return p.minor() >= 37 && p.Gate(GatePodLevelResourcesFixDefaulting) && p.PodLevelResources()
}

// InitRestartContainerPolicyForbidden reports whether the API server
// refuses a RestartContainer resize policy on a non-sidecar init container:
// from 1.36, at creation ("must not be set to 'RestartContainer' for
// non-sidecar initContainers", unless the old pod already had one:
// validateInitContainers in pkg/apis/core/validation/validation.go) and
// for a resize that changes such a container ("non-sidecar init containers
// with a resize policy of RestartContainer cannot be resized",
// ValidatePodResize).
func (p Profile) InitRestartContainerPolicyForbidden() bool { return p.minor() >= 36 }

// KubeletOwnsAllContainersRestarting reports whether the kubelet owns the
// AllContainersRestarting pod condition (PodConditionByKubelet in
// pkg/kubelet/types/pod_status.go), so that a status it writes drops one
// the API server's copy carries: from 1.36, where the
// RestartAllContainersOnContainerExits gate is on by default (alpha and
// off in 1.35).
func (p Profile) KubeletOwnsAllContainersRestarting() bool { return p.minor() >= 36 }

// PodLevelQOSOnlyWhenSet reports whether pod-level resources decide a
// pod's QoS class only when they set a supported resource: from 1.37 with
// PodLevelResourcesFixKubeletQOSClass (beta, on; ComputePodQOS in
// pkg/apis/core/helper/qos/qos.go and pkg/apis/core/v1/helper/qos/qos.go).
// Up to 1.36 a present but empty spec.resources makes the pod BestEffort.
func (p Profile) PodLevelQOSOnlyWhenSet() bool {
	return p.minor() >= 37 && p.Gate(GatePodLevelResourcesFixKubeletQOSClass)
}

// CheckpointEmptyDirLimits reports whether the checkpoints'
// (allocated_pods_state and actuated_pods_state) entries carry the
// EmptyDirVolumeLimits field, written null for a pod without memory-backed
// emptyDir limits: from 1.37 (PodResourceInfo in
// pkg/kubelet/allocation/state/state.go, serialized without omitempty).
func (p Profile) CheckpointEmptyDirLimits() bool { return p.minor() >= 37 }

// String returns the version and the explicit gates, for logs.
func (p Profile) String() string {
	if len(p.gates) == 0 {
		return string(p.Version())
	}
	return fmt.Sprintf("%s %v", p.Version(), p.gates)
}

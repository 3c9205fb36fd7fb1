package core

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/allocation"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// Action is one thing the driver must do for the core: a cgroup read or
// write, a CRI call, a checkpoint write, an event or a status write. The
// concrete types below are the whole vocabulary; each renders as one line
// (String) for tests, plans and logs.
type Action interface {
	fmt.Stringer
	action()
}

// Batch is an ordered list of actions for the driver to perform, in order.
// The driver stops at the first action that fails unless the action
// tolerates failure (StopsOnFailure) or the batch says KeepGoing, and
// reports one Result per action it performed (BatchDone).
type Batch struct {
	ID      uint64
	Actions []Action
	// KeepGoing asks the driver to perform every action whatever fails,
	// as the kubelet does when it tears a pod down.
	KeepGoing bool
}

// StopsOnFailure reports whether a failure of a ends its batch. Reading a
// container's memory statistics and telling the runtime the pod's new
// totals are best effort in the kubelet (the latter up to 1.35, and for a
// rollback from 1.36: UpdatePodSandboxResources.RejectsResize); recording an event and writing a
// status are the API server's business and never stop the kubelet.
func StopsOnFailure(a Action) bool {
	switch a := a.(type) {
	case UpdatePodSandboxResources:
		return a.RejectsResize
	case ReadContainerStats, RecordEvent, WriteStatus:
		return false
	}
	return true
}

// Result is what the driver learned from performing one action.
type Result struct {
	// Err is the failure, as the cgroup manager, the runtime or the
	// checkpoint returned it; nil on success.
	Err error
	// NotFound is set with Err when the runtime said the object does not
	// exist (cri.ErrNotFound): teardown treats that as done.
	NotFound bool
	// Exists answers ReadCgroupExists.
	Exists bool
	// Unimplemented is set when the runtime answered a best-effort
	// UpdatePodSandboxResources with Unimplemented and the driver took
	// that as success (Err is nil): the kubelet logs it.
	Unimplemented bool
	// ID is the ID RunPodSandbox or CreateContainer returned.
	ID string
	// Values answers ReadCgroup.
	Values cgconfig.Values
	// Usage answers ReadMemoryUsage, in bytes.
	Usage int64
	// Status answers ReadContainerStatus.
	Status *runtimeapi.ContainerStatus
	// Stats answers ReadContainerStats.
	Stats *runtimeapi.ContainerStats
}

// Event is an event the kubelet emits about a pod. The driver records it
// with the reporting component and host.
//
// A resize event's message carries the pod's resources as JSON, costly to
// format and often never read: such an event leaves Message empty and
// holds Resize instead, which renders it (Text).
type Event struct {
	Time      time.Time
	Namespace string
	Pod       string
	Type      string // v1.EventTypeNormal or v1.EventTypeWarning
	Reason    string
	Message   string
	Container string // the container it is about, "" for the pod
	Resize    ResizeMessage
}

// Text is the event's message: Message, or the rendered resize message.
func (e Event) Text() string {
	if e.Message == "" && e.Resize.Listed {
		return e.Resize.String()
	}
	return e.Message
}

// ReadCgroupExists asks whether a cgroup exists (EnsureExists' first half).
type ReadCgroupExists struct{ Path string }

// CreateCgroup creates a cgroup and its missing parents.
type CreateCgroup struct{ Path string }

// SetCgroup writes the set fields of Values to a pod cgroup.
type SetCgroup struct {
	Path   string
	Values cgconfig.Values
}

// ReadCgroup reads a pod cgroup's cpu and memory files (GetPodCgroupConfig).
type ReadCgroup struct{ Path string }

// ReadMemoryUsage reads the memory charged to a cgroup.
type ReadMemoryUsage struct{ Path string }

// DeleteCgroup removes a cgroup; a missing one is not an error.
type DeleteCgroup struct{ Path string }

// RunPodSandbox creates and starts a pod's sandbox.
type RunPodSandbox struct {
	Pod    string // namespace/name, for reading
	Config *runtimeapi.PodSandboxConfig
}

// StopPodSandbox stops a sandbox.
type StopPodSandbox struct{ ID string }

// RemovePodSandbox removes a sandbox.
type RemovePodSandbox struct{ ID string }

// UpdatePodSandboxResources tells the runtime a pod's new totals. Up to
// 1.35 it follows a pod cgroup write and the kubelet ignores its answer;
// from 1.36 it precedes the write and a failure rejects the resize
// (RejectsResize), and a failed write is followed by one that restores the
// previous totals, whose answer is ignored again.
type UpdatePodSandboxResources struct {
	Request *runtimeapi.UpdatePodSandboxResourcesRequest
	// RejectsResize makes a failure stop the batch: the runtime refused
	// the resize of Resource.
	RejectsResize bool
	Resource      v1.ResourceName
}

// CreateContainer creates one container of a pod.
type CreateContainer struct {
	Name          string
	SandboxID     string
	Config        *runtimeapi.ContainerConfig
	SandboxConfig *runtimeapi.PodSandboxConfig
}

// StartContainer starts a created container.
type StartContainer struct{ Name, ID string }

// StopContainer stops a container with a grace period in seconds. Reason
// says, for a restart a resize needs, which value changed under which
// policy.
type StopContainer struct {
	Name, ID string
	Timeout  int64
	Reason   string
}

// RemoveContainer removes a stopped container.
type RemoveContainer struct{ ID string }

// ReadContainerStatus asks the runtime for a container's status.
type ReadContainerStatus struct{ Name, ID string }

// ReadContainerStats asks the runtime for a container's statistics (its
// memory usage, for the check before a limit goes down).
type ReadContainerStats struct{ Name, ID string }

// UpdateContainerResources resizes a running container in place.
type UpdateContainerResources struct {
	Name, ID  string
	Resources *runtimeapi.ContainerResources
}

// WriteAllocated records a pod's allocation in allocated_pods_state. It
// holds its record by pointer, so that handing one out allocates nothing;
// like every action it is valid until its batch is reported (Retain keeps
// one longer).
type WriteAllocated struct{ *AllocationRecord }

// AllocationRecord is a pod's allocation record.
type AllocationRecord struct {
	UID       types.UID
	Resources allocation.PodResources
}

// WriteActuatedContainer records in actuated_pods_state what the runtime
// accepted for one container.
type WriteActuatedContainer struct {
	UID       types.UID
	Name      string
	Resources v1.ResourceRequirements
}

// WriteActuated replaces a pod's record in actuated_pods_state (pod-level
// resources).
type WriteActuated struct {
	UID       types.UID
	Resources allocation.PodResources
}

// DeleteCheckpoints forgets a pod in both checkpoints.
type DeleteCheckpoints struct{ UID types.UID }

// RecordEvent records an event with the API server. It holds its event by
// pointer, so that handing one out allocates nothing; like every action it
// is valid until its batch is reported (Retain keeps one longer).
type RecordEvent struct{ Event *Event }

// Retain returns a copy of a that stays valid after its batch is reported:
// the core reuses the memory of the actions it hands out.
func Retain(a Action) Action {
	switch a := a.(type) {
	case WriteAllocated:
		return WriteAllocated{new(*a.AllocationRecord)}
	case RecordEvent:
		return RecordEvent{new(*a.Event)}
	}
	return a
}

// WriteStatus writes a pod's status to the API server. The status is the
// core's own and is never changed after it is handed out: the API may keep
// it as it is (and share it with later statuses, which reuse its unchanged
// parts).
//
// Seq numbers the statuses the core hands out, in the order it makes
// them. Batches are performed concurrently, so two statuses of one pod
// (a pod sync's and a pending-resize retry's, say) may reach the driver
// out of order: a driver writes a status only if no later one of that pod
// has been written, as the kubelet's status manager writes only its
// newest version of a pod's status (pkg/kubelet/status/status_manager.go,
// syncPod and its apiStatusVersions).
type WriteStatus struct {
	Namespace, Name string
	UID             types.UID
	Status          *v1.PodStatus
	Seq             uint64
}

// DeletePod deletes the pod object of that UID from the API server.
type DeletePod struct {
	Namespace, Name string
	UID             types.UID
}

func (ReadCgroupExists) action()          {}
func (CreateCgroup) action()              {}
func (SetCgroup) action()                 {}
func (ReadCgroup) action()                {}
func (ReadMemoryUsage) action()           {}
func (DeleteCgroup) action()              {}
func (RunPodSandbox) action()             {}
func (StopPodSandbox) action()            {}
func (RemovePodSandbox) action()          {}
func (UpdatePodSandboxResources) action() {}
func (CreateContainer) action()           {}
func (StartContainer) action()            {}
func (StopContainer) action()             {}
func (RemoveContainer) action()           {}
func (ReadContainerStatus) action()       {}
func (ReadContainerStats) action()        {}
func (UpdateContainerResources) action()  {}
func (WriteAllocated) action()            {}
func (WriteActuatedContainer) action()    {}
func (WriteActuated) action()             {}
func (DeleteCheckpoints) action()         {}
func (RecordEvent) action()               {}
func (WriteStatus) action()               {}
func (DeletePod) action()                 {}

func (a ReadCgroupExists) String() string { return "cgroup exists? " + a.Path }
func (a CreateCgroup) String() string     { return "cgroup create " + a.Path }
func (a SetCgroup) String() string        { return "cgroup set " + a.Path + " " + FormatValues(a.Values) }
func (a ReadCgroup) String() string       { return "cgroup read " + a.Path }
func (a ReadMemoryUsage) String() string  { return "cgroup memory usage " + a.Path }
func (a DeleteCgroup) String() string     { return "cgroup delete " + a.Path }
func (a RunPodSandbox) String() string    { return "RunPodSandbox " + a.Pod }
func (a StopPodSandbox) String() string   { return "StopPodSandbox " + a.ID }
func (a RemovePodSandbox) String() string { return "RemovePodSandbox " + a.ID }
func (a UpdatePodSandboxResources) String() string {
	return "UpdatePodSandboxResources " + FormatLinux(a.Request.GetResources()) + " overhead " + FormatLinux(a.Request.GetOverhead())
}
func (a CreateContainer) String() string {
	return fmt.Sprintf("CreateContainer %s attempt %d %s", a.Name, a.Config.GetMetadata().GetAttempt(), FormatLinux(a.Config.GetLinux().GetResources()))
}
func (a StartContainer) String() string { return "StartContainer " + a.Name }
func (a StopContainer) String() string {
	return fmt.Sprintf("StopContainer %s grace %ds", a.Name, a.Timeout)
}
func (a RemoveContainer) String() string     { return "RemoveContainer " + a.ID }
func (a ReadContainerStatus) String() string { return "ContainerStatus " + a.Name }
func (a ReadContainerStats) String() string  { return "ContainerStats " + a.Name }
func (a UpdateContainerResources) String() string {
	return "UpdateContainerResources " + a.Name + " " + FormatLinux(a.Resources.GetLinux())
}
func (a WriteAllocated) String() string {
	if a.AllocationRecord == nil {
		return "checkpoint allocated <nil>"
	}
	return "checkpoint allocated " + string(a.UID) + " " + formatPodResources(a.Resources)
}
func (a WriteActuatedContainer) String() string {
	return "checkpoint actuated " + string(a.UID) + " " + a.Name + " " + FormatRequirements(a.Resources)
}
func (a WriteActuated) String() string {
	return "checkpoint actuated " + string(a.UID) + " " + formatPodResources(a.Resources)
}
func (a DeleteCheckpoints) String() string { return "checkpoint delete " + string(a.UID) }
func (a RecordEvent) String() string {
	if a.Event == nil {
		return "event <nil>"
	}
	return fmt.Sprintf("event %s %s %s", a.Event.Type, a.Event.Reason, a.Event.Text())
}
func (a WriteStatus) String() string {
	var phase v1.PodPhase
	if a.Status != nil {
		phase = a.Status.Phase
	}
	return fmt.Sprintf("status %s/%s phase %s", a.Namespace, a.Name, phase)
}
func (a DeletePod) String() string { return "delete pod " + a.Namespace + "/" + a.Name }

// FormatValues renders the set fields of cgroup values, in the order a
// manager writes them.
func FormatValues(v cgconfig.Values) string {
	var parts []string
	if v.MemoryLimit != nil {
		parts = append(parts, fmt.Sprintf("memory=%s", formatLimit(*v.MemoryLimit)))
	}
	if v.CPUShares != nil {
		parts = append(parts, fmt.Sprintf("shares=%d", *v.CPUShares))
	}
	if v.CPUWeight != nil {
		parts = append(parts, fmt.Sprintf("weight=%d", *v.CPUWeight))
	}
	if v.CPUPeriod != nil {
		parts = append(parts, fmt.Sprintf("period=%d", *v.CPUPeriod))
	}
	if v.CPUQuota != nil {
		parts = append(parts, fmt.Sprintf("quota=%s", formatLimit(*v.CPUQuota)))
	}
	return strings.Join(parts, " ")
}

func formatLimit(n int64) string {
	if n == cgconfig.Unlimited {
		return "max"
	}
	return fmt.Sprint(n)
}

// FormatLinux renders the cpu and memory fields of CRI Linux resources.
func FormatLinux(r *runtimeapi.LinuxContainerResources) string {
	if r == nil {
		return "{}"
	}
	return fmt.Sprintf("{shares=%d quota=%d period=%d memory=%d}", r.CpuShares, r.CpuQuota, r.CpuPeriod, r.MemoryLimitInBytes)
}

// FormatRequirements renders requests and limits compactly.
func FormatRequirements(r v1.ResourceRequirements) string {
	list := func(l v1.ResourceList) string {
		var parts []string
		for _, name := range slices.Sorted(maps.Keys(l)) {
			q := l[name]
			parts = append(parts, string(name)+"="+q.String())
		}
		return strings.Join(parts, ",")
	}
	return "requests{" + list(r.Requests) + "} limits{" + list(r.Limits) + "}"
}

func formatPodResources(r allocation.PodResources) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(r.ContainerResources)) {
		parts = append(parts, name+":"+FormatRequirements(r.ContainerResources[name]))
	}
	if r.PodLevelResources != nil {
		parts = append(parts, "pod:"+FormatRequirements(*r.PodLevelResources))
	}
	return strings.Join(parts, " ")
}

// resultOf finds the first action of type T among the performed ones and
// its result. Batches carry the events an operation decided before them,
// so an operation finds the result it waits for by the action's type.
func resultOf[T Action](done []Action, res []Result) (T, Result, bool) {
	for i, a := range done {
		if t, ok := a.(T); ok {
			return t, res[i], true
		}
	}
	var zero T
	return zero, Result{}, false
}

// Input is what Step takes: something that happened to the node. Every
// input carries the time it happened on the driver's clock; the core
// reads no clock of its own. The inputs a driver sends most, BatchDone and
// ResizeRequested, may also be given by pointer, so that a driver that
// reuses one does not allocate to box it.
//
// The core keeps the pods and records an input carries. The top level of
// each pod (the v1.Pod struct itself) becomes the core's: it keeps the
// kubelet's status there, in place. Nothing a pod or record refers to
// (its spec's slices and maps, a record's requirements) is ever changed,
// so that may be shared with the API server: hand the core a shallow copy
// of a pod you share, and change nothing it refers to afterwards.
type Input interface {
	input()
}

// Start is the first input of a Core: the kubelet starting (or
// restarting) on what survives it. Pods are the API server's pods in
// creation order; Allocated and Actuated are the checkpoints' contents;
// Sandboxes and Containers are what the runtime lists.
type Start struct {
	Pods       []*v1.Pod
	Allocated  map[types.UID]allocation.PodResources
	Actuated   map[types.UID]allocation.PodResources
	Sandboxes  []*runtimeapi.PodSandbox
	Containers []*runtimeapi.Container
	Now        time.Time
}

// PodAdded is a new pod bound to the node (HandlePodAdditions), as the API
// server created it.
type PodAdded struct {
	Pod *v1.Pod
	Now time.Time
}

// PodsAdded is several new pods bound to the node at once, in creation
// order: HandlePodAdditions admits each in turn and then, when one of them
// has a spec that differs from its allocation (from 1.35; after every
// batch in the 1.33 and 1.34 profiles), retries the pending resizes once
// (pods_added).
type PodsAdded struct {
	Pods []*v1.Pod
	Now  time.Time
}

// ResizeRequested is a pod update after the API server accepted a resize
// (HandlePodUpdates): Pod has the new spec and generation.
type ResizeRequested struct {
	Pod *v1.Pod
	Now time.Time
}

// DeleteRequested asks the kubelet to stop and remove a pod: its
// containers, sandbox, cgroup, checkpoints and API object.
type DeleteRequested struct {
	UID types.UID
	Now time.Time
	// Pod, when set, is the pod as the API server marked it for deletion
	// (its deletionTimestamp set): the core takes its top level as its
	// own, as for ResizeRequested.
	Pod *v1.Pod
}

// SyncRequested asks for a sync of every admitted pod, after something
// changed under the node (memory usage, a container's exit).
type SyncRequested struct {
	Now time.Time
}

// Tick is the clock moving: the timers due at Now fire (the periodic
// retry of pending resizes, pod resyncs and backoffs).
type Tick struct {
	Now time.Time
	// Unchanged is the driver's word that nothing but the batches it
	// performed for the core changed the node's cgroups and runtime since
	// the last Tick, as a simulation can tell. The resync of a pod whose
	// last sync only read (the same status, no event, no error) would
	// then read the same again, so it is not run: its timer is armed as
	// the sync would have armed it (Core.tick). False, the zero value,
	// runs every resync, as a real host needs.
	Unchanged bool
}

// BatchDone reports the results of a batch: one Result per action the
// driver performed, in order. The core reads Results during Step and keeps
// no reference to the slice, so a driver may reuse it.
type BatchDone struct {
	ID      uint64
	Results []Result
	Now     time.Time
}

// Poll asks for the next batch there is to do, without news.
type Poll struct{}

func (Start) input()           {}
func (PodAdded) input()        {}
func (PodsAdded) input()       {}
func (ResizeRequested) input() {}
func (DeleteRequested) input() {}
func (SyncRequested) input()   {}
func (Tick) input()            {}
func (BatchDone) input()       {}
func (Poll) input()            {}

// IsRead reports whether a only reads the node (a cgroup, memory usage,
// a container's status or stats): performing it changes nothing.
func IsRead(a Action) bool {
	switch a.(type) {
	case ReadCgroupExists, ReadCgroup, ReadMemoryUsage, ReadContainerStatus, ReadContainerStats:
		return true
	}
	return false
}

// Ready is what Step returns: the next batch for the caller to perform
// (nil when there is nothing it can do now), and when the earliest timer
// falls due, for a driver that arms a real timer. With logging on
// (Core.SetLogging), Logs are the lines the kubelet logs for what this
// Step decided and for the results it took, in order; they are the
// caller's, and nil with logging off.
type Ready struct {
	Batch     *Batch
	NextTimer time.Time
	Logs      []LogRecord
	// Metrics are the metrics the kubelet recorded during the step, while
	// they are on (Core.RecordMetrics); nil while they are off. They are
	// the core's and valid until the next Step: record them before it.
	Metrics *Metrics
}

package core

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/allocation"
)

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

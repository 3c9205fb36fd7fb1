package resize

import (
	"context"
	"log/slog"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/allocation/state"
	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/resize/apiserver"
	"github.com/resizelet/resizelet/resize/core"
	"github.com/resizelet/resizelet/resize/metrics"
	"github.com/resizelet/resizelet/resize/profile"
)

// Profile is the kubelet version whose behaviour a Node reproduces
// (profile.Version). The profiles differ only where package profile says
// they do.
type Profile = profile.Version

// The behaviour profiles. Profile135 is the default and the version of record.
const (
	Profile133 = profile.V133
	Profile134 = profile.V134
	Profile135 = profile.V135
	Profile136 = profile.V136
	Profile137 = profile.V137
)

// Feature gate names that change the resize path (package profile).
const (
	GateInPlacePodVerticalScaling                    = profile.GateInPlacePodVerticalScaling
	GateInPlacePodLevelResourcesVerticalScaling      = profile.GateInPlacePodLevelResourcesVerticalScaling
	GateInPlacePodVerticalScalingExclusiveCPUs       = profile.GateInPlacePodVerticalScalingExclusiveCPUs
	GateInPlacePodVerticalScalingExclusiveMemory     = profile.GateInPlacePodVerticalScalingExclusiveMemory
	GateInPlacePodVerticalScalingInitContainers      = profile.GateInPlacePodVerticalScalingInitContainers
	GatePodLevelResources                            = profile.GatePodLevelResources
	GateMemoryManager                                = profile.GateMemoryManager
	GateCustomCPUCFSQuotaPeriod                      = profile.GateCustomCPUCFSQuotaPeriod
	GateInPlacePodVerticalScalingMemoryBackedVolumes = profile.GateInPlacePodVerticalScalingMemoryBackedVolumes
	GateMemoryQoS                                    = profile.GateMemoryQoS
	GatePodLevelResourcesFixDefaulting               = profile.GatePodLevelResourcesFixDefaulting
	GatePodLevelResourcesFixKubeletQOSClass          = profile.GatePodLevelResourcesFixKubeletQOSClass
)

// The API server side lives in package apiserver; these names keep it
// reachable from here.
type (
	// Cluster is the in-memory API server (apiserver.Cluster).
	Cluster = apiserver.Cluster
	// ClusterOptions configure it.
	ClusterOptions = apiserver.ClusterOptions
	// Event is one Kubernetes event about a pod.
	Event = apiserver.Event
	// ResizeOptions are what the resize subresource depends on.
	ResizeOptions = apiserver.ResizeOptions
	// InvalidError is the API server's answer to an invalid resize.
	InvalidError = apiserver.InvalidError
	// PatchError is the answer to a malformed patch.
	PatchError = apiserver.PatchError
	// ResizeRequest is a resize without JSON (apiserver.ResizeRequest).
	ResizeRequest = apiserver.ResizeRequest
	// ContainerResize is one container's new requests and limits.
	ContainerResize = apiserver.ContainerResize
	// Amounts are the cpu and memory amounts of one list (requests or
	// limits) of a ResizeRequest: MilliCPU in millicores (500 is "500m"),
	// Memory in bytes (128<<20 is "128Mi"), each set only with its Has
	// flag. CPU, Memory and CPUMemory make them.
	Amounts = apiserver.Amounts
)

// CPU is Amounts that set cpu alone, in millicores: CPU(500) is "500m".
func CPU(milliCPU int64) Amounts { return Amounts{MilliCPU: milliCPU, HasCPU: true} }

// Memory is Amounts that set memory alone, in bytes: Memory(128<<20) is
// "128Mi".
func Memory(bytes int64) Amounts { return Amounts{Memory: bytes, HasMemory: true} }

// CPUMemory is Amounts that set both: cpu in millicores, memory in bytes.
func CPUMemory(milliCPU, memory int64) Amounts { return apiserver.CPUMemory(milliCPU, memory) }

// ErrPodNotFound is returned for a pod name the cluster or node does not know.
var ErrPodNotFound = apiserver.ErrPodNotFound

// ErrConflict is matched by the API server's 409 for a resize patch whose
// metadata.resourceVersion is not the stored pod's (apiserver.ErrConflict).
var ErrConflict = apiserver.ErrConflict

// NewCluster returns an empty in-memory API server.
func NewCluster(opts ClusterOptions) *Cluster { return apiserver.NewCluster(opts) }

// ApplyResize is the resize subresource on its own (apiserver.ApplyResize).
func ApplyResize(old *v1.Pod, patch []byte, opts ResizeOptions) (*v1.Pod, error) {
	return apiserver.ApplyResize(old, patch, opts)
}

// API is what a Node needs of the API server: the pods bound to it, the
// resize subresource, pod status writes and events. *Cluster implements
// it; an embedder can put a real API server behind it.
//
// Every method takes the context of the node's call that makes it, first,
// as a client of a real API server does; preconditions and conflicts are
// the API server's: a resize patch that names a metadata.resourceVersion
// other than the stored pod's is its 409 (ErrConflict), and a status
// write is for the pod of that UID, as the kubelet's status manager
// writes it (the API server's answer to another UID is an error). The
// in-memory *Cluster answers at once and does not read the context.
//
// Implementations must be safe for concurrent use. A Node never calls API
// while it holds its own lock.
type API interface {
	// CreatePod stores a new pod, defaulted and validated, and returns it.
	// The node only reads the pod returned.
	CreatePod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error)
	// GetPod returns a copy of the pod, or an error wrapping ErrPodNotFound.
	GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error)
	// ListPods returns copies of all pods in creation order.
	ListPods(ctx context.Context) []*v1.Pod
	// ResizePod applies a resize patch through the resize subresource and
	// returns the updated pod; on error nothing changes. The node only
	// reads the pod returned, so it may be the API's own copy.
	ResizePod(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error)
	// DeletePod removes the pod.
	DeletePod(ctx context.Context, namespace, name string) error
	// UpdatePodStatus replaces the pod's status; it fails if the pod is
	// gone or its UID changed. The node never changes a status it has
	// written (later statuses share its unchanged parts), so the API may
	// keep it without a copy.
	UpdatePodStatus(ctx context.Context, namespace, name string, uid types.UID, status v1.PodStatus) error
	// RecordEvent stores an event. A resize event comes with its message
	// unformatted in Lazy (Message empty): render it when the event is read.
	RecordEvent(ctx context.Context, e Event)
}

var _ API = (*Cluster)(nil)

// NodePodLister is an API that lists the pods of some nodes alone
// (apiserver.Cluster.ListNodePods): copies of the pods whose spec.nodeName
// is one of nodes ("" for the pods without one), in creation order, as
// ListPods gives them. NewNode reads its pods through it when the API has
// it, so that a node starting in a cluster of many nodes pays for its own
// pods rather than every pod's; without it, NewNode lists every pod and
// keeps its own. An API that embeds a *Cluster to change what ListPods
// shows must change ListNodePods alike, or hide it.
type NodePodLister interface {
	ListNodePods(ctx context.Context, nodes ...string) []*v1.Pod
}

var _ NodePodLister = (*Cluster)(nil)

// GracefulDeleter is an API that deletes pods gracefully, as the API
// server does a pod bound to a node (apiserver.Cluster.MarkPodDeleted):
// the pod gets its deletionTimestamp and stays until the kubelet has torn
// it down and deletes it (API.DeletePod). Node.DeletePod marks the pod
// first when the API has it, so that a kubelet restart in the middle of a
// teardown finishes it, and a failed teardown is tried again at every
// resync. It marks the pod only while it has uid (any pod for ""), so that
// a pod created anew under the name is not marked for another's teardown;
// another pod is ErrPodNotFound. An implementation that wraps another API
// may return errors.ErrUnsupported when the one it wraps does not delete
// gracefully.
type GracefulDeleter interface {
	MarkPodDeleted(ctx context.Context, namespace, name string, uid types.UID, now time.Time) (*v1.Pod, error)
}

var _ GracefulDeleter = (*Cluster)(nil)

// UIDDeleter is an API that deletes a pod only while it has the given
// UID, as the kubelet's status manager deletes a pod it has torn down
// (grace period 0, the UID as a precondition): a pod created anew under
// the name meanwhile is left alone, and that is not an error. A Node
// deletes through it when the API has it (kubeapi.API does), and through
// API.DeletePod otherwise.
type UIDDeleter interface {
	DeletePodUID(ctx context.Context, namespace, name string, uid types.UID) error
}

// RequestResizer is an API that also takes typed resize requests
// (apiserver.Cluster.ResizePodRequest). Node.Resize uses it for a typed
// ResizeOp when the API has it and sends the request's patch through
// ResizePod when it has not; both give the same pod.
//
// As with ResizePod, the node only reads the pod returned.
type RequestResizer interface {
	ResizePodRequest(ctx context.Context, namespace, name string, req ResizeRequest) (*v1.Pod, error)
}

var _ RequestResizer = (*Cluster)(nil)

// PatchResizer is an API whose resize subresource takes every patch type
// the API server takes (apiserver.Cluster.ResizePodPatch): strategic merge,
// JSON merge and JSON patches. Node.Resize uses it; an API without it
// takes strategic merge patches only. As with ResizePod, the node only
// reads the pod returned.
type PatchResizer interface {
	ResizePodPatch(ctx context.Context, namespace, name string, pt types.PatchType, patch []byte) (*v1.Pod, error)
}

var _ PatchResizer = (*Cluster)(nil)

// NodeInfo is what the API server knows of a node (apiserver.NodeInfo).
type NodeInfo = apiserver.NodeInfo

// NodeRegistrar is an API that keeps the node's Node object, as a kubelet
// registers one (apiserver.Cluster.RegisterNode): NewNode registers its
// name, OS and allocatable there, so that the API server's admission
// plugins that read the node (the 1.36 PodResizeValidator) can check
// resizes against it. An API without it gets no registration.
type NodeRegistrar interface {
	RegisterNode(ctx context.Context, node NodeInfo)
}

var _ NodeRegistrar = (*Cluster)(nil)

// Clock is the node's source of time. Resize timers (the pending-resize
// retry, the pod resync) run on it.
type Clock interface {
	Now() time.Time
}

// WallClock is the Clock of a node on real time (time.Now), as against a
// real API server: its timers fire when Tick is called, which its driver
// does periodically (kubeapi.Run every second).
type WallClock struct{}

// Now returns time.Now().
func (WallClock) Now() time.Time { return time.Now() }

// FakeClock is a Clock that moves only when told to. Node.Advance moves it.
type FakeClock struct {
	mu  sync.Mutex
	now time.Time
}

// DefaultStart is when every simulated clock starts unless told
// otherwise: a node's default clock (NewNode without Deps.Clock), a
// fleet's (FleetOptions.Start), a scenario's (scenario.Start) and the
// benchmark world's (benchworld.Start).
var DefaultStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// NewFakeClock returns a FakeClock at t; the zero time means DefaultStart.
func NewFakeClock(t time.Time) *FakeClock {
	if t.IsZero() {
		t = DefaultStart
	}
	return &FakeClock{now: t}
}

// Now returns the clock's time.
func (c *FakeClock) Now() time.Time {
	if c == nil {
		return time.Time{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to t. On a nil clock it does nothing.
func (c *FakeClock) Set(t time.Time) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// advanceTo moves the clock to t unless it is already there or later, so
// that Advances running at once never move it back.
func (c *FakeClock) advanceTo(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
}

// Deps are the parts a Node drives. Cluster, Cgroups and Runtime are
// required; they outlive a Node, so a kubelet restart is a new Node built
// on the same Deps.
type Deps struct {
	Cluster API            // the API server side: pods, their status, events
	Cgroups cgroup.Manager // the node's cgroup hierarchy
	Runtime cri.Runtime    // the container runtime
	Clock   Clock          // defaults to a FakeClock at DefaultStart
	// CheckpointDir holds allocated_pods_state and actuated_pods_state. An
	// empty value keeps checkpoints in memory only (no restart survival),
	// unless Allocated and Actuated are given.
	CheckpointDir string
	// Allocated and Actuated, when set, are the two checkpoints themselves
	// (state.NewMemory gives ones that survive a restart within a process);
	// they take precedence over CheckpointDir.
	Allocated state.State
	Actuated  state.State
	// Logger, when set, gets the lines the kubelet v1.35.4 logs on the
	// resize path, with its messages and key/value pairs, at the slog
	// level of their klog verbosity (core.LogRecord.Level: klog.InfoS is
	// Info, V(n) is slog.Level(-n), so V(4) is Debug; errors are Error),
	// stamped with the node's clock. Nil (the default) logs nothing and
	// costs nothing. The package documentation lists the lines.
	Logger *slog.Logger
	// Metrics, when set, records the kubelet's resize metrics (package
	// resize/metrics). Nodes may share one: the counts add up and the
	// gauges are the sum over the nodes, and a kubelet restart (a new
	// Node on the same Deps) takes its predecessor's share of the gauges
	// over instead of adding to it. nil records nothing, at no cost.
	Metrics *metrics.Metrics
	// BoundPodsOnly makes the node take only the pods bound to it: those
	// whose spec.nodeName is its name (NodeConfig.Name). By default a node
	// also takes the pods without a nodeName, as a node alone on its API
	// server does (whoever adds a pod to that node binds it there, and the
	// pod keeps its empty nodeName); a pod bound to another node is never
	// the node's. With BoundPodsOnly, AddPod binds a pod without a
	// nodeName to the node (sets spec.nodeName), and a restarted node
	// leaves the cluster's unbound pods alone, as kubelets sharing an API
	// server do. A Fleet sets it on every node.
	BoundPodsOnly bool

	// backend is the Backend whose Deps these are (Backend.Deps): a node
	// started on them is one of its nodes, which its Close stops, and a
	// closed Backend starts none.
	backend *Backend
}

// Event reasons the kubelet uses on the resize path (pkg/kubelet/events).
const (
	ReasonResizeStarted    = core.ReasonResizeStarted
	ReasonResizeCompleted  = core.ReasonResizeCompleted
	ReasonResizeDeferred   = core.ReasonResizeDeferred
	ReasonResizeInfeasible = core.ReasonResizeInfeasible
	ReasonResizeError      = core.ReasonResizeError
	ReasonKilling          = core.ReasonKilling
	ReasonCreated          = core.ReasonCreated
	ReasonStarted          = core.ReasonStarted
	ReasonPulled           = core.ReasonPulled
	ReasonFailed           = core.ReasonFailed
)

// The resize event messages (package core).
var (
	ResizeStartedMessage   = core.ResizeStartedMessage
	ResizeCompletedMessage = core.ResizeCompletedMessage
	ResizeErrorMessage     = core.ResizeErrorMessage
	ResizePendingMessage   = core.ResizePendingMessage
)

// ValidateResize is the API server's resize validation (package apiserver).
var ValidateResize = apiserver.ValidateResize

// DefaultPod is the API server's v1 defaulting for resize (package apiserver).
var DefaultPod = apiserver.DefaultPod

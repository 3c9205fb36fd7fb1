package resize

import (
	"context"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
)

// Profile is the kubelet version whose behaviour a Node reproduces. The
// profiles differ only where the reference's version history says they do.
type Profile string

// The behaviour profiles. Profile135 is the default and the version of record.
const (
	Profile133 Profile = "1.33"
	Profile134 Profile = "1.34"
	Profile135 Profile = "1.35"
	Profile136 Profile = "1.36"
)

// Feature gate names that change the resize path.
const (
	GateInPlacePodVerticalScaling                = "InPlacePodVerticalScaling"
	GateInPlacePodLevelResourcesVerticalScaling  = "InPlacePodLevelResourcesVerticalScaling"
	GateInPlacePodVerticalScalingExclusiveCPUs   = "InPlacePodVerticalScalingExclusiveCPUs"
	GateInPlacePodVerticalScalingExclusiveMemory = "InPlacePodVerticalScalingExclusiveMemory"
	GateInPlacePodVerticalScalingInitContainers  = "InPlacePodVerticalScalingInitContainers"
	GatePodLevelResources                        = "PodLevelResources"
	GateMemoryManager                            = "MemoryManager"
	GateCustomCPUCFSQuotaPeriod                  = "CustomCPUCFSQuotaPeriod"
)

// NodeConfig describes the node a Node simulates or drives: its resources,
// OS, cgroup setup, resource managers and feature gates, and the kubelet
// version. The zero value of each field means the kubelet's default (see
// WithDefaults).
type NodeConfig struct {
	Name                string
	Capacity            v1.ResourceList
	Allocatable         v1.ResourceList // defaults to Capacity
	OS                  string          // "linux" (default) or "windows"
	CgroupVersion       cgroup.Version  // default cgroup.V2
	CgroupDriver        cgroup.Driver   // default cgroup.DriverCgroupfs
	CPUManagerPolicy    string          // "none" (default) or "static"
	MemoryManagerPolicy string          // "None" (default) or "Static"
	SwapBehavior        string          // "NoSwap" (default) or "LimitedSwap"
	CPUCFSQuota         *bool           // --cpu-cfs-quota; nil means true
	CPUCFSQuotaPeriod   time.Duration   // default 100ms
	// CgroupRoot is the kubelet's --cgroup-root: the cgroup, relative to the
	// hierarchy root, under which "kubepods" lives. Empty means the root.
	CgroupRoot   string
	FeatureGates map[string]bool // explicit settings; the profile gives the defaults
	Profile      Profile         // default Profile135

	// Image and Command, when set, replace every container's image and
	// command when the node creates containers: a real runtime needs an
	// image it has and a command that keeps running.
	Image   string
	Command []string
}

// Event is one Kubernetes event the kubelet emitted about a pod.
type Event struct {
	Time      time.Time
	Namespace string
	Pod       string
	Type      string // v1.EventTypeNormal or v1.EventTypeWarning
	Reason    string
	Message   string
	Source    string // the reporting component, "kubelet", as kubectl describe shows it under From
	Host      string // the node the component runs on
}

// Clock is the node's source of time. Resize timers (the pending-resize
// retry, the pod resync) run on it.
type Clock interface {
	Now() time.Time
}

// FakeClock is a Clock that moves only when told to. Node.Advance moves it.
type FakeClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewFakeClock returns a FakeClock at t.
func NewFakeClock(t time.Time) *FakeClock { return &FakeClock{now: t} }

// Now returns the clock's time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to t.
func (c *FakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// Deps are the parts a Node drives. Cluster, Cgroups and Runtime are
// required; they outlive a Node, so a kubelet restart is a new Node built
// on the same Deps.
type Deps struct {
	Cluster *Cluster       // the API server side: pods, their status, events
	Cgroups cgroup.Manager // the node's cgroup hierarchy
	Runtime cri.Runtime    // the container runtime
	Clock   Clock          // defaults to a FakeClock at the Unix epoch
	// CheckpointDir holds allocated_pods_state and actuated_pods_state. An
	// empty value keeps checkpoints in memory only (no restart survival).
	CheckpointDir string
}

var _ = context.Background
var _ = resource.MustParse

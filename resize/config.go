package resize

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/resize/core"
	"github.com/resizelet/resizelet/resize/profile"
)

// NodeConfig describes the node a Node simulates or drives: its resources,
// OS, cgroup setup, resource managers, feature gates and kubelet version.
// The zero value of each field means the kubelet's default (WithDefaults
// gives them); Validate names the first field a kubelet would not start
// with. A scenario file's node block is a NodeConfig, defaulted and
// checked by the same code. It is the core's configuration
// (core.NodeConfig), field for field, and converts to it.
type NodeConfig struct {
	// Name is the node's name: a DNS subdomain, "node-1" by default.
	Name string
	// Capacity is the node's capacity, 16 CPUs, 64Gi of memory and 110
	// pods by default (core.DefaultCapacity).
	Capacity v1.ResourceList
	// Allocatable is what pods may request, the capacity by default; no
	// amount may exceed the capacity's.
	Allocatable v1.ResourceList
	// OS is "linux" (the default) or "windows".
	OS string
	// CgroupVersion is the hierarchy's version, cgconfig.V2 by default. A
	// backend's cgroup manager reports its own, which wins.
	CgroupVersion cgconfig.Version
	// CgroupDriver is the kubelet's --cgroup-driver, cgconfig.DriverCgroupfs
	// by default; a runtime that reports one gives it when this is empty.
	CgroupDriver cgconfig.Driver
	// CPUManagerPolicy is "none" (the default) or "static".
	CPUManagerPolicy string
	// MemoryManagerPolicy is "None" (the default) or "Static".
	MemoryManagerPolicy string
	// SwapBehavior is "NoSwap" (the default) or "LimitedSwap".
	SwapBehavior string
	// CPUCFSQuota is the kubelet's --cpu-cfs-quota; nil means true.
	CPUCFSQuota *bool
	// CPUCFSQuotaPeriod is the kubelet's --cpu-cfs-quota-period, 100ms by
	// default; it applies with the CustomCPUCFSQuotaPeriod gate.
	CPUCFSQuotaPeriod time.Duration
	// CgroupRoot is the kubelet's --cgroup-root: the cgroup under which
	// "kubepods" lives, relative to the root of the cgroup hierarchy,
	// written with or without a leading "/" (the hierarchy root, never the
	// host's root directory), perhaps with one trailing "/". Empty and "/"
	// mean the hierarchy root. A value with an empty, "." or ".." component
	// or a control character is refused (cgroup.ErrInvalidPath).
	CgroupRoot string
	// FeatureGates are explicit gate settings, of
	// profile.KnownGates(Profile); the profile gives the defaults, and
	// another name is refused as the kubelet refuses it.
	FeatureGates map[string]bool
	// Profile is the Kubernetes version the node reproduces, Profile135
	// by default.
	Profile profile.Version

	// Image and Command, when set, replace every container's image and
	// command when the node creates containers: a real runtime needs an
	// image it has and a command that keeps running.
	Image   string
	Command []string

	// ReconcilePodCgroups makes every pod sync compare the pod cgroup with
	// the allocation once the pod's containers are actuated, and rewrite
	// the values that differ: resizelet's fix for a gap of the kubelet
	// v1.35.4, off by default (core.NodeConfig says more).
	ReconcilePodCgroups bool
	// FlushCheckpoints makes the node write a checkpoint file again, at
	// every Tick and Sync, when it does not hold the records the node
	// decides with: resizelet's fix for another gap, off by default
	// (core.NodeConfig says more).
	FlushCheckpoints bool

	// HotPods is how many of the most recently used pods the node keeps
	// decoded between inputs (core.DefaultHotPods when 0; a negative value
	// freezes every settled pod at once). It changes memory and speed,
	// never behaviour.
	HotPods int
}

// WithDefaults returns c with every unset field at the kubelet's default.
func (c NodeConfig) WithDefaults() NodeConfig { return NodeConfig(core.NodeConfig(c).WithDefaults()) }

// Validate checks a defaulted NodeConfig and returns a *core.ConfigError
// naming the first field that holds a value the kubelet would not start
// with.
func (c NodeConfig) Validate() error { return core.NodeConfig(c).Validate() }

// PodCgroup is the path, below the cgroup hierarchy root, of the cgroup
// of a pod of that QoS class and UID on this node, as the kubelet names it.
func (c NodeConfig) PodCgroup(qosClass v1.PodQOSClass, uid types.UID) string {
	return core.NodeConfig(c).PodCgroup(qosClass, uid)
}

// PodInfo is what the node knows of one pod beyond its API object
// (Node.Pod): the kubelet's own records of it, as copies.
type PodInfo struct {
	UID types.UID
	// Admitted says whether the kubelet admitted the pod.
	Admitted bool
	// PodCgroup is the pod cgroup's path below the cgroup root.
	PodCgroup string
	// Allocated is the allocated resources per container name (regular
	// containers and sidecars): the allocated_pods_state checkpoint's.
	Allocated map[string]v1.ResourceRequirements
	// Actuated is the actuated resources per container name: what the
	// kubelet last gave the runtime.
	Actuated map[string]v1.ResourceRequirements
	// ContainerIDs is the current runtime container ID per container name.
	ContainerIDs map[string]string
	// ContainerCgroups is the current container cgroup path per container
	// name.
	ContainerCgroups map[string]string
	// SandboxID is the pod sandbox's runtime ID.
	SandboxID string
}

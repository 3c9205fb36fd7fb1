package core

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/resizelet/resizelet/allocation"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/cri/kubeletcri"
	"github.com/resizelet/resizelet/resize/profile"
)

// NodeConfig describes the node a core decides for: its resources, OS,
// cgroup setup, resource managers and feature gates, and the kubelet
// version. The zero value of each field means the kubelet's default (see
// WithDefaults); Validate names the first field a kubelet would not start
// with. The scenario parser uses both, so a scenario's node: block and an
// embedder's NodeConfig are defaulted and checked by the same code.
type NodeConfig struct {
	Name                string
	Capacity            v1.ResourceList
	Allocatable         v1.ResourceList  // defaults to Capacity
	OS                  string           // "linux" (default) or "windows"
	CgroupVersion       cgconfig.Version // default cgconfig.V2
	CgroupDriver        cgconfig.Driver  // default cgconfig.DriverCgroupfs
	CPUManagerPolicy    string           // "none" (default) or "static"
	MemoryManagerPolicy string           // "None" (default) or "Static"
	SwapBehavior        string           // "NoSwap" (default) or "LimitedSwap"
	CPUCFSQuota         *bool            // --cpu-cfs-quota; nil means true
	CPUCFSQuotaPeriod   time.Duration    // default 100ms
	// CgroupRoot is the kubelet's --cgroup-root: the cgroup under which
	// "kubepods" lives, always taken relative to the root of the cgroup
	// hierarchy. It is written as the kubelet writes it, with or without a
	// leading "/" ("/kubelet" and "kubelet" are the same cgroup; the "/" is
	// the hierarchy root, never the host's root directory), and may end in
	// one "/". Empty and "/" mean the hierarchy root. Validate refuses a
	// value with an empty, "." or ".." component or a control character
	// (cgconfig.RootRelative), wrapping cgconfig.ErrInvalidPath, which is
	// cgroup.ErrInvalidPath.
	CgroupRoot   string
	FeatureGates map[string]bool // explicit settings, of profile.KnownGates(Profile); the profile gives the defaults
	Profile      profile.Version // default profile.Default (1.35)

	// Image and Command, when set, replace every container's image and
	// command when the node creates containers: a real runtime needs an
	// image it has and a command that keeps running.
	Image   string
	Command []string

	// ReconcilePodCgroups makes every pod sync compare the pod cgroup with
	// the allocation once the pod's containers are actuated, and rewrite
	// the values that differ. It is not a kubelet setting and is off by
	// default, as in the kubelet v1.35.4: that kubelet writes the pod
	// cgroup only while a sync has container updates or restarts to do,
	// and decides those from the actuated records alone
	// (pkg/kubelet/kuberuntime/kuberuntime_manager.go, computePodActions
	// and doPodResizeAction), so a crash or a failed pod cgroup write after
	// the containers were updated leaves the pod cgroup at its old value
	// for good while the resize reports complete. Setting it is resizelet's
	// fix for that gap (package resize/explore shows where it matters).
	ReconcilePodCgroups bool
	// FlushCheckpoints makes the node write a checkpoint file again, at
	// every Tick and Sync, when it does not hold the records the node
	// decides with (a write that failed keeps its record in memory only).
	// It is not a kubelet setting and is off by default, as in the kubelet
	// v1.35.4, whose checkpoint file catches up only with the next write
	// that changes it (pkg/kubelet/allocation/state/state_checkpoint.go,
	// storeState), so that a restart in between loads older records.
	FlushCheckpoints bool

	// HotPods is how many of the most recently used pods the node keeps
	// decoded between inputs; the others, once settled, are kept frozen
	// (package allocation/frozen), a few hundred bytes each instead of
	// several kilobytes, and decoded when used again. 0 means
	// DefaultHotPods; a negative value freezes every settled pod at once.
	// It changes memory and speed, never behaviour.
	HotPods int
}

// DefaultHotPods is the HotPods a node has unless its NodeConfig says
// otherwise: one, the pod a resize works on. Each pod kept decoded costs
// a few KiB, which a settled 110-pod node keeping three (and the API
// server three) took over its 400 KiB (BenchmarkNodeHeap); the resize
// benchmarks make the same allocations with one.
const DefaultHotPods = 1

// hotPods is the limit of thawed pods cfg asks for.
func (cfg NodeConfig) hotPods() int {
	switch {
	case cfg.HotPods == 0:
		return DefaultHotPods
	case cfg.HotPods < 0:
		return 0
	}
	return cfg.HotPods
}

// DefaultNodeName is the node name WithDefaults gives.
const DefaultNodeName = "node-1"

// DefaultCapacity is the capacity WithDefaults gives a node without one:
// 16 CPUs, 64Gi of memory and the kubelet's default of 110 pods.
func DefaultCapacity() v1.ResourceList {
	return v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse("16"),
		v1.ResourceMemory: resource.MustParse("64Gi"),
		v1.ResourcePods:   resource.MustParse("110"),
	}
}

// WithDefaults returns cfg with every unset field at the kubelet's default.
func (cfg NodeConfig) WithDefaults() NodeConfig {
	cfg.Name = cmp.Or(cfg.Name, DefaultNodeName)
	if cfg.Capacity == nil {
		cfg.Capacity = DefaultCapacity()
	}
	if cfg.Allocatable == nil {
		cfg.Allocatable = cfg.Capacity.DeepCopy()
	}
	cfg.OS = cmp.Or(cfg.OS, "linux")
	cfg.CgroupVersion = cmp.Or(cfg.CgroupVersion, cgconfig.V2)
	cfg.CgroupDriver = cmp.Or(cfg.CgroupDriver, cgconfig.DriverCgroupfs)
	cfg.CPUManagerPolicy = cmp.Or(cfg.CPUManagerPolicy, "none")
	cfg.MemoryManagerPolicy = cmp.Or(cfg.MemoryManagerPolicy, "None")
	cfg.SwapBehavior = cmp.Or(cfg.SwapBehavior, "NoSwap")
	if cfg.CPUCFSQuota == nil {
		cfg.CPUCFSQuota = new(true)
	}
	cfg.CPUCFSQuotaPeriod = cmp.Or(cfg.CPUCFSQuotaPeriod, 100*time.Millisecond)
	cfg.Profile = cmp.Or(cfg.Profile, profile.Default)
	return cfg
}

// ConfigError is the error Validate returns: the NodeConfig field (by its
// scenario-file name) and what is wrong with its value.
type ConfigError struct {
	Field string // "cgroupDriver", "allocatable.cpu", "featureGates.Foo", ...
	Msg   string
	// Err, when set, is the cause (cgconfig.ErrAmountTooLarge for an
	// amount beyond the bounds), for errors.Is.
	Err error
}

// Error names the field and the problem.
func (e *ConfigError) Error() string {
	if e == nil {
		return "<nil>"
	}
	return "node config: " + e.Field + ": " + e.Msg
}

// ErrInvalidConfig is wrapped by every ConfigError, for errors.Is.
var ErrInvalidConfig = errors.New("invalid node config")

// Is reports ErrInvalidConfig.
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// Unwrap returns the cause, if any.
func (e *ConfigError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// Validate checks a defaulted NodeConfig and returns a *ConfigError naming
// the first field that holds a value the kubelet would not start with.
func (cfg NodeConfig) Validate() error {
	oneOf := func(field, value string, allowed ...string) error {
		if slices.Contains(allowed, value) {
			return nil
		}
		return &ConfigError{Field: field, Msg: fmt.Sprintf("%q is not one of %s", value, strings.Join(allowed, ", "))}
	}
	if !cfg.Profile.Known() {
		var versions []string
		for _, v := range profile.Versions() {
			versions = append(versions, string(v))
		}
		return &ConfigError{Field: "profile", Msg: fmt.Sprintf("unknown kubelet version %q: want one of %s", cfg.Profile, strings.Join(versions, ", "))}
	}
	for _, check := range []error{
		oneOf("os", cfg.OS, "linux", "windows"),
		oneOf("cgroupVersion", cfg.CgroupVersion.String(), "v1", "v2"),
		oneOf("cgroupDriver", string(cfg.CgroupDriver), string(cgconfig.DriverCgroupfs), string(cgconfig.DriverSystemd)),
		oneOf("cpuManagerPolicy", cfg.CPUManagerPolicy, "none", "static"),
		oneOf("memoryManagerPolicy", cfg.MemoryManagerPolicy, "None", "Static"),
		oneOf("swapBehavior", cfg.SwapBehavior, "NoSwap", "LimitedSwap"),
	} {
		if check != nil {
			return check
		}
	}
	// A cgroup root the cgroup managers refuse (they check every path
	// with the same rule) would fail only at the node's first pod, which
	// would stay Pending.
	if _, err := cgconfig.RootRelative(cfg.CgroupRoot); err != nil {
		return &ConfigError{Field: "cgroupRoot", Msg: err.Error(), Err: err}
	}
	if errs := validation.IsDNS1123Subdomain(cfg.Name); len(errs) > 0 {
		return &ConfigError{Field: "name", Msg: fmt.Sprintf("invalid node name %q: %s", cfg.Name, strings.Join(errs, "; "))}
	}
	// The kernel accepts periods of 1ms to 1s (cpu.max, cpu.cfs_period_us).
	if cfg.CPUCFSQuotaPeriod < time.Millisecond || cfg.CPUCFSQuotaPeriod > time.Second {
		return &ConfigError{Field: "cpuCFSQuotaPeriod", Msg: fmt.Sprintf("%s is outside 1ms..1s", cfg.CPUCFSQuotaPeriod)}
	}
	// Amounts beyond resizelet's bounds would overflow the kubelet's int64
	// arithmetic (cgconfig.MaxMilliCPU says how); a kubelet reads its
	// capacity from the machine and never sees one.
	for _, list := range []struct {
		field string
		rl    v1.ResourceList
	}{{"capacity", cfg.Capacity}, {"allocatable", cfg.Allocatable}} {
		for _, name := range slices.Sorted(maps.Keys(list.rl)) {
			if err := cgconfig.CheckAmount(name, list.rl[name]); err != nil {
				return &ConfigError{Field: list.field + "." + string(name), Msg: err.Error(), Err: err}
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Allocatable)) {
		q := cfg.Allocatable[name]
		if q.Sign() < 0 {
			return &ConfigError{Field: "allocatable." + string(name), Msg: fmt.Sprintf("%s is negative", q.String())}
		}
		if c, ok := cfg.Capacity[name]; ok && q.Cmp(c) > 0 {
			return &ConfigError{Field: "allocatable." + string(name), Msg: fmt.Sprintf("%s is more than the capacity %s", q.String(), c.String())}
		}
	}
	if name, err := profile.CheckGates(cfg.Profile, cfg.FeatureGates); err != nil {
		return &ConfigError{Field: "featureGates." + name, Msg: err.Error()}
	}
	return nil
}

// settings are what the core derives once from a defaulted NodeConfig.
type settings struct {
	cfg     NodeConfig
	profile profile.Profile
	// enforceCPULimits is --cpu-cfs-quota.
	enforceCPULimits bool
	// cpuPeriod is the CFS period in microseconds: the configured one with
	// CustomCPUCFSQuotaPeriod, else the kernel's default 100000.
	cpuPeriod uint64
	admit     allocation.NodeConfig
	// cri builds the CRI messages the node sends; its PodConfigOptions are
	// the kubelet settings that shape a pod cgroup.
	cri kubeletcri.Messages
}

func newSettings(cfg NodeConfig) settings {
	p := profile.New(cfg.Profile, cfg.FeatureGates)
	s := settings{
		cfg:              cfg,
		profile:          p,
		enforceCPULimits: *cfg.CPUCFSQuota,
		cpuPeriod:        cgconfig.QuotaPeriod,
	}
	if p.Gate(profile.GateCustomCPUCFSQuotaPeriod) {
		s.cpuPeriod = uint64(cfg.CPUCFSQuotaPeriod / time.Microsecond)
	}
	s.admit = allocation.NodeConfig{
		Allocatable:         cfg.Allocatable,
		OS:                  cfg.OS,
		CPUManagerPolicy:    cfg.CPUManagerPolicy,
		MemoryManagerPolicy: cfg.MemoryManagerPolicy,
		SwapBehavior:        cfg.SwapBehavior,
		CgroupVersion:       cfg.CgroupVersion,
		Profile:             p,
		Messages:            &allocation.MessageCache{},
	}
	s.cri = kubeletcri.New(kubeletcri.Settings{
		CgroupVersion:             cfg.CgroupVersion,
		EnforceCPULimits:          s.enforceCPULimits,
		CPUPeriod:                 s.cpuPeriod,
		PodLevelResources:         p.PodLevelResources(),
		ContainerMemoryProtection: p.ContainerMemoryProtection(),
		ResetsContainerMemoryHigh: p.ResetsContainerMemoryHigh(),
		PodOnlyMemoryCheck:        p.PodOnlyMemoryCheck(),
		MemoryCapacity:            quantityOf(cfg.Capacity, v1.ResourceMemory).Value(),
		Image:                     cfg.Image,
		Command:                   cfg.Command,
	})
	return s
}

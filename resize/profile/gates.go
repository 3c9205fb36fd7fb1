package profile

// This file is the feature gates of the resize path: their names, which
// versions know them, their defaults and locks, and the check of a
// node's explicit settings (CheckGates).

import (
	"fmt"
	"maps"
	"slices"
	"strings"
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
	// GateInPlacePodVerticalScalingMemoryBackedVolumes lets a resize change
	// the sizeLimit of a memory-backed emptyDir volume: alpha and off in
	// 1.37, unknown before.
	GateInPlacePodVerticalScalingMemoryBackedVolumes = "InPlacePodVerticalScalingMemoryBackedVolumes"
	// GateMemoryQoS sets cgroup v2 memory protection for containers: alpha
	// and off up to 1.36, beta and on in 1.37. resizelet reproduces it from
	// 1.37 only (ContainerMemoryProtection).
	GateMemoryQoS = "MemoryQoS"
	// GatePodLevelResourcesFixDefaulting makes the API server default
	// pod-level resources on create and resize: beta and on in 1.37,
	// unknown before (DefaultsPodLevelResources).
	GatePodLevelResourcesFixDefaulting = "PodLevelResourcesFixDefaulting"
	// GatePodLevelResourcesFixKubeletQOSClass makes empty pod-level
	// resources leave the QoS class to the containers: beta and on in
	// 1.37, unknown before (PodLevelQOSOnlyWhenSet).
	GatePodLevelResourcesFixKubeletQOSClass = "PodLevelResourcesFixKubeletQOSClass"
)

// defaultGates are the gate defaults of each version for the gates that
// change the resize path (pkg/features/kube_features.go of each release).
var defaultGates = map[Version]map[string]bool{
	V133: {
		GateInPlacePodVerticalScaling: true,
		GateMemoryManager:             true,
	},
	V134: {
		GateInPlacePodVerticalScaling: true,
		GatePodLevelResources:         true,
		GateMemoryManager:             true,
	},
	V135: {
		GateInPlacePodVerticalScaling: true,
		GatePodLevelResources:         true,
		GateMemoryManager:             true,
	},
	V136: {
		GateInPlacePodVerticalScaling:               true,
		GatePodLevelResources:                       true,
		GateMemoryManager:                           true,
		GateInPlacePodLevelResourcesVerticalScaling: true,
		GateInPlacePodVerticalScalingInitContainers: true,
	},
	// 1.37: InPlacePodVerticalScalingInitContainers is GA and locked on
	// (lockedGates); InPlacePodVerticalScalingMemoryBackedVolumes is new,
	// alpha and off; MemoryQoS, PodLevelResourcesFixDefaulting and
	// PodLevelResourcesFixKubeletQOSClass are beta and on.
	V137: {
		GateInPlacePodVerticalScaling:               true,
		GatePodLevelResources:                       true,
		GateMemoryManager:                           true,
		GateInPlacePodLevelResourcesVerticalScaling: true,
		GateInPlacePodVerticalScalingInitContainers: true,
		GateMemoryQoS:                               true,
		GatePodLevelResourcesFixDefaulting:          true,
		GatePodLevelResourcesFixKubeletQOSClass:     true,
	},
}

// gateSince is the first version whose kubelet knows each gate this
// package reads (pkg/features/kube_features.go); an older kubelet refuses
// it as unrecognized.
var gateSince = map[string]Version{
	GateInPlacePodVerticalScaling:                    V133,
	GateInPlacePodVerticalScalingExclusiveCPUs:       V133,
	GatePodLevelResources:                            V133,
	GateMemoryManager:                                V133,
	GateCustomCPUCFSQuotaPeriod:                      V133,
	GateMemoryQoS:                                    V133,
	GateInPlacePodVerticalScalingExclusiveMemory:     V134,
	GateInPlacePodLevelResourcesVerticalScaling:      V135,
	GateInPlacePodVerticalScalingInitContainers:      V135,
	GateInPlacePodVerticalScalingMemoryBackedVolumes: V137,
	GatePodLevelResourcesFixDefaulting:               V137,
	GatePodLevelResourcesFixKubeletQOSClass:          V137,
}

// unreproducedGates are gates of the resize path that a kubelet of these
// versions knows (first and, when it is gone, first without) and that
// resizelet does not reproduce: a setting is taken, as the kubelet takes
// it, and changes nothing in resizelet, whose behaviour is the gate's
// default there. NotReproduced lists them.
var unreproducedGates = map[string][2]Version{
	"InPlacePodVerticalScalingAllocatedStatus":     {V133, V137}, // deprecated 1.33, gone by 1.37
	"InPlacePodVerticalScalingSchedulerPreemption": {V137, ""},
	"PodObservedGenerationTracking":                {V133, ""},
	"NodeDeclaredFeatures":                         {V135, ""},
	"DisableCPUQuotaWithExclusiveCPUs":             {V133, ""},
}

// KnownGates returns, sorted, the feature gates of version v ("" means
// Default) that a setting may name: those resizelet reproduces, and the
// resize path's others that that kubelet knows (NotReproduced).
func KnownGates(v Version) []string {
	if !v.Known() {
		v = Default
	}
	var out []string
	for name, since := range gateSince {
		if since.Minor() <= v.Minor() {
			out = append(out, name)
		}
	}
	out = append(out, NotReproduced(v)...)
	slices.Sort(out)
	return out
}

// NotReproduced returns, sorted, the gates of KnownGates(v) whose setting
// resizelet takes and does not reproduce.
func NotReproduced(v Version) []string {
	if !v.Known() {
		v = Default
	}
	var out []string
	for name, span := range unreproducedGates {
		if span[0].Minor() <= v.Minor() && (span[1] == "" || v.Minor() < span[1].Minor()) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// CheckGates refuses gate settings as the kubelet refuses them at start
// ("unrecognized feature gate: NAME"): it returns the first name, in
// sorted order, that is not among KnownGates(v), with an error that lists
// those. (A gate of the kubelet's off the resize path is refused too:
// resizelet knows only the resize path's.)
func CheckGates(v Version, gates map[string]bool) (string, error) {
	known := KnownGates(v)
	for _, name := range slices.Sorted(maps.Keys(gates)) {
		if !slices.Contains(known, name) {
			if !v.Known() {
				v = Default
			}
			return name, fmt.Errorf("unrecognized feature gate: %s (the resize path's gates kubelet %s knows: %s)", name, v, strings.Join(known, ", "))
		}
	}
	return "", nil
}

// lockedGates are the gates a version locks to their default (GA with
// LockToDefault in pkg/features/kube_features.go): an explicit setting
// cannot change them. InPlacePodVerticalScaling is locked from 1.35
// (ResizeGA) and handled there.
var lockedGates = map[Version][]string{
	V137: {GateInPlacePodVerticalScalingInitContainers},
}

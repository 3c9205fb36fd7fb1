package resize

// profileGates are the feature gate defaults of each kubelet version, for
// the gates that change the resize path (reference §6, gate summary).
var profileGates = map[Profile]map[string]bool{
	Profile133: {
		GateInPlacePodVerticalScaling: true,
		GateMemoryManager:             true,
	},
	Profile134: {
		GateInPlacePodVerticalScaling: true,
		GatePodLevelResources:         true,
		GateMemoryManager:             true,
	},
	Profile135: {
		GateInPlacePodVerticalScaling: true,
		GatePodLevelResources:         true,
		GateMemoryManager:             true,
	},
	Profile136: {
		GateInPlacePodVerticalScaling:               true,
		GatePodLevelResources:                       true,
		GateMemoryManager:                           true,
		GateInPlacePodLevelResourcesVerticalScaling: true,
		GateInPlacePodVerticalScalingInitContainers: true,
	},
}

// gateEnabled reports a gate: an explicit setting wins, then the profile's
// default. In 1.35 and later InPlacePodVerticalScaling is GA and locked on.
func gateEnabled(profile Profile, explicit map[string]bool, name string) bool {
	if name == GateInPlacePodVerticalScaling && profile != Profile133 && profile != Profile134 {
		return true
	}
	if v, ok := explicit[name]; ok {
		return v
	}
	if profile == "" {
		profile = Profile135
	}
	return profileGates[profile][name]
}

// validProfile reports whether p names a known profile.
func validProfile(p Profile) bool {
	_, ok := profileGates[p]
	return ok
}

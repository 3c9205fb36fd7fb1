package profile

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		in      string
		want    Version
		wantErr bool
	}{
		{in: "1.33", want: V133},
		{in: "1.34", want: V134},
		{in: "1.35", want: V135},
		{in: "1.36", want: V136},
		{in: "1.37", want: V137},
		// An empty version means the version of record, 1.35.
		{in: "", want: V135},
		{in: "1.32", wantErr: true},
		{in: "1.38", wantErr: true},
		{in: "v1.35", wantErr: true},
		// A patch release is not a minor version.
		{in: "1.35.4", wantErr: true},
		{in: "latest", wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := Parse(tc.in)
			if !tc.wantErr {
				if err != nil {
					t.Fatalf("Parse(%q) = error %v, want %q", tc.in, err, tc.want)
				}
				if got != tc.want {
					t.Errorf("Parse(%q) = %q, want %q", tc.in, got, tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse(%q) = %q, want an error", tc.in, got)
			}
			if !errors.Is(err, ErrUnknownVersion) {
				t.Errorf("Parse(%q) error %v does not wrap ErrUnknownVersion", tc.in, err)
			}
			// The message names the bad input and every version a user
			// could give instead.
			msg := err.Error()
			if !strings.Contains(msg, tc.in) {
				t.Errorf("Parse(%q) error %q does not name the input", tc.in, msg)
			}
			for _, v := range []string{"1.33", "1.34", "1.35", "1.36", "1.37"} {
				if !strings.Contains(msg, v) {
					t.Errorf("Parse(%q) error %q does not list version %s", tc.in, msg, v)
				}
			}
		})
	}
}

func TestVersions(t *testing.T) {
	// Versions lists every known version, oldest first.
	want := []Version{"1.33", "1.34", "1.35", "1.36", "1.37"}
	got := Versions()
	if len(got) != len(want) {
		t.Fatalf("Versions() = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Versions()[%d] = %q, want %q", i, got[i], want[i])
		}
	}
	if Default != V135 {
		t.Errorf("Default = %q, want the version of record 1.35", Default)
	}
}

func TestVersionMinorAndKnown(t *testing.T) {
	cases := []struct {
		v         Version
		wantMinor int
		wantKnown bool
	}{
		{v: "1.33", wantMinor: 33, wantKnown: true},
		{v: "1.34", wantMinor: 34, wantKnown: true},
		{v: "1.35", wantMinor: 35, wantKnown: true},
		{v: "1.36", wantMinor: 36, wantKnown: true},
		{v: "1.37", wantMinor: 37, wantKnown: true},
		// Versions that parse but are not reproduced have a minor number
		// and are not known.
		{v: "1.32", wantMinor: 32},
		{v: "1.38", wantMinor: 38},
		{v: "1.9", wantMinor: 9},
		// Versions that do not parse give 0.
		{v: "", wantMinor: 0},
		{v: "1.", wantMinor: 0},
		{v: "1.x", wantMinor: 0},
		{v: "v1.35", wantMinor: 0},
		{v: "2.0", wantMinor: 0},
	}
	for _, tc := range cases {
		t.Run(string(tc.v), func(t *testing.T) {
			if got := tc.v.Minor(); got != tc.wantMinor {
				t.Errorf("Version(%q).Minor() = %d, want %d", tc.v, got, tc.wantMinor)
			}
			if got := tc.v.Known(); got != tc.wantKnown {
				t.Errorf("Version(%q).Known() = %v, want %v", tc.v, got, tc.wantKnown)
			}
		})
	}
}

func TestNewVersion(t *testing.T) {
	cases := []struct {
		name string
		p    Profile
		want Version
	}{
		{name: "known", p: New(V133, nil), want: V133},
		{name: "empty is Default", p: New("", nil), want: Default},
		{name: "unknown is Default", p: New("1.99", nil), want: Default},
		{name: "zero value is Default", p: Profile{}, want: Default},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.Version(); got != tc.want {
				t.Errorf("Version() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestUnknownVersionBehavesAsDefault checks that an unknown version answers
// every predicate and gate as Default does, not just that it reports the
// Default version: a profile of "1.38" must not, for instance, turn on the
// 1.36 and 1.37 behaviours because its minor number is higher.
func TestUnknownVersionBehavesAsDefault(t *testing.T) {
	for _, v := range []Version{"1.38", "1.32", "garbage"} {
		unknown, def := New(v, nil), New(Default, nil)
		for _, pr := range predicates {
			if got, want := pr.fn(unknown), pr.fn(def); got != want {
				t.Errorf("New(%q, nil).%s() = %v, want %v as for Default", v, pr.name, got, want)
			}
		}
		for _, g := range allGates {
			if got, want := unknown.Gate(g), def.Gate(g); got != want {
				t.Errorf("New(%q, nil).Gate(%s) = %v, want %v as for Default", v, g, got, want)
			}
		}
	}
}

var allGates = []string{
	GateInPlacePodVerticalScaling,
	GateInPlacePodLevelResourcesVerticalScaling,
	GateInPlacePodVerticalScalingExclusiveCPUs,
	GateInPlacePodVerticalScalingExclusiveMemory,
	GateInPlacePodVerticalScalingInitContainers,
	GatePodLevelResources,
	GateMemoryManager,
	GateCustomCPUCFSQuotaPeriod,
	GateInPlacePodVerticalScalingMemoryBackedVolumes,
	GateMemoryQoS,
	GatePodLevelResourcesFixDefaulting,
	GatePodLevelResourcesFixKubeletQOSClass,
}

func TestGate(t *testing.T) {
	always := func(on bool) func(string) bool { return func(string) bool { return on } }
	cases := []struct {
		name string
		p    Profile
		gate string
		want bool
	}{
		// Defaults per version, as the Kubernetes releases ship them.
		{name: "1.33 resize on by default", p: New(V133, nil), gate: GateInPlacePodVerticalScaling, want: true},
		{name: "1.33 PodLevelResources off by default", p: New(V133, nil), gate: GatePodLevelResources, want: false},
		{name: "1.34 PodLevelResources on by default", p: New(V134, nil), gate: GatePodLevelResources, want: true},
		{name: "1.35 pod-level resize off by default", p: New(V135, nil), gate: GateInPlacePodLevelResourcesVerticalScaling, want: false},
		{name: "1.36 pod-level resize on by default", p: New(V136, nil), gate: GateInPlacePodLevelResourcesVerticalScaling, want: true},
		{name: "1.36 init resize on by default", p: New(V136, nil), gate: GateInPlacePodVerticalScalingInitContainers, want: true},
		{name: "1.37 pod-level resize on by default", p: New(V137, nil), gate: GateInPlacePodLevelResourcesVerticalScaling, want: true},
		{name: "1.37 memory-backed volume resize off by default", p: New(V137, nil), gate: GateInPlacePodVerticalScalingMemoryBackedVolumes, want: false},
		{name: "1.36 MemoryQoS off by default", p: New(V136, nil), gate: GateMemoryQoS, want: false},
		{name: "1.37 MemoryQoS on by default", p: New(V137, nil), gate: GateMemoryQoS, want: true},
		{name: "gate without a default is off", p: New(V135, nil), gate: GateCustomCPUCFSQuotaPeriod, want: false},
		{name: "unknown gate is off", p: New(V135, nil), gate: "NoSuchGate", want: false},

		// Explicit settings win over the defaults, both ways.
		{name: "explicit true over default off", p: New(V133, map[string]bool{GatePodLevelResources: true}), gate: GatePodLevelResources, want: true},
		{name: "explicit false over default on", p: New(V134, map[string]bool{GatePodLevelResources: false}), gate: GatePodLevelResources, want: false},
		{name: "explicit true for a gate without default", p: New(V135, map[string]bool{GateCustomCPUCFSQuotaPeriod: true}), gate: GateCustomCPUCFSQuotaPeriod, want: true},
		{name: "explicit setting of another gate leaves the default", p: New(V134, map[string]bool{GateMemoryManager: false}), gate: GatePodLevelResources, want: true},

		// InPlacePodVerticalScaling is GA and locked on from 1.35, but can
		// still be turned off on 1.33 and 1.34.
		{name: "1.33 resize turned off", p: New(V133, map[string]bool{GateInPlacePodVerticalScaling: false}), gate: GateInPlacePodVerticalScaling, want: false},
		{name: "1.34 resize turned off", p: New(V134, map[string]bool{GateInPlacePodVerticalScaling: false}), gate: GateInPlacePodVerticalScaling, want: false},
		{name: "1.35 resize locked on", p: New(V135, map[string]bool{GateInPlacePodVerticalScaling: false}), gate: GateInPlacePodVerticalScaling, want: true},
		{name: "1.36 resize locked on", p: New(V136, map[string]bool{GateInPlacePodVerticalScaling: false}), gate: GateInPlacePodVerticalScaling, want: true},
		{name: "1.37 resize locked on", p: New(V137, map[string]bool{GateInPlacePodVerticalScaling: false}), gate: GateInPlacePodVerticalScaling, want: true},

		// InPlacePodVerticalScalingInitContainers is GA and locked on in
		// 1.37; in 1.36 it is beta and may be turned off.
		{name: "1.36 init resize turned off", p: New(V136, map[string]bool{GateInPlacePodVerticalScalingInitContainers: false}), gate: GateInPlacePodVerticalScalingInitContainers, want: false},
		{name: "1.37 init resize locked on", p: New(V137, map[string]bool{GateInPlacePodVerticalScalingInitContainers: false}), gate: GateInPlacePodVerticalScalingInitContainers, want: true},
		{name: "1.37 init resize locked on over a func", p: New(V137, nil).WithGateFunc(always(false)), gate: GateInPlacePodVerticalScalingInitContainers, want: true},

		// WithGateFunc answers instead of the explicit settings and the
		// defaults, except for the locked gate.
		{name: "func on over default off", p: New(V133, nil).WithGateFunc(always(true)), gate: GatePodLevelResources, want: true},
		{name: "func off over default on", p: New(V136, nil).WithGateFunc(always(false)), gate: GateInPlacePodLevelResourcesVerticalScaling, want: false},
		{name: "func off over explicit on", p: New(V134, map[string]bool{GatePodLevelResources: true}).WithGateFunc(always(false)), gate: GatePodLevelResources, want: false},
		{name: "func on over explicit off", p: New(V134, map[string]bool{GatePodLevelResources: false}).WithGateFunc(always(true)), gate: GatePodLevelResources, want: true},
		{name: "func off on 1.34 turns resize off", p: New(V134, nil).WithGateFunc(always(false)), gate: GateInPlacePodVerticalScaling, want: false},
		{name: "func off on 1.35 leaves resize locked on", p: New(V135, nil).WithGateFunc(always(false)), gate: GateInPlacePodVerticalScaling, want: true},
		{name: "func off on 1.36 leaves resize locked on", p: New(V136, nil).WithGateFunc(always(false)), gate: GateInPlacePodVerticalScaling, want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.Gate(tc.gate); got != tc.want {
				t.Errorf("%s: Gate(%s) = %v, want %v", tc.p, tc.gate, got, tc.want)
			}
		})
	}
}

// TestGateFuncIsAsked checks that the function given to WithGateFunc is
// asked about the gate by name, and that WithGateFunc leaves the profile it
// was called on unchanged (a Profile is an immutable value).
func TestGateFuncIsAsked(t *testing.T) {
	var asked []string
	base := New(V135, nil)
	p := base.WithGateFunc(func(name string) bool {
		asked = append(asked, name)
		return name == GateMemoryManager
	})
	if !p.Gate(GateMemoryManager) {
		t.Errorf("Gate(%s) = false, want the function's true", GateMemoryManager)
	}
	if p.Gate(GatePodLevelResources) {
		t.Errorf("Gate(%s) = true, want the function's false over the 1.35 default", GatePodLevelResources)
	}
	if want := []string{GateMemoryManager, GatePodLevelResources}; strings.Join(asked, ",") != strings.Join(want, ",") {
		t.Errorf("gate function asked %v, want %v", asked, want)
	}
	if !base.PodLevelResources() {
		t.Errorf("the profile WithGateFunc was called on lost its 1.35 PodLevelResources default")
	}
}

// TestNewCopiesGates checks that New keeps its own copy of the settings:
// a caller that changes or reuses its map afterwards must not change a
// profile it already made.
func TestNewCopiesGates(t *testing.T) {
	cases := []struct {
		name   string
		gates  map[string]bool
		change func(map[string]bool)
		gate   string
		want   bool
	}{
		{
			name:   "changed setting",
			gates:  map[string]bool{GatePodLevelResources: true},
			change: func(m map[string]bool) { m[GatePodLevelResources] = false },
			gate:   GatePodLevelResources,
			want:   true,
		},
		{
			name:   "added setting",
			gates:  map[string]bool{GateMemoryManager: true},
			change: func(m map[string]bool) { m[GatePodLevelResources] = true },
			gate:   GatePodLevelResources,
			want:   false,
		},
		{
			name:   "deleted setting",
			gates:  map[string]bool{GateCustomCPUCFSQuotaPeriod: true},
			change: func(m map[string]bool) { delete(m, GateCustomCPUCFSQuotaPeriod) },
			gate:   GateCustomCPUCFSQuotaPeriod,
			want:   true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// 1.33 is used because PodLevelResources is off by default
			// there, so a leaked change would show.
			p := New(V133, tc.gates)
			tc.change(tc.gates)
			if got := p.Gate(tc.gate); got != tc.want {
				t.Errorf("after changing the caller's map, Gate(%s) = %v, want %v", tc.gate, got, tc.want)
			}
		})
	}
}

// predicates are every behaviour predicate of a Profile, by name.
var predicates = []struct {
	name string
	fn   func(Profile) bool
}{
	{"ResizeGA", Profile.ResizeGA},
	{"ResizeEvents", Profile.ResizeEvents},
	{"ResizeCompletedEvent", Profile.ResizeCompletedEvent},
	{"ResizeCompletedGeneration", Profile.ResizeCompletedGeneration},
	{"ContainerNameInLifecycleEvents", Profile.ContainerNameInLifecycleEvents},
	{"EarlyInfeasibleEvents", Profile.EarlyInfeasibleEvents},
	{"StaticPodResizeInfeasible", Profile.StaticPodResizeInfeasible},
	{"StaticMemoryManagerNeedsGate", Profile.StaticMemoryManagerNeedsGate},
	{"RetryOnPodTerminated", Profile.RetryOnPodTerminated},
	{"BackfillsResizeConditions", Profile.BackfillsResizeConditions},
	{"RevertClearsPending", Profile.RevertClearsPending},
	{"TerminalClearsResizeConditions", Profile.TerminalClearsResizeConditions},
	{"RetriesAddedPodsOnlyWithChange", Profile.RetriesAddedPodsOnlyWithChange},
	{"RejectionWritesFreshStatus", Profile.RejectionWritesFreshStatus},
	{"PodOnlyMemoryCheck", Profile.PodOnlyMemoryCheck},
	{"PodLevelResize", Profile.PodLevelResize},
	{"PodLevelResizeForbidden", Profile.PodLevelResizeForbidden},
	{"PodLevelResources", Profile.PodLevelResources},
	{"InitContainersResizable", Profile.InitContainersResizable},
	{"InitResizeErrorPerContainer", Profile.InitResizeErrorPerContainer},
	{"MemoryLimitNeedsRestartPolicy", Profile.MemoryLimitNeedsRestartPolicy},
	{"ComparesAddedResourceLists", Profile.ComparesAddedResourceLists},
	{"ResizeAdmissionPlugin", Profile.ResizeAdmissionPlugin},
	{"KubeletCapacityCheck", Profile.KubeletCapacityCheck},
	{"PendingEventNamesHandlerReason", Profile.PendingEventNamesHandlerReason},
	{"SandboxUpdateFirst", Profile.SandboxUpdateFirst},
	{"AdmissionSkipsUnallocatedPods", Profile.AdmissionSkipsUnallocatedPods},
	{"MemoryBackedVolumeResize", Profile.MemoryBackedVolumeResize},
	{"ContainerMemoryProtection", Profile.ContainerMemoryProtection},
	{"ResetsContainerMemoryHigh", Profile.ResetsContainerMemoryHigh},
	{"StatusAggregatedPerPod", Profile.StatusAggregatedPerPod},
	{"ResizesPodForStartingContainers", Profile.ResizesPodForStartingContainers},
	{"DefaultsPodLevelResources", Profile.DefaultsPodLevelResources},
	{"InitRestartContainerPolicyForbidden", Profile.InitRestartContainerPolicyForbidden},
	{"KubeletOwnsAllContainersRestarting", Profile.KubeletOwnsAllContainersRestarting},
	{"PodLevelQOSOnlyWhenSet", Profile.PodLevelQOSOnlyWhenSet},
	{"CheckpointEmptyDirLimits", Profile.CheckpointEmptyDirLimits},
}

// TestPredicatesByVersion gives, for each predicate and each version with
// default gates, the value its doc comment states. The comment after each
// row quotes the rule.
func TestPredicatesByVersion(t *testing.T) {
	versions := [5]Version{V133, V134, V135, V136, V137}
	// want is indexed like versions: 1.33, 1.34, 1.35, 1.36, 1.37.
	want := map[string][5]bool{
		"ResizeGA":                            {false, false, true, true, true},    // 1.35 and later
		"ResizeEvents":                        {false, false, true, true, true},    // they appear with 1.35
		"ResizeCompletedEvent":                {false, true, true, true, true},     // from 1.34; 1.33 sent no resize events
		"ResizeCompletedGeneration":           {false, false, true, true, true},    // from 1.35
		"ContainerNameInLifecycleEvents":      {true, true, false, false, false},   // before 1.35
		"EarlyInfeasibleEvents":               {false, false, false, true, true},   // from 1.36
		"StaticPodResizeInfeasible":           {true, true, true, false, false},    // up to 1.35
		"StaticMemoryManagerNeedsGate":        {true, true, true, false, false},    // up to 1.35
		"RetryOnPodTerminated":                {false, false, false, true, true},   // from 1.36
		"BackfillsResizeConditions":           {false, false, true, true, true},    // from 1.35; 1.33 and 1.34 unverified
		"RevertClearsPending":                 {false, false, true, true, true},    // from 1.35; 1.33 and 1.34 unverified
		"TerminalClearsResizeConditions":      {false, false, true, true, true},    // from 1.35; 1.33 and 1.34 unverified
		"RetriesAddedPodsOnlyWithChange":      {false, false, true, true, true},    // from 1.35; 1.33 and 1.34 unverified
		"RejectionWritesFreshStatus":          {false, false, true, true, true},    // from 1.35; 1.33 and 1.34 unverified
		"PodOnlyMemoryCheck":                  {true, false, false, false, false},  // 1.33; from 1.34 per container
		"PodLevelResize":                      {false, false, false, true, true},   // gate from 1.35 (alpha, off), on by default from 1.36
		"PodLevelResizeForbidden":             {true, true, false, false, false},   // up to 1.34
		"PodLevelResources":                   {false, true, true, true, true},     // the PodLevelResources gate: alpha in 1.33, beta and on from 1.34
		"InitContainersResizable":             {false, false, false, true, true},   // gate from 1.35; beta and on in 1.36, GA in 1.37
		"InitResizeErrorPerContainer":         {false, false, false, true, true},   // the 1.36 text
		"MemoryLimitNeedsRestartPolicy":       {true, false, false, false, false},  // 1.33 only
		"ComparesAddedResourceLists":          {false, false, true, true, true},    // from 1.35
		"ResizeAdmissionPlugin":               {false, false, false, true, true},   // PodResizeValidator from 1.36
		"KubeletCapacityCheck":                {true, true, true, false, false},    // canResizePod up to 1.35
		"PendingEventNamesHandlerReason":      {false, false, false, true, true},   // from 1.36
		"SandboxUpdateFirst":                  {false, false, false, true, true},   // from 1.36
		"AdmissionSkipsUnallocatedPods":       {false, false, false, false, true},  // from 1.37
		"MemoryBackedVolumeResize":            {false, false, false, false, false}, // gate from 1.37 (alpha, off)
		"ContainerMemoryProtection":           {false, false, false, false, true},  // MemoryQoS beta and on in 1.37
		"ResetsContainerMemoryHigh":           {false, false, false, false, false}, // 1.37 with MemoryQoS off
		"StatusAggregatedPerPod":              {false, false, false, false, true},  // from 1.37
		"ResizesPodForStartingContainers":     {false, false, false, false, true},  // from 1.37
		"DefaultsPodLevelResources":           {false, false, false, false, true},  // PodLevelResourcesFixDefaulting, beta and on in 1.37
		"InitRestartContainerPolicyForbidden": {false, false, false, true, true},   // from 1.36
		"KubeletOwnsAllContainersRestarting":  {false, false, false, true, true},   // from 1.36
		"PodLevelQOSOnlyWhenSet":              {false, false, false, false, true},  // PodLevelResourcesFixKubeletQOSClass, beta and on in 1.37
		"CheckpointEmptyDirLimits":            {false, false, false, false, true},  // from 1.37
	}
	if len(want) != len(predicates) {
		t.Fatalf("want has %d predicates, the predicates table %d: keep them in step", len(want), len(predicates))
	}
	for _, pr := range predicates {
		w, ok := want[pr.name]
		if !ok {
			t.Errorf("no expected values for %s", pr.name)
			continue
		}
		for i, v := range versions {
			t.Run(pr.name+"/"+string(v), func(t *testing.T) {
				if got := pr.fn(New(v, nil)); got != w[i] {
					t.Errorf("%s on %s = %v, want %v", pr.name, v, got, w[i])
				}
			})
		}
	}
}

// TestPredicatesWithGates covers the predicates that depend on a gate: the
// gate matters only from the release where it exists.
func TestPredicatesWithGates(t *testing.T) {
	on := func(g string) map[string]bool { return map[string]bool{g: true} }
	off := func(g string) map[string]bool { return map[string]bool{g: false} }
	cases := []struct {
		name string
		p    Profile
		fn   func(Profile) bool
		want bool
	}{
		{name: "PodLevelResize 1.33 gate on stays off", p: New(V133, on(GateInPlacePodLevelResourcesVerticalScaling)), fn: Profile.PodLevelResize, want: false},
		{name: "PodLevelResize 1.34 gate on stays off", p: New(V134, on(GateInPlacePodLevelResourcesVerticalScaling)), fn: Profile.PodLevelResize, want: false},
		{name: "PodLevelResize 1.35 gate on", p: New(V135, on(GateInPlacePodLevelResourcesVerticalScaling)), fn: Profile.PodLevelResize, want: true},
		{name: "PodLevelResize 1.36 gate off", p: New(V136, off(GateInPlacePodLevelResourcesVerticalScaling)), fn: Profile.PodLevelResize, want: false},
		{name: "PodLevelResize 1.35 gate func on", p: New(V135, nil).WithGateFunc(func(string) bool { return true }), fn: Profile.PodLevelResize, want: true},
		{name: "PodLevelResize 1.34 gate func on stays off", p: New(V134, nil).WithGateFunc(func(string) bool { return true }), fn: Profile.PodLevelResize, want: false},

		{name: "InitContainersResizable 1.33 gate on stays off", p: New(V133, on(GateInPlacePodVerticalScalingInitContainers)), fn: Profile.InitContainersResizable, want: false},
		{name: "InitContainersResizable 1.34 gate on stays off", p: New(V134, on(GateInPlacePodVerticalScalingInitContainers)), fn: Profile.InitContainersResizable, want: false},
		{name: "InitContainersResizable 1.35 gate on", p: New(V135, on(GateInPlacePodVerticalScalingInitContainers)), fn: Profile.InitContainersResizable, want: true},
		{name: "InitContainersResizable 1.36 gate off", p: New(V136, off(GateInPlacePodVerticalScalingInitContainers)), fn: Profile.InitContainersResizable, want: false},
		{name: "InitContainersResizable 1.37 gate off stays on", p: New(V137, off(GateInPlacePodVerticalScalingInitContainers)), fn: Profile.InitContainersResizable, want: true},

		{name: "MemoryBackedVolumeResize 1.36 gate on stays off", p: New(V136, on(GateInPlacePodVerticalScalingMemoryBackedVolumes)), fn: Profile.MemoryBackedVolumeResize, want: false},
		{name: "MemoryBackedVolumeResize 1.37 gate on", p: New(V137, on(GateInPlacePodVerticalScalingMemoryBackedVolumes)), fn: Profile.MemoryBackedVolumeResize, want: true},

		// MemoryQoS is reproduced from 1.37 only, both ways.
		{name: "ContainerMemoryProtection 1.36 gate on stays off", p: New(V136, on(GateMemoryQoS)), fn: Profile.ContainerMemoryProtection, want: false},
		{name: "ContainerMemoryProtection 1.37 gate off", p: New(V137, off(GateMemoryQoS)), fn: Profile.ContainerMemoryProtection, want: false},
		{name: "ResetsContainerMemoryHigh 1.37 gate off", p: New(V137, off(GateMemoryQoS)), fn: Profile.ResetsContainerMemoryHigh, want: true},
		{name: "ResetsContainerMemoryHigh 1.36 gate off stays off", p: New(V136, off(GateMemoryQoS)), fn: Profile.ResetsContainerMemoryHigh, want: false},

		{name: "PodLevelResources 1.33 gate on", p: New(V133, on(GatePodLevelResources)), fn: Profile.PodLevelResources, want: true},
		{name: "PodLevelResources 1.35 gate off", p: New(V135, off(GatePodLevelResources)), fn: Profile.PodLevelResources, want: false},

		// The version-only predicates ignore the gates: turning resize off
		// on 1.34 does not make it GA, and turning it off on 1.35 cannot.
		{name: "ResizeGA 1.34 gate on stays off", p: New(V134, on(GateInPlacePodVerticalScaling)), fn: Profile.ResizeGA, want: false},
		{name: "ResizeGA 1.35 gate off stays on", p: New(V135, off(GateInPlacePodVerticalScaling)), fn: Profile.ResizeGA, want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.fn(tc.p); got != tc.want {
				t.Errorf("%s: got %v, want %v", tc.p, got, tc.want)
			}
		})
	}
}

// TestString checks that the log form names the version and, when there
// are any, the explicit gates with their settings.
func TestString(t *testing.T) {
	cases := []struct {
		name string
		p    Profile
		want []string
	}{
		{name: "no gates", p: New(V134, nil), want: []string{"1.34"}},
		{name: "zero value", p: Profile{}, want: []string{"1.35"}},
		{name: "with gates", p: New(V136, map[string]bool{GatePodLevelResources: false}), want: []string{"1.36", "PodLevelResources:false"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.p.String()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("String() = %q, want it to contain %q", got, w)
				}
			}
			if len(tc.want) == 1 && got != tc.want[0] {
				t.Errorf("String() = %q, want just the version %q", got, tc.want[0])
			}
		})
	}
}

// TestHotAnswersMatchGates: the answers New works out once are the ones
// the gates give, for every version and every setting of the gates they
// read.
func TestHotAnswersMatchGates(t *testing.T) {
	names := []string{GateInPlacePodLevelResourcesVerticalScaling, GatePodLevelResources, GateInPlacePodVerticalScalingInitContainers}
	for _, v := range Versions() {
		for mask := 0; mask < 1<<(2*len(names)); mask++ {
			gates := map[string]bool{}
			for i, name := range names {
				switch (mask >> (2 * i)) & 3 {
				case 1:
					gates[name] = true
				case 2:
					gates[name] = false
				}
			}
			p := New(v, gates)
			slow := p.WithGateFunc(p.Gate)
			if p.PodLevelResize() != slow.PodLevelResize() || p.PodLevelResources() != slow.PodLevelResources() ||
				p.InitContainersResizable() != slow.InitContainersResizable() || p.minor() != slow.minor() {
				t.Errorf("%s %v: New's answers differ from the gates'", v, gates)
			}
		}
	}
}

// TestKnownGates: each version knows the gates of the resize path that
// its kubelet has, and CheckGates refuses any other as the kubelet does,
// naming the gate and listing the known ones.
func TestKnownGates(t *testing.T) {
	for _, tc := range []struct {
		v             Version
		known, absent []string
	}{
		{V133, []string{GateInPlacePodVerticalScaling, GatePodLevelResources, GateMemoryQoS}, []string{GateInPlacePodVerticalScalingExclusiveMemory, GateInPlacePodLevelResourcesVerticalScaling}},
		{V134, []string{GateInPlacePodVerticalScalingExclusiveMemory}, []string{GateInPlacePodLevelResourcesVerticalScaling, GateInPlacePodVerticalScalingInitContainers}},
		{V135, []string{GateInPlacePodLevelResourcesVerticalScaling, GateInPlacePodVerticalScalingInitContainers}, []string{GatePodLevelResourcesFixDefaulting, GateInPlacePodVerticalScalingMemoryBackedVolumes}},
		{V137, []string{GatePodLevelResourcesFixDefaulting, GatePodLevelResourcesFixKubeletQOSClass, GateInPlacePodVerticalScalingMemoryBackedVolumes}, nil},
	} {
		known := KnownGates(tc.v)
		if !slices.IsSorted(known) {
			t.Errorf("KnownGates(%s) = %v, not sorted", tc.v, known)
		}
		for _, g := range tc.known {
			if !slices.Contains(known, g) {
				t.Errorf("KnownGates(%s) lacks %s", tc.v, g)
			}
			if name, err := CheckGates(tc.v, map[string]bool{g: true}); err != nil {
				t.Errorf("CheckGates(%s, %s) = %q, %v; want no error", tc.v, g, name, err)
			}
		}
		for _, g := range tc.absent {
			if slices.Contains(known, g) {
				t.Errorf("KnownGates(%s) has %s, which that kubelet does not know", tc.v, g)
			}
			name, err := CheckGates(tc.v, map[string]bool{GateMemoryQoS: false, g: true})
			if name != g || err == nil || !strings.HasPrefix(err.Error(), "unrecognized feature gate: "+g+" (") {
				t.Errorf("CheckGates(%s, %s) = %q, %v; want the kubelet's refusal of %s", tc.v, g, name, err, g)
			}
		}
	}
	if got, want := KnownGates(""), KnownGates(Default); !slices.Equal(got, want) {
		t.Errorf("KnownGates(\"\") = %v, want Default's %v", got, want)
	}
	name, err := CheckGates(V135, map[string]bool{"InPlacePodVerticalScalingg": true})
	if want := "unrecognized feature gate: InPlacePodVerticalScalingg (the resize path's gates kubelet 1.35 knows: " + strings.Join(KnownGates(V135), ", ") + ")"; name != "InPlacePodVerticalScalingg" || err == nil || err.Error() != want {
		t.Errorf("CheckGates of a typo = %q, %v; want %q", name, err, want)
	}
}

// TestNotReproducedGates: the resize path's gates that resizelet does not
// reproduce are known in the versions whose kubelet has them, and only
// there.
func TestNotReproducedGates(t *testing.T) {
	for _, tc := range []struct {
		v          Version
		has, lacks []string
	}{
		{V133, []string{"InPlacePodVerticalScalingAllocatedStatus", "PodObservedGenerationTracking"}, []string{"NodeDeclaredFeatures", "InPlacePodVerticalScalingSchedulerPreemption"}},
		{V135, []string{"InPlacePodVerticalScalingAllocatedStatus", "NodeDeclaredFeatures"}, []string{"InPlacePodVerticalScalingSchedulerPreemption"}},
		{V137, []string{"InPlacePodVerticalScalingSchedulerPreemption", "NodeDeclaredFeatures"}, []string{"InPlacePodVerticalScalingAllocatedStatus"}},
	} {
		got := NotReproduced(tc.v)
		for _, g := range tc.has {
			if !slices.Contains(got, g) || !slices.Contains(KnownGates(tc.v), g) {
				t.Errorf("%s: %s is not among the known, unreproduced gates %v", tc.v, g, got)
			}
			if _, err := CheckGates(tc.v, map[string]bool{g: true}); err != nil {
				t.Errorf("%s: CheckGates(%s): %v", tc.v, g, err)
			}
		}
		for _, g := range tc.lacks {
			if slices.Contains(got, g) {
				t.Errorf("%s: %s is known, but that kubelet does not have it", tc.v, g)
			}
			if _, err := CheckGates(tc.v, map[string]bool{g: true}); err == nil {
				t.Errorf("%s: CheckGates(%s) took a gate that kubelet refuses", tc.v, g)
			}
		}
	}
}

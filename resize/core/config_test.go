package core

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/resize/profile"
)

// cfgBool returns a pointer to b, for NodeConfig.CPUCFSQuota.
func cfgBool(b bool) *bool { return &b }

func TestWithDefaults(t *testing.T) {
	// The kubelet's defaults as NodeConfig's field comments document them.
	defaults := NodeConfig{
		Name:                "node-1",
		Capacity:            v1.ResourceList{v1.ResourceCPU: resource.MustParse("16"), v1.ResourceMemory: resource.MustParse("64Gi"), v1.ResourcePods: resource.MustParse("110")},
		Allocatable:         v1.ResourceList{v1.ResourceCPU: resource.MustParse("16"), v1.ResourceMemory: resource.MustParse("64Gi"), v1.ResourcePods: resource.MustParse("110")},
		OS:                  "linux",
		CgroupVersion:       cgconfig.V2,
		CgroupDriver:        cgconfig.DriverCgroupfs,
		CPUManagerPolicy:    "none",
		MemoryManagerPolicy: "None",
		SwapBehavior:        "NoSwap",
		CPUCFSQuota:         cfgBool(true),
		CPUCFSQuotaPeriod:   100 * time.Millisecond,
		Profile:             profile.V135,
	}
	// A config with every field set to a value other than the default.
	custom := NodeConfig{
		Name:                "worker-7.example.com",
		Capacity:            v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("8Gi")},
		Allocatable:         v1.ResourceList{v1.ResourceCPU: resource.MustParse("3500m"), v1.ResourceMemory: resource.MustParse("7Gi")},
		OS:                  "windows",
		CgroupVersion:       cgconfig.V1,
		CgroupDriver:        cgconfig.DriverSystemd,
		CPUManagerPolicy:    "static",
		MemoryManagerPolicy: "Static",
		SwapBehavior:        "LimitedSwap",
		CPUCFSQuota:         cfgBool(false),
		CPUCFSQuotaPeriod:   50 * time.Millisecond,
		CgroupRoot:          "/custom",
		FeatureGates:        map[string]bool{profile.GatePodLevelResources: false},
		Profile:             profile.V133,
		Image:               "registry.example/pause:3.10",
		Command:             []string{"/pause"},
	}
	cases := []struct {
		name string
		in   NodeConfig
		want NodeConfig
	}{
		{name: "zero value gets every default", in: NodeConfig{}, want: defaults},
		{name: "set fields are kept", in: custom, want: custom},
		{
			// CPUCFSQuota false is a setting, not an unset field: only nil
			// means the default true.
			name: "CPUCFSQuota false is kept",
			in:   NodeConfig{CPUCFSQuota: cfgBool(false)},
			want: func() NodeConfig { c := defaults; c.CPUCFSQuota = cfgBool(false); return c }(),
		},
		{
			name: "Allocatable defaults to the given Capacity",
			in:   NodeConfig{Capacity: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")}},
			want: func() NodeConfig {
				c := defaults
				c.Capacity = v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")}
				c.Allocatable = v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")}
				return c
			}(),
		},
		{
			name: "Capacity defaults without touching a given Allocatable",
			in:   NodeConfig{Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("8")}},
			want: func() NodeConfig {
				c := defaults
				c.Allocatable = v1.ResourceList{v1.ResourceCPU: resource.MustParse("8")}
				return c
			}(),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.in.WithDefaults()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("WithDefaults() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWithDefaultsAllocatableDoesNotAlias checks that the defaulted
// Allocatable is a copy: the core subtracts from and compares against
// allocatable, and a change to it must not change the capacity (or the
// caller's map).
func TestWithDefaultsAllocatableDoesNotAlias(t *testing.T) {
	cases := []struct {
		name     string
		capacity v1.ResourceList
	}{
		{name: "default capacity", capacity: nil},
		{name: "given capacity", capacity: v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("8Gi")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := NodeConfig{Capacity: tc.capacity}.WithDefaults()
			wantCPU := cfg.Capacity[v1.ResourceCPU].DeepCopy()
			cfg.Allocatable[v1.ResourceCPU] = resource.MustParse("1")
			cfg.Allocatable["example.com/new"] = resource.MustParse("1")
			got := cfg.Capacity[v1.ResourceCPU]
			if got.Cmp(wantCPU) != 0 {
				t.Errorf("changing Allocatable[cpu] changed Capacity[cpu] to %s, want %s", got.String(), wantCPU.String())
			}
			if _, ok := cfg.Capacity["example.com/new"]; ok {
				t.Errorf("adding to Allocatable added to Capacity")
			}
			if tc.capacity != nil {
				if _, ok := tc.capacity["example.com/new"]; ok {
					t.Errorf("adding to Allocatable added to the caller's capacity map")
				}
			}
		})
	}
}

// TestDefaultCapacityIsFresh checks that DefaultCapacity returns a new map
// each time, so one node's defaulted capacity cannot change another's.
func TestDefaultCapacityIsFresh(t *testing.T) {
	a := DefaultCapacity()
	a[v1.ResourceCPU] = resource.MustParse("1")
	b := DefaultCapacity()
	if got, want := b[v1.ResourceCPU], resource.MustParse("16"); got.Cmp(want) != 0 {
		t.Errorf("DefaultCapacity()[cpu] = %s after changing an earlier result, want %s", got.String(), want.String())
	}
}

func TestValidate(t *testing.T) {
	// with returns the defaulted config changed by f.
	with := func(f func(*NodeConfig)) NodeConfig {
		cfg := NodeConfig{}.WithDefaults()
		f(&cfg)
		return cfg
	}
	cases := []struct {
		name      string
		cfg       NodeConfig
		wantField string // "" means valid
		wantMsg   string // a part of the message, when set
	}{
		{name: "defaults", cfg: NodeConfig{}.WithDefaults()},

		{name: "profile unknown", cfg: with(func(c *NodeConfig) { c.Profile = "1.38" }), wantField: "profile", wantMsg: "unknown kubelet version"},
		{name: "profile patch release", cfg: with(func(c *NodeConfig) { c.Profile = "1.35.4" }), wantField: "profile", wantMsg: "unknown kubelet version"},
		{name: "profile 1.33", cfg: with(func(c *NodeConfig) { c.Profile = profile.V133 })},
		{name: "profile 1.36", cfg: with(func(c *NodeConfig) { c.Profile = profile.V136 })},

		{name: "os darwin", cfg: with(func(c *NodeConfig) { c.OS = "darwin" }), wantField: "os", wantMsg: "darwin"},
		{name: "os Linux is case sensitive", cfg: with(func(c *NodeConfig) { c.OS = "Linux" }), wantField: "os"},
		{name: "os windows", cfg: with(func(c *NodeConfig) { c.OS = "windows" })},

		{name: "cgroupVersion 3", cfg: with(func(c *NodeConfig) { c.CgroupVersion = cgconfig.Version(3) }), wantField: "cgroupVersion"},
		{name: "cgroupVersion -1", cfg: with(func(c *NodeConfig) { c.CgroupVersion = cgconfig.Version(-1) }), wantField: "cgroupVersion"},
		{name: "cgroupVersion v1", cfg: with(func(c *NodeConfig) { c.CgroupVersion = cgconfig.V1 })},

		{name: "cgroupDriver unknown", cfg: with(func(c *NodeConfig) { c.CgroupDriver = "docker" }), wantField: "cgroupDriver", wantMsg: "docker"},
		{name: "cgroupDriver Systemd is case sensitive", cfg: with(func(c *NodeConfig) { c.CgroupDriver = "Systemd" }), wantField: "cgroupDriver"},
		{name: "cgroupDriver systemd", cfg: with(func(c *NodeConfig) { c.CgroupDriver = cgconfig.DriverSystemd })},

		// The kubelet spells the CPU manager policies in lower case and the
		// memory manager policies capitalised.
		{name: "cpuManagerPolicy Static", cfg: with(func(c *NodeConfig) { c.CPUManagerPolicy = "Static" }), wantField: "cpuManagerPolicy", wantMsg: "Static"},
		{name: "cpuManagerPolicy None", cfg: with(func(c *NodeConfig) { c.CPUManagerPolicy = "None" }), wantField: "cpuManagerPolicy"},
		{name: "cpuManagerPolicy static", cfg: with(func(c *NodeConfig) { c.CPUManagerPolicy = "static" })},
		{name: "memoryManagerPolicy static", cfg: with(func(c *NodeConfig) { c.MemoryManagerPolicy = "static" }), wantField: "memoryManagerPolicy", wantMsg: "static"},
		{name: "memoryManagerPolicy none", cfg: with(func(c *NodeConfig) { c.MemoryManagerPolicy = "none" }), wantField: "memoryManagerPolicy"},
		{name: "memoryManagerPolicy Static", cfg: with(func(c *NodeConfig) { c.MemoryManagerPolicy = "Static" })},

		{name: "swapBehavior UnlimitedSwap", cfg: with(func(c *NodeConfig) { c.SwapBehavior = "UnlimitedSwap" }), wantField: "swapBehavior", wantMsg: "UnlimitedSwap"},
		{name: "swapBehavior LimitedSwap", cfg: with(func(c *NodeConfig) { c.SwapBehavior = "LimitedSwap" })},

		// A node name is a DNS-1123 subdomain: lower case alphanumerics,
		// '-' and '.', starting and ending with an alphanumeric.
		{name: "name upper case", cfg: with(func(c *NodeConfig) { c.Name = "Node-1" }), wantField: "name"},
		{name: "name underscore", cfg: with(func(c *NodeConfig) { c.Name = "node_1" }), wantField: "name"},
		{name: "name trailing dash", cfg: with(func(c *NodeConfig) { c.Name = "node-" }), wantField: "name"},
		{name: "name too long", cfg: with(func(c *NodeConfig) { c.Name = strings.Repeat("a", 254) }), wantField: "name"},
		{name: "name with dots", cfg: with(func(c *NodeConfig) { c.Name = "node-1.zone-a.example.com" })},
		{name: "name 253 characters", cfg: with(func(c *NodeConfig) { c.Name = strings.Repeat("a", 253) })},

		// The kernel accepts CFS periods of 1ms to 1s, both ends included.
		{name: "period below 1ms", cfg: with(func(c *NodeConfig) { c.CPUCFSQuotaPeriod = time.Millisecond - time.Microsecond }), wantField: "cpuCFSQuotaPeriod"},
		{name: "period negative", cfg: with(func(c *NodeConfig) { c.CPUCFSQuotaPeriod = -100 * time.Millisecond }), wantField: "cpuCFSQuotaPeriod"},
		{name: "period 1ms", cfg: with(func(c *NodeConfig) { c.CPUCFSQuotaPeriod = time.Millisecond })},
		{name: "period 1s", cfg: with(func(c *NodeConfig) { c.CPUCFSQuotaPeriod = time.Second })},
		{name: "period above 1s", cfg: with(func(c *NodeConfig) { c.CPUCFSQuotaPeriod = time.Second + time.Microsecond }), wantField: "cpuCFSQuotaPeriod"},

		{name: "allocatable cpu negative", cfg: with(func(c *NodeConfig) { c.Allocatable[v1.ResourceCPU] = resource.MustParse("-1") }), wantField: "allocatable.cpu", wantMsg: "negative"},
		{name: "allocatable memory negative", cfg: with(func(c *NodeConfig) { c.Allocatable[v1.ResourceMemory] = resource.MustParse("-1Mi") }), wantField: "allocatable.memory", wantMsg: "negative"},
		{name: "allocatable memory above capacity", cfg: with(func(c *NodeConfig) { c.Allocatable[v1.ResourceMemory] = resource.MustParse("65Gi") }), wantField: "allocatable.memory", wantMsg: "capacity"},
		{name: "allocatable cpu a millicore above capacity", cfg: with(func(c *NodeConfig) { c.Allocatable[v1.ResourceCPU] = resource.MustParse("16001m") }), wantField: "allocatable.cpu"},
		{name: "allocatable zero", cfg: with(func(c *NodeConfig) { c.Allocatable[v1.ResourceCPU] = resource.MustParse("0") })},
		{name: "allocatable below capacity", cfg: with(func(c *NodeConfig) { c.Allocatable[v1.ResourceMemory] = resource.MustParse("60Gi") })},
		// Equal in value but written in another unit is not above.
		{name: "allocatable equal to capacity in other units", cfg: with(func(c *NodeConfig) { c.Allocatable[v1.ResourceCPU] = resource.MustParse("16000m") })},

		// The cgroup root is written as the kubelet's --cgroup-root, with
		// or without the leading "/" of the hierarchy root.
		{name: "cgroupRoot slash", cfg: with(func(c *NodeConfig) { c.CgroupRoot = "/" })},
		{name: "cgroupRoot absolute", cfg: with(func(c *NodeConfig) { c.CgroupRoot = "/kubelet" })},
		{name: "cgroupRoot relative and nested", cfg: with(func(c *NodeConfig) { c.CgroupRoot = "a/b/" })},
		{name: "cgroupRoot leaving the hierarchy", cfg: with(func(c *NodeConfig) { c.CgroupRoot = "../../etc" }), wantField: "cgroupRoot", wantMsg: `"../../etc": ".." component`},
		{name: "cgroupRoot dot", cfg: with(func(c *NodeConfig) { c.CgroupRoot = "/a/./b" }), wantField: "cgroupRoot", wantMsg: `"/a/./b"`},
		{name: "cgroupRoot empty component", cfg: with(func(c *NodeConfig) { c.CgroupRoot = "a//b" }), wantField: "cgroupRoot", wantMsg: "empty component"},
		{name: "cgroupRoot two leading slashes", cfg: with(func(c *NodeConfig) { c.CgroupRoot = "//a" }), wantField: "cgroupRoot", wantMsg: "empty component"},
		{name: "cgroupRoot newline", cfg: with(func(c *NodeConfig) { c.CgroupRoot = "a\nb" }), wantField: "cgroupRoot", wantMsg: "control character"},

		{name: "feature gate with dash", cfg: with(func(c *NodeConfig) { c.FeatureGates = map[string]bool{"in-place": true} }), wantField: "featureGates.in-place"},
		{name: "feature gate lower case", cfg: with(func(c *NodeConfig) { c.FeatureGates = map[string]bool{"podLevelResources": true} }), wantField: "featureGates.podLevelResources"},
		{name: "feature gate with spaces", cfg: with(func(c *NodeConfig) { c.FeatureGates = map[string]bool{"Pod Level": false} }), wantField: "featureGates.Pod Level"},
		{name: "feature gate empty name", cfg: with(func(c *NodeConfig) { c.FeatureGates = map[string]bool{"": true} }), wantField: "featureGates."},
		{name: "feature gate misspelt", cfg: with(func(c *NodeConfig) { c.FeatureGates = map[string]bool{"InPlacePodVerticalScalingg": true} }), wantField: "featureGates.InPlacePodVerticalScalingg"},
		{name: "feature gate of a later version", cfg: with(func(c *NodeConfig) {
			c.FeatureGates = map[string]bool{profile.GateMemoryQoS: true, profile.GatePodLevelResourcesFixDefaulting: true}
		}), wantField: "featureGates.PodLevelResourcesFixDefaulting"},
		{name: "feature gates known names", cfg: with(func(c *NodeConfig) {
			c.FeatureGates = map[string]bool{profile.GateInPlacePodLevelResourcesVerticalScaling: true, profile.GateCustomCPUCFSQuotaPeriod: false}
		})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.wantField == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want an error on %s", tc.wantField)
			}
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("Validate() = %T %v, want a *ConfigError", err, err)
			}
			if !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("errors.Is(%v, ErrInvalidConfig) = false, want true", err)
			}
			if ce.Field != tc.wantField {
				t.Errorf("Field = %q, want %q (error %v)", ce.Field, tc.wantField, err)
			}
			if tc.wantMsg != "" && !strings.Contains(ce.Msg, tc.wantMsg) {
				t.Errorf("Msg = %q, want it to contain %q", ce.Msg, tc.wantMsg)
			}
			// Error names the field so that a user can find it.
			if !strings.Contains(err.Error(), tc.wantField) {
				t.Errorf("Error() = %q, want it to name %q", err.Error(), tc.wantField)
			}
		})
	}
}

// TestValidateCgroupRootWrapsErrInvalidPath: a cgroup root the cgroup
// managers would refuse is refused with both ErrInvalidConfig and the
// managers' own ErrInvalidPath, naming the field and the value.
func TestValidateCgroupRootWrapsErrInvalidPath(t *testing.T) {
	for _, root := range []string{"../../etc", "a\nb", "/a/../b", "a//b"} {
		err := NodeConfig{CgroupRoot: root}.WithDefaults().Validate()
		if !errors.Is(err, ErrInvalidConfig) || !errors.Is(err, cgconfig.ErrInvalidPath) {
			t.Errorf("Validate(cgroupRoot %q) = %v, want ErrInvalidConfig and ErrInvalidPath", root, err)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "node config: cgroupRoot: ") || !strings.Contains(msg, strconv.Quote(root)) {
			t.Errorf("Validate(cgroupRoot %q) = %q, want it to name cgroupRoot and the value", root, msg)
		}
	}
}

// TestConfigErrorIsOnlyInvalidConfig checks that a ConfigError matches
// ErrInvalidConfig and not some other sentinel.
func TestConfigErrorIsOnlyInvalidConfig(t *testing.T) {
	err := error(&ConfigError{Field: "os", Msg: "bad"})
	if !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("errors.Is(ConfigError, ErrInvalidConfig) = false, want true")
	}
	if errors.Is(err, profile.ErrUnknownVersion) {
		t.Errorf("errors.Is(ConfigError, profile.ErrUnknownVersion) = true, want false")
	}
}

func TestNodeConfigPodCgroup(t *testing.T) {
	const uid = types.UID("0f1e2d3c-aaaa-bbbb")
	cases := []struct {
		name   string
		driver cgconfig.Driver
		root   string
		qos    v1.PodQOSClass
		want   string
	}{
		// cgroupfs: plain paths, Guaranteed pods directly under kubepods.
		{name: "cgroupfs guaranteed", driver: cgconfig.DriverCgroupfs, qos: v1.PodQOSGuaranteed, want: "kubepods/pod0f1e2d3c-aaaa-bbbb"},
		{name: "cgroupfs burstable", driver: cgconfig.DriverCgroupfs, qos: v1.PodQOSBurstable, want: "kubepods/burstable/pod0f1e2d3c-aaaa-bbbb"},
		{name: "cgroupfs besteffort", driver: cgconfig.DriverCgroupfs, qos: v1.PodQOSBestEffort, want: "kubepods/besteffort/pod0f1e2d3c-aaaa-bbbb"},
		// systemd: each level is a slice named after all the levels above
		// it, with the UID's dashes turned into underscores.
		{name: "systemd guaranteed", driver: cgconfig.DriverSystemd, qos: v1.PodQOSGuaranteed, want: "kubepods.slice/kubepods-pod0f1e2d3c_aaaa_bbbb.slice"},
		{name: "systemd burstable", driver: cgconfig.DriverSystemd, qos: v1.PodQOSBurstable, want: "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0f1e2d3c_aaaa_bbbb.slice"},
		{name: "systemd besteffort", driver: cgconfig.DriverSystemd, qos: v1.PodQOSBestEffort, want: "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod0f1e2d3c_aaaa_bbbb.slice"},
		// The cgroup root goes in front, without its leading and trailing
		// slashes, so the result stays relative to the hierarchy root.
		{name: "cgroupfs root", driver: cgconfig.DriverCgroupfs, root: "custom", qos: v1.PodQOSBurstable, want: "custom/kubepods/burstable/pod0f1e2d3c-aaaa-bbbb"},
		{name: "cgroupfs root with slashes", driver: cgconfig.DriverCgroupfs, root: "/custom/", qos: v1.PodQOSBurstable, want: "custom/kubepods/burstable/pod0f1e2d3c-aaaa-bbbb"},
		{name: "cgroupfs nested root", driver: cgconfig.DriverCgroupfs, root: "/a/b", qos: v1.PodQOSGuaranteed, want: "a/b/kubepods/pod0f1e2d3c-aaaa-bbbb"},
		{name: "cgroupfs root slash only", driver: cgconfig.DriverCgroupfs, root: "/", qos: v1.PodQOSBestEffort, want: "kubepods/besteffort/pod0f1e2d3c-aaaa-bbbb"},
		// systemd: the root's components are parts of the kubelet's cgroup
		// name like kubepods (container_manager_linux.go,
		// ParseCgroupfsToCgroupName and NewCgroupName), and
		// CgroupName.ToSystemd makes one chain of slices of all of them,
		// escaping dashes; a root written as a slice name is taken as a
		// name too (kubelet.slice.slice), as the kubelet takes it.
		{name: "systemd root", driver: cgconfig.DriverSystemd, root: "/resizelet-1", qos: v1.PodQOSBurstable, want: "resizelet_1.slice/resizelet_1-kubepods.slice/resizelet_1-kubepods-burstable.slice/resizelet_1-kubepods-burstable-pod0f1e2d3c_aaaa_bbbb.slice"},
		{name: "systemd root with slashes", driver: cgconfig.DriverSystemd, root: "/kubelet.slice/", qos: v1.PodQOSBurstable, want: "kubelet.slice.slice/kubelet.slice-kubepods.slice/kubelet.slice-kubepods-burstable.slice/kubelet.slice-kubepods-burstable-pod0f1e2d3c_aaaa_bbbb.slice"},
		{name: "systemd root slash only", driver: cgconfig.DriverSystemd, root: "/", qos: v1.PodQOSGuaranteed, want: "kubepods.slice/kubepods-pod0f1e2d3c_aaaa_bbbb.slice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := NodeConfig{CgroupDriver: tc.driver, CgroupRoot: tc.root}.WithDefaults()
			if got := cfg.PodCgroup(tc.qos, uid); got != tc.want {
				t.Errorf("PodCgroup(%s, %s) = %q, want %q", tc.qos, uid, got, tc.want)
			}
		})
	}
}

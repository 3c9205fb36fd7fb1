package cgconfig

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// pcContainer builds a container; an empty quantity is not set.
func pcContainer(name, cpuReq, cpuLim, memReq, memLim string) v1.Container {
	c := v1.Container{Name: name}
	set := func(list *v1.ResourceList, r v1.ResourceName, q string) {
		if q == "" {
			return
		}
		if *list == nil {
			*list = v1.ResourceList{}
		}
		(*list)[r] = resource.MustParse(q)
	}
	set(&c.Resources.Requests, v1.ResourceCPU, cpuReq)
	set(&c.Resources.Limits, v1.ResourceCPU, cpuLim)
	set(&c.Resources.Requests, v1.ResourceMemory, memReq)
	set(&c.Resources.Limits, v1.ResourceMemory, memLim)
	return c
}

// pcSidecar makes an init container a sidecar (restartPolicy Always).
func pcSidecar(c v1.Container) v1.Container {
	always := v1.ContainerRestartPolicyAlways
	c.RestartPolicy = &always
	return c
}

func pcPod(containers []v1.Container, inits ...v1.Container) *v1.Pod {
	return &v1.Pod{Spec: v1.PodSpec{Containers: containers, InitContainers: inits}}
}

// pcConfig is a ResourceConfig by value for comparison: -1 marks a nil
// field (a real quota of -1 is written as "unlimited").
type pcConfig struct {
	Shares int64
	Quota  int64
	Period int64
	Memory int64
}

const pcNil = -2

func pcFlatten(c ResourceConfig) pcConfig {
	out := pcConfig{pcNil, pcNil, pcNil, pcNil}
	if c.CPUShares != nil {
		out.Shares = int64(*c.CPUShares)
	}
	if c.CPUQuota != nil {
		out.Quota = *c.CPUQuota
	}
	if c.CPUPeriod != nil {
		out.Period = int64(*c.CPUPeriod)
	}
	if c.Memory != nil {
		out.Memory = *c.Memory
	}
	return out
}

func TestPodConfig(t *testing.T) {
	on := PodConfigOptions{EnforceCPULimits: true}
	tests := []struct {
		name string
		pod  *v1.Pod
		opts PodConfigOptions
		want pcConfig
	}{
		{
			name: "guaranteed sums containers",
			pod: pcPod([]v1.Container{
				pcContainer("a", "500m", "500m", "128Mi", "128Mi"),
				pcContainer("b", "250m", "250m", "64Mi", "64Mi"),
			}),
			opts: on,
			want: pcConfig{int64(MilliCPUToShares(750)), 75000, 100000, 192 << 20},
		},
		{
			name: "burstable, every container declares both limits",
			pod: pcPod([]v1.Container{
				pcContainer("a", "100m", "500m", "64Mi", "128Mi"),
				pcContainer("b", "200m", "300m", "32Mi", "64Mi"),
			}),
			opts: on,
			want: pcConfig{int64(MilliCPUToShares(300)), 80000, 100000, 192 << 20},
		},
		{
			name: "burstable, one container without a cpu limit",
			pod: pcPod([]v1.Container{
				pcContainer("a", "100m", "500m", "64Mi", "128Mi"),
				pcContainer("b", "200m", "", "32Mi", "64Mi"),
			}),
			opts: on,
			want: pcConfig{int64(MilliCPUToShares(300)), pcNil, pcNil, 192 << 20},
		},
		{
			name: "burstable, one container without a memory limit",
			pod: pcPod([]v1.Container{
				pcContainer("a", "100m", "500m", "64Mi", "128Mi"),
				pcContainer("b", "200m", "300m", "32Mi", ""),
			}),
			opts: on,
			want: pcConfig{int64(MilliCPUToShares(300)), 80000, 100000, pcNil},
		},
		{
			name: "burstable, a zero limit is no limit",
			pod: pcPod([]v1.Container{
				pcContainer("a", "100m", "500m", "64Mi", "128Mi"),
				pcContainer("b", "", "0", "", "0"),
			}),
			opts: on,
			want: pcConfig{int64(MilliCPUToShares(100)), pcNil, pcNil, pcNil},
		},
		{
			name: "burstable, an init container without limits drops the pod limits",
			pod: pcPod(
				[]v1.Container{pcContainer("a", "100m", "500m", "64Mi", "128Mi")},
				pcContainer("init", "100m", "", "64Mi", ""),
			),
			opts: on,
			want: pcConfig{int64(MilliCPUToShares(100)), pcNil, pcNil, pcNil},
		},
		{
			name: "init container larger than the regular ones sets the pod values",
			pod: pcPod(
				[]v1.Container{pcContainer("a", "200m", "500m", "64Mi", "128Mi")},
				pcContainer("init", "1", "1", "256Mi", "256Mi"),
			),
			opts: on,
			want: pcConfig{int64(MilliCPUToShares(1000)), 100000, 100000, 256 << 20},
		},
		{
			name: "sidecars add to the regular containers and to later init containers",
			pod: pcPod(
				[]v1.Container{pcContainer("a", "200m", "400m", "64Mi", "128Mi")},
				pcSidecar(pcContainer("proxy", "100m", "200m", "32Mi", "64Mi")),
				pcContainer("init", "600m", "700m", "64Mi", "128Mi"),
			),
			opts: on,
			// requests: max(200+100, 100+600) = 700m; cpu limits:
			// max(400+200, 200+700) = 900m; memory limits:
			// max(128+64, 64+128) = 192Mi.
			want: pcConfig{int64(MilliCPUToShares(700)), 90000, 100000, 192 << 20},
		},
		{
			name: "overhead adds to requests and to declared limits",
			pod: func() *v1.Pod {
				p := pcPod([]v1.Container{pcContainer("a", "100m", "500m", "64Mi", "128Mi")})
				p.Spec.Overhead = v1.ResourceList{v1.ResourceCPU: resource.MustParse("50m"), v1.ResourceMemory: resource.MustParse("16Mi")}
				return p
			}(),
			opts: on,
			want: pcConfig{int64(MilliCPUToShares(150)), 55000, 100000, 144 << 20},
		},
		{
			name: "overhead does not make a limit",
			pod: func() *v1.Pod {
				p := pcPod([]v1.Container{pcContainer("a", "100m", "", "64Mi", "")})
				p.Spec.Overhead = v1.ResourceList{v1.ResourceCPU: resource.MustParse("50m"), v1.ResourceMemory: resource.MustParse("16Mi")}
				return p
			}(),
			opts: on,
			want: pcConfig{int64(MilliCPUToShares(150)), pcNil, pcNil, pcNil},
		},
		{
			name: "besteffort gets the minimum shares only",
			pod:  pcPod([]v1.Container{pcContainer("a", "", "", "", ""), pcContainer("b", "", "", "", "")}),
			opts: on,
			want: pcConfig{MinShares, pcNil, pcNil, pcNil},
		},
		{
			name: "guaranteed without cpu cfs quota is unlimited",
			pod:  pcPod([]v1.Container{pcContainer("a", "500m", "500m", "128Mi", "128Mi")}),
			opts: PodConfigOptions{EnforceCPULimits: false},
			want: pcConfig{int64(MilliCPUToShares(500)), Unlimited, 100000, 128 << 20},
		},
		{
			name: "burstable with limits without cpu cfs quota is unlimited",
			pod:  pcPod([]v1.Container{pcContainer("a", "100m", "500m", "64Mi", "128Mi")}),
			opts: PodConfigOptions{EnforceCPULimits: false},
			want: pcConfig{int64(MilliCPUToShares(100)), Unlimited, 100000, 128 << 20},
		},
		{
			name: "custom period",
			pod:  pcPod([]v1.Container{pcContainer("a", "500m", "500m", "128Mi", "128Mi")}),
			opts: PodConfigOptions{EnforceCPULimits: true, CPUPeriod: 50000},
			want: pcConfig{int64(MilliCPUToShares(500)), 25000, 50000, 128 << 20},
		},
		{
			name: "custom period keeps the quota floor",
			pod:  pcPod([]v1.Container{pcContainer("a", "5m", "5m", "128Mi", "128Mi")}),
			opts: PodConfigOptions{EnforceCPULimits: true, CPUPeriod: 50000},
			want: pcConfig{int64(MilliCPUToShares(5)), 1000, 50000, 128 << 20},
		},
		{
			name: "pod-level limits count when the gate is on",
			pod: func() *v1.Pod {
				p := pcPod([]v1.Container{pcContainer("a", "100m", "", "64Mi", "")})
				p.Spec.Resources = &v1.ResourceRequirements{
					Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("200m"), v1.ResourceMemory: resource.MustParse("64Mi")},
					Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("256Mi")},
				}
				return p
			}(),
			opts: PodConfigOptions{EnforceCPULimits: true, PodLevelResources: true},
			want: pcConfig{int64(MilliCPUToShares(200)), 100000, 100000, 256 << 20},
		},
		{
			name: "pod-level limits are ignored when the gate is off",
			pod: func() *v1.Pod {
				p := pcPod([]v1.Container{pcContainer("a", "100m", "", "64Mi", "")})
				p.Spec.Resources = &v1.ResourceRequirements{
					Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("200m"), v1.ResourceMemory: resource.MustParse("64Mi")},
					Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("256Mi")},
				}
				return p
			}(),
			opts: on,
			want: pcConfig{int64(MilliCPUToShares(100)), pcNil, pcNil, pcNil},
		},
		{
			name: "status QoS class wins over the spec",
			pod: func() *v1.Pod {
				p := pcPod([]v1.Container{pcContainer("a", "100m", "500m", "64Mi", "128Mi")})
				p.Status.QOSClass = v1.PodQOSBestEffort
				return p
			}(),
			opts: on,
			want: pcConfig{MinShares, pcNil, pcNil, pcNil},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := pcFlatten(PodConfig(tt.pod, tt.opts))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("PodConfig (-want +got, %d = nil):\n%s", pcNil, diff)
			}
		})
	}
}

func TestResourceConfigValues(t *testing.T) {
	shares, quota, zeroQuota, period := uint64(1024), int64(50000), int64(0), uint64(100000)
	mem, zeroMem := int64(128<<20), int64(0)
	full := ResourceConfig{CPUShares: &shares, CPUQuota: &quota, CPUPeriod: &period, Memory: &mem}
	tests := []struct {
		name    string
		cfg     ResourceConfig
		version Version
		weight  WeightFunc
		want    Values
	}{
		{"v2 linear", full, V2, LinearWeight, Values{CPUWeight: ptr(uint64(39)), CPUQuota: &quota, CPUPeriod: &period, MemoryLimit: &mem}},
		{"v2 quadratic", full, V2, QuadraticWeight, Values{CPUWeight: ptr(uint64(100)), CPUQuota: &quota, CPUPeriod: &period, MemoryLimit: &mem}},
		{"v1 shares", full, V1, LinearWeight, Values{CPUShares: &shares, CPUQuota: &quota, CPUPeriod: &period, MemoryLimit: &mem}},
		{"zero quota is unlimited", ResourceConfig{CPUQuota: &zeroQuota}, V2, LinearWeight, Values{CPUQuota: ptr(Unlimited)}},
		{"zero memory is unset", ResourceConfig{Memory: &zeroMem}, V1, LinearWeight, Values{}},
		{"nil stays nil", ResourceConfig{}, V2, LinearWeight, Values{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.cfg.Values(tt.version, tt.weight)); diff != "" {
				t.Errorf("Values (-want +got):\n%s", diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

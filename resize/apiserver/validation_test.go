package apiserver

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/resizelet/resizelet/qos"
	"github.com/resizelet/resizelet/resize/profile"
)

// rl parses "cpu=100m,memory=1Gi" into a resource list; "" is nil.
func rl(s string) v1.ResourceList {
	if s == "" {
		return nil
	}
	out := v1.ResourceList{}
	for _, kv := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(kv, "=")
		out[v1.ResourceName(k)] = resource.MustParse(v)
	}
	return out
}

// ctr is a regular container with the given requests and limits.
func ctr(name, requests, limits string) v1.Container {
	return v1.Container{Name: name, Image: "pause", Resources: v1.ResourceRequirements{Requests: rl(requests), Limits: rl(limits)}}
}

// initCtr is a non-sidecar init container.
func initCtr(name, requests, limits string) v1.Container { return ctr(name, requests, limits) }

// sidecar is a restartable init container.
func sidecar(name, requests, limits string) v1.Container {
	c := ctr(name, requests, limits)
	always := v1.ContainerRestartPolicyAlways
	c.RestartPolicy = &always
	return c
}

// testPod is a pod named resize-demo at generation 1 with the containers.
func testPod(containers ...v1.Container) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "resize-demo", Namespace: "default", Generation: 1},
		Spec:       v1.PodSpec{Containers: containers},
	}
}

// withInit adds init containers to a pod.
func withInit(p *v1.Pod, cs ...v1.Container) *v1.Pod {
	p.Spec.InitContainers = append(p.Spec.InitContainers, cs...)
	return p
}

// opts is ResizeOptions for a profile with some gates set explicitly and
// the rest at the profile's defaults.
func opts(p profile.Version, gates map[string]bool) ResizeOptions {
	if gates == nil {
		return ResizeOptions{Profile: p}
	}
	return ResizeOptions{Profile: p, Gate: profile.New(p, gates).Gate}
}

// wantErr is one expected validation error: field path, type and detail,
// all compared exactly.
type wantErr struct {
	field  string
	typ    field.ErrorType
	detail string
}

// checkErrs asserts that errs are exactly want, in order.
func checkErrs(t *testing.T, errs field.ErrorList, want []wantErr) {
	t.Helper()
	if len(errs) != len(want) {
		t.Fatalf("got %d errors, want %d:\n got %v\nwant %v", len(errs), len(want), errs, want)
	}
	for i, w := range want {
		e := errs[i]
		if e.Field != w.field || e.Type != w.typ || e.Detail != w.detail {
			t.Errorf("error %d = {%q %q %q}, want {%q %q %q}", i, e.Field, e.Type, e.Detail, w.field, w.typ, w.detail)
		}
	}
}

func TestValidateResize(t *testing.T) {
	guaranteed := func() *v1.Pod { return testPod(ctr("c1", "cpu=100m,memory=100Mi", "cpu=100m,memory=100Mi")) }
	burstable := func() *v1.Pod { return testPod(ctr("c1", "cpu=100m,memory=100Mi", "cpu=200m,memory=200Mi")) }
	twoBurstable := func() *v1.Pod { return testPod(ctr("c1", "cpu=100m", ""), ctr("c2", "cpu=100m", "")) }
	podLevel := func() *v1.Pod {
		p := testPod(ctr("c1", "cpu=100m", ""))
		p.Spec.Resources = &v1.ResourceRequirements{Requests: rl("cpu=500m,memory=500Mi"), Limits: rl("cpu=1,memory=1Gi")}
		return p
	}
	setReq := func(i int, s string) func(*v1.Pod) {
		return func(p *v1.Pod) { p.Spec.Containers[i].Resources.Requests = rl(s) }
	}
	setLim := func(i int, s string) func(*v1.Pod) {
		return func(p *v1.Pod) { p.Spec.Containers[i].Resources.Limits = rl(s) }
	}
	both := func(fs ...func(*v1.Pod)) func(*v1.Pod) {
		return func(p *v1.Pod) {
			for _, f := range fs {
				f(p)
			}
		}
	}

	tests := []struct {
		name     string
		opts     ResizeOptions
		old      *v1.Pod
		noStatus bool // leave status.qosClass empty on the old pod
		edit     func(*v1.Pod)
		want     []wantErr
	}{
		{
			name: "cpu and memory increase is allowed",
			old:  guaranteed(),
			edit: both(setReq(0, "cpu=200m,memory=200Mi"), setLim(0, "cpu=200m,memory=200Mi")),
		},
		{
			name: "adding an ephemeral-storage limit is not allowed",
			old:  burstable(),
			edit: setLim(0, "cpu=200m,memory=200Mi,ephemeral-storage=1Gi"),
			want: []wantErr{{"spec", field.ErrorTypeForbidden, "only cpu and memory resources are mutable"}},
		},
		{
			name: "adding a cpu limit to a container with requests only is allowed",
			old:  twoBurstable(),
			edit: setLim(0, "cpu=300m"),
		},
		{
			name: "QoS class change from BestEffort by a memory request",
			old:  testPod(ctr("c1", "", "")),
			edit: setReq(0, "memory=100Mi"),
			want: []wantErr{{"spec", field.ErrorTypeInvalid, "Pod QOS Class may not change as a result of resizing"}},
		},
		{
			name: "QoS class change from Burstable by setting requests equal to limits",
			old:  burstable(),
			edit: setReq(0, "cpu=200m,memory=200Mi"),
			want: []wantErr{{"spec", field.ErrorTypeInvalid, "Pod QOS Class may not change as a result of resizing"}},
		},
		{
			name:     "QoS class is computed when the old pod's status has none",
			old:      guaranteed(),
			noStatus: true,
			edit:     setReq(0, "cpu=50m,memory=100Mi"),
			want:     []wantErr{{"spec", field.ErrorTypeInvalid, "Pod QOS Class may not change as a result of resizing"}},
		},
		{
			name: "QoS check comes before the limit removal check",
			old:  guaranteed(),
			edit: setLim(0, ""),
			want: []wantErr{
				{"spec", field.ErrorTypeInvalid, "Pod QOS Class may not change as a result of resizing"},
				{"spec.containers[0].resources.limits", field.ErrorTypeForbidden, "resource limits cannot be removed"},
			},
		},
		{
			name: "requests cannot be removed",
			old:  burstable(),
			edit: setReq(0, "cpu=100m"),
			want: []wantErr{{"spec.containers[0].resources.requests", field.ErrorTypeForbidden, "resource requests cannot be removed"}},
		},
		{
			name: "limits cannot be removed",
			old:  burstable(),
			edit: setLim(0, "memory=200Mi"),
			want: []wantErr{{"spec.containers[0].resources.limits", field.ErrorTypeForbidden, "resource limits cannot be removed"}},
		},
		{
			name: "sidecar requests cannot be removed",
			old:  withInit(twoBurstable(), sidecar("s1", "cpu=100m,memory=100Mi", "")),
			edit: func(p *v1.Pod) { p.Spec.InitContainers[0].Resources.Requests = rl("cpu=100m") },
			want: []wantErr{{"spec.initContainers[0].resources.requests", field.ErrorTypeForbidden, "resource requests cannot be removed"}},
		},
		{
			name: "sidecar cpu change is allowed",
			old:  withInit(twoBurstable(), sidecar("s1", "cpu=100m", "")),
			edit: func(p *v1.Pod) { p.Spec.InitContainers[0].Resources.Requests = rl("cpu=300m") },
		},
		{
			name: "only cpu and memory may change",
			old:  testPod(ctr("c1", "cpu=100m,ephemeral-storage=1Gi", "")),
			edit: setReq(0, "cpu=100m,ephemeral-storage=2Gi"),
			want: []wantErr{{"spec", field.ErrorTypeForbidden, "only cpu and memory resources are mutable"}},
		},
		{
			name: "extended resources may not change",
			old:  testPod(ctr("c1", "cpu=100m,example.com/dongle=1", "example.com/dongle=1")),
			edit: both(setReq(0, "cpu=100m,example.com/dongle=2"), setLim(0, "example.com/dongle=2")),
			want: []wantErr{{"spec", field.ErrorTypeForbidden, "only cpu and memory resources are mutable"}},
		},
		{
			name: "only cpu and memory may change for sidecars",
			old:  withInit(twoBurstable(), sidecar("s1", "cpu=100m,ephemeral-storage=1Gi", "")),
			edit: func(p *v1.Pod) { p.Spec.InitContainers[0].Resources.Requests = rl("cpu=100m,ephemeral-storage=2Gi") },
			want: []wantErr{{"spec", field.ErrorTypeForbidden, "only cpu and memory resources for sidecar containers are mutable"}},
		},
		{
			name: "non-sidecar init containers are immutable in 1.35",
			old:  withInit(twoBurstable(), initCtr("i1", "cpu=100m", "")),
			edit: func(p *v1.Pod) { p.Spec.InitContainers[0].Resources.Requests = rl("cpu=200m") },
			want: []wantErr{{"spec", field.ErrorTypeForbidden, "resources for non-sidecar init containers are immutable"}},
		},
		{
			name: "non-sidecar init containers are resizable in 1.36",
			opts: opts(profile.V136, nil),
			old:  withInit(twoBurstable(), initCtr("i1", "cpu=100m", "")),
			edit: func(p *v1.Pod) { p.Spec.InitContainers[0].Resources.Requests = rl("cpu=200m") },
		},
		{
			// An init container that already has the policy may keep it
			// (the create rule is waived for it), but may not be resized
			// (ValidatePodResize, 1.36).
			name: "a non-sidecar init container with RestartContainer cannot be resized in 1.36",
			opts: opts(profile.V136, nil),
			old: func() *v1.Pod {
				p := withInit(twoBurstable(), initCtr("i1", "cpu=100m", ""))
				p.Spec.InitContainers[0].ResizePolicy = []v1.ContainerResizePolicy{{ResourceName: v1.ResourceMemory, RestartPolicy: v1.RestartContainer}}
				return p
			}(),
			edit: func(p *v1.Pod) { p.Spec.InitContainers[0].Resources.Requests = rl("cpu=200m") },
			want: []wantErr{{"spec.initContainers[0]", field.ErrorTypeForbidden, "non-sidecar init containers with a resize policy of RestartContainer cannot be resized"}},
		},
		{
			name: "a non-sidecar init container may take RestartContainer in 1.35",
			opts: opts(profile.V135, nil),
			old:  withInit(twoBurstable(), initCtr("i1", "cpu=100m", "")),
			edit: func(p *v1.Pod) {
				p.Spec.InitContainers[0].ResizePolicy = []v1.ContainerResizePolicy{{ResourceName: v1.ResourceMemory, RestartPolicy: v1.RestartContainer}}
			},
			want: []wantErr{{"spec", field.ErrorTypeForbidden, "resources for non-sidecar init containers are immutable"}},
		},
		{
			// Adding the policy: the create rule applies (the old pod had
			// none), then the resize's own rules.
			name: "adding RestartContainer to a non-sidecar init container in 1.36",
			opts: opts(profile.V136, nil),
			old:  withInit(twoBurstable(), initCtr("i1", "cpu=100m", "")),
			edit: func(p *v1.Pod) {
				p.Spec.InitContainers[0].ResizePolicy = []v1.ContainerResizePolicy{{ResourceName: v1.ResourceMemory, RestartPolicy: v1.RestartContainer}}
			},
			want: []wantErr{
				{"spec.initContainers[0].resizePolicy[0].restartPolicy", field.ErrorTypeInvalid, "must not be set to 'RestartContainer' for non-sidecar initContainers"},
				{"spec.initContainers[0]", field.ErrorTypeForbidden, "only cpu and memory resources for init or sidecar containers are mutable"},
				{"spec.initContainers[0]", field.ErrorTypeForbidden, "non-sidecar init containers with a resize policy of RestartContainer cannot be resized"},
			},
		},
		{
			name: "non-sidecar init containers are immutable in 1.36 with the gate off",
			opts: opts(profile.V136, map[string]bool{profile.GateInPlacePodVerticalScalingInitContainers: false}),
			old:  withInit(twoBurstable(), initCtr("i1", "cpu=100m", "")),
			edit: func(p *v1.Pod) { p.Spec.InitContainers[0].Resources.Requests = rl("cpu=200m") },
			want: []wantErr{{"spec", field.ErrorTypeForbidden, "resources for non-sidecar init containers are immutable"}},
		},
		{
			name: "init container removals are checked in 1.36",
			opts: opts(profile.V136, nil),
			old:  withInit(twoBurstable(), initCtr("i1", "cpu=100m", "cpu=200m")),
			edit: func(p *v1.Pod) { p.Spec.InitContainers[0].Resources.Limits = nil },
			want: []wantErr{{"spec.initContainers[0].resources.limits", field.ErrorTypeForbidden, "resource limits cannot be removed"}},
		},
		{
			name: "only cpu and memory may change for init containers in 1.36",
			opts: opts(profile.V136, nil),
			old:  withInit(twoBurstable(), initCtr("i1", "cpu=100m,ephemeral-storage=1Gi", "")),
			edit: func(p *v1.Pod) { p.Spec.InitContainers[0].Resources.Requests = rl("cpu=100m,ephemeral-storage=2Gi") },
			want: []wantErr{{"spec.initContainers[0]", field.ErrorTypeForbidden, "only cpu and memory resources for init or sidecar containers are mutable"}},
		},
		{
			name: "node without resize support",
			old: func() *v1.Pod {
				p := burstable()
				p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c1", State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}}
				return p
			}(),
			edit: setReq(0, "cpu=150m,memory=100Mi"),
			want: []wantErr{{"spec", field.ErrorTypeForbidden, "Pod running on node without support for resize"}},
		},
		{
			name: "a container that is not running does not tell about node support",
			old: func() *v1.Pod {
				p := burstable()
				p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c1", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{}}}}
				return p
			}(),
			edit: setReq(0, "cpu=150m,memory=100Mi"),
		},
		{
			name: "static pods cannot be resized and that error stands alone",
			old: func() *v1.Pod {
				p := burstable()
				p.Annotations = map[string]string{"kubernetes.io/config.mirror": "hash"}
				return p
			}(),
			edit: setLim(0, ""),
			want: []wantErr{{"[]", field.ErrorTypeForbidden, "static pods cannot be resized"}},
		},
		{
			name: "windows pods cannot be resized",
			old: func() *v1.Pod {
				p := burstable()
				p.Spec.OS = &v1.PodOS{Name: v1.Windows}
				return p
			}(),
			edit: setReq(0, "cpu=150m,memory=100Mi"),
			want: []wantErr{{"[]", field.ErrorTypeForbidden, "windows pods cannot be resized"}},
		},
		{
			name: "pods with pod-level resources in 1.34, alone",
			opts: opts(profile.V134, nil),
			old:  podLevel(),
			edit: setReq(0, ""),
			want: []wantErr{{"[]", field.ErrorTypeForbidden, "pods with pod-level resources cannot be resized"}},
		},
		{
			name: "pods with pod-level resources in 1.34 even with the gate on",
			opts: opts(profile.V134, map[string]bool{profile.GateInPlacePodLevelResourcesVerticalScaling: true}),
			old:  podLevel(),
			edit: setReq(0, "cpu=200m"),
			want: []wantErr{{"[]", field.ErrorTypeForbidden, "pods with pod-level resources cannot be resized"}},
		},
		{
			name: "pods with pod-level resources in 1.35 with the gate off",
			old:  podLevel(),
			edit: setReq(0, "cpu=200m"),
			want: []wantErr{{"[]", field.ErrorTypeForbidden, "resize of pods with pod-level resources is forbidden when InPlacePodLevelResourcesVerticalScalingEnabled feature gate is disabled"}},
		},
		{
			name: "pod-level cpu resize in 1.35 with the gate on",
			opts: opts(profile.V135, map[string]bool{profile.GateInPlacePodLevelResourcesVerticalScaling: true}),
			old:  podLevel(),
			edit: func(p *v1.Pod) { p.Spec.Resources.Limits = rl("cpu=2,memory=1Gi") },
		},
		{
			name: "pod-level resize in 1.36",
			opts: opts(profile.V136, nil),
			old:  podLevel(),
			edit: func(p *v1.Pod) { p.Spec.Resources.Requests = rl("cpu=700m,memory=600Mi") },
		},
		{
			name: "pod-level limits cannot be removed",
			opts: opts(profile.V136, nil),
			old:  podLevel(),
			edit: func(p *v1.Pod) { p.Spec.Resources.Limits = rl("cpu=1") },
			want: []wantErr{{"spec.resources.limits", field.ErrorTypeForbidden, "pod-level resource limits cannot be removed"}},
		},
		{
			name: "pod-level resources cannot be removed",
			opts: opts(profile.V136, nil),
			old:  podLevel(),
			edit: func(p *v1.Pod) { p.Spec.Resources = nil },
			// The pod stays Burstable (c1 has a request), so this is the
			// only error.
			want: []wantErr{{"spec.resources", field.ErrorTypeForbidden, "pod-level resources cannot be removed"}},
		},
		{
			name: "only cpu and memory may change at pod level",
			opts: opts(profile.V136, nil),
			old: func() *v1.Pod {
				p := podLevel()
				p.Spec.Resources.Limits["hugepages-2Mi"] = resource.MustParse("2Mi")
				p.Spec.Resources.Requests["hugepages-2Mi"] = resource.MustParse("2Mi")
				return p
			}(),
			edit: func(p *v1.Pod) {
				p.Spec.Resources.Limits["hugepages-2Mi"] = resource.MustParse("4Mi")
				p.Spec.Resources.Requests["hugepages-2Mi"] = resource.MustParse("4Mi")
			},
			want: []wantErr{{"spec", field.ErrorTypeForbidden, "only cpu and memory resources are mutable at pod-level"}},
		},
		{
			name: "1.33: memory limit decrease needs RestartContainer",
			opts: opts(profile.V133, nil),
			old:  burstable(),
			edit: setLim(0, "cpu=200m,memory=150Mi"),
			want: []wantErr{{"spec.containers[0].resources.limits[memory]", field.ErrorTypeForbidden, "memory limits cannot be decreased unless resizePolicy is RestartContainer"}},
		},
		{
			name: "1.33: memory limit decrease with RestartContainer is allowed",
			opts: opts(profile.V133, nil),
			old: func() *v1.Pod {
				p := burstable()
				p.Spec.Containers[0].ResizePolicy = []v1.ContainerResizePolicy{{ResourceName: v1.ResourceMemory, RestartPolicy: v1.RestartContainer}}
				return p
			}(),
			edit: setLim(0, "cpu=200m,memory=150Mi"),
		},
		{
			name: "1.33: memory limit added needs RestartContainer",
			opts: opts(profile.V133, nil),
			old:  twoBurstable(),
			edit: setLim(0, "memory=1Gi"),
			want: []wantErr{{"spec.containers[0].resources.limits[memory]", field.ErrorTypeForbidden, "memory limits cannot be added unless resizePolicy is RestartContainer"}},
		},
		{
			name: "1.34: memory limit decrease is allowed",
			opts: opts(profile.V134, nil),
			old:  burstable(),
			edit: setLim(0, "cpu=200m,memory=150Mi"),
		},
		{
			name: "1.34: a new list of other resources goes unnoticed",
			opts: opts(profile.V134, nil),
			old:  twoBurstable(),
			edit: setLim(0, "ephemeral-storage=1Gi"),
		},
		{
			name: "1.35: a new list of other resources is caught",
			old:  twoBurstable(),
			edit: setLim(0, "ephemeral-storage=1Gi"),
			want: []wantErr{{"spec", field.ErrorTypeForbidden, "only cpu and memory resources are mutable"}},
		},
		{
			name: "reordered containers",
			old:  twoBurstable(),
			edit: func(p *v1.Pod) {
				p.Spec.Containers[0], p.Spec.Containers[1] = p.Spec.Containers[1], p.Spec.Containers[0]
			},
			want: []wantErr{
				{"spec.containers[0].name", field.ErrorTypeForbidden, "containers may not be renamed or reordered on resize"},
				{"spec.containers[1].name", field.ErrorTypeForbidden, "containers may not be renamed or reordered on resize"},
			},
		},
		{
			name: "a renamed container stops validation before the removal checks",
			old:  twoBurstable(),
			edit: both(func(p *v1.Pod) { p.Spec.Containers[1].Name = "c3" }, setReq(0, "cpu=100m,memory=1Gi"), setReq(1, "")),
			want: []wantErr{{"spec.containers[1].name", field.ErrorTypeForbidden, "containers may not be renamed or reordered on resize"}},
		},
		{
			name: "an added container",
			old:  twoBurstable(),
			edit: func(p *v1.Pod) { p.Spec.Containers = append(p.Spec.Containers, ctr("c3", "cpu=100m", "")) },
			want: []wantErr{{"spec.containers", field.ErrorTypeForbidden, "containers may not be added or removed on resize"}},
		},
		{
			name: "a removed init container",
			old:  withInit(twoBurstable(), sidecar("s1", "cpu=100m", "")),
			edit: func(p *v1.Pod) { p.Spec.InitContainers = nil },
			want: []wantErr{{"spec.initContainers", field.ErrorTypeForbidden, "initContainers may not be added or removed on resize"}},
		},
		{
			name: "a reordered init container",
			old:  withInit(twoBurstable(), sidecar("s1", "cpu=100m", ""), sidecar("s2", "cpu=100m", "")),
			edit: func(p *v1.Pod) { p.Spec.InitContainers[1].Name = "s3" },
			want: []wantErr{{"spec.initContainers[1].name", field.ErrorTypeForbidden, "initContainers may not be renamed or reordered on resize"}},
		},
		{
			// The strategy keeps the new resizePolicy, but validation undoes
			// only cpu and memory changes before comparing containers, so a
			// changed policy is refused.
			name: "resizePolicy may not change",
			old:  burstable(),
			edit: func(p *v1.Pod) {
				p.Spec.Containers[0].ResizePolicy = []v1.ContainerResizePolicy{{ResourceName: v1.ResourceCPU, RestartPolicy: v1.RestartContainer}}
			},
			want: []wantErr{{"spec", field.ErrorTypeForbidden, "only cpu and memory resources are mutable"}},
		},
		{
			name: "resizePolicy is validated as on creation",
			old: func() *v1.Pod {
				p := burstable()
				p.Spec.RestartPolicy = v1.RestartPolicyNever
				return p
			}(),
			edit: func(p *v1.Pod) {
				p.Spec.Containers[0].ResizePolicy = []v1.ContainerResizePolicy{{ResourceName: v1.ResourceMemory, RestartPolicy: v1.RestartContainer}}
			},
			want: []wantErr{
				{"spec.containers[0].resizePolicy", field.ErrorTypeInvalid, "must be 'NotRequired' when `restartPolicy` is 'Never'"},
				{"spec", field.ErrorTypeForbidden, "only cpu and memory resources are mutable"},
			},
		},
		{
			name: "spec errors come before the QoS error",
			old:  burstable(),
			edit: setReq(0, "cpu=200m,gpu=1,memory=200Mi"),
			want: []wantErr{
				{"spec.containers[0].resources.requests[gpu]", field.ErrorTypeInvalid, "must be a standard resource for containers"},
				{"spec", field.ErrorTypeInvalid, "Pod QOS Class may not change as a result of resizing"},
				{"spec", field.ErrorTypeForbidden, "only cpu and memory resources are mutable"},
			},
		},
		{
			name: "other spec changes are caught last",
			old:  burstable(),
			edit: func(p *v1.Pod) { p.Spec.NodeName = "elsewhere" },
			want: []wantErr{{"spec", field.ErrorTypeForbidden, "only cpu and memory resources are mutable"}},
		},
		{
			name: "other container changes are caught",
			old:  burstable(),
			edit: func(p *v1.Pod) { p.Spec.Containers[0].Image = "other" },
			want: []wantErr{{"spec", field.ErrorTypeForbidden, "only cpu and memory resources are mutable"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := tc.old
			if !tc.noStatus {
				old.Status.QOSClass = qos.PodQOSClass(old)
			}
			newPod := old.DeepCopy()
			tc.edit(newPod)
			checkErrs(t, ValidateResize(newPod, old, tc.opts), tc.want)
		})
	}
}

// TestValidateResizeQOSValue pins the bad value the QoS error reports: the
// stored pod's class, so kubectl prints `spec: Invalid value: "Guaranteed"`.
func TestValidateResizeQOSValue(t *testing.T) {
	old := testPod(ctr("c1", "cpu=100m,memory=100Mi", "cpu=100m,memory=100Mi"))
	old.Status.QOSClass = v1.PodQOSGuaranteed
	newPod := old.DeepCopy()
	newPod.Spec.Containers[0].Resources.Requests = rl("cpu=50m,memory=100Mi")
	errs := ValidateResize(newPod, old, ResizeOptions{})
	if len(errs) != 1 {
		t.Fatalf("errors = %v, want one", errs)
	}
	want := `spec: Invalid value: "Guaranteed": Pod QOS Class may not change as a result of resizing`
	if got := errs[0].Error(); got != want {
		t.Errorf("error = %q, want %q", got, want)
	}
}

func TestValidatePod(t *testing.T) {
	never := func(p *v1.Pod) *v1.Pod { p.Spec.RestartPolicy = v1.RestartPolicyNever; return p }
	policy := func(c v1.Container, ps ...v1.ContainerResizePolicy) v1.Container { c.ResizePolicy = ps; return c }
	cpuP := func(rp v1.ResourceResizeRestartPolicy) v1.ContainerResizePolicy {
		return v1.ContainerResizePolicy{ResourceName: v1.ResourceCPU, RestartPolicy: rp}
	}
	ephemeral := func(p *v1.Pod, c v1.Container) *v1.Pod {
		p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, v1.EphemeralContainer{EphemeralContainerCommon: v1.EphemeralContainerCommon(c)})
		return p
	}
	tests := []struct {
		name string
		opts ResizeOptions
		pod  *v1.Pod
		want []wantErr
	}{
		{name: "valid", pod: withInit(testPod(ctr("c1", "cpu=100m", "cpu=200m,memory=1Gi")), sidecar("s1", "cpu=1", ""))},
		{
			name: "name required",
			pod:  func() *v1.Pod { p := testPod(ctr("c1", "", "")); p.Name = ""; return p }(),
			want: []wantErr{{"metadata.name", field.ErrorTypeRequired, "name or generateName is required"}},
		},
		{
			name: "containers required",
			pod:  testPod(),
			want: []wantErr{{"spec.containers", field.ErrorTypeRequired, ""}},
		},
		{
			name: "container name required",
			pod:  testPod(ctr("", "", "")),
			want: []wantErr{{"spec.containers[0].name", field.ErrorTypeRequired, ""}},
		},
		{
			name: "container name must be a DNS label",
			pod:  testPod(ctr("C_1", "", "")),
			want: []wantErr{{"spec.containers[0].name", field.ErrorTypeInvalid,
				"a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"}},
		},
		{
			name: "duplicate container names",
			pod:  testPod(ctr("c1", "", ""), ctr("c1", "", "")),
			want: []wantErr{{"spec.containers[1].name", field.ErrorTypeDuplicate, ""}},
		},
		{
			name: "init container named like a container",
			pod:  withInit(testPod(ctr("c1", "", "")), initCtr("c1", "", "")),
			want: []wantErr{{"spec.initContainers[0].name", field.ErrorTypeDuplicate, ""}},
		},
		{
			name: "ephemeral container named like an init container",
			pod:  ephemeral(withInit(testPod(ctr("c1", "", "")), initCtr("i1", "", "")), ctr("i1", "", "")),
			want: []wantErr{{"spec.ephemeralContainers[0].name", field.ErrorTypeDuplicate, ""}},
		},
		{
			name: "request above limit",
			pod:  testPod(ctr("c1", "cpu=300m", "cpu=200m")),
			want: []wantErr{{"spec.containers[0].resources.requests", field.ErrorTypeInvalid, "must be less than or equal to cpu limit of 200m"}},
		},
		{
			name: "negative quantity",
			pod:  testPod(ctr("c1", "", "memory=-1")),
			want: []wantErr{{"spec.containers[0].resources.limits[memory]", field.ErrorTypeInvalid, "must be greater than or equal to 0"}},
		},
		{
			name: "unknown standard resource",
			pod:  testPod(ctr("c1", "gpu=1", "")),
			want: []wantErr{{"spec.containers[0].resources.requests[gpu]", field.ErrorTypeInvalid, "must be a standard resource for containers"}},
		},
		{
			name: "extended resource request must equal its limit",
			pod:  testPod(ctr("c1", "example.com/dongle=1", "example.com/dongle=2")),
			want: []wantErr{{"spec.containers[0].resources.requests", field.ErrorTypeInvalid, "must be equal to example.com/dongle limit of 2"}},
		},
		{
			name: "extended resource request needs a limit",
			pod:  testPod(ctr("c1", "example.com/dongle=1", "")),
			want: []wantErr{{"spec.containers[0].resources.limits", field.ErrorTypeRequired, "Limit must be set for non overcommitable resources"}},
		},
		{
			name: "extended resources are whole",
			pod:  testPod(ctr("c1", "", "example.com/dongle=500m")),
			want: []wantErr{{"spec.containers[0].resources.limits[example.com/dongle]", field.ErrorTypeInvalid, "must be an integer"}},
		},
		{
			name: "resizePolicy for an unsupported resource",
			pod:  testPod(policy(ctr("c1", "", ""), v1.ContainerResizePolicy{ResourceName: "ephemeral-storage", RestartPolicy: v1.NotRequired})),
			want: []wantErr{{"spec.containers[0].resizePolicy", field.ErrorTypeNotSupported, `supported values: "cpu", "memory"`}},
		},
		{
			name: "resizePolicy duplicate",
			pod:  testPod(policy(ctr("c1", "", ""), cpuP(v1.NotRequired), cpuP(v1.RestartContainer))),
			want: []wantErr{{"spec.containers[0].resizePolicy[1]", field.ErrorTypeDuplicate, ""}},
		},
		{
			name: "resizePolicy unknown policy",
			pod:  testPod(policy(ctr("c1", "", ""), cpuP("Sometimes"))),
			want: []wantErr{{"spec.containers[0].resizePolicy", field.ErrorTypeNotSupported, `supported values: "NotRequired", "RestartContainer"`}},
		},
		{
			name: "resizePolicy fields required",
			pod:  testPod(policy(ctr("c1", "", ""), v1.ContainerResizePolicy{})),
			want: []wantErr{
				{"spec.containers[0].resizePolicy", field.ErrorTypeRequired, ""},
				{"spec.containers[0].resizePolicy", field.ErrorTypeRequired, ""},
			},
		},
		{
			name: "RestartContainer with restartPolicy Never",
			pod:  never(testPod(policy(ctr("c1", "", ""), cpuP(v1.RestartContainer)))),
			want: []wantErr{{"spec.containers[0].resizePolicy", field.ErrorTypeInvalid, "must be 'NotRequired' when `restartPolicy` is 'Never'"}},
		},
		{
			name: "NotRequired with restartPolicy Never",
			pod:  never(testPod(policy(ctr("c1", "", ""), cpuP(v1.NotRequired)))),
		},
		{
			name: "init container resizePolicy with InPlacePodVerticalScaling off (1.33)",
			opts: opts(profile.V133, map[string]bool{profile.GateInPlacePodVerticalScaling: false}),
			pod:  withInit(testPod(ctr("c1", "", "")), policy(sidecar("s1", "", ""), cpuP(v1.NotRequired))),
			want: []wantErr{{"spec.initContainers[0].resizePolicy", field.ErrorTypeInvalid, "must not be set for init containers"}},
		},
		{
			name: "init container resizePolicy with the gate locked on (1.35)",
			opts: opts(profile.V135, map[string]bool{profile.GateInPlacePodVerticalScaling: false}),
			pod:  withInit(testPod(ctr("c1", "", "")), policy(initCtr("i1", "", ""), cpuP(v1.NotRequired))),
		},
		{
			name: "ephemeral containers may not set resources",
			pod:  ephemeral(testPod(ctr("c1", "", "")), ctr("debug", "cpu=100m", "")),
			want: []wantErr{{"spec.ephemeralContainers[0].resources", field.ErrorTypeForbidden, "cannot be set for an Ephemeral Container"}},
		},
		{
			name: "ephemeral containers may not set resizePolicy",
			pod:  ephemeral(testPod(ctr("c1", "", "")), policy(ctr("debug", "", ""), cpuP(v1.NotRequired))),
			want: []wantErr{{"spec.ephemeralContainers[0].resizePolicy", field.ErrorTypeForbidden, "cannot be set for an Ephemeral Container"}},
		},
		{
			name: "pod-level request above limit",
			pod: func() *v1.Pod {
				p := testPod(ctr("c1", "", ""))
				p.Spec.Resources = &v1.ResourceRequirements{Requests: rl("memory=2Gi"), Limits: rl("memory=1Gi")}
				return p
			}(),
			want: []wantErr{{"spec.resources.requests", field.ErrorTypeInvalid, "must be less than or equal to memory limit of 1Gi"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkErrs(t, ValidatePod(tc.pod, tc.opts), tc.want)
		})
	}
}

func TestDefaultPod(t *testing.T) {
	tests := []struct {
		name          string
		pod           *v1.Pod
		wantNamespace string
		wantRequests  []string // per container, then per init container
		wantPodLevel  string   // spec.resources.requests, "" for none
	}{
		{
			name:          "limits copy into missing requests",
			pod:           testPod(ctr("c1", "", "cpu=200m,memory=1Gi")),
			wantNamespace: "default",
			wantRequests:  []string{"cpu=200m,memory=1Gi"},
		},
		{
			name:          "set requests are kept",
			pod:           testPod(ctr("c1", "cpu=100m", "cpu=200m,memory=1Gi")),
			wantNamespace: "default",
			wantRequests:  []string{"cpu=100m,memory=1Gi"},
		},
		{
			name:          "no limits, no requests",
			pod:           testPod(ctr("c1", "", "")),
			wantNamespace: "default",
			wantRequests:  []string{""},
		},
		{
			name:          "init containers and sidecars too",
			pod:           withInit(testPod(ctr("c1", "", "")), initCtr("i1", "", "cpu=1"), sidecar("s1", "", "memory=1Gi")),
			wantNamespace: "default",
			wantRequests:  []string{"", "cpu=1", "memory=1Gi"},
		},
		{
			name:          "a set namespace is kept",
			pod:           func() *v1.Pod { p := testPod(ctr("c1", "", "")); p.Namespace = "prod"; return p }(),
			wantNamespace: "prod",
			wantRequests:  []string{""},
		},
		{
			name: "pod-level requests from containers' requests, else from pod-level limits",
			pod: func() *v1.Pod {
				p := testPod(ctr("c1", "cpu=100m", ""), ctr("c2", "cpu=200m", ""))
				p.Spec.Resources = &v1.ResourceRequirements{Limits: rl("cpu=1,memory=1Gi")}
				return p
			}(),
			wantNamespace: "default",
			wantRequests:  []string{"cpu=100m", "cpu=200m"},
			wantPodLevel:  "cpu=300m,memory=1Gi",
		},
		{
			name: "pod-level requests that are set are kept",
			pod: func() *v1.Pod {
				p := testPod(ctr("c1", "cpu=100m", ""))
				p.Spec.Resources = &v1.ResourceRequirements{Requests: rl("cpu=500m"), Limits: rl("cpu=1")}
				return p
			}(),
			wantNamespace: "default",
			wantRequests:  []string{"cpu=100m"},
			wantPodLevel:  "cpu=500m",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.pod
			if tc.wantNamespace == "default" {
				p.Namespace = ""
			}
			DefaultPod(p)
			if p.Namespace != tc.wantNamespace {
				t.Errorf("namespace = %q, want %q", p.Namespace, tc.wantNamespace)
			}
			all := append(append([]v1.Container{}, p.Spec.Containers...), p.Spec.InitContainers...)
			if len(all) != len(tc.wantRequests) {
				t.Fatalf("%d containers, want %d", len(all), len(tc.wantRequests))
			}
			for i, c := range all {
				if !equalLists(c.Resources.Requests, rl(tc.wantRequests[i])) {
					t.Errorf("%s requests = %v, want %s", c.Name, c.Resources.Requests, tc.wantRequests[i])
				}
			}
			var podReqs v1.ResourceList
			if p.Spec.Resources != nil {
				podReqs = p.Spec.Resources.Requests
			}
			if !equalLists(podReqs, rl(tc.wantPodLevel)) {
				t.Errorf("pod-level requests = %v, want %s", podReqs, tc.wantPodLevel)
			}
		})
	}
}

// TestDefaultPodCopiesLimits checks that a defaulted request is a copy:
// changing the limit afterwards leaves the request as it was.
func TestDefaultPodCopiesLimits(t *testing.T) {
	p := testPod(ctr("c1", "", "cpu=200m"))
	DefaultPod(p)
	lim := p.Spec.Containers[0].Resources.Limits[v1.ResourceCPU]
	lim.Add(resource.MustParse("1"))
	p.Spec.Containers[0].Resources.Limits[v1.ResourceCPU] = lim
	if got := p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU]; got.Cmp(resource.MustParse("200m")) != 0 {
		t.Errorf("request = %s after changing the limit, want 200m", got.String())
	}
}

func TestDefaultPodNil(t *testing.T) {
	DefaultPod(nil) // must not panic
}

// equalLists compares resource lists by value; nil equals empty.
func equalLists(a, b v1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, q := range a {
		if o, ok := b[k]; !ok || o.Cmp(q) != 0 {
			return false
		}
	}
	return true
}

package apiserver

import (
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/resizelet/resizelet/qos"
	"github.com/resizelet/resizelet/resize/profile"
)

// stored returns the pod as the API server would hold it: defaulted, with
// its QoS class in status.
func stored(p *v1.Pod) *v1.Pod {
	DefaultPod(p)
	p.Status.QOSClass = qos.PodQOSClass(p)
	return p
}

// applyOK applies a patch that must be accepted, and checks that old was
// not modified.
func applyOK(t *testing.T, old *v1.Pod, patch string, o ResizeOptions) *v1.Pod {
	t.Helper()
	snapshot := old.DeepCopy()
	got, err := ApplyResize(old, []byte(patch), o)
	if err != nil {
		t.Fatalf("ApplyResize(%s) = %v, want success", patch, err)
	}
	if !reflect.DeepEqual(old, snapshot) {
		t.Fatalf("ApplyResize modified the old pod")
	}
	return got
}

// applyErr applies a patch that must be refused, and checks that old was
// not modified and no pod came back.
func applyErr(t *testing.T, old *v1.Pod, patch string, o ResizeOptions) error {
	t.Helper()
	snapshot := old.DeepCopy()
	got, err := ApplyResize(old, []byte(patch), o)
	if err == nil {
		t.Fatalf("ApplyResize(%s) succeeded, want an error", patch)
	}
	if got != nil {
		t.Errorf("ApplyResize returned a pod with its error")
	}
	if !reflect.DeepEqual(old, snapshot) {
		t.Errorf("ApplyResize modified the old pod on error")
	}
	return err
}

// quantity returns a container's request or limit for a resource.
func quantity(t *testing.T, p *v1.Pod, container string, limits bool, name v1.ResourceName) resource.Quantity {
	t.Helper()
	for _, c := range append(append([]v1.Container{}, p.Spec.Containers...), p.Spec.InitContainers...) {
		if c.Name != container {
			continue
		}
		list := c.Resources.Requests
		if limits {
			list = c.Resources.Limits
		}
		return list[name]
	}
	t.Fatalf("no container %q", container)
	return resource.Quantity{}
}

// wantQuantity asserts a container's request or limit by value.
func wantQuantity(t *testing.T, p *v1.Pod, container string, limits bool, name v1.ResourceName, want string) {
	t.Helper()
	got := quantity(t, p, container, limits, name)
	if got.Cmp(resource.MustParse(want)) != 0 {
		kind := "request"
		if limits {
			kind = "limit"
		}
		t.Errorf("%s %s %s = %s, want %s", container, name, kind, got.String(), want)
	}
}

func TestApplyResizePatchFormats(t *testing.T) {
	tests := []struct {
		name  string
		patch string
	}{
		{"JSON", `{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":"800m"},"limits":{"cpu":"800m"}}}]}}`},
		{"JSON with white space", "\n  { \"spec\" : { \"containers\" : [ { \"name\" : \"c1\", \"resources\" : { \"requests\" : { \"cpu\" : \"800m\" }, \"limits\" : { \"cpu\" : \"800m\" } } } ] } }\n"},
		{"YAML", "spec:\n  containers:\n  - name: c1\n    resources:\n      requests:\n        cpu: 800m\n      limits:\n        cpu: 800m\n"},
		{"YAML flow", `{spec: {containers: [{name: c1, resources: {requests: {cpu: 800m}, limits: {cpu: 800m}}}]}}`},
		{"YAML number", "spec:\n  containers:\n  - name: c1\n    resources:\n      requests:\n        cpu: 0.8\n      limits:\n        cpu: 0.8\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := stored(testPod(ctr("c1", "cpu=700m,memory=200Mi", "cpu=700m,memory=200Mi")))
			got := applyOK(t, old, tc.patch, ResizeOptions{})
			wantQuantity(t, got, "c1", false, v1.ResourceCPU, "800m")
			wantQuantity(t, got, "c1", true, v1.ResourceCPU, "800m")
			wantQuantity(t, got, "c1", true, v1.ResourceMemory, "200Mi")
			if got.Generation != 2 {
				t.Errorf("generation = %d, want 2", got.Generation)
			}
		})
	}
}

func TestApplyResizeGeneration(t *testing.T) {
	tests := []struct {
		name  string
		patch string
		want  int64
	}{
		{"a change bumps it", `{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":"150m"}}}]}}`, 6},
		{"the same values do not", `{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":"100m"}}}]}}`, 5},
		{"an equal quantity written otherwise does not", `{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":"0.1"}}}]}}`, 5},
		{"a null patch does not", `null`, 5},
		{"an empty object does not", `{}`, 5},
		{"dropped changes do not", `{"metadata":{"labels":{"a":"b"}},"spec":{"nodeName":"n2","containers":[{"name":"c1","image":"other"}]}}`, 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := stored(testPod(ctr("c1", "cpu=100m", "")))
			old.Generation = 5
			got := applyOK(t, old, tc.patch, ResizeOptions{})
			if got.Generation != tc.want {
				t.Errorf("generation = %d, want %d", got.Generation, tc.want)
			}
		})
	}
}

// TestApplyResizeDropsNonResizeChanges checks that only resources and
// resizePolicy of containers survive: everything else in the patch is
// dropped silently while the resource change still applies.
func TestApplyResizeDropsNonResizeChanges(t *testing.T) {
	old := stored(testPod(ctr("c1", "cpu=100m", "")))
	old.Labels = map[string]string{"app": "demo"}
	old.Spec.NodeName = "node-1"
	old.Spec.EphemeralContainers = []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "debug", Image: "busybox"}}}
	old.Status.Phase = v1.PodRunning
	patch := `{"metadata":{"labels":{"app":"other"},"annotations":{"x":"y"}},
		"spec":{"nodeName":"node-2","priority":7,
			"containers":[{"name":"c1","image":"other","resources":{"requests":{"cpu":"200m"}}}],
			"ephemeralContainers":[{"name":"debug","resources":{"requests":{"cpu":"1"}}}]},
		"status":{"phase":"Failed"}}`
	got := applyOK(t, old, patch, ResizeOptions{})
	wantQuantity(t, got, "c1", false, v1.ResourceCPU, "200m")
	if !reflect.DeepEqual(got.Labels, old.Labels) || got.Annotations != nil {
		t.Errorf("metadata = %v %v, want labels %v and no annotations", got.Labels, got.Annotations, old.Labels)
	}
	if got.Spec.NodeName != "node-1" || got.Spec.Priority != nil || got.Spec.Containers[0].Image != "pause" {
		t.Errorf("spec fields changed: nodeName %q priority %v image %q", got.Spec.NodeName, got.Spec.Priority, got.Spec.Containers[0].Image)
	}
	if !apiequality.Semantic.DeepEqual(got.Spec.EphemeralContainers, old.Spec.EphemeralContainers) {
		t.Errorf("ephemeral containers changed: %+v", got.Spec.EphemeralContainers)
	}
	if got.Status.Phase != v1.PodRunning {
		t.Errorf("status phase = %s, want Running", got.Status.Phase)
	}
}

func TestApplyResizeDefaulting(t *testing.T) {
	tests := []struct {
		name      string
		old       *v1.Pod
		patch     string
		container string
		wantReqs  map[v1.ResourceName]string
	}{
		{
			name:      "a limit added to a container without a request sets the request",
			old:       testPod(ctr("c1", "cpu=100m", ""), ctr("c2", "", "")),
			patch:     `{"spec":{"containers":[{"name":"c2","resources":{"limits":{"cpu":"300m"}}}]}}`,
			container: "c2",
			wantReqs:  map[v1.ResourceName]string{v1.ResourceCPU: "300m"},
		},
		{
			name:      "a memory limit added next to a cpu request copies only memory",
			old:       testPod(ctr("c1", "cpu=100m", "")),
			patch:     `{"spec":{"containers":[{"name":"c1","resources":{"limits":{"memory":"1Gi"}}}]}}`,
			container: "c1",
			wantReqs:  map[v1.ResourceName]string{v1.ResourceCPU: "100m", v1.ResourceMemory: "1Gi"},
		},
		{
			name:      "deleting the requests of a container with limits resets them to the limits",
			old:       testPod(ctr("c1", "cpu=100m", "cpu=200m")),
			patch:     `{"spec":{"containers":[{"name":"c1","resources":{"requests":null}}]}}`,
			container: "c1",
			wantReqs:  map[v1.ResourceName]string{v1.ResourceCPU: "200m"},
		},
		{
			name:      "a sidecar limit sets its request",
			old:       withInit(testPod(ctr("c1", "cpu=100m", "")), sidecar("s1", "", "")),
			patch:     `{"spec":{"initContainers":[{"name":"s1","resources":{"limits":{"cpu":"50m"}}}]}}`,
			container: "s1",
			wantReqs:  map[v1.ResourceName]string{v1.ResourceCPU: "50m"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := applyOK(t, stored(tc.old), tc.patch, ResizeOptions{})
			for name, want := range tc.wantReqs {
				wantQuantity(t, got, tc.container, false, name, want)
			}
			if n := len(quantityList(got, tc.container)); n != len(tc.wantReqs) {
				t.Errorf("%s has %d requests, want %d", tc.container, n, len(tc.wantReqs))
			}
		})
	}
}

// quantityList returns a container's requests.
func quantityList(p *v1.Pod, container string) v1.ResourceList {
	for _, c := range append(append([]v1.Container{}, p.Spec.Containers...), p.Spec.InitContainers...) {
		if c.Name == container {
			return c.Resources.Requests
		}
	}
	return nil
}

// TestApplyResizeUndefaultedOld checks that an old pod that was never
// defaulted is not mistaken for a changed one.
func TestApplyResizeUndefaultedOld(t *testing.T) {
	old := testPod(ctr("c1", "", "cpu=200m,memory=100Mi"))
	old.Namespace = ""
	got := applyOK(t, old, `{}`, ResizeOptions{})
	if got.Generation != 1 {
		t.Errorf("generation = %d, want 1 for a patch that changes nothing", got.Generation)
	}
	wantQuantity(t, got, "c1", false, v1.ResourceCPU, "200m")
}

// TestApplyResizeReorder is reference detail 5: a strategic merge patch
// keeps the patch's order for a merged list, so listing the containers the
// other way round reorders them, and the resize is refused.
func TestApplyResizeReorder(t *testing.T) {
	old := stored(testPod(ctr("c1", "cpu=100m", ""), ctr("c2", "cpu=100m", "")))
	err := applyErr(t, old, `{"spec":{"containers":[{"name":"c2","resources":{"requests":{"cpu":"100m"}}},{"name":"c1","resources":{"requests":{"cpu":"100m"}}}]}}`, ResizeOptions{})
	want := `Pod "resize-demo" is invalid: [spec.containers[0].name: Forbidden: containers may not be renamed or reordered on resize, spec.containers[1].name: Forbidden: containers may not be renamed or reordered on resize]`
	if err.Error() != want {
		t.Errorf("error = %q\nwant %q", err.Error(), want)
	}
}

func TestApplyResizeAddedContainer(t *testing.T) {
	old := stored(testPod(ctr("c1", "cpu=100m", "")))
	err := applyErr(t, old, `{"spec":{"containers":[{"name":"c9","image":"x","resources":{"requests":{"cpu":"100m"}}}]}}`, ResizeOptions{})
	want := `Pod "resize-demo" is invalid: spec.containers: Forbidden: containers may not be added or removed on resize`
	if err.Error() != want {
		t.Errorf("error = %q\nwant %q", err.Error(), want)
	}
}

func TestApplyResizeDeletedContainer(t *testing.T) {
	old := stored(testPod(ctr("c1", "cpu=100m", ""), ctr("c2", "cpu=100m", "")))
	err := applyErr(t, old, `{"spec":{"containers":[{"name":"c2","$patch":"delete"}]}}`, ResizeOptions{})
	if !strings.Contains(err.Error(), "spec.containers: Forbidden: containers may not be added or removed on resize") {
		t.Errorf("error = %q, want the added-or-removed error", err.Error())
	}
}

// TestInvalidError checks the kubectl text of an invalid resize and that
// the error is the API server's Invalid status underneath.
func TestInvalidError(t *testing.T) {
	old := stored(testPod(ctr("c1", "cpu=100m,memory=100Mi", "cpu=100m,memory=100Mi")))
	err := applyErr(t, old, `{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":"50m"}}}]}}`, ResizeOptions{})
	want := `Pod "resize-demo" is invalid: spec: Invalid value: "Guaranteed": Pod QOS Class may not change as a result of resizing`
	if err.Error() != want {
		t.Errorf("error = %q\nwant %q", err.Error(), want)
	}
	var inv *InvalidError
	if !errors.As(err, &inv) || inv.Name != "resize-demo" || len(inv.Errs) != 1 {
		t.Fatalf("error %T %v is not an InvalidError for resize-demo with one error", err, err)
	}
	if !apierrors.IsInvalid(err) {
		t.Errorf("apierrors.IsInvalid = false")
	}
	var status *apierrors.StatusError
	if !errors.As(err, &status) || status.ErrStatus.Code != http.StatusUnprocessableEntity || status.ErrStatus.Details.Kind != "Pod" {
		t.Errorf("status = %+v, want a 422 for kind Pod", status)
	}
}

func TestApplyResizeMalformedPatch(t *testing.T) {
	quantityMsg := "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
	tests := []struct {
		name     string
		patch    string
		wantPath string
		wantText string
	}{
		{"empty", "  ", "", "empty patch"},
		{"broken JSON", `{"spec": {"containers": [`, "", "unexpected end of JSON input"},
		{"broken YAML", "spec: [\n", "", "yaml: line"},
		{"an array", `[{"spec":{}}]`, "", "json: cannot unmarshal array into Go value of type map[string]interface {}"},
		{"a string", `"spec"`, "", "json: cannot unmarshal string into Go value of type map[string]interface {}"},
		{"a map where a list belongs", `{"spec":{"containers":{"name":"c1"}}}`, "", "json: cannot unmarshal object into Go struct field PodSpec.spec.containers of type []v1.Container"},
		{"a list where a map belongs", `{"spec":{"containers":[{"name":"c1","resources":{"limits":["1"]}}]}}`, "", "json: cannot unmarshal array into Go struct field ResourceRequirements.spec.containers.resources.limits of type v1.ResourceList"},
		{"a string where a map belongs", `{"spec":{"containers":[{"name":"c1","resources":"big"}]}}`, "", "json: cannot unmarshal string into Go struct field Container.spec.containers.resources of type v1.ResourceRequirements"},
		{"a bad quantity", `{"spec":{"containers":[{"name":"c1","resources":{"limits":{"cpu":"lots"}}}]}}`, "spec.containers[0].resources.limits[cpu]", quantityMsg},
		{"a bad quantity in YAML", "spec:\n  initContainers:\n  - name: s1\n    resources:\n      requests:\n        memory: 1 Gi\n", "spec.initContainers[0].resources.requests[memory]", quantityMsg},
		{"a boolean quantity", `{"spec":{"containers":[{"name":"c1","resources":{"requests":{"memory":true}}}]}}`, "spec.containers[0].resources.requests[memory]", quantityMsg},
		{"an unknown field", `{"spec":{"containers":[{"name":"c1","resource":{"limits":{"cpu":"1"}}}]}}`, "", `strict decoding error: unknown field "spec.containers[0].resource"`},
		{"a merge key that is an object", `{"spec":{"containers":[{"name":{"0":null}}]}}`, "", "strategic merge failed: runtime error: comparing uncomparable type map[string]interface {}"},
		{"a list entry without its merge key", `{"spec":{"containers":[{"resources":{"limits":{"cpu":"1"}}}]}}`, "", "does not contain declared merge key: name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := stored(withInit(testPod(ctr("c1", "cpu=100m", "")), sidecar("s1", "cpu=100m", "")))
			err := applyErr(t, old, tc.patch, ResizeOptions{})
			var pe *PatchError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T %v is not a PatchError", err, err)
			}
			if pe.Path != tc.wantPath {
				t.Errorf("path = %q, want %q", pe.Path, tc.wantPath)
			}
			if !strings.Contains(err.Error(), tc.wantText) {
				t.Errorf("error = %q, want it to contain %q", err.Error(), tc.wantText)
			}
			if tc.wantPath != "" && !strings.Contains(err.Error(), tc.wantPath) {
				t.Errorf("error = %q does not name the place %q", err.Error(), tc.wantPath)
			}
		})
	}
}

// TestApplyResizeProfiles checks the rules that differ by version.
func TestApplyResizeProfiles(t *testing.T) {
	burstable := func() *v1.Pod { return testPod(ctr("c1", "cpu=100m,memory=100Mi", "cpu=200m,memory=200Mi")) }
	withInitC := func() *v1.Pod { return withInit(testPod(ctr("c1", "cpu=100m", "")), initCtr("i1", "cpu=100m", "")) }
	podLevel := func() *v1.Pod {
		p := testPod(ctr("c1", "cpu=100m", ""))
		p.Spec.Resources = &v1.ResourceRequirements{Requests: rl("cpu=500m,memory=500Mi"), Limits: rl("cpu=1,memory=1Gi")}
		return p
	}
	const (
		memDown    = `{"spec":{"containers":[{"name":"c1","resources":{"limits":{"memory":"150Mi"}}}]}}`
		initUp     = `{"spec":{"initContainers":[{"name":"i1","resources":{"requests":{"cpu":"300m"}}}]}}`
		podLevelUp = `{"spec":{"resources":{"limits":{"cpu":"2"}}}}`
	)
	tests := []struct {
		name    string
		opts    ResizeOptions
		old     *v1.Pod
		patch   string
		wantErr string             // substring; "" means accepted
		check   func(*v1.Pod) bool // on success
	}{
		{name: "1.33 refuses a memory limit decrease", opts: opts(profile.V133, nil), old: burstable(), patch: memDown,
			wantErr: `spec.containers[0].resources.limits[memory]: Forbidden: memory limits cannot be decreased unless resizePolicy is RestartContainer`},
		{name: "1.33 refuses an added memory limit", opts: opts(profile.V133, nil), old: testPod(ctr("c1", "cpu=100m", "")),
			patch:   `{"spec":{"containers":[{"name":"c1","resources":{"limits":{"memory":"1Gi"}}}]}}`,
			wantErr: `spec.containers[0].resources.limits[memory]: Forbidden: memory limits cannot be added unless resizePolicy is RestartContainer`},
		{name: "1.34 accepts a memory limit decrease", opts: opts(profile.V134, nil), old: burstable(), patch: memDown,
			check: func(p *v1.Pod) bool {
				return quantityEq(p.Spec.Containers[0].Resources.Limits, v1.ResourceMemory, "150Mi")
			}},
		{name: "1.35 refuses a non-sidecar init container resize", opts: opts(profile.V135, nil), old: withInitC(), patch: initUp,
			wantErr: `spec: Forbidden: resources for non-sidecar init containers are immutable`},
		{name: "1.36 accepts a non-sidecar init container resize", opts: opts(profile.V136, nil), old: withInitC(), patch: initUp,
			check: func(p *v1.Pod) bool {
				return quantityEq(p.Spec.InitContainers[0].Resources.Requests, v1.ResourceCPU, "300m")
			}},
		{name: "1.34 refuses any resize of a pod with pod-level resources", opts: opts(profile.V134, nil), old: podLevel(),
			patch:   `{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":"200m"}}}]}}`,
			wantErr: `Pod "resize-demo" is invalid: []: Forbidden: pods with pod-level resources cannot be resized`},
		{name: "1.35 refuses pod-level resize with the gate off", opts: opts(profile.V135, nil), old: podLevel(), patch: podLevelUp,
			wantErr: `[]: Forbidden: resize of pods with pod-level resources is forbidden when InPlacePodLevelResourcesVerticalScalingEnabled feature gate is disabled`},
		{name: "1.35 applies pod-level resize with the gate on",
			opts: opts(profile.V135, map[string]bool{profile.GateInPlacePodLevelResourcesVerticalScaling: true}), old: podLevel(), patch: podLevelUp,
			check: func(p *v1.Pod) bool { return quantityEq(p.Spec.Resources.Limits, v1.ResourceCPU, "2") }},
		{name: "1.36 applies pod-level resize by default", opts: opts(profile.V136, nil), old: podLevel(), patch: podLevelUp,
			check: func(p *v1.Pod) bool {
				return quantityEq(p.Spec.Resources.Limits, v1.ResourceCPU, "2") && quantityEq(p.Spec.Resources.Limits, v1.ResourceMemory, "1Gi")
			}},
		{name: "1.36 refuses removing pod-level limits", opts: opts(profile.V136, nil), old: podLevel(),
			patch:   `{"spec":{"resources":{"limits":{"memory":null}}}}`,
			wantErr: `spec.resources.limits: Forbidden: pod-level resource limits cannot be removed`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := stored(tc.old)
			if tc.wantErr != "" {
				err := applyErr(t, old, tc.patch, tc.opts)
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("error = %q\nwant it to contain %q", err.Error(), tc.wantErr)
				}
				return
			}
			got := applyOK(t, old, tc.patch, tc.opts)
			if !tc.check(got) {
				t.Errorf("resize not applied: %+v", got.Spec)
			}
			if got.Generation != old.Generation+1 {
				t.Errorf("generation = %d, want %d", got.Generation, old.Generation+1)
			}
		})
	}
}

// quantityEq reports whether list[name] equals want by value.
func quantityEq(list v1.ResourceList, name v1.ResourceName, want string) bool {
	q, ok := list[name]
	return ok && q.Cmp(resource.MustParse(want)) == 0
}

func TestApplyResizeNilPod(t *testing.T) {
	if _, err := ApplyResize(nil, []byte(`{}`), ResizeOptions{}); err == nil {
		t.Error("ApplyResize(nil) succeeded, want an error")
	}
}

func TestPatchErrorUnwrap(t *testing.T) {
	cause := errors.New("cause")
	err := error(&PatchError{Path: "spec.x", Err: cause})
	if !errors.Is(err, cause) {
		t.Error("errors.Is(PatchError, cause) = false")
	}
	if got, want := err.Error(), "invalid resize patch at spec.x: cause"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// fuzzPods are the stored pods the fuzz test patches: one with sidecar and
// init containers, a Guaranteed one, and one with pod-level resources.
func fuzzPods() []*v1.Pod {
	a := withInit(testPod(ctr("c1", "cpu=100m,memory=100Mi", "cpu=200m"), ctr("c2", "", "")),
		initCtr("i1", "cpu=50m", ""), sidecar("s1", "memory=10Mi", "memory=20Mi"))
	b := testPod(ctr("c1", "cpu=1,memory=1Gi", "cpu=1,memory=1Gi"))
	b.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c1", State: v1.ContainerState{Running: &v1.ContainerStateRunning{}},
		Resources: &v1.ResourceRequirements{Requests: rl("cpu=1,memory=1Gi"), Limits: rl("cpu=1,memory=1Gi")}}}
	c := testPod(ctr("c1", "cpu=100m", ""))
	c.Spec.Resources = &v1.ResourceRequirements{Limits: rl("cpu=1,memory=1Gi")}
	// d is built in Go with quantities that change form through JSON (a
	// BinarySI number that is not a multiple of 1Ki prints without a
	// suffix and decodes as DecimalSI), as a pod the API server never
	// decoded could be.
	d := testPod(ctr("c1", "cpu=100m", ""), ctr("c2", "", ""))
	d.Spec.Containers[0].Resources.Requests[v1.ResourceMemory] = *resource.NewQuantity(100_000_000, resource.BinarySI)
	d.Spec.Containers[1].Resources.Limits = v1.ResourceList{
		v1.ResourceMemory: *resource.NewQuantity(300_000_000, resource.BinarySI),
		v1.ResourceCPU:    *resource.NewQuantity(2, resource.DecimalExponent),
	}
	d.Spec.Resources = &v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceMemory: *resource.NewQuantity(900_000_000, resource.BinarySI)}}
	return []*v1.Pod{stored(a), stored(b), stored(c), stored(d)}
}

// FuzzApplyResize feeds arbitrary patches to ApplyResize under each
// profile. It must never panic, an error must be a PatchError or an
// InvalidError and leave the old pod as it was, and an accepted resize must
// keep what the resize subresource may not change. JSON with a key given
// twice must be refused (TestDuplicateKeysStrategicMerge).
func FuzzApplyResize(f *testing.F) {
	f.Add([]byte(`{"spec":{"containers":[{"name":"c1","resources":{"limits":{"cpu":"300m"}}}]}}`), uint8(2))
	f.Add([]byte("spec:\n  containers:\n  - name: c2\n    resources:\n      limits:\n        memory: 1Gi\n"), uint8(0))
	f.Add([]byte(`{"spec":{"resources":{"limits":{"cpu":"2"}}}}`), uint8(3))
	profiles := []profile.Version{profile.V133, profile.V134, profile.V135, profile.V136}
	f.Fuzz(func(t *testing.T, patch []byte, profile uint8) {
		o := ResizeOptions{Profile: profiles[int(profile)%len(profiles)]}
		dup := hasDuplicateKey(patch)
		for _, old := range fuzzPods() {
			snapshot := old.DeepCopy()
			got, err := ApplyResize(old, patch, o)
			if !reflect.DeepEqual(old, snapshot) {
				t.Fatalf("old pod modified by patch %q", patch)
			}
			if err != nil {
				var pe *PatchError
				var ie *InvalidError
				if !errors.As(err, &pe) && !errors.As(err, &ie) {
					t.Fatalf("error of type %T: %v", err, err)
				}
				if got != nil {
					t.Fatalf("a pod came back with error %v", err)
				}
				continue
			}
			if dup {
				t.Fatalf("patch %q has a key twice, and was accepted", patch)
			}
			if got.Name != old.Name || got.Namespace != old.Namespace || !apiequality.Semantic.DeepEqual(got.Status, old.Status) {
				t.Fatalf("metadata or status changed by patch %q", patch)
			}
			if got.Generation != old.Generation && got.Generation != old.Generation+1 {
				t.Fatalf("generation %d from %d", got.Generation, old.Generation)
			}
			if len(got.Spec.Containers) != len(old.Spec.Containers) || len(got.Spec.InitContainers) != len(old.Spec.InitContainers) {
				t.Fatalf("containers added or removed by patch %q", patch)
			}
			if errs := ValidateResize(got, old, o); len(errs) > 0 {
				t.Fatalf("accepted pod does not validate: %v", errs)
			}
		}
	})
}

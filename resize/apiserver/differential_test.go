package apiserver

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/resize/profile"
)

// apiServerResize is the oracle of the differential tests: the resize
// subresource written the way the API server is, without anything of
// applyEdit. The patch is applied with apimachinery to the whole pod
// (patchedPod: the strategic merge, the JSON merge or the JSON patch, the
// strict decoding),
// then the patched pod is defaulted (SetDefaults_Pod), the resize strategy
// (pkg/registry/core/pod/strategy.go, dropNonResizeUpdates) copies each
// container's resources and resizePolicy into a deep copy of the old pod
// (a list renamed or reordered is taken as patched), or keeps the patched
// pod whole when containers were added or removed, the generation is bumped when the specs differ
// (apiequality.Semantic.DeepEqual, as the strategy does) and
// ValidateResize runs.
func apiServerResize(old *v1.Pod, pt types.PatchType, patch []byte, opts ResizeOptions) (*v1.Pod, error) {
	oldPod, patched, err := patchedPod(old, pt, patch, opts, true)
	if err != nil {
		return nil, err
	}
	DefaultPod(patched)
	p := opts.profile()
	newPod := patched
	if len(patched.Spec.Containers) == len(oldPod.Spec.Containers) && len(patched.Spec.InitContainers) == len(oldPod.Spec.InitContainers) {
		newPod = oldPod.DeepCopy()
		// Each list: the old containers with the patched resources and
		// resizePolicy, or, renamed or reordered, the patched list as it
		// is (dropNonResizeUpdatesForContainers).
		merged := func(list, patchedList []v1.Container) []v1.Container {
			if !sameNames(list, patchedList) {
				return patchedList
			}
			for i := range list {
				list[i].Resources, list[i].ResizePolicy = patchedList[i].Resources, patchedList[i].ResizePolicy
			}
			return list
		}
		newPod.Spec.Containers = merged(newPod.Spec.Containers, patched.Spec.Containers)
		newPod.Spec.InitContainers = merged(newPod.Spec.InitContainers, patched.Spec.InitContainers)
		if p.PodLevelResize() {
			newPod.Spec.Resources = patched.Spec.Resources
		}
	}
	if p.DefaultsPodLevelResources() {
		if newPod.Spec.Resources == nil {
			newPod.Spec.Resources = oldPod.Spec.Resources
		}
		if newPod.Spec.Resources != nil {
			newPod.Spec.Resources = newPod.Spec.Resources.DeepCopy()
			defaultPodLevelResources(newPod)
		}
	}
	if errs := ValidateResize(newPod, oldPod, opts); len(errs) > 0 {
		return nil, &InvalidError{Name: oldPod.Name, Errs: errs}
	}
	if !apiequality.Semantic.DeepEqual(newPod.Spec, oldPod.Spec) {
		newPod.Generation = oldPod.Generation + 1
	}
	return newPod, nil
}

// sameAsAPIServer fails t unless got, gerr (from the path under test) are
// what the oracle gives: the same error text, or byte for byte the same
// pod as JSON; and old must be left as it was.
func sameAsAPIServer(t *testing.T, label string, old *v1.Pod, pt types.PatchType, patch []byte, o ResizeOptions, apply func() (*v1.Pod, error)) {
	t.Helper()
	snapshot := old.DeepCopy()
	got, gerr := apply()
	want, werr := apiServerResize(old, pt, patch, o)
	if !reflect.DeepEqual(old, snapshot) {
		t.Fatalf("%s: the old pod was modified", label)
	}
	if (gerr == nil) != (werr == nil) || (gerr != nil && gerr.Error() != werr.Error()) {
		t.Fatalf("%s, %s, %s patch %s, old pod %s:\n got:        %v\n API server: %v", label, o.Profile, pt, patch, mustJSON(old.Spec), gerr, werr)
	}
	if gerr != nil {
		return
	}
	if a, b := mustJSON(got), mustJSON(want); string(a) != string(b) {
		t.Fatalf("%s, %s, %s patch %s:\n got:        %s\n API server: %s", label, o.Profile, pt, patch, a, b)
	}
}

// oldPodGen draws old pods for the differential tests: container names
// that read as numbers ("1e1001", "0x1", "12"), now and then a name
// twice, init containers and sidecars, extended resources, pod-level
// resources, and stored quantities in every format, some built in Go in a
// form JSON changes.
type oldPodGen struct{ r *rand.Rand }

func (g oldPodGen) pick(options ...string) string { return options[g.r.Intn(len(options))] }

func (g oldPodGen) quantity(name v1.ResourceName) resource.Quantity {
	switch {
	case name == "example.com/gpu":
		return resource.MustParse(g.pick("1", "2", "1e0"))
	case g.r.Intn(8) == 0:
		// A BinarySI amount that prints without a suffix.
		return *resource.NewQuantity(int64(1+g.r.Intn(1<<30)), resource.BinarySI)
	case name == v1.ResourceCPU:
		return resource.MustParse(g.pick("0.5", "500m", "100m", "1", "1e-1", "2"))
	}
	return resource.MustParse(g.pick("1Gi", "1G", "1e3", "1.5e9", "128Mi", "100M", "0.5Gi"))
}

func (g oldPodGen) list() v1.ResourceList {
	if g.r.Intn(4) == 0 {
		return nil
	}
	l := v1.ResourceList{}
	for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, "example.com/gpu", v1.ResourceEphemeralStorage} {
		if g.r.Intn(3) > 0 || (name != v1.ResourceCPU && name != v1.ResourceMemory && g.r.Intn(3) > 0) {
			continue
		}
		l[name] = g.quantity(name)
	}
	return l
}

func (g oldPodGen) container(name string) v1.Container {
	c := v1.Container{Name: name, Image: "pause", Resources: v1.ResourceRequirements{Requests: g.list(), Limits: g.list()}}
	if gpu, ok := c.Resources.Limits["example.com/gpu"]; ok {
		// Extended resources are not overcommitted.
		if c.Resources.Requests == nil {
			c.Resources.Requests = v1.ResourceList{}
		}
		c.Resources.Requests["example.com/gpu"] = gpu
	}
	if g.r.Intn(4) == 0 {
		c.ResizePolicy = []v1.ContainerResizePolicy{{ResourceName: v1.ResourceMemory, RestartPolicy: v1.ResourceResizeRestartPolicy(g.pick("NotRequired", "RestartContainer"))}}
	}
	return c
}

// names are the container names the generators draw from.
var diffNames = []string{"app", "1e1001", "0x1", "12", "c1"}

func (g oldPodGen) pod() *v1.Pod {
	p := testPod()
	for n := 1 + g.r.Intn(3); n > 0; n-- {
		p.Spec.Containers = append(p.Spec.Containers, g.container(g.pick(diffNames...)))
	}
	for n := g.r.Intn(3); n > 0; n-- {
		c := g.container(g.pick("init", "side", "1e9"))
		if g.r.Intn(2) == 0 {
			always := v1.ContainerRestartPolicyAlways
			c.RestartPolicy = &always
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	}
	if g.r.Intn(5) == 0 {
		p.Spec.Resources = &v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceCPU: g.quantity(v1.ResourceCPU), v1.ResourceMemory: g.quantity(v1.ResourceMemory)}}
	}
	if g.r.Intn(3) == 0 {
		p.Status.Phase = v1.PodRunning
		for _, c := range p.Spec.Containers {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, v1.ContainerStatus{Name: c.Name,
				State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}, Resources: c.Resources.DeepCopy()})
		}
	}
	return stored(p)
}

// names returns the names of the pod's containers and init containers,
// and one it does not have.
func names(p *v1.Pod) (containers, inits []string) {
	for _, c := range p.Spec.Containers {
		containers = append(containers, c.Name)
	}
	for _, c := range p.Spec.InitContainers {
		inits = append(inits, c.Name)
	}
	return append(containers, "zz"), append(inits, "zz")
}

// diffOptions are the versions, and 1.35 with pod-level resize on.
func diffOptions() []ResizeOptions {
	var out []ResizeOptions
	for _, v := range profile.Versions() {
		out = append(out, ResizeOptions{Profile: v})
	}
	return append(out, opts(profile.V135, map[string]bool{profile.GateInPlacePodLevelResourcesVerticalScaling: true}))
}

// TestStrategicPatchMatchesAPIServer: on random old pods and random
// strategic merge patches (mostly of the narrow form, some not), under
// every version, ApplyResize gives what the API server's way gives, and
// the narrow reading takes a good share of the patches (or the test would
// prove little).
func TestStrategicPatchMatchesAPIServer(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	pods := oldPodGen{r}
	narrow, total := 0, 0
	for i := 0; i < 400; i++ {
		old := pods.pod()
		cs, inits := names(old)
		patch := patchGen{r}.patch(cs, inits)
		for _, o := range diffOptions() {
			sameAsAPIServer(t, fmt.Sprintf("#%d", i), old, StrategicMergePatch, patch, o, func() (*v1.Pod, error) { return ApplyResize(old, patch, o) })
		}
		if _, _, _, ok := readNarrowPatch(patch, nil); ok {
			narrow++
		}
		total++
	}
	coversBothPaths(t, narrow, total)
}

// coversBothPaths fails t unless between an eighth and nine tenths of a
// differential test's patches took the narrow reading: otherwise the draw
// holds one of the two paths to the oracle too seldom to prove much.
func coversBothPaths(t *testing.T, narrow, total int) {
	t.Helper()
	t.Logf("%d of %d patches of the narrow form", narrow, total)
	if narrow < total/8 || narrow > total*9/10 {
		t.Fatalf("%d of %d patches of the narrow form: the draw does not cover both paths", narrow, total)
	}
}

// TestResizeRequestMatchesAPIServer: on random old pods and random typed
// requests, under every version, ApplyResizeRequest gives what the API
// server's way gives for the request's strategic merge patch.
func TestResizeRequestMatchesAPIServer(t *testing.T) {
	r := rand.New(rand.NewSource(42))
	pods := oldPodGen{r}
	for i := 0; i < 300; i++ {
		old := pods.pod()
		cs, inits := names(old)
		req := randomRequest(r, cs, inits)
		for _, o := range diffOptions() {
			sameAsAPIServer(t, fmt.Sprintf("#%d", i), old, StrategicMergePatch, req.Patch(), o, func() (*v1.Pod, error) { return ApplyResizeRequest(old, req, o) })
		}
	}
}

// TestPatchTypesMatchAPIServer: on random old pods, random changes
// written as a strategic merge patch, a JSON merge patch and a JSON patch
// (and each now and then broken), under every version, ApplyResizePatch
// gives what the API server's way gives for that patch type.
func TestPatchTypesMatchAPIServer(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	pods := oldPodGen{r}
	for i := 0; i < 200; i++ {
		old := pods.pod()
		c := randomChange(r, old)
		for _, f := range []struct {
			pt    types.PatchType
			patch []byte
		}{{StrategicMergePatch, c.strategic(old)}, {MergePatch, c.merge(old)}, {JSONPatch, c.json(old)}} {
			if r.Intn(6) == 0 {
				f.patch = []byte(strings.Replace(string(f.patch), `"cpu"`, `"cpu","cpu"`, 1))
			}
			for _, o := range diffOptions() {
				sameAsAPIServer(t, fmt.Sprintf("#%d", i), old, f.pt, f.patch, o, func() (*v1.Pod, error) { return ApplyResizePatch(old, f.pt, f.patch, o) })
			}
		}
	}
}

// FuzzResizePatchMatchesAPIServer holds ApplyResizePatch to the API
// server's way on arbitrary patches of the three types and random old
// pods (seed draws the pod).
func FuzzResizePatchMatchesAPIServer(f *testing.F) {
	f.Add(int64(1), uint8(0), []byte(`{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"300m"}}}]}}`), uint8(2))
	f.Add(int64(2), uint8(1), []byte(`{"spec":{"containers":[{"name":"1e1001","resources":{"limits":{"cpu":"1"}}}]}}`), uint8(3))
	f.Add(int64(3), uint8(2), []byte(`[{"op":"add","path":"/spec/containers/0/resources/requests","value":{"cpu":"1e3m"}}]`), uint8(4))
	f.Add(int64(4), uint8(2), []byte(`[{"op":"add","path":"/spec/containers/0/resources/requests/cpu","value":"300m"},{"op":"add","path":"/spec/containers/0/resources/limits/memory","value":"1Gi"}]`), uint8(0))
	f.Fuzz(func(t *testing.T, seed int64, pt uint8, patch []byte, version uint8) {
		old := oldPodGen{rand.New(rand.NewSource(seed))}.pod()
		types := []types.PatchType{StrategicMergePatch, MergePatch, JSONPatch}
		o := diffOptions()[int(version)%len(diffOptions())]
		typ := types[int(pt)%len(types)]
		sameAsAPIServer(t, "fuzz", old, typ, patch, o, func() (*v1.Pod, error) { return ApplyResizePatch(old, typ, patch, o) })
	})
}

// TestNumberLikeNamesAreNames: a container named "1e1001" (a valid
// DNS-1123 label that reads as a number with a huge exponent) is resized
// on every path and with every patch type, directly and through a
// Cluster, as the API server does: only quantity values are parsed as
// quantities.
func TestNumberLikeNamesAreNames(t *testing.T) {
	for _, name := range []string{"1e1001", "0x1", "12"} {
		old := stored(testPod(ctr(name, "cpu=200m", "cpu=400m")))
		strategic := fmt.Sprintf(`{"spec":{"containers":[{"name":%q,"resources":{"requests":{"cpu":"300m"}}}]}}`, name)
		patches := []struct {
			pt    types.PatchType
			patch string
		}{
			{StrategicMergePatch, strategic},
			{StrategicMergePatch, fmt.Sprintf(`{"spec":{"$setElementOrder/containers":[{"name":%q}],"containers":[{"name":%q,"resources":{"requests":{"cpu":"300m"}}}]}}`, name, name)},
			{MergePatch, fmt.Sprintf(`{"spec":{"containers":[{"name":%q,"resources":{"requests":{"cpu":"300m"},"limits":{"cpu":"400m"}}}]}}`, name)},
			{JSONPatch, `[{"op":"replace","path":"/spec/containers/0/resources/requests/cpu","value":"300m"}]`},
		}
		check := func(how string, got *v1.Pod, err error) {
			t.Helper()
			if err != nil {
				t.Fatalf("%s, container %q: %v", how, name, err)
			}
			if q := got.Spec.Containers[0].Resources.Requests[v1.ResourceCPU]; q.MilliValue() != 300 {
				t.Fatalf("%s, container %q: cpu request %s, want 300m", how, name, q.String())
			}
		}
		for _, p := range patches {
			got, err := ApplyResizePatch(old, p.pt, []byte(p.patch), ResizeOptions{})
			check(string(p.pt)+" "+p.patch, got, err)
			c := NewCluster(ClusterOptions{})
			if _, err := c.CreatePod(t.Context(), old.DeepCopy()); err != nil {
				t.Fatal(err)
			}
			got, err = c.ResizePodPatch(t.Context(), "default", old.Name, p.pt, []byte(p.patch))
			check("Cluster "+string(p.pt)+" "+p.patch, got, err)
		}
		got, err := ApplyResizeRequest(old, ResizeRequest{Containers: []ContainerResize{{Name: name, Requests: Amounts{MilliCPU: 300, HasCPU: true}}}}, ResizeOptions{})
		check("typed", got, err)
	}
}

// TestDuplicateContainerNames: ApplyResize is exported for a caller's own
// pods, which may have two containers of one name (the API server refuses
// such a pod at creation). Every path gives the API server's answer, one
// error, the same: the strategic merge patches the first container of the
// name (k8s.io/apimachinery pkg/util/strategicpatch/patch.go,
// mergeSliceWithoutSpecialElements, findMapInSliceBasedOnKeyValue returns
// the first match), and validation then refuses the pod for the name
// given twice (k8s.io/kubernetes pkg/apis/core/validation/validation.go,
// validateContainers: field.Duplicate on spec.containers[1].name).
func TestDuplicateContainerNames(t *testing.T) {
	old := stored(testPod(ctr("app", "cpu=200m", "cpu=400m"), ctr("app", "cpu=100m", "cpu=400m")))
	const want = `Pod "resize-demo" is invalid: spec.containers[1].name: Duplicate value: "app"`
	strategic := []byte(`{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"300m"}}}]}}`)
	errs := map[string]error{}
	_, errs["strategic"] = ApplyResize(old, strategic, ResizeOptions{})
	_, errs["typed"] = ApplyResizeRequest(old, ResizeRequest{Containers: []ContainerResize{{Name: "app", Requests: Amounts{MilliCPU: 300, HasCPU: true}}}}, ResizeOptions{})
	_, errs["merge"] = ApplyResizePatch(old, MergePatch, []byte(`{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"300m"},"limits":{"cpu":"400m"}}},{"name":"app","resources":{"requests":{"cpu":"100m"},"limits":{"cpu":"400m"}}}]}}`), ResizeOptions{})
	_, errs["json"] = ApplyResizePatch(old, JSONPatch, []byte(`[{"op":"replace","path":"/spec/containers/0/resources/requests/cpu","value":"300m"}]`), ResizeOptions{})
	_, errs["API server"] = apiServerResize(old, StrategicMergePatch, strategic, ResizeOptions{})
	for how, err := range errs {
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", how, err, want)
		}
	}
}

// patchGen writes random strategic merge patches: mostly of the narrow
// form, in any key order and spacing, with containers the pod has or not,
// and with something outside the narrow form now and then.
type patchGen struct{ r *rand.Rand }

func (g patchGen) pick(options ...string) string { return options[g.r.Intn(len(options))] }

// odd is true with probability 1/n.
func (g patchGen) odd(n int) bool { return g.r.Intn(n) == 0 }

func (g patchGen) ws() string {
	if g.odd(4) {
		return g.pick(" ", "\n", "\t", "\r\n  ")
	}
	return ""
}

// object joins members in a random order (or twice one of them, now and
// then).
func (g patchGen) object(members []string) string {
	g.r.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
	if len(members) > 0 && g.odd(25) {
		members = append(members, members[0])
	}
	if g.odd(30) {
		members = append(members, g.pick(`"$patch":"replace"`, `"$patch":"delete"`, `"$retainKeys":["requests"]`, `"image":"x"`, `"resource":{}`, `"claims":[]`))
	}
	return "{" + g.ws() + strings.Join(members, ","+g.ws()) + g.ws() + "}"
}

func (g patchGen) quantities() string {
	var members []string
	names := []string{"cpu", "memory"}
	g.r.Shuffle(2, func(i, j int) { names[i], names[j] = names[j], names[i] })
	for _, name := range names[:1+g.r.Intn(2)] {
		if g.odd(10) {
			name = g.pick("ephemeral-storage", "example.com/gpu", "Bad Name")
		}
		value := fmt.Sprintf("%q", g.pick("300m", "600m", "1", "2", "192Mi", "384Mi", "1Gi", "100000000", " 250m ", "1e3", "0.5", "1.5e9", "1G"))
		if g.odd(10) {
			value = fmt.Sprintf("%q", g.pick("-1", "abc", "", "1e-54775807"))
		}
		if g.odd(40) {
			value = g.pick("null", "300", "{}", "[]", `"3\u0030m"`, `"300m\u00e9"`)
		}
		members = append(members, fmt.Sprintf("%q:%s%s", name, g.ws(), value))
	}
	if g.odd(40) {
		return "{}"
	}
	return g.object(members)
}

func (g patchGen) resources() string {
	var members []string
	if !g.odd(4) {
		members = append(members, `"requests":`+g.quantities())
	}
	if !g.odd(3) || len(members) == 0 {
		members = append(members, `"limits":`+g.quantities())
	}
	if g.odd(40) {
		return "null"
	}
	return g.object(members)
}

func (g patchGen) list(names []string) string {
	var elems []string
	for n := 1 + g.r.Intn(2); n > 0; n-- {
		name := fmt.Sprintf("%q", g.pick(names...))
		if g.odd(40) {
			name = g.pick(`"c\u0031"`, "1", "null")
		}
		members := []string{`"name":` + name}
		if !g.odd(30) {
			members = append(members, `"resources":`+g.resources())
		}
		elems = append(elems, g.object(members))
	}
	if g.odd(40) {
		return "[]"
	}
	return "[" + strings.Join(elems, ",") + "]"
}

// patch draws a patch over the names of the pod's containers and init
// containers.
func (g patchGen) patch(containers, inits []string) []byte {
	var members []string
	if !g.odd(4) {
		members = append(members, `"containers":`+g.list(containers))
	}
	if g.odd(4) {
		members = append(members, `"initContainers":`+g.list(inits))
	}
	if g.odd(5) || len(members) == 0 {
		members = append(members, `"resources":`+g.resources())
	}
	if g.odd(20) {
		members = append(members, fmt.Sprintf(`"$setElementOrder/containers":[{"name":%q}]`, containers[0]))
	}
	top := []string{`"spec":` + g.object(members)}
	if g.odd(30) {
		top = append(top, g.pick(`"metadata":{"labels":{"a":"b"}}`, `"status":{"phase":"Failed"}`))
	}
	p := g.ws() + g.object(top) + g.ws()
	switch {
	case g.odd(50):
		p += "x"
	case g.odd(50):
		p = "spec:\n  containers:\n  - name: " + containers[0] + "\n    resources:\n      limits:\n        cpu: 700m\n"
	}
	return []byte(p)
}

// mustJSON marshals v, which the tests build to be marshalable.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// TestPartialPodMatchesWholePod: a patch is applied first to the pod
// without the metadata and status it does not name (podPart). On patches
// that name them, or act on the whole document, in every type, with the
// json-patch library's reading of paths (what comes before the first "/"
// is ignored), ApplyResizePatch gives what the oracle gives on the whole
// pod, and the part is the one expected.
func TestPartialPodMatchesWholePod(t *testing.T) {
	old := runningPod()
	old.Labels = map[string]string{"app": "demo"}
	old.ResourceVersion = "7"
	const spec = `"spec":{"containers":[{"name":"app","resources":{"limits":{"cpu":"500m"}}}]}`
	const whole = `"spec":{"containers":[{"name":"app","image":"pause","resources":{"requests":{"cpu":"200m","memory":"128Mi"},"limits":{"cpu":"500m","memory":"256Mi"}}}]}`
	const limit = `{"op":"replace","path":"/spec/containers/0/resources/limits/cpu","value":"500m"}`
	for _, tc := range []struct {
		pt    types.PatchType
		patch string
		part  podPart
	}{
		{StrategicMergePatch, `{` + spec + `}`, podPart{true, true}},
		{StrategicMergePatch, `{"metadata":{"labels":{"a":"b"}},` + spec + `}`, podPart{false, true}},
		{StrategicMergePatch, `{"metadata":{"resourceVersion":"7"},"status":{"phase":"Failed"},` + spec + `}`, podPart{}},
		{StrategicMergePatch, `{"status":null,` + spec + `}`, podPart{true, false}},
		{StrategicMergePatch, `{"metadata":null,` + spec + `}`, podPart{false, true}},
		{StrategicMergePatch, `{"metadata":{"name":"other"}}`, podPart{false, true}},
		{StrategicMergePatch, `{"kind":"Pod","apiVersion":"v1",` + spec + `}`, podPart{true, true}},
		{StrategicMergePatch, `{"$patch":"replace",` + spec + `}`, podPart{}},
		{StrategicMergePatch, `{"$retainKeys":["spec"],` + spec + `}`, podPart{}},
		{StrategicMergePatch, `{"spec":{"containers":[{"name":"extra","image":"x"}]}}`, podPart{true, true}},
		{MergePatch, `{` + whole + `}`, podPart{true, true}},
		{MergePatch, `{"metadata":{"resourceVersion":null},` + whole + `}`, podPart{false, true}},
		{MergePatch, `{"status":null,` + whole + `}`, podPart{true, false}},
		{MergePatch, `{"metadata":{"labels":null},"status":{"phase":"Failed"},` + whole + `}`, podPart{}},
		{MergePatch, `{"kind":"Node",` + whole + `}`, podPart{true, true}},
		{MergePatch, `{"$patch":"replace"}`, podPart{}},
		{JSONPatch, `[` + limit + `]`, podPart{true, true}},
		{JSONPatch, `[{"op":"test","path":"/status/phase","value":"Running"},` + limit + `]`, podPart{true, false}},
		{JSONPatch, `[{"op":"test","path":"/status/phase","value":"Failed"},` + limit + `]`, podPart{true, false}},
		{JSONPatch, `[{"op":"copy","from":"/status/containerStatuses/0/resources/requests","path":"/spec/containers/0/resources/limits"}]`, podPart{true, false}},
		{JSONPatch, `[{"op":"move","from":"/metadata/labels","path":"/spec/containers/0/resources/limits"}]`, podPart{false, true}},
		{JSONPatch, `[{"op":"replace","path":"x/status/phase","value":"Failed"},` + limit + `]`, podPart{true, false}},
		{JSONPatch, `[{"op":"replace","path":"spec/containers/0/resources/limits/cpu","value":"500m"}]`, podPart{true, true}},
		{JSONPatch, `[{"op":"remove","path":"/status"},` + limit + `]`, podPart{true, false}},
		{JSONPatch, `[{"op":"add","path":"/metadata/labels/a","value":"b"},` + limit + `]`, podPart{false, true}},
		{JSONPatch, `[{"op":"replace","path":"/metadata/name","value":"other"}]`, podPart{false, true}},
		{JSONPatch, `[{"op":"test","path":"","value":{}}]`, podPart{}},
		{JSONPatch, `[{"op":"test","path":"/","value":{}}]`, podPart{}},
		{JSONPatch, `[{"op":"copy","from":"","path":"/spec/x"}]`, podPart{true, true}},
		{JSONPatch, `[{"op":"replace","path":"/meta~1data/name","value":"x"}]`, podPart{true, true}},
	} {
		var got podPart
		switch tc.pt {
		case JSONPatch:
			var ops []jsonPatchOp
			if err := json.Unmarshal([]byte(tc.patch), &ops); err != nil {
				t.Fatal(err)
			}
			got = partFor(opKeys(ops))
		default:
			var m map[string]any
			if err := json.Unmarshal([]byte(tc.patch), &m); err != nil {
				t.Fatal(err)
			}
			got = partFor(maps.Keys(m))
		}
		if got != tc.part {
			t.Errorf("%s patch %s: part %+v, want %+v", tc.pt, tc.patch, got, tc.part)
		}
		for _, o := range diffOptions() {
			sameAsAPIServer(t, "partial", old, tc.pt, []byte(tc.patch), o, func() (*v1.Pod, error) {
				return ApplyResizePatch(old, tc.pt, []byte(tc.patch), o)
			})
		}
	}
}

package apiserver

import (
	"errors"
	"fmt"
	"math/rand"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/resize/profile"
)

// change is one resize written three ways: new requests and limits for
// some containers (by index), in the strategic merge, JSON merge and JSON
// patch forms.
type change map[int]struct{ requests, limits v1.ResourceList }

// strategic is the change as a strategic merge patch: the changed
// entries under each container, merged by name.
func (c change) strategic(p *v1.Pod) []byte {
	var cs []map[string]any
	for _, i := range c.indexes() {
		rr := map[string]any{}
		if c[i].requests != nil {
			rr["requests"] = c[i].requests
		}
		if c[i].limits != nil {
			rr["limits"] = c[i].limits
		}
		cs = append(cs, map[string]any{"name": p.Spec.Containers[i].Name, "resources": rr})
	}
	return mustJSON(map[string]any{"spec": map[string]any{"containers": cs}})
}

// merge is the change as a JSON merge patch: lists are replaced whole, so
// every container is named, in order, with its full resources and
// resizePolicy.
func (c change) merge(p *v1.Pod) []byte {
	var cs []map[string]any
	for i, ctr := range p.Spec.Containers {
		rr := *ctr.Resources.DeepCopy()
		if ch, ok := c[i]; ok {
			for n, q := range ch.requests {
				if rr.Requests == nil {
					rr.Requests = v1.ResourceList{}
				}
				rr.Requests[n] = q
			}
			for n, q := range ch.limits {
				if rr.Limits == nil {
					rr.Limits = v1.ResourceList{}
				}
				rr.Limits[n] = q
			}
		}
		cs = append(cs, map[string]any{"name": ctr.Name, "resources": rr, "resizePolicy": ctr.ResizePolicy})
	}
	return mustJSON(map[string]any{"spec": map[string]any{"containers": cs}})
}

// json is the change as a JSON patch, as the VPA updater writes it: an
// "add" per changed entry (which replaces an entry there), after an "add"
// of an empty list where the container has none.
func (c change) json(p *v1.Pod) []byte {
	var ops []map[string]any
	for _, i := range c.indexes() {
		rr := p.Spec.Containers[i].Resources
		for _, part := range []struct {
			name string
			have v1.ResourceList
			set  v1.ResourceList
		}{{"requests", rr.Requests, c[i].requests}, {"limits", rr.Limits, c[i].limits}} {
			if len(part.set) == 0 {
				continue
			}
			base := fmt.Sprintf("/spec/containers/%d/resources/%s", i, part.name)
			if part.have == nil {
				ops = append(ops, map[string]any{"op": "add", "path": base, "value": map[string]any{}})
			}
			for _, n := range slices.Sorted(mapsKeys(part.set)) {
				ops = append(ops, map[string]any{"op": "add", "path": base + "/" + string(n), "value": part.set[v1.ResourceName(n)]})
			}
		}
	}
	return mustJSON(ops)
}

func (c change) indexes() []int {
	var out []int
	for i := range c {
		out = append(out, i)
	}
	slices.Sort(out)
	return out
}

func mapsKeys(l v1.ResourceList) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range l {
			if !yield(string(k)) {
				return
			}
		}
	}
}

// randomChange changes cpu and memory requests and limits of random
// containers to random amounts, some of which validation refuses (a QoS
// class change, a memory limit decrease without RestartContainer).
func randomChange(rng *rand.Rand, p *v1.Pod) change {
	cpus := []string{"50m", "100m", "200m", "300m", "1", "1500m"}
	mems := []string{"10Mi", "20Mi", "100Mi", "128Mi", "1Gi"}
	c := change{}
	for i := range p.Spec.Containers {
		if rng.Intn(2) == 0 {
			continue
		}
		var ch struct{ requests, limits v1.ResourceList }
		pick := func() v1.ResourceList {
			l := v1.ResourceList{}
			if rng.Intn(2) == 0 {
				l[v1.ResourceCPU] = resource.MustParse(cpus[rng.Intn(len(cpus))])
			}
			if rng.Intn(3) == 0 {
				l[v1.ResourceMemory] = resource.MustParse(mems[rng.Intn(len(mems))])
			}
			if len(l) == 0 {
				return nil
			}
			return l
		}
		ch.requests, ch.limits = pick(), pick()
		if ch.requests != nil || ch.limits != nil {
			c[i] = ch
		}
	}
	if len(c) == 0 {
		c[0] = struct{ requests, limits v1.ResourceList }{requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("150m")}}
	}
	return c
}

// TestPatchTypesAgree is the differential test of the three patch types:
// the same change written as a strategic merge patch, a JSON merge patch
// and a JSON patch gives the same pod, or the same refusal.
func TestPatchTypesAgree(t *testing.T) {
	rng := rand.New(rand.NewSource(20260101))
	accepted, refused := 0, 0
	for _, old := range fuzzPods() {
		for range 150 {
			c := randomChange(rng, old)
			forms := []struct {
				pt    types.PatchType
				patch []byte
			}{{StrategicMergePatch, c.strategic(old)}, {MergePatch, c.merge(old)}, {JSONPatch, c.json(old)}}
			var first *v1.Pod
			var firstErr error
			for i, f := range forms {
				snapshot := old.DeepCopy()
				got, err := ApplyResizePatch(old, f.pt, f.patch, ResizeOptions{})
				if !reflect.DeepEqual(old, snapshot) {
					t.Fatalf("%s patch %s modified the old pod", f.pt, f.patch)
				}
				if i == 0 {
					first, firstErr = got, err
					continue
				}
				switch {
				case (err == nil) != (firstErr == nil):
					t.Fatalf("strategic %s: %v\n%s %s: %v", forms[0].patch, firstErr, f.pt, f.patch, err)
				case err != nil:
					if err.Error() != firstErr.Error() {
						t.Fatalf("the refusals differ:\nstrategic %s: %v\n%s %s: %v", forms[0].patch, firstErr, f.pt, f.patch, err)
					}
				case !apiequality.Semantic.DeepEqual(got, first):
					t.Fatalf("the pods differ:\nstrategic %s: %+v\n%s %s: %+v", forms[0].patch, first.Spec, f.pt, f.patch, got.Spec)
				}
			}
			if firstErr == nil {
				accepted++
			} else {
				refused++
			}
		}
	}
	if accepted < 100 || refused < 50 {
		t.Errorf("%d accepted and %d refused: the changes do not cover both", accepted, refused)
	}
}

// statusOf returns the StatusError an error wraps, failing the test when
// there is none.
func statusOf(t *testing.T, err error) metav1.Status {
	t.Helper()
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T) wraps no StatusError", err, err)
	}
	return se.Status()
}

// TestPatchErrors: each way a JSON or merge patch fails, answered as the
// API server answers it, with the place in the patch in PatchError.Path.
func TestPatchErrors(t *testing.T) {
	old := stored(testPod(ctr("c1", "cpu=100m,memory=100Mi", "cpu=200m,memory=100Mi"), ctr("c2", "cpu=50m", "")))
	old.ResourceVersion = "7"
	tests := []struct {
		name   string
		pt     types.PatchType
		patch  string
		code   int32
		reason metav1.StatusReason
		path   string // PatchError.Path; "-" when the error is no PatchError
		msg    string // in the StatusError's message
	}{
		{"a JSON patch that is an object", JSONPatch, `{"op":"add"}`, 400, metav1.StatusReasonBadRequest, "",
			"error decoding patch: json: cannot unmarshal object into Go value of type []apiserver.jsonPatchOp"},
		{"a JSON patch that is not JSON", JSONPatch, `[{"op":`, 400, metav1.StatusReasonBadRequest, "", "error decoding patch"},
		{"a test that fails", JSONPatch, `[{"op":"test","path":"/spec/containers/0/name","value":"c1"},{"op":"test","path":"/spec/containers/1/name","value":"c1"}]`,
			422, metav1.StatusReasonInvalid, "[1]", "the server rejected our request due to an error in our request"},
		{"a path the pod does not have", JSONPatch, `[{"op":"replace","path":"/spec/containers/1/resources/limits/cpu","value":"1"}]`,
			422, metav1.StatusReasonInvalid, "[0]", "the server rejected our request"},
		{"an unknown operation", JSONPatch, `[{"op":"frobnicate","path":"/spec"}]`, 422, metav1.StatusReasonInvalid, "[0]", "the server rejected our request"},
		{"a bad quantity", JSONPatch, `[{"op":"replace","path":"/spec/containers/0/resources/limits/cpu","value":"12zz"}]`,
			422, metav1.StatusReasonInvalid, "[0].value", `patch: Invalid value: "{`},
		{"a bad quantity in an object", JSONPatch, `[{"op":"replace","path":"/spec/containers/0/resources","value":{"limits":{"memory":"lots"}}}]`,
			422, metav1.StatusReasonInvalid, "[0].value.limits[memory]", "quantities must match the regular expression"},
		{"an operation field that does not exist", JSONPatch, `[{"op":"replace","path":"/spec/containers/0/resources/limits/cpu","valeu":"1","value":"300m"}]`,
			422, metav1.StatusReasonInvalid, "", `strict decoding error: json patch unknown field "[0].valeu"`},
		{"a pod field that does not exist", JSONPatch, `[{"op":"add","path":"/spec/containers/0/resourcez","value":{}}]`,
			422, metav1.StatusReasonInvalid, "", `strict decoding error: unknown field "spec.containers[0].resourcez"`},
		{"another kind", JSONPatch, `[{"op":"replace","path":"/kind","value":"Node"}]`, 422, metav1.StatusReasonInvalid, "", "not a v1 Pod"},
		{"another name", JSONPatch, `[{"op":"replace","path":"/metadata/name","value":"other"}]`,
			400, metav1.StatusReasonBadRequest, "metadata.name", "the name of the object (other) does not match the name on the URL (resize-demo)"},
		{"another namespace", MergePatch, `{"metadata":{"namespace":"kube-system"}}`,
			400, metav1.StatusReasonBadRequest, "metadata.namespace", "the namespace of the provided object does not match the namespace sent on the request"},
		{"a stale resourceVersion", JSONPatch, `[{"op":"replace","path":"/metadata/resourceVersion","value":"6"}]`,
			409, metav1.StatusReasonConflict, "metadata.resourceVersion", `Operation cannot be fulfilled on pods "resize-demo": the object has been modified`},
		{"a stale resourceVersion in a strategic merge patch", StrategicMergePatch, `{"metadata":{"resourceVersion":"8"}}`,
			409, metav1.StatusReasonConflict, "metadata.resourceVersion", "the object has been modified"},
		{"a resourceVersion that is not a number", MergePatch, `{"metadata":{"resourceVersion":"seven"}}`,
			500, "", "metadata.resourceVersion", `strconv.ParseUint: parsing "seven": invalid syntax`},
		{"a merge patch that is a list", MergePatch, `[1]`, 400, metav1.StatusReasonBadRequest, "",
			"error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}"},
		{"a null merge patch", MergePatch, `null`, 400, metav1.StatusReasonBadRequest, "", "Invalid JSON Patch"},
		{"a merge patch with a duplicate key", MergePatch, `{"spec":{},"spec":{}}`, 422, metav1.StatusReasonInvalid, "", `duplicate field "spec"`},
		{"a merge patch with a bad quantity", MergePatch, `{"spec":{"containers":[{"name":"c1","resources":{"limits":{"cpu":"x"}}},{"name":"c2"}]}}`,
			422, metav1.StatusReasonInvalid, "spec.containers[0].resources.limits[cpu]", "quantities must match"},
		{"a merge patch the validation refuses", MergePatch, `{"spec":{"containers":[{"name":"c1"},{"name":"c2"}]}}`,
			422, metav1.StatusReasonInvalid, "-", `Pod "resize-demo" is invalid`},
		{"a huge exponent", JSONPatch, `[{"op":"replace","path":"/spec/containers/0/resources/limits/cpu","value":"1e-54775807"}]`,
			400, metav1.StatusReasonBadRequest, "[0].value", "an exponent beyond"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snapshot := old.DeepCopy()
			got, err := ApplyResizePatch(old, tc.pt, []byte(tc.patch), ResizeOptions{})
			if err == nil || got != nil {
				t.Fatalf("accepted: %v", got)
			}
			if !reflect.DeepEqual(old, snapshot) {
				t.Fatal("the old pod was modified")
			}
			st := statusOf(t, err)
			if st.Code != tc.code || st.Reason != tc.reason || !strings.Contains(st.Message, tc.msg) {
				t.Errorf("status %d %q %q, want %d %q containing %q", st.Code, st.Reason, st.Message, tc.code, tc.reason, tc.msg)
			}
			var pe *PatchError
			switch {
			case tc.path == "-":
				if errors.As(err, &pe) {
					t.Errorf("a PatchError (%v), want the validation's", err)
				}
			case !errors.As(err, &pe):
				t.Errorf("error %T, want a *PatchError", err)
			case pe.Path != tc.path:
				t.Errorf("PatchError.Path %q, want %q (%v)", pe.Path, tc.path, err)
			}
		})
	}
	// The stale version is a Conflict that errors.Is knows.
	_, err := ApplyResizePatch(old, MergePatch, []byte(`{"metadata":{"resourceVersion":"1"}}`), ResizeOptions{})
	if !errors.Is(err, ErrConflict) || !apierrors.IsConflict(err) {
		t.Errorf("stale resourceVersion: %v, want ErrConflict and IsConflict", err)
	}
	// The current version is accepted, and so is none.
	for _, patch := range []string{`{"metadata":{"resourceVersion":"7"}}`, `{"metadata":{"resourceVersion":null}}`} {
		if _, err := ApplyResizePatch(old, MergePatch, []byte(patch), ResizeOptions{}); err != nil {
			t.Errorf("%s: %v", patch, err)
		}
	}
}

// TestPatchTooLarge: the API server's bounds on a request body and on the
// operations of a JSON patch are 413s.
func TestPatchTooLarge(t *testing.T) {
	old := stored(testPod(ctr("c1", "cpu=100m", "")))
	ops := strings.Repeat(`{"op":"test","path":"/kind","value":"Pod"},`, MaxJSONPatchOperations)
	for _, tc := range []struct {
		pt    types.PatchType
		patch string
		msg   string
	}{
		{JSONPatch, "[" + ops + `{"op":"test","path":"/kind","value":"Pod"}]`, "The allowed maximum operations in a JSON patch is 10000, got 10001"},
		{JSONPatch, "[" + ops[:len(ops)-1] + "]", ""},
		{StrategicMergePatch, `{"metadata":{"labels":{"a":"` + strings.Repeat("x", MaxRequestBodyBytes) + `"}}}`, "limit is 3145728"},
		{MergePatch, `{"metadata":{"labels":{"a":"` + strings.Repeat("x", MaxRequestBodyBytes) + `"}}}`, "limit is 3145728"},
	} {
		_, err := ApplyResizePatch(old, tc.pt, []byte(tc.patch), ResizeOptions{})
		if tc.msg == "" {
			if err != nil {
				t.Errorf("%s of %d bytes: %v, want it accepted", tc.pt, len(tc.patch), err)
			}
			continue
		}
		if st := statusOf(t, err); st.Code != http.StatusRequestEntityTooLarge || !strings.Contains(st.Message, tc.msg) {
			t.Errorf("%s of %d bytes: %d %q, want 413 with %q", tc.pt, len(tc.patch), st.Code, st.Message, tc.msg)
		}
	}
}

// TestUnsupportedPatchType: a type the API server does not take is its
// 415, before the pod is looked up; server-side apply is resizelet's own
// 415, which says so.
func TestUnsupportedPatchType(t *testing.T) {
	c := NewCluster(ClusterOptions{})
	for _, pt := range []types.PatchType{"application/xml", "text/plain"} {
		_, err := c.ResizePodPatch(t.Context(), "default", "no-such-pod", pt, []byte(`{}`))
		st := statusOf(t, err)
		if !apierrors.IsUnsupportedMediaType(err) || st.Code != http.StatusUnsupportedMediaType || st.Message != "415: Unsupported Media Type" {
			t.Errorf("%s: %v (%d %q), want the API server's 415", pt, err, st.Code, st.Message)
		}
		if errors.Is(err, ErrPodNotFound) {
			t.Errorf("%s: the pod was looked up before the type was refused", pt)
		}
	}
	_, err := c.ResizePodPatch(t.Context(), "default", "no-such-pod", types.ApplyYAMLPatchType, []byte(`{}`))
	if !apierrors.IsUnsupportedMediaType(err) || !errors.Is(err, ErrApplyNotSupported) || !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("apply: %v, want a 415 matching ErrApplyNotSupported and errors.ErrUnsupported", err)
	}
	if err := ValidPatchType(""); err != nil {
		t.Errorf(`"" is a strategic merge patch: %v`, err)
	}
}

// TestClusterErrorsAreStatusErrors: every error of the cluster's pod
// methods is the API server's, and keeps matching resizelet's sentinels.
func TestClusterErrorsAreStatusErrors(t *testing.T) {
	c := NewCluster(ClusterOptions{})
	p, err := c.CreatePod(t.Context(), testPod(ctr("c1", "cpu=100m", "cpu=100m")))
	if err != nil {
		t.Fatal(err)
	}
	notFound := func(err error) bool { return apierrors.IsNotFound(err) && errors.Is(err, ErrPodNotFound) }
	_, getErr := c.GetPod(t.Context(), "default", "nope")
	_, versionedErr := c.GetPodVersioned("default", "nope")
	_, resizeErr := c.ResizePod(t.Context(), "default", "nope", []byte(`{}`))
	_, patchErr := c.ResizePodPatch(t.Context(), "default", "nope", JSONPatch, []byte(`[]`))
	_, requestErr := c.ResizePodRequest(t.Context(), "default", "nope", ResizeRequest{})
	_, markErr := c.MarkPodDeleted(t.Context(), "default", "nope", "", p.CreationTimestamp.Time)
	dup := testPod(ctr("c1", "cpu=100m", "cpu=100m"))
	_, dupErr := c.CreatePod(t.Context(), dup)
	sameUID := testPod(ctr("c1", "cpu=100m", "cpu=100m"))
	sameUID.Name, sameUID.UID = "other", p.UID
	_, uidErr := c.CreatePod(t.Context(), sameUID)
	versioned := testPod(ctr("c1", "cpu=100m", "cpu=100m"))
	versioned.Name, versioned.ResourceVersion = "versioned", "3"
	_, versionErr := c.CreatePod(t.Context(), versioned)
	_, invalidErr := c.ResizePod(t.Context(), "default", "resize-demo", []byte(`{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":"500m"}}}]}}`))
	for _, tc := range []struct {
		name string
		err  error
		is   func(error) bool
		msg  string
	}{
		{"GetPod", getErr, notFound, `pods "nope" not found`},
		{"GetPodVersioned", versionedErr, notFound, `pods "nope" not found`},
		{"ResizePod", resizeErr, notFound, `pods "nope" not found`},
		{"ResizePodPatch", patchErr, notFound, `pods "nope" not found`},
		{"ResizePodRequest", requestErr, notFound, `pods "nope" not found`},
		{"MarkPodDeleted", markErr, notFound, `pods "nope" not found`},
		{"DeletePod", c.DeletePod(t.Context(), "default", "nope"), notFound, `pods "nope" not found`},
		{"UpdatePodStatus of a pod not there", c.UpdatePodStatus(t.Context(), "default", "nope", p.UID, v1.PodStatus{}), notFound, `pods "nope" not found`},
		{"UpdatePodStatus of another UID", c.UpdatePodStatus(t.Context(), "default", "resize-demo", "not-the-uid", v1.PodStatus{}),
			func(err error) bool { return apierrors.IsConflict(err) && errors.Is(err, ErrPodNotFound) },
			"Precondition failed: UID in precondition: not-the-uid, UID in object meta: " + string(p.UID)},
		{"CreatePod of a name taken", dupErr, apierrors.IsAlreadyExists, `pods "resize-demo" already exists`},
		{"CreatePod of a UID taken", uidErr, func(err error) bool { return apierrors.IsConflict(err) && errors.Is(err, ErrUIDTaken) },
			"is pod default/resize-demo's"},
		{"CreatePod with a resourceVersion", versionErr, func(err error) bool { return statusOf(t, err).Code == http.StatusInternalServerError },
			"resourceVersion should not be set on objects to be created"},
		{"a resize validation refuses", invalidErr, apierrors.IsInvalid, `Pod "resize-demo" is invalid: spec.containers[0].resources.requests: Invalid value: "500m": must be less than or equal to cpu limit of 100m`},
	} {
		if tc.err == nil || !tc.is(tc.err) {
			t.Errorf("%s: %v (%T) is not the error wanted", tc.name, tc.err, tc.err)
			continue
		}
		if msg := statusOf(t, tc.err).Message; !strings.Contains(msg, tc.msg) {
			t.Errorf("%s: message %q, want it to contain %q", tc.name, msg, tc.msg)
		}
	}
}

// TestResourceVersions: every pod write takes the next version of the
// cluster, refused writes take none, GetPod and ListPods leave it out and
// the Versioned reads carry it, and a patch sees it.
func TestResourceVersions(t *testing.T) {
	c := NewCluster(ClusterOptions{})
	version := func(name string) string {
		t.Helper()
		p, err := c.GetPodVersioned("default", name)
		if err != nil {
			t.Fatal(err)
		}
		return p.ResourceVersion
	}
	a, _ := c.CreatePod(t.Context(), testPod(ctr("c1", "cpu=100m", "cpu=200m")))
	b := testPod(ctr("c1", "cpu=100m", "cpu=200m"))
	b.Name = "b"
	b, err := c.CreatePod(t.Context(), b)
	if err != nil {
		t.Fatal(err)
	}
	if a.ResourceVersion != "" {
		t.Errorf("the stored pod carries resourceVersion %q", a.ResourceVersion)
	}
	if got := version("resize-demo") + "," + version("b"); got != "1,2" || c.ResourceVersion() != 2 {
		t.Fatalf("versions after two creates: %s (cluster %d), want 1,2 (2)", got, c.ResourceVersion())
	}
	if _, err := c.ResizePod(t.Context(), "default", "resize-demo", []byte(`{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":"150m"}}}]}}`)); err != nil {
		t.Fatal(err)
	}
	if err := c.UpdatePodStatus(t.Context(), "default", "b", b.UID, v1.PodStatus{Phase: v1.PodRunning}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ResizePod(t.Context(), "default", "b", []byte(`{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":"500m"}}}]}}`)); err == nil {
		t.Fatal("a request above the limit was accepted")
	}
	if got := version("resize-demo") + "," + version("b"); got != "3,4" {
		t.Errorf("versions after a resize, a status write and a refused resize: %s, want 3,4", got)
	}
	plain, _ := c.GetPod(t.Context(), "default", "b")
	listed := c.ListPods(t.Context())
	versioned, rv := c.ListPodsVersioned()
	if plain.ResourceVersion != "" || listed[1].ResourceVersion != "" {
		t.Errorf("GetPod and ListPods carry resourceVersions %q %q", plain.ResourceVersion, listed[1].ResourceVersion)
	}
	if rv != 4 || versioned[0].ResourceVersion != "3" || versioned[1].ResourceVersion != "4" {
		t.Errorf("ListPodsVersioned: %d, %s %s; want 4, 3 4", rv, versioned[0].ResourceVersion, versioned[1].ResourceVersion)
	}
	// A patch that tests the version it read goes through at that version
	// only.
	test := func(rv string) []byte {
		return []byte(`[{"op":"test","path":"/metadata/resourceVersion","value":"` + rv + `"},{"op":"replace","path":"/spec/containers/0/resources/requests/cpu","value":"120m"}]`)
	}
	if _, err := c.ResizePodPatch(t.Context(), "default", "resize-demo", JSONPatch, test("2")); err == nil {
		t.Error("a JSON patch testing an old resourceVersion was accepted")
	}
	if _, err := c.ResizePodPatch(t.Context(), "default", "resize-demo", JSONPatch, test("3")); err != nil {
		t.Errorf("a JSON patch testing the current resourceVersion: %v", err)
	}
	if _, err := c.ResizePodPatch(t.Context(), "default", "resize-demo", MergePatch, []byte(`{"metadata":{"resourceVersion":"3"}}`)); !apierrors.IsConflict(err) {
		t.Errorf("a merge patch at the version before: %v, want a Conflict", err)
	}
	if err := c.DeletePod(t.Context(), "default", "b"); err != nil || c.ResourceVersion() != 6 {
		t.Errorf("delete: %v, cluster at %d; want it at 6", err, c.ResourceVersion())
	}
}

// FuzzApplyResizePatch feeds arbitrary merge and JSON patches (and
// strategic ones) to ApplyResizePatch under each profile. It must never
// panic; an error must wrap the StatusError the API server would answer
// with and leave the old pod as it was; JSON with a key given twice must
// be refused, whatever the patch type (the TestDuplicateKeys tests say
// why); an accepted resize must keep what the resize subresource may not
// change and pass validation.
func FuzzApplyResizePatch(f *testing.F) {
	f.Add([]byte(`[{"op":"replace","path":"/spec/containers/0/resources/limits/cpu","value":"300m"}]`), uint8(1), uint8(2))
	f.Add([]byte(`{"spec":{"containers":[{"name":"c1","resources":{"limits":{"cpu":"300m"}}}]}}`), uint8(0), uint8(2))
	profiles := []profile.Version{profile.V133, profile.V134, profile.V135, profile.V136, profile.V137}
	pts := []types.PatchType{MergePatch, JSONPatch, StrategicMergePatch}
	f.Fuzz(func(t *testing.T, patch []byte, pt, prof uint8) {
		o := ResizeOptions{Profile: profiles[int(prof)%len(profiles)]}
		typ := pts[int(pt)%len(pts)]
		dup := hasDuplicateKey(patch)
		for _, old := range fuzzPods() {
			old.ResourceVersion = "5"
			snapshot := old.DeepCopy()
			got, err := ApplyResizePatch(old, typ, patch, o)
			if !reflect.DeepEqual(old, snapshot) {
				t.Fatalf("old pod modified by %s patch %q", typ, patch)
			}
			if err != nil {
				var se *apierrors.StatusError
				if !errors.As(err, &se) {
					t.Fatalf("error of type %T wraps no StatusError: %v", err, err)
				}
				if got != nil {
					t.Fatalf("a pod came back with error %v", err)
				}
				continue
			}
			if dup {
				t.Fatalf("%s patch %q has a key twice, and was accepted", typ, patch)
			}
			if got.Name != old.Name || got.Namespace != old.Namespace || got.UID != old.UID || !apiequality.Semantic.DeepEqual(got.Status, old.Status) {
				t.Fatalf("metadata or status changed by %s patch %q", typ, patch)
			}
			if got.Generation != old.Generation && got.Generation != old.Generation+1 {
				t.Fatalf("generation %d from %d", got.Generation, old.Generation)
			}
			if len(got.Spec.Containers) != len(old.Spec.Containers) || len(got.Spec.InitContainers) != len(old.Spec.InitContainers) {
				t.Fatalf("containers added or removed by %s patch %q", typ, patch)
			}
			if errs := ValidateResize(got, old, o); len(errs) > 0 {
				t.Fatalf("accepted pod does not validate: %v", errs)
			}
		}
	})
}

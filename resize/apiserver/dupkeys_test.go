package apiserver

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kjson "sigs.k8s.io/json"
)

// dupKeyCase is a patch with a key given twice and what the API server
// v1.35.4 answers it with under fieldValidation=Strict. msg is the whole
// Status message when the patched value in it is short (a strategic
// merge patch's map, a validation error); detail, when set, is the end of
// the message after the patched JSON, which is the field "patch"'s
// value for a merge or JSON patch (the message then starts with
// invalidPatchPrefix). accepted patches give cpu, c1's new cpu request.
type dupKeyCase struct {
	name   string
	patch  string
	code   int32
	reason metav1.StatusReason
	msg    string
	detail string
	path   string // PatchError.Path
	cpu    string
}

// invalidPatchPrefix starts the API server's 422 for a patched object it
// cannot decode: apierrors.NewInvalid with no kind and no name, on the
// field "patch", whose value follows.
const invalidPatchPrefix = ` "" is invalid: patch: Invalid value: "`

// dupKeyPod is the stored pod the duplicate key tests patch.
func dupKeyPod() *v1.Pod {
	p := stored(testPod(ctr("c1", "cpu=100m,memory=100Mi", "cpu=200m,memory=100Mi"), ctr("c2", "cpu=50m", "")))
	p.ResourceVersion = "7"
	return p
}

// checkDupKeyCase applies tc as a patch of type pt and checks the answer.
func checkDupKeyCase(t *testing.T, pt types.PatchType, tc dupKeyCase) {
	t.Helper()
	old := dupKeyPod()
	got, err := ApplyResizePatch(old, pt, []byte(tc.patch), ResizeOptions{})
	if tc.code == 0 {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		if q := got.Spec.Containers[0].Resources.Requests.Cpu(); q.String() != tc.cpu {
			t.Errorf("c1 requests cpu %s, want %s (the last value)", q, tc.cpu)
		}
		return
	}
	if err == nil || got != nil {
		t.Fatalf("accepted: %v", got)
	}
	st := statusOf(t, err)
	if st.Code != tc.code || st.Reason != tc.reason {
		t.Errorf("status %d %q, want %d %q (%s)", st.Code, st.Reason, tc.code, tc.reason, st.Message)
	}
	switch {
	case tc.detail != "":
		if !strings.HasPrefix(st.Message, invalidPatchPrefix) || !strings.HasSuffix(st.Message, `": `+tc.detail) {
			t.Errorf("message\n %s\nwant %q, the patched pod, then\n %s", st.Message, invalidPatchPrefix, `": `+tc.detail)
		}
	case st.Message != tc.msg:
		t.Errorf("message\n %s\nwant\n %s", st.Message, tc.msg)
	}
	var pe *PatchError
	if errors.As(err, &pe) && pe.Path != tc.path {
		t.Errorf("PatchError.Path %q, want %q", pe.Path, tc.path)
	}
}

// TestDuplicateKeysStrategicMerge pins what the API server v1.35.4 does
// with a key given twice in a strategic merge patch under
// fieldValidation=Strict, the directive resizelet emulates: k8s.io/apiserver
// pkg/endpoints/handlers/patch.go, strategicPatchObject decodes the patch
// with sigs.k8s.io/json UnmarshalStrict (which keeps the last value and
// returns `duplicate field "<path>"` as a strict error), and
// applyPatchToObject, once the merge and the conversion of its result have
// not failed otherwise, answers the strict errors (the patch's, then the
// result's unknown fields) with a 422 Invalid on the field "patch", the
// patch map as the value and runtime.NewStrictDecodingError's text. A
// merge error or a value the pod cannot hold wins over them.
//
// Each patch is also held to the API server's way (sameAsAPIServer): the
// narrow reading (readNarrowPatch) refuses a key given twice and leaves
// it to the strategic merge. A YAML patch is resizelet's own form, converted
// as kubectl patch converts it (k8s.io/kubectl pkg/cmd/patch/patch.go,
// RunPatch: yaml.ToJSON, which keeps the last value): the last value wins.
func TestDuplicateKeysStrategicMerge(t *testing.T) {
	tests := []dupKeyCase{
		{name: "a quantity twice", patch: `{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":"150m","cpu":"120m"}}}]}}`,
			code: 422, reason: metav1.StatusReasonInvalid,
			msg: ` "" is invalid: patch: Invalid value: "map[spec:map[containers:[map[name:c1 resources:map[requests:map[cpu:120m]]]]]]": strict decoding error: duplicate field "spec.containers[0].resources.requests.cpu"`},
		{name: "the same value twice", patch: `{"spec":{"containers":[{"name":"c1","resources":{"limits":{"cpu":"200m","cpu":"200m"}}}]}}`,
			code: 422, reason: metav1.StatusReasonInvalid,
			msg: ` "" is invalid: patch: Invalid value: "map[spec:map[containers:[map[name:c1 resources:map[limits:map[cpu:200m]]]]]]": strict decoding error: duplicate field "spec.containers[0].resources.limits.cpu"`},
		{name: "spec twice, the first with a duplicate of its own", patch: `{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":"1","cpu":"2"}}}]},"spec":{}}`,
			code: 422, reason: metav1.StatusReasonInvalid,
			msg: ` "" is invalid: patch: Invalid value: "map[spec:map[]]": strict decoding error: duplicate field "spec.containers[0].resources.requests.cpu", duplicate field "spec"`},
		{name: "a container's name twice", patch: `{"spec":{"containers":[{"name":"c1","name":"c1","resources":{"requests":{"cpu":"150m"}}}]}}`,
			code: 422, reason: metav1.StatusReasonInvalid,
			msg: ` "" is invalid: patch: Invalid value: "map[spec:map[containers:[map[name:c1 resources:map[requests:map[cpu:150m]]]]]]": strict decoding error: duplicate field "spec.containers[0].name"`},
		{name: "a label twice, which the resize strategy would drop", patch: `{"metadata":{"labels":{"a":"1","a":"2"}}}`,
			code: 422, reason: metav1.StatusReasonInvalid,
			msg: ` "" is invalid: patch: Invalid value: "map[metadata:map[labels:map[a:2]]]": strict decoding error: duplicate field "metadata.labels.a"`},
		{name: "a duplicate and a field the pod does not have", patch: `{"spec":{"containers":[{"name":"c1","resource":{},"resources":{"requests":{"cpu":"1","cpu":"2"}}}]}}`,
			code: 422, reason: metav1.StatusReasonInvalid,
			msg: ` "" is invalid: patch: Invalid value: "map[spec:map[containers:[map[name:c1 resource:map[] resources:map[requests:map[cpu:2]]]]]]": strict decoding error: duplicate field "spec.containers[0].resources.requests.cpu", unknown field "spec.containers[0].resource"`},
		{name: "a bad quantity overwritten", patch: `{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":"x","cpu":"150m"}}}]}}`,
			code: 422, reason: metav1.StatusReasonInvalid,
			msg: ` "" is invalid: patch: Invalid value: "map[spec:map[containers:[map[name:c1 resources:map[requests:map[cpu:150m]]]]]]": strict decoding error: duplicate field "spec.containers[0].resources.requests.cpu"`},
		{name: "a bad quantity last, which wins over the duplicate", patch: `{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":"150m","cpu":"x"}}}]}}`,
			code: 422, reason: metav1.StatusReasonInvalid, path: "spec.containers[0].resources.requests[cpu]",
			msg: ` "" is invalid: patch: Invalid value: "map[spec:map[containers:[map[name:c1 resources:map[requests:map[cpu:x]]]]]]": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`},
		{name: "a merge error, which wins over the duplicate", patch: `{"spec":{"$retainKeys":"x","containers":[{"name":"c1","resources":{"requests":{"cpu":"1","cpu":"2"}}}]}}`,
			code: 400, reason: metav1.StatusReasonBadRequest, msg: "invalid patch format of retainKeys"},
		{name: "not JSON, which wins over the duplicate", patch: `{"spec":{"spec":1,"spec":2}`,
			code: 400, reason: metav1.StatusReasonBadRequest, msg: "unexpected end of JSON input"},
		{name: "YAML with a quantity twice", patch: "spec:\n  containers:\n  - name: c1\n    resources:\n      requests:\n        cpu: 300m\n        cpu: 150m\n",
			cpu: "150m"},
		{name: "a YAML flow map with a quantity twice", patch: `{spec: {containers: [{name: c1, resources: {requests: {cpu: 300m, cpu: 150m}}}]}}`,
			cpu: "150m"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkDupKeyCase(t, StrategicMergePatch, tc)
			if _, _, _, direct := readNarrowPatch([]byte(tc.patch), nil); direct {
				t.Errorf("the narrow reading took a patch with a key given twice")
			}
			old, patch := dupKeyPod(), []byte(tc.patch)
			sameAsAPIServer(t, tc.name, old, StrategicMergePatch, patch, ResizeOptions{}, func() (*v1.Pod, error) { return ApplyResize(old, patch, ResizeOptions{}) })
		})
	}
	// A Cluster answers the same and stores nothing.
	c := NewCluster(ClusterOptions{})
	if _, err := c.CreatePod(t.Context(), testPod(ctr("c1", "cpu=100m", "cpu=200m"))); err != nil {
		t.Fatal(err)
	}
	before := c.ResourceVersion()
	if _, err := c.ResizePod(t.Context(), "default", "resize-demo", []byte(tests[0].patch)); statusOf(t, err).Code != 422 {
		t.Errorf("Cluster.ResizePod: %v, want a 422", err)
	}
	if c.ResourceVersion() != before {
		t.Errorf("the cluster went from version %d to %d on a refused patch", before, c.ResourceVersion())
	}
}

// TestDuplicateKeysMergePatch pins what the API server v1.35.4 does with
// a key given twice in a JSON merge patch under fieldValidation=Strict:
// k8s.io/apiserver pkg/endpoints/handlers/patch.go,
// jsonPatcher.applyJSPatch decodes the patch with sigs.k8s.io/json
// UnmarshalStrict into a map (its strict errors unprefixed), the
// json-patch library merges it (the last value winning), and
// jsonPatcher.applyPatchToCurrentObject answers the patch's strict errors
// with those of the result's decoding (unknown fields) as a 422 Invalid on
// the field "patch", the patched JSON as the value, unless that decoding
// failed otherwise.
func TestDuplicateKeysMergePatch(t *testing.T) {
	c2 := `{"name":"c2","resources":{"requests":{"cpu":"50m"}}}`
	tests := []dupKeyCase{
		{name: "a quantity twice", patch: `{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":"150m","cpu":"120m"},"limits":{"cpu":"200m","memory":"100Mi"}}},` + c2 + `]}}`,
			code: 422, reason: metav1.StatusReasonInvalid,
			detail: `strict decoding error: duplicate field "spec.containers[0].resources.requests.cpu"`},
		{name: "spec twice", patch: `{"spec":{},"spec":{}}`,
			code: 422, reason: metav1.StatusReasonInvalid, detail: `strict decoding error: duplicate field "spec"`},
		{name: "a label twice", patch: `{"metadata":{"labels":{"a":"1","a":"2"}}}`,
			code: 422, reason: metav1.StatusReasonInvalid, detail: `strict decoding error: duplicate field "metadata.labels.a"`},
		{name: "a duplicate and a field the pod does not have", patch: `{"spec":{"containers":[{"name":"c1","resourcez":{},"resources":{"requests":{"cpu":"1","cpu":"2"}}},` + c2 + `]}}`,
			code: 422, reason: metav1.StatusReasonInvalid,
			detail: `strict decoding error: duplicate field "spec.containers[0].resources.requests.cpu", unknown field "spec.containers[0].resourcez"`},
		{name: "a bad quantity last, which wins over the duplicate", patch: `{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":"150m","cpu":"x"}}},` + c2 + `]}}`,
			code: 422, reason: metav1.StatusReasonInvalid, path: "spec.containers[0].resources.requests[cpu]",
			detail: `quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`},
		{name: "not JSON, which wins over the duplicate", patch: `{"spec":1,"spec":2`,
			code: 400, reason: metav1.StatusReasonBadRequest, msg: "error decoding patch: unexpected end of JSON input"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkDupKeyCase(t, MergePatch, tc) })
	}
}

// TestDuplicateKeysJSONPatch pins what the API server v1.35.4 does with a
// key given twice in a JSON patch under fieldValidation=Strict:
// k8s.io/apiserver pkg/endpoints/handlers/patch.go,
// jsonPatcher.applyJSPatch decodes the operations with sigs.k8s.io/json
// UnmarshalStrict into []jsonPatchOp, prefixing each strict error with
// "json patch " (paths such as "[0].value.cpu"), and applies the patch
// with the json-patch library, which copies an operation's value as the
// patch has it; jsonPatcher.applyPatchToCurrentObject then decodes the
// result with the strict codec (k8s.io/apimachinery
// pkg/runtime/serializer/json/json.go, Serializer.unmarshal), which finds
// the duplicate again in the pod, and answers both lists as one 422
// Invalid on the field "patch". An operation that fails answers first.
func TestDuplicateKeysJSONPatch(t *testing.T) {
	tests := []dupKeyCase{
		{name: "a quantity twice in a value", patch: `[{"op":"replace","path":"/spec/containers/0/resources/requests","value":{"cpu":"150m","cpu":"120m"}}]`,
			code: 422, reason: metav1.StatusReasonInvalid,
			detail: `strict decoding error: json patch duplicate field "[0].value.cpu", duplicate field "spec.containers[0].resources.requests.cpu"`},
		{name: "a label twice in a value", patch: `[{"op":"add","path":"/metadata/labels","value":{"a":"1","a":"2"}}]`,
			code: 422, reason: metav1.StatusReasonInvalid,
			detail: `strict decoding error: json patch duplicate field "[0].value.a", duplicate field "metadata.labels.a"`},
		{name: "an operation's value twice", patch: `[{"op":"replace","path":"/spec/containers/0/resources/requests/cpu","value":"300m","value":"150m"}]`,
			code: 422, reason: metav1.StatusReasonInvalid, detail: `strict decoding error: json patch duplicate field "[0].value"`},
		{name: "an operation's op twice", patch: `[{"op":"replace","op":"replace","path":"/spec/containers/0/resources/requests/cpu","value":"150m"}]`,
			code: 422, reason: metav1.StatusReasonInvalid, detail: `strict decoding error: json patch duplicate field "[0].op"`},
		{name: "a duplicate in a test's value, which stays out of the pod", patch: `[{"op":"test","path":"/spec/containers/0/resources/requests","value":{"cpu":"100m","cpu":"100m","memory":"100Mi"}}]`,
			code: 422, reason: metav1.StatusReasonInvalid, detail: `strict decoding error: json patch duplicate field "[0].value.cpu"`},
		{name: "an operation that fails, which wins over the duplicate", patch: `[{"op":"replace","path":"/spec/containers/7/resources","value":{"cpu":"1","cpu":"2"}}]`,
			code: 422, reason: metav1.StatusReasonInvalid, path: "[0]", msg: "the server rejected our request due to an error in our request"},
		{name: "not JSON, which wins over the duplicate", patch: `[{"op":"add","op":"add"}`,
			code: 400, reason: metav1.StatusReasonBadRequest, msg: "error decoding patch: unexpected end of JSON input"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkDupKeyCase(t, JSONPatch, tc) })
	}
}

// hasDuplicateKey reports whether patch is JSON with a key given twice in
// one of its objects, which the API server refuses under
// fieldValidation=Strict whatever the patch type (the tests above say
// how): the fuzz targets hold every path to that.
func hasDuplicateKey(patch []byte) bool {
	if !json.Valid(patch) {
		return false
	}
	var v interface{}
	strictErrs, err := kjson.UnmarshalStrict(patch, &v)
	if err != nil {
		return false
	}
	for _, e := range strictErrs {
		if strings.HasPrefix(e.Error(), "duplicate field ") {
			return true
		}
	}
	return false
}

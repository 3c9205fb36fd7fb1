package scenario_test

import (
	"context"
	"strings"
	"testing"

	"github.com/resizelet/resizelet/resize/apiserver"
	"github.com/resizelet/resizelet/resize/scenario"
)

const twoContainerPod = `
pods:
- metadata: {name: web}
  spec:
    containers:
    - {name: app, resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {cpu: 200m, memory: 64Mi}}}
    - {name: log, resources: {requests: {cpu: 50m}}}
`

// TestParsePatchTypes: patchType chooses the patch type, and each is read
// in the forms the format allows.
func TestParsePatchTypes(t *testing.T) {
	for _, tc := range []struct {
		step, wantType, wantPatch string
	}{
		{`{resize: {pod: web, patch: '{"spec":{}}'}}`, "", `{"spec":{}}`},
		{`{resize: {pod: web, patchType: strategic, patch: {spec: {}}}}`, "", `{"spec":{}}`},
		{`{resize: {pod: web, patchType: merge, patch: 'spec: {containers: [{name: app}, {name: log}]}'}}`, string(apiserver.MergePatch),
			`{"spec":{"containers":[{"name":"app"},{"name":"log"}]}}`},
		{`{resize: {pod: web, patchType: json, patch: [{op: remove, path: /spec/containers/1/resources/requests}]}}`, string(apiserver.JSONPatch),
			`[{"op":"remove","path":"/spec/containers/1/resources/requests"}]`},
		{`{resize: {pod: web, patchType: json, patch: '[{"op": "add", "path": "/spec/containers/0/resources/limits/cpu", "value": "1"}]'}}`, string(apiserver.JSONPatch),
			`[{"op":"add","path":"/spec/containers/0/resources/limits/cpu","value":"1"}]`},
		{`{resize: {pod: web, patchType: json, patch: "- {op: move, from: /metadata/labels, path: /metadata/annotations}"}}`, string(apiserver.JSONPatch),
			`[{"from":"/metadata/labels","op":"move","path":"/metadata/annotations"}]`},
	} {
		s, err := scenario.Parse("p.yaml", []byte("name: x"+twoContainerPod+"steps: ["+tc.step+"]\n"))
		if err != nil {
			t.Errorf("%s: %v", tc.step, err)
			continue
		}
		st := s.Steps[0]
		if string(st.PatchType) != tc.wantType || string(st.Patch) != tc.wantPatch {
			t.Errorf("%s: type %q patch %s, want %q %s", tc.step, st.PatchType, st.Patch, tc.wantType, tc.wantPatch)
		}
	}
}

// TestParseRejectsBadJSONPatches: what the parser can tell of a JSON patch
// without the pod is an error of the file at the operation's key.
func TestParseRejectsBadJSONPatches(t *testing.T) {
	for _, tc := range []struct {
		name, patch, field, msg string
	}{
		{"not a list", `{op: add}`, "resize.patch", "want a list of operations, got a map"},
		{"not JSON", `'[{"op":'`, "resize.patch", "malformed patch"},
		{"an operation that is not a map", `[add]`, "resize.patch[0]", "want a map"},
		{"no op", `[{path: /spec}]`, "resize.patch[0].op", "required"},
		{"an unknown op", `[{op: frobnicate, path: /spec}]`, "resize.patch[0].op", `"frobnicate" is not one of add, copy, move, remove, replace, test`},
		{"an unknown key", `[{op: add, path: /spec, value: 1, valeu: 2}]`, "resize.patch[0].valeu", "unknown key (want one of op, path, from, value)"},
		{"no path", `[{op: remove}]`, "resize.patch[0].path", "required by remove"},
		{"no value", `[{op: test, path: /spec, value: {}}, {op: replace, path: /spec}]`, "resize.patch[1].value", "required by replace"},
		{"no from", `[{op: copy, path: /spec}]`, "resize.patch[0].from", "required by copy"},
		{"a path that is no pointer", `[{op: remove, path: spec/containers}]`, "resize.patch[0].path", "is not a JSON pointer"},
		{"a bad quantity", `[{op: add, path: /spec/containers/0/resources/limits/cpu, value: 12zz}]`, "resize.patch[0].value", "malformed quantity"},
		{"an amount beyond the bounds", `[{op: add, path: /spec/containers/0/resources/limits/memory, value: 1e100}]`, "resize.patch[0].value", "more than"},
		{"a huge exponent", `[{op: add, path: /spec/x, value: "1e-54775807"}]`, "resize.patch[0].value", "an exponent beyond"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := scenario.Parse("p.yaml", []byte("name: x"+twoContainerPod+"steps: [{resize: {pod: web, patchType: json, patch: "+tc.patch+"}}]\n"))
			var se *scenario.Error
			if !errorsAs(err, &se) || se.Step != 0 || se.Field != tc.field || !strings.Contains(se.Msg, tc.msg) {
				t.Fatalf("Parse = %v, want an error at steps[0] %s containing %q", err, tc.field, tc.msg)
			}
		})
	}
	_, err := scenario.Parse("p.yaml", []byte("name: x"+twoContainerPod+"steps: [{resize: {pod: web, patchType: yaml, patch: {}}}]\n"))
	var se *scenario.Error
	if !errorsAs(err, &se) || se.Field != "resize.patchType" || !strings.Contains(se.Msg, `"yaml" is not one of strategic, merge, json`) {
		t.Errorf("an unknown patchType: %v", err)
	}
}

// TestRunKeepsThePatchErrorsPath: a patch only the API server finds
// malformed makes the file invalid, with the place in the patch the API
// server names in the error's field.
func TestRunKeepsThePatchErrorsPath(t *testing.T) {
	for _, tc := range []struct {
		name, resize, field, msg string
	}{
		{"a JSON patch operation that does not apply", `{pod: web, patchType: json, patch: [{op: test, path: /spec/containers/0/name, value: app}, {op: test, path: /spec/containers/1/name, value: app}]}`,
			"resize.patch[1]", "invalid resize patch: testing value /spec/containers/1/name failed: test failed"},
		{"a bad quantity in an operation's object", `{pod: web, patchType: json, patch: [{op: replace, path: /spec/containers/0/resources, value: {limits: {cpu: lots}}}]}`,
			"resize.patch[0].value.limits[cpu]", "quantities must match the regular expression"},
		{"a merge patch that renames the pod", `{pod: web, patchType: merge, patch: {metadata: {name: other}}}`,
			"resize.patch.metadata.name", "invalid resize patch: the name of the object (other) does not match the name on the URL (web)"},
		{"a strategic merge patch with a field pods do not have", `{pod: web, patch: {spec: {containers: [{name: app, resourcez: {}}]}}}`,
			"resize.patch", `strict decoding error: unknown field "spec.containers[0].resourcez"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := scenario.Parse("p.yaml", []byte("name: x"+twoContainerPod+"steps: [{resize: "+tc.resize+"}]\n"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = scenario.Run(context.Background(), s, scenario.Options{})
			var se *scenario.Error
			if !errorsAs(err, &se) {
				t.Fatalf("Run = %v, want a *scenario.Error", err)
			}
			if se.Step != 0 || se.Field != tc.field || !strings.Contains(se.Msg, tc.msg) {
				t.Fatalf("Run = %v (field %q), want steps[0] %s containing %q", err, se.Field, tc.field, tc.msg)
			}
		})
	}
}

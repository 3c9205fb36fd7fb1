package scenario

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	kjson "sigs.k8s.io/json"
)

// decodeManifest decodes a pod manifest as the API server does (field
// names matched case-sensitively, an unknown field an error, as kubectl's
// strict field validation makes it), with every error at its place in the
// file: a bad quantity, a value of the wrong type, an unknown field.
func (p *parser) decodeManifest(raw json.RawMessage, m map[string]json.RawMessage, field string) (*v1.Pod, error) {
	if err := p.manifestQuantities(m, field); err != nil {
		return nil, err
	}
	pod := &v1.Pod{}
	strict, err := kjson.UnmarshalStrict(raw, pod, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		// encoding/json's type errors name the field (without list
		// indexes) and what was found there.
		var ute *json.UnmarshalTypeError
		if errors.As(json.Unmarshal(raw, &v1.Pod{}), &ute) && ute.Field != "" {
			return nil, p.errf(field+"."+ute.Field, "want %s, got a JSON %s", ute.Type, ute.Value)
		}
		return nil, p.errf(field, "not a valid Pod manifest: %v", err)
	}
	if len(strict) == 0 {
		return pod, nil
	}
	var fe kjson.FieldError
	if errors.As(strict[0], &fe) {
		return nil, p.errf(field+"."+fe.FieldPath(), "unknown field: the Pod API has no such field (names are case-sensitive)")
	}
	return nil, p.errf(field, "not a valid Pod manifest: %v", strict[0])
}

// manifestQuantities checks each quantity of a pod manifest where the Pod
// API has them (the requests and limits of containers, init and ephemeral
// containers and spec.resources, spec.overhead, emptyDir size limits), so
// that a bad one is reported at its place with its value: the Pod
// decoder's error names neither. Values of the wrong shape are left to
// the decoder.
func (p *parser) manifestQuantities(m map[string]json.RawMessage, field string) error {
	spec, ok := objectAt(m["spec"])
	if !ok {
		return nil
	}
	f := field + ".spec"
	list := func(raw json.RawMessage, f string) error {
		obj, _ := objectAt(raw)
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if isNull(obj[k]) {
				continue
			}
			if _, err := p.quantity(obj[k], f+"."+k); err != nil {
				return err
			}
		}
		return nil
	}
	requirements := func(raw json.RawMessage, f string) error {
		r, _ := objectAt(raw)
		if err := list(r["requests"], f+".requests"); err != nil {
			return err
		}
		return list(r["limits"], f+".limits")
	}
	for _, key := range []string{"initContainers", "containers", "ephemeralContainers"} {
		var items []json.RawMessage
		json.Unmarshal(spec[key], &items)
		for i, item := range items {
			c, _ := objectAt(item)
			if err := requirements(c["resources"], fmt.Sprintf("%s.%s[%d].resources", f, key, i)); err != nil {
				return err
			}
		}
	}
	if err := requirements(spec["resources"], f+".resources"); err != nil {
		return err
	}
	if err := list(spec["overhead"], f+".overhead"); err != nil {
		return err
	}
	var volumes []json.RawMessage
	json.Unmarshal(spec["volumes"], &volumes)
	for i, raw := range volumes {
		v, _ := objectAt(raw)
		dir, _ := objectAt(v["emptyDir"])
		if limit, ok := dir["sizeLimit"]; ok && !isNull(limit) {
			if _, err := p.quantity(limit, fmt.Sprintf("%s.volumes[%d].emptyDir.sizeLimit", f, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// objectAt decodes a JSON object's members; ok is false for anything else.
func objectAt(raw json.RawMessage) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil || m == nil {
		return nil, false
	}
	return m, true
}

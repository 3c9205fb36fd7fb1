package apiserver

import (
	"bytes"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kjson "sigs.k8s.io/json"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// Most resize patches say nothing but new requests and limits of named
// containers:
//
//	{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"300m"}}}]}}
//
// narrowPatch is that form as a type: a patch that decodes strictly into
// it (no other field, no key twice, names matched case-sensitively) is
// read as an edit directly, without the JSON round trip of the pod and
// the strategic merge. Strict decoding is what tells a patch of this form
// from one that only looks like it.
type narrowPatch struct {
	Spec struct {
		Containers     []narrowContainer `json:"containers"`
		InitContainers []narrowContainer `json:"initContainers"`
		Resources      *narrowResources  `json:"resources"`
	} `json:"spec"`
}

type narrowContainer struct {
	Name      string          `json:"name"`
	Resources narrowResources `json:"resources"`
}

type narrowResources struct {
	Requests map[v1.ResourceName]string `json:"requests"`
	Limits   map[v1.ResourceName]string `json:"limits"`
}

// amountSet sets one resource of a requests or limits list.
type amountSet struct {
	name v1.ResourceName
	q    resource.Quantity
}

// containerSet is what a narrow resize sets on one container (or, with an
// empty name, on spec.resources): the amounts to set in its requests and
// in its limits, a list left alone when its flag is false.
type containerSet struct {
	name                   string
	requests, limits       []amountSet
	setRequests, setLimits bool
}

// readNarrowPatch decodes a strategic merge patch of the narrow form into
// the sets of containers, init containers and the pod level, or reports
// false for any other patch, which takes the general path: another field,
// a "$patch" or "$setElementOrder" directive, a null anywhere (in a
// strategic merge it deletes, which the form cannot say), a number where
// a quantity string belongs, an empty list or object, a key given twice,
// a quantity that does not parse or is beyond resizelet's bounds, YAML.
func readNarrowPatch(patch []byte) (cs, inits []containerSet, pod *containerSet, ok bool) {
	if bytes.Contains(patch, []byte("null")) {
		return nil, nil, nil, false
	}
	var np narrowPatch
	strict, err := kjson.UnmarshalStrict(patch, &np, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil || len(strict) > 0 {
		return nil, nil, nil, false
	}
	s := &np.Spec
	if s.Containers == nil && s.InitContainers == nil && s.Resources == nil {
		return nil, nil, nil, false
	}
	if cs, ok = narrowSets(s.Containers); !ok {
		return nil, nil, nil, false
	}
	if inits, ok = narrowSets(s.InitContainers); !ok {
		return nil, nil, nil, false
	}
	if s.Resources != nil {
		var p containerSet
		if p, ok = narrowSet("", s.Resources); !ok {
			return nil, nil, nil, false
		}
		pod = &p
	}
	return cs, inits, pod, true
}

// narrowSets turns a decoded container list into sets; a list given but
// empty, or a container without a name, is not of the narrow form.
func narrowSets(list []narrowContainer) ([]containerSet, bool) {
	if list != nil && len(list) == 0 {
		return nil, false
	}
	out := make([]containerSet, 0, len(list))
	for i := range list {
		if list[i].Name == "" {
			return nil, false
		}
		s, ok := narrowSet(list[i].Name, &list[i].Resources)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// narrowSet parses one container's quantities as the pod's decoder does
// (Quantity.UnmarshalJSON trims the white space around the string).
func narrowSet(name string, r *narrowResources) (containerSet, bool) {
	if r.Requests == nil && r.Limits == nil {
		return containerSet{}, false
	}
	s := containerSet{name: name, setRequests: r.Requests != nil, setLimits: r.Limits != nil}
	var ok bool
	if s.requests, ok = parseAmounts(r.Requests); !ok {
		return containerSet{}, false
	}
	if s.limits, ok = parseAmounts(r.Limits); !ok {
		return containerSet{}, false
	}
	return s, true
}

func parseAmounts(m map[v1.ResourceName]string) ([]amountSet, bool) {
	if m != nil && len(m) == 0 {
		return nil, false
	}
	out := make([]amountSet, 0, len(m))
	for name, text := range m {
		// Amounts beyond resizelet's bounds (and exponents too large to
		// parse) take the general way, which refuses them before
		// comparing.
		text = strings.TrimSpace(text)
		if CheckExponent(text) != nil {
			return nil, false
		}
		q, err := resource.ParseQuantity(text)
		if err != nil || !cgconfig.AmountFits(name, q) {
			return nil, false
		}
		out = append(out, amountSet{name: name, q: q})
	}
	return out, true
}

// editOfSets turns sets into the edit of old, or reports false when the
// strategic merge would do more than set amounts of containers old has:
// a name old does not have (it adds a container), names out of old's
// order or given twice (the merge follows the patch's order), or a list
// of old's with a name twice (the merge patches the first; the general
// path gives what it does, see TestDuplicateContainerNames).
func editOfSets(old *v1.Pod, cs, inits []containerSet, pod *containerSet) (resizeEdit, bool) {
	var e resizeEdit
	var ok bool
	if e.containers, ok = setEdits(old.Spec.Containers, cs); !ok {
		return e, false
	}
	if e.initContainers, ok = setEdits(old.Spec.InitContainers, inits); !ok {
		return e, false
	}
	if pod != nil {
		r := v1.ResourceRequirements{}
		if old.Spec.Resources != nil {
			r = *old.Spec.Resources
		}
		r = setRequirements(r, pod)
		e.podLevel, e.setPodLevel = &r, true
	}
	return e, true
}

func setEdits(list []v1.Container, sets []containerSet) ([]containerEdit, bool) {
	if len(sets) == 0 {
		return nil, true
	}
	for i := range list {
		for j := range i {
			if list[i].Name == list[j].Name {
				return nil, false
			}
		}
	}
	out := make([]containerEdit, 0, len(sets))
	last := -1
	for i := range sets {
		idx := containerIndex(list, sets[i].name)
		if idx <= last {
			return nil, false
		}
		last = idx
		c := &list[idx]
		out = append(out, containerEdit{index: idx, resources: setRequirements(c.Resources, &sets[i]), resizePolicy: c.ResizePolicy})
	}
	return out, true
}

// containerIndex is the index of the container named name, or -1.
func containerIndex(list []v1.Container, name string) int {
	for i := range list {
		if list[i].Name == name {
			return i
		}
	}
	return -1
}

// setRequirements returns rr with the amounts of s set: a list s sets is
// a new map (the old one is shared, never changed).
func setRequirements(rr v1.ResourceRequirements, s *containerSet) v1.ResourceRequirements {
	if s.setRequests {
		rr.Requests = setList(rr.Requests, s.requests)
	}
	if s.setLimits {
		rr.Limits = setList(rr.Limits, s.limits)
	}
	return rr
}

func setList(list v1.ResourceList, sets []amountSet) v1.ResourceList {
	out := make(v1.ResourceList, len(list)+len(sets))
	for name, q := range list {
		out[name] = q
	}
	for _, s := range sets {
		out[s.name] = s.q
	}
	return out
}

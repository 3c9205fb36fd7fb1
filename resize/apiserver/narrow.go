package apiserver

import (
	"bytes"
	"maps"
	"slices"
	"strconv"
	"strings"

	json "github.com/go-json-experiment/json"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// Most resize patches say nothing but new cpu and memory requests and
// limits of named containers:
//
//	{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"300m"}}}]}}
//
// narrowPatch is that form as a type: a patch that decodes strictly into
// it (no other field, no key twice, names matched case-sensitively, as
// the API server decodes) is read as an edit directly, without the JSON
// round trip of the pod and the strategic merge.
type narrowPatch struct {
	Spec struct {
		Containers     []narrowContainer `json:"containers,omitempty"`
		InitContainers []narrowContainer `json:"initContainers,omitempty"`
		Resources      *narrowResources  `json:"resources,omitempty"`
	} `json:"spec"`
}

// narrowContainer is a container of a narrowPatch.
type narrowContainer struct {
	Name      string          `json:"name"`
	Resources narrowResources `json:"resources"`
}

// narrowResources are the requests and limits of a narrowContainer.
type narrowResources struct {
	Requests *narrowAmounts `json:"requests,omitempty"`
	Limits   *narrowAmounts `json:"limits,omitempty"`
}

// narrowAmounts are the amounts of one list of narrowResources ("": none).
type narrowAmounts struct {
	CPU    string `json:"cpu,omitempty"`
	Memory string `json:"memory,omitempty"`
}

// amounts are the cpu and memory amounts a resize sets in one list.
type amounts struct {
	cpu, memory       resource.Quantity
	hasCPU, hasMemory bool
}

func (a *amounts) set() bool { return a.hasCPU || a.hasMemory }

// containerSet is what a resize sets on one container (or spec.resources).
type containerSet struct {
	name             string
	requests, limits amounts
}

// readNarrowPatch decodes a strategic merge patch of the narrow form into
// the sets of containers, init containers and the pod level, appended to
// buf (room on the caller's stack), or reports false for any other patch:
// another field or resource, a directive, a null (in a strategic merge it
// deletes), a number where a quantity string belongs, an empty list,
// object or string, a key given twice, a bad or too large quantity, YAML.
func readNarrowPatch(patch []byte, buf []containerSet) (cs, inits []containerSet, pod *containerSet, ok bool) {
	// A null, or a "$" (a directive; no valid name or amount has one), is
	// outside the form: such a patch, as kubectl apply's with its
	// "$setElementOrder", takes the general path undecoded.
	var np narrowPatch
	if bytes.Contains(patch, []byte("null")) || bytes.IndexByte(patch, '$') >= 0 || bytes.Contains(patch, []byte(`""`)) ||
		!decodeStrict(patch, &np) {
		return nil, nil, nil, false
	}
	s := &np.Spec
	cs, okCs := narrowSets(buf[:0], s.Containers)
	inits, okInits := narrowSets(cs[len(cs):len(cs):len(cs)], s.InitContainers)
	okPod := s.Resources == nil
	if !okPod {
		pod = new(containerSet)
		*pod, okPod = narrowSet("", s.Resources)
	}
	if !okCs || !okInits || !okPod || (s.Containers == nil && s.InitContainers == nil && s.Resources == nil) {
		return nil, nil, nil, false
	}
	return cs, inits, pod, true
}

// strictOptions make decodeStrict's decode strict: encoding/json/v2
// (github.com/go-json-experiment/json mirrors it for Go 1.26) already
// matches names case-sensitively and refuses a name given twice, and
// refuses invalid UTF-8 and anything after the value.
var strictOptions = json.RejectUnknownMembers(true)

// decodeStrict reports whether patch decodes into v without error. It
// takes no patch that kjson.UnmarshalStrict with both strict options (the
// API server's decoding) refuses, and decodes it to the same value; it
// refuses invalid UTF-8, which kjson would replace: such a patch takes the
// general path.
func decodeStrict(patch []byte, v any) bool {
	return json.Unmarshal(patch, v, strictOptions) == nil
}

// narrowSets turns a container list into sets; an empty list, or a
// container without a name, is not of the narrow form.
func narrowSets(out []containerSet, list []narrowContainer) ([]containerSet, bool) {
	if list != nil && len(list) == 0 {
		return nil, false
	}
	for i := range list {
		s, ok := narrowSet(list[i].Name, &list[i].Resources)
		if !ok || s.name == "" {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// narrowSet parses one container's quantities as the pod's decoder does.
func narrowSet(name string, r *narrowResources) (containerSet, bool) {
	s := containerSet{name: name}
	okReq := parseAmounts(r.Requests, &s.requests)
	okLim := parseAmounts(r.Limits, &s.limits)
	return s, okReq && okLim && (s.requests.set() || s.limits.set())
}

// parseAmounts parses n into a; an empty object is not of the form.
func parseAmounts(n *narrowAmounts, a *amounts) bool {
	if n == nil {
		return true
	}
	a.cpu, a.hasCPU = parseAmount(v1.ResourceCPU, n.CPU)
	a.memory, a.hasMemory = parseAmount(v1.ResourceMemory, n.Memory)
	return a.hasCPU == (n.CPU != "") && a.hasMemory == (n.Memory != "") && a.set()
}

// parseAmount parses a quantity string, trimmed as Quantity.UnmarshalJSON
// trims it. Amounts beyond resizelet's bounds (and exponents too large to
// parse) are not taken: the general path refuses them before comparing.
func parseAmount(name v1.ResourceName, text string) (resource.Quantity, bool) {
	text = strings.TrimSpace(text)
	if CheckExponent(text) != nil {
		return resource.Quantity{}, false
	}
	q, err := resource.ParseQuantity(text)
	return q, err == nil && cgconfig.AmountFits(name, q)
}

// editOfSets turns sets into the edit of old, appended to buf, or reports
// false when the strategic merge would do more than set amounts of old's
// containers: a name old does not have (it adds a container), names out
// of old's order or given twice (the merge follows the patch's order), or
// a list of old's with a name twice (TestDuplicateContainerNames).
func editOfSets(old *v1.Pod, cs, inits []containerSet, pod *containerSet, buf []containerEdit) (resizeEdit, bool) {
	var e resizeEdit
	var okC, okI bool
	e.containers, okC = setEdits(buf[:0], old.Spec.Containers, cs)
	n := len(e.containers)
	if e.initContainers, okI = setEdits(e.containers[n:n:n], old.Spec.InitContainers, inits); !okC || !okI {
		return e, false
	}
	if pod != nil {
		var r v1.ResourceRequirements
		if old.Spec.Resources != nil {
			r = *old.Spec.Resources
		}
		e.podLevel, e.setPodLevel = new(setRequirements(r, pod)), true
	}
	return e, true
}

// setEdits appends to out the edits of sets on list, as editOfSets.
func setEdits(out []containerEdit, list []v1.Container, sets []containerSet) ([]containerEdit, bool) {
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
	last := -1
	for i := range sets {
		idx := slices.IndexFunc(list, func(c v1.Container) bool { return c.Name == sets[i].name })
		if idx <= last {
			return nil, false
		}
		last = idx
		c := &list[idx]
		out = append(out, containerEdit{index: idx, resources: setRequirements(c.Resources, &sets[i]), resizePolicy: c.ResizePolicy})
	}
	return out, true
}

// setRequirements returns rr with the amounts of s set, in new maps.
func setRequirements(rr v1.ResourceRequirements, s *containerSet) v1.ResourceRequirements {
	if s.requests.set() {
		rr.Requests = setList(rr.Requests, &s.requests)
	}
	if s.limits.set() {
		rr.Limits = setList(rr.Limits, &s.limits)
	}
	return rr
}

// setList is setRequirements for one list, in a clone (copied, not rehashed).
func setList(list v1.ResourceList, a *amounts) v1.ResourceList {
	out := maps.Clone(list)
	if out == nil {
		out = make(v1.ResourceList, 2)
	}
	if a.hasCPU {
		out[v1.ResourceCPU] = a.cpu
	}
	if a.hasMemory {
		out[v1.ResourceMemory] = a.memory
	}
	return out
}

// The VPA updater's JSON patches are of a narrow form too, an "add" of
// each new amount at its place in the pod:
//
//	[{"op":"add","path":"/spec/containers/0/resources/requests/cpu","value":"300m"}]
type narrowOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value string `json:"value"`
}

// readNarrowJSONPatch reads a JSON patch of that form as the edit of old
// (editOfSets), or reports false for any other patch. Each operation adds
// a cpu or memory amount to a requests or limits list that a container of
// old (one of eight at most), by index, has: the json-patch library sets
// it, a later one winning. Anything else takes the general path: another
// operation, member or place, an index out of range or not plainly written
// (the library's Atoi takes "01" and "+1" too), a list old has not (the
// library refuses the add), a pod or container without a name (refused
// after the patch), a backslash (the library copies a value's JSON
// undecoded, which the quantity's decoding reads unescaped), or a bad or
// too large amount.
func readNarrowJSONPatch(old *v1.Pod, patch []byte, buf []containerEdit) (resizeEdit, bool) {
	var ops []narrowOp
	cs := old.Spec.Containers
	if old.Name == "" || len(cs) > 8 || bytes.IndexByte(patch, '\\') >= 0 || !decodeStrict(patch, &ops) || len(ops) == 0 || len(ops) > MaxJSONPatchOperations {
		return resizeEdit{}, false
	}
	var setsBuf [8]containerSet
	sets := setsBuf[:len(cs)]
	for _, op := range ops {
		p := strings.Split(op.Path, "/")
		if op.Op != "add" || len(p) != 7 || p[0] != "" || p[1] != "spec" || p[2] != "containers" || p[4] != "resources" {
			return resizeEdit{}, false
		}
		i, err := strconv.Atoi(p[3])
		if err != nil || p[3] != strconv.Itoa(i) || i < 0 || i >= len(cs) || cs[i].Name == "" {
			return resizeEdit{}, false
		}
		have, a := cs[i].Resources.Requests, &sets[i].requests
		if p[5] == "limits" {
			have, a = cs[i].Resources.Limits, &sets[i].limits
		}
		q, ok := parseAmount(v1.ResourceName(p[6]), op.Value)
		switch {
		case !ok || len(have) == 0 || (p[5] != "requests" && p[5] != "limits"):
			return resizeEdit{}, false
		case p[6] == "cpu":
			a.cpu, a.hasCPU = q, true
		case p[6] == "memory":
			a.memory, a.hasMemory = q, true
		default:
			return resizeEdit{}, false
		}
		sets[i].name = cs[i].Name
	}
	return editOfSets(old, slices.DeleteFunc(sets, func(s containerSet) bool { return s.name == "" }), nil, nil, buf)
}

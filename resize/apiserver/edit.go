package apiserver

import (
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/resizelet/resizelet/allocation/reslist"
)

// quantityEdit sets one resource in a requests or limits list.
type quantityEdit struct {
	name v1.ResourceName
	q    resource.Quantity
}

// containerEdit is what a resize sets on one container (or, for the pod
// level, on spec.resources): its requests and limits edits are the ranges
// [reqStart, reqEnd) and [limStart, limEnd) of podEdit.quantities, applied
// in order (a later edit of the same resource wins, as the later of two
// equal keys does in a JSON object).
type containerEdit struct {
	name               string
	reqStart, reqEnd   int
	limStart, limEnd   int
	hasReqs, hasLimits bool
}

// podEdit is a resize as edits, whichever way it came (a typed request or
// a strategic merge patch simple enough to read directly): the containers'
// and init containers' edits in request order, and the pod level's.
type podEdit struct {
	containers     []containerEdit
	initContainers []containerEdit
	podLevel       *containerEdit
	quantities     []quantityEdit
}

// requests returns the request edits of e.
func (p *podEdit) requests(e *containerEdit) []quantityEdit { return p.quantities[e.reqStart:e.reqEnd] }

// limits returns the limit edits of e.
func (p *podEdit) limits(e *containerEdit) []quantityEdit { return p.quantities[e.limStart:e.limEnd] }

// editOfRequest turns a typed request into edits, with the quantities its
// patch's strings would parse to. The edits are appended to quantities and
// containers (empty slices whose room the caller provides, on its stack for
// a typical request, so that the edits cost no allocation); a request that
// needs more room than they have gets new arrays.
func editOfRequest(req *ResizeRequest, quantities []quantityEdit, containers []containerEdit) podEdit {
	n := 0
	count := func(cs []ContainerResize) {
		for i := range cs {
			n += amountsLen(cs[i].Requests) + amountsLen(cs[i].Limits)
		}
	}
	count(req.Containers)
	count(req.InitContainers)
	if req.PodLevel != nil {
		n += amountsLen(req.PodLevel.Requests) + amountsLen(req.PodLevel.Limits)
	}
	// The edits are built in local slices, not through a *podEdit: an
	// append stored through a pointer would move the caller's room to
	// the heap.
	qs := slices.Grow(quantities[:0], n)
	var e podEdit
	if k := len(req.Containers) + len(req.InitContainers); k > 0 {
		all := slices.Grow(containers[:0], k)
		var ce containerEdit
		for i := range req.Containers {
			ce, qs = addResize(qs, &req.Containers[i])
			all = append(all, ce)
		}
		e.containers = all[:len(req.Containers):len(req.Containers)]
		for i := range req.InitContainers {
			ce, qs = addResize(qs, &req.InitContainers[i])
			all = append(all, ce)
		}
		e.initContainers = all[len(req.Containers):]
	}
	if req.PodLevel != nil {
		var pl containerEdit
		pl, qs = addResize(qs, req.PodLevel)
		e.podLevel = &pl
	}
	e.quantities = qs
	return e
}

func amountsLen(a Amounts) int {
	n := 0
	if a.HasCPU {
		n++
	}
	if a.HasMemory {
		n++
	}
	return n
}

// addResize appends the quantities of one container's resize to qs, and
// returns its edit (whose ranges index qs) and qs.
func addResize(qs []quantityEdit, c *ContainerResize) (containerEdit, []quantityEdit) {
	e := containerEdit{name: c.Name}
	e.reqStart = len(qs)
	qs = appendAmounts(qs, c.Requests)
	e.reqEnd = len(qs)
	e.limStart = e.reqEnd
	qs = appendAmounts(qs, c.Limits)
	e.limEnd = len(qs)
	e.hasReqs = e.reqEnd > e.reqStart
	e.hasLimits = e.limEnd > e.limStart
	return e, qs
}

func appendAmounts(qs []quantityEdit, a Amounts) []quantityEdit {
	if a.HasCPU {
		qs = append(qs, quantityEdit{name: v1.ResourceCPU, q: cpuQuantity(a.MilliCPU)})
	}
	if a.HasMemory {
		qs = append(qs, quantityEdit{name: v1.ResourceMemory, q: memoryQuantity(a.Memory)})
	}
	return qs
}

// inPlace reports whether the edits name only containers the list has, in
// the list's order (each name at its first appearance): then the strategic
// merge keeps the list's order and adds nothing, and the edits can be
// applied in place. Anything else (a new name, a new order) goes the
// general way, for validation to refuse.
func inPlace(list []v1.Container, edits []containerEdit) bool {
	last := -1
	for i := range edits {
		idx := containerIndex(list, edits[i].name)
		if idx < 0 {
			return false
		}
		if idx < last && !seenBefore(edits[:i], edits[i].name) {
			return false
		}
		if idx > last {
			last = idx
		}
	}
	return true
}

func containerIndex(list []v1.Container, name string) int {
	for i := range list {
		if list[i].Name == name {
			return i
		}
	}
	return -1
}

func seenBefore(edits []containerEdit, name string) bool {
	for i := range edits {
		if edits[i].name == name {
			return true
		}
	}
	return false
}

// editedRequirements returns rr with the edits applied: a list the edit
// touches is a new map (the old one is shared, never changed), a list it
// does not touch stays the old map.
func editedRequirements(rr v1.ResourceRequirements, p *podEdit, e *containerEdit) v1.ResourceRequirements {
	if e.hasReqs {
		rr.Requests = editedList(rr.Requests, p.requests(e))
	}
	if e.hasLimits {
		rr.Limits = editedList(rr.Limits, p.limits(e))
	}
	return rr
}

func editedList(list v1.ResourceList, edits []quantityEdit) v1.ResourceList {
	if cm, only := reslist.CPUMemoryOf(list); only && editCPUMemory(&cm, edits) {
		// The list and the edits hold nothing but cpu and memory: the new
		// list gets each one's final amount, inserted once.
		out := make(v1.ResourceList, cm.Len())
		if cm.HasCPU {
			out[v1.ResourceCPU] = cm.CPU
		}
		if cm.HasMemory {
			out[v1.ResourceMemory] = cm.Memory
		}
		return out
	}
	out := make(v1.ResourceList, len(list)+len(edits))
	for name, q := range list {
		out[name] = q
	}
	for i := range edits {
		out[edits[i].name] = edits[i].q
	}
	return out
}

// serialForm reports whether q keeps its format through JSON: the API
// server only holds quantities it decoded, and a quantity decodes with the
// format its printed form says. DecimalSI always does. BinarySI does only
// when it prints with a binary suffix, as a non-zero whole multiple of 1Ki:
// otherwise it prints as a plain number ("402653000") that decodes as
// DecimalSI, and then prints differently ("402653k"). DecimalExponent is
// taken as not keeping it (its plain numbers decode as DecimalSI).
func serialForm(q *resource.Quantity) bool {
	switch q.Format {
	case resource.DecimalSI:
		return true
	case resource.BinarySI:
		v, ok := q.AsInt64()
		return ok && v != 0 && v%1024 == 0
	}
	return false
}

// listInSerialForm reports whether every quantity of list is in serial
// form.
func listInSerialForm(list v1.ResourceList) bool {
	if cm, only := reslist.CPUMemoryOf(list); only {
		return (!cm.HasCPU || serialForm(&cm.CPU)) && (!cm.HasMemory || serialForm(&cm.Memory))
	}
	return listInSerialFormWalk(list)
}

// listInSerialFormWalk is listInSerialForm for any list, by a walk.
func listInSerialFormWalk(list v1.ResourceList) bool {
	for _, q := range list {
		if !serialForm(&q) {
			return false
		}
	}
	return true
}

// serialized returns list as JSON would give it back: list itself when
// every quantity is in serial form, else a copy with each quantity parsed
// from its printed form.
func serialized(list v1.ResourceList) v1.ResourceList {
	if listInSerialForm(list) {
		return list
	}
	out := make(v1.ResourceList, len(list))
	for name, q := range list {
		if serialForm(&q) {
			out[name] = q
			continue
		}
		parsed, err := resource.ParseQuantity(q.String())
		if err != nil {
			// A printed quantity always parses; keep it if not.
			parsed = q
		}
		out[name] = parsed
	}
	return out
}

// serializedRequirements is serialized for both lists of rr.
func serializedRequirements(rr v1.ResourceRequirements) v1.ResourceRequirements {
	rr.Requests = serialized(rr.Requests)
	rr.Limits = serialized(rr.Limits)
	return rr
}

// resizeInPlace is the resize subresource for edits that inPlace accepts,
// without JSON: what the strategic merge patch, the decoding, v1
// defaulting, the resize strategy and the validation give, built from old
// directly. The new pod shares with old (a defaulted copy of it, if old
// needs defaulting) everything the resize does not change; neither is
// changed in place.
func resizeInPlace(old *v1.Pod, e *podEdit, opts ResizeOptions) (*v1.Pod, error) {
	oldPod := old
	if needsDefaulting(old) {
		oldPod = old.DeepCopy()
		DefaultPod(oldPod)
		// Validation compares against the defaulted copy, which is not
		// what was stored.
		opts.oldStored = false
	}
	newPod := new(v1.Pod)
	*newPod = *oldPod
	// The patched pod came through JSON, and the strategy takes every
	// container's resources from it: they are in serial form there.
	var changed bool
	newPod.Spec.Containers, changed = resizedContainers(oldPod.Spec.Containers, e, e.containers)
	var initChanged bool
	newPod.Spec.InitContainers, initChanged = resizedContainers(oldPod.Spec.InitContainers, e, e.initContainers)
	changed = changed || initChanged
	// The strategy keeps spec.resources from the patched pod only when
	// pod-level resize is on; the patched pod's are defaulted first.
	if opts.profile().PodLevelResize() {
		if r := oldPod.Spec.Resources; r != nil || e.podLevel != nil {
			nr := &v1.ResourceRequirements{}
			if r != nil {
				*nr = serializedRequirements(*r)
			}
			if e.podLevel != nil {
				*nr = editedRequirements(*nr, e, e.podLevel)
			}
			newPod.Spec.Resources = nr
			if len(nr.Limits) > 0 {
				// Defaulting may add requests: to a copy of the map.
				nr.Requests = maps.Clone(nr.Requests)
				defaultPodLevelRequests(newPod)
			}
			if !podResourcesEqual(nr, r) {
				changed = true
			}
		}
	}
	if r := newPod.Spec.Resources; r != nil && opts.profile().DefaultsPodLevelResources() {
		// The 1.37 resize strategy defaults pod-level resources again
		// (finishResize says more).
		nr := r.DeepCopy()
		newPod.Spec.Resources = nr
		defaultPodLevelResources(newPod)
		if !podResourcesEqual(nr, oldPod.Spec.Resources) {
			changed = true
		}
	}
	if changed {
		newPod.Generation = oldPod.Generation + 1
	}
	if errs := ValidateResize(newPod, oldPod, opts); len(errs) > 0 {
		return nil, &InvalidError{Name: oldPod.Name, Errs: errs}
	}
	return newPod, nil
}

// needsDefaulting reports whether DefaultPod could change the pod: no
// namespace, a container limit without its request, or pod-level limits
// (whose requests defaulting may fill in).
func needsDefaulting(p *v1.Pod) bool {
	if p.Namespace == "" {
		return true
	}
	if r := p.Spec.Resources; r != nil && len(r.Limits) > 0 {
		return true
	}
	return limitsWithoutRequests(p.Spec.Containers) || limitsWithoutRequests(p.Spec.InitContainers)
}

func limitsWithoutRequests(list []v1.Container) bool {
	for i := range list {
		if limitWithoutRequest(&list[i].Resources) {
			return true
		}
	}
	return false
}

// limitWithoutRequest reports whether rr has a limit without its request.
func limitWithoutRequest(rr *v1.ResourceRequirements) bool {
	if hasCPU, hasMemory, only := reslist.CPUMemoryKeys(rr.Limits); only {
		return hasCPU && !hasResource(rr.Requests, v1.ResourceCPU) ||
			hasMemory && !hasResource(rr.Requests, v1.ResourceMemory)
	}
	return limitWithoutRequestWalk(rr)
}

// limitWithoutRequestWalk is limitWithoutRequest for any lists, by a
// walk of the limits.
func limitWithoutRequestWalk(rr *v1.ResourceRequirements) bool {
	for name := range rr.Limits {
		if _, ok := rr.Requests[name]; !ok {
			return true
		}
	}
	return false
}

// resizedContainers returns list with the edits applied and each
// container's resources in serial form, and whether a container's
// resources changed. list itself comes back when there is nothing to do;
// otherwise a new list whose containers share everything but the edited
// lists with list's.
func resizedContainers(list []v1.Container, p *podEdit, edits []containerEdit) ([]v1.Container, bool) {
	serial := true
	for i := range list {
		if !listInSerialForm(list[i].Resources.Requests) || !listInSerialForm(list[i].Resources.Limits) {
			serial = false
			break
		}
	}
	if len(edits) == 0 && serial {
		return list, false
	}
	out := make([]v1.Container, len(list))
	copy(out, list)
	if !serial {
		for i := range out {
			out[i].Resources = serializedRequirements(out[i].Resources)
		}
	}
	for i := range edits {
		idx := containerIndex(out, edits[i].name)
		out[idx].Resources = editedRequirements(out[idx].Resources, p, &edits[i])
	}
	// Defaulting comes after the whole patch, once per container.
	changed := false
	for i := range edits {
		idx := containerIndex(out, edits[i].name)
		out[idx].Resources = defaultedRequests(out[idx].Resources)
		if !requirementsEqual(&out[idx].Resources, &list[idx].Resources) {
			changed = true
		}
	}
	return out, changed
}

// defaultedRequests is defaultRequestsFromLimits without changing rr's
// maps: a request list to which a limit adds a request is a new one.
func defaultedRequests(rr v1.ResourceRequirements) v1.ResourceRequirements {
	if !limitWithoutRequest(&rr) {
		return rr
	}
	rr.Requests = maps.Clone(rr.Requests)
	defaultRequestsFromLimits(&rr)
	return rr
}

package apiserver

import (
	"iter"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/resizelet/resizelet/allocation/reslist"
)

// resizeEdit is a resize as one typed edit of a pod, whichever way it came:
// the new resources and resizePolicy of containers (by index in the old
// pod) and pod-level resources, exactly what /resize may change (the
// resize strategy's dropNonResizeUpdates).
type resizeEdit struct {
	containers     []containerEdit
	initContainers []containerEdit
	// podLevel is the new spec.resources when setPodLevel is true (nil
	// then removes them, which validation refuses).
	podLevel    *v1.ResourceRequirements
	setPodLevel bool
	// patched, when set, is a patched pod whose containers are not the
	// old pod's, in its order: the strategy keeps it whole, for validation
	// to refuse.
	patched *v1.Pod
}

// containerEdit is the new resources and resizePolicy of a container.
type containerEdit struct {
	index        int
	resources    v1.ResourceRequirements
	resizePolicy []v1.ContainerResizePolicy
}

// editOfPatched is the edit a patched pod stands for: every container's
// resources and resizePolicy, and spec.resources, as the resize strategy
// takes them from it.
func editOfPatched(patched, old *v1.Pod) resizeEdit {
	if !sameNames(patched.Spec.Containers, old.Spec.Containers) || !sameNames(patched.Spec.InitContainers, old.Spec.InitContainers) {
		return resizeEdit{patched: patched}
	}
	all := func(list []v1.Container) []containerEdit {
		out := make([]containerEdit, len(list))
		for i := range list {
			out[i] = containerEdit{index: i, resources: list[i].Resources, resizePolicy: list[i].ResizePolicy}
		}
		return out
	}
	return resizeEdit{
		containers:     all(patched.Spec.Containers),
		initContainers: all(patched.Spec.InitContainers),
		podLevel:       patched.Spec.Resources,
		setPodLevel:    true,
	}
}

// sameNames reports whether two container lists have the same names.
func sameNames(a, b []v1.Container) bool {
	return slices.EqualFunc(a, b, func(x, y v1.Container) bool { return x.Name == y.Name })
}

// applyEdit is the resize subresource once the patch is read, where every
// path ends: the edit applied to old defaulted, v1 defaulting of what
// changed, the strategy's pod-level defaulting (1.37), ValidateResize and
// the generation. The new pod shares with old what the edit does not
// change; neither is changed in place.
func applyEdit(old *v1.Pod, e *resizeEdit, opts ResizeOptions) (*v1.Pod, error) {
	opts.resolved = new(opts.profile()) // worked out once, not by each step
	oldPod := defaulted(old)
	newPod := editedPod(oldPod, e, opts)
	if errs := validateResize(newPod, oldPod, opts, e.patched == nil); len(errs) > 0 {
		return nil, &InvalidError{Name: oldPod.Name, Errs: errs}
	}
	// The generation is compared after validation, which refuses the
	// amounts whose comparison could take minutes (ValidatePod says more)
	// and reads nothing the generation changes.
	if specChanged(newPod, oldPod, e) {
		newPod.Generation = oldPod.Generation + 1
	}
	return newPod, nil
}

// editedPod builds the new pod of an edit.
func editedPod(oldPod *v1.Pod, e *resizeEdit, opts ResizeOptions) *v1.Pod {
	p := opts.profile()
	newPod := new(v1.Pod)
	if e.patched != nil {
		*newPod = *e.patched
		if len(newPod.Spec.Containers) == len(oldPod.Spec.Containers) && len(newPod.Spec.InitContainers) == len(oldPod.Spec.InitContainers) {
			// Renamed or reordered, not added or removed: the strategy
			// keeps the old spec but for the container lists, and for
			// spec.resources while their resize is on (dropNonResizeUpdates).
			newPod.Spec = oldPod.Spec
			newPod.Spec.Containers, newPod.Spec.InitContainers = e.patched.Spec.Containers, e.patched.Spec.InitContainers
			if p.PodLevelResize() {
				newPod.Spec.Resources = e.patched.Spec.Resources
			}
		}
		DefaultPod(newPod)
	} else {
		*newPod = *oldPod
		newPod.Spec.Containers = editedContainers(oldPod.Spec.Containers, e.containers)
		newPod.Spec.InitContainers = editedContainers(oldPod.Spec.InitContainers, e.initContainers)
		if p.PodLevelResize() {
			// The strategy takes spec.resources from the patched pod, which
			// came through JSON and v1 defaulting.
			r := oldPod.Spec.Resources
			if e.setPodLevel {
				r = e.podLevel
			}
			newPod.Spec.Resources = nil
			if r != nil {
				newPod.Spec.Resources = &v1.ResourceRequirements{Requests: serialized(r.Requests), Limits: serialized(r.Limits), Claims: r.Claims}
				if len(r.Limits) > 0 {
					newPod.Spec.Resources.Requests = maps.Clone(newPod.Spec.Resources.Requests)
					defaultPodLevelRequests(newPod)
				}
			}
		}
	}
	if p.DefaultsPodLevelResources() {
		// The 1.37 resize strategy's PrepareForUpdate: a patch that drops
		// spec.resources keeps the old ones, and pod-level resources are
		// defaulted again.
		if newPod.Spec.Resources == nil {
			newPod.Spec.Resources = oldPod.Spec.Resources
		}
		if newPod.Spec.Resources != nil {
			newPod.Spec.Resources = newPod.Spec.Resources.DeepCopy()
			defaultPodLevelResources(newPod)
		}
	}
	return newPod
}

// specChanged reports whether the edited pod's spec differs from the old
// pod's: in what the edit changes, or anywhere for a pod taken whole.
func specChanged(newPod, oldPod *v1.Pod, e *resizeEdit) bool {
	if e.patched != nil {
		return !apiequality.Semantic.DeepEqual(newPod.Spec, oldPod.Spec)
	}
	return containersChanged(newPod.Spec.Containers, oldPod.Spec.Containers, e.containers) ||
		containersChanged(newPod.Spec.InitContainers, oldPod.Spec.InitContainers, e.initContainers) ||
		!podResourcesEqual(newPod.Spec.Resources, oldPod.Spec.Resources)
}

// containersChanged reports whether an edited container differs from old's
// (the others keep old's amounts, at most re-parsed).
func containersChanged(list, old []v1.Container, edits []containerEdit) bool {
	return slices.ContainsFunc(edits, func(e containerEdit) bool { return !containersEqual(&list[e.index], &old[e.index], true) })
}

// editedContainers returns list with the edits (in their indexes' order)
// applied, requests defaulted, and every container's resources as they
// come back from JSON (the strategy takes them all from the patched pod):
// list itself when that changes nothing.
func editedContainers(list []v1.Container, edits []containerEdit) []v1.Container {
	if len(edits) == 0 && !slices.ContainsFunc(list, func(c v1.Container) bool {
		return !listInSerialForm(c.Resources.Requests) || !listInSerialForm(c.Resources.Limits)
	}) {
		return list
	}
	out := slices.Clone(list)
	for i := range out {
		if len(edits) > 0 && edits[0].index == i {
			out[i].Resources = defaultedRequests(serializedRequirements(edits[0].resources))
			out[i].ResizePolicy = edits[0].resizePolicy
			edits = edits[1:]
		} else {
			out[i].Resources = serializedRequirements(out[i].Resources)
		}
	}
	return out
}

// serialForm reports whether q keeps its format through JSON: the API
// server only holds quantities it decoded, in the format their printed
// form says. BinarySI keeps it only for a non-zero multiple of 1Ki, which
// prints with a binary suffix: otherwise it prints as a plain number
// ("402653000") that decodes as DecimalSI and prints differently
// ("402653k"). DecimalExponent's plain numbers decode as DecimalSI too.
func serialForm(q *resource.Quantity) bool {
	if r := *q; !r.RoundUp(resource.Milli) {
		// Finer than a thousandth, which v1 defaulting rounds up.
		return false
	}
	switch q.Format {
	case resource.DecimalSI:
		return true
	case resource.BinarySI:
		v, ok := q.AsInt64()
		return ok && v != 0 && v%1024 == 0
	}
	return false
}

// listInSerialForm reports whether every quantity of list keeps its form.
func listInSerialForm(list v1.ResourceList) bool {
	for _, q := range resources(list) {
		if !serialForm(&q) {
			return false
		}
	}
	return true
}

// serialized returns list as JSON would give it back: list itself, or a
// copy with each quantity parsed from its printed form.
func serialized(list v1.ResourceList) v1.ResourceList {
	if listInSerialForm(list) {
		return list
	}
	out := make(v1.ResourceList, len(list))
	for name, q := range list {
		if !serialForm(&q) {
			// A printed quantity always parses.
			q = resource.MustParse(q.String())
			q.RoundUp(resource.Milli)
		}
		out[name] = q
	}
	return out
}

// serializedRequirements is serialized for both lists of rr.
func serializedRequirements(rr v1.ResourceRequirements) v1.ResourceRequirements {
	rr.Requests = serialized(rr.Requests)
	rr.Limits = serialized(rr.Limits)
	return rr
}

// defaulted is old, or a defaulted copy when DefaultPod would change it.
func defaulted(old *v1.Pod) *v1.Pod {
	if !needsDefaulting(old) {
		return old
	}
	p := old.DeepCopy()
	DefaultPod(p)
	return p
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
	lacks := func(c v1.Container) bool { return limitWithoutRequest(&c.Resources) }
	return slices.ContainsFunc(p.Spec.Containers, lacks) || slices.ContainsFunc(p.Spec.InitContainers, lacks)
}

// limitWithoutRequest reports whether rr has a limit without its request.
func limitWithoutRequest(rr *v1.ResourceRequirements) bool {
	for name := range resources(rr.Limits) {
		if _, ok := rr.Requests[name]; !ok {
			return true
		}
	}
	return false
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

// resources yields the resources of list with their amounts, as every walk
// of a resource list here does. A list of cpu, memory or both, as almost
// all are, is read with two lookups (reslist.CPUMemoryOf), in name order,
// cheaper than ranging over a map (its iterator's random seed); any other
// is ranged over, in no order (TestResourcesYieldsTheList).
func resources(list v1.ResourceList) iter.Seq2[v1.ResourceName, resource.Quantity] {
	return func(yield func(v1.ResourceName, resource.Quantity) bool) {
		cm, only := reslist.CPUMemoryOf(list)
		if !only {
			for name, q := range list {
				if !yield(name, q) {
					return
				}
			}
			return
		}
		if cm.HasCPU && !yield(v1.ResourceCPU, cm.CPU) {
			return
		}
		if cm.HasMemory {
			yield(v1.ResourceMemory, cm.Memory)
		}
	}
}

// onlyCPUMemory reports whether list holds nothing but cpu and memory.
func onlyCPUMemory(list v1.ResourceList) bool {
	_, _, only := reslist.CPUMemoryKeys(list)
	return only
}

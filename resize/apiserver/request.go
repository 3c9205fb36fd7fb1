package apiserver

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Amounts are cpu and memory amounts for a typed resize: millicores and
// bytes. An amount whose Has flag is false is left as it is.
type Amounts struct {
	MilliCPU  int64
	Memory    int64
	HasCPU    bool
	HasMemory bool
}

// CPUMemory is both amounts set.
func CPUMemory(milliCPU, memory int64) Amounts {
	return Amounts{MilliCPU: milliCPU, Memory: memory, HasCPU: true, HasMemory: true}
}

// ContainerResize is the new requests and limits of one container, named.
type ContainerResize struct {
	Name     string
	Requests Amounts
	Limits   Amounts
}

// ResizeRequest is a resize without JSON: what a strategic merge patch of
// the containers' (and init containers', and the pod-level) cpu and memory
// requests and limits would say, as numbers. It means exactly the patch
// that sets each given amount under its container, matched by name (a name
// the pod does not have adds a container, which validation refuses), with
// cpu written in millicores ("300m") and memory in bytes with binary
// suffixes where exact ("192Mi"), as resource.Quantity prints them.
type ResizeRequest struct {
	Containers     []ContainerResize
	InitContainers []ContainerResize
	// PodLevel, when set, resizes spec.resources.
	PodLevel *ContainerResize
}

// Patch returns the strategic merge patch the request means, for logs and
// for the differential tests that hold the two paths equal.
func (r ResizeRequest) Patch() []byte {
	var b []byte
	b = append(b, `{"spec":{`...)
	sep := false
	list := func(key string, cs []ContainerResize) {
		if len(cs) == 0 {
			return
		}
		if sep {
			b = append(b, ',')
		}
		sep = true
		b = append(b, `"`+key+`":[`...)
		for i, c := range cs {
			if i > 0 {
				b = append(b, ',')
			}
			b = fmt.Appendf(b, `{"name":%q,"resources":`, c.Name)
			b = appendResources(b, c)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	list("containers", r.Containers)
	list("initContainers", r.InitContainers)
	if r.PodLevel != nil {
		if sep {
			b = append(b, ',')
		}
		b = append(b, `"resources":`...)
		b = appendResources(b, *r.PodLevel)
	}
	return append(b, "}}"...)
}

func appendResources(b []byte, c ContainerResize) []byte {
	b = append(b, '{')
	side := func(key string, a Amounts, comma bool) bool {
		if !a.HasCPU && !a.HasMemory {
			return comma
		}
		if comma {
			b = append(b, ',')
		}
		b = append(b, `"`+key+`":{`...)
		if a.HasCPU {
			q := cpuQuantity(a.MilliCPU)
			b = fmt.Appendf(b, `"cpu":%q`, q.String())
		}
		if a.HasMemory {
			if a.HasCPU {
				b = append(b, ',')
			}
			q := resource.NewQuantity(a.Memory, resource.BinarySI)
			b = fmt.Appendf(b, `"memory":%q`, q.String())
		}
		b = append(b, '}')
		return true
	}
	comma := side("requests", c.Requests, false)
	side("limits", c.Limits, comma)
	return append(b, '}')
}

func cpuQuantity(milli int64) resource.Quantity {
	return *resource.NewMilliQuantity(milli, resource.DecimalSI)
}

// memoryQuantity is the quantity a JSON patch's memory string would
// parse to: the string is the BinarySI form, which has a binary suffix
// only for a non-zero multiple of 1Ki (Quantity.CanonicalizeBytes); a
// string without a suffix parses as DecimalSI.
func memoryQuantity(bytes int64) resource.Quantity {
	if bytes != 0 && bytes%1024 == 0 {
		return *resource.NewQuantity(bytes, resource.BinarySI)
	}
	return *resource.NewQuantity(bytes, resource.DecimalSI)
}

// ApplyResizeRequest is ApplyResize for a typed request: the same
// defaulting, strategy, generation and validation, with the request
// applied to the pod directly instead of through JSON. It gives the pod
// and the errors ApplyResize gives for req.Patch(); old is never modified.
func ApplyResizeRequest(old *v1.Pod, req ResizeRequest, opts ResizeOptions) (*v1.Pod, error) {
	if old == nil {
		return nil, errors.New("apply resize: nil pod")
	}
	oldPod := old.DeepCopy()
	DefaultPod(oldPod)
	patched := oldPod.DeepCopy()
	patched.Spec.Containers = applyContainers(patched.Spec.Containers, req.Containers)
	patched.Spec.InitContainers = applyContainers(patched.Spec.InitContainers, req.InitContainers)
	if req.PodLevel != nil {
		if patched.Spec.Resources == nil {
			patched.Spec.Resources = &v1.ResourceRequirements{}
		}
		setAmounts(patched.Spec.Resources, *req.PodLevel)
	}
	return finishResize(oldPod, patched, opts)
}

// applyContainers merges the resizes into a container list by name, as
// the strategic merge of a list with merge key "name" does
// (strategicpatch mergeSlice): each resize is merged into the container of
// its name, or appended as a new container; then the containers the
// request names come in the request's order, the others in their old
// order, and the two are interleaved as normalizeElementOrder does: a
// container the request does not name keeps its place before a named one
// only when both were there before and it came first.
func applyContainers(list []v1.Container, resizes []ContainerResize) []v1.Container {
	if len(resizes) == 0 {
		return list
	}
	original := make([]string, len(list))
	for i := range list {
		original[i] = list[i].Name
	}
	merged := list
	for _, r := range resizes {
		i := 0
		for i < len(merged) && merged[i].Name != r.Name {
			i++
		}
		if i == len(merged) {
			merged = append(merged, v1.Container{Name: r.Name})
		}
		setAmounts(&merged[i].Resources, r)
	}
	// The request's order: each name at its first appearance.
	order := func(name string) int {
		for i, r := range resizes {
			if r.Name == name {
				return i
			}
		}
		return -1
	}
	var named, others []v1.Container
	for _, c := range merged {
		if order(c.Name) >= 0 {
			named = append(named, c)
		} else {
			others = append(others, c)
		}
	}
	sort.SliceStable(named, func(i, j int) bool { return order(named[i].Name) < order(named[j].Name) })
	before := func(name string) int { return slices.Index(original, name) }
	out := make([]v1.Container, 0, len(merged))
	for i, j := 0, 0; i < len(others) || j < len(named); {
		switch {
		case j >= len(named):
			out = append(out, others[i])
			i++
		case i >= len(others):
			out = append(out, named[j])
			j++
		default:
			if li, ri := before(others[i].Name), before(named[j].Name); li >= 0 && ri >= 0 && li < ri {
				out = append(out, others[i])
				i++
			} else {
				out = append(out, named[j])
				j++
			}
		}
	}
	return out
}

// setAmounts sets the request's amounts in requirements.
func setAmounts(rr *v1.ResourceRequirements, r ContainerResize) {
	set := func(list *v1.ResourceList, a Amounts) {
		if !a.HasCPU && !a.HasMemory {
			return
		}
		if *list == nil {
			*list = v1.ResourceList{}
		}
		if a.HasCPU {
			(*list)[v1.ResourceCPU] = cpuQuantity(a.MilliCPU)
		}
		if a.HasMemory {
			(*list)[v1.ResourceMemory] = memoryQuantity(a.Memory)
		}
	}
	set(&rr.Requests, r.Requests)
	set(&rr.Limits, r.Limits)
}

package apiserver

import (
	"encoding/json"
	"errors"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Amounts are cpu and memory amounts for a typed resize, in millicores and
// bytes; one whose Has flag is false is left as it is.
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

// ResizeRequest is a resize without JSON: it means exactly the strategic
// merge patch (Patch) that sets each given cpu and memory amount under its
// container, matched by name (a name the pod does not have adds a
// container, which validation refuses), or under spec.resources.
type ResizeRequest struct {
	Containers     []ContainerResize
	InitContainers []ContainerResize
	// PodLevel, when set, resizes spec.resources.
	PodLevel *ContainerResize
}

// Patch returns the strategic merge patch the request means, in the narrow
// form (narrowPatch), for logs and the tests that hold the paths equal.
func (r ResizeRequest) Patch() []byte {
	var p narrowPatch
	list := func(cs []ContainerResize) []narrowContainer {
		var out []narrowContainer
		for _, c := range cs {
			out = append(out, narrowContainer{Name: c.Name, Resources: patchResources(c)})
		}
		return out
	}
	p.Spec.Containers, p.Spec.InitContainers = list(r.Containers), list(r.InitContainers)
	if r.PodLevel != nil {
		p.Spec.Resources = new(patchResources(*r.PodLevel))
	}
	b, err := json.Marshal(p)
	if err != nil {
		panic("apiserver: a resize request does not marshal: " + err.Error())
	}
	return b
}

// patchResources writes a container's amounts as a patch's strings, as
// resource.Quantity prints them: cpu in millicores ("300m"), memory in
// bytes with binary suffixes where exact ("192Mi").
func patchResources(c ContainerResize) narrowResources {
	amounts := func(a Amounts) *narrowAmounts {
		if !a.HasCPU && !a.HasMemory {
			return nil
		}
		out := &narrowAmounts{}
		if a.HasCPU {
			out.CPU = resource.NewMilliQuantity(a.MilliCPU, resource.DecimalSI).String()
		}
		if a.HasMemory {
			out.Memory = resource.NewQuantity(a.Memory, resource.BinarySI).String()
		}
		return out
	}
	return narrowResources{Requests: amounts(c.Requests), Limits: amounts(c.Limits)}
}

// memoryQuantity is the quantity the patch's memory string parses to: the
// BinarySI form has a binary suffix only for a non-zero multiple of 1Ki
// (Quantity.CanonicalizeBytes), and one without parses as DecimalSI.
func memoryQuantity(bytes int64) resource.Quantity {
	if bytes != 0 && bytes%1024 == 0 {
		return *resource.NewQuantity(bytes, resource.BinarySI)
	}
	return *resource.NewQuantity(bytes, resource.DecimalSI)
}

// ApplyResizeRequest is ApplyResize for a typed request, made the edit
// without JSON: it gives what ApplyResize gives for req.Patch(), through
// which a request that names a container old does not have, or out of
// old's order, goes (the strategic merge then adds or reorders
// containers). old is never modified; the pod is shared as ApplyResize's.
func ApplyResizeRequest(old *v1.Pod, req ResizeRequest, opts ResizeOptions) (*v1.Pod, error) {
	if old == nil {
		return nil, errors.New("apply resize: nil pod")
	}
	var pod *containerSet
	if req.PodLevel != nil {
		pod = new(requestSet(req.PodLevel))
	}
	// Room for the sets of a typical request on the stack.
	var buf [4]containerSet
	cs := requestSets(buf[:0], req.Containers)
	inits := requestSets(cs[len(cs):len(cs):len(cs)], req.InitContainers)
	var edits [4]containerEdit
	if e, ok := editOfSets(old, cs, inits, pod, edits[:0]); ok {
		return applyEdit(old, &e, opts)
	}
	return ApplyResize(old, req.Patch(), opts)
}

// requestSets appends the sets of each container's resize to out.
func requestSets(out []containerSet, cs []ContainerResize) []containerSet {
	for i := range cs {
		out = append(out, requestSet(&cs[i]))
	}
	return out
}

// requestSet is one container's set, as its patch's strings parse.
func requestSet(c *ContainerResize) containerSet {
	return containerSet{name: c.Name, requests: requestAmounts(c.Requests), limits: requestAmounts(c.Limits)}
}

// requestAmounts is requestSet for one list.
func requestAmounts(a Amounts) amounts {
	out := amounts{hasCPU: a.HasCPU, hasMemory: a.HasMemory}
	if a.HasCPU {
		out.cpu = *resource.NewMilliQuantity(a.MilliCPU, resource.DecimalSI)
	}
	if a.HasMemory {
		out.memory = memoryQuantity(a.Memory)
	}
	return out
}

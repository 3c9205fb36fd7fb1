package allocation

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/resize/profile"
)

// Usage is what pods on a node take, as the predicate admission handler
// counts them: the sum of their effective requests in the scheduler's
// units (each pod at max(spec, status resources, allocated resources) per
// container, see PodUsage) and how many pods there are. The zero value is
// an empty node.
//
// A Usage can be kept up to date as pods come, change and go (Add, Sub), so
// that a decision does not walk the pods; UsageOf is the walk, which the
// tests keep as the oracle of the incremental sum.
type Usage struct {
	req  resVec
	Pods int64
}

// noUsage is what a nil *Usage reads as: nothing used. It is only read.
var noUsage Usage

// read returns u, or noUsage for a nil u, so that a nil *Usage reads as
// the zero Usage wherever one is read.
func (u *Usage) read() *Usage {
	if u == nil {
		return &noUsage
	}
	return u
}

// MilliCPU returns the cpu used, in millicores.
func (u *Usage) MilliCPU() int64 { return u.read().req.milliCPU }

// Memory returns the memory used, in bytes.
func (u *Usage) Memory() int64 { return u.read().req.memory }

// Scalar returns the amount of a scalar resource (extended resources,
// hugepages) used.
func (u *Usage) Scalar(name v1.ResourceName) int64 { return u.read().req.scalar(name) }

// Add adds v to u; a nil v adds nothing, and a nil u, which has nowhere to
// keep the sum, is left alone.
func (u *Usage) Add(v *Usage) {
	if u == nil || v == nil {
		return
	}
	u.req.add(&v.req)
	u.Pods += v.Pods
}

// Sub takes v out of u; a nil v takes nothing, and a nil u is left alone.
func (u *Usage) Sub(v *Usage) {
	if u == nil || v == nil {
		return
	}
	u.req.sub(&v.req)
	u.Pods -= v.Pods
}

// Set makes u equal to v, reusing u's memory; a nil v is the zero Usage,
// and a nil u is left alone.
func (u *Usage) Set(v *Usage) {
	if u == nil {
		return
	}
	v = v.read()
	u.req.copyFrom(&v.req)
	u.Pods = v.Pods
}

// Clone returns a copy of u that shares no memory with it.
func (u *Usage) Clone() Usage {
	var out Usage
	out.Set(u)
	return out
}

// Equal reports whether two usages count the same pods' worth; nil counts
// as the zero Usage.
func (u *Usage) Equal(v *Usage) bool {
	u, v = u.read(), v.read()
	if u.Pods != v.Pods || u.req.milliCPU != v.req.milliCPU || u.req.memory != v.req.memory || u.req.ephemeral != v.req.ephemeral {
		return false
	}
	for _, s := range u.req.scalars {
		if s.value != v.req.scalar(s.name) {
			return false
		}
	}
	for _, s := range v.req.scalars {
		if s.value != u.req.scalar(s.name) {
			return false
		}
	}
	return true
}

// PodUsage is one pod's share of a node's usage: its requests as the
// scheduler's NodeInfo counts a pod already on the node (per container
// max(spec, status resources, allocated resources), or the status and
// allocated ones alone while its resize is Infeasible; from 1.37 the
// largest of the pod's summed spec, actuated and allocated requests,
// podRequestsAggregated; pod-level requests
// where the PodLevelResources gate honours them; overhead), and one pod.
// pod is the pod with its allocation, carrying its status; a nil pod
// (pod.Pod) uses nothing.
func PodUsage(pod Allocated, node NodeConfig) Usage {
	if pod.Pod == nil {
		return Usage{}
	}
	return Usage{req: podRequests(pod, requestOptions{
		useStatus:       node.Profile.Gate(profile.GateInPlacePodVerticalScaling),
		podLevel:        node.Profile.PodLevelResources(),
		aggregateStatus: node.Profile.StatusAggregatedPerPod(),
	}), Pods: 1}
}

// UsageOf is the usage of every pod in others except self: the walk over
// the other pods that the kubelet makes on every decision.
func UsageOf(others []*v1.Pod, self types.UID, node NodeConfig) Usage {
	var u Usage
	for _, o := range others {
		if o == nil || o.UID == self {
			continue
		}
		p := PodUsage(As(o), node)
		u.Add(&p)
	}
	return u
}

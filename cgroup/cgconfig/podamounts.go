package cgconfig

import (
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/resizelet/resizelet/qos"
)

// podAmounts is podAmountsFromLists in integers, without building resource
// lists: the same sums and maxima of the containers' requests and limits
// (sidecars and init containers by the KEP-753 rules), the same pod-level
// replacements and the same overhead. It is exact when every quantity it
// reads is a whole number of the unit (millicores for cpu, bytes for
// memory) and no sum overflows: then adding quantities and converting the
// sum, as the helpers do, gives what adding the converted amounts gives.
// ok is false otherwise, and the caller takes the lists' way.
func podAmounts(pod *v1.Pod, podLevel bool) (cpuRequest, cpuLimit, memoryLimit int64, ok bool) {
	var reqCPU, limCPU, limMem amountSum
	reqCPU.aggregate(pod, v1.ResourceCPU, false)
	limCPU.aggregate(pod, v1.ResourceCPU, true)
	limMem.aggregate(pod, v1.ResourceMemory, true)
	if podLevel {
		if r := pod.Spec.Resources; r != nil {
			if resourcehelper.IsPodLevelRequestsSet(pod) {
				reqCPU.replace(r.Requests, v1.ResourceCPU)
			}
			if resourcehelper.IsPodLevelResourcesSet(pod) {
				limCPU.replace(r.Limits, v1.ResourceCPU)
				limMem.replace(r.Limits, v1.ResourceMemory)
			}
		}
	}
	// Overhead adds to the requests, and to the limits that are set and
	// not zero.
	if q, has := pod.Spec.Overhead[v1.ResourceCPU]; has {
		reqCPU.add(exactAmount(v1.ResourceCPU, &q))
		if limCPU.present && limCPU.value != 0 {
			limCPU.add(exactAmount(v1.ResourceCPU, &q))
		}
	}
	if q, has := pod.Spec.Overhead[v1.ResourceMemory]; has && limMem.present && limMem.value != 0 {
		limMem.add(exactAmount(v1.ResourceMemory, &q))
	}
	ok = !reqCPU.inexact && !limCPU.inexact && !limMem.inexact
	return reqCPU.value, limCPU.value, limMem.value, ok
}

// amount is one resource's amount in its unit, whether the list had it,
// and whether the quantity was not a whole number of the unit.
type amount struct {
	value            int64
	present, inexact bool
}

// exactAmount reads a quantity in the resource's unit.
func exactAmount(name v1.ResourceName, q *resource.Quantity) amount {
	if name == v1.ResourceCPU {
		m := q.MilliValue()
		var back resource.Quantity
		back.SetMilli(m)
		return amount{value: m, present: true, inexact: q.Cmp(back) != 0}
	}
	v, ok := q.AsInt64()
	return amount{value: v, present: true, inexact: !ok}
}

func amountOf(list v1.ResourceList, name v1.ResourceName) amount {
	q, ok := list[name]
	if !ok {
		return amount{}
	}
	return exactAmount(name, &q)
}

// amountSum is a resource list's entry for one resource as the helpers
// build it: absent until a list has the resource.
type amountSum amount

func (s *amountSum) add(a amount) {
	if !a.present {
		return
	}
	if a.inexact || (a.value > 0 && s.value > math.MaxInt64-a.value) || (a.value < 0 && s.value < math.MinInt64-a.value) {
		s.inexact = true
	}
	s.value += a.value
	s.present = true
}

// max is maxResourceList for one resource: a present amount replaces an
// absent or smaller one.
func (s *amountSum) max(o amountSum) {
	if !o.present {
		return
	}
	s.inexact = s.inexact || o.inexact
	if !s.present || o.value > s.value {
		s.value, s.present = o.value, true
	}
}

// replace puts the pod-level amount in place of the aggregate, when the
// pod-level list has the resource.
func (s *amountSum) replace(list v1.ResourceList, name v1.ResourceName) {
	if a := amountOf(list, name); a.present {
		*s = amountSum(a)
	}
}

// aggregate is AggregateContainerRequests (or Limits) for one resource:
// regular containers and sidecars add up; an init container needs its own
// amount plus the sidecars started before it; the pod needs the larger.
func (s *amountSum) aggregate(pod *v1.Pod, name v1.ResourceName, limits bool) {
	list := func(c *v1.Container) v1.ResourceList {
		if limits {
			return c.Resources.Limits
		}
		return c.Resources.Requests
	}
	*s = amountSum{}
	for i := range pod.Spec.Containers {
		s.add(amountOf(list(&pod.Spec.Containers[i]), name))
	}
	var sidecars, initMax amountSum
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		a := amountOf(list(c), name)
		if qos.IsSidecar(c) {
			s.add(a)
			sidecars.add(a)
			initMax.max(sidecars)
			continue
		}
		var use amountSum
		use.add(a)
		if sidecars.present {
			use.add(amount(sidecars))
		}
		initMax.max(use)
	}
	s.max(initMax)
}

package core

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/allocation"
)

// ErrBusy is returned by Clone for a core with work in flight or queued:
// operations in flight hold state that belongs to their driver.
var ErrBusy = errors.New("core is not quiet")

// Clone returns an independent copy of a quiet core, for a dry run: what
// the copy is told and decides changes nothing in the original.
func (c *Core) Clone() (*Core, error) {
	if !c.made() {
		return nil, ErrNotMade
	}
	if !c.Quiet() {
		return nil, ErrBusy
	}
	s := c.s
	// The message cache is the original's working memory: the clone runs
	// beside it and gets its own.
	s.admit.Messages = &allocation.MessageCache{}
	// The clone takes the usage as it stands: every share taken.
	c.recountStale()
	out := &Core{
		s:        s,
		started:  c.started,
		now:      c.now,
		pods:     make(map[types.UID]*podState, len(c.pods)),
		byName:   make(map[podName]types.UID, len(c.byName)),
		nextSeq:  c.nextSeq,
		order:    slices.Clone(c.order),
		retry:    c.retry,
		used:     c.used.Clone(),
		inflight: map[uint64]*flight{},
		nextID:   c.nextID,
	}
	out.thawed.Limit = c.thawed.Limit
	for _, item := range c.queue.Items() {
		out.queue.Push(item)
	}
	maps.Copy(out.byName, c.byName)
	for _, uid := range c.order {
		ps := c.pods[uid]
		cp := *ps
		cp.copyBody(&out.thawed)
		cp.containers = slices.Clone(ps.containers)
		cp.dead = slices.Clone(ps.dead)
		cp.conds = ps.conds.copy()
		cp.usage = ps.usage.Clone()
		cp.timerIdx = -1
		out.pods[uid] = &cp
		if !cp.resyncAt.IsZero() {
			out.setResync(&cp, cp.resyncAt)
		}
	}
	return out, nil
}

// AdmissionPlan is the arithmetic of a resize's admission, for a plan: the
// numbers the kubelet compares, and where the resize stands in the
// pending-resize queue once it has joined it.
type AdmissionPlan struct {
	Checks []allocation.Check
	// QueuePosition is the resize's index in the queue, counted from 0,
	// when the retry that decides it starts; -1 when there is nothing to
	// resize (the desired resources equal the allocation).
	QueuePosition int
	QueueLength   int
}

// PlanAdmission returns the admission arithmetic of a resize to pod (the
// pod as the API server would store it after the resize) on a quiet core,
// without changing it.
func (c *Core) PlanAdmission(pod *v1.Pod) (AdmissionPlan, error) {
	if !c.made() {
		return AdmissionPlan{}, ErrNotMade
	}
	if pod == nil {
		return AdmissionPlan{}, errors.New("plan admission: nil pod")
	}
	clone, err := c.Clone()
	if err != nil {
		return AdmissionPlan{}, err
	}
	ps := clone.pods[pod.UID]
	if ps == nil {
		return AdmissionPlan{}, fmt.Errorf("plan %s/%s: %w", pod.Namespace, pod.Name, ErrUnknownPod)
	}
	updated := pod.DeepCopy()
	updated.Status = ps.pod().Status
	ps.setPod(updated)
	plan := AdmissionPlan{QueuePosition: -1}
	if !ps.view().Changed() {
		return plan, nil
	}
	clone.pushPending(ps)
	items := clone.queue.Items()
	plan.QueueLength = len(items)
	plan.QueuePosition = slices.IndexFunc(items, func(item allocation.PendingResize) bool { return item.UID == ps.uid })
	plan.Checks = allocation.ExplainResize(updated, clone.othersUsage(ps), clone.s.admit)
	return plan, nil
}

package core

import (
	"fmt"
	"maps"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/resizelet/resizelet/allocation"
)

// Step applies one input and returns the next batch for the caller to
// perform, if there is one it can take now. An input the core cannot take
// returns an error and changes nothing.
func (c *Core) Step(in Input) (Ready, error) {
	if !c.made() {
		return Ready{}, ErrNotMade
	}
	if c.metrics != nil {
		c.metrics.beginStep()
	}
	if s, ok := in.(Start); ok {
		if c.started {
			return Ready{}, ErrStarted
		}
		c.start(s)
		return c.ready(c.next()), nil
	}
	if !c.started {
		return Ready{}, ErrNotStarted
	}
	var err error
	switch in := in.(type) {
	case PodAdded:
		err = c.podsAdded([]*v1.Pod{in.Pod}, in.Now)
	case PodsAdded:
		err = c.podsAdded(in.Pods, in.Now)
	case ResizeRequested:
		err = c.resizeRequested(in)
	case *ResizeRequested:
		err = c.resizeRequested(*in)
	case DeleteRequested:
		err = c.deleteRequested(in)
	case SyncRequested:
		c.setNow(in.Now)
		for _, uid := range c.order {
			if ps := c.pods[uid]; ps.admitted {
				c.markDirty(ps)
			}
		}
	case Tick:
		c.tick(in.Now, in.Unchanged)
	case BatchDone:
		return c.batchDone(in)
	case *BatchDone:
		return c.batchDone(*in)
	case Poll:
	default:
		err = fmt.Errorf("unknown input %T", in)
	}
	if err != nil {
		return Ready{}, err
	}
	return c.ready(c.next()), nil
}

func (c *Core) ready(b *Batch) Ready {
	c.settle()
	rd := Ready{Batch: b, NextTimer: c.NextTimer(), Logs: c.takeLogs()}
	if c.metrics != nil {
		rd.Metrics = &c.metrics.out
	}
	return rd
}

// tick fires the timers due at now: the periodic retry (queued as an
// allocation task) and the resyncs and backoffs (the pods become dirty).
// A quiet pod's resync, with the node unchanged, would only read what
// its last sync read and find nothing to do, as a settled kubelet's
// resyncs do for hours; it is armed again for a period later, where the
// sync's finish would have armed it, without running, or further when
// the driver let time pass it (NextWork): TestQuietResyncsAreFullResyncs
// holds the paths equal.
func (c *Core) tick(now time.Time, unchanged bool) {
	c.setNow(now)
	if !unchanged {
		// Something may have changed under any pod: a quiet pod has its
		// timer armed (syncOp.finish), so clearing those clears them all.
		for _, ps := range c.timers {
			ps.quiet = false
		}
	}
	if !c.retry.Due().After(c.now) {
		c.enqueueRetry(allocation.TriggerPeriodicRetry)
	}
	for len(c.timers) > 0 && !c.timers[0].resyncAt.After(c.now) {
		ps := c.timers[0]
		if ps.quiet {
			// Where the resyncs due since it, each a period after the
			// last, would have left it (NextWork lets time pass them).
			c.setResync(ps, ps.resyncAt.Add((c.now.Sub(ps.resyncAt)/ResyncInterval+1)*ResyncInterval))
			continue
		}
		c.disarm(ps)
		c.markDirty(ps)
	}
}

// next starts the next operation that can start and returns its first
// batch: an allocation task first, then a pod teardown, then the sync of
// the first dirty pod in admission order.
func (c *Core) next() *Batch {
	for !c.allocIdle() && !c.allocBusy {
		t := c.allocTasks[c.allocHead]
		if b := c.launch(t, nil, nil); b != nil {
			c.allocBusy = true
			return b
		}
	}
	if c.allocBusy {
		return nil
	}
	for i := 0; c.deletes > 0 && i < len(c.order); i++ {
		ps := c.pods[c.order[i]]
		if ps.busy || !ps.deleteRequested {
			continue
		}
		ps.deleteRequested = false
		c.deletes--
		ps.busy = true
		if b := c.launch(&deleteOp{uid: ps.uid}, nil, nil); b != nil {
			return b
		}
	}
	for ps := c.nextDirty(); ps != nil; ps = c.nextDirty() {
		var o op
		switch {
		case ps.terminating:
			// A pod being deleted is torn down again, never synced: a sync
			// would start the containers a failed teardown stopped.
			o = &deleteOp{uid: ps.uid}
		case ps.admitted && !c.finished(ps):
			o = c.newSync(ps.uid)
		default:
			continue
		}
		ps.busy = true
		if b := c.launch(o, nil, nil); b != nil {
			return b
		}
		// The operation ended without I/O (the pod is gone); look further.
	}
	return nil
}

// launch advances o with the results of its last batch and returns its
// next batch, or nil when o has ended (its finish has run).
func (c *Core) launch(o op, done []Action, res []Result) *Batch {
	acts, keepGoing, final := o.advance(c, done, res)
	if len(acts) == 0 {
		if !final {
			panic(fmt.Sprintf("core: %T returned no actions but is not final", o))
		}
		c.end(o)
		return nil
	}
	c.nextID++
	out := o.output()
	out.batch = Batch{ID: c.nextID, Actions: acts, KeepGoing: keepGoing}
	out.fl = flight{op: o, actions: acts, final: final}
	c.inflight[c.nextID] = &out.fl
	return &out.batch
}

// end finishes an operation and frees what it held.
func (c *Core) end(o op) {
	o.finish(c)
	if !c.allocIdle() && c.allocTasks[c.allocHead] == o {
		c.allocTasks[c.allocHead] = nil
		c.allocHead++
		c.allocBusy = false
		if c.allocIdle() {
			c.allocTasks, c.allocHead = c.allocTasks[:0], 0
		}
	}
}

// batchDone takes a batch's results: checkpoint records the driver
// attempted are mirrored in memory (a checkpoint keeps a record in memory
// even when persisting it fails, as the kubelet's does), then the waiting
// operation continues.
func (c *Core) batchDone(in BatchDone) (Ready, error) {
	f, ok := c.inflight[in.ID]
	if !ok {
		return Ready{}, fmt.Errorf("batch %d: %w", in.ID, ErrUnknownBatch)
	}
	if len(in.Results) > len(f.actions) {
		return Ready{}, fmt.Errorf("batch %d: %d results for %d actions: %w", in.ID, len(in.Results), len(f.actions), ErrTooManyResults)
	}
	delete(c.inflight, in.ID)
	c.setNow(in.Now)
	done := f.actions[:len(in.Results)]
	for _, a := range done {
		c.mirror(a)
	}
	if f.final {
		c.end(f.op)
		return c.ready(c.next()), nil
	}
	if b := c.launch(f.op, done, in.Results); b != nil {
		return c.ready(b), nil
	}
	return c.ready(c.next()), nil
}

// mirror applies an attempted checkpoint write to the core's copy.
func (c *Core) mirror(a Action) {
	switch a := a.(type) {
	case WriteAllocated:
		if ps := c.pods[a.UID]; ps != nil {
			// Records are never changed in place: no copy is needed. The
			// record this one replaces is held by nothing now.
			// (A new record's map is never the current one's: see
			// Core.allocationFromPod.)
			b := ps.live()
			if ps.hasAllocated {
				b.spare = b.allocated.ContainerResources
			}
			b.allocated = a.Resources
			ps.hasAllocated = true
			c.recount(ps)
		}
	case WriteActuatedContainer:
		// Requirements are never changed in place, so the record may
		// share them with the action; the map of containers is the
		// core's own.
		if ps := c.pods[a.UID]; ps != nil {
			b := ps.live()
			if b.actuated.ContainerResources == nil {
				b.actuated.ContainerResources = map[string]v1.ResourceRequirements{}
			}
			b.actuated.ContainerResources[a.Name] = a.Resources
		}
	case WriteActuated:
		if ps := c.pods[a.UID]; ps != nil {
			// The store may keep the record it is given; the core changes
			// its container map in place, so it takes a copy of that.
			b := ps.live()
			b.actuated = a.Resources
			b.actuated.ContainerResources = maps.Clone(a.Resources.ContainerResources)
		}
	}
}

// SkipPeriod is the shortest span that is a whole number of every timer
// period the core uses: the pod resync (ResyncInterval), the backoff after
// a failed sync (BackOffPeriod) and the periodic retry of pending resizes
// (allocation.RetryDelay). Skipping a multiple of it keeps every timer in
// its phase.
var SkipPeriod = lcm(lcm(ResyncInterval, BackOffPeriod), allocation.RetryDelay)

func lcm(a, b time.Duration) time.Duration {
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return a / x * b
}

// Skip moves the core's clock and every timer it holds d later, as if d
// had passed in which every timer fired when due, found nothing to do and
// armed itself again for one period later. That is what a kubelet whose
// pods are settled does for hours: each resync reads the same cgroups and
// container statuses and changes nothing, each periodic retry finds the
// same decisions. The driver skips only after it has watched a whole
// stretch of such timers (Node.Advance), and only by a multiple of
// SkipPeriod, so that after Skip every timer stands where it would have
// stood after firing through d. Skip refuses (false) unless the core is
// started and quiet and d is a positive multiple of SkipPeriod, and, with
// logging on (SetLogging), while resizes are pending: each periodic retry
// logs its decisions, so those retries must fire.
func (c *Core) Skip(d time.Duration) bool {
	if !c.made() || !c.started || !c.Quiet() || d <= 0 || d%SkipPeriod != 0 || c.logging && c.queue.Len() > 0 {
		return false
	}
	c.now = c.now.Add(d)
	c.retry.Shift(d)
	// Moving every timer by the same span keeps the heap's order.
	for _, ps := range c.timers {
		ps.resyncAt = ps.resyncAt.Add(d)
	}
	return true
}

package core

import (
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/allocation"
	"github.com/resizelet/resizelet/resize/profile"
)

// Timer periods of the pod workers (pkg/kubelet/pod_workers.go): a pod is
// synced again a minute after a successful sync and ten seconds after a
// failed one. The kubelet adds jitter; resizelet does not, so that runs
// repeat exactly (a choice: the reference leaves the jitter out of scope).
const (
	ResyncInterval = time.Minute
	BackOffPeriod  = 10 * time.Second
)

// Errors Step returns for an input it cannot take. Nothing changes then.
var (
	// ErrNotStarted is returned for any input before Start.
	ErrNotStarted = errors.New("core not started: the first input must be Start")
	// ErrStarted is returned for a second Start: a restart is a new Core.
	ErrStarted = errors.New("core already started")
	// ErrUnknownBatch is returned for a BatchDone whose batch is not in
	// flight.
	ErrUnknownBatch = errors.New("unknown batch")
	// ErrUnknownPod is returned for an input about a pod the core does not
	// know.
	ErrUnknownPod = errors.New("pod not known to the kubelet")
	// ErrTooManyResults is returned for a BatchDone with more results than
	// its batch had actions.
	ErrTooManyResults = errors.New("more results than actions")
)

// Core is the kubelet's resize path as a state machine, in the shape of
// etcd-io/raft's RawNode: Step takes an input (a pod added, a resize, a
// timer, the results of a batch) and returns the next Batch of actions for
// the driver to perform. Every decision the kubelet makes lives here:
// admission, the pending-resize queue and its timer, what a pod sync does
// and in which order, the memory-usage check, conditions, events, status
// and checkpoint records. The core does no I/O, reads no clock, takes no
// lock and starts no goroutine; a Core is not safe for concurrent use, and
// its driver calls it under one lock.
//
// Work is done in operations: a pod sync, a pod teardown, or a node-wide
// allocation task (admitting a pod, retrying the pending resizes). An
// operation runs as a conversation of batches: each batch holds the actions
// up to the first one whose result decides what comes next. Several pods'
// operations may be in flight at once (one per pod, as pod workers); an
// allocation task runs alone, and no new pod operation starts while one
// is in flight, as the kubelet's allocation manager serializes them.
type Core struct {
	s       settings
	started bool
	now     time.Time

	pods  map[types.UID]*podState
	order []types.UID // admission order

	queue allocation.Queue
	retry allocation.RetryTimer

	dirty      map[types.UID]bool
	allocTasks []op
	allocBusy  bool

	inflight map[uint64]*flight
	nextID   uint64
}

// flight is a batch in flight and the operation waiting for it.
type flight struct {
	op      op
	actions []Action
	final   bool
}

// op is one operation. advance continues it with the results of its last
// batch (nil at its start) and returns the next batch's actions; final
// says the operation ends once those are performed (they then need no
// results), and an operation that returns no actions must be final.
// finish runs when the operation has ended.
type op interface {
	advance(c *Core, done []Action, res []Result) (acts []Action, keepGoing, final bool)
	finish(c *Core)
}

// New returns a core for cfg, defaulted and validated. Its first input
// must be Start.
func New(cfg NodeConfig) (*Core, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Core{
		s:        newSettings(cfg),
		pods:     map[types.UID]*podState{},
		dirty:    map[types.UID]bool{},
		inflight: map[uint64]*flight{},
	}, nil
}

// Config returns the defaulted configuration the core runs with.
func (c *Core) Config() NodeConfig { return c.s.cfg }

// Profile returns the kubelet version's behaviour with the node's gates.
func (c *Core) Profile() profile.Profile { return c.s.profile }

// Step applies one input and returns the next batch for the caller to
// perform, if there is one it can take now. An input the core cannot take
// returns an error and changes nothing.
func (c *Core) Step(in Input) (Ready, error) {
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
	switch in := in.(type) {
	case PodAdded:
		if err := c.podAdded(in); err != nil {
			return Ready{}, err
		}
	case ResizeRequested:
		if err := c.resizeRequested(in); err != nil {
			return Ready{}, err
		}
	case DeleteRequested:
		if err := c.deleteRequested(in); err != nil {
			return Ready{}, err
		}
	case SyncRequested:
		c.setNow(in.Now)
		for _, uid := range c.order {
			if c.pods[uid].admitted {
				c.dirty[uid] = true
			}
		}
	case Tick:
		c.tick(in.Now)
	case BatchDone:
		return c.batchDone(in)
	case Poll:
	default:
		return Ready{}, fmt.Errorf("unknown input %T", in)
	}
	return c.ready(c.next()), nil
}

func (c *Core) ready(b *Batch) Ready {
	return Ready{Batch: b, NextTimer: c.NextTimer()}
}

// setNow moves the core's idea of the time forward; inputs never move it
// back.
func (c *Core) setNow(t time.Time) {
	if t.After(c.now) {
		c.now = t
	}
}

// Quiet reports whether there is nothing to do: no batch in flight, and no
// work that could start now.
func (c *Core) Quiet() bool {
	return len(c.inflight) == 0 && len(c.allocTasks) == 0 && !c.hasPodWork()
}

// InFlight reports how many batches are being performed.
func (c *Core) InFlight() int { return len(c.inflight) }

func (c *Core) hasPodWork() bool {
	for _, uid := range c.order {
		ps := c.pods[uid]
		if ps.deleteRequested || c.dirty[uid] {
			return true
		}
	}
	return false
}

// NextTimer is the earliest time a timer falls due: the periodic retry of
// pending resizes or a pod's resync or backoff.
func (c *Core) NextTimer() time.Time {
	next := c.retry.Due()
	for _, uid := range c.order {
		if t := c.pods[uid].resyncAt; !t.IsZero() && t.Before(next) {
			next = t
		}
	}
	return next
}

// tick fires the timers due at now: the periodic retry (queued as an
// allocation task) and the resyncs and backoffs (the pods become dirty).
func (c *Core) tick(now time.Time) {
	c.setNow(now)
	if !c.retry.Due().After(c.now) {
		c.enqueueAlloc(&retryTask{trigger: allocation.TriggerPeriodicRetry})
	}
	for _, uid := range c.order {
		ps := c.pods[uid]
		if !ps.resyncAt.IsZero() && !ps.resyncAt.After(c.now) {
			ps.resyncAt = time.Time{}
			c.dirty[uid] = true
		}
	}
}

func (c *Core) enqueueAlloc(t op) { c.allocTasks = append(c.allocTasks, t) }

// next starts the next operation that can start and returns its first
// batch: an allocation task first, then a pod teardown, then the sync of
// the first dirty pod in admission order.
func (c *Core) next() *Batch {
	for len(c.allocTasks) > 0 && !c.allocBusy {
		t := c.allocTasks[0]
		if b := c.launch(t, nil, nil); b != nil {
			c.allocBusy = true
			return b
		}
	}
	if c.allocBusy {
		return nil
	}
	for _, uid := range c.order {
		ps := c.pods[uid]
		if ps.busy || !ps.deleteRequested {
			continue
		}
		ps.deleteRequested = false
		ps.busy = true
		if b := c.launch(&deleteOp{uid: uid}, nil, nil); b != nil {
			return b
		}
	}
	for _, uid := range c.order {
		ps := c.pods[uid]
		if ps.busy || !c.dirty[uid] {
			continue
		}
		delete(c.dirty, uid)
		if !ps.admitted {
			continue
		}
		ps.busy = true
		if b := c.launch(&syncOp{uid: uid}, nil, nil); b != nil {
			return b
		}
		// The sync ended without I/O (the pod is gone); look further.
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
	b := &Batch{ID: c.nextID, Actions: acts, KeepGoing: keepGoing}
	c.inflight[b.ID] = &flight{op: o, actions: acts, final: final}
	return b
}

// end finishes an operation and frees what it held.
func (c *Core) end(o op) {
	o.finish(c)
	if len(c.allocTasks) > 0 && c.allocTasks[0] == o {
		c.allocTasks = c.allocTasks[1:]
		c.allocBusy = false
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
			ps.allocated = a.Resources.DeepCopy()
			ps.hasAllocated = true
		}
	case WriteActuatedContainer:
		if ps := c.pods[a.UID]; ps != nil {
			if ps.actuated.ContainerResources == nil {
				ps.actuated.ContainerResources = map[string]v1.ResourceRequirements{}
			}
			ps.actuated.ContainerResources[a.Name] = *a.Resources.DeepCopy()
		}
	case WriteActuated:
		if ps := c.pods[a.UID]; ps != nil {
			ps.actuated = a.Resources.DeepCopy()
		}
	}
}

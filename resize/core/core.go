package core

import (
	"errors"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/allocation"
	"github.com/resizelet/resizelet/allocation/frozen"
	"github.com/resizelet/resizelet/resize/profile"
)

// Timer periods of the pod workers (pkg/kubelet/pod_workers.go): a pod is
// synced again a minute after a successful sync and ten seconds after a
// failed one. The kubelet adds jitter; resizelet does not, so that runs
// repeat exactly (a choice; see the open points of resize/kubelet-resize.md).
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

// Core is the kubelet's resize path as a state machine (see the package
// documentation): Step takes an input (a pod added, a resize, a timer, the
// results of a batch) and returns the next Batch of actions for the driver
// to perform. Every decision the kubelet makes lives here: admission, the
// pending-resize queue and its timer, what a pod sync does and in which
// order, the memory-usage check, conditions, events, status and checkpoint
// records. A Core is not safe for concurrent use: its driver calls it
// under one lock.
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
	// statuses counts the statuses handed out (WriteStatus.Seq).
	statuses uint64

	pods  map[types.UID]*podState
	order []types.UID // admission order
	// thawed are the pods not frozen, by when they were last used (see
	// podState.live and Core.settle).
	thawed frozen.Recent[types.UID]

	queue allocation.Queue
	retry allocation.RetryTimer
	// queueScratch is pushPending's copy of the queue.
	queueScratch []allocation.PendingResize

	// used is the node's usage by its admitted, active pods (recount keeps
	// it up to date); scratch is where othersUsage subtracts a pod. stale
	// are the pods whose share recount has yet to take again
	// (podState.stale): used is up to date once they are.
	used    allocation.Usage
	scratch allocation.Usage
	stale   []*podState
	// verify, when set (by tests), sees every admission decision with the
	// usage it was made against.
	verify func(ps *podState, used *allocation.Usage, d allocation.Decision)

	byName  map[podName]types.UID
	nextSeq uint64
	// dirtyHeap holds the pods that wait for a sync (podState.dirty), by
	// admission order, dirtyCount how many; deletes counts the teardowns
	// asked for; timers are the resync timers.
	dirtyHeap   seqHeap
	dirtyCount  int
	busyScratch []seqEntry
	deletes     int
	timers      timerHeap

	// allocTasks are the allocation tasks waiting, the first one running
	// when allocBusy; allocHead is where the queue starts in the slice.
	allocTasks []op
	allocHead  int
	allocBusy  bool
	// retryPool and syncPool keep finished retry tasks and syncs for
	// reuse: without them a resize decision allocates 7 times, about 1
	// KiB (BenchmarkResizeDecision, whose target is none), and the typed
	// cycle makes 71 allocations instead of 47. They hold ops, so that the
	// core's own state names no operation.
	retryPool []op
	syncPool  []op

	inflight map[uint64]*flight
	nextID   uint64

	// logging turns the log records on (SetLogging); logs are those of
	// the current Step, handed out in its Ready.
	logging bool
	logs    []LogRecord
	// metrics is the metrics' bookkeeping, nil while they are off (see
	// RecordMetrics).
	metrics *metricState
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
	// output is the operation's pending actions and batch memory.
	output() *opOutput
}

// New returns a core for cfg, defaulted and validated. Its first input
// must be Start.
func New(cfg NodeConfig) (*Core, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Core{
		s:        newSettings(cfg),
		pods:     map[types.UID]*podState{},
		byName:   map[podName]types.UID{},
		inflight: map[uint64]*flight{},
	}
	c.thawed.Limit = cfg.hotPods()
	return c, nil
}

// ErrNotMade is what a Core that New did not make (nil, or the zero Core,
// which has no configuration) answers every call that has an error
// result with; the others answer a zero value.
var ErrNotMade = errors.New("core: Core not made by New")

// made reports whether New made c: pods is set there and never replaced.
func (c *Core) made() bool { return c != nil && c.pods != nil }

// Config returns the defaulted configuration the core runs with.
func (c *Core) Config() NodeConfig {
	if !c.made() {
		return NodeConfig{}
	}
	return c.s.cfg
}

// Profile returns the kubelet version's behaviour with the node's gates.
func (c *Core) Profile() profile.Profile {
	if !c.made() {
		return profile.Profile{}
	}
	return c.s.profile
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
	if !c.made() {
		return true
	}
	return len(c.inflight) == 0 && c.allocIdle() && c.deletes == 0 && c.dirtyCount == 0
}

// InFlight reports how many batches are being performed.
func (c *Core) InFlight() int {
	if !c.made() {
		return 0
	}
	return len(c.inflight)
}

// NextTimer is the earliest time a timer falls due: the periodic retry of
// pending resizes or a pod's resync or backoff.
func (c *Core) NextTimer() time.Time {
	if !c.made() {
		return time.Time{}
	}
	next := c.retry.Due()
	if len(c.timers) > 0 && c.timers[0].resyncAt.Before(next) {
		next = c.timers[0].resyncAt
	}
	return next
}

// NextWork is NextTimer without the resyncs of quiet pods, for a driver
// that will tell the Tick at that time that its backends are unchanged
// (Tick.Unchanged): those resyncs would not run, and that Tick arms each
// again where firing it in turn would have left it. It walks the timers.
func (c *Core) NextWork() time.Time {
	if !c.made() {
		return time.Time{}
	}
	next := c.retry.Due()
	for _, ps := range c.timers {
		if !ps.quiet && ps.resyncAt.Before(next) {
			next = ps.resyncAt
		}
	}
	return next
}

func (c *Core) enqueueAlloc(t op) { c.allocTasks = append(c.allocTasks, t) }

// allocIdle reports whether no allocation task is queued or running.
func (c *Core) allocIdle() bool { return c.allocHead == len(c.allocTasks) }

// fromPool takes the last finished operation of pool, which holds only
// *T, keeping its memory; or makes a new one when the pool is empty.
func fromPool[T any](pool *[]op) *T {
	n := len(*pool)
	if n == 0 {
		return new(T)
	}
	o := any((*pool)[n-1]).(*T)
	(*pool)[n-1] = nil
	*pool = (*pool)[:n-1]
	return o
}

// opOutput is what every operation carries: the actions it has decided
// but not yet handed out (events, emitted with its next batch), and the
// memory of its batches, reused from one batch to the next (an operation
// has at most one batch in flight), so that handing out a batch allocates
// nothing.
type opOutput struct {
	pending []Action
	// bufs are two action buffers used in turn: the next batch is built in
	// one while the operation still reads the last one's actions.
	bufs  [2][]Action
	cur   int
	batch Batch
	fl    flight
	// evSlots hold the events of the batch being handed out and of the
	// next one (the side cur^1 until take flips it); evUsed counts the
	// slots in use on each side.
	evSlots [2][]*Event
	evUsed  [2]int
	// write is the allocation record of the batch that writes one.
	write AllocationRecord
	// acted says the operation handed out an action that is not a read.
	acted bool
}

// Small helpers over lists and maps that the rules share; they know
// nothing of the core.

// shrunk is s, or a copy of it with room for little more, when s has
// room for many more elements than it holds.
func shrunk[S ~[]E, E any](s S) S {
	if cap(s) <= 32 || cap(s) <= 4*len(s) {
		return s
	}
	return append(S(nil), s...)
}

// quantityOf is list[name], the zero quantity when absent: what
// ResourceList.Cpu and Memory return, without their allocation.
func quantityOf(list v1.ResourceList, name v1.ResourceName) *resource.Quantity {
	return new(list[name])
}

package resize

import (
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/resize/core"
)

// settleWatch is how Advance knows that the node has settled: changes
// counts the batches that changed something on the node or in the API, or
// failed (Node.changes says what counts); while at least one Advance
// watches (watchers), the last status written for each pod is kept so
// that a status write equal to it does not count.
type settleWatch struct {
	changes  atomic.Uint64
	watchers atomic.Int32
	// skipped is the virtual time skipped so far, for tests and logs.
	skipped atomic.Int64

	mu   sync.Mutex
	last map[types.UID]*v1.PodStatus
}

// start and stop bracket an Advance. The statuses are kept only while
// someone watches, and forgotten when the last watcher stops.
func (w *settleWatch) start() { w.watchers.Add(1) }

func (w *settleWatch) stop() {
	if w.watchers.Add(-1) == 0 {
		w.mu.Lock()
		w.last = nil
		w.mu.Unlock()
	}
}

// statusChanged records the status of a successful write and reports
// whether it differs from the pod's last one. Without a watcher it reports
// a change without comparing.
func (w *settleWatch) statusChanged(a core.WriteStatus) bool {
	if w.watchers.Load() == 0 || a.Status == nil {
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.last == nil {
		w.last = map[types.UID]*v1.PodStatus{}
	}
	prev, ok := w.last[a.UID]
	w.last[a.UID] = a.Status // the core never changes a status it handed out
	return !ok || (prev != a.Status && !sameButProbeTimes(prev, a.Status))
}

// sameButProbeTimes reports whether two statuses are equal but for their
// conditions' lastProbeTime. Every periodic retry of a Deferred resize
// refreshes that time and nothing else, so a node with a resize pending
// is settled too: skipping keeps the last periods of an Advance, in which
// the retry fires and sets the probe time it would have had.
func sameButProbeTimes(a, b *v1.PodStatus) bool {
	if len(a.Conditions) != len(b.Conditions) {
		return false
	}
	ca, cb := *a, *b
	ca.Conditions = append([]v1.PodCondition(nil), a.Conditions...)
	cb.Conditions = append([]v1.PodCondition(nil), b.Conditions...)
	for i := range ca.Conditions {
		ca.Conditions[i].LastProbeTime = cb.Conditions[i].LastProbeTime
	}
	return apiequality.Semantic.DeepEqual(&ca, &cb)
}

// forget drops the kept statuses when the API deletes a pod: the action
// names the pod, not its UID, and a deletion is a change anyway.
func (w *settleWatch) forget() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.last = nil
}

// backendWatch tells the core, at each Tick, whether anything but the
// node's own batches changed its cgroups or runtime since the last Tick
// (core.Tick.Unchanged), so that the resyncs of its quiet pods need not
// run. Only backends that count their changes can tell (the simulated
// kernel and runtime: cgroup.SimKernel.Changes, cri.SimContainerd.Changes);
// with any other, every resync runs. A change made from outside while a
// batch of the node runs passes for the node's own: as for Advance's
// skipping, a simulation changes its backends between the node's calls.
type backendWatch struct {
	count func() uint64 // nil when the backends cannot tell
	// seen is the count after the node's last batch (or last Tick);
	// outside says a change not the node's own came since the last Tick.
	seen    atomic.Uint64
	outside atomic.Bool
}

// changeCounter is what a backend that counts its changes has.
type changeCounter interface{ Changes() uint64 }

// watchBackends sets the watch up for the node's cgroups and runtime.
func (w *backendWatch) watchBackends(cg, rt any) {
	c1, ok1 := cg.(changeCounter)
	c2, ok2 := rt.(changeCounter)
	if ok1 && ok2 {
		w.count = func() uint64 { return c1.Changes() + c2.Changes() }
		w.seen.Store(w.count())
	}
}

// before and after bracket each batch the node performs.
func (w *backendWatch) before() {
	if w.count != nil && w.count() != w.seen.Load() {
		w.outside.Store(true)
	}
}

func (w *backendWatch) after() {
	if w.count != nil {
		w.seen.Store(w.count())
	}
}

// quiet reports whether only the node's batches changed the backends
// since the last Tick, as unchanged does, without taking the news.
func (w *backendWatch) quiet() bool {
	return w.count != nil && !w.outside.Load() && w.count() == w.seen.Load()
}

// unchanged reports, for a Tick, whether only the node's batches changed
// the backends since the last Tick.
func (w *backendWatch) unchanged() bool {
	if w.count == nil {
		return false
	}
	now := w.count()
	outside := w.outside.Swap(false) || now != w.seen.Load()
	w.seen.Store(now)
	return !outside
}

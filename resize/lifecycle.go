package resize

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/resizelet/resizelet/allocation/state"
)

// ErrCheckpointsHeld is wrapped by the error of NewNode given checkpoints
// another open node holds (state.ErrHeld): a checkpoint directory, whose
// lock file another node of this process or another process has locked,
// or in-memory checkpoints another node was started on. The error names
// both nodes.
var ErrCheckpointsHeld = state.ErrHeld

// ErrClosed is matched (errors.Is) by the error of every call on a Node
// after its Close, of a call that Close cut short, of a call on a Node that
// NewNode did not make, of NewNode on the Deps of a closed Backend, and of
// the calls of a closed Fleet (ErrFleetClosed).
var ErrClosed = errors.New("closed")

// closedError is a call a node no longer takes: op names the call, why
// says what stopped it.
type closedError struct{ op, why string }

func (e *closedError) Error() string {
	if e.op == "" {
		return e.why
	}
	return e.op + ": " + e.why
}

// Is reports ErrClosed.
func (e *closedError) Is(target error) bool { return target == ErrClosed }

const (
	whyClosed     = "the node is closed"
	whyCut        = "the node was closed before the call finished"
	whyNotStarted = "the Node was not made by NewNode"
)

// lifecycle is how a Node stops: the calls in progress, counted so that
// Close can wait for them, and the holds on the node's checkpoints, which
// Close lets go so that a successor can take them.
//
// A call enters before it does anything and exits when it returns. Close
// refuses new calls at once, wakes those waiting for other callers'
// batches, and waits until every call has exited: a call that is
// performing a batch finishes that batch and reports it to the core, then
// stops before the next one (drain checks closing), so that Close returns
// with no I/O in progress and none to come.
type lifecycle struct {
	mu     sync.Mutex
	idle   sync.Cond // signalled when active drops to 0 while closed; L is &mu
	active int
	closed bool
	// done is closed when the first Close has finished, so that a second
	// one returns only once the node is really stopped.
	done chan struct{}
	// closing is closed, as the hot paths (drain, wait) read it without
	// mu.
	closing atomic.Bool
	// release lets go of the node's checkpoints and detaches it from its
	// Backend; Close calls it once.
	release func() error
	err     error // release's error, which every Close returns
}

// enter admits a call named op, or says why the node takes no more. A nil
// context is refused here too, since every call that enters takes one.
func (n *Node) enter(ctx context.Context, op string) error {
	if n == nil || n.core == nil {
		return &closedError{op: op, why: whyNotStarted}
	}
	if ctx == nil {
		return &argumentError{op: op, msg: "nil context"}
	}
	l := &n.life
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return &closedError{op: op, why: whyClosed}
	}
	l.active++
	return nil
}

// exit ends a call that entered.
func (n *Node) exit() {
	l := &n.life
	l.mu.Lock()
	l.active--
	if l.active == 0 && l.closed {
		l.idle.Broadcast()
	}
	l.mu.Unlock()
}

// closing reports whether Close has begun: a call then stops at the next
// batch boundary.
func (n *Node) closing() bool { return n.life.closing.Load() }

// Close stops the node: it refuses every call from now on (their errors
// match ErrClosed), lets each call in progress finish the batch it is
// performing and stop there (that call returns an error matching
// ErrClosed), waits for them, and then lets go of the node's checkpoints
// (the lock on Deps.CheckpointDir, the hold on Deps.Allocated and
// Deps.Actuated) so that a successor can start on them. Once it returns,
// the node does no I/O: no cgroup write, runtime call, checkpoint write or
// API call.
//
// The runtime, cgroups and checkpoints are left as they are, as a stopped
// kubelet leaves them, so that a kubelet restart (NewNode again on the
// same Deps) finds them; what the stopped calls left unfinished, the
// successor finishes, as a restarted kubelet does. To remove what the
// node created in the runtime and the cgroup tree, close the Backend the
// Deps came from (Backend.Close, which closes its nodes first).
//
// Close is safe to call more than once and from several goroutines: every
// call returns once the node is stopped, with the error of letting go of
// its checkpoints, if any. It must not be called from within a call of
// the node (a Logger's handler, say), which it would wait for.
func (n *Node) Close() error {
	if n == nil || n.core == nil {
		return &closedError{op: "close node", why: whyNotStarted}
	}
	l := &n.life
	l.mu.Lock()
	if l.closed {
		done := l.done
		l.mu.Unlock()
		<-done
		return l.err
	}
	l.closed = true
	l.closing.Store(true)
	l.mu.Unlock()

	// Wake the callers waiting for other callers' batches (wait, Plan):
	// under n.mu, so that none can miss it between its check and its
	// wait.
	n.mu.Lock()
	n.cond.Broadcast()
	n.mu.Unlock()

	l.mu.Lock()
	for l.active > 0 {
		l.idle.Wait()
	}
	l.mu.Unlock()
	if l.release != nil {
		l.err = l.release()
	}
	close(l.done)
	return l.err
}

// checkpointHolder is a checkpoint that one node at a time may hold
// (state.Store.Hold): a second node on it is refused while the first is
// open.
type checkpointHolder interface {
	Hold(holder string) (release func(), err error)
}

// hold takes what the node must have to itself, and returns what lets go
// of it again: its checkpoint directory (a lock file in it, which the
// kubelet's --lock-file is to a node, when the node opens its checkpoints
// there), the checkpoints given in deps (Allocated and Actuated, when they
// can be held), and its place among its Backend's nodes. A checkpoint
// another open node holds is an error that names that node.
func (n *Node) hold(deps Deps) (_ func() error, err error) {
	holder := n.cfg.Name
	var releases []func() error
	release := func() error {
		var errs []error
		for i := len(releases) - 1; i >= 0; i-- {
			errs = append(errs, releases[i]())
		}
		return errors.Join(errs...)
	}
	defer func() {
		if err != nil {
			_ = release()
		}
	}()
	if deps.CheckpointDir != "" && (deps.Allocated == nil || deps.Actuated == nil) {
		lock, err := state.LockDir(deps.CheckpointDir, n.cfg.Name)
		if err != nil {
			return nil, fmt.Errorf("Deps.CheckpointDir: %w", err)
		}
		releases = append(releases, lock.Unlock)
	}
	if sameState(deps.Allocated, deps.Actuated) {
		return nil, errors.New("Deps.Allocated and Deps.Actuated are the same checkpoint: the two records of a pod would overwrite each other")
	}
	for _, st := range []struct {
		field string
		st    state.State
	}{{"Deps.Allocated", deps.Allocated}, {"Deps.Actuated", deps.Actuated}} {
		h, ok := st.st.(checkpointHolder)
		if !ok {
			continue
		}
		let, err := h.Hold(holder)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", st.field, err)
		}
		releases = append(releases, func() error { let(); return nil })
	}
	if b := deps.backend; b != nil {
		if err := b.attach(n); err != nil {
			return nil, err
		}
		releases = append(releases, func() error { b.detach(n); return nil })
	}
	return release, nil
}

// sameState reports whether a and b are one checkpoint. Values of types
// that cannot be compared are taken as different.
func sameState(a, b state.State) bool {
	if a == nil || b == nil {
		return false
	}
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta == tb && ta.Comparable() && a == b
}

// attach makes n one of the backend's nodes, unless the backend is
// closing.
func (b *Backend) attach(n *Node) error {
	b.nodesMu.Lock()
	defer b.nodesMu.Unlock()
	if b.stopping {
		return &closedError{why: "the " + b.kind + " backend the Deps came from is closed"}
	}
	if b.nodes == nil {
		b.nodes = map[*Node]struct{}{}
	}
	b.nodes[n] = struct{}{}
	return nil
}

// detach forgets n, which is closed.
func (b *Backend) detach(n *Node) {
	b.nodesMu.Lock()
	defer b.nodesMu.Unlock()
	delete(b.nodes, n)
}

// isClosed reports whether the backend's Close has begun.
func (b *Backend) isClosed() bool {
	b.nodesMu.Lock()
	defer b.nodesMu.Unlock()
	return b.stopping
}

// stopNodes marks the backend as closing, so that no node starts on it any
// more, and returns the nodes still open, for Close to stop.
func (b *Backend) stopNodes() []*Node {
	b.nodesMu.Lock()
	defer b.nodesMu.Unlock()
	b.stopping = true
	out := make([]*Node, 0, len(b.nodes))
	for n := range b.nodes {
		out = append(out, n)
	}
	return out
}

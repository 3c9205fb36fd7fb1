package explore

import (
	"errors"
	"sync"
)

// ErrCrashed is what every I/O call of a crashed kubelet returns: the
// process is gone, so nothing it asks for happens.
var ErrCrashed = errors.New("explore: the kubelet crashed")

// ErrInjected is the error of a call failed once by the explorer.
var ErrInjected = errors.New("explore: injected failure")

// call is one I/O call a kubelet made during the step being watched.
type call struct {
	Kind Kind
	Op   string
	// Mutating calls change the node's parts; a crash just before or just
	// after a read leaves the same state as one after the last mutating
	// call before it.
	Mutating bool
	// CanCrash says whether the kubelet can crash around the call (not
	// inside a runtime's own cgroup writes); CanFail whether the call can
	// fail (Exists answers without an error).
	CanCrash, CanFail bool
}

// trigger is the fault a replay injects: at the at-th call of the
// watched step, in mode.
type trigger struct {
	at   int
	mode Mode
}

// gate is what one kubelet's I/O goes through: it counts and describes
// the calls of the watched step and injects the trigger. Every wrapper of
// one kubelet shares its gate; a kubelet started after a crash gets a new
// one. It is safe for concurrent use; a wrapper holds its lock only to
// decide, never across the call it wraps.
type gate struct {
	mu       sync.Mutex
	watching bool
	calls    []call
	trig     *trigger
	dead     bool
	fired    bool
	// firedCall is the call the trigger fired at, to check that a replay
	// reached the same call as the run that counted them.
	firedCall call
}

// verdict is what a wrapper does with one call.
type verdict int

const (
	perform       verdict = iota // make the call
	refuse                       // the kubelet is dead: return ErrCrashed
	fail                         // return ErrInjected without making the call
	performAndDie                // make the call, then the kubelet is dead
)

// enter decides one call. c is built only while the step is watched (the
// describe function is not called otherwise, so unwatched calls cost
// nothing but the lock).
func (g *gate) enter(describe func() call) verdict {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.dead {
		return refuse
	}
	if !g.watching {
		return perform
	}
	c := describe()
	at := len(g.calls)
	g.calls = append(g.calls, c)
	if g.trig == nil || g.trig.at != at || g.fired {
		return perform
	}
	g.fired, g.firedCall = true, c
	switch g.trig.mode {
	case CrashBefore:
		if c.CanCrash {
			g.dead = true
			return refuse
		}
	case CrashAfter:
		if c.CanCrash {
			return performAndDie
		}
	case FailOnce:
		if c.CanFail {
			return fail
		}
	}
	return perform
}

// die marks the kubelet dead after a performAndDie call.
func (g *gate) die() {
	g.mu.Lock()
	g.dead = true
	g.mu.Unlock()
}

// isDead reports whether the kubelet crashed.
func (g *gate) isDead() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.dead
}

// watch starts or stops counting the calls of a step.
func (g *gate) watch(on bool) {
	g.mu.Lock()
	g.watching = on
	g.mu.Unlock()
}

// watched returns the calls counted so far and whether the trigger fired
// and at which call.
func (g *gate) watched() (calls []call, fired bool, at call) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]call(nil), g.calls...), g.fired, g.firedCall
}

// handOver gives next, the gate of a kubelet started in place of this
// one's, the watch of the current step: whether it is watched, the calls
// counted so far and the trigger. next is not shared yet.
func (g *gate) handOver(next *gate) {
	g.mu.Lock()
	defer g.mu.Unlock()
	next.watching, next.trig, next.fired, next.firedCall = g.watching, g.trig, g.fired, g.firedCall
	next.calls = append([]call(nil), g.calls...)
	g.watching = false
}

package resize

import (
	"context"
	"fmt"
	"time"

	"github.com/resizelet/resizelet/resize/core"
)

// Sync runs the node until it is quiet after syncing every admitted pod.
// Call it after changing something under the node (memory usage, a
// container exit). Like Tick, it first writes again the pod statuses and
// deletions the API server refused (and, with FlushCheckpoints, the
// checkpoint files that are behind).
func (n *Node) Sync(ctx context.Context) error {
	if err := n.enter(ctx, "sync"); err != nil {
		return err
	}
	defer n.exit()
	n.retryStatuses(ctx)
	n.flushCheckpoints()
	return n.run(ctx, core.SyncRequested{Now: n.clock.Now()})
}

// Advance moves the node's FakeClock forward by d, firing the timers that
// fall due in time order (the pending-resize retry, pod resyncs and
// backoffs), and runs until quiet after each. The clock jumps from one due
// timer to the next.
//
// A settled node still has a timer due every minute per pod, so a long
// advance would fire millions of them. Once every timer fired in the last
// two core.SkipPeriods changed nothing (their batches only read, every
// call succeeded, and the statuses they wrote differ from the last ones
// at most in the conditions' lastProbeTime; settle.go), Advance skips the rest of d but the last SkipPeriod or
// so in whole SkipPeriods (core.Skip): every timer moves by the span, as
// firing through it would have left it, and the final stretch runs timer
// by timer as before. Anything that changes the node (a write, an event, a
// failed call, another caller's work) restarts the watch. Skipping assumes
// what a simulation guarantees: nothing outside the node changes its
// cgroups or runtime while Advance runs.
func (n *Node) Advance(ctx context.Context, d time.Duration) error {
	if err := n.enter(ctx, "advance"); err != nil {
		return err
	}
	defer n.exit()
	if d < 0 {
		return &argumentError{op: "advance", msg: fmt.Sprintf("negative duration %s", d)}
	}
	fc, ok := n.clock.(*FakeClock)
	if !ok {
		return ErrNotFakeClock
	}
	return n.advanceTo(ctx, fc, fc.Now().Add(d))
}

// advanceTo is Advance to the time target on the node's FakeClock fc
// (Fleet.Advance takes every node to the same time this way).
func (n *Node) advanceTo(ctx context.Context, fc *FakeClock, target time.Time) error {
	n.watch.start()
	defer n.watch.stop()
	seen := n.watch.changes.Load()
	settledSince := fc.Now()
	for {
		if n.closing() {
			return &closedError{op: "advance", why: whyCut}
		}
		n.mu.Lock()
		next := n.core.NextTimer()
		if n.backends.quiet() {
			// The quiet pods' resyncs would not run: time passes them.
			next = n.core.NextWork()
		}
		n.mu.Unlock()
		if next.After(target) {
			break
		}
		now := fc.Now()
		if c := n.watch.changes.Load(); c != seen {
			seen, settledSince = c, now
		}
		if now.Sub(settledSince) >= 2*core.SkipPeriod && target.Sub(now) >= 2*core.SkipPeriod {
			if span := n.skip(fc, now, seen, (target.Sub(now)/core.SkipPeriod-1)*core.SkipPeriod); span > 0 {
				settledSince = settledSince.Add(span)
				continue
			}
		}
		fc.advanceTo(next)
		if err := n.tick(ctx); err != nil {
			return err
		}
	}
	fc.advanceTo(target)
	return n.tick(ctx)
}

// skip moves the core and the clock span later if the core is quiet,
// nothing changed on the node since the count seen and the clock is still
// at now (no other Advance moved it), and returns the span skipped (0
// when it did not skip). Under the lock, a quiet core means every batch
// performed so far has been reported, so its changes are counted already.
func (n *Node) skip(fc *FakeClock, now time.Time, seen uint64, span time.Duration) time.Duration {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.watch.changes.Load() != seen || !fc.Now().Equal(now) || !n.core.Skip(span) {
		return 0
	}
	fc.advanceTo(now.Add(span))
	n.watch.skipped.Add(int64(span))
	return span
}

// Tick fires every timer that is due at the clock's current time and runs
// until quiet. An embedder on a real clock calls it periodically. It first
// writes again the pod statuses and deletions whose write failed, as the
// kubelet's status manager does in its periodic batch, and with
// NodeConfig.FlushCheckpoints the checkpoint files that are behind.
func (n *Node) Tick(ctx context.Context) error {
	if err := n.enter(ctx, "tick"); err != nil {
		return err
	}
	defer n.exit()
	return n.tick(ctx)
}

// tick is Tick for a call that entered already (Advance).
func (n *Node) tick(ctx context.Context) error {
	n.retryStatuses(ctx)
	n.flushCheckpoints()
	return n.run(ctx, core.Tick{Now: n.clock.Now(), Unchanged: n.backends.unchanged()})
}

// advanceFleet is advanceTo as a call of its own (Fleet.Advance).
func (n *Node) advanceFleet(ctx context.Context, fc *FakeClock, target time.Time) error {
	if err := n.enter(ctx, "advance"); err != nil {
		return err
	}
	defer n.exit()
	return n.advanceTo(ctx, fc, target)
}

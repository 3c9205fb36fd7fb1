package core

import (
	"time"

	"github.com/resizelet/resizelet/allocation"
)

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

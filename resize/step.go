package resize

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/resizelet/resizelet/resize/core"
)

// step feeds one input to the core under the lock.
func (n *Node) step(in core.Input) (core.Ready, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	rd, err := n.coreStep(in)
	n.cond.Broadcast()
	return rd, err
}

// run feeds in and then performs batches until the core is quiet: no work
// that can start and no batch in flight anywhere. When ctx is done, the
// batches still to perform fail with its error instead (so that every
// operation the core started ends, as a kubelet's would on its errors)
// and run returns that error once the core is quiet.
func (n *Node) run(ctx context.Context, in core.Input) error {
	rd, err := n.step(in)
	if err != nil {
		return err
	}
	return n.drain(ctx, rd)
}

// drain performs rd's batch and every batch after it until the core is
// quiet.
func (n *Node) drain(ctx context.Context, rd core.Ready) error {
	n.log(ctx, rd.Logs)
	var err error
	buf := drainBuffers.Get().(*drainBuffer)
	defer func() {
		clear(buf.results)
		buf.done = core.BatchDone{}
		drainBuffers.Put(buf)
	}()
	results := buf.results[:0]
	done := &buf.done
	for i := 0; ; i++ {
		if i >= maxBatches {
			return errors.New("node did not become quiet: the core keeps returning work")
		}
		if rd.Batch == nil {
			var quiet bool
			rd, quiet = n.wait()
			n.log(ctx, rd.Logs)
			if quiet {
				return ctx.Err()
			}
			if rd.Batch == nil {
				return &closedError{why: whyCut}
			}
		} else if n.closing() {
			// The node is closing: the batch the core just handed out
			// is left undone, as a stopped kubelet leaves it, for the
			// successor to finish.
			return &closedError{why: whyCut}
		}
		results = n.performInto(ctx, rd.Batch, results)
		buf.results = results
		*done = core.BatchDone{ID: rd.Batch.ID, Results: results, Now: n.clock.Now()}
		if rd, err = n.step(done); err != nil {
			return err
		}
		n.log(ctx, rd.Logs)
	}
}

// drainBuffer is what a drain reuses from one call to the next: its
// results and the input that hands them to the core, which keeps nothing
// of either.
type drainBuffer struct {
	results []core.Result
	done    core.BatchDone
}

var drainBuffers = sync.Pool{New: func() any { return new(drainBuffer) }}

// wait returns the next batch there is for this caller, waiting while
// others perform theirs, or reports that the node is quiet. The Ready
// returned carries the log lines of every Step made meanwhile (operations
// may start and end without a batch). Once the node is closing it returns
// at once, with no batch and not quiet.
func (n *Node) wait() (core.Ready, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var logs []core.LogRecord
	for {
		if n.closing() {
			return core.Ready{Logs: logs}, false
		}
		rd, _ := n.coreStep(core.Poll{})
		logs = append(logs, rd.Logs...)
		rd.Logs = logs
		if rd.Batch != nil {
			return rd, false
		}
		if n.core.InFlight() == 0 {
			// Nothing can start and nobody is performing anything that
			// could make it start: the node is quiet.
			return rd, true
		}
		n.cond.Wait()
	}
}

// log hands the core's log lines to the logger, outside the node's lock,
// each as a record at its level and the time the core logged it. Lines
// the handler does not take at their level are dropped.
func (n *Node) log(ctx context.Context, logs []core.LogRecord) {
	if n.logger == nil || len(logs) == 0 {
		return
	}
	h := n.logger.Handler()
	for _, l := range logs {
		level := l.Level()
		if !h.Enabled(ctx, level) {
			continue
		}
		r := slog.NewRecord(l.Time, level, l.Msg, 0)
		r.AddAttrs(l.Attrs...)
		// A handler's error has nowhere to go: slog.Logger drops it too.
		_ = h.Handle(ctx, r)
	}
}

// coreStep is the core's Step, with n.mu held, recording the metrics the
// step reports before the lock is let go (they are valid until the next
// Step).
func (n *Node) coreStep(in core.Input) (core.Ready, error) {
	rd, err := n.core.Step(in)
	if rd.Metrics != nil {
		n.record(rd.Metrics)
	}
	return rd, err
}

// Package benchhook lets package resize/benchworld drive a resize.Node one
// core step at a time, which it needs to time a resize decision alone (from
// the updated pod to the decision's event) without making those steps a
// part of package resize's API. Package resize sets Of when it is loaded.
package benchhook

import (
	"context"

	"github.com/resizelet/resizelet/resize/core"
)

// Node is the part of a *resize.Node that the benchmark kit drives: Step
// feeds one input to the node's core under its lock, Perform does a batch
// (its cgroup writes, CRI calls and status writes) into buf, and Drain
// performs a Ready and every batch after it until the node is quiet, as the
// node does after each of its own steps.
type Node interface {
	Step(in core.Input) (core.Ready, error)
	Perform(ctx context.Context, b *core.Batch, buf []core.Result) []core.Result
	Drain(ctx context.Context, rd core.Ready) error
}

// Of returns that part of a *resize.Node (given as any: this package cannot
// name the type); package resize sets it in an init function.
var Of func(node any) Node

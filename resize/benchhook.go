package resize

import (
	"context"

	"github.com/resizelet/resizelet/resize/core"
	"github.com/resizelet/resizelet/resize/internal/benchhook"
)

// The benchmark kit (package resize/benchworld) times a node's decision
// one core step at a time through package benchhook.
func init() {
	benchhook.Of = func(node any) benchhook.Node { return benchNode{node.(*Node)} }
}

// benchNode is a Node as benchhook.Node: one pointer, so that it is held
// in the interface without an allocation.
type benchNode struct{ n *Node }

func (b benchNode) Step(in core.Input) (core.Ready, error) { return b.n.step(in) }

func (b benchNode) Perform(ctx context.Context, batch *core.Batch, buf []core.Result) []core.Result {
	return b.n.performInto(ctx, batch, buf)
}

func (b benchNode) Drain(ctx context.Context, rd core.Ready) error { return b.n.drain(ctx, rd) }

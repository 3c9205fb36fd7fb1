package resize

// flusher is a checkpoint that can write its records to its file again
// (state.Store.Flush).
type flusher interface {
	Flush() error
}

// flushCheckpoints writes each checkpoint file again that does not hold
// the node's records, with NodeConfig.FlushCheckpoints. A failure leaves
// the records in memory, to be written at the next call.
func (n *Node) flushCheckpoints() {
	if !n.cfg.FlushCheckpoints {
		return
	}
	for _, st := range []any{n.allocated, n.actuated} {
		if f, ok := st.(flusher); ok {
			_ = f.Flush()
		}
	}
}

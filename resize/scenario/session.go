package scenario

import (
	"context"
	"errors"
	"fmt"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/resize"
)

// Session is a run driven one step at a time, for tools that act between
// and within steps (package resize/explore replays a scenario and crashes
// the kubelet in the middle of one). It starts as Run does (the backends,
// the kubelet, the file's pods) and then runs the steps it is told to, as
// Run runs them; expect steps check their expectations as in Run.
//
// A Session is used from one goroutine.
type Session struct {
	r    *runner
	stop func()
}

// errSessionNotMade is what a Session that NewSession did not make (nil,
// or the zero Session, which runs nothing) answers every call that has an
// error result with; the others answer a zero value.
var errSessionNotMade = errors.New("scenario: Session not made by NewSession")

// made reports whether NewSession made se.
func (se *Session) made() bool { return se != nil && se.r != nil }

// NewSession starts a run of s on the parts opts name: the kubelet is
// started and the file's pods are added. Errors are Run's.
func NewSession(ctx context.Context, s *Scenario, opts Options) (*Session, error) {
	r, stop, err := newRunner(ctx, s, opts)
	if err != nil {
		return nil, err
	}
	return &Session{r: r, stop: stop}, nil
}

// Step runs s.Steps[i], as Run does. Steps are meant to be run in order;
// the error is Run's for that step (a kubelet that does not restart, a
// patch the API server cannot decode). An error of the node's own, such
// as a failed resize, is not returned: it is the step's outcome (Err).
func (se *Session) Step(ctx context.Context, i int) error {
	if !se.made() {
		return errSessionNotMade
	}
	if ctx == nil {
		return fmt.Errorf("step %d: nil context.Context", i)
	}
	r := se.r
	if i < 0 || i >= len(r.s.Steps) {
		return fmt.Errorf("step %d: the scenario has %d steps", i, len(r.s.Steps))
	}
	r.step = i
	r.lastErr = nil
	return r.run(ctx, r.s.Steps[i])
}

// Err is the node's error of the last action step, which the next expect
// step's error key would be checked against.
func (se *Session) Err() error {
	if !se.made() {
		return errSessionNotMade
	}
	return se.r.lastErr
}

// Restart stops the kubelet and starts a new one on the same parts (through
// Options.Deps), as a restartKubelet step does, without writing to the
// transcript: the state comes back from the checkpoints and the runtime.
func (se *Session) Restart(ctx context.Context) error {
	if !se.made() {
		return errSessionNotMade
	}
	if ctx == nil {
		return errors.New("restart kubelet: nil context.Context")
	}
	r := se.r
	if n := r.currentNode(); n != nil {
		n.Close()
	}
	r.setNode(nil)
	n, err := resize.NewNode(ctx, r.cfg, r.nodeDeps())
	if err != nil {
		return fmt.Errorf("restart kubelet: %w", err)
	}
	r.setNode(n)
	return nil
}

// Node is the current kubelet; nil after a Restart that failed.
func (se *Session) Node() *resize.Node {
	if !se.made() {
		return nil
	}
	return se.r.currentNode()
}

// Cluster is the run's API server.
func (se *Session) Cluster() *resize.Cluster {
	if !se.made() {
		return nil
	}
	return se.r.cluster
}

// Config is the node configuration the kubelets are started with.
func (se *Session) Config() resize.NodeConfig {
	if !se.made() {
		return resize.NodeConfig{}
	}
	return se.r.cfg
}

// Cgroups is the cgroup manager the node and the in-memory runtime write
// through (below Options.Deps and Options.RuntimeCgroups).
func (se *Session) Cgroups() cgroup.Manager {
	if !se.made() {
		return nil
	}
	return se.r.b.cgroups
}

// Runtime is the runtime the node calls (below Options.Deps).
func (se *Session) Runtime() cri.Runtime {
	if !se.made() {
		return nil
	}
	return se.r.b.runtime
}

// CheckpointDir is the directory of the run's two checkpoint files.
func (se *Session) CheckpointDir() string {
	if !se.made() {
		return ""
	}
	return se.r.deps.CheckpointDir
}

// Clock is the run's virtual clock.
func (se *Session) Clock() *resize.FakeClock {
	if !se.made() {
		return nil
	}
	return se.r.clock
}

// Mismatches are the expectations that did not hold so far.
func (se *Session) Mismatches() []Mismatch {
	if !se.made() {
		return nil
	}
	return se.r.mismatches
}

// Close ends the run: on real parts it removes the pods and cgroups the
// run made, then it frees the backends and the checkpoint directory.
func (se *Session) Close() {
	if se == nil {
		return
	}
	if se.stop != nil {
		se.stop()
		se.stop = nil
	}
}

// nodeDeps are the parts the next kubelet is started on: the run's own,
// through Options.Deps when it is set.
func (r *runner) nodeDeps() resize.Deps {
	if r.opts.Deps == nil {
		return r.deps
	}
	return r.opts.Deps(r.deps)
}

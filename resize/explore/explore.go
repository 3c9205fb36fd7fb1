package explore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/resizelet/resizelet/allocation/state"
	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/scenario"
)

// Mode is how a point disturbs its call.
type Mode string

// The modes.
const (
	// CrashBefore kills the kubelet just before the call: the call and
	// everything after it never happen; a new kubelet starts on the same
	// checkpoints, runtime and cgroups.
	CrashBefore Mode = "crash-before"
	// CrashAfter kills it just after the call returned.
	CrashAfter Mode = "crash-after"
	// FailOnce makes the call fail once, without doing anything (a
	// checkpoint write keeps its record in memory and not on disk), and
	// the kubelet goes on.
	FailOnce Mode = "fail-once"
)

// Modes are all modes, in the order points list them.
var Modes = []Mode{CrashBefore, CrashAfter, FailOnce}

// Kind is the sort of I/O a call is.
type Kind string

// The kinds of calls.
const (
	KindCheckpoint      Kind = "checkpoint write"       // allocated_pods_state, actuated_pods_state
	KindPodCgroup       Kind = "pod cgroup write"       // the kubelet's cgroup Set
	KindCgroupLifecycle Kind = "cgroup create/delete"   // the kubelet's cgroup Create and Delete
	KindCgroupRead      Kind = "cgroup read"            // Exists, Get, MemoryUsage
	KindContainerCgroup Kind = "container cgroup write" // the in-memory runtime's own write, inside a CRI call
	KindCRIUpdate       Kind = "CRI update"             // UpdateContainerResources, UpdatePodSandboxResources
	KindCRILifecycle    Kind = "CRI kill/start"         // sandbox and container create, start, stop, remove
	KindCRIRead         Kind = "CRI read"               // status, stats, lists
	KindAPI             Kind = "API write"              // status writes and the final pod delete
)

// Outcome is how a point ended.
type Outcome string

// The outcomes.
const (
	// Converged: status, conditions, checkpoints, cgroups and the
	// runtime all agree with the final allocation, and the conditions are
	// those of the run without the fault.
	Converged Outcome = "converged"
	// Drifted: the conditions are those of the run without the fault (a
	// resize reports done) but some real state disagrees.
	Drifted Outcome = "drifted"
	// Stuck: a resize the run without the fault finished is still in
	// progress after the settling time.
	Stuck Outcome = "stuck"
	// Broken: a panic, a kubelet that cannot start again, a lost pod or
	// allocation, or an invariant broken.
	Broken Outcome = "broken"
)

// Owner says whose behaviour a drift is.
type Owner string

// The owners of a drift.
const (
	// OwnerKubelet is a drift the kubelet v1.35.4 shows the same way,
	// with a known cause in its source.
	OwnerKubelet Owner = "kubelet"
	// OwnerResizelet is a drift of resizelet's own: a bug.
	OwnerResizelet Owner = "resizelet"
)

// Options configure an exploration.
type Options struct {
	// Backends are the parts the scenarios run on (the simulated node by
	// default). Options.Deps and RuntimeCgroups must be unset: the
	// explorer sets them.
	Backends scenario.Options
	// ReconcilePodCgroups runs every kubelet with
	// NodeConfig.ReconcilePodCgroups, resizelet's opt-in fix for
	// GapPodCgroup.
	ReconcilePodCgroups bool
	// FlushCheckpoints runs every kubelet with
	// NodeConfig.FlushCheckpoints, the opt-in fix for GapCheckpointFile.
	FlushCheckpoints bool
	// Settle is the virtual time the node runs after the disturbed step
	// before it is judged: resyncs, back-offs and pending-resize retries
	// fire in it. 0 means DefaultSettle.
	Settle time.Duration
	// Steps chooses the steps to explore by index; nil explores every
	// step that runs the node (resize, add, delete, usage, exit, advance,
	// restartKubelet).
	Steps func(i int, st scenario.Step) bool
	// Modes are the modes to try at each call; nil means Modes.
	Modes []Mode
	// TempDir is where each replay's checkpoint files go. "" means a
	// memory filesystem (/dev/shm) when the host has one, and the
	// system's temporary directory otherwise: checkpoint writes sync the
	// file and its directory, which a simulated kubelet crash does not
	// need (the files outlive the process, not the machine), and on a
	// disk those syncs take most of the explorer's time.
	TempDir string
	// ShareCrashStates runs the crash points that leave the node in the
	// same state (a crash before a call and a crash after the last call
	// before it that changed anything) once, and gives the others its
	// outcome, which their Same field says. Replays are deterministic and
	// a crashed kubelet does nothing, so the outcomes are the same
	// (TestSharedCrashStatesMatch holds them so); it saves about a third
	// of the time. By default every point is run.
	ShareCrashStates bool
}

// DefaultSettle is long enough for the retries of a pending resize (30 s,
// then every 3 minutes), several resyncs (every minute) and back-offs.
const DefaultSettle = 10 * time.Minute

// Point is one disturbed call and how the node ended.
type Point struct {
	Step   int             // the scenario step the call was made in
	Action scenario.Action // that step's kind
	Call   int             // the call's index among the step's I/O calls
	Kind   Kind
	Op     string // the call, with the pod and container it is about
	Mode   Mode
	// Verdict is how the node ended.
	Verdict
	// Same, when set, names the point this one shares its end state with
	// (see Options.ShareCrashStates); it was not run itself.
	Same string
	// Elapsed is how long the point's replay took.
	Elapsed time.Duration
}

// ID names the point: "steps[3] call 7 crash-after".
func (p Point) ID() string { return fmt.Sprintf("steps[%d] call %d %s", p.Step, p.Call, p.Mode) }

// Baseline is how a step ends without any fault, which the points of
// that step are judged against.
type Baseline struct {
	Step int
	Verdict
}

// Report is the exploration of one scenario.
type Report struct {
	File string
	Name string
	// Skipped says why the scenario was not explored (it does not apply to
	// the backends); empty otherwise.
	Skipped string
	// ReconcilePodCgroups and FlushCheckpoints are the opt-in fixes the
	// kubelets ran with.
	ReconcilePodCgroups bool
	FlushCheckpoints    bool
	Baselines           []Baseline
	Points              []Point
	Elapsed             time.Duration
}

// Counts are a report's points by outcome.
type Counts struct {
	Points, Converged, DriftKubelet, DriftResizelet, Stuck, Broken int
}

// Add adds o to c.
func (c *Counts) Add(o Counts) {
	if c == nil {
		return
	}
	c.Points += o.Points
	c.Converged += o.Converged
	c.DriftKubelet += o.DriftKubelet
	c.DriftResizelet += o.DriftResizelet
	c.Stuck += o.Stuck
	c.Broken += o.Broken
}

// OK reports whether nothing is broken or stuck and every drift is the
// kubelet's.
func (c Counts) OK() bool { return c.DriftResizelet == 0 && c.Stuck == 0 && c.Broken == 0 }

// Counts counts the report's points.
func (r *Report) Counts() Counts {
	if r == nil {
		return Counts{}
	}
	var c Counts
	for _, p := range r.Points {
		c.Points++
		switch {
		case p.Outcome == Converged:
			c.Converged++
		case p.Outcome == Drifted && p.Owner == OwnerKubelet:
			c.DriftKubelet++
		case p.Outcome == Drifted:
			c.DriftResizelet++
		case p.Outcome == Stuck:
			c.Stuck++
		default:
			c.Broken++
		}
	}
	return c
}

// Scenario explores one scenario: it runs it once to count the I/O calls
// of each chosen step, once per step without a fault (the baseline), and
// then once per point, disturbing that one call, restarting the kubelet
// after a crash, letting the node settle and judging how it ended. A
// scenario that does not apply to the backends comes back Skipped. An
// error means the scenario could not be run at all.
func Scenario(ctx context.Context, s *scenario.Scenario, opts Options) (*Report, error) {
	switch {
	case ctx == nil:
		return nil, errors.New("explore: nil context.Context")
	case s == nil:
		return nil, errors.New("explore: nil *scenario.Scenario")
	}
	start := time.Now()
	if opts.Backends.Deps != nil || opts.Backends.RuntimeCgroups != nil {
		return nil, errors.New("explore: Options.Backends.Deps and RuntimeCgroups are the explorer's own")
	}
	if opts.Settle == 0 {
		opts.Settle = DefaultSettle
	}
	if opts.Modes == nil {
		opts.Modes = Modes
	}
	if opts.TempDir == "" {
		opts.TempDir = memoryTempDir()
	}
	opts.Backends.TempDir = opts.TempDir
	sc := *s
	sc.Node.ReconcilePodCgroups = sc.Node.ReconcilePodCgroups || opts.ReconcilePodCgroups
	sc.Node.FlushCheckpoints = sc.Node.FlushCheckpoints || opts.FlushCheckpoints
	x := &explorer{s: &sc, opts: opts}
	rep := &Report{File: s.File, Name: s.Name, ReconcilePodCgroups: sc.Node.ReconcilePodCgroups, FlushCheckpoints: sc.Node.FlushCheckpoints}

	// The counting run: every chosen step's calls, in order.
	steps := map[int][]call{}
	var order []int
	for i, st := range s.Steps {
		if x.chosen(i, st) {
			order = append(order, i)
		}
	}
	if len(order) == 0 {
		rep.Elapsed = time.Since(start)
		return rep, nil
	}
	err := x.replay(ctx, order[len(order)-1], nil, func(i int, g *gate) { steps[i], _, _ = g.watched() }, nil)
	if errors.Is(err, scenario.ErrNotApplicable) {
		rep.Skipped = err.Error()
		return rep, nil
	}
	if err != nil {
		return nil, fmt.Errorf("explore %s: %w", s.File, err)
	}

	for _, i := range order {
		base, err := x.point(ctx, i, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("explore %s: steps[%d] without a fault: %w", s.File, i, err)
		}
		rep.Baselines = append(rep.Baselines, Baseline{Step: i, Verdict: x.judgeAlone(base)})

		calls := steps[i]
		// ran keeps, per crash state, the point that was run for it.
		ran := map[int]Point{}
		mutations := 0
		for k, c := range calls {
			// A runtime's own cgroup writes happen inside the kubelet's
			// call: they are part of that call's state, not a state of
			// their own.
			before := mutations
			if c.Mutating && c.CanCrash {
				mutations++
			}
			for _, mode := range opts.Modes {
				if (mode == FailOnce && !c.CanFail) || (mode != FailOnce && !c.CanCrash) {
					continue
				}
				p := Point{Step: i, Action: s.Steps[i].Action, Call: k, Kind: c.Kind, Op: c.Op, Mode: mode}
				// The state a crash leaves: the number of the kubelet's
				// calls that changed something before it. Replays are
				// deterministic and a crashed kubelet does nothing, so two
				// crashes after the same calls leave the same state.
				stateKey := -1
				if mode != FailOnce {
					stateKey = before
					if mode == CrashAfter && c.Mutating {
						stateKey = mutations
					}
				}
				if first, ok := ran[stateKey]; ok && stateKey >= 0 && opts.ShareCrashStates {
					p.Verdict, p.Same = first.Verdict, first.ID()
					p.Differences = slices.Clone(first.Differences)
					rep.Points = append(rep.Points, p)
					continue
				}
				t0 := time.Now()
				end, err := x.point(ctx, i, &trigger{at: k, mode: mode}, &c)
				if err != nil {
					return nil, fmt.Errorf("explore %s: %s: %w", s.File, p.ID(), err)
				}
				p.Verdict = x.judge(end, base, mode)
				p.Elapsed = time.Since(t0)
				rep.Points = append(rep.Points, p)
				if stateKey >= 0 {
					ran[stateKey] = p
				}
			}
		}
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// memoryTempDir is /dev/shm when it is a directory this process can make
// directories in, else "".
func memoryTempDir() string {
	const shm = "/dev/shm"
	dir, err := os.MkdirTemp(shm, "resizelet-explore-")
	if err != nil {
		return ""
	}
	os.Remove(dir)
	return shm
}

// explorer holds one scenario's exploration.
type explorer struct {
	s    *scenario.Scenario
	opts Options
}

// chosen reports whether step i is explored: a step that runs the node
// (not an expectation, not the arming of a scenario's own fault) that
// Options.Steps accepts.
func (x *explorer) chosen(i int, st scenario.Step) bool {
	switch st.Action {
	case scenario.ActionExpect, scenario.ActionFault:
		return false
	}
	if x.opts.Steps != nil {
		return x.opts.Steps(i, st)
	}
	return true
}

// replay runs the scenario's steps up to and including last, with every
// kubelet's parts behind a gate. Watched steps (all of them when seen is
// set, arm's step otherwise) count their calls, and seen is told of them
// after each step. At arm's step its trigger arms the gate; when that step
// is done and the kubelet crashed, or stopped on the failure, a new one is
// started on the same parts (which finishes a deletion the fault cut
// short: the API server's pod carries its deletionTimestamp). Then, if
// settle is set, it is called with the session.
func (x *explorer) replay(ctx context.Context, last int, arm *armed, seen func(int, *gate), settle func(*scenario.Session) error) (err error) {
	var mu sync.Mutex
	var cur *gate
	current := func() *gate {
		mu.Lock()
		defer mu.Unlock()
		return cur
	}
	var names *namer
	opts := x.opts.Backends
	var rc *runtimeCgroups
	opts.RuntimeCgroups = func(m cgroup.Manager) cgroup.Manager {
		rc = &runtimeCgroups{Manager: m, current: current}
		return rc
	}
	opts.Deps = func(d resize.Deps) resize.Deps {
		g := &gate{}
		mu.Lock()
		prev := cur
		cur = g
		mu.Unlock()
		if prev != nil {
			// A kubelet started within a watched step (restartKubelet)
			// goes on with the step's count and trigger.
			prev.handOver(g)
		}
		if names == nil {
			names = newNamer(d.Runtime, d.Cluster)
			if rc != nil {
				rc.names = names
			}
		}
		out := resize.Deps{
			Cgroups: &gatedCgroups{m: d.Cgroups, g: g, names: names},
			Runtime: &gatedRuntime{rt: d.Runtime, g: g, names: names},
			Clock:   d.Clock,
		}
		api := &gatedAPI{API: d.Cluster, g: g, names: names}
		out.Cluster = api
		if rr, ok := d.Cluster.(resize.RequestResizer); ok {
			out.Cluster = &gatedRequestAPI{gatedAPI: api, rr: rr}
		}
		// Each kubelet opens the checkpoint files anew, as a restarted
		// kubelet loads them.
		alloc, aerr := state.OpenCheckpoint(ctx, d.CheckpointDir, state.AllocatedStateFile)
		act, ferr := state.OpenCheckpoint(ctx, d.CheckpointDir, state.ActuatedStateFile)
		if errors.Join(aerr, ferr) != nil {
			// NewNode reports a checkpoint it cannot open when it opens it
			// itself: leave the directory to it.
			out.CheckpointDir = d.CheckpointDir
			return out
		}
		out.Allocated = &gatedState{st: alloc, file: state.AllocatedStateFile, g: g, names: names}
		out.Actuated = &gatedState{st: act, file: state.ActuatedStateFile, g: g, names: names}
		return out
	}

	se, err := scenario.NewSession(ctx, x.s, opts)
	if err != nil {
		return err
	}
	defer func() {
		// A broken node may panic again while a run on real parts is
		// cleaned up; the point is judged already.
		defer func() {
			if p := recover(); p != nil && err == nil {
				err = fmt.Errorf("%w: cleaning up: %v", errPanic, p)
			}
		}()
		se.Close()
	}()
	for i := 0; i <= last; i++ {
		st := x.s.Steps[i]
		if st.Action == scenario.ActionExpect {
			// Expectations do no I/O worth disturbing; skipping them keeps
			// the replay to what the node does.
			continue
		}
		g := current()
		watch := seen != nil || (arm != nil && arm.step == i)
		if watch {
			g.mu.Lock()
			g.calls = nil
			if arm != nil && arm.step == i {
				g.trig = arm.trig
			}
			g.mu.Unlock()
			g.watch(true)
		}
		stepErr := se.Step(ctx, i)
		// A step that restarts the kubelet ends on a new gate, which took
		// the watch over.
		g = current()
		g.watch(false)
		if seen != nil {
			seen(i, g)
		}
		if arm != nil && arm.step == i {
			arm.gate = g
			if g.isDead() || stepErr != nil || se.Node() == nil {
				// The kubelet crashed, or stopped on the failure (a restart
				// whose start failed): it is started again, as a
				// supervisor starts a kubelet that exited.
				if err := se.Restart(ctx); err != nil {
					arm.restartErr = err
					return nil
				}
			}
		} else if stepErr != nil {
			return stepErr
		}
	}
	if settle != nil {
		return settle(se)
	}
	return nil
}

// armed is the fault of one point's replay and what became of it.
type armed struct {
	step int
	trig *trigger

	gate       *gate
	restartErr error
}

// errPanic marks a panic recovered while a replay's session was closed.
var errPanic = errors.New("panic")

// point replays the scenario up to step with trig armed there (no fault
// when trig is nil), lets the node settle and returns how it ended. want
// is the call the trigger must fire at, as the counting run saw it.
func (x *explorer) point(ctx context.Context, step int, trig *trigger, want *call) (end *endState, err error) {
	arm := &armed{step: step, trig: trig}
	end = &endState{}
	defer func() {
		if p := recover(); p != nil {
			end.broken = append(end.broken, fmt.Sprintf("panic: %v\n%s", p, debug.Stack()))
			err = nil
		}
	}()
	rerr := x.replay(ctx, step, arm, nil, func(se *scenario.Session) error {
		if arm.restartErr != nil {
			end.broken = append(end.broken, "the kubelet does not start again: "+arm.restartErr.Error())
			return nil
		}
		n := se.Node()
		if err := n.Sync(ctx); err != nil {
			end.broken = append(end.broken, "sync: "+err.Error())
		}
		if err := n.Advance(ctx, x.opts.Settle); err != nil {
			end.broken = append(end.broken, "settle: "+err.Error())
		}
		x.observe(ctx, se, end)
		return nil
	})
	if arm.restartErr != nil && len(end.broken) == 0 {
		end.broken = append(end.broken, "the kubelet does not start again: "+arm.restartErr.Error())
	}
	if errors.Is(rerr, errPanic) {
		end.broken = append(end.broken, rerr.Error())
		rerr = nil
	}
	if rerr != nil {
		return nil, rerr
	}
	if trig != nil && arm.gate != nil {
		_, fired, at := arm.gate.watched()
		switch {
		case !fired:
			end.broken = append(end.broken, fmt.Sprintf("the replay made fewer calls than the counting run: call %d never came", trig.at))
		case want != nil && (at.Kind != want.Kind || at.Op != want.Op):
			end.broken = append(end.broken, fmt.Sprintf("the replay diverged: call %d was %s %q, the counting run's was %s %q", trig.at, at.Kind, at.Op, want.Kind, want.Op))
		}
	}
	return end, nil
}

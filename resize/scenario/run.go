package scenario

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/cri/crilabels"
	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/metrics"
)

// Options choose what the scenario runs on. The zero value is the simulated
// node: in-memory cgroups and an in-memory runtime.
type Options struct {
	// CgroupRoot, when set, puts pod and container cgroups in the real
	// cgroup filesystem mounted there (a relative directory is taken from
	// the working directory); its version overrides the file's
	// node.cgroupVersion.
	CgroupRoot string
	// CRIEndpoint, when set, runs containers in the CRI runtime at that
	// socket ("unix:///run/containerd/containerd.sock"), with Image.
	CRIEndpoint string
	Image       string
	// RuntimeHandler, with CRIEndpoint, is the runtime handler the
	// node's sandboxes are run with (host.WithRuntimeHandler); empty is
	// the runtime's default.
	RuntimeHandler string
	// CgroupDriver, with CRIEndpoint, is the cgroup driver of the real
	// runtime (containerd's SystemdCgroup): a scenario whose node uses
	// the other is not applicable there (NotApplicable). Empty is
	// cgroupfs.
	CgroupDriver cgroup.Driver
	// Plans asks for the dry-run plan of every resize step (Node.Plan),
	// taken just before the step runs, in Result.Plans.
	Plans bool
	// HotPods, when set, is the node's and the API server's HotPods (see
	// NodeConfig.HotPods): -1 freezes every settled pod at once, which
	// must change nothing in the transcript.
	HotPods int
	// Deps, when set, is given the parts of every kubelet the run starts
	// (at the start and at each kubelet restart) and returns the parts
	// that kubelet uses: a tool that watches or fails the node's I/O
	// (package resize/explore) wraps them here. The Deps it is given name
	// the checkpoints by CheckpointDir; it may open them itself and return
	// them as Allocated and Actuated.
	Deps func(resize.Deps) resize.Deps
	// RuntimeCgroups, when set, wraps the cgroup manager the in-memory
	// runtime writes container cgroups through (a real runtime writes its
	// own).
	RuntimeCgroups func(cgroup.Manager) cgroup.Manager
	// TempDir is where the run's checkpoint directory is made; "" means
	// os.TempDir().
	TempDir string
	// Metrics, when set, records the kubelet's resize metrics of every
	// kubelet the run starts (resize.Deps.Metrics), and expect.metrics
	// reads them there, so values recorded there before the run count
	// too. Without it, a scenario with expect.metrics records them on a
	// Metrics of its own, on a new registry, and the others record none.
	Metrics *metrics.Metrics
}

// ErrNotApplicable is returned by Run for a scenario that cannot run on
// the real parts Options name (see NotApplicable).
var ErrNotApplicable = errors.New("does not apply to these backends")

// Start is the virtual clock's time when a scenario starts:
// resize.DefaultStart, as every simulated clock.
var Start = resize.DefaultStart

// Result is the outcome of a run: the transcript, and every expectation
// that did not hold (none means the scenario passed).
type Result struct {
	Transcript []byte
	Mismatches []Mismatch
	// Plans are the dry-run plans of the resize steps, with Options.Plans.
	Plans []StepPlan
}

// StepPlan is the plan of one resize step: what the node would do, or why
// the API server refuses the resize.
type StepPlan struct {
	Step int
	Pod  PodRef
	Plan *resize.Plan // nil when the API server refused the resize
	Err  error
}

// Mismatch is one expectation that did not hold, or an action step that
// failed with no expect.error to claim its error.
type Mismatch struct {
	Step int    // index in steps
	Path string // key path below expect, e.g. "containers.pause.resources.requests.cpu"
	Want string
	Got  string
	// Action is set for an action step's error that no expect.error
	// claimed before the next action step or the end of the file: the
	// action ("resize"), with Path "error" and the error in Got.
	Action Action
}

// diffAbove is the length beyond which Mismatch.String shows a diff
// rather than the two values: a one-word difference in a long message
// (an event, a condition message) is lost between two whole lines.
const diffAbove = 80

// String renders the mismatch as a readable diff: the wanted and found
// values on a line each, or, when either is longer than 80 bytes or has
// more than one line, go-cmp's diff of the two (cmp.Diff(want, got):
// "-" lines are wanted, "+" lines found, the rest common to both).
func (m Mismatch) String() string {
	if m.Action != "" {
		return fmt.Sprintf("steps[%d]: %s failed, and no expect.error after it claims the error:\n  %s", m.Step, m.Action, m.Got)
	}
	if len(m.Want) > diffAbove || len(m.Got) > diffAbove || strings.Contains(m.Want, "\n") || strings.Contains(m.Got, "\n") {
		diff := strings.TrimRight(cmp.Diff(m.Want, m.Got), "\n")
		return fmt.Sprintf("steps[%d]: expect.%s (-want +got):\n  %s", m.Step, m.Path, strings.ReplaceAll(diff, "\n", "\n  "))
	}
	return fmt.Sprintf("steps[%d]: expect.%s\n  - want: %s\n  + got:  %s", m.Step, m.Path, m.Want, m.Got)
}

// runner holds the state of one run.
type runner struct {
	s       *Scenario
	b       *backends
	cfg     resize.NodeConfig
	deps    resize.Deps
	cluster *resize.Cluster
	clock   *resize.FakeClock

	mu   sync.Mutex
	node *resize.Node

	opts    Options
	plans   []StepPlan
	t       *transcript
	step    int
	lastErr error
	// unclaimed is the mismatch of the last action step's error until an
	// expect.error claims it; the next action step or the end of the file
	// makes it one.
	unclaimed *Mismatch
	// metrics are the run's metrics (Options.Metrics); nil when none.
	metrics *metrics.Metrics
	cursor  map[PodRef]int // per pod: index in Cluster.Events() after the last expect naming it
	// created is when the runner added each pod, on the virtual clock: the
	// AGE of kubectl get pods when the cluster sets no creation timestamp.
	created    map[PodRef]time.Time
	mismatches []Mismatch
}

// Run runs the scenario and checks its expectations. An invalid scenario
// that could only be detected by running it (a pod in pods: that does not
// fit, a patch the API server cannot decode) is an *Error; a failure of
// the engine or the backends is another error.
func Run(ctx context.Context, s *Scenario, opts Options) (*Result, error) {
	r, stop, err := newRunner(ctx, s, opts)
	if err != nil {
		return nil, err
	}
	defer stop()
	for i, st := range s.Steps {
		r.step = i
		if err := r.run(ctx, st); err != nil {
			return nil, err
		}
	}
	r.settleError()
	r.t.final(r)
	return &Result{Transcript: r.t.bytes(), Mismatches: r.mismatches, Plans: r.plans}, nil
}

// newRunner builds the backends, starts the kubelet and admits the file's
// pods. stop ends the run: it removes what a run on real parts left on the
// host and frees the backends.
func newRunner(ctx context.Context, s *Scenario, opts Options) (_ *runner, _ func(), err error) {
	switch {
	case ctx == nil:
		return nil, nil, errors.New("scenario: nil context.Context")
	case s == nil:
		return nil, nil, errors.New("scenario: nil *Scenario")
	}
	var undo []func()
	stop := func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	if why := NotApplicable(s, opts); why != "" {
		return nil, nil, fmt.Errorf("%w: %s", ErrNotApplicable, why)
	}
	b, err := newBackends(ctx, s, opts)
	if err != nil {
		return nil, nil, err
	}
	undo = append(undo, func() { b.close(ctx) })
	if s.Node.SwapBehavior == "LimitedSwap" && b.version == cgroup.V1 {
		// The kubelet gives containers swap only on cgroup v2, so a swap
		// story cannot be told on a v1 host.
		return nil, nil, fmt.Errorf("%w: swap (LimitedSwap) needs cgroup v2, the host has v1", ErrNotApplicable)
	}
	dir, err := os.MkdirTemp(opts.TempDir, "resizesim-")
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint dir: %w", err)
	}
	undo = append(undo, func() { os.RemoveAll(dir) })

	// The backend's config: the file's node with the cgroup version and
	// driver of the parts, and on real cgroups the private parent.
	cfg := b.backend.Config()
	cfg.HotPods = opts.HotPods
	if opts.Image != "" {
		cfg.Image = opts.Image
	}
	r := &runner{
		s:       s,
		b:       b,
		opts:    opts,
		cfg:     cfg,
		clock:   resize.NewFakeClock(Start),
		cursor:  map[PodRef]int{},
		created: map[PodRef]time.Time{},
		t:       newTranscript(),
		step:    -1,
	}
	// A scenario is finite and its transcript names every event: keep
	// them all.
	r.cluster = resize.NewCluster(resize.ClusterOptions{Profile: cfg.Profile, FeatureGates: cfg.FeatureGates, EventLimit: -1, HotPods: opts.HotPods})
	r.metrics = opts.Metrics
	if r.metrics == nil && s.assertsMetrics() {
		if r.metrics, err = metrics.New(prometheus.NewRegistry()); err != nil {
			return nil, nil, err
		}
	}
	r.deps = resize.Deps{
		Cluster:       r.cluster,
		Cgroups:       b.cgroups,
		Runtime:       b.runtime,
		Clock:         r.clock,
		CheckpointDir: dir,
		Metrics:       r.metrics,
	}
	r.t.header(s, cfg)
	undo = append(undo, func() {
		if n := r.currentNode(); n != nil {
			n.Close()
		}
	})
	if err := r.start(ctx); err != nil {
		return nil, nil, err
	}
	return r, stop, nil
}

func (r *runner) currentNode() *resize.Node {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.node
}

func (r *runner) setNode(n *resize.Node) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.node = n
}

// start starts the kubelet and admits the file's pods in order.
func (r *runner) start(ctx context.Context) error {
	snap := r.snapshot()
	n, err := resize.NewNode(ctx, r.cfg, r.nodeDeps())
	if err != nil {
		return fmt.Errorf("start kubelet: %w", err)
	}
	r.setNode(n)
	r.t.section("kubelet started")
	r.report(snap)

	rejectable := map[PodRef]bool{}
	for _, st := range r.s.Steps {
		if e := st.Expect; e != nil && e.Pod != nil && e.Admitted != nil && !*e.Admitted {
			rejectable[*e.Pod] = true
		}
	}
	for i, pod := range r.s.Pods {
		snap := r.snapshot()
		ref := PodRef{Namespace: pod.Namespace, Name: pod.Name}
		r.t.section(fmt.Sprintf("pods[%d]: add %s", i, ref))
		r.created[ref] = r.clock.Now()
		if _, err := n.AddPod(ctx, pod.DeepCopy()); err != nil {
			r.t.line("error: %v", err)
			return &Error{File: r.s.File, Step: -1, Field: fmt.Sprintf("pods[%d]", i), Msg: fmt.Sprintf("pod %s was not created: %v", ref, err)}
		}
		r.admission(ref)
		r.report(snap)
		if info, err := n.Pod(ref.Namespace, ref.Name); (err != nil || !info.Admitted) && !rejectable[ref] {
			why := ""
			if p, err := r.cluster.GetPod(ctx, ref.Namespace, ref.Name); err == nil && p.Status.Message != "" {
				why = fmt.Sprintf(" (%s: %s)", p.Status.Reason, p.Status.Message)
			}
			return &Error{File: r.s.File, Step: -1, Field: fmt.Sprintf("pods[%d]", i),
				Msg: fmt.Sprintf("pod %s does not fit the node%s; a pod in pods: must be admitted unless a later expect names it with admitted: false", ref, why)}
		}
	}
	return nil
}

// patchField is the Error field of a place in a resize patch (a
// PatchError's Path): "resize.patch.spec.containers[0].resources.limits[cpu]",
// or for a JSON patch operation "resize.patch[1]".
func patchField(path string) string {
	switch {
	case path == "":
		return "resize.patch"
	case strings.HasPrefix(path, "["):
		return "resize.patch" + path
	}
	return "resize.patch." + path
}

// run runs one step and writes what it did to the transcript.
func (r *runner) run(ctx context.Context, st Step) error {
	r.t.section(fmt.Sprintf("steps[%d]: %s", r.step, st))
	if st.Action == ActionExpect {
		r.expect(st.Expect)
		return nil
	}
	r.settleError()
	snap := r.snapshot()
	n := r.currentNode()
	var err error
	switch st.Action {
	case ActionResize:
		op := resize.ResizeOp{Namespace: st.Pod.Namespace, Name: st.Pod.Name, PatchType: st.PatchType, Patch: st.Patch}
		if r.opts.Plans {
			plan, perr := n.Plan(ctx, op)
			r.plans = append(r.plans, StepPlan{Step: r.step, Pod: st.Pod, Plan: plan, Err: perr})
		}
		_, err = n.Resize(ctx, op)
		var pe *resize.PatchError
		switch {
		case errors.Is(err, resize.ErrConflict):
			// A stale metadata.resourceVersion is the API server's 409,
			// a refusal like validation's, which an expect may be about.
		case errors.As(err, &pe):
			// A patch the API server cannot decode or apply is an error
			// of the file, at the place in the patch it names.
			return &Error{File: r.s.File, Step: r.step, Field: patchField(pe.Path), Msg: (&resize.PatchError{Err: pe.Err}).Error()}
		case errors.Is(err, resize.ErrAmountTooLarge):
			// Amounts only resizelet refuses (a real API server would
			// take them, so no expect can be about them; the parser
			// catches those the patch alone shows) are errors of the
			// file too.
			return &Error{File: r.s.File, Step: r.step, Field: "resize.patch", Msg: err.Error()}
		}
	case ActionAdd:
		ref := PodRef{Namespace: st.Manifest.Namespace, Name: st.Manifest.Name}
		r.created[ref] = r.clock.Now()
		if _, err = n.AddPod(ctx, st.Manifest.DeepCopy()); err == nil {
			r.admission(ref)
		} else if errors.Is(err, resize.ErrAmountTooLarge) || errors.Is(err, resize.ErrUIDTaken) {
			// Refusals of resizelet's own, as for resize above.
			return &Error{File: r.s.File, Step: r.step, Field: "add.pod", Msg: err.Error()}
		}
	case ActionDelete:
		err = n.DeletePod(ctx, st.Pod.Namespace, st.Pod.Name)
	case ActionUsage:
		err = r.usage(ctx, n, st)
	case ActionExit:
		err = r.exit(ctx, n, st)
	case ActionFault:
		r.fault(st)
	case ActionAdvance:
		err = n.Advance(ctx, st.Duration)
	case ActionRestartKubelet:
		// The pods admitted and not finished: the new kubelet admits them
		// again, and may reject some.
		var active []PodRef
		for _, p := range r.cluster.ListPods(ctx) {
			if info, err := n.Pod(p.Namespace, p.Name); err == nil && info.Admitted && !terminalPhase(p.Status.Phase) {
				active = append(active, PodRef{Namespace: p.Namespace, Name: p.Name})
			}
		}
		n.Close()
		r.t.line("kubelet stopped")
		if st.Allocatable != nil {
			// The new kubelet, and every one started after it, has this
			// allocatable (as after a change of its reservations).
			alloc := r.cfg.Allocatable.DeepCopy()
			maps.Copy(alloc, st.Allocatable)
			r.cfg.Allocatable = alloc
			r.t.line("allocatable now %s", formatList(alloc))
		}
		var nn *resize.Node
		nn, err = resize.NewNode(ctx, r.cfg, r.nodeDeps())
		if err != nil {
			return fmt.Errorf("steps[%d]: restart kubelet: %w", r.step, err)
		}
		r.setNode(nn)
		r.t.line("kubelet started (state recovered from checkpoints and the runtime)")
		for _, ref := range active {
			p, err := r.cluster.GetPod(ctx, ref.Namespace, ref.Name)
			if err != nil || p.Status.Phase != v1.PodFailed {
				continue
			}
			if info, err := nn.Pod(ref.Namespace, ref.Name); err != nil || !info.Admitted {
				r.admission(ref)
			}
		}
	}
	r.lastErr = err
	if err != nil {
		r.t.line("error: %v", err)
		r.unclaimed = &Mismatch{Step: r.step, Path: "error", Want: "an expect.error after the step", Got: err.Error(), Action: st.Action}
	}
	r.report(snap)
	return nil
}

// settleError makes the last action step's error a mismatch if no
// expect.error claimed it: a step that fails unseen would let the file
// pass with the error only in the transcript.
func (r *runner) settleError() {
	if r.unclaimed != nil {
		r.mismatches = append(r.mismatches, *r.unclaimed)
		r.unclaimed = nil
	}
}

func (r *runner) containerID(n *resize.Node, st Step) (string, error) {
	info, err := n.Pod(st.Pod.Namespace, st.Pod.Name)
	if err != nil {
		return "", err
	}
	id := info.ContainerIDs[st.Container]
	if id == "" {
		return "", fmt.Errorf("pod %s has no running container %q", st.Pod, st.Container)
	}
	return id, nil
}

func (r *runner) usage(ctx context.Context, n *resize.Node, st Step) error {
	id, err := r.containerID(n, st)
	if err != nil {
		return err
	}
	if err := cri.SetMemoryUsage(ctx, r.b.base, id, st.Memory.Value()); err != nil {
		return fmt.Errorf("set memory usage of %s/%s: %w", st.Pod, st.Container, err)
	}
	return n.Sync(ctx)
}

func (r *runner) exit(ctx context.Context, n *resize.Node, st Step) error {
	if r.b.exiter == nil {
		return fmt.Errorf("exit steps need the in-memory runtime")
	}
	id, err := r.containerID(n, st)
	if err != nil {
		return err
	}
	reason := "Error"
	if st.ExitCode == 0 {
		reason = "Completed"
	}
	if err := r.b.exiter.Exit(id, st.ExitCode, reason); err != nil {
		return fmt.Errorf("exit %s/%s: %w", st.Pod, st.Container, err)
	}
	return n.Sync(ctx)
}

// fault arms a fault. It does not run the node: a fault changes nothing
// until a matching call comes.
func (r *runner) fault(st Step) {
	err := errors.New(st.Error)
	if st.Call != CallCgroupWrite {
		f := cri.Fault{Method: st.Call, Err: err, Times: st.Times}
		if st.HasPod {
			f.PodName, f.PodNamespace = st.Pod.Name, st.Pod.Namespace
			f.ContainerName = st.Container
		}
		r.b.rtFaults.Inject(f)
		return
	}
	// The cgroup paths are resolved at call time: container IDs and even
	// the pod's QoS directory can change between now and the write. They
	// are resolved from the API server's pod and the runtime's labels, not
	// by asking the node, which is in the middle of the write.
	match := func(string) bool { return true }
	if st.HasPod {
		ref, container := st.Pod, st.Container
		match = func(path string) bool { return r.cgroupOf(ref, container, path) }
	}
	r.b.cgFaults.Inject(match, err, st.Times)
}

// cgroupOf reports whether path is the cgroup of the pod ref (container
// "") or of its container: the pod cgroup the kubelet names from the pod's
// QoS class and UID, and the container cgroups the runtime made for the
// containers it labels with that pod and name.
func (r *runner) cgroupOf(ref PodRef, container, path string) bool {
	pod, err := r.cluster.GetPod(context.Background(), ref.Namespace, ref.Name)
	if err != nil {
		return false
	}
	podCgroup := r.cfg.WithDefaults().PodCgroup(pod.Status.QOSClass, pod.UID)
	if container == "" {
		return path == podCgroup
	}
	ctrs, err := r.b.base.ListContainers(context.Background(), &runtimeapi.ContainerFilter{LabelSelector: map[string]string{
		crilabels.PodUID: string(pod.UID), crilabels.ContainerName: container,
	}})
	if err != nil {
		return false
	}
	for _, c := range ctrs {
		if path == cgconfig.ContainerCgroupName(podCgroup, c.Id, r.cfg.CgroupDriver) {
			return true
		}
	}
	return false
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/apiserver"
)

// Config is one run of the example.
type Config struct {
	Nodes       int           // nodes in the fleet; every fifth is large
	PodsPerNode int           // pods placed on each node at the start
	Duration    time.Duration // simulated time
	Interval    time.Duration // how often the updater runs
	Seed        uint64        // the usage noise and the pod names
	// Patch is how the updater patches the resize subresource: "json" (a
	// JSON patch, as the VPA updater sends it) or "strategic" (a
	// strategic merge patch, as kubectl does).
	Patch   string
	Kubelet resize.Profile // the nodes' and API server's version
	Quiet   bool           // print the summary only
}

// The updater's constants, the VPA updater's for InPlaceOrRecreate
// (vertical-pod-autoscaler/pkg/updater/restriction/pods_inplace_restriction.go):
// a resize Deferred for more than five minutes falls back to eviction; and
// its default update threshold, a 10% difference between the requests and
// the recommendation. The warm-up is the example's: the recommender needs
// some samples before its percentiles mean anything.
const (
	deferredTimeout = 5 * time.Minute
	updateThreshold = 0.10
	warmUp          = 5 * time.Minute
)

// The events the VPA updater records on the pods it acts on
// (pods_inplace_restriction.go, InPlaceUpdate; pods_eviction_restriction.go,
// Evict).
const (
	reasonInPlaceResized = "InPlaceResizedByVPA"
	messageInPlace       = "Pod was resized in place by VPA Updater."
	reasonEvicted        = "EvictedByVPA"
	messageEvicted       = "Pod was evicted by VPA Updater to apply resource recommendation."
	updaterSource        = "vpa-updater"
)

// Summary is what a run did.
type Summary struct {
	Nodes, PodsStart, PodsEnd int
	// Requested counts the in-place resizes the API server accepted.
	Requested int
	// AtOnce completed within the request (admitted and actuated);
	// Deferred and Infeasible were so at first; InProgress were neither
	// done nor pending when the request returned.
	AtOnce, Deferred, Infeasible, InProgress int
	// Refused counts resizes the API server refused (from 1.36, beyond
	// the node's allocatable); they are recreated too.
	Refused int
	// Completed counts the in-place resizes that completed, at once or
	// later; Durations are their times from request to ResizeCompleted.
	Completed int
	Durations []time.Duration
	// DeferredDone counts the Deferred ones that completed later;
	// DeferredDurations are their times to complete.
	DeferredDone      int
	DeferredDurations []time.Duration
	// PendingAtEnd are in-place resizes neither completed nor given up
	// when the run ended.
	PendingAtEnd int
	// Recreated counts recreations by cause: "infeasible", "deferred"
	// (over deferredTimeout), "error" (the kubelet's ResizeError) and
	// "refused".
	Recreated map[string]int
	// Waiting are replacements no node had room for at the end.
	Waiting int
}

// Recreations is the number of pods recreated.
func (s *Summary) Recreations() int {
	n := 0
	for _, k := range s.Recreated {
		n += k
	}
	return n
}

// attempt is an in-place resize the updater watches.
type attempt struct {
	at       time.Time
	from, to amounts
	// generation is the pod's generation the resize made, which the
	// kubelet's ResizeCompleted event names.
	generation int64
	deferred   bool // seen Deferred
}

// sim is one run: the fleet, the updater's view and the summary.
type sim struct {
	cfg     Config
	world   *world
	fleet   *resize.Fleet
	out     io.Writer
	rng     *rand.Rand
	names   *namer
	recs    map[*workload]*recommender
	pods    map[string]*replica // live pods by name
	order   []string            // live pod names, sorted
	flight  map[string]*attempt // in-place resizes being watched
	waiting []*v1.Pod           // replacements no node had room for yet
	events  uint64              // the API server's events read so far
	sum     Summary
}

// Run runs the example: it builds the fleet and its pods, then every
// Interval of simulated time samples usage, recommends, resizes and
// recreates, and advances the fleet, for Duration. It prints one line per
// action to out (none with Quiet) and returns the summary.
func Run(ctx context.Context, cfg Config, out io.Writer) (*Summary, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	s := &sim{
		cfg: cfg,
		out: out,
		fleet: resize.NewFleet(resize.FleetOptions{
			Start: start,
			// The example keeps every pod decoded (it reads them all
			// every minute) and reads the events it needs each minute.
			Cluster: resize.ClusterOptions{Profile: cfg.Kubelet, HotPods: 2 * cfg.Nodes * cfg.PodsPerNode, EventLimit: 1 << 16},
		}),
		rng:    rand.New(rand.NewPCG(cfg.Seed, 0x5650415f)),
		recs:   map[*workload]*recommender{},
		pods:   map[string]*replica{},
		flight: map[string]*attempt{},
		sum:    Summary{Nodes: cfg.Nodes, Recreated: map[string]int{}},
	}
	defer s.fleet.Close()
	s.names = newNamer(s.rng)
	s.world = newWorld(cfg.PodsPerNode)
	for _, wl := range s.world.workloads {
		s.recs[wl] = newRecommender(start)
	}
	if err := s.build(ctx); err != nil {
		return nil, err
	}
	s.sum.PodsStart = len(s.pods)
	for t := time.Duration(0); t < cfg.Duration; t += cfg.Interval {
		if err := s.round(ctx); err != nil {
			return nil, fmt.Errorf("at %s: %w", clock(t), err)
		}
		if err := s.fleet.Advance(ctx, min(cfg.Interval, cfg.Duration-t)); err != nil {
			return nil, fmt.Errorf("at %s: advance: %w", clock(t), err)
		}
	}
	if err := s.readEvents(); err != nil {
		return nil, err
	}
	if err := s.watch(ctx, true); err != nil {
		return nil, err
	}
	s.sum.PendingAtEnd = len(s.flight)
	s.sum.Waiting = len(s.waiting)
	s.sum.PodsEnd = len(s.pods) + len(s.waiting)
	return &s.sum, nil
}

func (cfg Config) check() error {
	switch {
	case cfg.Nodes < 1:
		return fmt.Errorf("-nodes %d: want at least 1", cfg.Nodes)
	case cfg.PodsPerNode < 10 || cfg.PodsPerNode > 100:
		return fmt.Errorf("-pods %d: want 10 to 100 pods per node (the nodes run at most 110)", cfg.PodsPerNode)
	case cfg.Duration <= 0:
		return fmt.Errorf("-duration %s: want a positive duration", cfg.Duration)
	case cfg.Interval <= 0:
		return fmt.Errorf("-interval %s: want a positive duration", cfg.Interval)
	case cfg.Patch != "json" && cfg.Patch != "strategic":
		return fmt.Errorf("-patch %q: want json or strategic", cfg.Patch)
	}
	return nil
}

// clock prints a span of simulated time as hh:mm:ss.
func clock(d time.Duration) string {
	d = d.Round(time.Second)
	return fmt.Sprintf("%02d:%02d:%02d", int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60)
}

// start is when the simulated hour begins.
var start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// now is the simulated time since the start.
func (s *sim) now() time.Duration { return s.fleet.Now().Sub(start) }

func (s *sim) printf(format string, args ...any) {
	if s.cfg.Quiet {
		return
	}
	fmt.Fprintf(s.out, "%s "+format+"\n", append([]any{clock(s.now())}, args...)...)
}

// build starts the nodes and places each node's pods on it, as a
// Deployment's ReplicaSet and the scheduler would have.
func (s *sim) build(ctx context.Context) error {
	for i := 1; i <= s.cfg.Nodes; i++ {
		if _, err := s.fleet.AddNode(ctx, s.world.nodeConfig(i, s.cfg.Kubelet, s.cfg.PodsPerNode), resize.Deps{}); err != nil {
			return err
		}
	}
	for i, wls := range s.world.placement(s.cfg.Nodes, s.cfg.PodsPerNode) {
		if i == 0 {
			continue
		}
		node, _ := s.fleet.Node(fmt.Sprintf("node-%d", i))
		pods := make([]*v1.Pod, 0, len(wls))
		for _, wl := range wls {
			name := s.names.pod(wl)
			pods = append(pods, podFor(wl, s.names.replicaSet(wl), name, node.Config().Name, wl.requests))
			s.addReplica(name, wl)
		}
		created, err := node.AddPods(ctx, pods)
		if err != nil {
			return err
		}
		for _, p := range created {
			if p.Status.Phase != v1.PodRunning {
				return fmt.Errorf("pod %s on %s: the kubelet left it %s: %s", p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.Message)
			}
		}
	}
	if !s.cfg.Quiet {
		fmt.Fprintf(s.out, "%d nodes (%s), %d pods:", s.cfg.Nodes, s.nodeKinds(), len(s.pods))
		for _, wl := range s.world.workloads {
			n := 0
			for _, r := range s.pods {
				if r.wl == wl {
					n++
				}
			}
			fmt.Fprintf(s.out, " %s %d (%s)", wl.name, n, wl.requests)
			if wl != s.world.workloads[len(s.world.workloads)-1] {
				fmt.Fprint(s.out, ",")
			}
		}
		fmt.Fprintln(s.out)
	}
	return nil
}

func (s *sim) nodeKinds() string {
	counts := map[string]int{}
	for i := 1; i <= s.cfg.Nodes; i++ {
		counts[s.world.kindOf(i).name]++
	}
	var parts []string
	for _, k := range []nodeKind{s.world.standard, s.world.large} {
		if counts[k.name] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[k.name], k))
		}
	}
	return strings.Join(parts, ", ")
}

// addReplica records a live pod with a usage factor of its own.
func (s *sim) addReplica(name string, wl *workload) {
	s.pods[name] = &replica{name: name, wl: wl, factor: 0.8 + 0.4*s.rng.Float64()}
	i, _ := slices.BinarySearch(s.order, name)
	s.order = slices.Insert(s.order, i, name)
}

func (s *sim) removeReplica(name string) {
	delete(s.pods, name)
	if i, ok := slices.BinarySearch(s.order, name); ok {
		s.order = slices.Delete(s.order, i, i+1)
	}
}

// usage is a pod's usage at the current time: its workload's shape times
// its factor, with 5% of noise.
func (s *sim) usage(r *replica) (cpu, memory float64) {
	m := s.now().Minutes()
	noise := func() float64 { return 1 + 0.05*s.rng.NormFloat64() }
	return max(1, r.wl.cpu(m)*r.factor*noise()), max(1, r.wl.memory(m)*r.factor*noise())
}

// round is one pass of the recommender and the updater.
func (s *sim) round(ctx context.Context) error {
	if err := s.readEvents(); err != nil {
		return err
	}
	now := s.fleet.Now()
	for _, name := range s.order {
		r := s.pods[name]
		cpu, mem := s.usage(r)
		s.recs[r.wl].add(cpu, mem, now)
	}
	if err := s.watch(ctx, false); err != nil {
		return err
	}
	if err := s.place(ctx); err != nil {
		return err
	}
	if s.now() < warmUp {
		return nil
	}
	targets := map[*workload]amounts{}
	for _, wl := range s.world.workloads {
		targets[wl] = s.recs[wl].target(wl.maxAllowed)
	}
	pods := map[string]*v1.Pod{}
	for _, p := range s.fleet.Cluster().ListPods() {
		pods[p.Name] = p
	}
	for _, name := range slices.Clone(s.order) {
		r, p := s.pods[name], pods[name]
		if p == nil || s.flight[name] != nil || p.Status.Phase != v1.PodRunning {
			continue
		}
		target := targets[r.wl]
		if current := requestsOf(p); offBy(current.cpu, target.cpu) || offBy(current.memory, target.memory) {
			if err := s.resize(ctx, r, p, current, target); err != nil {
				return err
			}
		}
	}
	return nil
}

// offBy reports whether the recommendation differs from the request by
// more than the update threshold.
func offBy(request, target int64) bool {
	if request == 0 {
		return target != 0
	}
	diff := float64(target-request) / float64(request)
	return diff > updateThreshold || diff < -updateThreshold
}

// resize sends an in-place resize to the pod's resize subresource and
// reads the kubelet's answer, as the VPA updater's InPlaceUpdate does and
// its next loop sees.
func (s *sim) resize(ctx context.Context, r *replica, p *v1.Pod, from, to amounts) error {
	pt, patch := resizePatch(s.cfg.Patch, r.wl, to)
	stored, err := s.fleet.ResizePod(ctx, namespace, r.name, pt, patch)
	var forbidden *apiserver.ForbiddenError
	switch {
	case errors.As(err, &forbidden):
		s.sum.Refused++
		s.printf("resize    %s on %s %s -> %s refused: %s", r.name, p.Spec.NodeName, from, to, forbidden.Err)
		return s.recreate(ctx, r, p.Spec.NodeName, "refused", to)
	case err != nil:
		return fmt.Errorf("resize %s: %w", r.name, err)
	}
	s.fleet.Cluster().RecordEvent(resize.Event{Time: s.fleet.Now(), Namespace: namespace, Pod: r.name, Type: v1.EventTypeNormal,
		Reason: reasonInPlaceResized, Message: messageInPlace, Source: updaterSource})
	s.sum.Requested++
	a := &attempt{at: s.fleet.Now(), from: from, to: to, generation: stored.Generation}
	got, err := s.fleet.Cluster().GetPod(namespace, r.name)
	if err != nil {
		return err
	}
	node := got.Spec.NodeName
	switch reason, msg := resizeState(got); reason {
	case "":
		s.sum.AtOnce++
		s.complete(r.name, a, a.at)
		s.printf("resize    %s on %s %s -> %s done", r.name, node, from, to)
	case v1.PodReasonDeferred:
		s.sum.Deferred++
		a.deferred = true
		s.flight[r.name] = a
		s.printf("resize    %s on %s %s -> %s deferred: %s", r.name, node, from, to, msg)
	case v1.PodReasonInfeasible:
		s.sum.Infeasible++
		s.printf("resize    %s on %s %s -> %s infeasible: %s", r.name, node, from, to, msg)
		return s.recreate(ctx, r, node, "infeasible", to)
	default:
		s.sum.InProgress++
		s.flight[r.name] = a
		s.printf("resize    %s on %s %s -> %s in progress", r.name, node, from, to)
	}
	return nil
}

// resizeState is where a pod's resize stands, from its conditions, as the
// VPA updater reads them (CanEvictInPlacingPod): the PodResizePending
// reason (Deferred or Infeasible), "InProgress" (with the error message
// when the condition's reason is Error), or "" when neither condition is
// set and the status shows the spec's requests: the resize is done.
func resizeState(p *v1.Pod) (reason, message string) {
	for _, c := range p.Status.Conditions {
		switch c.Type {
		case v1.PodResizePending:
			return c.Reason, c.Message
		case v1.PodResizeInProgress:
			if c.Reason == v1.PodReasonError {
				return "Error", c.Message
			}
			return "InProgress", ""
		}
	}
	if len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].Resources == nil {
		return "InProgress", ""
	}
	if requestsOf(p) != (amounts{p.Status.ContainerStatuses[0].Resources.Requests.Cpu().MilliValue(), p.Status.ContainerStatuses[0].Resources.Requests.Memory().Value()}) {
		return "InProgress", ""
	}
	return "", ""
}

// complete records a completed in-place resize.
func (s *sim) complete(name string, a *attempt, at time.Time) {
	delete(s.flight, name)
	s.sum.Completed++
	s.sum.Durations = append(s.sum.Durations, at.Sub(a.at))
	if a.deferred {
		s.sum.DeferredDone++
		s.sum.DeferredDurations = append(s.sum.DeferredDurations, at.Sub(a.at))
	}
}

// readEvents reads the events recorded since the last call and completes
// the in-place resizes whose ResizeCompleted came, at the event's time.
func (s *sim) readEvents() error {
	events, dropped := s.fleet.Cluster().EventsSince(s.events)
	if dropped > 0 {
		return fmt.Errorf("the API server dropped %d events before the updater read them", dropped)
	}
	s.events += uint64(len(events))
	var done []resize.Event
	for _, e := range events {
		if a := s.flight[e.Pod]; a != nil && e.Reason == resize.ReasonResizeCompleted && completedGeneration(e.Message) >= a.generation {
			done = append(done, e)
		}
	}
	sort.SliceStable(done, func(i, j int) bool {
		if !done[i].Time.Equal(done[j].Time) {
			return done[i].Time.Before(done[j].Time)
		}
		return done[i].Pod < done[j].Pod
	})
	for _, e := range done {
		a := s.flight[e.Pod]
		if a == nil {
			continue
		}
		s.complete(e.Pod, a, e.Time)
		if !s.cfg.Quiet {
			fmt.Fprintf(s.out, "%s done      %s %s -> %s after %s\n", clock(e.Time.Sub(start)), e.Pod, a.from, a.to, e.Time.Sub(a.at))
		}
	}
	return nil
}

// completedGeneration is the generation a ResizeCompleted event's message
// names (Pod resize completed: {"containers":[...],"generation":N}), 0
// when it names none.
func completedGeneration(message string) int64 {
	i := strings.Index(message, "{")
	if i < 0 {
		return 0
	}
	var m struct {
		Generation int64 `json:"generation"`
	}
	if json.Unmarshal([]byte(message[i:]), &m) != nil {
		return 0
	}
	return m.Generation
}

// watch looks at the in-place resizes still in flight: an Infeasible one,
// one that ended in error, and one Deferred for longer than the timeout
// fall back to recreation, as the VPA updater's do with InPlaceOrRecreate;
// the others wait. At the end (final) nothing is recreated.
func (s *sim) watch(ctx context.Context, final bool) error {
	names := make([]string, 0, len(s.flight))
	for name := range s.flight {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		a := s.flight[name]
		p, err := s.fleet.Cluster().GetPod(namespace, name)
		if err != nil {
			return err
		}
		reason, msg := resizeState(p)
		if reason == "" {
			// Done since the events were read (another pod's resize or
			// removal made room): its ResizeCompleted comes with the
			// next events, which time it.
			continue
		}
		if final {
			continue
		}
		r := s.pods[name]
		switch {
		case reason == v1.PodReasonInfeasible:
			s.sum.Infeasible++
			s.printf("infeasible %s on %s: %s", name, p.Spec.NodeName, msg)
			delete(s.flight, name)
			if err := s.recreate(ctx, r, p.Spec.NodeName, "infeasible", a.to); err != nil {
				return err
			}
		case reason == "Error":
			delete(s.flight, name)
			if err := s.recreate(ctx, r, p.Spec.NodeName, "error", a.to); err != nil {
				return err
			}
		case reason == v1.PodReasonDeferred && s.fleet.Now().Sub(a.at) > deferredTimeout:
			delete(s.flight, name)
			if err := s.recreate(ctx, r, p.Spec.NodeName, "deferred", a.to); err != nil {
				return err
			}
		case reason == v1.PodReasonDeferred:
			a.deferred = true
		}
	}
	return nil
}

// recreate evicts the pod and has its ReplicaSet create a replacement with
// the recommended requests (as the VPA admission controller sets them on
// the new pod), placed by the scheduler on the first node it fits; a
// replacement no node has room for waits and is placed by a later round.
func (s *sim) recreate(ctx context.Context, r *replica, node, cause string, to amounts) error {
	s.fleet.Cluster().RecordEvent(resize.Event{Time: s.fleet.Now(), Namespace: namespace, Pod: r.name, Type: v1.EventTypeNormal,
		Reason: reasonEvicted, Message: messageEvicted, Source: updaterSource})
	if err := s.fleet.DeletePod(ctx, namespace, r.name); err != nil {
		return fmt.Errorf("evict %s: %w", r.name, err)
	}
	s.removeReplica(r.name)
	s.sum.Recreated[cause]++
	name := s.names.pod(r.wl)
	pod := podFor(r.wl, s.names.replicaSet(r.wl), name, "", to)
	where, err := s.fleet.Schedule(pod)
	if errors.Is(err, resize.ErrUnschedulable) {
		s.waiting = append(s.waiting, pod)
		s.printf("recreate  %s (%s on %s) -> %s %s waiting: %s", r.name, cause, node, name, to, err)
		return nil
	}
	if err != nil {
		return err
	}
	if err := s.create(ctx, pod, where, r.wl); err != nil {
		return err
	}
	s.printf("recreate  %s (%s on %s) -> %s on %s %s", r.name, cause, node, name, where, to)
	return nil
}

// create creates a replacement on the node the scheduler chose.
func (s *sim) create(ctx context.Context, pod *v1.Pod, node string, wl *workload) error {
	pod.Spec.NodeName = node
	created, err := s.fleet.CreatePod(ctx, pod)
	if err != nil {
		return fmt.Errorf("create %s: %w", pod.Name, err)
	}
	if created.Status.Phase != v1.PodRunning {
		return fmt.Errorf("create %s on %s: the kubelet left it %s: %s", pod.Name, node, created.Status.Phase, created.Status.Message)
	}
	s.addReplica(pod.Name, wl)
	return nil
}

// place places the replacements that waited for a node, in the order they
// came, where they fit now. Once one of a workload does not fit, the
// workload's others (sized alike) wait for the next round without
// asking the scheduler.
func (s *sim) place(ctx context.Context) error {
	kept := s.waiting[:0]
	unfit := map[string]bool{}
	for _, pod := range s.waiting {
		if unfit[pod.Labels["app"]] {
			kept = append(kept, pod)
			continue
		}
		where, err := s.fleet.Schedule(pod)
		if errors.Is(err, resize.ErrUnschedulable) {
			unfit[pod.Labels["app"]] = true
			kept = append(kept, pod)
			continue
		}
		if err != nil {
			return err
		}
		wl := s.world.workloadOf(pod)
		if err := s.create(ctx, pod, where, wl); err != nil {
			return err
		}
		s.printf("placed    %s on %s", pod.Name, where)
	}
	s.waiting = kept
	return nil
}

func (w *world) workloadOf(p *v1.Pod) *workload {
	for _, wl := range w.workloads {
		if wl.name == p.Labels["app"] {
			return wl
		}
	}
	return nil
}

// resizePatch is the patch that sets the app container's requests to to
// and its limits in the workload's ratio, of the kind asked for: a JSON
// patch of "add" operations on each value, the VPA updater's
// (pkg/updater/inplace/resource_updates.go, with the requests before the
// limits and cpu before memory), or the strategic merge patch kubectl
// sends.
func resizePatch(kind string, wl *workload, to amounts) (types.PatchType, []byte) {
	lim := amounts{cpu: int64(float64(to.cpu) * wl.limitRatio), memory: int64(float64(to.memory) * wl.limitRatio)}
	if kind == "json" {
		type op struct {
			Op    string `json:"op"`
			Path  string `json:"path"`
			Value string `json:"value"`
		}
		var ops []op
		for _, part := range []struct {
			field string
			a     amounts
		}{{"requests", to}, {"limits", lim}} {
			ops = append(ops,
				op{"add", "/spec/containers/0/resources/" + part.field + "/cpu", formatCPU(part.a.cpu)},
				op{"add", "/spec/containers/0/resources/" + part.field + "/memory", formatMemory(part.a.memory)})
		}
		b, _ := json.Marshal(ops)
		return apiserver.JSONPatch, b
	}
	patch := fmt.Sprintf(`{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":%q,"memory":%q},"limits":{"cpu":%q,"memory":%q}}}]}}`,
		formatCPU(to.cpu), formatMemory(to.memory), formatCPU(lim.cpu), formatMemory(lim.memory))
	return apiserver.StrategicMergePatch, []byte(patch)
}

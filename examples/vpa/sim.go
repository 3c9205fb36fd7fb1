package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"

	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/apiserver"
	"github.com/resizelet/resizelet/resize/kubeclient"
)

// This file is the simulation around the updater: the fleet and its
// clock, the pods' usage and the recommender it feeds, the pods the
// Deployments create at the start, and the ReplicaSets and
// the scheduler that replace an evicted pod. Of these, only the
// ReplicaSets act like a cluster client, and they create the replacements
// through the same client-go interface as the updater; the rest is what
// only a simulation can do: move the clock (Fleet.Advance), choose a
// replacement's node (Fleet.Schedule, as the scheduler would: the
// client-go adapter does not serve a pod's binding), and place the first
// pods on their nodes in bulk (Node.AddPods).

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
	// Progress, when set, gets a line at most every ProgressEvery of wall
	// time while the fleet is built (nodes and pods so far) and while the
	// simulated time runs (how far, resizes requested): a long run shows
	// it is moving. The lines say nothing of the results, which stay the
	// same for a seed however fast the machine is.
	Progress io.Writer
	// Workers is how many nodes the fleet advances at once
	// (resize.FleetOptions.Workers; 0: as many as GOMAXPROCS). The run is
	// the same whatever it is (TestRunIsTheSameOnOneOrManyWorkers).
	Workers int

	// Kubeconfig, when set, runs the example on the real API server it
	// names, with nodes that agents run there (RunReal, real.go), instead
	// of on a simulated fleet. Nodes is then how many of them to wait for
	// and use (0: those there), and Duration and Interval are of the
	// wall clock.
	Kubeconfig string
	NodePrefix string  // the nodes used are those whose names start with it
	Keep       bool    // keep the run's namespace and its pods at the end
	QPS        float32 // the client's queries per second
	Burst      int     // and its burst
}

// sim is one run: the fleet, the client-go client over it, the updater,
// the simulated usage and the summary.
type sim struct {
	cfg      Config
	progress progress
	world    *world
	fleet    *resize.Fleet
	client   kubernetes.Interface // kubeclient.New(fleet)
	updater  *updater
	log      *logger
	rng      *rand.Rand
	names    *namer
	recs     map[*workload]*recommender
	livePods
	waiting []*v1.Pod // replacements no node had room for yet
	sum     Summary
}

// livePods are a run's live pods by name, for their usage, and their
// names, which sorted gives in order.
type livePods struct {
	pods map[string]*replica
	// order holds the names sorted up to sortedLen, then the names added
	// since; it may still hold names removed since (removed says so).
	// Inserting each name in place would cost a copy of the list per
	// pod, quadratic in the fleet's build.
	order     []string
	sortedLen int
	removed   bool
}

// add records a live pod with a usage factor of its own, drawn from rng.
func (l *livePods) add(name string, wl *workload, rng *rand.Rand) {
	l.pods[name] = &replica{name: name, wl: wl, factor: 0.8 + 0.4*rng.Float64()}
	l.order = append(l.order, name)
}

func (l *livePods) remove(name string) {
	delete(l.pods, name)
	l.removed = true
}

// sorted returns the live pods' names in order: the names added since the
// last call are sorted and merged in, the removed ones left out.
func (l *livePods) sorted() []string {
	if !l.removed && l.sortedLen == len(l.order) {
		return l.order
	}
	old, added := l.order[:l.sortedLen], l.order[l.sortedLen:]
	slices.Sort(added)
	merged := make([]string, 0, len(l.pods))
	for len(old) > 0 || len(added) > 0 {
		var next string
		if len(added) == 0 || (len(old) > 0 && old[0] <= added[0]) {
			next, old = old[0], old[1:]
		} else {
			next, added = added[0], added[1:]
		}
		// A name removed and added again is in both halves.
		if _, live := l.pods[next]; live && (len(merged) == 0 || merged[len(merged)-1] != next) {
			merged = append(merged, next)
		}
	}
	l.order, l.sortedLen, l.removed = merged, len(merged), false
	return l.order
}

// line is the run's first line: the nodes, of the kinds given, and the
// pods of each workload with the requests it starts with.
func (l *livePods) line(nodes int, kinds string, w *world) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d nodes (%s), %d pods:", nodes, kinds, len(l.pods))
	for _, wl := range w.workloads {
		n := 0
		for _, r := range l.pods {
			if r.wl == wl {
				n++
			}
		}
		fmt.Fprintf(&b, " %s %d (%s)", wl.name, n, wl.requests)
		if wl != w.workloads[len(w.workloads)-1] {
			fmt.Fprint(&b, ",")
		}
	}
	return b.String()
}

// Run runs the example: it builds the fleet and its pods, then every
// Interval of simulated time samples usage, recommends, runs the updater
// (which resizes and recreates through client-go), and advances the
// fleet, for Duration. It prints one line per action to out (none with
// Quiet) and returns the summary.
func Run(ctx context.Context, cfg Config, out io.Writer) (*Summary, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	s := &sim{
		cfg: cfg,
		fleet: resize.NewFleet(resize.FleetOptions{
			Start:   start,
			Workers: cfg.Workers,
			// The cluster keeps many events, so that the updater's event
			// cache, listing again after its watch closed, still finds
			// the completions of the resizes in flight.
			Cluster: resize.ClusterOptions{Profile: cfg.Kubelet, EventLimit: 1 << 16},
		}),
		rng:      rand.New(rand.NewPCG(cfg.Seed, 0x5650415f)),
		recs:     map[*workload]*recommender{},
		livePods: livePods{pods: map[string]*replica{}},
		sum:      Summary{Nodes: cfg.Nodes, Recreated: map[string]int{}},
	}
	defer s.fleet.Close()
	s.client = kubeclient.New(s.fleet)
	s.log = &logger{out: out, quiet: cfg.Quiet, now: s.fleet.Now}
	s.updater = &updater{
		client:   s.client,
		recorder: clusterRecorder{cluster: s.fleet.Cluster(), now: s.fleet.Now},
		now:      s.fleet.Now,
		patch:    cfg.Patch,
		replace:  s.replace,
		log:      s.log,
		sum:      &s.sum,
		flight:   map[types.NamespacedName]*attempt{},
	}
	s.progress = progress{out: cfg.Progress, began: time.Now()}
	s.names = newNamer(s.rng)
	s.world = newWorld(cfg.PodsPerNode)
	for _, wl := range s.world.workloads {
		s.recs[wl] = newRecommender(start)
	}
	// The updater's caches: each waits for the changes the cluster has
	// made when it is read. The pod cache watches the pods being created
	// (build), rather than listing them all once built: a list holds every
	// pod decoded at once, at 5,000 nodes more memory than the run has.
	watching, stop := context.WithCancel(ctx)
	defer stop()
	s.updater.pods = watchPods(watching, s.client, namespace, s.fleet.Cluster().ResourceVersion)
	if err := s.build(ctx); err != nil {
		return nil, err
	}
	s.updater.completed = watchCompletions(watching, s.client, s.fleet.Cluster().EventCount)
	s.sum.PodsStart = len(s.pods)
	for t := time.Duration(0); t < cfg.Duration; t += cfg.Interval {
		s.progress.printf("%s of %s simulated, %d in-place resizes requested", clock(t), clock(cfg.Duration), s.sum.Requested)
		if err := s.round(ctx); err != nil {
			return nil, fmt.Errorf("at %s: %w", clock(t), err)
		}
		if err := s.fleet.Advance(ctx, min(cfg.Interval, cfg.Duration-t)); err != nil {
			return nil, fmt.Errorf("at %s: advance: %w", clock(t), err)
		}
	}
	if err := s.updater.completions(ctx); err != nil {
		return nil, err
	}
	s.sum.PendingAtEnd = len(s.updater.flight)
	s.sum.Waiting = len(s.waiting)
	s.sum.PodsEnd = len(s.pods) + len(s.waiting)
	return &s.sum, nil
}

func (cfg Config) check() error {
	switch {
	case cfg.Nodes < 1 && cfg.Kubeconfig == "":
		return fmt.Errorf("-nodes %d: want at least 1", cfg.Nodes)
	case cfg.Nodes < 0:
		return fmt.Errorf("-nodes %d: want 0 (the nodes there) or more", cfg.Nodes)
	case cfg.PodsPerNode < 10 || cfg.PodsPerNode > 110:
		return fmt.Errorf("-pods %d: want 10 to 110 pods per node (the nodes run at most 110)", cfg.PodsPerNode)
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

// logger prints the example's action lines, each after the time since
// origin (the simulated hour's start when zero); nothing when quiet.
type logger struct {
	out    io.Writer
	quiet  bool
	now    func() time.Time
	origin time.Time
}

// printf prints a line at the current time.
func (l *logger) printf(format string, args ...any) { l.printfAt(l.now(), format, args...) }

// printfAt prints a line at time t.
func (l *logger) printfAt(t time.Time, format string, args ...any) {
	if l.quiet {
		return
	}
	origin := l.origin
	if origin.IsZero() {
		origin = start
	}
	fmt.Fprintf(l.out, "%s "+format+"\n", append([]any{clock(t.Sub(origin))}, args...)...)
}

// clusterRecorder is the record.EventRecorder the updater records its
// events with. The client-go adapter serves events for reading only (the
// kubelet records them; a client's Create is 405), so where the VPA
// updater's recorder would send an event through the events API, this one
// writes it into the cluster's event log, at the fleet's time, from
// vpa-updater, where a client lists it with the kubelet's. The cluster's
// log is of pod events: an event about anything else is not kept, and
// annotations are dropped.
type clusterRecorder struct {
	cluster *apiserver.Cluster
	now     func() time.Time
}

var _ record.EventRecorder = clusterRecorder{}

// Event records an event about a pod.
func (r clusterRecorder) Event(object runtime.Object, eventtype, reason, message string) {
	pod, ok := object.(*v1.Pod)
	if !ok {
		return
	}
	r.cluster.RecordEvent(context.Background(), apiserver.Event{Time: r.now(), Namespace: pod.Namespace, Pod: pod.Name, Type: eventtype,
		Reason: reason, Message: message, Source: updaterSource})
}

// Eventf is Event with a formatted message.
func (r clusterRecorder) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	r.Event(object, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

// AnnotatedEventf is Eventf; the cluster's events carry no annotations.
func (r clusterRecorder) AnnotatedEventf(object runtime.Object, _ map[string]string, eventtype, reason, messageFmt string, args ...any) {
	r.Eventf(object, eventtype, reason, messageFmt, args...)
}

// build starts the nodes and places each node's pods on it, as a
// Deployment's ReplicaSet and the scheduler would have before the updater
// started.
func (s *sim) build(ctx context.Context) error {
	for i := 1; i <= s.cfg.Nodes; i++ {
		if _, err := s.fleet.AddNode(ctx, s.world.nodeConfig(i, s.cfg.Kubelet), resize.Deps{}); err != nil {
			return err
		}
		s.progress.printf("started %d of %d nodes", i, s.cfg.Nodes)
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
		s.progress.printf("built %d of %d nodes, %d pods", i, s.cfg.Nodes, len(s.pods))
		// The pod cache keeps up node by node, so that its watch, whose
		// buffer is bounded, never falls far behind.
		if err := s.updater.pods.wait(ctx); err != nil {
			return err
		}
		for _, p := range created {
			if p.Status.Phase != v1.PodRunning {
				return fmt.Errorf("pod %s on %s: the kubelet left it %s: %s", p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.Message)
			}
		}
	}
	if !s.cfg.Quiet {
		fmt.Fprintln(s.log.out, s.line(s.cfg.Nodes, s.nodeKinds(), s.world))
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
func (s *sim) addReplica(name string, wl *workload) { s.add(name, wl, s.rng) }

func (s *sim) removeReplica(name string) { s.remove(name) }

// usage is a pod's usage at the current time: its workload's shape times
// its factor, with 5% of noise.
func (s *sim) usage(r *replica) (cpu, memory float64) {
	return usageAt(s.rng, r, s.fleet.Now().Sub(start).Minutes())
}

// usageAt is a pod's usage at minute m of the workloads' hour, its noise
// drawn from rng.
func usageAt(rng *rand.Rand, r *replica, m float64) (cpu, memory float64) {
	noise := func() float64 { return 1 + 0.05*rng.NormFloat64() }
	return max(1, r.wl.cpu(m)*r.factor*noise()), max(1, r.wl.memory(m)*r.factor*noise())
}

// round is one pass of the recommender and the updater: usage samples
// into the recommenders (what the VPA recommender gets from the metrics
// server), the updater's look at its resizes in flight, the replacements
// that waited for room placed, and, after the warm-up, the updater's
// in-place resizes to the recommendations.
func (s *sim) round(ctx context.Context) error {
	now := s.fleet.Now()
	for _, name := range s.sorted() {
		r := s.pods[name]
		cpu, mem := s.usage(r)
		s.recs[r.wl].add(cpu, mem, now)
	}
	if err := s.updater.observe(ctx); err != nil {
		return err
	}
	if err := s.place(ctx); err != nil {
		return err
	}
	if now.Sub(start) < warmUp {
		return nil
	}
	return s.updater.update(ctx, s.world.vpaObjects(namespace, s.recs))
}

// vpaObjects are the workloads' VPA objects in namespace ns, each with
// its recommender's target.
func (w *world) vpaObjects(ns string, recs map[*workload]*recommender) []vpaObject {
	vpas := make([]vpaObject, 0, len(w.workloads))
	for _, wl := range w.workloads {
		vpas = append(vpas, vpaObject{
			name: wl.name, namespace: ns,
			selector:  labels.SelectorFromSet(labels.Set{appLabel: wl.name}).String(),
			container: appContainer,
			target:    recs[wl].target(wl.maxAllowed),
		})
	}
	return vpas
}

// replace is what follows the updater's eviction of a pod: its
// ReplicaSet creates a replacement, with the recommended requests (as
// the VPA admission controller sets them on the new pod), on the first
// node it fits (the scheduler's choice, Fleet.Schedule); a replacement no
// node has room for waits and is placed by a later round.
func (s *sim) replace(ctx context.Context, evicted *v1.Pod, cause string, to amounts) error {
	s.removeReplica(evicted.Name)
	wl := s.world.workloadOf(evicted)
	if wl == nil {
		return fmt.Errorf("evicted pod %s: no workload %q", evicted.Name, evicted.Labels[appLabel])
	}
	name := s.names.pod(wl)
	pod := podFor(wl, s.names.replicaSet(wl), name, "", to)
	where, err := s.fleet.Schedule(ctx, pod)
	if errors.Is(err, resize.ErrUnschedulable) {
		s.waiting = append(s.waiting, pod)
		s.log.printf("recreate  %s (%s on %s) -> %s %s waiting: %s", evicted.Name, cause, evicted.Spec.NodeName, name, to, err)
		return nil
	}
	if err != nil {
		return err
	}
	if err := s.create(ctx, pod, where, wl); err != nil {
		return err
	}
	s.log.printf("recreate  %s (%s on %s) -> %s on %s %s", evicted.Name, cause, evicted.Spec.NodeName, name, where, to)
	return nil
}

// create creates a replacement through client-go, bound to the node the
// scheduler chose; the node's kubelet admits and starts it before Create
// returns.
func (s *sim) create(ctx context.Context, pod *v1.Pod, node string, wl *workload) error {
	pod.Spec.NodeName = node
	created, err := s.client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
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
	var err error
	s.waiting, err = placeWaiting(ctx, s.waiting, s.fleet.Schedule, func(ctx context.Context, pod *v1.Pod, node string) error {
		return s.create(ctx, pod, node, s.world.workloadOf(pod))
	}, s.log)
	return err
}

// placeWaiting is place on a list of waiting replacements, with the
// scheduler and the creation of the run it is for (the simulation's or
// the real API server's): it creates each on the node schedule finds,
// and returns those still waiting, in order.
func placeWaiting(ctx context.Context, waiting []*v1.Pod, schedule func(context.Context, *v1.Pod) (string, error), create func(context.Context, *v1.Pod, string) error, log *logger) ([]*v1.Pod, error) {
	kept := waiting[:0]
	unfit := map[string]bool{}
	for _, pod := range waiting {
		if unfit[pod.Labels[appLabel]] {
			kept = append(kept, pod)
			continue
		}
		where, err := schedule(ctx, pod)
		if errors.Is(err, resize.ErrUnschedulable) {
			unfit[pod.Labels[appLabel]] = true
			kept = append(kept, pod)
			continue
		}
		if err != nil {
			return waiting, err
		}
		if err := create(ctx, pod, where); err != nil {
			return waiting, err
		}
		log.printf("placed    %s on %s", pod.Name, where)
	}
	return kept, nil
}

// workloadOf is the workload whose label the pod has, nil for none.
func (w *world) workloadOf(p *v1.Pod) *workload {
	for _, wl := range w.workloads {
		if wl.name == p.Labels[appLabel] {
			return wl
		}
	}
	return nil
}

// ProgressEvery is how often, at most, a run prints a progress line
// (Config.Progress).
const ProgressEvery = 10 * time.Second

// progress prints the progress lines of a run, each after the wall time
// since it began, at most one every ProgressEvery; nothing without out.
type progress struct {
	out         io.Writer
	began, last time.Time
}

func (p *progress) printf(format string, args ...any) {
	if p.out == nil || time.Since(p.last) < ProgressEvery {
		return
	}
	p.last = time.Now()
	fmt.Fprintf(p.out, "vpa: [%4.0fs] "+format+"\n", append([]any{p.last.Sub(p.began).Seconds()}, args...)...)
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/resizelet/resizelet/resize"
)

// This file runs the example on a real API server (-kubeconfig), with
// nodes that resizesim agent processes run there (resize/kubeapi): the
// updater of updater.go, unchanged, with a client-go clientset built from
// the kubeconfig, on the wall clock. What the simulation does with the
// fleet, this does with the clientset: it finds the nodes (the v1.Node
// objects whose names have the prefix, Ready, with a fresh Lease),
// creates the pods bound to them (spec.nodeName, chosen by a resource fit
// of its own, as there may be no scheduler), waits for their kubelets to
// start them, and sends the updater's events to the events API through a
// client-go record.EventBroadcaster. The workloads' usage is the
// simulation's model, played one minute of the workloads' hour per round:
// round k, at k intervals from the start, samples minute k, so that a
// short run with a short interval still has api's surge (Deferred) and
// train's jump (Infeasible). The updater's own times (the five minutes a
// resize may stay Deferred, the times to complete) are of the wall clock,
// as they are in a cluster.

// The real run's constants: how long it waits for the nodes asked for
// with -nodes, for a pod it created to run and for one it evicted to be
// gone (a kubelet that keeps up does either within a second; one with a
// node full of Deferred resizes on a loaded machine was seen to take over
// 30 seconds, see REAL-API-SERVER.md), for the kubelet's answer to a
// resize, for the last resizes' ResizeCompleted events and the updater's
// own events at the end, and for the namespace's removal.
const (
	nodesWait    = time.Minute
	podWait      = 2 * time.Minute
	answerWithin = 5 * time.Second
	settleWait   = 10 * time.Second
	eventsWait   = 30 * time.Second
	cleanupWait  = time.Minute
	// controllerManagerLease is the lease the controller manager holds
	// while it runs (its leader election), whose namespace controller
	// finalizes a namespace that is deleted.
	controllerManagerLease = "kube-controller-manager"
)

// realNode is a node the run uses: its name, kind and allocatable.
type realNode struct {
	name        string
	kind        nodeKind
	allocatable v1.ResourceList
}

// realRun is one run on a real API server.
type realRun struct {
	cfg     Config
	client  kubernetes.Interface
	nodes   []realNode
	ns      string
	world   *world
	updater *updater
	events  *countingRecorder
	log     *logger
	rng     *rand.Rand
	names   *namer
	recs    map[*workload]*recommender
	livePods
	waiting []*v1.Pod
	sum     Summary
}

// RunReal runs the example on the real API server of cfg.Kubeconfig: it
// finds the agents' nodes, creates a namespace of its own (and its
// default ServiceAccount, which the ServiceAccount admission plugin wants
// and a controller manager would make) and the pods in it, then runs a
// round every Interval of the wall clock for Duration, and deletes the
// namespace at the end unless cfg.Keep. It prints one line per action to
// out (none with Quiet) and returns the summary.
func RunReal(ctx context.Context, cfg Config, out io.Writer) (*Summary, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	rc, err := clientcmd.BuildConfigFromFlags("", cfg.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("-kubeconfig %s: %w", cfg.Kubeconfig, err)
	}
	rc.QPS, rc.Burst, rc.UserAgent = cfg.QPS, cfg.Burst, "resizelet-vpa-example"
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	version, err := client.Discovery().ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("the API server at %s: %w", rc.Host, err)
	}
	r := &realRun{
		cfg: cfg, client: client,
		rng:      rand.New(rand.NewPCG(cfg.Seed, 0x5650415f)),
		recs:     map[*workload]*recommender{},
		livePods: livePods{pods: map[string]*replica{}},
		sum: Summary{Recreated: map[string]int{}, Real: &RealSummary{
			Server: rc.Host, Version: version.GitVersion, CompletedBy: map[string]int{}}},
	}
	if err := r.findNodes(ctx); err != nil {
		return nil, err
	}
	if err := r.createNamespace(ctx); err != nil {
		return nil, err
	}
	sum, err := r.run(ctx, out)
	if !cfg.Keep {
		if cerr := r.deleteNamespace(ctx); cerr != nil {
			err = errors.Join(err, fmt.Errorf("delete the namespace %s: %w", r.ns, cerr))
		}
	}
	return sum, err
}

// run is the run within the namespace.
func (r *realRun) run(ctx context.Context, out io.Writer) (*Summary, error) {
	cfg := r.cfg
	// The updater's recorder sends its events to the events API, from
	// vpa-updater, as the VPA updater's does; countingRecorder counts
	// them to check at the end that the API server has them all. An
	// interrupt does not stop it before the run does (Shutdown, below).
	broadcaster := record.NewBroadcaster(record.WithContext(context.WithoutCancel(ctx)))
	defer broadcaster.Shutdown()
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: r.client.CoreV1().Events("")})
	r.events = &countingRecorder{EventRecorder: broadcaster.NewRecorder(scheme.Scheme, v1.EventSource{Component: updaterSource})}

	// The action lines print the time since the first round; build logs
	// no action line.
	r.log = &logger{out: out, quiet: cfg.Quiet, now: time.Now}
	r.updater = &updater{
		client:   r.client,
		recorder: r.events,
		// The kubelet's events carry their time in whole seconds (a core
		// v1 event's lastTimestamp), which the updater times a resize's
		// completion by; its clock reads whole seconds too, or a resize
		// completed within the second of its request would seem to have
		// taken less than no time.
		now:          func() time.Time { return time.Now().Truncate(time.Second) },
		patch:        cfg.Patch,
		replace:      r.replace,
		log:          r.log,
		sum:          &r.sum,
		flight:       map[types.NamespacedName]*attempt{},
		answerWithin: answerWithin,
	}
	r.names = newNamer(r.rng)
	for _, wl := range r.world.workloads {
		r.recs[wl] = newRecommender(start)
	}
	if err := r.build(ctx); err != nil {
		return nil, err
	}
	// The updater's caches; the API server's changes reach them a little
	// after they are made, as they reach the VPA updater's.
	watching, stop := context.WithCancel(ctx)
	defer stop()
	r.updater.pods = watchPods(watching, r.client, r.ns, nil)
	r.updater.completed = watchCompletions(watching, r.client, nil)
	r.sum.PodsStart = len(r.pods)
	rounds := int((cfg.Duration + cfg.Interval - 1) / cfg.Interval)
	began := time.Now()
	r.log.origin = began
	for k := range rounds {
		at := began.Add(time.Duration(k) * cfg.Interval)
		if wait := time.Until(at); wait > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(wait):
			}
		} else if k > 0 {
			r.sum.Real.Late++
		}
		if err := r.round(ctx, k); err != nil {
			return nil, fmt.Errorf("round %d: %w", k, err)
		}
		r.sum.Real.Rounds++
	}
	if err := r.settle(ctx); err != nil {
		return nil, err
	}
	r.sum.PendingAtEnd = len(r.updater.flight)
	r.sum.Waiting = len(r.waiting)
	live, err := r.livePodCount(ctx)
	if err != nil {
		return nil, err
	}
	r.sum.PodsEnd = live + len(r.waiting)
	if err := r.countCompletions(ctx); err != nil {
		return nil, err
	}
	if err := r.countEvents(ctx); err != nil {
		return nil, err
	}
	return &r.sum, nil
}

// podFor is the run's pod of the workload named name with the requests
// given: the simulation's pod (podFor), in the run's namespace, and
// without an owner: no ReplicaSet object stands behind it, and a garbage
// collector would delete a pod whose owner does not exist.
func (r *realRun) podFor(wl *workload, name string, req amounts) *v1.Pod {
	p := podFor(wl, r.names.replicaSet(wl), name, "", req)
	p.Namespace = r.ns
	p.OwnerReferences = nil
	return p
}

// build creates the pods there at the start, as the Deployments and the
// scheduler would have before the updater started: each node gets the
// workloads the simulation gives a node of its kind, each pod created
// through the client bound to the node, after a check that they fit
// there; then it waits for the kubelets to run them all.
func (r *realRun) build(ctx context.Context) error {
	standard := make([]bool, len(r.nodes))
	for i, n := range r.nodes {
		standard[i] = n.kind.name == "standard"
	}
	var created []string
	for i, wls := range r.world.placementOn(standard, r.cfg.PodsPerNode) {
		node := r.nodes[i]
		pods := make([]*v1.Pod, 0, len(wls))
		for _, wl := range wls {
			pods = append(pods, r.podFor(wl, r.names.pod(wl), wl.requests))
		}
		if err := r.fitsAll(ctx, node, pods); err != nil {
			return err
		}
		for j, p := range pods {
			p.Spec.NodeName = node.name
			if _, err := r.client.CoreV1().Pods(r.ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("create %s: %w", p.Name, err)
			}
			r.add(p.Name, wls[j], r.rng)
			created = append(created, p.Name)
		}
	}
	if err := r.waitRunning(ctx, created); err != nil {
		return err
	}
	if !r.cfg.Quiet {
		fmt.Fprintf(r.log.out, "kube-apiserver %s at %s, namespace %s, nodes %s; %d rounds of %s, round k playing minute k\n",
			r.sum.Real.Version, r.sum.Real.Server, r.ns, strings.Join(r.sum.Real.Nodes, ", "),
			int((r.cfg.Duration+r.cfg.Interval-1)/r.cfg.Interval), r.cfg.Interval)
		fmt.Fprintln(r.log.out, r.line(len(r.nodes), r.nodeKinds(), r.world))
	}
	return nil
}

// nodeKinds lists the nodes' kinds with their sizes.
func (r *realRun) nodeKinds() string {
	var kinds []string
	counts := map[string]int{}
	for _, n := range r.nodes {
		k := n.kind.String()
		if counts[k] == 0 {
			kinds = append(kinds, k)
		}
		counts[k]++
	}
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%d %s", counts[k], k)
	}
	return strings.Join(parts, ", ")
}

// fitsAll returns an error unless the pods, all together, fit the node
// beside what is bound to it already, with the sizes that would.
func (r *realRun) fitsAll(ctx context.Context, node realNode, pods []*v1.Pod) error {
	l, err := r.load(ctx, node)
	if err != nil {
		return err
	}
	for _, p := range pods {
		cpu, mem := schedulerRequests(p)
		l.pods++
		l.cpu += cpu
		l.memory += mem
	}
	if reasons := l.short(node); len(reasons) > 0 {
		sized := newWorld(r.cfg.PodsPerNode)
		return fmt.Errorf("the %d pods of -pods %d do not fit node %s (%s): %s; the simulation's nodes for -pods %d are %s and %s (resizesim agent --cpu and --memory)",
			len(pods), r.cfg.PodsPerNode, node.name, node.kind, strings.Join(reasons, ", "), r.cfg.PodsPerNode, sized.standard, sized.large)
	}
	return nil
}

// nodeLoad is what is bound to a node: its pods and their requests.
type nodeLoad struct{ pods, cpu, memory int64 }

// load counts the pods bound to the node, of every namespace, that have
// not ended, with their requests as the scheduler counts them.
func (r *realRun) load(ctx context.Context, node realNode) (nodeLoad, error) {
	list, err := r.client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node.name).String(),
	})
	if err != nil {
		return nodeLoad{}, fmt.Errorf("list the pods of node %s: %w", node.name, err)
	}
	var l nodeLoad
	for i := range list.Items {
		p := &list.Items[i]
		if p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		cpu, mem := schedulerRequests(p)
		l.pods++
		l.cpu += cpu
		l.memory += mem
	}
	return l, nil
}

// short lists what the node's allocatable lacks for the load, in the
// scheduler's words.
func (l nodeLoad) short(node realNode) []string {
	var reasons []string
	if l.pods > node.allocatable.Pods().Value() {
		reasons = append(reasons, "Too many pods")
	}
	if l.cpu > node.allocatable.Cpu().MilliValue() {
		reasons = append(reasons, "Insufficient cpu")
	}
	if l.memory > node.allocatable.Memory().Value() {
		reasons = append(reasons, "Insufficient memory")
	}
	return reasons
}

// schedulerRequests are a pod's cpu (millicores) and memory requests as
// the scheduler counts them with InPlacePodVerticalScaling: per container
// the larger of the spec's requests and what its status says is
// allocated or actuated, so that a resize pending or in progress takes
// its room.
func schedulerRequests(p *v1.Pod) (milliCPU, memory int64) {
	reqs := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{UseStatusResources: true})
	return reqs.Cpu().MilliValue(), reqs.Memory().Value()
}

// schedule is the example's stand-in for the scheduler: the first node,
// in the run's order, that the pod fits beside what is bound to it (the
// scheduler's NodeResourcesFit filter; resize.Fleet's Schedule does the
// same in the simulation). When none does, the error is a
// *resize.FitError, which matches resize.ErrUnschedulable.
func (r *realRun) schedule(ctx context.Context, pod *v1.Pod) (string, error) {
	fe := &resize.FitError{Namespace: pod.Namespace, Name: pod.Name, NumAllNodes: len(r.nodes), Reasons: map[string]int{}}
	cpu, mem := schedulerRequests(pod)
	for _, node := range r.nodes {
		l, err := r.load(ctx, node)
		if err != nil {
			return "", err
		}
		l.pods++
		l.cpu += cpu
		l.memory += mem
		reasons := l.short(node)
		if len(reasons) == 0 {
			return node.name, nil
		}
		for _, reason := range reasons {
			fe.Reasons[reason]++
		}
	}
	return "", fe
}

// round is one round of the recommender and the updater, as the
// simulation's round, at minute k of the workloads' hour: usage samples
// into the recommenders, the updater's look at its resizes in flight, the
// replacements that waited placed, and after the warm-up the in-place
// resizes to the recommendations.
func (r *realRun) round(ctx context.Context, k int) error {
	played := start.Add(time.Duration(k) * time.Minute)
	for _, name := range r.sorted() {
		rep := r.pods[name]
		cpu, mem := usageAt(r.rng, rep, float64(k))
		r.recs[rep.wl].add(cpu, mem, played)
	}
	if err := r.updater.observe(ctx); err != nil {
		return err
	}
	if err := r.place(ctx); err != nil {
		return err
	}
	if played.Sub(start) < warmUp {
		return nil
	}
	return r.updater.update(ctx, r.world.vpaObjects(r.ns, r.recs))
}

// replace is what follows the updater's eviction of a pod, as in the
// simulation: a replacement with the recommended requests on the first
// node it fits, or waiting for one. It first waits for the evicted pod to
// be gone (its kubelet stops it and removes it within a second): a
// ReplicaSet would not wait, but the updater's next list would then show
// the pod being stopped, still Running, and the room it still takes would
// count against the replacement.
func (r *realRun) replace(ctx context.Context, evicted *v1.Pod, cause string, to amounts) error {
	r.remove(evicted.Name)
	wl := r.world.workloadOf(evicted)
	if wl == nil {
		return fmt.Errorf("evicted pod %s: no workload %q", evicted.Name, evicted.Labels[appLabel])
	}
	if err := r.waitGone(ctx, evicted); err != nil {
		return err
	}
	pod := r.podFor(wl, r.names.pod(wl), to)
	where, err := r.schedule(ctx, pod)
	if errors.Is(err, resize.ErrUnschedulable) {
		r.waiting = append(r.waiting, pod)
		r.log.printf("recreate  %s (%s on %s) -> %s %s waiting: %s", evicted.Name, cause, evicted.Spec.NodeName, pod.Name, to, err)
		return nil
	}
	if err != nil {
		return err
	}
	if err := r.create(ctx, pod, where, wl); err != nil {
		return err
	}
	r.log.printf("recreate  %s (%s on %s) -> %s on %s %s", evicted.Name, cause, evicted.Spec.NodeName, pod.Name, where, to)
	return nil
}

// place places the replacements that waited for a node, as the
// simulation's place does.
func (r *realRun) place(ctx context.Context) error {
	var err error
	r.waiting, err = placeWaiting(ctx, r.waiting, r.schedule, func(ctx context.Context, pod *v1.Pod, node string) error {
		return r.create(ctx, pod, node, r.world.workloadOf(pod))
	}, r.log)
	return err
}

// create creates a replacement bound to node and waits for its kubelet
// to run it.
func (r *realRun) create(ctx context.Context, pod *v1.Pod, node string, wl *workload) error {
	pod.Spec.NodeName = node
	if _, err := r.client.CoreV1().Pods(r.ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create %s: %w", pod.Name, err)
	}
	if err := r.waitRunning(ctx, []string{pod.Name}); err != nil {
		return err
	}
	r.add(pod.Name, wl, r.rng)
	return nil
}

// waitRunning waits until the kubelets run every pod named, polling the
// pods of the namespace; a pod that failed (its kubelet did not admit
// it) is an error, as is one not running after podWait.
func (r *realRun) waitRunning(ctx context.Context, names []string) error {
	deadline := time.Now().Add(podWait)
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, 500*time.Millisecond) {
		list, err := r.client.CoreV1().Pods(r.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("list the pods: %w", err)
		}
		phase := map[string]*v1.Pod{}
		for i := range list.Items {
			phase[list.Items[i].Name] = &list.Items[i]
		}
		var notYet []string
		for _, name := range names {
			switch p := phase[name]; {
			case p == nil:
				return fmt.Errorf("pod %s is gone", name)
			case p.Status.Phase == v1.PodFailed:
				return fmt.Errorf("pod %s on %s: its kubelet left it Failed: %s: %s", name, p.Spec.NodeName, p.Status.Reason, p.Status.Message)
			case p.Status.Phase != v1.PodRunning:
				notYet = append(notYet, name+" on "+p.Spec.NodeName)
			}
		}
		if len(notYet) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d pods not running after %s (are their nodes' agents up?): %s", len(notYet), podWait, strings.Join(notYet[:min(len(notYet), 5)], ", "))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

// waitGone waits until the pod is gone from the API server (or another
// of its name stands there).
func (r *realRun) waitGone(ctx context.Context, pod *v1.Pod) error {
	deadline := time.Now().Add(podWait)
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, 500*time.Millisecond) {
		p, err := r.client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return fmt.Errorf("get %s, evicted: %w", pod.Name, err)
		case p.UID != pod.UID:
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("pod %s, evicted, is still on %s after %s (is its agent up?)", pod.Name, pod.Spec.NodeName, podWait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

// settle gives the resizes still in flight at the end a few seconds to
// be timed: a resize whose kubelet has completed it is timed by its
// ResizeCompleted event, which the kubelet's recorder sends a moment
// later. It stops as soon as no resize in flight is done or in progress
// (those Deferred wait for room, which a few seconds do not bring).
func (r *realRun) settle(ctx context.Context) error {
	deadline := time.Now().Add(settleWait)
	for {
		if err := r.updater.completions(ctx); err != nil {
			return err
		}
		waiting := false
		for key, a := range r.updater.flight {
			p, err := r.client.CoreV1().Pods(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("get %s, whose resize is in flight: %w", key, err)
			}
			if i := containerIndex(p, a.container); i >= 0 {
				if reason, _ := resizeState(p, i); reason == "" || reason == "InProgress" {
					waiting = true
				}
			}
		}
		if !waiting || time.Now().After(deadline) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// livePodCount counts the run's pods that are not being deleted.
func (r *realRun) livePodCount(ctx context.Context) (int, error) {
	list, err := r.client.CoreV1().Pods(r.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("list the pods: %w", err)
	}
	n := 0
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == v1.PodRunning {
			n++
		}
	}
	return n, nil
}

// countCompletions counts the ResizeCompleted events about the run's
// pods by the node that sent them.
func (r *realRun) countCompletions(ctx context.Context) error {
	events, err := r.client.CoreV1().Events(r.ns).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("reason", reasonResizeCompleted).String(),
	})
	if err != nil {
		return fmt.Errorf("list the %s events: %w", reasonResizeCompleted, err)
	}
	for _, e := range events.Items {
		r.sum.Real.CompletedBy[e.Source.Host] += int(max(e.Count, 1))
	}
	return nil
}

// countEvents waits until the API server has every event the updater
// recorded (the recorder sends them in the background), for eventsWait
// at most, and records how many it has.
func (r *realRun) countEvents(ctx context.Context) error {
	deadline := time.Now().Add(eventsWait)
	for {
		events, err := r.client.CoreV1().Events(r.ns).List(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("source", updaterSource).String(),
		})
		if err != nil {
			return fmt.Errorf("list the events from %s: %w", updaterSource, err)
		}
		n := 0
		for _, e := range events.Items {
			n += int(max(e.Count, 1))
		}
		r.sum.Real.EventsRecorded, r.sum.Real.EventsStored = r.events.count(), n
		if n >= r.events.count() || time.Now().After(deadline) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// countingRecorder is a record.EventRecorder that counts the events
// recorded through it.
type countingRecorder struct {
	record.EventRecorder
	n int
}

func (c *countingRecorder) count() int { return c.n }

func (c *countingRecorder) Event(object runtime.Object, eventtype, reason, message string) {
	c.n++
	c.EventRecorder.Event(object, eventtype, reason, message)
}

func (c *countingRecorder) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	c.n++
	c.EventRecorder.Eventf(object, eventtype, reason, messageFmt, args...)
}

func (c *countingRecorder) AnnotatedEventf(object runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...any) {
	c.n++
	c.EventRecorder.AnnotatedEventf(object, annotations, eventtype, reason, messageFmt, args...)
}

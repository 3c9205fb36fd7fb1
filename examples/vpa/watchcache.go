package main

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// This file is what the updater knows of the cluster between its calls:
// the pods of its namespace and the kubelet's ResizeCompleted events,
// each kept by a client-go reflector that lists once and then watches, as
// the VPA updater's pod lister is an informer's cache
// (vertical-pod-autoscaler/pkg/updater/logic/updater.go, newPodLister)
// and its loop never lists the API server. Each keeps only what the
// updater reads, so that a fleet of hundreds of thousands of pods costs
// the updater neither a copy of every pod and event each minute nor the
// memory of every pod decoded.

// mirror is the part of a cache that a reflector keeps: whether it has
// listed, the resourceVersion of the last change it stored, and the
// waiting for one.
type mirror struct {
	// current, when set, is the resourceVersion the API server has
	// reached (the simulation's Cluster.ResourceVersion for pods,
	// EventCount for events): wait returns once the cache has stored the
	// change that made it, so that the updater sees what a List would
	// have given it. Unset (a real API server, whose changes reach any
	// client after a delay), wait waits for the first list alone.
	current func() uint64

	mu      sync.Mutex
	changed *sync.Cond // broadcast on every change stored
	synced  bool
	rv      uint64 // the resourceVersion of the last change stored
	err     error  // why the reflector stopped, if it did
	// wrote is the resourceVersion of the updater's own last write
	// (written), which wait waits for as well: the updater reads its own
	// writes even where current is unset.
	wrote uint64
}

// run starts the reflector that lists and watches with lw into store
// (whose mirror m is) until ctx ends.
func (m *mirror) run(ctx context.Context, lw *cache.ListWatch, expected runtime.Object, store cache.ReflectorStore, name string) {
	m.changed = sync.NewCond(&m.mu)
	r := cache.NewReflectorWithOptions(lw, expected, store, cache.ReflectorOptions{Name: name})
	go func() {
		r.RunWithContext(ctx)
		m.mu.Lock()
		m.err = fmt.Errorf("the %s watch stopped: %w", name, context.Cause(ctx))
		m.changed.Broadcast()
		m.mu.Unlock()
	}()
	// A waiter must wake when ctx ends, whatever the reflector does.
	context.AfterFunc(ctx, func() {
		m.mu.Lock()
		m.changed.Broadcast()
		m.mu.Unlock()
	})
}

// listWatch is the ListWatch of a typed client's List and Watch.
func listWatch[L runtime.Object](list func(context.Context, metav1.ListOptions) (L, error), watch cache.WatchFuncWithContext) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return list(ctx, opts)
		},
		WatchFuncWithContext: watch,
	}
}

// wait waits until the cache holds what the updater must see (current,
// and its own last write), or ctx ends.
func (m *mirror) wait(ctx context.Context) error {
	var want uint64
	if m.current != nil {
		want = m.current()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for !m.synced || m.rv < max(want, m.wrote) {
		if m.err != nil {
			return m.err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		m.changed.Wait()
	}
	return nil
}

// written records the resourceVersion of an object the updater wrote
// (the answer to its patch), for wait.
func (m *mirror) written(rv string) {
	if v, err := strconv.ParseUint(rv, 10, 64); err == nil {
		m.mu.Lock()
		m.wrote = max(m.wrote, v)
		m.mu.Unlock()
	}
}

// stored records the resourceVersion of a change stored, and wakes the
// waiters. The caller holds the lock.
func (m *mirror) stored(rv string) {
	if v, err := strconv.ParseUint(rv, 10, 64); err == nil && v > m.rv {
		m.rv = v
	}
	m.changed.Broadcast()
}

// listed records a list stored, at its resourceVersion. The caller holds
// the lock.
func (m *mirror) listed(rv string) {
	m.synced = true
	m.stored(rv)
}

// Resync does nothing: the caches have no handlers to call again.
func (m *mirror) Resync() error { return nil }

// podCache is the updater's pods.
type podCache struct {
	mirror
	namespace string
	groups    map[string]*podGroup
	byName    map[string]*podGroup // the group each pod is in
}

// podGroup is the cached pods that have the same labels, which a VPA's
// selector matches all or none of.
type podGroup struct {
	labels labels.Set
	pods   map[string]*cachedPod // by name
}

// cachedPod is a pod as the updater chooses by it.
type cachedPod struct {
	name       string
	running    bool
	containers []cachedContainer
}

// cachedContainer is a container's name and requests.
type cachedContainer struct {
	name     string
	requests amounts
}

// watchPods starts the cache of the pods in namespace, through client;
// it stops when ctx ends.
func watchPods(ctx context.Context, client kubernetes.Interface, namespace string, current func() uint64) *podCache {
	c := &podCache{mirror: mirror{current: current}, namespace: namespace, groups: map[string]*podGroup{}, byName: map[string]*podGroup{}}
	pods := client.CoreV1().Pods(namespace)
	c.run(ctx, listWatch(pods.List, pods.Watch), &v1.Pod{}, c, "vpa-updater pods")
	return c
}

// each calls f for every pod whose labels selector matches; f must not
// call the cache.
func (c *podCache) each(selector labels.Selector, f func(*cachedPod)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, g := range c.groups {
		if selector.Matches(g.labels) {
			for _, p := range g.pods {
				f(p)
			}
		}
	}
}

// Delete forgets a pod.
func (c *podCache) Delete(obj any) error {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	p, ok := obj.(*v1.Pod)
	if !ok {
		return fmt.Errorf("pod cache: delete of a %T", obj)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if g := c.byName[p.Name]; g != nil {
		delete(g.pods, p.Name)
		delete(c.byName, p.Name)
	}
	c.stored(p.ResourceVersion)
	return nil
}

// Replace stores a list, in place of everything before it. The list is
// stored whole or not at all: a waiter never sees a cache half replaced
// with the list's resourceVersion already reached.
func (c *podCache) Replace(list []any, rv string) error {
	fresh := &podCache{groups: map[string]*podGroup{}, byName: map[string]*podGroup{}}
	for _, obj := range list {
		p, ok := obj.(*v1.Pod)
		if !ok {
			return fmt.Errorf("pod cache: a %T is not a pod", obj)
		}
		fresh.put(p)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.groups, c.byName = fresh.groups, fresh.byName
	c.listed(rv)
	return nil
}

// Add stores an added pod (cache.ReflectorStore, as the methods below).
func (c *podCache) Add(obj any) error { return c.update(obj) }

// Update stores a changed pod.
func (c *podCache) Update(obj any) error { return c.update(obj) }

func (c *podCache) update(obj any) error {
	p, ok := obj.(*v1.Pod)
	if !ok {
		return fmt.Errorf("pod cache: a %T is not a pod", obj)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.put(p)
	c.stored(p.ResourceVersion)
	return nil
}

// put stores a pod. The caller holds the lock, or has the cache to itself.
func (c *podCache) put(p *v1.Pod) {
	cp := &cachedPod{name: p.Name, running: p.Status.Phase == v1.PodRunning, containers: make([]cachedContainer, len(p.Spec.Containers))}
	for i, ctr := range p.Spec.Containers {
		cp.containers[i] = cachedContainer{name: ctr.Name, requests: requestsOf(ctr)}
	}
	// The labels in their canonical form (labels.Set.String sorts them).
	key := labels.Set(p.Labels).String()
	g := c.groups[key]
	if g == nil {
		g = &podGroup{labels: labels.Set(p.Labels), pods: map[string]*cachedPod{}}
		c.groups[key] = g
	}
	if was := c.byName[p.Name]; was != g && was != nil {
		// Its labels changed.
		delete(was.pods, p.Name)
	}
	g.pods[p.Name] = cp
	c.byName[p.Name] = g
}

// completionCache is the kubelet's ResizeCompleted events, as the updater
// times the resizes in flight by them: the latest of each pod.
type completionCache struct {
	mirror
	latest map[types.NamespacedName]completion
}

// completion is a ResizeCompleted event: the generation its message
// names and when it was recorded.
type completion struct {
	generation int64
	at         time.Time
}

// watchCompletions starts the cache of the ResizeCompleted events of all
// namespaces, through client; it stops when ctx ends. It watches every
// event and keeps the ResizeCompleted ones, rather than have the API
// server filter them, so that it knows how far the event log it has seen
// goes (current).
func watchCompletions(ctx context.Context, client kubernetes.Interface, current func() uint64) *completionCache {
	c := &completionCache{mirror: mirror{current: current}, latest: map[types.NamespacedName]completion{}}
	events := client.CoreV1().Events(metav1.NamespaceAll)
	c.run(ctx, listWatch(events.List, events.Watch), &v1.Event{}, c, "vpa-updater events")
	return c
}

// of is the latest ResizeCompleted event of the pod.
func (c *completionCache) of(pod types.NamespacedName) (completion, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.latest[pod]
	return e, ok
}

// Add stores an event.
func (c *completionCache) Add(obj any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.put(obj)
}

// Update stores an event again (one the API server counted again).
func (c *completionCache) Update(obj any) error { return c.Add(obj) }

// Delete keeps what it had: an event that leaves the API server's log
// still happened.
func (c *completionCache) Delete(obj any) error { return nil }

// Replace stores a list, added to what the cache had (the events it
// listed before and that the log has dropped since still happened).
func (c *completionCache) Replace(list []any, rv string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, obj := range list {
		if err := c.put(obj); err != nil {
			return err
		}
	}
	c.listed(rv)
	return nil
}

// put stores an event. The caller holds the lock.
func (c *completionCache) put(obj any) error {
	e, ok := obj.(*v1.Event)
	if !ok {
		return fmt.Errorf("event cache: a %T is not an event", obj)
	}
	if e.Reason == reasonResizeCompleted && e.InvolvedObject.Kind == "Pod" {
		pod := types.NamespacedName{Namespace: e.InvolvedObject.Namespace, Name: e.InvolvedObject.Name}
		if at := e.LastTimestamp.Time; !at.Before(c.latest[pod].at) {
			c.latest[pod] = completion{generation: completedGeneration(e.Message), at: at}
		}
	}
	c.stored(e.ResourceVersion)
	return nil
}

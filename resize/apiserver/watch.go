package apiserver

import (
	"errors"
	"slices"
	"strconv"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"
)

// DefaultWatchBuffer is how many changes a Watcher holds for its reader
// unless WatchOptions.Buffer says otherwise.
const DefaultWatchBuffer = 256

// ErrWatchOverflow is a Watcher's Err after the cluster closed it because
// its reader fell more than its buffer behind. The reader has missed
// changes and must list again (ListPodsVersioned, EventList) and watch
// anew, as a client-go reflector does when the API server closes a watch.
var ErrWatchOverflow = errors.New("watch closed: the reader fell more than its buffer behind")

// WatchOptions say what a Watcher sees and where it starts.
type WatchOptions struct {
	// Pods and Events choose what is watched; neither means both.
	Pods, Events bool
	// Namespace, when not empty, limits the watch to that namespace.
	Namespace string
	// ResourceVersion is where the watch starts, as a Kubernetes watch's
	// parameter. "" or "0": first an Added for every pod (in creation
	// order) and every event the log keeps, then the changes. A number:
	// the changes after it, of Pods or Events alone (counted apart). For
	// pods it is the cluster's ResourceVersion; the cluster keeps no
	// history of pod changes, so an older one fails with
	// ErrResourceVersionTooOld (the API server's 410 Gone). For events it
	// is an event count (EventCount, EventList's): the events since are
	// sent first, or, if the log dropped some, the watch fails as well.
	ResourceVersion string
	// Buffer is how many changes (after the initial ones) the Watcher
	// holds for its reader; 0 means DefaultWatchBuffer.
	Buffer int
	// NoOld leaves WatchEvent.Old unset: a watch without selectors has no
	// use for it, and it costs a decoding of the stored pod per change.
	NoOld bool
}

// WatchEvent is one change a Watcher delivers: a pod Added, Modified or
// Deleted, or an event recorded (Added).
type WatchEvent struct {
	Type watch.EventType
	// Pod is the pod as stored after the change (as it was, for Deleted),
	// with the change's resourceVersion. Its top level is the watcher's
	// own; the rest is shared with the cluster: read it, or DeepCopy it
	// before changing anything.
	Pod *v1.Pod
	// Old is the pod before the change (Modified and Deleted), with its
	// resourceVersion then, shared in the same way: what a watch with
	// selectors needs to tell a pod that leaves or enters the selection
	// (k8s.io/apiserver pkg/storage/cacher, watchCacheEvent.PrevObject).
	Old *v1.Pod
	// Event is the event recorded, with UID set from its pod. Its message
	// may be unrendered (Text renders it).
	Event *Event
	// ResourceVersion is the pod's after the change, or the event's (its
	// number in the log plus one).
	ResourceVersion uint64
}

// Watcher delivers the cluster's changes, in order, on a channel
// (ResultChan). The cluster never blocks on it: while the reader has its
// buffer's worth of changes unread, the next change closes the Watcher
// with ErrWatchOverflow instead of waiting. Stop closes it. A cluster
// nobody watches pays nothing for watching.
type Watcher struct {
	c            *Cluster
	pods, events bool
	noOld        bool
	namespace    string
	ch           chan WatchEvent
	// err and closed are guarded by the cluster's lock.
	err    error
	closed bool
}

// closedWatch is the channel of a Watcher that Cluster.Watch did not make
// (nil, or the zero Watcher): closed, so that a reader ranging over it
// stops at once.
var closedWatch = func() chan WatchEvent {
	ch := make(chan WatchEvent)
	close(ch)
	return ch
}()

// errWatcherNotMade is Err's answer for a Watcher not made by Watch.
var errWatcherNotMade = errors.New("apiserver: Watcher not made by Cluster.Watch")

// ResultChan is the channel the changes arrive on; it is closed when the
// Watcher stops (Stop, or an overflow: see Err).
func (w *Watcher) ResultChan() <-chan WatchEvent {
	if w == nil || w.ch == nil {
		return closedWatch
	}
	return w.ch
}

// Stop closes the Watcher and its channel; it may be called more than once.
func (w *Watcher) Stop() {
	if w == nil || w.c == nil {
		return
	}
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	w.c.unwatch(w, nil)
}

// Err says why the channel was closed: ErrWatchOverflow, or nil.
func (w *Watcher) Err() error {
	if w == nil || w.c == nil {
		return errWatcherNotMade
	}
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	return w.err
}

// Watch starts watching the cluster's pods and events (opts says which,
// and from where), each change once, in order. A ResourceVersion that is
// not a number is a 400 Bad Request, one too old a 410
// (ErrResourceVersionTooOld), one beyond the cluster's a 504 ("Too large
// resource version"), as the API server's watch cache answers.
func (c *Cluster) Watch(opts WatchOptions) (*Watcher, error) {
	if !c.init() {
		return nil, ErrNilCluster
	}
	w := &Watcher{c: c, pods: opts.Pods, events: opts.Events, noOld: opts.NoOld, namespace: opts.Namespace}
	if !w.pods && !w.events {
		w.pods, w.events = true, true
	}
	initial := opts.ResourceVersion == "" || opts.ResourceVersion == "0"
	var from uint64
	if !initial {
		var err error
		if from, err = strconv.ParseUint(opts.ResourceVersion, 10, 64); err != nil {
			return nil, apierrors.NewBadRequest("invalid resource version: " + err.Error())
		}
		if w.pods && w.events {
			return nil, apierrors.NewBadRequest("a watch from a resourceVersion is of pods or of events, whose versions are counted apart")
		}
	}
	buffer := opts.Buffer
	if buffer <= 0 {
		buffer = DefaultWatchBuffer
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	var first []WatchEvent
	switch {
	case initial:
		if w.pods {
			for _, sp := range c.inOrder(w.namespace) {
				first = append(first, WatchEvent{Type: watch.Added, Pod: withVersion(sp.thaw(), sp.rv), ResourceVersion: sp.rv})
			}
		}
		if w.events {
			first = append(first, c.eventsAsAdded(w.namespace, 0)...)
		}
	case w.pods:
		if from < c.rv {
			return nil, resourceVersionTooOld(from, c.rv)
		}
		if from > c.rv {
			return nil, tooLargeResourceVersion(from, c.rv)
		}
	default:
		if from > c.events.next {
			return nil, tooLargeResourceVersion(from, c.events.next)
		}
		if oldest := c.events.next - uint64(len(c.events.ring)); from < oldest {
			return nil, resourceVersionTooOld(from, oldest)
		}
		first = c.eventsAsAdded(w.namespace, from)
	}
	w.ch = make(chan WatchEvent, len(first)+buffer)
	for _, ev := range first {
		w.ch <- ev
	}
	c.watchers = append(c.watchers, w)
	return w, nil
}

// tooLargeResourceVersion is the watch cache's 504 for a version it has not
// reached (k8s.io/apiserver pkg/storage/errors.go,
// NewTooLargeResourceVersionError).
func tooLargeResourceVersion(asked, current uint64) error {
	return apierrors.NewTimeoutError("Too large resource version: "+strconv.FormatUint(asked, 10)+", current: "+strconv.FormatUint(current, 10), 1)
}

// eventsAsAdded is the events kept from number from on, of a namespace
// (all with ""), as Added changes. The caller holds the lock.
func (c *Cluster) eventsAsAdded(namespace string, from uint64) []WatchEvent {
	events, dropped := c.events.since(from)
	seq := from + dropped
	uids := uidCache{c: c}
	var out []WatchEvent
	for i := range events {
		e := &events[i]
		if namespace == "" || e.Namespace == namespace {
			e.UID = uids.of(e)
			out = append(out, WatchEvent{Type: watch.Added, Event: e, ResourceVersion: seq + uint64(i) + 1})
		}
	}
	return out
}

// notifyPod sends a pod change to the watchers of pods: pod after it (the
// pod deleted, for Deleted) and the stored pod before it (nil for Added).
// The caller holds the lock and has checked that someone watches.
func (c *Cluster) notifyPod(typ watch.EventType, pod *v1.Pod, prev *storedPod, rv uint64) {
	c.notify(true, pod.Namespace, func(old bool) WatchEvent {
		ev := WatchEvent{Type: typ, Pod: withVersion(pod, rv), ResourceVersion: rv}
		if old && prev != nil {
			ev.Old = withVersion(prev.thaw(), prev.rv)
		}
		return ev
	})
}

// notifyEvent sends an event, about to be recorded as number seq, to the
// watchers of events, as notifyPod.
func (c *Cluster) notifyEvent(e Event, seq uint64) {
	c.notify(false, e.Namespace, func(bool) WatchEvent {
		e.UID = (&uidCache{c: c}).of(&e)
		return WatchEvent{Type: watch.Added, Event: &e, ResourceVersion: seq + 1}
	})
}

// notify offers the change build makes to the watchers of pods (or of
// events) in namespace, made once with the old pod for those that want it
// and once without, if someone watches, and closes the watchers that have
// no room for it.
func (c *Cluster) notify(pods bool, namespace string, build func(old bool) WatchEvent) {
	var evs [2]WatchEvent // without, with the old pod
	var built [2]bool
	var overflowed []*Watcher
	for _, w := range c.watchers {
		if (pods && !w.pods) || (!pods && !w.events) || (w.namespace != "" && w.namespace != namespace) {
			continue
		}
		k := 1
		if w.noOld {
			k = 0
		}
		if !built[k] {
			evs[k], built[k] = build(k == 1), true
		}
		// The change goes in the buffer without waiting, or the watcher
		// is closed.
		select {
		case w.ch <- evs[k]:
		default:
			overflowed = append(overflowed, w)
		}
	}
	for _, w := range overflowed {
		c.unwatch(w, ErrWatchOverflow)
	}
}

// unwatch closes w with err, once. The caller holds the lock.
func (c *Cluster) unwatch(w *Watcher, err error) {
	if w.closed {
		return
	}
	w.closed, w.err = true, err
	close(w.ch)
	c.watchers = slices.DeleteFunc(c.watchers, func(o *Watcher) bool { return o == w })
	if len(c.watchers) == 0 {
		// nil again, so that writes skip the watchers without a look.
		c.watchers = nil
	}
}

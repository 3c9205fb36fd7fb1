package apiserver

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Event is one Kubernetes event a component emitted about a pod.
type Event struct {
	Time      time.Time
	Namespace string
	Pod       string
	Type      string // v1.EventTypeNormal or v1.EventTypeWarning
	Reason    string
	Message   string
	Source    string // the reporting component, "kubelet", as kubectl describe shows it under From
	Host      string // the node the component runs on
	Container string // the container it is about, "" for the pod; the cluster's log does not keep it
	// Lazy, when set and Message is empty, renders the message when the
	// event is read: for messages costly to format and often never read,
	// such as the resize events' JSON.
	Lazy fmt.Stringer
	// UID is the pod's UID, for V1's involvedObject. The cluster's log
	// does not keep it, to save memory; watches and EventList fill it from
	// the pod, as the kubelet's recorder does.
	UID types.UID
}

// eventLog keeps the latest events in a ring of limit records (every
// event when limit is not positive), compactly: an event's type, reason,
// source, host and time zone, a few dozen combinations for all the events
// a node emits, are kept once (origins), and its time as seconds and
// nanoseconds since the epoch (no monotonic reading, as none survives the
// API server's storage either).
type eventLog struct {
	limit int
	// ring holds event number seq at seq % limit (at seq when unbounded);
	// next is the next event's number, so the log holds those from
	// next-len(ring) on.
	ring    []eventRecord
	next    uint64
	origins map[eventOrigin]*eventOrigin
}

// eventRecord is one event as the log keeps it: 88 bytes.
type eventRecord struct {
	sec       int64 // zeroTime for the zero time
	origin    *eventOrigin
	namespace string
	pod       string
	message   string
	lazy      fmt.Stringer
	nsec      int32
}

// zeroTime stands for the zero time.Time, a second no clock gives.
const zeroTime = math.MinInt64

// eventOrigin is an event's type and reason, who emitted it (the
// component and its node), and its time zone.
type eventOrigin struct {
	typ, reason, source, host string
	loc                       *time.Location
}

// add keeps e, dropping the oldest event when the ring is full.
func (l *eventLog) add(e Event) {
	o := eventOrigin{typ: e.Type, reason: e.Reason, source: e.Source, host: e.Host, loc: e.Time.Location()}
	r := eventRecord{
		sec: zeroTime, namespace: e.Namespace, pod: e.Pod,
		message: e.Message, lazy: e.Lazy, origin: l.origin(o),
	}
	if !e.Time.IsZero() {
		r.sec, r.nsec = e.Time.Unix(), int32(e.Time.Nanosecond())
	}
	switch {
	case l.limit <= 0:
		l.ring = append(l.ring, r)
	case len(l.ring) < l.limit:
		// The ring grows as append would, but never past the limit.
		if len(l.ring) == cap(l.ring) {
			l.ring = append(make([]eventRecord, 0, min(max(2*cap(l.ring), 16), l.limit)), l.ring...)
		}
		l.ring = append(l.ring, r)
	default:
		l.ring[l.next%uint64(l.limit)] = r
	}
	l.next++
}

// origin is o as the log keeps it, shared by every record with it.
func (l *eventLog) origin(o eventOrigin) *eventOrigin {
	p, ok := l.origins[o]
	if !ok {
		if l.origins == nil {
			l.origins = map[eventOrigin]*eventOrigin{}
		}
		// A copy, not &o, which would move every call's o to the heap.
		p = new(o)
		l.origins[o] = p
	}
	return p
}

// since returns the events from number seq on, and how many of those were
// already dropped.
func (l *eventLog) since(seq uint64) (out []Event, dropped uint64) {
	first := l.next - uint64(len(l.ring))
	if seq < first {
		dropped, seq = first-seq, first
	}
	if seq >= l.next {
		return nil, dropped
	}
	out = make([]Event, 0, l.next-seq)
	for ; seq < l.next; seq++ {
		i := seq
		if l.limit > 0 {
			i %= uint64(l.limit)
		}
		out = append(out, l.ring[i].event())
	}
	return out, dropped
}

// event is the record as an Event, with its message rendered.
func (r *eventRecord) event() Event {
	o := r.origin
	e := Event{
		Namespace: r.namespace, Pod: r.pod, Type: o.typ,
		Reason: o.reason, Message: r.message, Lazy: r.lazy,
		Source: o.source, Host: o.host,
	}
	if r.sec != zeroTime {
		e.Time = time.Unix(r.sec, int64(r.nsec)).In(o.loc)
	}
	e.Message = e.Text()
	return e
}

// RecordEvent stores an event, dropping the oldest once the cluster holds
// its event limit. Watchers of events see it.
func (c *Cluster) RecordEvent(_ context.Context, e Event) {
	if !c.lock() {
		return
	}
	defer c.mu.Unlock()
	if c.watchers != nil {
		c.notifyEvent(e, c.events.next)
	}
	c.events.add(e)
}

// Events returns the events kept, in order, with their messages rendered.
func (c *Cluster) Events() []Event {
	out, _ := c.EventsSince(0)
	return out
}

// EventCount is how many events were ever recorded: the next one's number.
func (c *Cluster) EventCount() uint64 {
	if !c.lock() {
		return 0
	}
	defer c.mu.Unlock()
	return c.events.next
}

// EventsSince returns the events recorded since the first seq (an earlier
// EventCount), rendered; dropped says how many the log no longer has.
func (c *Cluster) EventsSince(seq uint64) (events []Event, dropped uint64) {
	if !c.lock() {
		return nil, 0
	}
	defer c.mu.Unlock()
	return c.events.since(seq)
}

// Text is the event's message: Message, or Lazy rendered.
func (e Event) Text() string {
	if e.Message == "" && e.Lazy != nil {
		return e.Lazy.String()
	}
	return e.Message
}

// V1 is the event as the kubelet's event recorder sends it to the API
// server (k8s.io/client-go tools/record/event.go, makeEvent and
// generateEvent): named after the pod and the time in nanoseconds
// ("web.188a1b2c3d4e5f60", util.GenerateEventName), in the pod's namespace
// ("default" when empty), about the pod (involvedObject), with first and
// last timestamp the event's time, count 1, and reportingController and
// reportingInstance the source's component and host.
//
// Left out: involvedObject.resourceVersion and fieldPath, which resizelet
// does not know, and the kubelet's event correlator (repeats folded into a
// count). EventList and the watches add the API server's metadata.
func (e Event) V1() *v1.Event {
	namespace := e.Namespace
	if namespace == "" {
		namespace = metav1.NamespaceDefault
	}
	t := metav1.NewTime(e.Time)
	return &v1.Event{
		TypeMeta: metav1.TypeMeta{Kind: "Event", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			// util.GenerateEventName (client-go tools/record/util/util.go).
			Name:      fmt.Sprintf("%s.%x", e.Pod, e.Time.UnixNano()),
			Namespace: namespace,
		},
		InvolvedObject: v1.ObjectReference{
			Kind: "Pod", APIVersion: "v1",
			Namespace: e.Namespace, Name: e.Pod, UID: e.UID,
		},
		Reason:              e.Reason,
		Message:             e.Text(),
		Source:              v1.EventSource{Component: e.Source, Host: e.Host},
		FirstTimestamp:      t,
		LastTimestamp:       t,
		Count:               1,
		Type:                e.Type,
		ReportingController: e.Source,
		ReportingInstance:   e.Host,
	}
}

// eventV1 is event number rv-1 in v1 (V1) with what the API server adds
// when it stores one: resourceVersion (rv), uid and creationTimestamp.
// Many events share an instant on a virtual clock, so the name, after the
// pod and instant, gets the event's number ("web.188a1b2c3d4e5f60.7"),
// that no two share one.
func eventV1(e Event, rv uint64) *v1.Event {
	out := e.V1()
	out.Name += "." + strconv.FormatUint(rv-1, 10)
	out.ResourceVersion = strconv.FormatUint(rv, 10)
	out.UID = deterministicUID(out.Namespace, out.Name)
	out.CreationTimestamp = out.FirstTimestamp
	return out
}

// EventV1 is a WatchEvent's event as the API server serves it (eventV1);
// nil for a pod change.
func (ev WatchEvent) EventV1() *v1.Event {
	if ev.Event == nil {
		return nil
	}
	return eventV1(*ev.Event, ev.ResourceVersion)
}

// EventList returns the events the cluster keeps, of a namespace (all with
// ""), as the API server lists them (core v1): each with the metadata the
// API server adds (see WatchEvent.EventV1) and involvedObject.uid the UID
// of its pod, and the list's resourceVersion the event count, from which a
// Watch of events continues.
func (c *Cluster) EventList(namespace string) *v1.EventList {
	if !c.lock() {
		return nil
	}
	defer c.mu.Unlock()
	list := &v1.EventList{
		TypeMeta: metav1.TypeMeta{Kind: "EventList", APIVersion: "v1"},
		ListMeta: metav1.ListMeta{ResourceVersion: strconv.FormatUint(c.events.next, 10)},
	}
	for _, ev := range c.eventsAsAdded(namespace, 0) {
		list.Items = append(list.Items, *eventV1(*ev.Event, ev.ResourceVersion))
	}
	return list
}

// ToEventsV1 is a core v1 event as events.k8s.io/v1 serves it (the API
// server converts between the two: pkg/apis/events/v1/conversion.go):
// involvedObject becomes regarding, message note, source deprecatedSource,
// the timestamps and count their deprecated fields.
func ToEventsV1(e *v1.Event) *eventsv1.Event {
	if e == nil {
		return nil
	}
	return &eventsv1.Event{
		TypeMeta:                 metav1.TypeMeta{Kind: "Event", APIVersion: "events.k8s.io/v1"},
		ObjectMeta:               *e.ObjectMeta.DeepCopy(),
		EventTime:                e.EventTime,
		ReportingController:      e.ReportingController,
		ReportingInstance:        e.ReportingInstance,
		Action:                   e.Action,
		Reason:                   e.Reason,
		Regarding:                e.InvolvedObject,
		Related:                  e.Related,
		Note:                     e.Message,
		Type:                     e.Type,
		DeprecatedSource:         e.Source,
		DeprecatedFirstTimestamp: e.FirstTimestamp,
		DeprecatedLastTimestamp:  e.LastTimestamp,
		DeprecatedCount:          e.Count,
	}
}

// uidCache finds the UIDs of events' pods, each pod once: the pod of that
// name the cluster has now, unless it was created after the event (another
// pod of the same name), when the UID is left unknown.
type uidCache struct {
	c    *Cluster
	pods map[podRef]*v1.Pod
}

// of returns e's UID, or else its pod's. The caller holds the lock.
func (u *uidCache) of(e *Event) types.UID {
	if e.UID != "" {
		return e.UID
	}
	key := podRef{e.Namespace, e.Pod}
	p, ok := u.pods[key]
	if !ok {
		if sp, stored := u.c.pods[key]; stored {
			p = sp.thaw()
		}
		if u.pods == nil {
			u.pods = map[podRef]*v1.Pod{}
		}
		u.pods[key] = p
	}
	if p == nil || (!e.Time.IsZero() && e.Time.Before(p.CreationTimestamp.Time)) {
		return ""
	}
	return p.UID
}

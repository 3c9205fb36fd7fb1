package apiserver

import (
	"fmt"
	"math"
	"time"

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
	// Lazy, when set and Message is empty, renders the message when the
	// event is read (Events): for messages costly to format and often
	// never read, such as the resize events' JSON.
	Lazy fmt.Stringer
	// UID is the pod's UID, for V1's involvedObject. The cluster's log
	// does not keep it, so that a node's events cost no more memory
	// (Events and EventsSince leave it empty); watches and EventList fill
	// it from the pod, as the kubelet's recorder takes it from the pod.
	UID types.UID
}

// eventLog keeps the latest events in a ring of limit records (every
// event when limit is not positive), in a compact form: an event's type,
// reason, source, host and time zone, a few dozen combinations for all the
// events a node emits, are kept once, and its time as seconds and
// nanoseconds since the Unix epoch (a wall-clock time keeps no monotonic
// reading here, as it would keep none once the API server had stored it).
type eventLog struct {
	limit int
	// ring holds the event with sequence number seq at seq % limit (at
	// seq when the log is unbounded); next is the sequence number of the
	// next event, so the log holds the events from next-len(ring) on.
	ring    []eventRecord
	next    uint64
	origins map[eventOrigin]*eventOrigin
	// recent are the origins used last, most recent first: a node's
	// kubelet emits from two or three (Normal and Warning, one source and
	// host), in turns, and comparing with these costs less than hashing
	// the four strings of a map key.
	recent [4]*eventOrigin
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

// zeroTime stands for the zero time.Time, whose seconds since the epoch
// no clock gives.
const zeroTime = math.MinInt64

// eventOrigin is an event's type and reason, who emitted it (the
// component and its node), and the time zone of its time.
type eventOrigin struct {
	typ, reason, source, host string
	loc                       *time.Location
}

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
			grown := make([]eventRecord, len(l.ring), min(max(2*cap(l.ring), 16), l.limit))
			copy(grown, l.ring)
			l.ring = grown
		}
		l.ring = append(l.ring, r)
	default:
		l.ring[l.next%uint64(l.limit)] = r
	}
	l.next++
}

// origin is o as the log keeps it, shared by every record with the same
// origin.
func (l *eventLog) origin(o eventOrigin) *eventOrigin {
	for i, p := range l.recent {
		if p != nil && *p == o {
			// Most recent first: move it to the front.
			copy(l.recent[1:i+1], l.recent[:i])
			l.recent[0] = p
			return p
		}
	}
	p, ok := l.origins[o]
	if !ok {
		if l.origins == nil {
			l.origins = map[eventOrigin]*eventOrigin{}
		}
		// A copy made here, not &o: taking o's address would move every
		// call's o to the heap.
		p = new(eventOrigin)
		*p = o
		l.origins[o] = p
	}
	copy(l.recent[1:], l.recent[:len(l.recent)-1])
	l.recent[0] = p
	return p
}

// since returns the events from sequence number seq on, rendered, and how
// many of those asked for were already dropped.
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
	if e.Message == "" && e.Lazy != nil {
		e.Message = e.Lazy.String()
	}
	return e
}

// RecordEvent stores an event. Once the cluster holds its event limit, the
// oldest event is dropped for each new one. Watchers of events see it.
func (c *Cluster) RecordEvent(e Event) {
	if !c.init() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.watchers != nil {
		c.notifyEvent(e, c.events.next)
	}
	c.events.add(e)
}

// Events returns the events kept (the latest, up to the event limit) in
// the order they were recorded, with their messages rendered.
func (c *Cluster) Events() []Event {
	if !c.init() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out, _ := c.events.since(0)
	return out
}

// EventCount is how many events were ever recorded: the sequence number
// the next event will have.
func (c *Cluster) EventCount() uint64 {
	if !c.init() {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.events.next
}

// EventsSince returns the events recorded since the first seq events (seq
// from an earlier EventCount), with their messages rendered; those already
// dropped from the log are missing, and dropped says how many.
func (c *Cluster) EventsSince(seq uint64) (events []Event, dropped uint64) {
	if !c.init() {
		return nil, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.events.since(seq)
}

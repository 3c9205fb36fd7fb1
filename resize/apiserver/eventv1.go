package apiserver

import (
	"fmt"
	"strconv"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

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
// ("default" when empty), about the pod (involvedObject kind Pod, apiVersion
// v1, its namespace, name and UID), with the reason, message and type,
// source component and host, first and last timestamp the event's time,
// count 1, and reportingController and reportingInstance the source's
// component and host, as generateEvent sets them.
//
// What resizelet does not know is left out: involvedObject.resourceVersion
// (the pod's version as the kubelet last saw it) and, for container events
// (Pulled, Created, Started, Killing), involvedObject.fieldPath
// ("spec.containers{app}"), which resizelet's events do not carry; and
// the kubelet's event correlator, which folds repeats of one event into a
// count, is not reproduced. The metadata the API server adds on creation
// (resourceVersion, uid, creationTimestamp) are the Cluster's to give:
// EventList and the watches fill them.
func (e Event) V1() *v1.Event {
	namespace := e.Namespace
	if namespace == "" {
		namespace = metav1.NamespaceDefault
	}
	t := metav1.NewTime(e.Time)
	return &v1.Event{
		TypeMeta: metav1.TypeMeta{Kind: "Event", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      eventName(e.Pod, e.Time.UnixNano()),
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

// eventName is util.GenerateEventName (k8s.io/client-go
// tools/record/util/util.go): the object's name and the time in
// nanoseconds, in hexadecimal.
func eventName(object string, unixNano int64) string {
	return fmt.Sprintf("%s.%x", object, unixNano)
}

// eventV1 is an event of the cluster's log, number rv-1, in v1 (V1) with
// what the API server adds when it stores one: resourceVersion (its number in the
// log plus one, the versions EventCount and EventList count in), uid and
// creationTimestamp. As many events share an instant on a virtual clock,
// and the kubelet names an event after its pod and instant, the name gets
// the event's number as a suffix ("web.188a1b2c3d4e5f60.7") so that no two
// events of the cluster share one.
func eventV1(e Event, rv uint64) *v1.Event {
	out := e.V1()
	out.Name += "." + strconv.FormatUint(rv-1, 10)
	out.ResourceVersion = strconv.FormatUint(rv, 10)
	out.UID = deterministicUID(out.Namespace, out.Name)
	out.CreationTimestamp = out.FirstTimestamp
	return out
}

// EventV1 is a WatchEvent's event as the API server serves it: V1 with the
// metadata it adds (see EventList) and a name unique in the cluster. It
// is nil for a pod change.
func (ev WatchEvent) EventV1() *v1.Event {
	if ev.Event == nil {
		return nil
	}
	return eventV1(*ev.Event, ev.ResourceVersion)
}

// EventList returns the events the cluster keeps, of a namespace (all with
// ""), as the API server lists them (core v1): each with the metadata the
// API server adds when it stores one (a resourceVersion, its number in
// the log plus one; a uid; creationTimestamp; a name unique in the
// cluster, see EventV1) and involvedObject.uid the UID of the pod it is
// about, and the list's resourceVersion the event count, from which a
// Watch of events continues.
func (c *Cluster) EventList(namespace string) *v1.EventList {
	if !c.init() {
		return nil
	}
	c.mu.Lock()
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
		Series:                   nil,
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

// uidCache finds the UIDs of the pods events are about, each pod once.
// The cluster's log does not keep UIDs (see Event.UID); an event's pod is
// the pod of that name the cluster has now, unless that pod was created
// after the event (another pod of the same name, made after the first was
// deleted), when the UID is left unknown.
type uidCache struct {
	c    *Cluster
	pods map[podRef]*v1.Pod
}

// of returns the UID of e's pod, or e's own UID when it has one. The
// caller holds the cluster's lock.
func (u *uidCache) of(e *Event) types.UID {
	if e.UID != "" {
		return e.UID
	}
	key := podKey(e.Namespace, e.Pod)
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

package apiserver

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// drain reads what a watcher holds now, without waiting for more.
func drain(w *Watcher) []WatchEvent {
	var out []WatchEvent
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return out
			}
			out = append(out, ev)
		default:
			return out
		}
	}
}

// describe is a watch event in a line: type, pod or event reason, version.
func describe(evs []WatchEvent) string {
	var parts []string
	for _, ev := range evs {
		switch {
		case ev.Pod != nil:
			parts = append(parts, fmt.Sprintf("%s %s@%s", ev.Type, ev.Pod.Name, ev.Pod.ResourceVersion))
		default:
			parts = append(parts, fmt.Sprintf("%s event %s@%d", ev.Type, ev.Event.Reason, ev.ResourceVersion))
		}
	}
	return strings.Join(parts, ", ")
}

func namedPod(namespace, name string) *v1.Pod {
	p := testPod(ctr("c1", "cpu=100m", "cpu=200m"))
	p.Namespace, p.Name = namespace, name
	return p
}

// TestWatchDeliversChangesInOrder: pod changes (created, resized, status
// written, marked, deleted) and events come in the order the cluster made
// them, each with its resourceVersion and, for an update, the pod before.
func TestWatchDeliversChangesInOrder(t *testing.T) {
	c := NewCluster(ClusterOptions{})
	if c.watchers != nil {
		t.Fatal("a new cluster has watchers")
	}
	w, err := c.Watch(WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := c.CreatePod(t.Context(), namedPod("default", "a"))
	c.RecordEvent(t.Context(), Event{Namespace: "default", Pod: "a", Reason: "Created", Time: time.Unix(100, 0)})
	if _, err := c.ResizePod(t.Context(), "default", "a", []byte(`{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":"150m"}}}]}}`)); err != nil {
		t.Fatal(err)
	}
	if err := c.UpdatePodStatus(t.Context(), "default", "a", a.UID, v1.PodStatus{Phase: v1.PodRunning}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.MarkPodDeleted(t.Context(), "default", "a", "", time.Unix(200, 0)); err != nil {
		t.Fatal(err)
	}
	if err := c.DeletePod(t.Context(), "default", "a"); err != nil {
		t.Fatal(err)
	}
	got := drain(w)
	want := "ADDED a@1, ADDED event Created@1, MODIFIED a@2, MODIFIED a@3, MODIFIED a@4, DELETED a@5"
	if d := describe(got); d != want {
		t.Fatalf("watched %s\nwant    %s", d, want)
	}
	if got[1].Event.UID != a.UID {
		t.Errorf("the event's UID is %q, want the pod's %q", got[1].Event.UID, a.UID)
	}
	if got[2].Old == nil || got[2].Old.ResourceVersion != "1" || got[2].Old.Generation != 1 || got[2].Pod.Generation != 2 {
		t.Errorf("the resize's change holds old %v and new generation %d", got[2].Old, got[2].Pod.Generation)
	}
	if got[5].Pod.DeletionTimestamp == nil {
		t.Errorf("the deletion carries the pod without its mark")
	}
	// The pods handed out are the watcher's at the top level: the
	// cluster's stored pod carries no version.
	if stored, _ := c.GetPod(t.Context(), "default", "a"); stored != nil {
		t.Errorf("the pod is still there")
	}
	w.Stop()
	w.Stop()
	if _, ok := <-w.ResultChan(); ok {
		t.Error("the channel is open after Stop")
	}
	if w.Err() != nil || c.watchers != nil {
		t.Errorf("after Stop: Err %v, watchers %v", w.Err(), c.watchers)
	}
}

// TestWatchNoOld: a watcher with NoOld gets each change without the pod
// before it, while a watcher beside it still gets it.
func TestWatchNoOld(t *testing.T) {
	c := NewCluster(ClusterOptions{})
	with, err := c.Watch(WatchOptions{Pods: true})
	if err != nil {
		t.Fatal(err)
	}
	without, err := c.Watch(WatchOptions{Pods: true, NoOld: true})
	if err != nil {
		t.Fatal(err)
	}
	c.CreatePod(t.Context(), namedPod("default", "a"))
	if _, err := c.ResizePod(t.Context(), "default", "a", []byte(`{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":"150m"}}}]}}`)); err != nil {
		t.Fatal(err)
	}
	if err := c.DeletePod(t.Context(), "default", "a"); err != nil {
		t.Fatal(err)
	}
	got, gotWithout := drain(with), drain(without)
	if d, dw := describe(got), describe(gotWithout); d != dw || d != "ADDED a@1, MODIFIED a@2, DELETED a@3" {
		t.Fatalf("watched %s and, without old, %s", d, dw)
	}
	if got[1].Old == nil || got[2].Old == nil {
		t.Errorf("the watcher without NoOld got no old pod: %v, %v", got[1].Old, got[2].Old)
	}
	for _, ev := range gotWithout {
		if ev.Old != nil {
			t.Errorf("the watcher with NoOld got an old pod in %s %s", ev.Type, ev.Pod.Name)
		}
	}
}

// TestWatchOptions: kinds, namespaces, the initial state and starting
// versions, as a Kubernetes watch takes them.
func TestWatchOptions(t *testing.T) {
	c := NewCluster(ClusterOptions{})
	if _, err := c.CreatePod(t.Context(), namedPod("default", "a")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreatePod(t.Context(), namedPod("other", "b")); err != nil {
		t.Fatal(err)
	}
	c.RecordEvent(t.Context(), Event{Namespace: "default", Pod: "a", Reason: "R0"})
	c.RecordEvent(t.Context(), Event{Namespace: "other", Pod: "b", Reason: "R1"})

	initial, _ := c.Watch(WatchOptions{ResourceVersion: "0"})
	pods, _ := c.Watch(WatchOptions{Pods: true, Namespace: "other"})
	events, _ := c.Watch(WatchOptions{Events: true, ResourceVersion: "1"})
	fromNow, err := c.Watch(WatchOptions{Pods: true, ResourceVersion: "2"})
	if err != nil {
		t.Fatal(err)
	}
	if d := describe(drain(initial)); d != "ADDED a@1, ADDED b@2, ADDED event R0@1, ADDED event R1@2" {
		t.Errorf("initial state: %s", d)
	}
	if d := describe(drain(pods)); d != "ADDED b@2" {
		t.Errorf("pods of other: %s", d)
	}
	if d := describe(drain(events)); d != "ADDED event R1@2" {
		t.Errorf("events after the first: %s", d)
	}
	if d := describe(drain(fromNow)); d != "" {
		t.Errorf("from the current version: %s, want nothing yet", d)
	}
	c.RecordEvent(t.Context(), Event{Namespace: "default", Pod: "a", Reason: "R2"})
	if err := c.DeletePod(t.Context(), "default", "a"); err != nil {
		t.Fatal(err)
	}
	if d := describe(drain(pods)); d != "" {
		t.Errorf("pods of other saw %s", d)
	}
	if d := describe(drain(events)); d != "ADDED event R2@3" {
		t.Errorf("events saw %s", d)
	}
	if d := describe(drain(fromNow)); d != "DELETED a@3" {
		t.Errorf("pods from now saw %s", d)
	}

	for _, tc := range []struct {
		opts WatchOptions
		code int32
		is   error
	}{
		{WatchOptions{Pods: true, ResourceVersion: "2"}, http.StatusGone, ErrResourceVersionTooOld},
		{WatchOptions{Pods: true, ResourceVersion: "9"}, http.StatusGatewayTimeout, nil},
		{WatchOptions{Events: true, ResourceVersion: "9"}, http.StatusGatewayTimeout, nil},
		{WatchOptions{ResourceVersion: "3"}, http.StatusBadRequest, nil},
		{WatchOptions{Pods: true, ResourceVersion: "x"}, http.StatusBadRequest, nil},
	} {
		_, err := c.Watch(tc.opts)
		if st := statusOf(t, err); st.Code != tc.code || (tc.is != nil && !errors.Is(err, tc.is)) {
			t.Errorf("Watch(%+v): %v, want %d", tc.opts, err, tc.code)
		}
	}
	dropping := NewCluster(ClusterOptions{EventLimit: 2})
	for i := range 5 {
		dropping.RecordEvent(t.Context(), Event{Pod: "p", Reason: fmt.Sprint(i)})
	}
	if _, err := dropping.Watch(WatchOptions{Events: true, ResourceVersion: "1"}); !apierrors.IsResourceExpired(err) {
		t.Errorf("events from one the log dropped: %v, want 410", err)
	}
}

// TestWatchOverflowClosesTheWatcher: a reader that does not read never
// blocks the cluster; once its buffer is full the next change closes the
// watch with ErrWatchOverflow, after the changes it holds, and the cluster
// goes on alone.
func TestWatchOverflowClosesTheWatcher(t *testing.T) {
	c := NewCluster(ClusterOptions{})
	slow, _ := c.Watch(WatchOptions{Events: true, Buffer: 3})
	fast, _ := c.Watch(WatchOptions{Events: true, Buffer: 100})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 10 {
			c.RecordEvent(t.Context(), Event{Pod: "p", Reason: fmt.Sprint(i)})
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the cluster blocked on a reader that does not read")
	}
	if d := describe(drain(slow)); d != "ADDED event 0@1, ADDED event 1@2, ADDED event 2@3" {
		t.Errorf("the slow reader got %s", d)
	}
	if !errors.Is(slow.Err(), ErrWatchOverflow) {
		t.Errorf("Err = %v, want ErrWatchOverflow", slow.Err())
	}
	if n := len(drain(fast)); n != 10 {
		t.Errorf("the reader with room got %d events, want 10", n)
	}
	if len(c.watchers) != 1 {
		t.Errorf("%d watchers left, want the one with room", len(c.watchers))
	}
	slow.Stop() // closed already: a no-op
}

// TestEventV1: an event as the kubelet's recorder fills it, and as the
// cluster serves it (EventList) in core v1 and events.k8s.io/v1.
func TestEventV1(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 5, 123, time.UTC)
	e := Event{Time: at, Namespace: "default", Pod: "web", Type: v1.EventTypeNormal, Reason: "ResizeStarted",
		Lazy: stringer("Pod resize started"), Source: "kubelet", Host: "node-1", UID: "u-1"}
	got := e.V1()
	want := &v1.Event{
		TypeMeta:       metav1.TypeMeta{Kind: "Event", APIVersion: "v1"},
		ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("web.%x", at.UnixNano()), Namespace: "default"},
		InvolvedObject: v1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "default", Name: "web", UID: "u-1"},
		Reason:         "ResizeStarted", Message: "Pod resize started",
		Source:         v1.EventSource{Component: "kubelet", Host: "node-1"},
		FirstTimestamp: metav1.NewTime(at), LastTimestamp: metav1.NewTime(at), Count: 1, Type: "Normal",
		ReportingController: "kubelet", ReportingInstance: "node-1",
	}
	if !equalEvents(got, want) {
		t.Errorf("V1 =\n%+v\nwant\n%+v", got, want)
	}
	if ns := (Event{Pod: "x"}).V1().Namespace; ns != "default" {
		t.Errorf("an event without namespace is in %q, want default", ns)
	}

	c := NewCluster(ClusterOptions{})
	p, _ := c.CreatePod(t.Context(), namedPod("default", "web"))
	c.RecordEvent(t.Context(), Event{Time: at, Namespace: "default", Pod: "web", Reason: "Started", Message: "m", Source: "kubelet", Host: "node-1"})
	c.RecordEvent(t.Context(), Event{Time: at, Namespace: "default", Pod: "gone", Reason: "Killing", Message: "m"})
	list := c.EventList("default")
	if list.ResourceVersion != "2" || len(list.Items) != 2 {
		t.Fatalf("EventList: version %s, %d items", list.ResourceVersion, len(list.Items))
	}
	first := list.Items[0]
	if first.Name != fmt.Sprintf("web.%x.0", at.UnixNano()) || first.ResourceVersion != "1" || first.UID == "" || !first.CreationTimestamp.Equal(&first.FirstTimestamp) {
		t.Errorf("the served event's metadata: %+v", first.ObjectMeta)
	}
	if first.InvolvedObject.UID != p.UID || list.Items[1].InvolvedObject.UID != "" {
		t.Errorf("involved UIDs %q %q, want the pod's and none for a pod the cluster does not have", first.InvolvedObject.UID, list.Items[1].InvolvedObject.UID)
	}
	k8sio := ToEventsV1(&first)
	if k8sio.Regarding != first.InvolvedObject || k8sio.Note != "m" || k8sio.DeprecatedSource != first.Source ||
		k8sio.DeprecatedCount != 1 || !k8sio.DeprecatedFirstTimestamp.Equal(&first.FirstTimestamp) || k8sio.ReportingController != "kubelet" ||
		k8sio.APIVersion != "events.k8s.io/v1" || k8sio.Name != first.Name {
		t.Errorf("events.k8s.io/v1: %+v", k8sio)
	}
}

// TestEventUIDIsTheIncarnations: an event recorded before the pod of its
// name was made anew keeps no UID rather than the new pod's.
func TestEventUIDIsTheIncarnations(t *testing.T) {
	c := NewCluster(ClusterOptions{})
	first := namedPod("default", "web")
	first.UID = "first"
	first.CreationTimestamp = metav1.NewTime(time.Unix(10, 0))
	if _, err := c.CreatePod(t.Context(), first); err != nil {
		t.Fatal(err)
	}
	c.RecordEvent(t.Context(), Event{Time: time.Unix(20, 0), Namespace: "default", Pod: "web", Reason: "Old"})
	if err := c.DeletePod(t.Context(), "default", "web"); err != nil {
		t.Fatal(err)
	}
	second := namedPod("default", "web")
	second.UID = "second"
	second.CreationTimestamp = metav1.NewTime(time.Unix(30, 0))
	if _, err := c.CreatePod(t.Context(), second); err != nil {
		t.Fatal(err)
	}
	c.RecordEvent(t.Context(), Event{Time: time.Unix(40, 0), Namespace: "default", Pod: "web", Reason: "New"})
	var uids []types.UID
	for _, e := range c.EventList("").Items {
		uids = append(uids, e.InvolvedObject.UID)
	}
	if fmt.Sprint(uids) != "[ second]" {
		t.Errorf("involved UIDs %v, want none for the first pod's event and the second's for its own", uids)
	}
}

type stringer string

func (s stringer) String() string { return string(s) }

func equalEvents(a, b *v1.Event) bool { return fmt.Sprintf("%+v", a) == fmt.Sprintf("%+v", b) }

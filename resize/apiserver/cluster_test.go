package apiserver

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func recordN(c *Cluster, from, to int) {
	for i := from; i < to; i++ {
		c.RecordEvent(context.Background(), Event{Pod: "p", Reason: fmt.Sprint(i)})
	}
}

func reasons(events []Event) string {
	s := ""
	for _, e := range events {
		s += e.Reason + " "
	}
	return s
}

// TestClusterEventLimit: the cluster keeps the latest events up to its
// limit, counts every event, and hands out those since a count.
func TestClusterEventLimit(t *testing.T) {
	c := NewCluster(ClusterOptions{EventLimit: 3})
	recordN(c, 0, 10)
	if got := reasons(c.Events()); got != "7 8 9 " {
		t.Errorf("Events() = %q, want the latest three", got)
	}
	if n := c.EventCount(); n != 10 {
		t.Errorf("EventCount() = %d, want 10", n)
	}
	if got, dropped := c.EventsSince(8); reasons(got) != "8 9 " || dropped != 0 {
		t.Errorf("EventsSince(8) = %q, %d dropped; want 8 9, none dropped", reasons(got), dropped)
	}
	got, dropped := c.EventsSince(0)
	if n := uint64(len(got)) + dropped; n != 10 || reasons(got[len(got)-3:]) != "7 8 9 " {
		t.Errorf("EventsSince(0) = %q with %d dropped; want the kept ones ending 7 8 9, adding up to 10", reasons(got), dropped)
	}
	if got, _ := c.EventsSince(10); len(got) != 0 {
		t.Errorf("EventsSince(count) = %q, want none", reasons(got))
	}

	all := NewCluster(ClusterOptions{EventLimit: -1})
	recordN(all, 0, 3*DefaultEventLimit)
	if n := len(all.Events()); n != 3*DefaultEventLimit {
		t.Errorf("a negative limit kept %d of %d events", n, 3*DefaultEventLimit)
	}
	def := NewCluster(ClusterOptions{})
	recordN(def, 0, 3*DefaultEventLimit)
	if n := len(def.Events()); n != DefaultEventLimit {
		t.Errorf("the default limit kept %d events, want %d", n, DefaultEventLimit)
	}
	if n := cap(def.events.ring); n > DefaultEventLimit {
		t.Errorf("the log has room for %d events, more than the limit", n)
	}
}

// TestEventsKeepTheirFields: what the compact event log keeps comes back
// exactly: times in UTC, in local time, the zero time, times centuries
// away, nanoseconds; every string field; a lazy message rendered.
func TestEventsKeepTheirFields(t *testing.T) {
	c := NewCluster(ClusterOptions{EventLimit: 4})
	times := []time.Time{
		time.Date(2026, 1, 1, 0, 0, 1, 123456789, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 2, 0, time.UTC).Local(),
		{},
		time.Date(2318, 6, 1, 0, 0, 0, 5, time.UTC),
		time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	var want []Event
	for i, at := range times {
		e := Event{Time: at, Namespace: fmt.Sprint("ns", i), Pod: fmt.Sprint("p", i), Type: []string{"Normal", "Warning"}[i%2],
			Reason: fmt.Sprint("R", i), Message: fmt.Sprint("m", i), Source: "kubelet", Host: fmt.Sprint("node-", i%2)}
		if i == 3 {
			e.Message, e.Lazy = "", lazyText("rendered")
		}
		c.RecordEvent(t.Context(), e)
		if i == 3 {
			e.Message = "rendered"
		}
		want = append(want, e)
	}
	got := c.Events()
	want = want[1:] // the limit is 4
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if !g.Time.Equal(w.Time) || g.Time.Location() != w.Time.Location() || g.Time.IsZero() != w.Time.IsZero() {
			t.Errorf("event %d: time %v (%v), want %v (%v)", i, g.Time, g.Time.Location(), w.Time, w.Time.Location())
		}
		g.Time, w.Time, g.Lazy, w.Lazy = time.Time{}, time.Time{}, nil, nil
		if g != w {
			t.Errorf("event %d: got %+v, want %+v", i, g, w)
		}
	}
}

type lazyText string

func (l lazyText) String() string { return string(l) }

// TestMarkPodDeleted: graceful deletion as the API server does it for a
// pod on a registered node: the deletionTimestamp is now plus the grace
// period (30 s by default, the spec's when set), generation is bumped,
// marking again changes nothing; a pod on no registered node goes at once
// (grace 0).
func TestMarkPodDeleted(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pod := func(name string, grace *int64) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: v1.PodSpec{
			TerminationGracePeriodSeconds: grace,
			Containers:                    []v1.Container{{Name: "c", Image: "x"}},
		}}
	}
	five := int64(5)
	for _, tc := range []struct {
		name       string
		registered bool
		grace      *int64
		want       int64
	}{{"default-grace", true, nil, 30}, {"spec-grace", true, &five, 5}, {"unbound", false, nil, 0}} {
		c := NewCluster(ClusterOptions{})
		if tc.registered {
			c.RegisterNode(t.Context(), NodeInfo{Name: "node-1"})
		}
		if _, err := c.CreatePod(t.Context(), pod(tc.name, tc.grace)); err != nil {
			t.Fatal(err)
		}
		p, err := c.MarkPodDeleted(t.Context(), "default", tc.name, "", now)
		if err != nil {
			t.Fatal(err)
		}
		if p.DeletionGracePeriodSeconds == nil || *p.DeletionGracePeriodSeconds != tc.want ||
			!p.DeletionTimestamp.Time.Equal(now.Add(time.Duration(tc.want)*time.Second)) || p.Generation != 2 {
			t.Errorf("%s: marks %v %v, generation %d; want grace %d and generation 2", tc.name, p.DeletionTimestamp, p.DeletionGracePeriodSeconds, p.Generation, tc.want)
		}
		again, err := c.MarkPodDeleted(t.Context(), "default", tc.name, "", now.Add(time.Minute))
		if err != nil || again.Generation != 2 || !again.DeletionTimestamp.Equal(p.DeletionTimestamp) {
			t.Errorf("%s: marking again changed the pod: %v %+v", tc.name, err, again.ObjectMeta)
		}
	}
	if _, err := NewCluster(ClusterOptions{}).MarkPodDeleted(t.Context(), "default", "nope", "", now); !errors.Is(err, ErrPodNotFound) {
		t.Errorf("marking an unknown pod: %v", err)
	}
}

// TestDeleteAndMarkWithAUIDPrecondition: DeletePodUID and MarkPodDeleted
// with a UID leave a pod created anew under the name alone (the first
// without an error, the second as not found), and act on the pod of that
// UID; without one they act on whatever pod has the name.
func TestDeleteAndMarkWithAUIDPrecondition(t *testing.T) {
	c := NewCluster(ClusterOptions{})
	c.RegisterNode(t.Context(), NodeInfo{Name: "node-1"})
	p, err := c.CreatePod(t.Context(), &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}, Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "x"}}}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := c.MarkPodDeleted(t.Context(), "default", "p", "another-uid", now); !errors.Is(err, ErrPodNotFound) {
		t.Errorf("MarkPodDeleted of another UID = %v, want ErrPodNotFound", err)
	}
	if err := c.DeletePodUID(t.Context(), "default", "p", "another-uid"); err != nil {
		t.Errorf("DeletePodUID of another UID = %v, want nil", err)
	}
	if got, err := c.GetPod(t.Context(), "default", "p"); err != nil || got.DeletionTimestamp != nil {
		t.Fatalf("after the mark and delete of another UID the pod is %v, %v; want it unmarked", got, err)
	}
	if m, err := c.MarkPodDeleted(t.Context(), "default", "p", p.UID, now); err != nil || m.DeletionTimestamp == nil {
		t.Errorf("MarkPodDeleted of its UID = %v, %v; want it marked", m, err)
	}
	if err := c.DeletePodUID(t.Context(), "default", "p", p.UID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetPod(t.Context(), "default", "p"); !errors.Is(err, ErrPodNotFound) {
		t.Errorf("after DeletePodUID of its UID: %v, want it gone", err)
	}
}

// TestPodHasFourParts: UpdatePodStatus builds the updated pod from the
// stored one's type, metadata and spec and the new status; a v1.Pod with
// another part would lose it there.
func TestPodHasFourParts(t *testing.T) {
	var names []string
	for f := range reflect.TypeFor[v1.Pod]().Fields() {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, ","); got != "TypeMeta,ObjectMeta,Spec,Status" {
		t.Fatalf("v1.Pod has the fields %s; UpdatePodStatus copies TypeMeta,ObjectMeta,Spec,Status", got)
	}
}

// TestPodReadForAWriteIsThawedOnce: a frozen pod that a write reads (get)
// stays decoded with its frozen form, so that the write and what follows
// it share one thaw; evicted unchanged, it keeps that form (the decoded
// copy is dropped, not frozen again), while a pod written since is frozen
// anew.
func TestPodReadForAWriteIsThawedOnce(t *testing.T) {
	ctx := t.Context()
	now := time.Unix(1767225600, 0)
	c := NewCluster(ClusterOptions{HotPods: 1})
	mark := func(name string) {
		t.Helper()
		if _, err := c.MarkPodDeleted(ctx, "default", name, "", now); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"a", "b"} {
		if _, err := c.CreatePod(ctx, podOn(name, "n")); err != nil {
			t.Fatal(err)
		}
	}
	a := podRef{"default", "a"}
	created := c.pods[a].frozen
	// Marking a writes it; b's mark evicts it: frozen anew.
	mark("a")
	mark("b")
	written := c.pods[a]
	if written.pod != nil || written.frozen.IsZero() || written.frozen == created {
		t.Fatalf("a, written and evicted: %+v (frozen at creation: %v)", written, created)
	}
	// Marking a marked pod reads it and writes nothing: a stays decoded
	// with its frozen form.
	mark("a")
	read := c.pods[a]
	if read.pod == nil || read.frozen != written.frozen {
		t.Fatalf("a, read for a write: %+v, want decoded with %v", read, written.frozen)
	}
	// The next read for a write is served by that one thaw.
	if again, _, _ := c.get(a); again != read.pod {
		t.Fatal("a second read for a write thawed a again")
	}
	// A change no write made shows whether eviction freezes the decoded
	// copy again: it must not.
	read.pod.Labels = map[string]string{"not": "written"}
	mark("b")
	if sp := c.pods[a]; sp.pod != nil || sp.frozen != written.frozen {
		t.Fatalf("a, evicted unchanged: %+v, want only %v", sp, written.frozen)
	}
	if got, err := c.GetPod(ctx, "default", "a"); err != nil || got.DeletionTimestamp == nil || got.Labels["not"] != "" {
		t.Fatalf("a reads back as %+v, %v", got, err)
	}
}

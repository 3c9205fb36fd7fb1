package apiserver

import (
	"fmt"
	"testing"
	"time"
)

func recordN(c *Cluster, from, to int) {
	for i := from; i < to; i++ {
		c.RecordEvent(Event{Pod: "p", Reason: fmt.Sprint(i)})
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
		c.RecordEvent(e)
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

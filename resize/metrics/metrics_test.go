package metrics

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// exposition is the registry's text exposition: what a scrape returns.
func exposition(t *testing.T, g prometheus.Gatherer) string {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, mf := range families {
		if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// TestExposition pins what the caller's registry exposes after one of each
// recording: the kubelet's names, help texts as its component-base
// registration prints them, types, label names and buckets
// (pkg/kubelet/metrics/metrics.go). A fresh Metrics exposes only the
// in-progress gauge, as a kubelet that has seen no resize does.
func TestExposition(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	fresh := "# HELP kubelet_pod_in_progress_resizes [ALPHA] Number of in-progress resizes for pods.\n" +
		"# TYPE kubelet_pod_in_progress_resizes gauge\n" +
		"kubelet_pod_in_progress_resizes 0\n"
	if got := exposition(t, reg); got != fresh {
		t.Errorf("a fresh registry exposes:\n%s\nwant:\n%s", got, fresh)
	}
	r := m.Attach("node-1")
	r.RequestedResize("cpu", "limits", "increase")
	r.InfeasibleResize("static_pod")
	r.DeferredAcceptedResize("pods_removed")
	r.ResizeDuration(true, 1500*time.Millisecond+999*time.Microsecond)
	r.SetGauges(Gauges{PendingDeferred: 2, InProgress: 1})
	want := `# HELP kubelet_container_requested_resizes_total [ALPHA] Number of requested resizes, counted at the container level. Different resources on the same container are counted separately. The 'requirement' label refers to 'memory' or 'limits'; the 'operation' label can be one of 'add', 'remove', 'increase' or 'decrease'.
# TYPE kubelet_container_requested_resizes_total counter
kubelet_container_requested_resizes_total{operation="increase",requirement="limits",resource="cpu"} 1
# HELP kubelet_pod_deferred_accepted_resizes_total [ALPHA] Cumulative number of resizes that were accepted after being deferred.
# TYPE kubelet_pod_deferred_accepted_resizes_total counter
kubelet_pod_deferred_accepted_resizes_total{retry_trigger="pods_removed"} 1
# HELP kubelet_pod_in_progress_resizes [ALPHA] Number of in-progress resizes for pods.
# TYPE kubelet_pod_in_progress_resizes gauge
kubelet_pod_in_progress_resizes 1
# HELP kubelet_pod_infeasible_resizes_total [ALPHA] Number of infeasible resizes for pods.
# TYPE kubelet_pod_infeasible_resizes_total counter
kubelet_pod_infeasible_resizes_total{reason_detail="static_pod"} 1
# HELP kubelet_pod_pending_resizes [ALPHA] Number of pending resizes for pods.
# TYPE kubelet_pod_pending_resizes gauge
kubelet_pod_pending_resizes{reason="deferred"} 2
# HELP kubelet_pod_resize_duration_milliseconds [ALPHA] Duration in milliseconds to actuate a pod resize
# TYPE kubelet_pod_resize_duration_milliseconds histogram
kubelet_pod_resize_duration_milliseconds_bucket{success="true",le="10"} 0
kubelet_pod_resize_duration_milliseconds_bucket{success="true",le="50"} 0
kubelet_pod_resize_duration_milliseconds_bucket{success="true",le="100"} 0
kubelet_pod_resize_duration_milliseconds_bucket{success="true",le="500"} 0
kubelet_pod_resize_duration_milliseconds_bucket{success="true",le="1000"} 0
kubelet_pod_resize_duration_milliseconds_bucket{success="true",le="2000"} 1
kubelet_pod_resize_duration_milliseconds_bucket{success="true",le="5000"} 1
kubelet_pod_resize_duration_milliseconds_bucket{success="true",le="10000"} 1
kubelet_pod_resize_duration_milliseconds_bucket{success="true",le="20000"} 1
kubelet_pod_resize_duration_milliseconds_bucket{success="true",le="30000"} 1
kubelet_pod_resize_duration_milliseconds_bucket{success="true",le="60000"} 1
kubelet_pod_resize_duration_milliseconds_bucket{success="true",le="120000"} 1
kubelet_pod_resize_duration_milliseconds_bucket{success="true",le="300000"} 1
kubelet_pod_resize_duration_milliseconds_bucket{success="true",le="600000"} 1
kubelet_pod_resize_duration_milliseconds_bucket{success="true",le="+Inf"} 1
kubelet_pod_resize_duration_milliseconds_sum{success="true"} 1500
kubelet_pod_resize_duration_milliseconds_count{success="true"} 1
`
	if got := exposition(t, reg); got != want {
		t.Errorf("the registry exposes:\n%s\nwant:\n%s", got, want)
	}
	// Metrics gathers the same six, and WriteText writes them.
	var b strings.Builder
	if err := m.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if b.String() != want {
		t.Errorf("WriteText:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestNewRegistrationErrors: a second New on the same registry fails with
// the registry's AlreadyRegisteredError and leaves the first in place; a
// registry with a conflicting metric of one of the names is left as it
// was; a nil registry is refused.
func TestNewRegistrationErrors(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(reg)
	var are prometheus.AlreadyRegisteredError
	if !errors.As(err, &are) || !strings.Contains(err.Error(), ContainerRequestedResizes) {
		t.Fatalf("second New: %v, want an AlreadyRegisteredError naming %s", err, ContainerRequestedResizes)
	}
	m.Attach("n").RequestedResize("cpu", "requests", "add")
	if !strings.Contains(exposition(t, reg), `kubelet_container_requested_resizes_total{operation="add",requirement="requests",resource="cpu"} 1`) {
		t.Error("the first Metrics no longer records on the registry")
	}

	// A registry that already has a gauge of another shape under the
	// pending gauge's name: New fails there and takes back the two it
	// registered before.
	reg = prometheus.NewRegistry()
	other := prometheus.NewGauge(prometheus.GaugeOpts{Name: PodPendingResizes, Help: "someone else's"})
	reg.MustRegister(other)
	if _, err := New(reg); err == nil || !strings.Contains(err.Error(), PodPendingResizes) {
		t.Fatalf("New on a conflicting registry: %v, want an error naming %s", err, PodPendingResizes)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(families) != 1 || families[0].GetHelp() != "someone else's" {
		t.Errorf("the registry after the failed New: %v, want its own gauge alone", families)
	}
	if _, err := New(prometheus.NewRegistry()); err != nil {
		t.Errorf("New on a fresh registry after a failed one: %v", err)
	}

	if _, err := New(nil); !errors.Is(err, ErrNilRegisterer) {
		t.Errorf("New(nil): %v, want ErrNilRegisterer", err)
	}
}

// TestSharesSumAndRestartTakesOver: the gauges are the sum of the nodes'
// shares; a node attached again under its key (a kubelet restart) replaces
// its share at its first SetGauges and the old recorder's updates are
// ignored from then on; a reason whose total is 0 has no series.
func TestSharesSumAndRestartTakesOver(t *testing.T) {
	m, err := New(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, deferred, infeasible, inProgress float64) {
		t.Helper()
		for series, want := range map[string]float64{
			`kubelet_pod_pending_resizes{reason="deferred"}`:   deferred,
			`kubelet_pod_pending_resizes{reason="infeasible"}`: infeasible,
			PodInProgressResizes:                               inProgress,
		} {
			got, err := m.Value(series)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("%s: %s = %v, want %v", what, series, got, want)
			}
		}
	}
	a, b := m.Attach("a"), m.Attach("b")
	a.SetGauges(Gauges{PendingDeferred: 1, InProgress: 2})
	b.SetGauges(Gauges{PendingDeferred: 2, PendingInfeasible: 1, InProgress: 1})
	check("two nodes", 3, 1, 3)
	b.SetGauges(Gauges{PendingDeferred: 2})
	check("b's resizes done", 3, 0, 2)
	if strings.Contains(text(t, m), `reason="infeasible"`) {
		t.Error("a pending reason with no resize left still has a series")
	}

	restarted := m.Attach("a")
	check("a restarted, before it counted", 3, 0, 2)
	restarted.SetGauges(Gauges{PendingDeferred: 1})
	check("a restarted and counted", 3, 0, 0)
	if a.SetGauges(Gauges{PendingDeferred: 5, InProgress: 5}) {
		t.Error("the replaced kubelet's SetGauges was taken")
	}
	check("the replaced kubelet set its gauges", 3, 0, 0)
	if got := restarted.Gauges(); got != (Gauges{PendingDeferred: 1}) {
		t.Errorf("the restarted node's share: %+v", got)
	}
}

func text(t *testing.T, m *Metrics) string {
	t.Helper()
	var b strings.Builder
	if err := m.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestValue: a series sums the series of its metric that have the labels
// it gives; an absent one is 0; the histogram reads by _count, _sum and
// _bucket.
func TestValue(t *testing.T) {
	m, err := New(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	r := m.Attach(1)
	for _, op := range []string{"increase", "increase", "decrease"} {
		r.RequestedResize("cpu", "requests", op)
	}
	r.RequestedResize("memory", "limits", "add")
	r.ResizeDuration(true, 20*time.Millisecond)
	r.ResizeDuration(false, 700*time.Millisecond)
	r.ResizeDuration(false, time.Hour)
	for series, want := range map[string]float64{
		`kubelet_container_requested_resizes_total`:                                                             4,
		`kubelet_container_requested_resizes_total{resource="cpu"}`:                                             3,
		`kubelet_container_requested_resizes_total{operation="increase",requirement="requests",resource="cpu"}`: 2,
		`kubelet_container_requested_resizes_total{ resource = "memory" , operation="add", }`:                   1,
		`kubelet_container_requested_resizes_total{operation="remove"}`:                                         0,
		`kubelet_pod_infeasible_resizes_total`:                                                                  0,
		`kubelet_pod_resize_duration_milliseconds_count`:                                                        3,
		`kubelet_pod_resize_duration_milliseconds_count{success="false"}`:                                       2,
		`kubelet_pod_resize_duration_milliseconds_sum{success="false"}`:                                         700 + 3600000,
		`kubelet_pod_resize_duration_milliseconds_bucket{le="50"}`:                                              1,
		`kubelet_pod_resize_duration_milliseconds_bucket{le="1000"}`:                                            2,
		`kubelet_pod_resize_duration_milliseconds_bucket{le="600000",success="false"}`:                          1,
		`kubelet_pod_resize_duration_milliseconds_bucket{le="+Inf",success="false"}`:                            2,
		`kubelet_pod_in_progress_resizes{}`:                                                                     0,
	} {
		got, err := m.Value(series)
		if err != nil {
			t.Errorf("%s: %v", series, err)
			continue
		}
		if got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
}

// TestParseSeries: the series a caller may name, and the errors of those
// it may not, each saying what is wrong.
func TestParseSeries(t *testing.T) {
	for in, want := range map[string]string{
		`kubelet_pod_pending_resizes`:                                                  `kubelet_pod_pending_resizes`,
		`kubelet_pod_pending_resizes{reason="deferred"}`:                               `kubelet_pod_pending_resizes{reason="deferred"}`,
		`kubelet_container_requested_resizes_total{resource="cpu",operation="add"}`:    `kubelet_container_requested_resizes_total{operation="add",resource="cpu"}`,
		`kubelet_pod_resize_duration_milliseconds_bucket{le="+Inf",success="true"}`:    `kubelet_pod_resize_duration_milliseconds_bucket{le="+Inf",success="true"}`,
		`kubelet_pod_resize_duration_milliseconds_bucket{le="5e+03"}`:                  `kubelet_pod_resize_duration_milliseconds_bucket{le="5e+03"}`,
		`kubelet_pod_deferred_accepted_resizes_total{retry_trigger="periodic_retry",}`: `kubelet_pod_deferred_accepted_resizes_total{retry_trigger="periodic_retry"}`,
	} {
		s, err := ParseSeries(in)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if s.String() != want {
			t.Errorf("%s reads as %s, want %s", in, s, want)
		}
	}
	for in, want := range map[string]struct {
		err error
		msg string
	}{
		`kubelet_pod_pending_resize`:                                         {ErrUnknownMetric, `unknown metric "kubelet_pod_pending_resize" (want one of kubelet_container_requested_resizes_total, `},
		`kubelet_pod_resize_duration_milliseconds`:                           {ErrUnknownMetric, "is a histogram: name its kubelet_pod_resize_duration_milliseconds_count"},
		`kubelet_pod_pending_resizes_count`:                                  {ErrUnknownMetric, "unknown metric"},
		`kubelet_pod_pending_resizes{reason="Deferred"}`:                     {ErrBadSeries, `label reason="Deferred": the kubelet never sets that value (want one of deferred, infeasible)`},
		`kubelet_pod_pending_resizes{reason_detail="windows"}`:               {ErrBadSeries, `has no label "reason_detail" (want one of reason)`},
		`kubelet_pod_in_progress_resizes{reason="deferred"}`:                 {ErrBadSeries, "(it has no labels)"},
		`kubelet_pod_pending_resizes{reason="deferred"`:                      {ErrBadSeries, "do not end with }"},
		`kubelet_pod_pending_resizes{reason=deferred}`:                       {ErrBadSeries, "must be in double quotes"},
		`kubelet_pod_pending_resizes{reason="deferred}`:                      {ErrBadSeries, "quotes are not closed"},
		`kubelet_pod_pending_resizes{reason="deferred" x="y"}`:               {ErrBadSeries, "want , or }"},
		`kubelet_pod_pending_resizes{"reason"="deferred"}`:                   {ErrBadSeries, `want name="value"`},
		`kubelet_pod_pending_resizes{reason="a\qb"}`:                         {ErrBadSeries, `unknown escape \q`},
		`kubelet_pod_pending_resizes{reason="deferred",reason="infeasible"}`: {ErrBadSeries, `label "reason" given twice`},
		`kubelet_pod_resize_duration_milliseconds_bucket`:                    {ErrBadSeries, "needs its le label"},
		`kubelet_pod_resize_duration_milliseconds_bucket{le="3"}`:            {ErrBadSeries, `le="3" is not a bucket's upper bound (want one of 10, 50, 100`},
		`kubelet_pod_resize_duration_milliseconds_sum{le="10"}`:              {ErrBadSeries, `has no label "le" (want one of success)`},
	} {
		_, err := ParseSeries(in)
		var se *SeriesError
		if !errors.As(err, &se) || !errors.Is(err, want.err) || se.Series != in || !strings.Contains(err.Error(), want.msg) {
			t.Errorf("%s: %v, want a SeriesError (%v) containing %q", in, err, want.err, want.msg)
		}
	}
}

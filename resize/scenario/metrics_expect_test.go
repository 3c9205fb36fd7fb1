package scenario_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/resizelet/resizelet/resize/metrics"
	"github.com/resizelet/resizelet/resize/scenario"
)

// TestParseMetrics: expect.metrics maps series to numbers; a key that is
// not a series of the six metrics, or a value that is not a number of at
// least 0, is an error naming the key and what is wrong.
func TestParseMetrics(t *testing.T) {
	s, err := scenario.Parse("ok.yaml", []byte("name: x"+validPods+`steps:
- expect:
    metrics:
      'kubelet_pod_pending_resizes{reason="deferred"}': 1
      kubelet_pod_in_progress_resizes: 0
      'kubelet_pod_resize_duration_milliseconds_sum{success="true"}': 2.5
- expect: {metrics: {}}
`))
	if err != nil {
		t.Fatal(err)
	}
	e := s.Steps[0].Expect
	if !e.HasMetrics || len(e.Metrics) != 3 {
		t.Fatalf("metrics read as %+v", e.Metrics)
	}
	var got []string
	for _, me := range e.Metrics {
		got = append(got, me.Series.String()+"="+strconv.FormatFloat(me.Value, 'g', -1, 64))
	}
	want := []string{"kubelet_pod_in_progress_resizes=0", `kubelet_pod_pending_resizes{reason="deferred"}=1`, `kubelet_pod_resize_duration_milliseconds_sum{success="true"}=2.5`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	if e := s.Steps[1].Expect; !e.HasMetrics || len(e.Metrics) != 0 {
		t.Errorf("metrics: {} read as %+v", e)
	}

	for _, tt := range []struct{ name, yaml, field, msg string }{
		{"not a map", "steps: [{expect: {metrics: [1]}}]\n", "expect.metrics", "want a map"},
		{"unknown metric", "steps: [{expect: {metrics: {kubelet_pod_resizes: 1}}}]\n", "expect.metrics.kubelet_pod_resizes",
			`unknown metric "kubelet_pod_resizes" (want one of kubelet_container_requested_resizes_total, `},
		{"bad label syntax", "steps: [{expect: {metrics: {'kubelet_pod_pending_resizes{reason=deferred}': 1}}}]\n",
			"expect.metrics.kubelet_pod_pending_resizes{reason=deferred}", "the value must be in double quotes"},
		{"unknown label", "steps: [{expect: {metrics: {'kubelet_pod_pending_resizes{node=\"n\"}': 1}}}]\n",
			`expect.metrics.kubelet_pod_pending_resizes{node="n"}`, `has no label "node" (want one of reason)`},
		{"value the kubelet never sets", "steps: [{expect: {metrics: {'kubelet_pod_pending_resizes{reason=\"Deferred\"}': 1}}}]\n",
			`expect.metrics.kubelet_pod_pending_resizes{reason="Deferred"}`, "the kubelet never sets that value (want one of deferred, infeasible)"},
		{"histogram by its name", "steps: [{expect: {metrics: {kubelet_pod_resize_duration_milliseconds: 1}}}]\n",
			"expect.metrics.kubelet_pod_resize_duration_milliseconds", "is a histogram"},
		{"not a number", "steps: [{expect: {metrics: {kubelet_pod_in_progress_resizes: one}}}]\n",
			"expect.metrics.kubelet_pod_in_progress_resizes", "want a number"},
		{"negative", "steps: [{expect: {metrics: {kubelet_pod_in_progress_resizes: -1}}}]\n",
			"expect.metrics.kubelet_pod_in_progress_resizes", "want a number of at least 0, got -1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := scenario.Parse("bad.yaml", []byte("name: x"+validPods+tt.yaml))
			var se *scenario.Error
			if !errors.As(err, &se) || se.Field != tt.field || !strings.Contains(se.Msg, tt.msg) {
				t.Errorf("error %v, want field %s and a message containing %q", err, tt.field, tt.msg)
			}
		})
	}
}

// TestRunMetrics: expect.metrics is checked against the run's metrics (a
// Metrics of the run's own when Options has none), lists each series with
// the value found in the transcript, and reports a wrong value as a
// mismatch with the series as its path. With Options.Metrics the run
// records there, on top of what it held.
func TestRunMetrics(t *testing.T) {
	file := "name: x" + validPods + `steps:
- resize: {pod: web, patch: '{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"200m"}}}]}}'}
- expect:
    metrics:
      'kubelet_container_requested_resizes_total{operation="increase",requirement="requests",resource="cpu"}': 1
      'kubelet_pod_resize_duration_milliseconds_count{success="true"}': 2
      kubelet_pod_pending_resizes: 0
`
	s, err := scenario.Parse("m.yaml", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	res, err := scenario.Run(context.Background(), s, scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []scenario.Mismatch{{Step: 1, Path: `metrics.kubelet_pod_resize_duration_milliseconds_count{success="true"}`, Want: "2", Got: "1"}}
	if diff := cmp.Diff(want, res.Mismatches); diff != "" {
		t.Errorf("mismatches (-want +got):\n%s", diff)
	}
	for _, line := range []string{
		`  metric kubelet_container_requested_resizes_total{operation="increase",requirement="requests",resource="cpu"}: 1`,
		`  metric kubelet_pod_resize_duration_milliseconds_count{success="true"}: 1`,
		`  metric kubelet_pod_pending_resizes: 0`,
		"  expect: 1 of 3 checks failed",
	} {
		if !strings.Contains(string(res.Transcript), line+"\n") {
			t.Errorf("the transcript lacks %q:\n%s", line, res.Transcript)
		}
	}

	m, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := scenario.Run(context.Background(), s, scenario.Options{Metrics: m}); err != nil {
			t.Fatal(err)
		}
	}
	if v, err := m.Value(`kubelet_pod_resize_duration_milliseconds_count{success="true"}`); err != nil || v != 2 {
		t.Errorf("two runs on one Metrics: %v (%v), want 2", v, err)
	}
}

// TestScenariosWithMetrics runs every scenario of the suite with the
// metrics recorded: recording them changes nothing, so every transcript is
// the golden one and every expectation holds.
func TestScenariosWithMetrics(t *testing.T) {
	checkGoldensWith(t, "recorded metrics", func(t *testing.T) scenario.Options {
		m, err := metrics.New(prometheus.NewRegistry())
		if err != nil {
			t.Fatal(err)
		}
		return scenario.Options{Metrics: m}
	})
}

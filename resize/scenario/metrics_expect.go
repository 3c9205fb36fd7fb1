package scenario

import (
	"encoding/json"
	"errors"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/resizelet/resizelet/resize/metrics"
)

// MetricExpect is one value an expect step's metrics key asserts: a series
// of the kubelet's resize metrics (package resize/metrics) and its value.
type MetricExpect struct {
	Series metrics.Series
	Value  float64
}

// metricsExpect parses expect.metrics: a map from a series, written as
// the text format writes it (metrics.ParseSeries), to its value, a number
// of at least 0. The entries are kept in the order of their keys.
func (p *parser) metricsExpect(raw json.RawMessage, field string) ([]MetricExpect, error) {
	m, err := p.object(raw, field)
	if err != nil {
		return nil, err
	}
	out := make([]MetricExpect, 0, len(m))
	for _, key := range slices.Sorted(maps.Keys(m)) {
		kf := field + "." + key
		s, err := metrics.ParseSeries(key)
		if err != nil {
			var se *metrics.SeriesError
			if errors.As(err, &se) {
				return nil, p.errf(kf, "%s", se.Msg)
			}
			return nil, p.errf(kf, "%v", err)
		}
		var n json.Number
		if err := json.Unmarshal(m[key], &n); err != nil {
			return nil, p.errf(kf, "want a number, got %s", describe(m[key]))
		}
		v, err := strconv.ParseFloat(n.String(), 64)
		if err != nil || v < 0 || math.IsInf(v, 0) {
			return nil, p.errf(kf, "want a number of at least 0, got %s", n)
		}
		out = append(out, MetricExpect{Series: s, Value: v})
	}
	return out, nil
}

// assertsMetrics reports whether an expect step of s asserts metrics.
func (s *Scenario) assertsMetrics() bool {
	for _, st := range s.Steps {
		if st.Expect != nil && st.Expect.HasMetrics {
			return true
		}
	}
	return false
}

// checkMetrics compares each asserted series with the run's metrics and
// lists the values found in the transcript.
func (r *runner) checkMetrics(e *Expect) int {
	for _, me := range e.Metrics {
		series := me.Series.String()
		got, err := r.metrics.ValueOf(me.Series)
		found := formatValue(got)
		if err != nil {
			found = "reading the metrics failed: " + err.Error()
		}
		r.t.line("metric %s: %s", series, found)
		if err != nil || got != me.Value {
			r.mismatch("metrics."+series, formatValue(me.Value), found)
		}
	}
	return len(e.Metrics)
}

// formatValue writes a metric's value as the text format does.
func formatValue(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

package metrics

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// Errors of ParseSeries, wrapped in a *SeriesError (errors.Is finds them).
var (
	// ErrUnknownMetric: the name is not one of the six metrics (or of
	// the histogram's _bucket, _sum and _count).
	ErrUnknownMetric = errors.New("unknown metric")
	// ErrBadSeries: the label part is malformed, or names a label the
	// metric does not have or a value it never takes.
	ErrBadSeries = errors.New("malformed series")
)

// SeriesError is a series ParseSeries cannot take, and why.
type SeriesError struct {
	Series string // as given
	Msg    string
	Err    error // ErrUnknownMetric or ErrBadSeries
}

func (e *SeriesError) Error() string {
	if e == nil {
		return "<nil>"
	}
	return fmt.Sprintf("series %q: %s", e.Series, e.Msg)
}

// Unwrap returns ErrUnknownMetric or ErrBadSeries.
func (e *SeriesError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// Part is the part of a histogram a series names.
type Part string

// The parts: PartValue is a counter's or gauge's value; the others are the
// histogram's series of the same suffix.
const (
	PartValue  Part = ""
	PartBucket Part = "_bucket"
	PartSum    Part = "_sum"
	PartCount  Part = "_count"
)

// Label is one label of a series.
type Label struct{ Name, Value string }

// Series names a series the way the text format writes it:
// name{label="value",...}, the braces optional without labels.
type Series struct {
	// Metric is one of Names.
	Metric string
	// Part is PartValue for a counter or gauge, and one of the others
	// for the histogram, whose series are Metric+Part.
	Part Part
	// Labels are the labels given, sorted by name; a label of the metric
	// that is not given is summed over.
	Labels []Label
	le     float64 // the _bucket's upper bound
}

// ParseSeries reads a series: one of Names (for
// kubelet_pod_resize_duration_milliseconds one of its _bucket, _sum and
// _count series), then optionally labels in braces, each name="value"
// with the text format's escapes (\\, \" and \n), separated by commas.
// Each label must be one of the metric's, given at most once, with a value
// the kubelet uses (Resources, Operations, ...); a _bucket needs le, one of
// DurationBuckets or +Inf. Any other series is a *SeriesError.
func ParseSeries(text string) (Series, error) {
	bad := func(err error, format string, args ...any) (Series, error) {
		return Series{}, &SeriesError{Series: text, Msg: fmt.Sprintf(format, args...), Err: err}
	}
	name, rest, hasLabels := strings.Cut(text, "{")
	name = strings.TrimSpace(name)
	var s Series
	switch {
	case slices.Contains(Names, name) && name != PodResizeDurationMilliseconds:
		s.Metric = name
	case name == PodResizeDurationMilliseconds:
		return bad(ErrUnknownMetric, "%s is a histogram: name its %s_count, %s_sum or %s_bucket series", name, name, name, name)
	default:
		for _, p := range []Part{PartBucket, PartSum, PartCount} {
			if base, ok := strings.CutSuffix(name, string(p)); ok && base == PodResizeDurationMilliseconds {
				s.Metric, s.Part = base, p
			}
		}
		if s.Metric == "" {
			return bad(ErrUnknownMetric, "unknown metric %q (want one of %s, or the histogram's %s_count, _sum or _bucket)",
				name, strings.Join(Names, ", "), PodResizeDurationMilliseconds)
		}
	}
	allowed := labelNames[s.Metric]
	if s.Part == PartBucket {
		allowed = append(slices.Clone(allowed), "le")
	}
	if hasLabels {
		body, ok := strings.CutSuffix(strings.TrimSpace(rest), "}")
		if !ok {
			return bad(ErrBadSeries, "the labels do not end with }")
		}
		labels, err := parseLabels(body)
		if err != nil {
			return bad(ErrBadSeries, "%v", err)
		}
		for _, l := range labels {
			if !slices.Contains(allowed, l.Name) {
				want := "it has no labels"
				if len(allowed) > 0 {
					want = "want one of " + strings.Join(allowed, ", ")
				}
				return bad(ErrBadSeries, "%s has no label %q (%s)", name, l.Name, want)
			}
			if slices.ContainsFunc(s.Labels, func(o Label) bool { return o.Name == l.Name }) {
				return bad(ErrBadSeries, "label %q given twice", l.Name)
			}
			if l.Name == "le" {
				le, err := bucketBound(l.Value)
				if err != nil {
					return bad(ErrBadSeries, "%v", err)
				}
				s.le = le
			} else if values := labelValues[l.Name]; !slices.Contains(values, l.Value) {
				return bad(ErrBadSeries, "label %s=%q: the kubelet never sets that value (want one of %s)", l.Name, l.Value, strings.Join(values, ", "))
			}
			s.Labels = append(s.Labels, l)
		}
	}
	if s.Part == PartBucket && !slices.ContainsFunc(s.Labels, func(l Label) bool { return l.Name == "le" }) {
		return bad(ErrBadSeries, "a _bucket series needs its le label")
	}
	slices.SortFunc(s.Labels, func(a, b Label) int { return strings.Compare(a.Name, b.Name) })
	return s, nil
}

// String renders the series in the text format, labels sorted by name.
func (s Series) String() string {
	var b strings.Builder
	b.WriteString(s.Metric + string(s.Part))
	if len(s.Labels) > 0 {
		b.WriteByte('{')
		for i, l := range s.Labels {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(l.Name + "=" + quote(l.Value))
		}
		b.WriteByte('}')
	}
	return b.String()
}

// matches reports whether a series of the metric with labels is one s
// sums: every label s gives (but le) has its value.
func (s Series) matches(labels []*dto.LabelPair) bool {
	for _, want := range s.Labels {
		if want.Name == "le" {
			continue
		}
		i := slices.IndexFunc(labels, func(l *dto.LabelPair) bool { return l.GetName() == want.Name })
		if i < 0 || labels[i].GetValue() != want.Value {
			return false
		}
	}
	return true
}

// bucketBound reads an le value: one of DurationBuckets, or +Inf.
func bucketBound(v string) (float64, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err == nil && (math.IsInf(f, 1) || slices.Contains(DurationBuckets, f)) {
		return f, nil
	}
	var bounds []string
	for _, b := range DurationBuckets {
		bounds = append(bounds, strconv.FormatFloat(b, 'g', -1, 64))
	}
	return 0, fmt.Errorf("le=%q is not a bucket's upper bound (want one of %s, +Inf)", v, strings.Join(bounds, ", "))
}

// parseLabels reads name="value" pairs separated by commas (a trailing
// comma allowed, as in the text format).
func parseLabels(body string) ([]Label, error) {
	var out []Label
	rest := strings.TrimSpace(body)
	for rest != "" {
		name, after, ok := strings.Cut(rest, "=")
		name = strings.TrimSpace(name)
		if !ok || !validLabelName(name) {
			return nil, fmt.Errorf("want name=\"value\" at %q", rest)
		}
		after = strings.TrimSpace(after)
		if !strings.HasPrefix(after, `"`) {
			return nil, fmt.Errorf("label %s: the value must be in double quotes", name)
		}
		value, n, err := unquote(after)
		if err != nil {
			return nil, fmt.Errorf("label %s: %v", name, err)
		}
		out = append(out, Label{Name: name, Value: value})
		rest = strings.TrimSpace(after[n:])
		if rest == "" {
			break
		}
		if rest[0] != ',' {
			return nil, fmt.Errorf("want , or } after label %s, got %q", name, rest)
		}
		rest = strings.TrimSpace(rest[1:])
	}
	return out, nil
}

// validLabelName is the text format's label name: [a-zA-Z_][a-zA-Z0-9_]*.
func validLabelName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
		case i > 0 && r >= '0' && r <= '9':
		default:
			return false
		}
	}
	return true
}

// unquote reads a double-quoted label value at the start of s and returns
// it and the bytes it took.
func unquote(s string) (string, int, error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), i + 1, nil
		case '\\':
			if i+1 == len(s) {
				return "", 0, errors.New("the value ends with a lone \\")
			}
			i++
			switch s[i] {
			case '\\':
				b.WriteByte('\\')
			case '"':
				b.WriteByte('"')
			case 'n':
				b.WriteByte('\n')
			default:
				return "", 0, fmt.Errorf("unknown escape \\%c", s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, errors.New("the value's quotes are not closed")
}

// quote writes a label value with the text format's escapes.
func quote(v string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(v) + `"`
}

package metrics

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// The metrics' full names: the kubelet subsystem ("kubelet") and the keys
// of pkg/kubelet/metrics/metrics.go (ContainerRequestedResizesKey and the
// others).
const (
	ContainerRequestedResizes     = "kubelet_container_requested_resizes_total"
	PodResizeDurationMilliseconds = "kubelet_pod_resize_duration_milliseconds"
	PodPendingResizes             = "kubelet_pod_pending_resizes"
	PodInfeasibleResizes          = "kubelet_pod_infeasible_resizes_total"
	PodInProgressResizes          = "kubelet_pod_in_progress_resizes"
	PodDeferredAcceptedResizes    = "kubelet_pod_deferred_accepted_resizes_total"
)

// Names are the six metrics, in the order the kubelet defines them.
var Names = []string{
	ContainerRequestedResizes, PodResizeDurationMilliseconds, PodPendingResizes,
	PodInfeasibleResizes, PodInProgressResizes, PodDeferredAcceptedResizes,
}

// DurationBuckets are the upper bounds of
// kubelet_pod_resize_duration_milliseconds, in milliseconds
// (podResizeDurationBuckets in pkg/kubelet/metrics/metrics.go).
var DurationBuckets = []float64{10, 50, 100, 500, 1000, 2000, 5000, 10000, 20000, 30000, 60000, 120000, 300000, 600000}

// The label values the kubelet v1.35.4 uses, which Value and ParseSeries
// accept (a series with another value is always 0, so naming one is a
// mistake they report).
var (
	// Resources are the resource label's values.
	Resources = []string{"cpu", "memory"}
	// Requirements are the requirement label's values.
	Requirements = []string{"requests", "limits"}
	// Operations are the operation label's values
	// (resizeOperationForResources in pkg/kubelet/kubelet.go).
	Operations = []string{"add", "remove", "increase", "decrease"}
	// PendingReasons are the reason label's values: the PodResizePending
	// condition's reasons in lower case (recordPendingResizeCount in
	// pkg/kubelet/status/status_manager.go).
	PendingReasons = []string{"deferred", "infeasible"}
	// InfeasibleReasons are the reason_detail label's values
	// (pkg/kubelet/allocation/allocation_manager.go and features_*.go).
	InfeasibleReasons = []string{
		"feature_gate_off", "static_pod", "windows", "unsupported_platform", "swap_limitation",
		"plr_feature_gate_off", "guaranteed_pod_cpu_manager_static_policy",
		"guaranteed_pod_memory_manager_static_policy", "insufficient_node_allocatable",
	}
	// RetryTriggers are the retry_trigger label's values
	// (pkg/kubelet/allocation/allocation_manager.go; pod_terminated is
	// 1.36's).
	RetryTriggers = []string{"pod_resized", "pod_updated", "pods_added", "pods_removed", "periodic_retry", "pod_terminated"}
	// Successes are the success label's values (strconv.FormatBool).
	Successes = []string{"true", "false"}
)

// The help texts as the kubelet exposes them. The kubelet defines these
// metrics with k8s.io/component-base/metrics at StabilityLevel ALPHA, and
// component-base prefixes the help text with the stability level when it
// registers a metric ("[ALPHA] ...", annotateStabilityLevel in
// component-base/metrics/opts.go). resizelet registers plain client_golang
// metrics with the help text already prefixed, so that its text output is
// what a kubelet's /metrics endpoint shows, byte for byte. (The first
// text's "'memory' or 'limits'" is the kubelet's own slip for "'requests'
// or 'limits'", kept.)
const (
	helpRequested  = "[ALPHA] Number of requested resizes, counted at the container level. Different resources on the same container are counted separately. The 'requirement' label refers to 'memory' or 'limits'; the 'operation' label can be one of 'add', 'remove', 'increase' or 'decrease'."
	helpDuration   = "[ALPHA] Duration in milliseconds to actuate a pod resize"
	helpPending    = "[ALPHA] Number of pending resizes for pods."
	helpInfeasible = "[ALPHA] Number of infeasible resizes for pods."
	helpInProgress = "[ALPHA] Number of in-progress resizes for pods."
	helpDeferred   = "[ALPHA] Cumulative number of resizes that were accepted after being deferred."
)

// labelNames are each metric's labels, in the kubelet's order; a metric
// without labels has none.
var labelNames = map[string][]string{
	ContainerRequestedResizes:     {"resource", "requirement", "operation"},
	PodResizeDurationMilliseconds: {"success"},
	PodPendingResizes:             {"reason"},
	PodInfeasibleResizes:          {"reason_detail"},
	PodInProgressResizes:          nil,
	PodDeferredAcceptedResizes:    {"retry_trigger"},
}

// labelValues are the values each label takes.
var labelValues = map[string][]string{
	"resource": Resources, "requirement": Requirements, "operation": Operations,
	"success": Successes, "reason": PendingReasons, "reason_detail": InfeasibleReasons,
	"retry_trigger": RetryTriggers,
}

// ErrNilRegisterer is returned by New without a registry.
var ErrNilRegisterer = errors.New("metrics: nil prometheus.Registerer")

// ErrNotMade is what a Metrics that New did not make (nil, or the zero
// Metrics, which has no collectors) answers every call that has an error
// result with. It records nothing: Attach gives a nil *NodeRecorder, whose
// methods do nothing.
var ErrNotMade = errors.New("metrics: Metrics not made by New")

// made reports whether New made m: own is set there and never replaced.
func (m *Metrics) made() bool { return m != nil && m.own != nil }

// Metrics are the kubelet's six resize metrics, registered on the caller's
// registry. Hand one to every node that records there
// (resize.Deps.Metrics). It is safe for concurrent use.
type Metrics struct {
	requested  *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	pending    *prometheus.GaugeVec
	infeasible *prometheus.CounterVec
	inProgress prometheus.Gauge
	deferred   *prometheus.CounterVec

	// own holds the six alone, for Gather, WriteText and Value: a
	// collector may be registered with several registries.
	own *prometheus.Registry

	// mu guards the gauges' totals and the nodes' shares.
	mu sync.Mutex
	// pendingTotal and inProgressTotal are the sums of the nodes' shares:
	// what the gauges show.
	pendingTotal    [2]int64 // by PendingReasons
	inProgressTotal int64
	shares          map[any]*share
}

// New returns the resize metrics, registered on reg. A registration error
// is returned as the registry gave it (errors.As finds a
// prometheus.AlreadyRegisteredError when reg already has one of the six,
// for instance a second New on the same registry) and leaves reg as it
// was.
func New(reg prometheus.Registerer) (*Metrics, error) {
	if reg == nil {
		return nil, ErrNilRegisterer
	}
	m := &Metrics{
		requested: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: ContainerRequestedResizes, Help: helpRequested,
		}, labelNames[ContainerRequestedResizes]),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: PodResizeDurationMilliseconds, Help: helpDuration, Buckets: DurationBuckets,
		}, labelNames[PodResizeDurationMilliseconds]),
		pending: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: PodPendingResizes, Help: helpPending,
		}, labelNames[PodPendingResizes]),
		infeasible: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: PodInfeasibleResizes, Help: helpInfeasible,
		}, labelNames[PodInfeasibleResizes]),
		inProgress: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: PodInProgressResizes, Help: helpInProgress,
		}),
		deferred: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: PodDeferredAcceptedResizes, Help: helpDeferred,
		}, labelNames[PodDeferredAcceptedResizes]),
		own:    prometheus.NewRegistry(),
		shares: map[any]*share{},
	}
	// The kubelet's order of registration (Register in
	// pkg/kubelet/metrics/metrics.go).
	cs := []prometheus.Collector{m.requested, m.duration, m.pending, m.infeasible, m.inProgress, m.deferred}
	for i, c := range cs {
		if err := reg.Register(c); err != nil {
			for _, done := range cs[:i] {
				reg.Unregister(done)
			}
			return nil, fmt.Errorf("metrics: register %s: %w", Names[i], err)
		}
		m.own.MustRegister(c)
	}
	return m, nil
}

// Gather returns the six metrics' families, sorted by name: Metrics is a
// prometheus.Gatherer of them alone.
func (m *Metrics) Gather() ([]*dto.MetricFamily, error) {
	if !m.made() {
		return nil, ErrNotMade
	}
	return m.own.Gather()
}

var _ prometheus.Gatherer = (*Metrics)(nil)

// WriteText writes the six metrics in the Prometheus text exposition
// format, as a kubelet's /metrics endpoint shows them (families sorted by
// name; a family without a series, a counter never incremented for
// instance, is left out).
func (m *Metrics) WriteText(w io.Writer) error {
	if w == nil {
		return errors.New("metrics: write text: nil io.Writer")
	}
	families, err := m.Gather()
	if err != nil {
		return err
	}
	for _, mf := range families {
		if _, err := expfmt.MetricFamilyToText(w, mf); err != nil {
			return err
		}
	}
	return nil
}

// Value returns the value of a series (ParseSeries says how to name one):
// the sum of the series of its metric whose labels have the given values,
// so that a label left out is summed over, and 0 when there is none.
func (m *Metrics) Value(series string) (float64, error) {
	s, err := ParseSeries(series)
	if err != nil {
		return 0, err
	}
	return m.ValueOf(s)
}

// ValueOf is Value for a parsed series.
func (m *Metrics) ValueOf(s Series) (float64, error) {
	families, err := m.Gather()
	if err != nil {
		return 0, err
	}
	var sum float64
	for _, mf := range families {
		if mf.GetName() != s.Metric {
			continue
		}
		for _, metric := range mf.GetMetric() {
			if !s.matches(metric.GetLabel()) {
				continue
			}
			switch s.Part {
			case PartSum:
				sum += metric.GetHistogram().GetSampleSum()
			case PartCount:
				sum += float64(metric.GetHistogram().GetSampleCount())
			case PartBucket:
				for _, b := range metric.GetHistogram().GetBucket() {
					if b.GetUpperBound() == s.le {
						sum += float64(b.GetCumulativeCount())
					}
				}
				if s.le > DurationBuckets[len(DurationBuckets)-1] {
					// +Inf: every observation.
					sum += float64(metric.GetHistogram().GetSampleCount())
				}
			default:
				sum += metric.GetCounter().GetValue() + metric.GetGauge().GetValue()
			}
		}
	}
	return sum, nil
}

// The recording side, used by the nodes (package resize). The label values
// are the kubelet's; a node records only what its core reports.

// share is one node's part of the gauges, kept across its restarts.
type share struct {
	gauges Gauges
	// epoch is the number of the NodeRecorder that owns the share: the
	// latest one attached with its key.
	epoch uint64
}

// Gauges are one node's counts for the two gauges: its pods with a
// PodResizePending condition of each reason, and with a
// PodResizeInProgress condition, as its status manager last counted them.
type Gauges struct {
	PendingDeferred   int64 // kubelet_pod_pending_resizes{reason="deferred"}
	PendingInfeasible int64 // kubelet_pod_pending_resizes{reason="infeasible"}
	InProgress        int64 // kubelet_pod_in_progress_resizes
}

// NodeRecorder is one kubelet's handle on a Metrics (Attach). Its counts
// go to the shared counters and histogram; its gauges are its node's share
// of the shared gauges. It is safe for concurrent use.
type NodeRecorder struct {
	m     *Metrics
	share *share
	epoch uint64
}

// made reports whether Metrics.Attach made r: a nil or zero NodeRecorder
// records nothing.
func (r *NodeRecorder) made() bool { return r != nil && r.m != nil }

// Attach starts a kubelet's recording on m. key names the node (package
// resize uses the node's API server and name; any comparable value will
// do): a kubelet attached with the key of an earlier one is the same node
// restarted, and takes its predecessor's share of the gauges over. Its
// first SetGauges replaces that share with its own counts (a restarted
// kubelet recounts from scratch), and the predecessor's gauge updates are
// ignored from then on.
//
// Attach panics if key is not comparable, as a map key would.
func (m *Metrics) Attach(key any) *NodeRecorder {
	if !m.made() {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.shares[key]
	if s == nil {
		s = &share{}
		m.shares[key] = s
	}
	s.epoch++
	return &NodeRecorder{m: m, share: s, epoch: s.epoch}
}

// RequestedResize counts one requested resize of one value of a container
// (kubelet_container_requested_resizes_total).
func (r *NodeRecorder) RequestedResize(resource, requirement, operation string) {
	if !r.made() {
		return
	}
	r.m.requested.WithLabelValues(resource, requirement, operation).Inc()
}

// InfeasibleResize counts a resize found Infeasible
// (kubelet_pod_infeasible_resizes_total).
func (r *NodeRecorder) InfeasibleResize(reasonDetail string) {
	if !r.made() {
		return
	}
	r.m.infeasible.WithLabelValues(reasonDetail).Inc()
}

// DeferredAcceptedResize counts a Deferred resize accepted by a retry
// with this trigger (kubelet_pod_deferred_accepted_resizes_total).
func (r *NodeRecorder) DeferredAcceptedResize(trigger string) {
	if !r.made() {
		return
	}
	r.m.deferred.WithLabelValues(trigger).Inc()
}

// ResizeDuration observes one in-place actuation that took d
// (kubelet_pod_resize_duration_milliseconds): in whole milliseconds,
// truncated, as the kubelet's float64(time.Since(start).Milliseconds()).
func (r *NodeRecorder) ResizeDuration(success bool, d time.Duration) {
	if !r.made() {
		return
	}
	r.m.duration.WithLabelValues(strconv.FormatBool(success)).Observe(float64(d.Milliseconds()))
}

// SetGauges makes g this node's share of the gauges: the shared gauges
// move by the difference from its share before, so that they stay the sum
// over the nodes. It reports false, and changes nothing, when a later
// kubelet of the same node has attached since (this one was restarted
// away).
func (r *NodeRecorder) SetGauges(g Gauges) bool {
	if !r.made() {
		return false
	}
	m := r.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if r.share.epoch != r.epoch {
		return false
	}
	old := r.share.gauges
	r.share.gauges = g
	m.addPending(0, g.PendingDeferred-old.PendingDeferred)
	m.addPending(1, g.PendingInfeasible-old.PendingInfeasible)
	if d := g.InProgress - old.InProgress; d != 0 {
		m.inProgressTotal += d
		m.inProgress.Set(float64(m.inProgressTotal))
	}
	return true
}

// Gauges returns this node's share of the gauges.
func (r *NodeRecorder) Gauges() Gauges {
	if !r.made() {
		return Gauges{}
	}
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	return r.share.gauges
}

// addPending moves the pending gauge of PendingReasons[i] by d. A reason
// whose total is 0 has no series, as the kubelet's gauge, reset and set
// anew for the reasons counted, shows none.
func (m *Metrics) addPending(i int, d int64) {
	if d == 0 {
		return
	}
	m.pendingTotal[i] += d
	if m.pendingTotal[i] == 0 {
		m.pending.DeleteLabelValues(PendingReasons[i])
		return
	}
	m.pending.WithLabelValues(PendingReasons[i]).Set(float64(m.pendingTotal[i]))
}

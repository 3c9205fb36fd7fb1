package resize

import (
	"reflect"

	"github.com/resizelet/resizelet/resize/core"
	"github.com/resizelet/resizelet/resize/metrics"
)

// nodeKey names a node on a shared metrics.Metrics: its API server and its
// name, so that the nodes of a fleet under one API server, and nodes of
// separate simulated clusters that share a name, each keep a share of the
// gauges, and a restarted kubelet (a new Node on the same Deps) finds its
// predecessor's.
type nodeKey struct {
	api  any
	name string
}

// attachMetrics makes the node record the kubelet's resize metrics on m.
// The kubelet registers them only with InPlacePodVerticalScaling on
// (Register in pkg/kubelet/metrics/metrics.go): with the gate off, which
// 1.33 and 1.34 allow, the node records nothing.
func (n *Node) attachMetrics(m *metrics.Metrics) {
	if m == nil || !n.core.Profile().Gate(GateInPlacePodVerticalScaling) {
		return
	}
	key := nodeKey{name: n.cfg.Name}
	if t := reflect.TypeOf(n.cluster); t != nil && t.Comparable() {
		key.api = n.cluster
	}
	n.rec = m.Attach(key)
	// A kubelet that starts has no conditions counted yet: its share of
	// the gauges starts from nothing, whatever a predecessor left.
	n.rec.SetGauges(metrics.Gauges{})
	n.core.RecordMetrics(true)
}

// record hands a step's metrics to the recorder.
func (n *Node) record(m *core.Metrics) {
	for i := range m.Events {
		switch e := &m.Events[i]; e.Kind {
		case core.MetricRequestedResize:
			n.rec.RequestedResize(e.Resource, e.Requirement, e.Operation)
		case core.MetricInfeasibleResize:
			n.rec.InfeasibleResize(e.Reason)
		case core.MetricDeferredAcceptedResize:
			n.rec.DeferredAcceptedResize(e.Reason)
		case core.MetricResizeDuration:
			n.rec.ResizeDuration(e.Success, e.Duration)
		}
	}
	if m.Gauges != n.gauges {
		n.gauges = m.Gauges
		n.rec.SetGauges(metrics.Gauges{
			PendingDeferred:   int64(m.Gauges.PendingDeferred),
			PendingInfeasible: int64(m.Gauges.PendingInfeasible),
			InProgress:        int64(m.Gauges.InProgress),
		})
	}
}

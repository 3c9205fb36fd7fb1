package core

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestResizeOperation pins resizeOperationForResources: to zero or unset
// is remove, from zero or unset is add, otherwise the comparison by value.
func TestResizeOperation(t *testing.T) {
	q := func(s string) resource.Quantity {
		if s == "" {
			return resource.Quantity{}
		}
		return resource.MustParse(s)
	}
	for _, tc := range []struct{ updated, old, want string }{
		{"200m", "100m", "increase"},
		{"100m", "200m", "decrease"},
		{"1", "1000m", ""},
		{"", "", ""},
		{"0", "", ""},
		{"100m", "", "add"},
		{"100m", "0", "add"},
		{"", "100m", "remove"},
		{"0", "1Gi", "remove"},
		{"1Gi", "1024Mi", ""},
	} {
		if got := resizeOperation(q(tc.updated), q(tc.old)); got != tc.want {
			t.Errorf("%q from %q: %q, want %q", tc.updated, tc.old, got, tc.want)
		}
	}
}

// TestCountRequested pins recordContainerResizeOperations: sidecars, then
// regular containers, each in the order memory requests, memory limits,
// cpu requests, cpu limits; init containers that are not sidecars and
// pod-level resources are not counted; nothing is counted with the metrics
// off.
func TestCountRequested(t *testing.T) {
	always := v1.ContainerRestartPolicyAlways
	pod := func(side, init, app v1.ResourceRequirements, podLevel string) *v1.Pod {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "u"}, Spec: v1.PodSpec{
			InitContainers: []v1.Container{{Name: "init", Resources: init}, {Name: "side", RestartPolicy: &always, Resources: side}},
			Containers:     []v1.Container{{Name: "app", Resources: app}},
		}}
		if podLevel != "" {
			r := resources(podLevel, "", podLevel, "")
			p.Spec.Resources = &r
		}
		return p
	}
	old := pod(resources("100m", "64Mi", "", ""), resources("1", "1Gi", "", ""), resources("200m", "128Mi", "400m", "256Mi"), "1")
	updated := pod(resources("150m", "64Mi", "", "128Mi"), resources("2", "2Gi", "", ""), resources("200m", "96Mi", "300m", "512Mi"), "2")

	c := &Core{}
	c.countRequested(old, updated)
	if c.metrics != nil {
		t.Fatal("countRequested turned the metrics on")
	}
	c.RecordMetrics(true)
	c.countRequested(old, updated)
	var got []string
	for _, e := range c.metrics.out.Events {
		if e.Kind != MetricRequestedResize {
			t.Errorf("event of kind %d", e.Kind)
		}
		got = append(got, fmt.Sprintf("%s %s %s", e.Resource, e.Requirement, e.Operation))
	}
	want := []string{
		"memory limits add", "cpu requests increase", // side
		"memory requests decrease", "memory limits increase", "cpu limits decrease", // app
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events %q, want %q", got, want)
	}

	// The next step starts a new report.
	c.metrics.beginStep()
	c.countRequested(updated, updated)
	if len(c.metrics.out.Events) != 0 {
		t.Errorf("an unchanged pod counted %v", c.metrics.out.Events)
	}
}

// TestPendingGaugeRecounts pins when the status manager recounts its
// gauges: a condition set while absent or cleared while present recounts
// them, a reason changed in place does not, and a backfilled condition
// counts like any other once the backfill recounts.
func TestPendingGaugeRecounts(t *testing.T) {
	c := &Core{pods: map[types.UID]*podState{}}
	c.RecordMetrics(true)
	a, b := &podState{uid: "a"}, &podState{uid: "b"}
	now := metav1.Now()
	gauges := func() Gauges { return c.metrics.out.Gauges }

	c.setPending(a, v1.PodReasonDeferred, "", 1, now)
	if g := gauges(); g != (Gauges{PendingDeferred: 1}) {
		t.Errorf("Deferred set: %+v", g)
	}
	c.setPending(a, v1.PodReasonInfeasible, "", 2, now)
	if g := gauges(); g != (Gauges{PendingDeferred: 1}) {
		t.Errorf("Deferred made Infeasible: %+v, want the old count", g)
	}
	c.setInProgress(b, "", "", 1, now)
	if g := gauges(); g != (Gauges{PendingDeferred: 1, InProgress: 1}) {
		t.Errorf("InProgress set elsewhere (the pending gauge not recounted): %+v", g)
	}
	c.recountAll()
	if g := gauges(); g != (Gauges{PendingInfeasible: 1, InProgress: 1}) {
		t.Errorf("after a recount: %+v", g)
	}
	c.setInProgress(b, v1.PodReasonError, "x", 1, now)
	c.clearPending(a)
	c.clearPending(a)
	if g := gauges(); g != (Gauges{InProgress: 1}) {
		t.Errorf("Pending cleared (twice): %+v", g)
	}
	if _, cleared := c.clearInProgress(b); !cleared {
		t.Error("InProgress not cleared")
	}
	if g := gauges(); g != (Gauges{}) {
		t.Errorf("InProgress cleared: %+v", g)
	}

	// A backfilled Deferred condition counts, and is the one a decision
	// replaces (no recount: the kubelet had it).
	d := &podState{uid: "d"}
	c.backfillConditions(d, []v1.PodCondition{
		{Type: v1.PodResizePending, Reason: v1.PodReasonDeferred}, {Type: v1.PodResizeInProgress},
	}, now)
	c.recountAll()
	if g := gauges(); g != (Gauges{PendingDeferred: 1, InProgress: 1}) {
		t.Errorf("backfilled: %+v", g)
	}
	c.setPending(d, v1.PodReasonInfeasible, "", 3, now)
	if g := gauges(); g != (Gauges{PendingDeferred: 1, InProgress: 1}) {
		t.Errorf("a backfilled Deferred made Infeasible: %+v, want no recount", g)
	}
	c.clearInProgress(d)
	if g := gauges(); g != (Gauges{PendingDeferred: 1}) {
		t.Errorf("the backfilled InProgress cleared: %+v", g)
	}
	c.forgetConditions(d)
	if g := gauges(); g != (Gauges{}) {
		t.Errorf("the pod forgotten: %+v", g)
	}
	if len(c.metrics.known) != 2 {
		t.Errorf("known %v", c.metrics.known)
	}
}

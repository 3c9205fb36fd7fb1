package resize_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/metrics"
)

// TestFleetMetricsAggregate: FleetOptions.Metrics is every node's, so
// its counters and gauges are the sum over the fleet's nodes, and a
// node's kubelet restart does not count its share twice.
func TestFleetMetricsAggregate(t *testing.T) {
	ctx := context.Background()
	m, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	fleet := resize.NewFleet(resize.FleetOptions{Metrics: m})
	defer fleet.Close()
	for _, name := range []string{"n1", "n2"} {
		cfg := resize.NodeConfig{Name: name, Capacity: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse("2"), v1.ResourceMemory: resource.MustParse("8Gi"), v1.ResourcePods: resource.MustParse("110"),
		}}
		if _, err := fleet.AddNode(ctx, cfg, resize.Deps{}); err != nil {
			t.Fatal(err)
		}
		for _, pod := range []string{"a", "b"} {
			rl := v1.ResourceList{v1.ResourceCPU: resource.MustParse("900m"), v1.ResourceMemory: resource.MustParse("256Mi")}
			p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name + "-" + pod, Namespace: "default"}, Spec: v1.PodSpec{
				NodeName:   name,
				Containers: []v1.Container{{Name: "app", Image: "img", Resources: v1.ResourceRequirements{Requests: rl}}},
			}}
			if _, err := fleet.CreatePod(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		// 1500m beside the other pod's 900m does not fit 2 CPUs: Deferred.
		patch := []byte(`{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"1500m"}}}]}}`)
		if _, err := fleet.Resize(ctx, resize.ResizeOp{Namespace: "default", Name: name + "-a", Patch: patch}); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]float64{
		`kubelet_pod_pending_resizes{reason="deferred"}`:                                                        2,
		`kubelet_container_requested_resizes_total{operation="increase",requirement="requests",resource="cpu"}`: 2,
	}
	check := func(when string) {
		t.Helper()
		for series, v := range want {
			got, err := m.Value(series)
			if err != nil {
				t.Fatal(err)
			}
			if got != v {
				t.Errorf("%s: %s = %v, want %v", when, series, got, v)
			}
		}
	}
	check("two nodes with a Deferred resize each")
	if _, err := fleet.RestartNode(ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	check("after n1's kubelet restart")
	// Room frees on n2: its resize is accepted; n1's stays Deferred.
	if err := fleet.DeletePod(ctx, "default", "n2-b"); err != nil {
		t.Fatal(err)
	}
	want[`kubelet_pod_pending_resizes{reason="deferred"}`] = 1
	want[`kubelet_pod_deferred_accepted_resizes_total{retry_trigger="pods_removed"}`] = 1
	check(fmt.Sprintf("after %s left n2", "n2-b"))
}

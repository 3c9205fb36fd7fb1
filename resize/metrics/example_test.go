package metrics_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/metrics"
)

// A node that records the kubelet's resize metrics on a registry of the
// caller's (prometheus.DefaultRegisterer would do as well): an admitted
// resize, then one the node cannot hold.
func Example() {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	cg := cgroup.NewSimKernel(cgroup.V2)
	node, err := resize.NewNode(ctx, resize.NodeConfig{}, resize.Deps{
		Cluster: resize.NewCluster(resize.ClusterOptions{}), Cgroups: cg, Runtime: cri.NewSimContainerd(cg),
		Metrics: m, // nil records nothing
	})
	if err != nil {
		panic(err)
	}
	cpu := resource.MustParse("500m")
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: v1.PodSpec{Containers: []v1.Container{{
		Name: "app", Image: "registry.k8s.io/pause:3.10",
		Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: cpu}, Limits: v1.ResourceList{v1.ResourceCPU: cpu}},
	}}}}
	if _, err := node.AddPod(ctx, pod); err != nil {
		panic(err)
	}
	for _, cpu := range []string{"1", "100"} {
		patch := `{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"` + cpu + `"},"limits":{"cpu":"` + cpu + `"}}}]}}`
		if _, err := node.Resize(ctx, resize.ResizeOp{Namespace: "default", Name: "web", Patch: []byte(patch)}); err != nil {
			panic(err)
		}
	}

	for _, series := range []string{
		`kubelet_container_requested_resizes_total{operation="increase",resource="cpu"}`,
		`kubelet_pod_resize_duration_milliseconds_count{success="true"}`,
		`kubelet_pod_infeasible_resizes_total{reason_detail="insufficient_node_allocatable"}`,
		`kubelet_pod_pending_resizes{reason="infeasible"}`,
	} {
		v, err := m.Value(series)
		if err != nil {
			panic(err)
		}
		fmt.Println(series, v)
	}
	// The text format, as a kubelet's /metrics shows it (here the
	// pending gauge alone).
	var text strings.Builder
	if err := m.WriteText(&text); err != nil {
		panic(err)
	}
	for _, line := range strings.Split(text.String(), "\n") {
		if strings.Contains(line, metrics.PodPendingResizes) {
			fmt.Println(line)
		}
	}
	// Output:
	// kubelet_container_requested_resizes_total{operation="increase",resource="cpu"} 4
	// kubelet_pod_resize_duration_milliseconds_count{success="true"} 1
	// kubelet_pod_infeasible_resizes_total{reason_detail="insufficient_node_allocatable"} 1
	// kubelet_pod_pending_resizes{reason="infeasible"} 1
	// # HELP kubelet_pod_pending_resizes [ALPHA] Number of pending resizes for pods.
	// # TYPE kubelet_pod_pending_resizes gauge
	// kubelet_pod_pending_resizes{reason="infeasible"} 1
}

package resize_test

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/resizelet/resizelet/allocation/state"
	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/internal/backendtest"
)

// demoPod is the Burstable pod the backends' tests use too
// (backendtest.DemoPod): default/demo, one container app, 500m/128Mi
// requested, 1/256Mi limits.
func demoPod() *v1.Pod { return backendtest.DemoPod() }

// newDemoNode is a simulated node: an in-memory API server, cgroup v2
// hierarchy, containerd and checkpoints.
func newDemoNode(ctx context.Context) (*resize.Node, *resize.Cluster, *cgroup.SimKernel) {
	cg := cgroup.NewSimKernel(cgroup.V2)
	cluster := resize.NewCluster(resize.ClusterOptions{})
	node, err := resize.NewNode(ctx, resize.NodeConfig{}, resize.Deps{
		Cluster: cluster, Cgroups: cg, Runtime: cri.NewSimContainerd(cg),
		Allocated: state.NewMemory(), Actuated: state.NewMemory(),
	})
	if err != nil {
		panic(err)
	}
	return node, cluster, cg
}

// A resize through the resize subresource, as kubectl patch --subresource
// resize sends it: the kubelet admits it, writes the pod cgroup and
// updates the container, and reports it in the pod's status and events.
func ExampleNode_Resize() {
	ctx := context.Background()
	node, cluster, cg := newDemoNode(ctx)
	if _, err := node.AddPod(ctx, demoPod()); err != nil {
		panic(err)
	}
	patch := `{"spec":{"containers":[{"name":"app","resources":{"limits":{"cpu":"2"}}}]}}`
	if _, err := node.Resize(ctx, resize.ResizeOp{Namespace: "default", Name: "demo", Patch: []byte(patch)}); err != nil {
		panic(err)
	}
	pod, _ := cluster.GetPod(ctx, "default", "demo")
	limit := pod.Status.ContainerStatuses[0].Resources.Limits[v1.ResourceCPU]
	fmt.Println("status cpu limit:", limit.String())
	info, _ := node.Pod("default", "demo")
	fmt.Println("pod cgroup cpu.max:", cg.Files(info.PodCgroup)["cpu.max"])
	for _, e := range cluster.Events() {
		if e.Reason == resize.ReasonResizeStarted || e.Reason == resize.ReasonResizeCompleted {
			fmt.Println(e.Reason)
		}
	}
	// Output:
	// status cpu limit: 2
	// pod cgroup cpu.max: 200000 100000
	// ResizeStarted
	// ResizeCompleted
}

// A typed resize (no JSON on the way, the same validation and result as
// its patch) beyond what the node has is Infeasible; one that fits the
// node but not beside the other pods is Deferred, and retried when room
// is made. The pod keeps its allocation meanwhile, and its
// PodResizePending condition says why.
func ExampleNode_Resize_typed() {
	ctx := context.Background()
	node, cluster, _ := newDemoNode(ctx)
	if _, err := node.AddPod(ctx, demoPod()); err != nil {
		panic(err)
	}
	cpu := func(milli int64) resize.ResizeRequest {
		return resize.ResizeRequest{Containers: []resize.ContainerResize{{
			Name:     "app",
			Requests: resize.CPU(milli),
			Limits:   resize.CPU(milli),
		}}}
	}
	pending := func() {
		pod, _ := cluster.GetPod(ctx, "default", "demo")
		for _, c := range pod.Status.Conditions {
			fmt.Printf("%s %s: %s\n", c.Type, c.Reason, c.Message)
		}
	}
	// The default node has 16 CPUs.
	if _, err := node.Resize(ctx, resize.ResizeOp{Namespace: "default", Name: "demo", Request: cpu(20000)}); err != nil {
		panic(err)
	}
	pending()
	big := demoPod()
	big.Name = "big"
	big.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("14")
	big.Spec.Containers[0].Resources.Limits[v1.ResourceCPU] = resource.MustParse("14")
	if _, err := node.AddPod(ctx, big); err != nil {
		panic(err)
	}
	if _, err := node.Resize(ctx, resize.ResizeOp{Namespace: "default", Name: "demo", Request: cpu(4000)}); err != nil {
		panic(err)
	}
	pending()
	// Output:
	// PodResizePending Infeasible: Node didn't have enough capacity: cpu, requested: 20000, capacity: 16000
	// PodResizePending Deferred: Node didn't have enough resource: cpu, requested: 4000, used: 14000, capacity: 16000
}

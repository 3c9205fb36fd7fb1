// Package backendtest holds what the tests of package resize's Simulated
// backend and of package host's backends share: a demo pod, a node
// started on a backend, a resize of it, and a kubelet restart, so that
// every backend is driven the same way.
package backendtest

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resizelet/resizelet/allocation/state"
	"github.com/resizelet/resizelet/resize"
)

// CPULimit2 raises the demo pod's CPU limit from 1 to 2.
const CPULimit2 = `{"spec":{"containers":[{"name":"app","resources":{"limits":{"cpu":"2"}}}]}}`

// DemoPod is a Burstable pod default/demo with one container, app:
// 500m/128Mi requested, 1/256Mi limits.
func DemoPod() *v1.Pod {
	rl := func(cpu, mem string) v1.ResourceList {
		return v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse(mem)}
	}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "default"},
		Spec: v1.PodSpec{Containers: []v1.Container{{
			Name: "app", Image: "registry.k8s.io/pause:3.10",
			Resources: v1.ResourceRequirements{Requests: rl("500m", "128Mi"), Limits: rl("1", "256Mi")},
		}}},
	}
}

// NewNodeOn starts a node on b with in-memory checkpoints that survive a
// restart, and returns it with its cluster and its Deps.
func NewNodeOn(t testing.TB, b *resize.Backend) (*resize.Node, *resize.Cluster, resize.Deps) {
	t.Helper()
	cluster := resize.NewCluster(resize.ClusterOptions{})
	deps := b.Deps(resize.Deps{Cluster: cluster, Allocated: state.NewMemory(), Actuated: state.NewMemory()})
	node, err := resize.NewNode(context.Background(), b.Config(), deps)
	if err != nil {
		t.Fatalf("NewNode on the backend: %v", err)
	}
	return node, cluster, deps
}

// AddAndResize adds the demo pod, raises its CPU limit to 2 and returns
// its pod cgroup and container ID, checking that the resize completed.
func AddAndResize(t testing.TB, node *resize.Node, cluster *resize.Cluster) (podCgroup, containerID string) {
	t.Helper()
	ctx := context.Background()
	if _, err := node.AddPod(ctx, DemoPod()); err != nil {
		t.Fatal(err)
	}
	if _, err := node.Resize(ctx, resize.ResizeOp{Namespace: "default", Name: "demo", Patch: []byte(CPULimit2)}); err != nil {
		t.Fatal(err)
	}
	pod, err := cluster.GetPod(ctx, "default", "demo")
	if err != nil {
		t.Fatal(err)
	}
	if got := pod.Status.ContainerStatuses[0].Resources.Limits.Cpu().String(); got != "2" {
		t.Errorf("status cpu limit after the resize = %s, want 2", got)
	}
	info, err := node.Pod("default", "demo")
	if err != nil {
		t.Fatal(err)
	}
	return info.PodCgroup, info.ContainerIDs["app"]
}

// RestartKeeps restarts the kubelet on the same Deps, as a kubelet
// restart does, and checks that Node.Close tore nothing down: the new
// node finds the pod with the same container.
func RestartKeeps(t testing.TB, node *resize.Node, b *resize.Backend, deps resize.Deps, containerID string) *resize.Node {
	t.Helper()
	node.Close()
	nn, err := resize.NewNode(context.Background(), b.Config(), deps)
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	info, err := nn.Pod("default", "demo")
	if err != nil || info.ContainerIDs["app"] != containerID {
		t.Fatalf("after a restart the pod is %+v, %v; want it running with container %s", info, err, containerID)
	}
	return nn
}

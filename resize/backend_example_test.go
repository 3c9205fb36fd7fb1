package resize_test

import (
	"context"
	"fmt"

	"github.com/resizelet/resizelet/allocation/state"
	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/resize"
)

// A node on the simulated backend: an in-memory kernel and containerd
// that share one cgroup tree, nothing on the host. Close removes what the
// node created; Node.Close alone leaves it for a restart.
func ExampleSimulated() {
	ctx := context.Background()
	b, err := resize.Simulated(resize.NodeConfig{CgroupVersion: cgroup.V1})
	if err != nil {
		panic(err)
	}
	defer b.Close(ctx)
	cluster := resize.NewCluster(resize.ClusterOptions{})
	node, err := resize.NewNode(ctx, b.Config(), b.Deps(resize.Deps{
		Cluster: cluster, Allocated: state.NewMemory(), Actuated: state.NewMemory(),
	}))
	if err != nil {
		panic(err)
	}
	if _, err := node.AddPod(ctx, demoPod()); err != nil {
		panic(err)
	}
	patch := `{"spec":{"containers":[{"name":"app","resources":{"limits":{"cpu":"2"}}}]}}`
	if _, err := node.Resize(ctx, resize.ResizeOp{Namespace: "default", Name: "demo", Patch: []byte(patch)}); err != nil {
		panic(err)
	}
	info, _ := node.Pod("default", "demo")
	quota, _ := b.Cgroups().ReadFile(info.PodCgroup, "cpu.cfs_quota_us")
	fmt.Println(info.PodCgroup, "cpu.cfs_quota_us:", quota)

	node.Close() // a stopped kubelet: everything stays for the next NewNode
	if err := b.Close(ctx); err != nil {
		panic(err)
	}
	sandboxes, _ := b.Runtime().ListPodSandbox(ctx, nil)
	fmt.Println("sandboxes after Close:", len(sandboxes))
	fmt.Println("cgroups after Close:", b.Cgroups().Exists(info.PodCgroup))
	// Output:
	// kubepods/burstable/pod02c8c86b-636c-599e-9079-0fccaf6d8050 cpu.cfs_quota_us: 200000
	// sandboxes after Close: 0
	// cgroups after Close: false
}

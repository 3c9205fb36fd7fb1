package resize_test

import (
	"context"
	"fmt"
	"time"

	"github.com/resizelet/resizelet/allocation/state"
	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri/remote"
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
	if err := node.Resize(ctx, "default", "demo", []byte(patch)); err != nil {
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

// A node on the host's real cgroups (version detected) with the in-memory
// containerd: the node's cgroups go below a private parent
// (resizelet-<pid>-<n>), never into the host's kubepods, and Close removes
// that parent's tree. It needs root, so this example only compiles.
func ExampleHostCgroups() {
	ctx := context.Background()
	b, err := resize.HostCgroups(resize.NodeConfig{}, resize.WithCgroupRoot("/sys/fs/cgroup"))
	if err != nil {
		panic(err) // not root, no cgroup filesystem, or a NodeConfig.CgroupVersion the host does not have
	}
	defer b.Close(ctx)
	node, err := resize.NewNode(ctx, b.Config(), b.Deps(resize.Deps{Cluster: resize.NewCluster(resize.ClusterOptions{})}))
	if err != nil {
		panic(err)
	}
	defer node.Close()
	if _, err := node.AddPod(ctx, demoPod()); err != nil {
		panic(err)
	}
	fmt.Println("cgroups below", b.CgroupParent(), "on cgroup", b.Config().CgroupVersion)
}

// A node on a real containerd and the host's real cgroups. Remote checks
// that the runtime has the image (or pulls it with WithPullImage), takes
// the cgroup driver the runtime reports, labels what the node creates
// (LabelBackend) and puts the node's cgroups below a private parent.
// It needs root and a runtime, so this example only compiles; with
// examples/realhost/containerd.sh start DIR the endpoint is
// unix://DIR/containerd.sock and the image docker.io/resizelet/busybox:local.
func ExampleRemote() {
	ctx := context.Background()
	b, err := resize.Remote(ctx, "unix:///run/containerd/containerd.sock", "docker.io/library/busybox:latest", resize.NodeConfig{},
		resize.WithRemoteOptions(remote.WithCallTimeout(30*time.Second)))
	if err != nil {
		panic(err) // ErrImageNotPresent, ErrIncoherent (a driver or version mismatch), an unreachable runtime
	}
	defer b.Close(ctx) // removes the labelled sandboxes and containers and the private cgroup tree
	node, err := resize.NewNode(ctx, b.Config(), b.Deps(resize.Deps{Cluster: resize.NewCluster(resize.ClusterOptions{})}))
	if err != nil {
		panic(err)
	}
	defer node.Close()
	if _, err := node.AddPod(ctx, demoPod()); err != nil {
		panic(err)
	}
	patch := `{"spec":{"containers":[{"name":"app","resources":{"limits":{"cpu":"2"}}}]}}`
	if err := node.Resize(ctx, "default", "demo", []byte(patch)); err != nil {
		panic(err)
	}
}

package host_test

import (
	"context"
	"fmt"
	"time"

	"github.com/resizelet/resizelet/cri/remote"
	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/host"
	"github.com/resizelet/resizelet/resize/internal/backendtest"
)

// A node on the host's real cgroups (version detected) with the in-memory
// containerd: the node's cgroups go below a private parent
// (resizelet-<pid>-<n>), never into the host's kubepods, and Close removes
// that parent's tree. It needs root, so this example only compiles.
func ExampleCgroups() {
	ctx := context.Background()
	b, err := host.Cgroups(resize.NodeConfig{}, host.WithCgroupRoot("/sys/fs/cgroup"))
	if err != nil {
		panic(err) // not root, no cgroup filesystem, or a NodeConfig.CgroupVersion the host does not have
	}
	defer b.Close(ctx)
	node, err := resize.NewNode(ctx, b.Config(), b.Deps(resize.Deps{Cluster: resize.NewCluster(resize.ClusterOptions{})}))
	if err != nil {
		panic(err)
	}
	defer node.Close()
	if _, err := node.AddPod(ctx, backendtest.DemoPod()); err != nil {
		panic(err)
	}
	fmt.Println("cgroups below", b.CgroupParent(), "on cgroup", b.Config().CgroupVersion)
}

// A node on a real containerd and the host's real cgroups. Remote checks
// that the runtime has the image (or pulls it with WithPullImage), takes
// the cgroup driver the runtime reports, labels what the node creates
// (resize.LabelBackend) and puts the node's cgroups below a private parent.
// It needs root and a runtime, so this example only compiles; with
// examples/realhost/containerd.sh start DIR the endpoint is
// unix://DIR/containerd.sock and the image docker.io/resizelet/busybox:local.
func ExampleRemote() {
	ctx := context.Background()
	b, err := host.Remote(ctx, "unix:///run/containerd/containerd.sock", "docker.io/library/busybox:latest", resize.NodeConfig{},
		host.WithRemoteOptions(remote.WithCallTimeout(30*time.Second)))
	if err != nil {
		panic(err) // ErrImageNotPresent, ErrIncoherent (a driver or version mismatch), an unreachable runtime
	}
	defer b.Close(ctx) // removes the labelled sandboxes and containers and the private cgroup tree
	node, err := resize.NewNode(ctx, b.Config(), b.Deps(resize.Deps{Cluster: resize.NewCluster(resize.ClusterOptions{})}))
	if err != nil {
		panic(err)
	}
	defer node.Close()
	if _, err := node.AddPod(ctx, backendtest.DemoPod()); err != nil {
		panic(err)
	}
	patch := `{"spec":{"containers":[{"name":"app","resources":{"limits":{"cpu":"2"}}}]}}`
	if _, err := node.Resize(ctx, resize.ResizeOp{Namespace: "default", Name: "demo", Patch: []byte(patch)}); err != nil {
		panic(err)
	}
}

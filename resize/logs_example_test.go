package resize_test

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/resizelet/resizelet/allocation/state"
	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/resize"
)

// A node with a logger logs what the kubelet logs on the resize path, at
// the slog level of the kubelet's klog verbosity: with a handler at
// slog.LevelDebug (klog's -v=4), a resize beyond what the node has logs
// the capacity check (V3) and the retry's verdict (V4). Records carry the
// node's clock.
func ExampleDeps_logger() {
	ctx := context.Background()
	cg := cgroup.NewSimKernel(cgroup.V2)
	cluster := resize.NewCluster(resize.ClusterOptions{})
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{Level: slog.LevelDebug}))
	node, err := resize.NewNode(ctx, resize.NodeConfig{}, resize.Deps{
		Cluster: cluster, Cgroups: cg, Runtime: cri.NewSimContainerd(cg),
		Allocated: state.NewMemory(), Actuated: state.NewMemory(),
		Clock:  resize.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		Logger: logger,
	})
	if err != nil {
		panic(err)
	}
	if _, err := node.AddPod(ctx, demoPod()); err != nil {
		panic(err)
	}
	patch := `{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"100"},"limits":{"cpu":"100"}}}]}}`
	if _, err := node.Resize(ctx, resize.ResizeOp{Namespace: "default", Name: "demo", Patch: []byte(patch)}); err != nil {
		panic(err)
	}
	// Output:
	// time=2026-01-01T00:00:00.000Z level=DEBUG+1 msg="Node didn't have enough capacity: cpu, requested: 100000, capacity: 16000" pod=default/demo
	// time=2026-01-01T00:00:00.000Z level=DEBUG msg="Pod resize is infeasible" pod=default/demo
}

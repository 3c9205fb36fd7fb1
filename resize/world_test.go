package resize

import (
	"context"
	"testing"
	"time"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
)

// newBenchNode is a simulated node with in-memory checkpoints.
func newBenchNode(tb testing.TB, cfg NodeConfig) *testNode {
	tb.Helper()
	cfg = cfg.WithDefaults()
	tn := &testNode{t: tb, ctx: context.Background(), cfg: cfg}
	tn.cg = cgroup.NewSimKernel(cfg.CgroupVersion)
	tn.rt = cri.NewSimContainerd(tn.cg)
	tn.calls = cri.NewRecorder(tn.rt)
	tn.clock = NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	tn.cluster = NewCluster(ClusterOptions{Profile: cfg.Profile, FeatureGates: cfg.FeatureGates, HotPods: cfg.HotPods})
	tn.deps = Deps{Cluster: tn.cluster, Cgroups: tn.cg, Runtime: tn.rt, Clock: tn.clock}
	n, err := NewNode(tn.ctx, cfg, tn.deps)
	if err != nil {
		tb.Fatalf("NewNode: %v", err)
	}
	tn.node = n
	return tn
}

// allFiles is every cgroup's files, by path, with container IDs as the
// runtime numbered them (both nodes number in the same order per pod).
func allFiles(cg *cgroup.SimKernel) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, p := range cg.Paths() {
		out[p] = cg.Files(p)
	}
	return out
}

package resize

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
)

// anchorNode is the node of the anchor world (README, Performance), big
// enough that nothing is rejected: capacity = allocatable = 16000 CPUs,
// 64Ti of memory, 10000 pods; the kubelet's defaults otherwise (CPU
// manager none, memory manager None, CFS quota on, period 100ms).
func anchorNode() NodeConfig {
	return NodeConfig{Capacity: v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse("16000"),
		v1.ResourceMemory: resource.MustParse("64Ti"),
		v1.ResourcePods:   resource.MustParse("10000"),
	}}
}

func anchorContainer(name string, cpuReq, memReq, cpuLim, memLim int64) v1.Container {
	return v1.Container{Name: name, Image: "registry.k8s.io/pause:3.10", Resources: v1.ResourceRequirements{
		Requests: v1.ResourceList{
			v1.ResourceCPU:    *resource.NewMilliQuantity(cpuReq, resource.DecimalSI),
			v1.ResourceMemory: *resource.NewQuantity(memReq<<20, resource.BinarySI),
		},
		Limits: v1.ResourceList{
			v1.ResourceCPU:    *resource.NewMilliQuantity(cpuLim, resource.DecimalSI),
			v1.ResourceMemory: *resource.NewQuantity(memLim<<20, resource.BinarySI),
		},
	}}
}

// anchorPods are the N pods of the anchor world, in the order they are
// added: the target (Burstable; c1 200m/128Mi limits 400m/256Mi, c2
// 100m/64Mi limits 200m/128Mi), then pod-0000, pod-0001, ... drawn from
// math/rand seeded 20260101: per pod f (1: limits = requests, 2: limits
// twice the requests), k containers c1..ck, and per container cpu
// 100+50*Intn(9) millicores then memory 64+32*Intn(7) Mi, in that order.
func anchorPods(n int) []*v1.Pod {
	pod := func(name string, cs ...v1.Container) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: v1.PodSpec{Containers: cs}}
	}
	pods := []*v1.Pod{pod("target", anchorContainer("c1", 200, 128, 400, 256), anchorContainer("c2", 100, 64, 200, 128))}
	r := rand.New(rand.NewSource(20260101))
	for i := 0; i < n-1; i++ {
		f := int64(1 + r.Intn(2))
		k := 1 + r.Intn(3)
		var cs []v1.Container
		for c := 1; c <= k; c++ {
			cpu := int64(100 + 50*r.Intn(9))
			mem := int64(64 + 32*r.Intn(7))
			cs = append(cs, anchorContainer(fmt.Sprintf("c%d", c), cpu, mem, f*cpu, f*mem))
		}
		pods = append(pods, pod(fmt.Sprintf("pod-%04d", i), cs...))
	}
	return pods
}

// newAnchorNode is a simulated node in the anchor world with n settled
// pods, built with AddPods.
func newAnchorNode(tb testing.TB, n int) *testNode {
	tb.Helper()
	tn := newBenchNode(tb, anchorNode())
	if _, err := tn.node.AddPods(tn.ctx, anchorPods(n)); err != nil {
		tb.Fatal(err)
	}
	return tn
}

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

// TestAnchorWorld checks the world against the container counts of the
// world the kubelet was measured in: 23 / 232 / 1963 / 9878 for 10 / 110 /
// 1000 / 5000 pods.
func TestAnchorWorld(t *testing.T) {
	for n, want := range map[int]int{10: 23, 110: 232, 1000: 1963, 5000: 9878} {
		got := 0
		for _, p := range anchorPods(n) {
			got += len(p.Spec.Containers)
		}
		if got != want {
			t.Errorf("%d pods have %d containers, want %d", n, got, want)
		}
	}
}

// TestAddPodsIsAddPodInTurn: building a world with AddPods ends where
// AddPod on each pod in turn ends: the same pods with the same statuses,
// allocations and actuations, the same cgroup files, and each pod's events
// in the same order.
func TestAddPodsIsAddPodInTurn(t *testing.T) {
	pods := anchorPods(40)
	batch := newBenchNode(t, anchorNode())
	if _, err := batch.node.AddPods(batch.ctx, pods); err != nil {
		t.Fatal(err)
	}
	one := newBenchNode(t, anchorNode())
	for _, p := range pods {
		if _, err := one.node.AddPod(one.ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	eventsOf := func(tn *testNode) map[string][]string {
		out := map[string][]string{}
		for _, e := range tn.cluster.Events() {
			out[e.Pod] = append(out[e.Pod], e.Type+" "+e.Reason+" "+e.Message)
		}
		return out
	}
	if !equality.Semantic.DeepEqual(eventsOf(batch), eventsOf(one)) {
		t.Error("the pods' events differ")
	}
	for _, p := range pods {
		a, b := batch.pod(p.Name), one.pod(p.Name)
		if !equality.Semantic.DeepEqual(a.Status, b.Status) || !equality.Semantic.DeepEqual(a.Spec, b.Spec) {
			t.Fatalf("pod %s differs:\n%+v\n%+v", p.Name, a.Status, b.Status)
		}
		ia, ib := batch.info(p.Name), one.info(p.Name)
		if !equality.Semantic.DeepEqual(ia.Allocated, ib.Allocated) || !equality.Semantic.DeepEqual(ia.Actuated, ib.Actuated) || ia.PodCgroup != ib.PodCgroup {
			t.Fatalf("pod %s: kubelet records differ", p.Name)
		}
	}
	if !equality.Semantic.DeepEqual(allFiles(batch.cg), allFiles(one.cg)) {
		t.Error("the cgroup files differ")
	}
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

package resize

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/cri"
)

// testNode is a simulated node and the parts under it.
type testNode struct {
	t       testing.TB
	ctx     context.Context
	node    *Node
	cfg     NodeConfig
	deps    Deps
	cluster *Cluster
	cg      *cgroup.SimKernel
	rt      *cri.SimContainerd
	calls   *cri.Recorder
	clock   *FakeClock
}

func newTestNode(t *testing.T, cfg NodeConfig) *testNode {
	t.Helper()
	cfg = cfg.WithDefaults()
	tn := &testNode{t: t, ctx: context.Background(), cfg: cfg}
	tn.cg = cgroup.NewSimKernel(cfg.CgroupVersion)
	tn.rt = cri.NewSimContainerd(tn.cg, cri.WithContainerWeight(cgconfig.QuadraticWeight))
	tn.calls = cri.NewRecorder(tn.rt)
	tn.clock = NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	tn.cluster = NewCluster(ClusterOptions{Profile: cfg.Profile, FeatureGates: cfg.FeatureGates, HotPods: cfg.HotPods})
	tn.deps = Deps{Cluster: tn.cluster, Cgroups: tn.cg, Runtime: tn.calls, Clock: tn.clock, CheckpointDir: t.TempDir()}
	n, err := NewNode(tn.ctx, cfg, tn.deps)
	if err != nil {
		t.Fatalf("NewNode: %v", err)
	}
	tn.node = n
	return tn
}

func (tn *testNode) restart() {
	tn.t.Helper()
	tn.node.Close()
	n, err := NewNode(tn.ctx, tn.cfg, tn.deps)
	if err != nil {
		tn.t.Fatalf("restart NewNode: %v", err)
	}
	tn.node = n
}

func (tn *testNode) pod(name string) *v1.Pod {
	tn.t.Helper()
	p, err := tn.cluster.GetPod(context.Background(), "default", name)
	if err != nil {
		tn.t.Fatal(err)
	}
	return p
}

func (tn *testNode) info(name string) PodInfo {
	tn.t.Helper()
	i, err := tn.node.Pod("default", name)
	if err != nil {
		tn.t.Fatal(err)
	}
	return i
}

func (tn *testNode) file(path, file string) string {
	tn.t.Helper()
	s, err := tn.cg.ReadFile(path, file)
	if err != nil {
		tn.t.Fatalf("read %s/%s: %v", path, file, err)
	}
	return s
}

// events returns "Type Reason Message" lines of a pod's events from index from.
func (tn *testNode) events(from int) []string {
	var out []string
	for i, e := range tn.cluster.Events() {
		if i >= from {
			out = append(out, e.Type+" "+e.Reason+" "+e.Message)
		}
	}
	return out
}

func mustResize(t *testing.T, tn *testNode, name, patch string) {
	t.Helper()
	if _, err := tn.node.Resize(tn.ctx, ResizeOp{Namespace: "default", Name: name, Patch: []byte(patch)}); err != nil {
		t.Fatalf("resize %s with %s: %v", name, patch, err)
	}
}

func resources(cpuReq, memReq, cpuLim, memLim string) v1.ResourceRequirements {
	r := v1.ResourceRequirements{}
	add := func(l *v1.ResourceList, name v1.ResourceName, q string) {
		if q == "" {
			return
		}
		if *l == nil {
			*l = v1.ResourceList{}
		}
		(*l)[name] = resource.MustParse(q)
	}
	add(&r.Requests, v1.ResourceCPU, cpuReq)
	add(&r.Requests, v1.ResourceMemory, memReq)
	add(&r.Limits, v1.ResourceCPU, cpuLim)
	add(&r.Limits, v1.ResourceMemory, memLim)
	return r
}

func demoPod() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "resize-demo", Namespace: "default"},
		Spec: v1.PodSpec{Containers: []v1.Container{{
			Name:      "pause",
			Image:     "registry.k8s.io/pause:3.10",
			Resources: resources("700m", "200Mi", "700m", "200Mi"),
			ResizePolicy: []v1.ContainerResizePolicy{
				{ResourceName: v1.ResourceCPU, RestartPolicy: v1.NotRequired},
				{ResourceName: v1.ResourceMemory, RestartPolicy: v1.RestartContainer},
			},
		}}},
	}
}

func statusOf(t *testing.T, p *v1.Pod, name string) v1.ContainerStatus {
	t.Helper()
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == name {
			return cs
		}
	}
	t.Fatalf("pod %s has no status for container %s", p.Name, name)
	return v1.ContainerStatus{}
}

func qty(l v1.ResourceList, name v1.ResourceName) string {
	q := l[name]
	return q.String()
}

// TestWalkthrough is the seed article's story on cgroup v2 and v1: CPU
// 700m -> 800m in place, memory 200Mi -> 300Mi with one restart, and an
// infeasible 1000-CPU request.
func TestWalkthrough(t *testing.T) {
	for _, version := range []cgroup.Version{cgroup.V2, cgroup.V1} {
		t.Run(version.String(), func(t *testing.T) {
			tn := newTestNode(t, NodeConfig{CgroupVersion: version})
			if _, err := tn.node.AddPod(tn.ctx, demoPod()); err != nil {
				t.Fatal(err)
			}
			p := tn.pod("resize-demo")
			if p.Status.QOSClass != v1.PodQOSGuaranteed {
				t.Fatalf("qosClass = %s, want Guaranteed", p.Status.QOSClass)
			}
			info := tn.info("resize-demo")
			if want := "kubepods/pod" + string(p.UID); info.PodCgroup != want {
				t.Fatalf("pod cgroup = %s, want %s", info.PodCgroup, want)
			}
			firstID := info.ContainerIDs["pause"]
			firstPID, _ := tn.rt.PID(firstID)

			// CPU 700m -> 800m, no restart.
			mark := len(tn.cluster.Events())
			mustResize(t, tn, "resize-demo", `{"spec":{"containers":[{"name":"pause","resources":{"requests":{"cpu":"800m"},"limits":{"cpu":"800m"}}}]}}`)
			p = tn.pod("resize-demo")
			cs := statusOf(t, p, "pause")
			if cs.RestartCount != 0 || qty(cs.Resources.Requests, v1.ResourceCPU) != "800m" || qty(cs.Resources.Limits, v1.ResourceCPU) != "800m" {
				t.Fatalf("after cpu resize: restartCount %d, status resources %v", cs.RestartCount, cs.Resources)
			}
			if p.Generation != 2 {
				t.Fatalf("generation = %d, want 2", p.Generation)
			}
			if len(p.Status.Conditions) != 0 {
				t.Fatalf("conditions after completion = %v, want none", p.Status.Conditions)
			}
			res := `{"containers":[{"name":"pause","resources":{"limits":{"cpu":"800m","memory":"200Mi"},"requests":{"cpu":"800m","memory":"200Mi"}}}],"generation":2}`
			wantEvents := []string{
				"Normal ResizeStarted Pod resize started: " + res,
				"Normal ResizeCompleted Pod resize completed: " + res,
			}
			if got := tn.events(mark); strings.Join(got, "\n") != strings.Join(wantEvents, "\n") {
				t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantEvents, "\n"))
			}
			if id := tn.info("resize-demo").ContainerIDs["pause"]; id != firstID {
				t.Fatalf("container id changed on a NotRequired cpu resize: %s -> %s", firstID, id)
			}
			if pid, _ := tn.rt.PID(firstID); pid != firstPID {
				t.Fatalf("pid changed on an in-place resize: %d -> %d", firstPID, pid)
			}
			if version == cgroup.V2 {
				if got := tn.file(info.PodCgroup, "cpu.max"); got != "80000 100000" {
					t.Fatalf("pod cpu.max = %q", got)
				}
				// 800m -> 819 shares -> linear weight 32.
				if got := tn.file(info.PodCgroup, "cpu.weight"); got != fmt.Sprint(cgconfig.LinearWeight(819)) || got != "32" {
					t.Fatalf("pod cpu.weight = %q, want 32", got)
				}
				if got := tn.file(info.ContainerCgroups["pause"], "cpu.weight"); got != fmt.Sprint(cgconfig.QuadraticWeight(819)) {
					t.Fatalf("container cpu.weight = %q, want %d", got, cgconfig.QuadraticWeight(819))
				}
			} else {
				if got := tn.file(info.PodCgroup, "cpu.cfs_quota_us"); got != "80000" {
					t.Fatalf("pod cpu.cfs_quota_us = %q", got)
				}
				if got := tn.file(info.PodCgroup, "cpu.shares"); got != "819" {
					t.Fatalf("pod cpu.shares = %q", got)
				}
			}

			// Memory 200Mi -> 300Mi with RestartContainer.
			mark = len(tn.cluster.Events())
			mustResize(t, tn, "resize-demo", `{"spec":{"containers":[{"name":"pause","resources":{"requests":{"memory":"300Mi"},"limits":{"memory":"300Mi"}}}]}}`)
			p = tn.pod("resize-demo")
			cs = statusOf(t, p, "pause")
			if cs.RestartCount != 1 || qty(cs.Resources.Limits, v1.ResourceMemory) != "300Mi" {
				t.Fatalf("after memory resize: restartCount %d, resources %v", cs.RestartCount, cs.Resources)
			}
			got := tn.events(mark)
			if !containsInOrder(got, "Normal ResizeStarted", "Normal Killing Container pause resize requires restart", "Normal Created Container created", "Normal Started Container started", "Normal ResizeCompleted") {
				t.Fatalf("memory resize events:\n%s", strings.Join(got, "\n"))
			}
			newID := tn.info("resize-demo").ContainerIDs["pause"]
			if newID == firstID {
				t.Fatal("container kept its id across a RestartContainer resize")
			}
			memFile := "memory.max"
			if version == cgroup.V1 {
				memFile = "memory.limit_in_bytes"
			}
			if got := tn.file(info.PodCgroup, memFile); got != "314572800" {
				t.Fatalf("pod %s = %q, want 314572800", memFile, got)
			}

			// 1000 CPUs is more than the node has.
			mark = len(tn.cluster.Events())
			mustResize(t, tn, "resize-demo", `{"spec":{"containers":[{"name":"pause","resources":{"requests":{"cpu":"1000"},"limits":{"cpu":"1000"}}}]}}`)
			p = tn.pod("resize-demo")
			if len(p.Status.Conditions) != 1 {
				t.Fatalf("conditions = %v, want one Pending", p.Status.Conditions)
			}
			c := p.Status.Conditions[0]
			wantMsg := "Node didn't have enough capacity: cpu, requested: 1000000, capacity: 16000"
			if c.Type != v1.PodResizePending || c.Reason != "Infeasible" || c.Message != wantMsg || c.ObservedGeneration != 4 {
				t.Fatalf("condition = %+v", c)
			}
			cs = statusOf(t, p, "pause")
			if qty(cs.Resources.Limits, v1.ResourceCPU) != "800m" {
				t.Fatalf("status cpu limit = %s, want the old 800m", qty(cs.Resources.Limits, v1.ResourceCPU))
			}
			infeasible := `Warning ResizeInfeasible Pod resize Infeasible: {"containers":[{"name":"pause","resources":{"limits":{"cpu":"1k","memory":"300Mi"},"requests":{"cpu":"1k","memory":"300Mi"}}}],"generation":4,"error":"` + wantMsg + `"}`
			if got := tn.events(mark); len(got) != 1 || got[0] != infeasible {
				t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), infeasible)
			}
		})
	}
}

func containsInOrder(lines []string, prefixes ...string) bool {
	i := 0
	for _, l := range lines {
		if i < len(prefixes) && strings.HasPrefix(l, prefixes[i]) {
			i++
		}
	}
	return i == len(prefixes)
}

// TestNodeConfigValidation: a node config the kubelet would refuse is an
// error that names the field, and nothing is started.
func TestNodeConfigValidation(t *testing.T) {
	for _, tc := range []struct {
		cfg  NodeConfig
		want string
	}{
		{NodeConfig{Profile: "1.99"}, "profile"},
		{NodeConfig{OS: "plan9"}, "os"},
		{NodeConfig{CgroupDriver: "openrc"}, "cgroupDriver"},
		{NodeConfig{CPUManagerPolicy: "Static"}, "cpuManagerPolicy"},
		{NodeConfig{MemoryManagerPolicy: "static"}, "memoryManagerPolicy"},
		{NodeConfig{SwapBehavior: "UnlimitedSwap"}, "swapBehavior"},
		{NodeConfig{CPUCFSQuotaPeriod: 2 * time.Second}, "cpuCFSQuotaPeriod"},
		{NodeConfig{Capacity: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")}, Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("3")}}, "allocatable.cpu"},
	} {
		err := tc.cfg.WithDefaults().Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one naming %q", tc.cfg, err, tc.want)
		}
		cg := cgroup.NewSimKernel(cgroup.V2)
		if _, err := NewNode(context.Background(), tc.cfg, Deps{Cluster: NewCluster(ClusterOptions{}), Cgroups: cg, Runtime: cri.NewSimContainerd(cg)}); err == nil {
			t.Errorf("%+v: NewNode accepted it", tc.cfg)
		}
		if paths := cg.Paths(); len(paths) > 1 {
			t.Errorf("%+v: NewNode created cgroups %v", tc.cfg, paths)
		}
	}
	if err := (NodeConfig{}).WithDefaults().Validate(); err != nil {
		t.Errorf("the defaults do not validate: %v", err)
	}
}

// TestCanceledContextEndsTheRun: a call whose context is done stops
// touching the node, lets every operation it started end on that error,
// and returns it; the node is usable afterwards.
func TestCanceledContextEndsTheRun(t *testing.T) {
	tn := newTestNode(t, NodeConfig{})
	if _, err := tn.node.AddPod(tn.ctx, demoPod()); err != nil {
		t.Fatal(err)
	}
	writes := len(tn.cg.Writes())
	ctx, cancel := context.WithCancel(tn.ctx)
	cancel()
	_, err := tn.node.Resize(ctx, ResizeOp{Namespace: "default", Name: "resize-demo", Patch: []byte(`{"spec":{"containers":[{"name":"pause","resources":{"requests":{"cpu":"800m"},"limits":{"cpu":"800m"}}}]}}`)})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Resize with a canceled context: %v", err)
	}
	if n := len(tn.cg.Writes()); n != writes {
		t.Errorf("%d cgroup writes after the context was canceled", n-writes)
	}
	// The allocation was checkpointed: the node's records stay whole.
	if a := tn.info("resize-demo").Allocated["pause"]; a.Limits.Cpu().String() != "800m" {
		t.Errorf("allocated cpu limit %s, want 800m", a.Limits.Cpu())
	}
	tn.restart()
	if err := tn.node.Sync(tn.ctx); err != nil {
		t.Fatal(err)
	}
	if got := tn.file(tn.info("resize-demo").PodCgroup, "cpu.max"); got != "80000 100000" {
		t.Errorf("after a sync with a live context cpu.max = %q, want the resize done", got)
	}
}

// errOf is the error of a call that also returns a pod (Node.Resize), for
// tests that want the error alone.
func errOf(_ *v1.Pod, err error) error { return err }

// TestListOwnPodsIsOwnPodsOfListPods: the pods a node starts with, read
// through NodePodLister, are those it would keep of ListPods (ownPods),
// in the same order: on a cluster with pods on several nodes and unbound
// ones, created interleaved, one deleted and created again elsewhere, for
// a node that takes unbound pods and one that takes bound pods only. A
// node started there has those pods and no other node's.
func TestListOwnPodsIsOwnPodsOfListPods(t *testing.T) {
	ctx := context.Background()
	c := NewCluster(ClusterOptions{})
	for i := range 16 {
		node := []string{"a", "", "b", "a", "c", ""}[i%6]
		if _, err := c.CreatePod(ctx, podOnNode(fmt.Sprintf("p%d", i), "10m", node)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.DeletePod(ctx, "default", "p1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreatePod(ctx, podOnNode("p1", "10m", "a")); err != nil {
		t.Fatal(err)
	}
	names := func(pods []*v1.Pod) []string {
		var out []string
		for _, p := range pods {
			out = append(out, p.Name)
		}
		return out
	}
	for _, boundOnly := range []bool{false, true} {
		for _, name := range []string{"a", "b", "ghost"} {
			lister := &Node{cluster: c, cfg: NodeConfig{Name: name}, boundOnly: boundOnly}
			listing := &Node{cluster: struct{ API }{c}, cfg: NodeConfig{Name: name}, boundOnly: boundOnly}
			want := lister.ownPods(c.ListPods(ctx))
			for _, n := range []*Node{lister, listing} {
				if got := n.listOwnPods(ctx); !apiequality.Semantic.DeepEqual(got, want) {
					t.Errorf("%s (bound only %v, %T): %v\nwant %v", name, boundOnly, n.cluster, names(got), names(want))
				}
			}
		}
	}
	cg := cgroup.NewSimKernel(cgroup.V2)
	cfg := smallNode()
	cfg.Name = "a"
	n, err := NewNode(ctx, cfg, Deps{Cluster: c, Cgroups: cg, Runtime: cri.NewSimContainerd(cg)})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	for _, p := range c.ListPods(ctx) {
		_, err := n.Pod(p.Namespace, p.Name)
		if mine := p.Spec.NodeName == "a" || p.Spec.NodeName == ""; mine != (err == nil) {
			t.Errorf("%s on %q: node a's Pod() = %v", p.Name, p.Spec.NodeName, err)
		}
	}
}

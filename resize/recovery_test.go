package resize

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resizelet/resizelet/allocation/state"
	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
)

// newFaultyNode is a testNode whose runtime can be made to fail.
func newFaultyNode(t *testing.T, cfg NodeConfig) (*testNode, *cri.FaultInjector) {
	t.Helper()
	tn := newTestNode(t, cfg)
	faults := cri.NewFaultInjector(tn.calls)
	tn.deps.Runtime = faults
	tn.restart()
	return tn, faults
}

// TestRestartBetweenAllocationAndActuation: the allocation is accepted and
// checkpointed, the runtime refuses the update (InProgress Error), and a
// kubelet restarted on the same checkpoints and runtime finishes the resize.
func TestRestartBetweenAllocationAndActuation(t *testing.T) {
	tn, faults := newFaultyNode(t, NodeConfig{})
	if _, err := tn.node.AddPod(tn.ctx, demoPod()); err != nil {
		t.Fatal(err)
	}
	faults.Inject(cri.Fault{Method: "UpdateContainerResources", PodName: "resize-demo", Err: errors.New("runtime is down"), Times: 1})
	mark := len(tn.cluster.Events())
	mustResize(t, tn, "resize-demo", `{"spec":{"containers":[{"name":"pause","resources":{"requests":{"cpu":"800m"},"limits":{"cpu":"800m"}}}]}}`)

	p := tn.pod("resize-demo")
	if len(p.Status.Conditions) != 1 || p.Status.Conditions[0].Type != v1.PodResizeInProgress ||
		p.Status.Conditions[0].Reason != v1.PodReasonError || !strings.Contains(p.Status.Conditions[0].Message, "runtime is down") {
		t.Fatalf("conditions after the failed update: %+v", p.Status.Conditions)
	}
	if got := tn.events(mark); !containsInOrder(got, "Normal ResizeStarted", "Warning ResizeError Pod resize error: ") || !strings.Contains(got[len(got)-1], `"error":"runtime is down"`) {
		t.Fatalf("events: %s", strings.Join(got, "\n"))
	}
	if qty(statusOf(t, p, "pause").Resources.Limits, v1.ResourceCPU) != "700m" {
		t.Fatal("status moved although the runtime refused the update")
	}
	// The allocation is on disk; the actuated state still has the old value.
	blob, err := os.ReadFile(filepath.Join(tn.deps.CheckpointDir, state.AllocatedStateFile))
	if err != nil || !strings.Contains(string(blob), `800m`) {
		t.Fatalf("allocated checkpoint: %v %s", err, blob)
	}

	mark = len(tn.cluster.Events())
	tn.restart()
	p = tn.pod("resize-demo")
	if len(p.Status.Conditions) != 0 {
		t.Fatalf("conditions after the restart: %+v", p.Status.Conditions)
	}
	if got := qty(statusOf(t, p, "pause").Resources.Limits, v1.ResourceCPU); got != "800m" {
		t.Fatalf("status cpu limit after the restart = %s, want 800m", got)
	}
	if got := tn.events(mark); !containsInOrder(got, "Normal ResizeCompleted") || containsInOrder(got, "Normal Created") {
		t.Fatalf("events after the restart (want completion, no new container): %s", strings.Join(got, "\n"))
	}
	if got := tn.file(tn.info("resize-demo").PodCgroup, "cpu.max"); got != "80000 100000" {
		t.Fatalf("pod cpu.max = %q", got)
	}
}

// TestMemoryDecreaseBelowUsage: lowering a memory limit below what the
// container uses fails before anything changes, with InProgress Error and
// the kubelet's message; reverting the spec recovers (§3.2).
func TestMemoryDecreaseBelowUsage(t *testing.T) {
	for _, version := range []cgroup.Version{cgroup.V2, cgroup.V1} {
		t.Run(version.String(), func(t *testing.T) {
			tn := newTestNode(t, NodeConfig{CgroupVersion: version})
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "default"}, Spec: v1.PodSpec{Containers: []v1.Container{
				{Name: "c", Image: "x", Resources: resources("100m", "200Mi", "100m", "200Mi")},
			}}}
			if _, err := tn.node.AddPod(tn.ctx, pod); err != nil {
				t.Fatal(err)
			}
			info := tn.info("m")
			if err := tn.rt.SetMemoryUsage(info.ContainerIDs["c"], 150<<20); err != nil {
				t.Fatal(err)
			}
			writes := len(tn.cg.Writes())
			mark := len(tn.cluster.Events())
			mustResize(t, tn, "m", `{"spec":{"containers":[{"name":"c","resources":{"requests":{"memory":"100Mi"},"limits":{"memory":"100Mi"}}}]}}`)
			p := tn.pod("m")
			want := `cannot decrease memory limits: [attempting to set pod memory limit (104857600) below current usage (157286400), attempting to set container "c" memory limit (104857600) below current usage (157286400)]`
			if len(p.Status.Conditions) != 1 || p.Status.Conditions[0].Type != v1.PodResizeInProgress ||
				p.Status.Conditions[0].Reason != v1.PodReasonError || p.Status.Conditions[0].Message != want {
				t.Fatalf("conditions: %+v\nwant message %s", p.Status.Conditions, want)
			}
			if got := len(tn.cg.Writes()); got != writes {
				t.Fatalf("%d cgroup writes happened although the check failed", got-writes)
			}
			if got := tn.events(mark); !containsInOrder(got, "Normal ResizeStarted", "Warning ResizeError") {
				t.Fatalf("events: %s", strings.Join(got, "\n"))
			}
			if got := qty(statusOf(t, p, "c").Resources.Limits, v1.ResourceMemory); got != "200Mi" {
				t.Fatalf("status memory limit = %s, want 200Mi", got)
			}
			if got := qty(tn.info("m").Allocated["c"].Limits, v1.ResourceMemory); got != "100Mi" {
				t.Fatalf("allocated memory limit = %s, want 100Mi", got)
			}

			// A later sync retries and fails the same way, without a second event.
			mark = len(tn.cluster.Events())
			if err := tn.node.Advance(tn.ctx, BackOffPeriod); err != nil {
				t.Fatal(err)
			}
			if got := tn.events(mark); len(got) != 0 {
				t.Fatalf("retry emitted events: %v", got)
			}

			mustResize(t, tn, "m", `{"spec":{"containers":[{"name":"c","resources":{"requests":{"memory":"200Mi"},"limits":{"memory":"200Mi"}}}]}}`)
			p = tn.pod("m")
			if len(p.Status.Conditions) != 0 {
				t.Fatalf("conditions after reverting: %+v", p.Status.Conditions)
			}
		})
	}
}

// TestKillFailureStopsTheSync: when the container a RestartContainer
// resize must restart cannot be stopped, the sync ends there (nothing is
// resized or started), and a later sync finishes the resize.
func TestKillFailureStopsTheSync(t *testing.T) {
	tn, faults := newFaultyNode(t, NodeConfig{})
	if _, err := tn.node.AddPod(tn.ctx, demoPod()); err != nil {
		t.Fatal(err)
	}
	faults.Inject(cri.Fault{Method: "StopContainer", PodName: "resize-demo", Err: errors.New("stop timed out"), Times: 1})
	writes := len(tn.cg.Writes())
	tn.calls.Reset()
	mustResize(t, tn, "resize-demo", `{"spec":{"containers":[{"name":"pause","resources":{"requests":{"memory":"300Mi"},"limits":{"memory":"300Mi"}}}]}}`)
	for _, c := range tn.calls.Calls() {
		if c.Method == "CreateContainer" || c.Method == "UpdatePodSandboxResources" {
			t.Fatalf("%s called after the kill failed", c.Method)
		}
	}
	if got := len(tn.cg.Writes()); got != writes {
		t.Fatalf("%d cgroup writes after the kill failed", got-writes)
	}
	p := tn.pod("resize-demo")
	if statusOf(t, p, "pause").RestartCount != 0 || len(p.Status.Conditions) != 1 || p.Status.Conditions[0].Type != v1.PodResizeInProgress {
		t.Fatalf("after the failed kill: restartCount %d, conditions %+v", statusOf(t, p, "pause").RestartCount, p.Status.Conditions)
	}
	if err := tn.node.Advance(tn.ctx, BackOffPeriod); err != nil {
		t.Fatal(err)
	}
	p = tn.pod("resize-demo")
	if statusOf(t, p, "pause").RestartCount != 1 || len(p.Status.Conditions) != 0 {
		t.Fatalf("after the retry: restartCount %d, conditions %+v", statusOf(t, p, "pause").RestartCount, p.Status.Conditions)
	}
}

package resize

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func smallNode() NodeConfig {
	return NodeConfig{Capacity: v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse("4"),
		v1.ResourceMemory: resource.MustParse("8Gi"),
		v1.ResourcePods:   resource.MustParse("110"),
	}}
}

func cpuPod(name, cpu string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: v1.PodSpec{Containers: []v1.Container{
		{Name: "c", Image: "x", Resources: resources(cpu, "100Mi", cpu, "100Mi")},
	}}}
}

func cpuPatch(cpu string) string {
	return `{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"` + cpu + `"},"limits":{"cpu":"` + cpu + `"}}}]}}`
}

func pendingOf(t *testing.T, p *v1.Pod) *v1.PodCondition {
	t.Helper()
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == v1.PodResizePending {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// TestDeferredUntilAnotherPodShrinks: a resize that does not fit beside the
// other pods' allocations is Deferred with the predicate's message; the
// shrinking pod frees room only once its status shows the smaller value,
// so the deferred resize is admitted by the retry after that resize
// completes (details 2 and 4).
func TestDeferredUntilAnotherPodShrinks(t *testing.T) {
	tn := newTestNode(t, smallNode())
	for _, p := range []*v1.Pod{cpuPod("a", "2"), cpuPod("b", "1")} {
		if _, err := tn.node.AddPod(tn.ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	mark := len(tn.cluster.Events())
	mustResize(t, tn, "b", cpuPatch("3"))
	c := pendingOf(t, tn.pod("b"))
	want := "Node didn't have enough resource: cpu, requested: 3000, used: 2000, capacity: 4000"
	if c == nil || c.Reason != "Deferred" || c.Message != want || c.ObservedGeneration != 2 {
		t.Fatalf("pending condition = %+v, want Deferred %q", c, want)
	}
	if got := tn.events(mark); len(got) != 1 || !strings.HasPrefix(got[0], "Warning ResizeDeferred Pod resize Deferred: ") || !strings.Contains(got[0], `"error":"`+want+`"`) {
		t.Fatalf("events: %v", got)
	}

	mark = len(tn.cluster.Events())
	mustResize(t, tn, "a", cpuPatch("1"))
	if c := pendingOf(t, tn.pod("b")); c != nil {
		t.Fatalf("b still pending after a shrank: %+v", c)
	}
	got := tn.events(mark)
	// a's resize starts and completes; b's is admitted only after that.
	if !containsInOrder(got, "Normal ResizeStarted", "Normal ResizeCompleted", "Normal ResizeStarted", "Normal ResizeCompleted") {
		t.Fatalf("events: %s", strings.Join(got, "\n"))
	}
	if total := tn.node.AllocatedTotal(); total.Cpu().MilliValue() != 4000 {
		t.Fatalf("allocated cpu = %s, want 4", total.Cpu())
	}
}

// TestDeferredRetriedOnDeleteAndTimer: a deferred resize is retried when a
// pod is removed, and by the periodic retry (30 s after start, then every
// 3 minutes after any retry).
func TestDeferredRetriedOnDeleteAndTimer(t *testing.T) {
	tn := newTestNode(t, smallNode())
	for _, p := range []*v1.Pod{cpuPod("a", "2"), cpuPod("b", "1")} {
		if _, err := tn.node.AddPod(tn.ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	mustResize(t, tn, "b", cpuPatch("3"))
	if err := tn.node.DeletePod(tn.ctx, "default", "a"); err != nil {
		t.Fatal(err)
	}
	if c := pendingOf(t, tn.pod("b")); c != nil {
		t.Fatalf("b still pending after a was deleted: %+v", c)
	}

	// The periodic retry: every retry (of any trigger) pushes the next
	// periodic one 3 minutes out, and a retry refreshes the Pending
	// condition's lastProbeTime.
	if _, err := tn.node.AddPod(tn.ctx, cpuPod("d", "500m")); err != nil {
		t.Fatal(err)
	}
	mustResize(t, tn, "d", cpuPatch("2"))
	c := pendingOf(t, tn.pod("d"))
	if c == nil || c.Reason != "Deferred" {
		t.Fatalf("d not deferred: %+v", c)
	}
	deferredAt := tn.clock.Now()
	if err := tn.node.Advance(tn.ctx, 3*time.Minute-time.Second); err != nil {
		t.Fatal(err)
	}
	if c := pendingOf(t, tn.pod("d")); c == nil || !c.LastProbeTime.Time.Equal(deferredAt) {
		t.Fatalf("retried before 3 minutes: %+v", c)
	}
	if err := tn.node.Advance(tn.ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	c = pendingOf(t, tn.pod("d"))
	if c == nil || !c.LastProbeTime.Time.Equal(deferredAt.Add(3*time.Minute)) || !c.LastTransitionTime.Time.Equal(deferredAt) {
		t.Fatalf("periodic retry at 3 minutes: %+v", c)
	}
}

// TestRestartRetriesPendingResizes: a restarted kubelet rebuilds the queue
// and retries it (pods_added), which moves the next periodic retry to
// 3 minutes out rather than the 30 s a fresh timer would give.
func TestRestartRetriesPendingResizes(t *testing.T) {
	tn := newTestNode(t, smallNode())
	for _, p := range []*v1.Pod{cpuPod("a", "3"), cpuPod("b", "1")} {
		if _, err := tn.node.AddPod(tn.ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	mustResize(t, tn, "b", cpuPatch("2"))
	tn.restart() // a new kubelet: the queue is rebuilt and retried (pods_added)
	start := tn.clock.Now()
	if err := tn.node.Advance(tn.ctx, 3*time.Minute+time.Second); err != nil {
		t.Fatal(err)
	}
	c := pendingOf(t, tn.pod("b"))
	if c == nil || !c.LastProbeTime.Time.Equal(start.Add(3*time.Minute)) {
		t.Fatalf("want the retry at start+3m (pods_added reset the 30 s timer): %+v", c)
	}
}

// TestPendingQueueOrder: when room frees up for one of several deferred
// resizes, the queue order decides who gets it (§1.6): higher priority
// first, then Guaranteed before Burstable, then the longest deferred.
func TestPendingQueueOrder(t *testing.T) {
	prio := func(p *v1.Pod, v int32) *v1.Pod { p.Spec.Priority = &v; return p }
	burstable := func(p *v1.Pod) *v1.Pod {
		p.Spec.Containers[0].Resources.Limits = nil
		return p
	}
	for _, tc := range []struct {
		name   string
		pods   []*v1.Pod // each asks 1 CPU; then each resizes to 2, in this order
		winner string
	}{
		{"priority", []*v1.Pod{cpuPod("a", "1"), prio(cpuPod("b", "1"), 100), cpuPod("c", "1")}, "b"},
		{"guaranteed", []*v1.Pod{burstable(cpuPod("a", "1")), cpuPod("b", "1"), burstable(cpuPod("c", "1"))}, "b"},
		{"longest deferred", []*v1.Pod{cpuPod("a", "1"), cpuPod("b", "1"), cpuPod("c", "1")}, "a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tn := newTestNode(t, smallNode())
			if _, err := tn.node.AddPod(tn.ctx, cpuPod("filler", "1")); err != nil {
				t.Fatal(err)
			}
			for _, p := range tc.pods {
				if _, err := tn.node.AddPod(tn.ctx, p); err != nil {
					t.Fatal(err)
				}
			}
			for _, p := range tc.pods {
				tn.clock.Set(tn.clock.Now().Add(time.Second))
				patch := cpuPatch("2")
				if p.Spec.Containers[0].Resources.Limits == nil {
					patch = `{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"2"}}}]}}`
				}
				mustResize(t, tn, p.Name, patch)
				if c := pendingOf(t, tn.pod(p.Name)); c == nil || c.Reason != "Deferred" {
					t.Fatalf("%s not deferred: %+v", p.Name, c)
				}
			}
			if err := tn.node.DeletePod(tn.ctx, "default", "filler"); err != nil {
				t.Fatal(err)
			}
			for _, p := range tc.pods {
				pending := pendingOf(t, tn.pod(p.Name)) != nil
				if (p.Name == tc.winner) == pending {
					t.Fatalf("%s pending=%v, want only %s admitted", p.Name, pending, tc.winner)
				}
			}
		})
	}
}

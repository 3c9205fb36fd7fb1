package core

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/resizelet/resizelet/allocation"
	"github.com/resizelet/resizelet/resize/profile"
)

// smallNode has 2 CPUs and 4Gi, so that resizes are easily deferred.
func smallNode(v profile.Version) NodeConfig {
	return NodeConfig{Profile: v, Capacity: v1.ResourceList{
		v1.ResourceCPU: resource.MustParse("2"), v1.ResourceMemory: resource.MustParse("4Gi"), v1.ResourcePods: resource.MustParse("110"),
	}}
}

func prefixes(lines []string, n int) []string {
	var out []string
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) > n {
			f = f[:n]
		}
		out = append(out, strings.Join(f, " "))
	}
	return out
}

// TestAdmittedResizeFlow: an admitted resize checkpoints the allocation,
// then sets InProgress and emits ResizeStarted; the sync actuates it,
// clears InProgress and emits ResizeCompleted, and writes the status.
func TestAdmittedResizeFlow(t *testing.T) {
	w := newWorld(t, NodeConfig{})
	w.add(testPod("p", resources("100m", "100Mi", "100m", "100Mi")))
	ev, lg := len(w.events), len(w.log)
	w.resize("p", resources("200m", "100Mi", "200m", "100Mi"))
	if diff := cmp.Diff([]string{"Normal ResizeStarted", "Normal ResizeCompleted"}, prefixes(w.eventLines(ev), 2)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	got := prefixes(w.logSince(lg), 3)
	want := []string{
		"checkpoint allocated uid-p", "event Normal ResizeStarted",
		"cgroup read kubepods/poduid-p",
		"cgroup set kubepods/poduid-p", "UpdatePodSandboxResources {shares=80 quota=20000",
		"cgroup set kubepods/poduid-p", "UpdatePodSandboxResources {shares=204 quota=20000",
		"UpdateContainerResources c1 {shares=204", "checkpoint actuated uid-p",
		"event Normal ResizeCompleted", "status default/p phase",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	if c := w.statuses["p"].Conditions; len(c) != 0 {
		t.Errorf("conditions after the resize: %+v", c)
	}
}

// TestCheckpointFailureDoesNotStartTheResize: when the allocation cannot
// be checkpointed the kubelet reports the error and neither sets
// InProgress nor emits ResizeStarted; the allocation stays in memory.
func TestCheckpointFailureDoesNotStartTheResize(t *testing.T) {
	w := newWorld(t, NodeConfig{})
	w.add(testPod("p", resources("100m", "100Mi", "100m", "100Mi")))
	w.fail = func(a Action) error {
		if _, ok := a.(WriteAllocated); ok {
			return errors.New("disk full")
		}
		return nil
	}
	ev := len(w.events)
	w.resize("p", resources("200m", "100Mi", "200m", "100Mi"))
	if got := prefixes(w.eventLines(ev), 3); len(got) == 0 || got[0] != "Warning Failed disk" {
		t.Errorf("events = %v, want a Failed event first", w.eventLines(ev))
	}
	for _, e := range w.eventLines(ev) {
		if strings.Contains(e, "ResizeStarted") {
			t.Errorf("ResizeStarted after a failed checkpoint: %v", e)
		}
	}
	info, _ := w.c.Pod("default", "p")
	if q := info.Allocated["c1"].Limits[v1.ResourceCPU]; q.String() != "200m" {
		t.Errorf("allocated cpu limit in memory = %s, want 200m", q.String())
	}
}

// TestDeferredEventOnReasonOrGenerationChange: a Deferred resize sets
// PodResizePending with the predicate's message; a retry that only moves
// the numbers updates the condition without a new event (status_manager.go
// compares reason and observedGeneration only).
func TestDeferredEventOnReasonOrGenerationChange(t *testing.T) {
	w := newWorld(t, smallNode(profile.V135))
	w.add(testPod("a", resources("1", "1Gi", "1", "1Gi")))
	w.add(testPod("b", resources("500m", "1Gi", "500m", "1Gi")))
	ev := len(w.events)
	w.resize("b", resources("1500m", "1Gi", "1500m", "1Gi"))
	c := w.condition("b", v1.PodResizePending)
	if c == nil || c.Reason != "Deferred" || c.Message != "Node didn't have enough resource: cpu, requested: 1500, used: 1000, capacity: 2000" {
		t.Fatalf("pending condition = %+v", c)
	}
	if got := prefixes(w.eventLines(ev), 2); !cmp.Equal(got, []string{"Warning ResizeDeferred"}) {
		t.Fatalf("events = %v", w.eventLines(ev))
	}
	ev = len(w.events)
	w.now = w.now.Add(allocation.InitialRetryDelay)
	w.run(Tick{Now: w.now})
	if got := w.eventLines(ev); len(got) != 0 {
		t.Errorf("the periodic retry of an unchanged Deferred resize emitted %v", got)
	}
}

// TestInfeasibleEarlyChecksSilentIn135: in 1.35 a static pod's resize is
// Infeasible without an event (handlePodResourcesResize returns before
// it); 1.36 dropped the static pod check altogether
// (pkg/kubelet/allocation/features_linux.go), and its early checks that
// remain (a Windows node here) report an event from the resize admit
// handler (pkg/kubelet/allocation/handlers.go).
func TestInfeasibleEarlyChecksSilentIn135(t *testing.T) {
	static := func() *v1.Pod {
		p := testPod("s", resources("100m", "100Mi", "100m", "100Mi"))
		p.Annotations = map[string]string{"kubernetes.io/config.source": "file"}
		return p
	}
	w := newWorld(t, NodeConfig{Profile: profile.V135})
	w.add(static())
	ev := len(w.events)
	w.resize("s", resources("200m", "100Mi", "200m", "100Mi"))
	if c := w.condition("s", v1.PodResizePending); c == nil || c.Reason != "Infeasible" || c.Message != "In-place resize of static-pods is not supported" {
		t.Errorf("1.35 static pod: condition = %+v", c)
	}
	if got := w.eventLines(ev); len(got) != 0 {
		t.Errorf("1.35 static pod: events %v, want none", got)
	}

	w = newWorld(t, NodeConfig{Profile: profile.V136})
	w.add(static())
	ev = len(w.events)
	w.resize("s", resources("200m", "100Mi", "200m", "100Mi"))
	if c := w.condition("s", v1.PodResizePending); c != nil {
		t.Errorf("1.36 static pod: pending condition %+v, want the resize admitted", c)
	}
	if diff := cmp.Diff([]string{"Normal ResizeStarted", "Normal ResizeCompleted"}, prefixes(w.eventLines(ev), 2)); diff != "" {
		t.Errorf("1.36 static pod events (-want +got):\n%s", diff)
	}

	w = newWorld(t, NodeConfig{Profile: profile.V136, OS: "windows"})
	w.add(testPod("p", resources("100m", "100Mi", "100m", "100Mi")))
	ev = len(w.events)
	w.resize("p", resources("200m", "100Mi", "200m", "100Mi"))
	if c := w.condition("p", v1.PodResizePending); c == nil || c.Reason != "Infeasible" || c.Message != "In-place pod resize is not supported on Windows" {
		t.Errorf("1.36 windows node: condition = %+v", c)
	}
	if diff := cmp.Diff([]string{"Warning ResizeInfeasible"}, prefixes(w.eventLines(ev), 2)); diff != "" {
		t.Errorf("1.36 windows node events (-want +got):\n%s", diff)
	}
}

// TestRetryWhenStatusRequestsShrink is the kubelet's HandlePodReconcile
// rule (kubelet.go, v1.35.4): after a status write, pending resizes are
// retried when the pod's requests shrank, the old and the new pod both
// overlaid with the current allocation. Pod a's resize raises c1 from 350m
// to 6790m and lowers c2 from 450m to 100m: the pod grows, yet by that
// measure its status write shrinks it (old 6790 + max(100, 450) = 7240,
// new 6890), so b's Deferred resize is retried and its condition shows
// the used figure as it now is, not the one from before a grew.
func TestRetryWhenStatusRequestsShrink(t *testing.T) {
	node := NodeConfig{Capacity: v1.ResourceList{v1.ResourceCPU: resource.MustParse("8"), v1.ResourceMemory: resource.MustParse("8Gi"), v1.ResourcePods: resource.MustParse("110")}}
	w := newWorld(t, node)
	w.add(testPod("a", resources("350m", "64Mi", "", ""), resources("450m", "64Mi", "", "")))
	w.add(testPod("b", resources("100m", "64Mi", "", "")))
	w.resize("b", resources("7500m", "64Mi", "", ""))
	const msg = "Node didn't have enough resource: cpu, requested: 7500, used: %d, capacity: 8000"
	if c := w.condition("b", v1.PodResizePending); c == nil || c.Message != fmt.Sprintf(msg, 800) {
		t.Fatalf("b's pending condition = %+v", c)
	}
	w.resize("a", resources("6790m", "64Mi", "", ""), resources("100m", "64Mi", "", ""))
	if c := w.condition("a", v1.PodResizeInProgress); c != nil {
		t.Fatalf("a's resize did not complete: %+v", c)
	}
	if c := w.condition("b", v1.PodResizePending); c == nil || c.Message != fmt.Sprintf(msg, 6890) {
		t.Errorf("b's pending condition after a's status write = %+v, want used 6890", c)
	}
}

package resize

import (
	"context"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/resize/core"
	"github.com/resizelet/resizelet/resize/metrics"
)

// newMetrics returns resize metrics on a registry of their own.
func newMetrics(t testing.TB) *metrics.Metrics {
	t.Helper()
	m, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// withMetrics gives a fresh test node's kubelet the metrics m: it is
// restarted on them (it has no pods yet). wrap, when set, wraps the
// runtime the node calls.
func withMetrics(tn *testNode, m *metrics.Metrics, wrap func(cri.Runtime) cri.Runtime) *testNode {
	tn.t.Helper()
	tn.deps.Metrics = m
	if wrap != nil {
		tn.deps.Runtime = wrap(tn.deps.Runtime)
	}
	tn.restart()
	return tn
}

// value reads a series of m.
func value(t testing.TB, m *metrics.Metrics, series string) float64 {
	t.Helper()
	v, err := m.Value(series)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// family returns every series of a counter or gauge family of m, as
// `label="value",...` (sorted by label) → value.
func family(t testing.TB, m *metrics.Metrics, name string) map[string]float64 {
	t.Helper()
	families, err := m.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range families {
		if mf.GetName() != name {
			continue
		}
		for _, s := range mf.GetMetric() {
			var labels []string
			for _, l := range s.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			slices.Sort(labels)
			out[strings.Join(labels, ",")] = s.GetCounter().GetValue() + s.GetGauge().GetValue()
		}
	}
	return out
}

// wantFamily compares a family with the series it must have, exactly.
func wantFamily(t *testing.T, m *metrics.Metrics, name string, want map[string]float64) {
	t.Helper()
	got := family(t, m, name)
	if !maps.Equal(got, want) {
		t.Errorf("%s:\n got  %v\n want %v", name, got, want)
	}
}

// wantValues compares series of m with their values.
func wantValues(t *testing.T, m *metrics.Metrics, want map[string]float64) {
	t.Helper()
	for _, series := range slices.Sorted(maps.Keys(want)) {
		if got := value(t, m, series); got != want[series] {
			t.Errorf("%s = %v, want %v", series, got, want[series])
		}
	}
}

func addPods(t *testing.T, tn *testNode, pods ...*v1.Pod) {
	t.Helper()
	for _, p := range pods {
		if _, err := tn.node.AddPod(tn.ctx, p); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMetricsRequestedResizes: one count per container and value that a
// resize changes against the spec the kubelet had (sidecars included),
// labelled add, increase and decrease; a patch that changes nothing counts
// nothing; a resize the API server refuses never reaches the kubelet.
func TestMetricsRequestedResizes(t *testing.T) {
	m := newMetrics(t)
	tn := withMetrics(newTestNode(t, smallNode()), m, nil)
	always := v1.ContainerRestartPolicyAlways
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}, Spec: v1.PodSpec{
		InitContainers: []v1.Container{{Name: "side", Image: "x", RestartPolicy: &always, Resources: resources("100m", "64Mi", "", "")}},
		Containers:     []v1.Container{{Name: "app", Image: "x", Resources: resources("200m", "128Mi", "400m", "")}},
	}}
	addPods(t, tn, pod)
	wantFamily(t, m, metrics.ContainerRequestedResizes, map[string]float64{})

	mustResize(t, tn, "p", `{"spec":{"initContainers":[{"name":"side","resources":{"requests":{"cpu":"150m"}}}],`+
		`"containers":[{"name":"app","resources":{"requests":{"cpu":"300m","memory":"96Mi"},"limits":{"memory":"256Mi"}}}]}}`)
	want := map[string]float64{
		`operation="decrease",requirement="requests",resource="memory"`: 1, // app
		`operation="add",requirement="limits",resource="memory"`:        1, // app
		`operation="increase",requirement="requests",resource="cpu"`:    2, // app and side
	}
	wantFamily(t, m, metrics.ContainerRequestedResizes, want)

	// The same values again: the API server keeps the generation, and
	// the kubelet counts nothing.
	mustResize(t, tn, "p", `{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"300m"}}}]}}`)
	// A request above its limit is refused by the API server.
	if _, err := tn.node.Resize(tn.ctx, ResizeOp{Namespace: "default", Name: "p", Patch: []byte(`{"spec":{"containers":[{"name":"app","resources":{"requests":{"memory":"512Mi"}}}]}}`)}); err == nil {
		t.Fatal("want the API server to refuse a memory request above the limit")
	}
	wantFamily(t, m, metrics.ContainerRequestedResizes, want)
	if got := value(t, m, `kubelet_container_requested_resizes_total{resource="cpu"}`); got != 2 {
		t.Errorf("cpu resizes summed over the other labels: %v, want 2", got)
	}
}

// TestMetricsAdmittedResize: an admitted resize that completes in place
// observes one successful actuation and leaves no gauge up.
func TestMetricsAdmittedResize(t *testing.T) {
	m := newMetrics(t)
	tn := withMetrics(newTestNode(t, NodeConfig{}), m, nil)
	addPods(t, tn, demoPod())
	mustResize(t, tn, "resize-demo", `{"spec":{"containers":[{"name":"pause","resources":{"requests":{"cpu":"800m"},"limits":{"cpu":"800m"}}}]}}`)
	wantFamily(t, m, metrics.ContainerRequestedResizes, map[string]float64{
		`operation="increase",requirement="requests",resource="cpu"`: 1,
		`operation="increase",requirement="limits",resource="cpu"`:   1,
	})
	wantValues(t, m, map[string]float64{
		`kubelet_pod_resize_duration_milliseconds_count{success="true"}`:  1,
		`kubelet_pod_resize_duration_milliseconds_count{success="false"}`: 0,
		`kubelet_pod_resize_duration_milliseconds_sum`:                    0, // the FakeClock did not move
		`kubelet_pod_in_progress_resizes`:                                 0,
		`kubelet_pod_pending_resizes`:                                     0,
		`kubelet_pod_infeasible_resizes_total`:                            0,
		`kubelet_pod_deferred_accepted_resizes_total`:                     0,
	})
	wantFamily(t, m, metrics.PodPendingResizes, map[string]float64{})

	// A memory increase with RestartContainer restarts the container: an
	// actuation all the same (the pod cgroup is written).
	mustResize(t, tn, "resize-demo", `{"spec":{"containers":[{"name":"pause","resources":{"requests":{"memory":"300Mi"},"limits":{"memory":"300Mi"}}}]}}`)
	if got := value(t, m, `kubelet_pod_resize_duration_milliseconds_count{success="true"}`); got != 2 {
		t.Errorf("actuations after the restarting resize: %v, want 2", got)
	}
}

// slowRuntime makes every UpdateContainerResources call take d on the
// node's FakeClock, and runs during each call what during says.
type slowRuntime struct {
	cri.Runtime
	clock  *FakeClock
	d      time.Duration
	during func()
}

func (r *slowRuntime) UpdateContainerResources(ctx context.Context, id string, res *runtimeapi.ContainerResources) error {
	if r.during != nil {
		r.during()
	}
	r.clock.Set(r.clock.Now().Add(r.d))
	return r.Runtime.UpdateContainerResources(ctx, id, res)
}

// TestMetricsResizeDuration: the duration is that of doPodResizeAction on
// the node's clock, in whole milliseconds, truncated: 1500.9 ms per
// UpdateContainerResources call, two calls (memory, then CPU) make 3001 ms.
func TestMetricsResizeDuration(t *testing.T) {
	m := newMetrics(t)
	tn := newTestNode(t, NodeConfig{})
	withMetrics(tn, m, func(rt cri.Runtime) cri.Runtime {
		return &slowRuntime{Runtime: rt, clock: tn.clock, d: 1500*time.Millisecond + 900*time.Microsecond}
	})
	pod := demoPod()
	pod.Spec.Containers[0].ResizePolicy = nil // both in place
	addPods(t, tn, pod)
	mustResize(t, tn, "resize-demo", `{"spec":{"containers":[{"name":"pause","resources":{"requests":{"cpu":"800m"},"limits":{"cpu":"800m"}}}]}}`)
	wantValues(t, m, map[string]float64{
		`kubelet_pod_resize_duration_milliseconds_count{success="true"}`:            1,
		`kubelet_pod_resize_duration_milliseconds_sum{success="true"}`:              1500,
		`kubelet_pod_resize_duration_milliseconds_bucket{le="1000",success="true"}`: 0,
		`kubelet_pod_resize_duration_milliseconds_bucket{le="2000",success="true"}`: 1,
		`kubelet_pod_resize_duration_milliseconds_bucket{le="+Inf"}`:                1,
	})
	mustResize(t, tn, "resize-demo", `{"spec":{"containers":[{"name":"pause","resources":{"requests":{"cpu":"900m","memory":"300Mi"},"limits":{"cpu":"900m","memory":"300Mi"}}}]}}`)
	wantValues(t, m, map[string]float64{
		`kubelet_pod_resize_duration_milliseconds_count`:                            2,
		`kubelet_pod_resize_duration_milliseconds_sum`:                              1500 + 3001,
		`kubelet_pod_resize_duration_milliseconds_bucket{le="2000",success="true"}`: 1,
		`kubelet_pod_resize_duration_milliseconds_bucket{le="5000",success="true"}`: 2,
	})
}

// TestMetricsInProgress: the in-progress gauge goes up when a resize is
// allocated (before it is actuated), stays up while the actuation fails
// (each failure observed with success="false"), and comes down when a
// sync completes it.
func TestMetricsInProgress(t *testing.T) {
	m := newMetrics(t)
	tn := newTestNode(t, NodeConfig{})
	var during []float64
	faults := cri.NewFaultInjector(tn.deps.Runtime)
	withMetrics(tn, m, func(rt cri.Runtime) cri.Runtime {
		return &slowRuntime{Runtime: faults, clock: tn.clock, during: func() {
			during = append(during, value(t, m, metrics.PodInProgressResizes))
		}}
	})
	addPods(t, tn, demoPod())
	faults.Inject(cri.Fault{Method: "UpdateContainerResources", Times: 2})
	mustResize(t, tn, "resize-demo", `{"spec":{"containers":[{"name":"pause","resources":{"requests":{"cpu":"800m"},"limits":{"cpu":"800m"}}}]}}`)
	if !slices.Equal(during, []float64{1}) {
		t.Errorf("in-progress gauge during the update calls: %v, want [1]", during)
	}
	wantValues(t, m, map[string]float64{
		metrics.PodInProgressResizes:                                      1,
		`kubelet_pod_resize_duration_milliseconds_count{success="false"}`: 1,
		`kubelet_pod_resize_duration_milliseconds_count{success="true"}`:  0,
	})
	// The backoff resync fails once more, the next one succeeds.
	if err := tn.node.Advance(tn.ctx, BackOffPeriod); err != nil {
		t.Fatal(err)
	}
	wantValues(t, m, map[string]float64{
		metrics.PodInProgressResizes:                                      1,
		`kubelet_pod_resize_duration_milliseconds_count{success="false"}`: 2,
	})
	if err := tn.node.Advance(tn.ctx, BackOffPeriod); err != nil {
		t.Fatal(err)
	}
	wantValues(t, m, map[string]float64{
		metrics.PodInProgressResizes:                                      0,
		`kubelet_pod_resize_duration_milliseconds_count{success="false"}`: 2,
		`kubelet_pod_resize_duration_milliseconds_count{success="true"}`:  1,
	})
	if !slices.Equal(during, []float64{1, 1, 1}) {
		t.Errorf("in-progress gauge during the update calls: %v, want [1 1 1]", during)
	}
}

// exitPod ends a pod's only container (c) with code 1: with restartPolicy
// Never the pod fails and frees its room, and no retry of the pending
// resizes follows in 1.35.
func exitPod(t *testing.T, tn *testNode, name string) {
	t.Helper()
	id := tn.info(name).ContainerIDs["c"]
	if err := tn.rt.Exit(id, 1, "Error"); err != nil {
		t.Fatal(err)
	}
	if err := tn.node.Sync(tn.ctx); err != nil {
		t.Fatal(err)
	}
}

// TestMetricsDeferredAccepted: a Deferred resize accepted by a retry is
// counted under the retry's trigger, a smaller resize that replaces it
// too; one reverted is not (the kubelet clears its condition when it gets
// the update, without a retry). The pending gauge counts the Deferred
// resizes meanwhile. pods_added is a kubelet restart, whose new kubelet
// counts b's resize, Deferred before (its backfilled condition), as
// accepted by the retry that follows admission.
func TestMetricsDeferredAccepted(t *testing.T) {
	never := func(p *v1.Pod) *v1.Pod { p.Spec.RestartPolicy = v1.RestartPolicyNever; return p }
	for _, tc := range []struct {
		trigger string
		free    func(t *testing.T, tn *testNode) // makes room for b's 3 CPUs beside a's 2
	}{
		{"pods_removed", func(t *testing.T, tn *testNode) {
			if err := tn.node.DeletePod(tn.ctx, "default", "a"); err != nil {
				t.Fatal(err)
			}
		}},
		{"pod_resized", func(t *testing.T, tn *testNode) { mustResize(t, tn, "a", cpuPatch("1")) }},
		{"pod_updated", func(t *testing.T, tn *testNode) { mustResize(t, tn, "b", cpuPatch("2")) }}, // fits beside a
		{"", func(t *testing.T, tn *testNode) { mustResize(t, tn, "b", cpuPatch("1")) }},            // reverted
		{"periodic_retry", func(t *testing.T, tn *testNode) {
			exitPod(t, tn, "a")
			if got := value(t, tn.deps.Metrics, `kubelet_pod_pending_resizes{reason="deferred"}`); got != 1 {
				t.Fatalf("a's exit retried b (pending %v); 1.35 waits for the timer", got)
			}
			if err := tn.node.Advance(tn.ctx, 3*time.Minute); err != nil {
				t.Fatal(err)
			}
		}},
		// Adding a pod retries nothing in 1.35 (HandlePodAdditions
		// retries only when a pod it admits has a pending change, see
		// TestAddingPodsRetriesNothing); a restarted kubelet does, for b,
		// whose spec differs from its allocation.
		{"pods_added", func(t *testing.T, tn *testNode) {
			exitPod(t, tn, "a")
			tn.restart()
		}},
	} {
		name := tc.trigger
		if name == "" {
			name = "reverted"
		}
		t.Run(name, func(t *testing.T) {
			m := newMetrics(t)
			tn := withMetrics(newTestNode(t, smallNode()), m, nil)
			addPods(t, tn, never(cpuPod("a", "2")), cpuPod("b", "1"))
			mustResize(t, tn, "b", cpuPatch("3"))
			wantFamily(t, m, metrics.PodPendingResizes, map[string]float64{`reason="deferred"`: 1})
			tc.free(t, tn)
			if c := pendingOf(t, tn.pod("b")); c != nil {
				t.Fatalf("b still pending: %+v", c)
			}
			want := map[string]float64{}
			if tc.trigger != "" {
				want[`retry_trigger="`+tc.trigger+`"`] = 1
			}
			wantFamily(t, m, metrics.PodDeferredAcceptedResizes, want)
			wantFamily(t, m, metrics.PodPendingResizes, map[string]float64{})
		})
	}
}

// TestMetricsPendingGaugeLags: the status manager recounts the pending
// gauge only when a condition appears or goes, so a Deferred resize made
// Infeasible still counts as deferred until the next recount (here, a pod
// added).
func TestMetricsPendingGaugeLags(t *testing.T) {
	m := newMetrics(t)
	tn := withMetrics(newTestNode(t, smallNode()), m, nil)
	addPods(t, tn, cpuPod("a", "2"), cpuPod("b", "1"))
	mustResize(t, tn, "b", cpuPatch("3"))
	mustResize(t, tn, "b", cpuPatch("100"))
	if c := pendingOf(t, tn.pod("b")); c == nil || c.Reason != v1.PodReasonInfeasible {
		t.Fatalf("b's condition: %+v, want Infeasible", c)
	}
	wantFamily(t, m, metrics.PodPendingResizes, map[string]float64{`reason="deferred"`: 1})
	wantFamily(t, m, metrics.PodInfeasibleResizes, map[string]float64{`reason_detail="insufficient_node_allocatable"`: 1})
	addPods(t, tn, cpuPod("c", "100m"))
	wantFamily(t, m, metrics.PodPendingResizes, map[string]float64{`reason="infeasible"`: 1})
	// Deleting the pod recounts too.
	if err := tn.node.DeletePod(tn.ctx, "default", "b"); err != nil {
		t.Fatal(err)
	}
	wantFamily(t, m, metrics.PodPendingResizes, map[string]float64{})
}

// TestMetricsInfeasibleReasons: each Infeasible cause of 1.35 is counted
// under the kubelet's reason_detail, once per decision, with the pending
// gauge's infeasible series.
func TestMetricsInfeasibleReasons(t *testing.T) {
	guaranteed := func(name, cpu, mem string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: v1.PodSpec{Containers: []v1.Container{
			{Name: "c", Image: "x", Resources: resources(cpu, mem, cpu, mem)},
		}}}
	}
	burstable := func(name string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: v1.PodSpec{Containers: []v1.Container{
			{Name: "c", Image: "x", Resources: resources("100m", "64Mi", "", "256Mi")},
		}}}
	}
	static := burstable("p")
	static.Annotations = map[string]string{"kubernetes.io/config.source": "file"}
	podLevel := guaranteed("p", "500m", "128Mi")
	podLevel.Spec.Resources = &v1.ResourceRequirements{Requests: podLevel.Spec.Containers[0].Resources.Requests, Limits: podLevel.Spec.Containers[0].Resources.Limits}
	for _, tc := range []struct {
		reason string
		cfg    NodeConfig
		// apiGates, when set, are the API server's gates (the node's
		// otherwise).
		apiGates map[string]bool
		pod      *v1.Pod
		patch    string
	}{
		{"insufficient_node_allocatable", smallNode(), nil, guaranteed("p", "1", "1Gi"), cpuPatch("5")},
		{"static_pod", NodeConfig{}, nil, static, cpuPatch("200m")},
		{"swap_limitation", NodeConfig{SwapBehavior: "LimitedSwap"}, nil, burstable("p"),
			`{"spec":{"containers":[{"name":"c","resources":{"requests":{"memory":"128Mi"}}}]}}`},
		{"guaranteed_pod_cpu_manager_static_policy", NodeConfig{CPUManagerPolicy: "static"}, nil, guaranteed("p", "2", "256Mi"), cpuPatch("3")},
		{"guaranteed_pod_memory_manager_static_policy", NodeConfig{MemoryManagerPolicy: "Static"}, nil, guaranteed("p", "500m", "256Mi"),
			`{"spec":{"containers":[{"name":"c","resources":{"requests":{"memory":"512Mi"},"limits":{"memory":"512Mi"}}}]}}`},
		{"windows", NodeConfig{OS: "windows"}, nil, burstable("p"), cpuPatch("200m")},
		// The kubelet's gate off, the API server's on: the kubelet
		// refuses the pod-level change (1.35's own cause, which
		// allocation.Decision.Reason calls feature_gate_off).
		{"plr_feature_gate_off", NodeConfig{}, map[string]bool{GateInPlacePodLevelResourcesVerticalScaling: true}, podLevel,
			`{"spec":{"resources":{"requests":{"cpu":"800m"},"limits":{"cpu":"800m"}},"containers":[{"name":"c","resources":{"requests":{"cpu":"800m"},"limits":{"cpu":"800m"}}}]}}`},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			m := newMetrics(t)
			tn := newTestNode(t, tc.cfg)
			if tc.apiGates != nil {
				tn.cluster = NewCluster(ClusterOptions{Profile: tn.cfg.Profile, FeatureGates: tc.apiGates})
				tn.deps.Cluster = tn.cluster
			}
			withMetrics(tn, m, nil)
			addPods(t, tn, tc.pod)
			mustResize(t, tn, "p", tc.patch)
			if c := pendingOf(t, tn.pod("p")); c == nil || c.Reason != v1.PodReasonInfeasible {
				t.Fatalf("condition %+v, want Infeasible", c)
			}
			wantFamily(t, m, metrics.PodInfeasibleResizes, map[string]float64{`reason_detail="` + tc.reason + `"`: 1})
			wantFamily(t, m, metrics.PodPendingResizes, map[string]float64{`reason="infeasible"`: 1})
			// An Infeasible resize leaves the queue: the periodic retry
			// does not count it again, a restart's retry does.
			if err := tn.node.Advance(tn.ctx, 10*time.Minute); err != nil {
				t.Fatal(err)
			}
			tn.restart()
			wantFamily(t, m, metrics.PodInfeasibleResizes, map[string]float64{`reason_detail="` + tc.reason + `"`: 2})
			wantFamily(t, m, metrics.PodPendingResizes, map[string]float64{`reason="infeasible"`: 1})
		})
	}
}

// TestMetricsGateOff: a kubelet with InPlacePodVerticalScaling off (1.34
// allows it) does not register the resize metrics: it records nothing,
// not even its feature_gate_off Infeasible decisions.
func TestMetricsGateOff(t *testing.T) {
	m := newMetrics(t)
	cfg := NodeConfig{Profile: Profile134, FeatureGates: map[string]bool{GateInPlacePodVerticalScaling: false}}
	tn := newTestNode(t, cfg)
	tn.cluster = NewCluster(ClusterOptions{Profile: Profile134})
	tn.deps.Cluster = tn.cluster
	withMetrics(tn, m, nil)
	addPods(t, tn, cpuPod("p", "100m"))
	mustResize(t, tn, "p", cpuPatch("200m"))
	if c := pendingOf(t, tn.pod("p")); c == nil || c.Message != "InPlacePodVerticalScaling is disabled" {
		t.Fatalf("condition %+v, want the gate's Infeasible", c)
	}
	families, err := m.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range families {
		for _, s := range mf.GetMetric() {
			if mf.GetName() != metrics.PodInProgressResizes || s.GetGauge().GetValue() != 0 {
				t.Errorf("recorded %s %v", mf.GetName(), s)
			}
		}
	}
}

// TestMetricsSharedByNodes: two nodes of separate clusters, both named
// node-1, share one Metrics: counts add up and each gauge is the sum of
// the nodes' shares, each node's going up and down on its own.
func TestMetricsSharedByNodes(t *testing.T) {
	m := newMetrics(t)
	one := withMetrics(newTestNode(t, smallNode()), m, nil)
	two := withMetrics(newTestNode(t, smallNode()), m, nil)
	for _, tn := range []*testNode{one, two} {
		addPods(t, tn, cpuPod("a", "2"), cpuPod("b", "1"))
		mustResize(t, tn, "b", cpuPatch("3"))
	}
	wantFamily(t, m, metrics.PodPendingResizes, map[string]float64{`reason="deferred"`: 2})
	wantFamily(t, m, metrics.ContainerRequestedResizes, map[string]float64{
		`operation="increase",requirement="requests",resource="cpu"`: 2,
		`operation="increase",requirement="limits",resource="cpu"`:   2,
	})
	if err := one.node.DeletePod(one.ctx, "default", "a"); err != nil {
		t.Fatal(err)
	}
	wantFamily(t, m, metrics.PodPendingResizes, map[string]float64{`reason="deferred"`: 1})
	wantValues(t, m, map[string]float64{
		`kubelet_pod_deferred_accepted_resizes_total{retry_trigger="pods_removed"}`: 1,
		`kubelet_pod_resize_duration_milliseconds_count`:                            1,
	})
	mustResize(t, two, "b", cpuPatch("2"))
	wantFamily(t, m, metrics.PodPendingResizes, map[string]float64{})
	wantFamily(t, m, metrics.PodDeferredAcceptedResizes, map[string]float64{`retry_trigger="pods_removed"`: 1, `retry_trigger="pod_updated"`: 1})
}

// TestMetricsRestartTakesOver: a restarted kubelet (a new Node on the same
// Deps) recounts its gauges from scratch and takes the old kubelet's share
// over: a Deferred resize and a failing actuation count once, not twice;
// the counters go on from where they were, with what the new kubelet
// counts again (its retry and sync).
func TestMetricsRestartTakesOver(t *testing.T) {
	m := newMetrics(t)
	tn := newTestNode(t, smallNode())
	faults := cri.NewFaultInjector(tn.deps.Runtime)
	withMetrics(tn, m, func(cri.Runtime) cri.Runtime { return faults })
	addPods(t, tn, cpuPod("a", "2"), cpuPod("b", "1"), cpuPod("c", "500m"))
	mustResize(t, tn, "b", cpuPatch("3"))
	faults.Inject(cri.Fault{Method: "UpdateContainerResources", PodName: "c", PodNamespace: "default", Times: 100})
	mustResize(t, tn, "c", cpuPatch("400m"))
	want := map[string]float64{
		`kubelet_pod_pending_resizes{reason="deferred"}`:                  1,
		metrics.PodInProgressResizes:                                      1,
		`kubelet_pod_resize_duration_milliseconds_count{success="false"}`: 1,
		`kubelet_container_requested_resizes_total`:                       4,
	}
	wantValues(t, m, want)
	tn.restart()
	// The new kubelet's first sync of c fails again.
	want[`kubelet_pod_resize_duration_milliseconds_count{success="false"}`] = 2
	wantValues(t, m, want)
	tn.restart()
	want[`kubelet_pod_resize_duration_milliseconds_count{success="false"}`] = 3
	wantValues(t, m, want)
	// The restarted kubelet's own counts: it had re-set b's Deferred
	// condition, so the acceptance counts.
	if err := tn.node.DeletePod(tn.ctx, "default", "a"); err != nil {
		t.Fatal(err)
	}
	wantValues(t, m, map[string]float64{
		`kubelet_pod_pending_resizes`: 0,
		`kubelet_pod_deferred_accepted_resizes_total{retry_trigger="pods_removed"}`: 1,
		metrics.PodInProgressResizes: 1,
	})
}

// TestMetricsRestartBackfill: the kubelet's status manager takes the
// resize conditions over from the API server's pods when it starts, so a
// resize that was Deferred before a restart and fits afterwards is
// counted as accepted by the restart's retry (pods_added): the core's
// backfilled Deferred condition makes it IsPodResizeDeferred.
func TestMetricsRestartBackfill(t *testing.T) {
	m := newMetrics(t)
	tn := withMetrics(newTestNode(t, smallNode()), m, nil)
	addPods(t, tn, cpuPod("a", "2"), cpuPod("b", "1"))
	mustResize(t, tn, "b", cpuPatch("3"))
	// a goes while the kubelet is down.
	if err := tn.cluster.DeletePod(t.Context(), "default", "a"); err != nil {
		t.Fatal(err)
	}
	tn.restart()
	if c := pendingOf(t, tn.pod("b")); c != nil {
		t.Fatalf("b still pending after the restart: %+v", c)
	}
	wantValues(t, m, map[string]float64{
		`kubelet_pod_deferred_accepted_resizes_total{retry_trigger="pods_added"}`: 1,
		`kubelet_pod_pending_resizes`: 0,
		metrics.PodInProgressResizes:  0,
	})
}

// targetResizes are two sizes of target/c1 to alternate between, each
// admitted (those of benchworld.Admitted, which this package's own tests
// cannot import).
var targetResizes = [2]ResizeRequest{
	{Containers: []ContainerResize{{Name: "c1", Requests: CPUMemory(300, 192<<20), Limits: CPUMemory(600, 384<<20)}}},
	{Containers: []ContainerResize{{Name: "c1", Requests: CPUMemory(200, 128<<20), Limits: CPUMemory(400, 256<<20)}}},
}

// newTargetNode is a node with in-memory checkpoints (newBenchNode) and
// the pod target (c1 200m/128Mi limits
// 400m/256Mi, c2 100m/64Mi limits 200m/128Mi) and nine others settled.
func newTargetNode(t *testing.T) *testNode {
	t.Helper()
	tn := newBenchNode(t, NodeConfig{})
	addPods(t, tn, &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "target", Namespace: "default"}, Spec: v1.PodSpec{Containers: []v1.Container{
		{Name: "c1", Image: "x", Resources: resources("200m", "128Mi", "400m", "256Mi")},
		{Name: "c2", Image: "x", Resources: resources("100m", "64Mi", "200m", "128Mi")},
	}}})
	for i := range 9 {
		addPods(t, tn, cpuPod(fmt.Sprintf("p%d", i), "100m"))
	}
	return tn
}

// emits reports whether a batch records an event with the reason.
func emits(batch *core.Batch, reason string) bool {
	return slices.ContainsFunc(batch.Actions, func(a core.Action) bool {
		e, ok := a.(core.RecordEvent)
		return ok && e.Event.Reason == reason
	})
}

// decisionMallocs runs n admitted resizes of target/c1 and counts the heap
// allocations of the node's handling of each, from the updated pod to the
// ResizeStarted event (BenchmarkResizeDecision's span), the API server's
// part and the actuation left out. step is how the node takes an input.
func decisionMallocs(t *testing.T, tn *testNode, n int, step func(core.Input) (core.Ready, error)) uint64 {
	t.Helper()
	var results []core.Result
	resize, done := &core.ResizeRequested{}, &core.BatchDone{}
	var ms runtime.MemStats
	var total uint64
	for i := range n {
		pod, err := tn.cluster.ResizePod(t.Context(), "default", "target", targetResizes[i%2].Patch())
		if err != nil {
			t.Fatal(err)
		}
		own := *pod
		*resize = core.ResizeRequested{Pod: &own, Now: tn.clock.Now()}
		runtime.ReadMemStats(&ms)
		before := ms.Mallocs
		rd, err := step(resize)
		for err == nil && rd.Batch != nil && !emits(rd.Batch, ReasonResizeStarted) {
			results = tn.node.performInto(tn.ctx, rd.Batch, results)
			*done = core.BatchDone{ID: rd.Batch.ID, Results: results, Now: tn.clock.Now()}
			rd, err = step(done)
		}
		runtime.ReadMemStats(&ms)
		if i >= 2 { // the first ones fill the reused buffers
			total += ms.Mallocs - before
		}
		if err != nil || rd.Batch == nil {
			t.Fatalf("no ResizeStarted: %v", err)
		}
		if err := tn.node.drain(tn.ctx, rd); err != nil {
			t.Fatal(err)
		}
	}
	return total
}

// TestMetricsOffCostsNothing: without Metrics the core records nothing
// (Ready.Metrics is nil) and the node's resize decision allocates nothing,
// as BenchmarkResizeDecision shows; with them, the core's part still
// allocates nothing in the steady state (its report reuses its memory). A
// whole resize cycle allocates no more without metrics than with them.
func TestMetricsOffCostsNothing(t *testing.T) {
	off := newTargetNode(t)
	on := newTargetNode(t)
	on.deps.Metrics = newMetrics(t)
	on.restart()
	if off.node.rec != nil || on.node.rec == nil {
		t.Fatalf("recorders: off %v, on %v", off.node.rec, on.node.rec)
	}
	if rd, _ := off.node.step(core.Poll{}); rd.Metrics != nil {
		t.Errorf("a node without metrics got a metrics report: %+v", rd.Metrics)
	}
	if rd, _ := on.node.step(core.Poll{}); rd.Metrics == nil {
		t.Error("a node with metrics got no metrics report")
	}
	if n := decisionMallocs(t, off, 20, off.node.step); n != 0 {
		t.Errorf("without metrics the decisions allocated %d times, want 0", n)
	}
	lockedStep := func(in core.Input) (core.Ready, error) {
		on.node.mu.Lock()
		defer on.node.mu.Unlock()
		return on.node.core.Step(in)
	}
	if n := decisionMallocs(t, on, 20, lockedStep); n != 0 {
		t.Errorf("with metrics the core's decisions allocated %d times, want 0", n)
	}

	cycle := func(tn *testNode) float64 {
		i := 0
		return testing.AllocsPerRun(20, func() {
			i++
			if _, err := tn.node.Resize(tn.ctx, ResizeOp{Namespace: "default", Name: "target", Request: targetResizes[i%2]}); err != nil {
				t.Fatal(err)
			}
		})
	}
	cycleOff, cycleOn := cycle(off), cycle(on)
	if cycleOff > cycleOn {
		t.Errorf("a resize cycle allocates %v times without metrics, %v with", cycleOff, cycleOn)
	}
	t.Logf("allocations of a typed resize cycle: %v without metrics, %v with", cycleOff, cycleOn)
}

// TestMetricsConcurrent: two nodes that share one Metrics, each resized
// from several goroutines at once: every requested change is counted once,
// and the gauges come back to 0 when every resize is done (run with -race).
func TestMetricsConcurrent(t *testing.T) {
	m := newMetrics(t)
	const pods, rounds = 4, 5
	nodes := []*testNode{withMetrics(newTestNode(t, NodeConfig{}), m, nil), withMetrics(newTestNode(t, NodeConfig{}), m, nil)}
	done := make(chan error)
	for _, tn := range nodes {
		for i := range pods {
			addPods(t, tn, cpuPod(fmt.Sprintf("p%d", i), "100m"))
		}
		for i := range pods {
			go func() {
				var err error
				for r := range rounds {
					if err == nil {
						_, err = tn.node.Resize(tn.ctx, ResizeOp{Namespace: "default", Name: fmt.Sprintf("p%d", i), Patch: []byte(cpuPatch([]string{"200m", "100m"}[r%2]))})
					}
				}
				done <- err
			}()
		}
	}
	for range len(nodes) * pods {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	wantFamily(t, m, metrics.ContainerRequestedResizes, map[string]float64{
		`operation="increase",requirement="requests",resource="cpu"`: 2 * pods * 3,
		`operation="increase",requirement="limits",resource="cpu"`:   2 * pods * 3,
		`operation="decrease",requirement="requests",resource="cpu"`: 2 * pods * 2,
		`operation="decrease",requirement="limits",resource="cpu"`:   2 * pods * 2,
	})
	wantValues(t, m, map[string]float64{
		metrics.PodInProgressResizes:                                      0,
		metrics.PodPendingResizes:                                         0,
		`kubelet_pod_resize_duration_milliseconds_count{success="false"}`: 0,
	})
	if n := value(t, m, `kubelet_pod_resize_duration_milliseconds_count{success="true"}`); n < 2*pods || n > 2*pods*rounds {
		t.Errorf("%v successful actuations, want between %d and %d", n, 2*pods, 2*pods*rounds)
	}
}

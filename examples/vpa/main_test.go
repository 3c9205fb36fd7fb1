package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resizelet/resizelet/resize/apiserver"
	"github.com/resizelet/resizelet/resize/profile"
)

// small is a run of 5 nodes (one large) with 20 pods each for half an
// hour: the default run's story at a fifth of its size.
func small() Config {
	return Config{Nodes: 5, PodsPerNode: 20, Duration: 30 * time.Minute, Interval: time.Minute, Seed: 1,
		Patch: "strategic", Kubelet: profile.V135}
}

// lines returns the output's lines whose action (second field) is act.
func lines(out, act string) []string {
	var got []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[1] == act {
			got = append(got, l)
		}
	}
	return got
}

// TestSmallRunHoldsTogether runs the small version and checks its
// summary: every in-place resize completed, is pending or was recreated,
// every infeasible one was recreated, the pods stayed as many; and that
// the run took every path (done at once, Deferred then done, Deferred
// then recreated, Infeasible then recreated), each printed.
func TestSmallRunHoldsTogether(t *testing.T) {
	var out bytes.Buffer
	sum, err := Run(context.Background(), small(), &out)
	if err != nil {
		t.Fatal(err)
	}
	if problems := sum.Check(); len(problems) > 0 {
		t.Fatalf("the summary does not hold together: %v", problems)
	}
	if sum.PodsStart != 100 || sum.PodsEnd != 100 {
		t.Errorf("pods %d at the start, %d at the end; want 100 and 100", sum.PodsStart, sum.PodsEnd)
	}
	if sum.AtOnce == 0 || sum.Deferred == 0 || sum.DeferredDone == 0 || sum.Infeasible == 0 ||
		sum.Recreated["infeasible"] == 0 || sum.Recreated["deferred"] == 0 {
		t.Errorf("the run did not take every path: %+v", sum)
	}
	text := out.String()
	resizes := lines(text, "resize")
	if len(resizes) != sum.Requested+sum.Refused {
		t.Errorf("%d resize lines, %d resizes", len(resizes), sum.Requested+sum.Refused)
	}
	count := func(word string) int {
		n := 0
		for _, l := range resizes {
			if strings.Contains(l, "-> ") && strings.Contains(l[strings.LastIndex(l, "-> "):], word) {
				n++
			}
		}
		return n
	}
	if count(" done") != sum.AtOnce || count(" deferred: ") != sum.Deferred || count(" infeasible: ") != sum.Infeasible {
		t.Errorf("resize lines: %d done, %d deferred, %d infeasible; summary %d, %d, %d",
			count(" done"), count(" deferred: "), count(" infeasible: "), sum.AtOnce, sum.Deferred, sum.Infeasible)
	}
	if done := lines(text, "done"); len(done) != sum.DeferredDone {
		t.Errorf("%d done lines, %d deferred resizes done later", len(done), sum.DeferredDone)
	}
	recreates := lines(text, "recreate")
	if len(recreates) != sum.Recreations() {
		t.Errorf("%d recreate lines, %d recreations", len(recreates), sum.Recreations())
	}
	// Every infeasible resize is followed by its pod's recreation.
	all := strings.Split(text, "\n")
	for i, l := range all {
		if !strings.Contains(l, " infeasible: ") {
			continue
		}
		pod := strings.Fields(l)[2]
		if i+1 >= len(all) || !strings.HasPrefix(strings.Join(strings.Fields(all[i+1])[1:3], " "), "recreate "+pod) {
			t.Errorf("infeasible %s is not followed by its recreation:\n%s\n%s", pod, l, all[i+1])
		}
	}
}

// TestRunRepeats: a seed gives the same run, line for line.
func TestRunRepeats(t *testing.T) {
	var a, b bytes.Buffer
	cfg := small()
	cfg.Duration = 25 * time.Minute
	if _, err := Run(context.Background(), cfg, &a); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), cfg, &b); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Error("two runs with the same seed printed different things")
	}
	cfg.Seed = 2
	var c bytes.Buffer
	if _, err := Run(context.Background(), cfg, &c); err != nil {
		t.Fatal(err)
	}
	if a.String() == c.String() {
		t.Error("another seed printed the same run")
	}
}

// TestRunOn136: from 1.36 the API server refuses a resize beyond the
// node's allocatable, which the updater answers by recreating the pod:
// refused instead of infeasible.
func TestRunOn136(t *testing.T) {
	cfg := small()
	cfg.Kubelet = profile.V136
	cfg.Quiet = true
	var out bytes.Buffer
	sum, err := Run(context.Background(), cfg, &out)
	if err != nil {
		t.Fatal(err)
	}
	if problems := sum.Check(); len(problems) > 0 {
		t.Fatalf("the summary does not hold together: %v", problems)
	}
	if sum.Refused == 0 || sum.Infeasible != 0 || sum.Recreated["refused"] != sum.Refused {
		t.Errorf("1.36: %d refused, %d infeasible, %d recreated after a refusal; want refusals, all recreated, no infeasible", sum.Refused, sum.Infeasible, sum.Recreated["refused"])
	}
	if out.Len() != 0 {
		t.Errorf("a quiet run printed %q", out.String())
	}
}

// TestCheckFindsWhatDoesNotAddUp: Check names each way a summary can fail
// to hold together.
func TestCheckFindsWhatDoesNotAddUp(t *testing.T) {
	good := Summary{PodsStart: 10, PodsEnd: 10, Requested: 5, AtOnce: 2, Deferred: 2, Infeasible: 1, Completed: 3, DeferredDone: 1,
		PendingAtEnd: 0, Durations: make([]time.Duration, 3), Recreated: map[string]int{"deferred": 1, "infeasible": 1}}
	if p := good.Check(); len(p) != 0 {
		t.Fatalf("a consistent summary: %v", p)
	}
	for name, change := range map[string]func(s *Summary){
		"a resize unaccounted for":    func(s *Summary) { s.Requested++ },
		"an infeasible not recreated": func(s *Summary) { s.Infeasible++ },
		"a refusal not recreated":     func(s *Summary) { s.Refused++ },
		"a pod lost":                  func(s *Summary) { s.PodsEnd-- },
		"a completion without a time": func(s *Summary) { s.Durations = s.Durations[1:] },
		"more done at once than done": func(s *Summary) { s.AtOnce += 5 },
	} {
		s := good
		s.Recreated = map[string]int{"deferred": 1, "infeasible": 1}
		change(&s)
		if p := s.Check(); len(p) == 0 {
			t.Errorf("%s: Check found nothing", name)
		}
	}
}

// runningPod is a pod as the example creates it, running with its
// requests actuated.
func runningPod(w *world) *v1.Pod {
	wl := w.workloads[0]
	p := podFor(wl, "web-abc", "web-abc-12345", "node-1", wl.requests)
	p.Generation = 1
	p.Status = v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{{
		Name: "app", Resources: &p.Spec.Containers[0].Resources,
	}}}
	apiserver.DefaultPod(p)
	return p
}

// TestResizePatch: the two kinds of patch set the same requests and
// limits (the limits in the workload's ratio). The strategic merge patch
// is applied by the resize subresource; the JSON patch is checked as the
// VPA updater's operations and applied too once the resize subresource
// takes JSON patches.
func TestResizePatch(t *testing.T) {
	w := newWorld(100)
	wl := w.workloads[0] // web: limits twice the requests
	to := amounts{cpu: 250, memory: 300 * mib}
	want := map[string]string{"requests.cpu": "250m", "requests.memory": "300Mi", "limits.cpu": "500m", "limits.memory": "600Mi"}

	pt, patch := resizePatch("json", wl, to)
	if pt != apiserver.JSONPatch {
		t.Errorf("json: patch type %s", pt)
	}
	var ops []struct{ Op, Path, Value string }
	if err := json.Unmarshal(patch, &ops); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, op := range ops {
		key := strings.ReplaceAll(strings.TrimPrefix(op.Path, "/spec/containers/0/resources/"), "/", ".")
		paths = append(paths, key)
		if op.Op != "add" || want[key] != op.Value {
			t.Errorf("json: %+v, want add %s", op, want[key])
		}
	}
	if got := strings.Join(paths, " "); got != "requests.cpu requests.memory limits.cpu limits.memory" {
		t.Errorf("json: operations on %s", got)
	}

	check := func(kind string, pod *v1.Pod) {
		t.Helper()
		r := pod.Spec.Containers[0].Resources
		got := map[string]string{"requests.cpu": r.Requests.Cpu().String(), "requests.memory": r.Requests.Memory().String(),
			"limits.cpu": r.Limits.Cpu().String(), "limits.memory": r.Limits.Memory().String()}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s = %s, want %s", kind, k, got[k], v)
			}
		}
	}
	pt, patch = resizePatch("strategic", wl, to)
	pod, err := apiserver.ApplyResizePatch(runningPod(w), pt, patch, apiserver.ResizeOptions{})
	if err != nil {
		t.Fatalf("strategic: %v", err)
	}
	check("strategic", pod)

	pt, patch = resizePatch("json", wl, to)
	pod, err = apiserver.ApplyResizePatch(runningPod(w), pt, patch, apiserver.ResizeOptions{})
	var status *apierrors.StatusError
	if errors.As(err, &status) && status.Status().Code == http.StatusUnsupportedMediaType {
		t.Skip("the resize subresource does not take JSON patches yet")
	}
	if err != nil {
		t.Fatalf("json: %v", err)
	}
	check("json", pod)
}

// TestHistogram: the percentile lands in the bucket of the value it
// should (buckets are 5% wide), and older samples weigh less: after a
// jump, the new values take the 90th percentile once they weigh more
// than a tenth.
func TestHistogram(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := newHistogram(cpuFirstBucket, time.Minute, t0)
	for v := 1; v <= 1000; v++ {
		h.add(float64(v), t0)
	}
	for p, want := range map[float64]float64{0.5: 500, 0.9: 900} {
		if got := h.percentile(p); got < want || got > want*1.07 {
			t.Errorf("p%.0f of 1..1000 = %.0f, want %.0f to a bucket above", p*100, got, want)
		}
	}
	if got := newHistogram(1, time.Minute, t0).percentile(0.9); got != 0 {
		t.Errorf("an empty histogram's percentile = %v, want 0", got)
	}
	// 30 samples of 100 at t0; then samples of 5000, one a minute (the
	// half-life), weighing 1, 2 and 4: the third brings them to 7 of 37,
	// more than a tenth.
	d := newHistogram(cpuFirstBucket, time.Minute, t0)
	for range 30 {
		d.add(100, t0)
	}
	for i, want := range []float64{100, 100, 5000} {
		d.add(5000, t0.Add(time.Duration(i)*time.Minute))
		got := d.percentile(0.9)
		if got < want || got > want*1.07 {
			t.Errorf("after %d samples of 5000: p90 = %.0f, want about %.0f", i+1, got, want)
		}
	}
	// Weights stay finite over long spans.
	d.add(100, t0.Add(24*time.Hour))
	if got := d.percentile(0.9); got < 100 || got > 107 {
		t.Errorf("a day later, p90 = %.0f, want about 100", got)
	}
}

// TestRecommenderTarget: the target is the 90th percentile plus 15%,
// within the VPA's minimums and the workload's maxAllowed, memory in
// whole MiB.
func TestRecommenderTarget(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := newRecommender(t0)
	for range 10 {
		r.add(200, 400*mib, t0)
	}
	got := r.target(amounts{cpu: 10000, memory: 8192 * mib})
	if got.cpu < 230 || got.cpu > 247 || got.memory%mib != 0 || got.memory < 460*mib || got.memory > 493*mib {
		t.Errorf("target %s, want about 200m and 400Mi plus 15%%", got)
	}
	if got := r.target(amounts{cpu: 100, memory: 300 * mib}); got.cpu != 100 || got.memory != 300*mib {
		t.Errorf("capped target %s, want cpu 100m mem 300Mi", got)
	}
	low := newRecommender(t0)
	low.add(1, 1, t0)
	if got := low.target(amounts{cpu: 10000, memory: 8192 * mib}); got.cpu != minCPU || got.memory < minMemory || got.memory > minMemory+mib {
		t.Errorf("target of tiny usage %s, want the minimums", got)
	}
}

// TestPlacement: every node gets exactly its pods, the workloads in their
// shares, train one per five nodes on standard nodes.
func TestPlacement(t *testing.T) {
	w := newWorld(100)
	place := w.placement(10, 100)
	counts := map[string]int{}
	for i := 1; i <= 10; i++ {
		if len(place[i]) != 100 {
			t.Errorf("node %d: %d pods, want 100", i, len(place[i]))
		}
		for _, wl := range place[i] {
			counts[wl.name]++
			if wl.name == "train" && w.kindOf(i).name != "standard" {
				t.Errorf("train on node %d, a %s node", i, w.kindOf(i).name)
			}
		}
	}
	want := map[string]int{"web": 400, "api": 300, "worker": 200, "cache": 98, "train": 2}
	for name, n := range want {
		if counts[name] != n {
			t.Errorf("%s: %d pods, want %d", name, counts[name], n)
		}
	}
}

// TestCommand: the command's flags, exit statuses and output.
func TestCommand(t *testing.T) {
	ctx := context.Background()
	var out, errs bytes.Buffer
	code := run(ctx, []string{"-nodes", "5", "-pods", "20", "-duration", "10m", "-quiet"}, &out, &errs)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	if !strings.HasPrefix(out.String(), "\nsummary after 10m0s of simulated time (5 nodes, 100 pods, seed 1, strategic patches, kubelet 1.35):") ||
		!strings.Contains(out.String(), "ran in ") {
		t.Errorf("output:\n%s", out.String())
	}
	for _, args := range [][]string{{"-nodes", "0"}, {"-pods", "500"}, {"-patch", "merge"}, {"-kubelet", "1.33"}, {"extra"}, {"-nope"}} {
		out.Reset()
		errs.Reset()
		if code := run(ctx, args, &out, &errs); code != 2 || errs.Len() == 0 {
			t.Errorf("%v: exit %d with %q, want 2 and a message", args, code, errs.String())
		}
	}
}

// TestReplacementsAreBoundAndOwned: the pods the example creates name their
// ReplicaSet and carry the requests given, limits in ratio.
func TestReplacementsAreBoundAndOwned(t *testing.T) {
	w := newWorld(100)
	p := podFor(w.workloads[1], "api-x", "api-x-abcde", "node-3", amounts{300, 512 * mib})
	ref := metav1.GetControllerOf(p)
	if ref == nil || ref.Kind != "ReplicaSet" || ref.Name != "api-x" || p.Spec.NodeName != "node-3" {
		t.Errorf("pod %s: controller %+v, node %q", p.Name, ref, p.Spec.NodeName)
	}
	lim := p.Spec.Containers[0].Resources.Limits
	if lim.Cpu().Cmp(resource.MustParse("600m")) != 0 || lim.Memory().Cmp(resource.MustParse("1Gi")) != 0 {
		t.Errorf("limits %v, want twice the requests", lim)
	}
}

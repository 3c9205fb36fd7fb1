package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/apiserver"
	"github.com/resizelet/resizelet/resize/kubeclient"
	"github.com/resizelet/resizelet/resize/profile"
)

// small is a run of 5 nodes (one large) with 20 pods each for half an
// hour, with the default JSON patches: the default run's story at a
// fifth of its size.
func small() Config {
	return Config{Nodes: 5, PodsPerNode: 20, Duration: 30 * time.Minute, Interval: time.Minute, Seed: 1,
		Patch: defaultPatch, Kubelet: profile.V135}
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

// TestRunIsTheSameOnOneOrManyWorkers: the fleet advances its nodes on
// every core at once, and a seed gives the same run, line for line,
// whether one worker on one core (GOMAXPROCS 1) advances the nodes in
// turn or many advance them together in whatever order the scheduler runs
// them.
func TestRunIsTheSameOnOneOrManyWorkers(t *testing.T) {
	var outs [3]bytes.Buffer
	procs := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(procs)
	for i, workers := range []int{1, 4, 16} {
		cfg := small()
		cfg.Nodes, cfg.Duration, cfg.Workers = 12, 20*time.Minute, workers
		runtime.GOMAXPROCS(max(procs, 2))
		if workers == 1 {
			runtime.GOMAXPROCS(1)
		}
		if _, err := Run(context.Background(), cfg, &outs[i]); err != nil {
			t.Fatal(err)
		}
		if i > 0 && outs[i].String() != outs[0].String() {
			t.Errorf("%d workers printed another run than one worker:\n%s\nagainst\n%s", workers, outs[i].String(), outs[0].String())
		}
	}
	if len(lines(outs[0].String(), "resize")) == 0 {
		t.Fatal("the run resized nothing: it compares nothing")
	}
}

// TestPatchKindsAgree: a strategic merge patch and the VPA updater's JSON
// patch make the same resizes, so the two runs print the same lines but
// for the summary's name of the patch.
func TestPatchKindsAgree(t *testing.T) {
	runs := map[string]string{}
	for _, kind := range []string{"json", "strategic"} {
		cfg := small()
		cfg.Patch = kind
		var out bytes.Buffer
		sum, err := Run(context.Background(), cfg, &out)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if sum.Requested == 0 {
			t.Fatalf("%s: no resizes", kind)
		}
		sum.Print(&out, cfg)
		runs[kind] = strings.Replace(out.String(), kind+" patches", "<kind> patches", 1)
	}
	if runs["json"] != runs["strategic"] {
		t.Errorf("the runs differ:\njson:\n%s\nstrategic:\n%s", runs["json"], runs["strategic"])
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
// limits (the limits in the proportion the pod has), and the resize
// subresource applies both. The JSON patch is the VPA updater's: an "add"
// of each value, requests before limits, cpu before memory.
func TestResizePatch(t *testing.T) {
	w := newWorld(100)
	to := amounts{cpu: 250, memory: 300 * mib}
	want := map[string]string{"requests.cpu": "250m", "requests.memory": "300Mi", "limits.cpu": "500m", "limits.memory": "600Mi"}

	pt, patch, err := resizePatch("json", runningPod(w), 0, to) // web: limits twice the requests
	if err != nil {
		t.Fatal(err)
	}
	if pt != types.JSONPatchType {
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

	for _, kind := range []string{"json", "strategic"} {
		pt, patch, err := resizePatch(kind, runningPod(w), 0, to)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		pod, err := apiserver.ApplyResizePatch(runningPod(w), pt, patch, apiserver.ResizeOptions{})
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		r := pod.Spec.Containers[0].Resources
		got := map[string]string{"requests.cpu": r.Requests.Cpu().String(), "requests.memory": r.Requests.Memory().String(),
			"limits.cpu": r.Limits.Cpu().String(), "limits.memory": r.Limits.Memory().String()}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s = %s, want %s", kind, k, got[k], v)
			}
		}
		if pod.Generation != 2 {
			t.Errorf("%s: generation %d after the resize, want 2", kind, pod.Generation)
		}
	}
	if _, _, err := resizePatch("merge", runningPod(w), 0, to); err == nil {
		t.Error("a merge patch: no error")
	}
}

// TestResizePatchInitializesEmptyResources: for a container without
// resources the JSON patch first adds the empty objects the values go in,
// as the VPA updater's does, and sets no limits the container did not
// have.
func TestResizePatchInitializesEmptyResources(t *testing.T) {
	pod := runningPod(newWorld(100))
	pod.Spec.Containers[0].Resources = v1.ResourceRequirements{}
	_, patch, err := resizePatch("json", pod, 0, amounts{cpu: 250, memory: 300 * mib})
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"op":"add","path":"/spec/containers/0/resources","value":{}},` +
		`{"op":"add","path":"/spec/containers/0/resources/requests","value":{}},` +
		`{"op":"add","path":"/spec/containers/0/resources/requests/cpu","value":"250m"},` +
		`{"op":"add","path":"/spec/containers/0/resources/requests/memory","value":"300Mi"}]`
	if string(patch) != want {
		t.Errorf("patch\n%s\nwant\n%s", patch, want)
	}
}

// TestProportionalLimits: limits keep their proportion to the requests,
// as the VPA keeps them: none where the container has none, the request
// where the limit equals it or there is no request, cpu scaled in
// millicores and memory in bytes, rounded down.
func TestProportionalLimits(t *testing.T) {
	q := resource.MustParse
	list := func(cpu, mem string) v1.ResourceList {
		l := v1.ResourceList{}
		if cpu != "" {
			l[v1.ResourceCPU] = q(cpu)
		}
		if mem != "" {
			l[v1.ResourceMemory] = q(mem)
		}
		return l
	}
	for _, c := range []struct {
		name                   string
		limits, requests, next v1.ResourceList
		wantCPU, wantMem       string // "" for no limit
	}{
		{"twice", list("200m", "512Mi"), list("100m", "256Mi"), list("250m", "300Mi"), "500m", "600Mi"},
		{"equal", list("100m", "256Mi"), list("100m", "256Mi"), list("333m", "301Mi"), "333m", "301Mi"},
		{"no limits", list("", ""), list("100m", "256Mi"), list("250m", "300Mi"), "", ""},
		{"no requests", list("1", "1Gi"), list("", ""), list("250m", "300Mi"), "250m", "300Mi"},
		{"rounded down", list("300m", "3"), list("200m", "2"), list("333m", "5"), "499m", "7"},
	} {
		got := proportionalLimits(c.limits, c.requests, c.next)
		for name, want := range map[v1.ResourceName]string{v1.ResourceCPU: c.wantCPU, v1.ResourceMemory: c.wantMem} {
			l, ok := got[name]
			switch {
			case want == "" && ok:
				t.Errorf("%s: %s limit %s, want none", c.name, name, l.String())
			case want != "" && (!ok || l.Cmp(q(want)) != 0):
				t.Errorf("%s: %s limit %s (set %v), want %s", c.name, name, l.String(), ok, want)
			}
		}
	}
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
	if !strings.HasPrefix(out.String(), "\nsummary after 10m0s of simulated time (5 nodes, 100 pods, seed 1, json patches, kubelet 1.35):") ||
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

// TestUpdaterThroughClientGo runs the updater against a client-go
// clientset over one simulated node (kubeclient.ForNode, not the fleet of
// the example), with client-go's FakeRecorder for its events: the
// updater needs nothing but a kubernetes.Interface. It takes each path:
// a resize done at once, one Deferred and done once another pod left
// (timed by the kubelet's ResizeCompleted event), one Deferred for longer
// than the timeout and one Infeasible, both evicted and handed to
// replace.
func TestUpdaterThroughClientGo(t *testing.T) {
	ctx := context.Background()
	clk := resize.NewFakeClock(start)
	cg := cgroup.NewSimKernel(cgroup.V2)
	cluster := resize.NewCluster(resize.ClusterOptions{})
	node, err := resize.NewNode(ctx, resize.NodeConfig{Name: "node-1", Capacity: v1.ResourceList{
		v1.ResourceCPU: resource.MustParse("8"), v1.ResourceMemory: resource.MustParse("16Gi"), v1.ResourcePods: resource.MustParse("110"),
	}}, resize.Deps{Cluster: cluster, Cgroups: cg, Runtime: cri.NewSimContainerd(cg), Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	client := kubeclient.New(kubeclient.ForNode(node))
	pods := client.CoreV1().Pods(namespace)

	// Three workloads of one pod each, limits twice the requests.
	web := newWorld(100).workloads[0]
	for name, cpu := range map[string]int64{"a": 1000, "b": 4000, "c": 500} {
		wl := *web
		wl.name = name
		if _, err := pods.Create(ctx, podFor(&wl, name+"-rs", name+"-pod", "node-1", amounts{cpu, 256 * mib}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	recorder := record.NewFakeRecorder(16)
	var replaced []string
	var out bytes.Buffer
	sum := Summary{Recreated: map[string]int{}}
	u := &updater{
		client: client, recorder: recorder, now: clk.Now, patch: "json",
		replace: func(_ context.Context, p *v1.Pod, cause string, to amounts) error {
			replaced = append(replaced, fmt.Sprintf("%s %s %s", p.Name, cause, to))
			return nil
		},
		log: &logger{out: &out, now: clk.Now}, sum: &sum, flight: map[types.NamespacedName]*attempt{},
		pods:      watchPods(t.Context(), client, namespace, cluster.ResourceVersion),
		completed: watchCompletions(t.Context(), client, cluster.EventCount),
	}
	aKey := types.NamespacedName{Namespace: namespace, Name: "a-pod"}
	update := func(workload string, cpu int64) {
		t.Helper()
		vpa := vpaObject{name: workload, namespace: namespace, selector: appLabel + "=" + workload, container: appContainer, target: amounts{cpu, 256 * mib}}
		if err := u.update(ctx, []vpaObject{vpa}); err != nil {
			t.Fatal(err)
		}
	}
	cpuOf := func(name string) (spec, status string) {
		t.Helper()
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p.Spec.Containers[0].Resources.Requests.Cpu().String(), p.Status.ContainerStatuses[0].Resources.Requests.Cpu().String()
	}
	events := func() []string {
		var got []string
		for len(recorder.Events) > 0 {
			got = append(got, <-recorder.Events)
		}
		return got
	}

	// a: 1 to 2 CPUs, room enough: done at once. Requests 6.5 CPUs of 8.
	update("a", 2000)
	if spec, status := cpuOf("a-pod"); sum.AtOnce != 1 || spec != "2" || status != "2" {
		t.Errorf("a to 2 CPUs: %d done at once, spec %s, status %s", sum.AtOnce, spec, status)
	}
	if got := events(); !slices.Equal(got, []string{"Normal InPlaceResizedByVPA Pod was resized in place by VPA Updater."}) {
		t.Errorf("events %q", got)
	}
	// A pod within its recommendation is left alone.
	update("a", 2100)
	if sum.Requested != 1 {
		t.Errorf("a 5%% off its recommendation: %d resizes, want 1", sum.Requested)
	}

	// a: to 4 CPUs, 8.5 of 8: Deferred; done when c leaves, at that time.
	update("a", 4000)
	if sum.Deferred != 1 || u.flight[aKey] == nil {
		t.Fatalf("a to 4 CPUs: %d deferred, in flight %v", sum.Deferred, u.flight[aKey])
	}
	if err := node.Advance(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := u.observe(ctx); err != nil || u.flight[aKey] == nil {
		t.Fatalf("a still Deferred after a minute: %v, in flight %v", err, u.flight[aKey])
	}
	if err := pods.Delete(ctx, "c-pod", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := node.Advance(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := u.observe(ctx); err != nil {
		t.Fatal(err)
	}
	if spec, status := cpuOf("a-pod"); u.flight[aKey] != nil || sum.DeferredDone != 1 || spec != "4" || status != "4" {
		t.Errorf("a after c left: in flight %v, %d deferred done, spec %s, status %s", u.flight[aKey], sum.DeferredDone, spec, status)
	}
	if len(sum.DeferredDurations) != 1 || sum.DeferredDurations[0] != time.Minute {
		t.Errorf("a took %v, want the minute until c left", sum.DeferredDurations)
	}

	// b: 4 to 5 CPUs, 9 of 8: Deferred; after more than five minutes,
	// evicted and replaced.
	update("b", 5000)
	if err := node.Advance(ctx, 5*time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := u.observe(ctx); err != nil || len(replaced) != 0 {
		t.Fatalf("b after five minutes Deferred: %v, replaced %v", err, replaced)
	}
	if err := node.Advance(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	events()
	if err := u.observe(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Get(ctx, "b-pod", metav1.GetOptions{}); !apierrors.IsNotFound(err) || sum.Recreated["deferred"] != 1 ||
		!slices.Equal(replaced, []string{"b-pod deferred cpu 5 mem 256Mi"}) {
		t.Errorf("b Deferred too long: get %v, recreated %v, replaced %v", err, sum.Recreated, replaced)
	}
	if got := events(); !slices.Equal(got, []string{"Normal EvictedByVPA Pod was evicted by VPA Updater to apply resource recommendation."}) {
		t.Errorf("events %q", got)
	}

	// a: to 9 CPUs, more than the node has: Infeasible, evicted at once.
	update("a", 9000)
	if _, err := pods.Get(ctx, "a-pod", metav1.GetOptions{}); !apierrors.IsNotFound(err) || sum.Infeasible != 1 || sum.Recreated["infeasible"] != 1 ||
		!slices.Equal(replaced[1:], []string{"a-pod infeasible cpu 9 mem 256Mi"}) {
		t.Errorf("a to 9 CPUs: get %v, %d infeasible, recreated %v, replaced %v", err, sum.Infeasible, sum.Recreated, replaced)
	}
	if problems := sum.Check(); len(problems) > 0 {
		t.Errorf("the updater's counts do not hold together: %v", problems)
	}
	for _, want := range []string{"00:00:00 resize    a-pod on node-1 cpu 1 mem 256Mi -> cpu 2 mem 256Mi done",
		"00:00:00 resize    a-pod on node-1 cpu 2 mem 256Mi -> cpu 4 mem 256Mi deferred: ",
		"00:01:00 done      a-pod cpu 2 mem 256Mi -> cpu 4 mem 256Mi after 1m0s",
		"00:07:01 resize    a-pod on node-1 cpu 4 mem 256Mi -> cpu 9 mem 256Mi infeasible: Node didn't have enough capacity: cpu, requested: 9000, capacity: 8000"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestLivePodsSorted: the live pods' names come sorted, with the names
// added since the last look merged in and the removed ones left out, also
// a name removed and added again (once), whatever the order of the calls.
func TestLivePodsSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	l := livePods{pods: map[string]*replica{}}
	want := map[string]bool{}
	for step := range 2000 {
		name := fmt.Sprintf("pod-%03d", rng.IntN(300))
		switch {
		case want[name]:
			l.remove(name)
			delete(want, name)
		default:
			l.add(name, nil, rng)
			want[name] = true
		}
		if step%37 == 0 || step == 1999 {
			keys := slices.Sorted(maps.Keys(want))
			if got := l.sorted(); !slices.Equal(got, keys) {
				t.Fatalf("step %d: sorted() = %v\nwant %v", step, got, keys)
			}
		}
	}
}

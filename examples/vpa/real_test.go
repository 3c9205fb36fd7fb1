package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/kubeapi"
)

// TestPlacementOnIsPlacement: the placement by kinds the real run uses is
// the simulation's for the simulation's kinds.
func TestPlacementOnIsPlacement(t *testing.T) {
	for _, nodes := range []int{1, 4, 5, 11} {
		w := newWorld(20)
		standard := make([]bool, nodes)
		for i := range standard {
			standard[i] = w.kindOf(i+1).name == "standard"
		}
		if got, want := w.placementOn(standard, 20), w.placement(nodes, 20)[1:]; !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("%d nodes: placementOn differs from placement", nodes)
		}
	}
}

// TestWorldOfSizesTrainToTheStandardNode: train's jump asks for more CPUs
// than the standard node has, and less than the large one, whatever the
// agents' sizes.
func TestWorldOfSizesTrainToTheStandardNode(t *testing.T) {
	kind := func(name, cpu string) nodeKind {
		return nodeKind{name, v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse("64Gi")}}
	}
	w := worldOf(20, kind("standard", "7"), kind("large", "20"))
	train := w.workloads[len(w.workloads)-1]
	if after := train.cpu(30); after <= 7000 || after > 20000 {
		t.Errorf("train's usage after its jump %.0fm: want above the standard node's 7 CPUs and within the large node's 20", after)
	}
	if train.maxAllowed.cpu <= 7000 {
		t.Errorf("train's maxAllowed %dm keeps it on a standard node", train.maxAllowed.cpu)
	}
}

// TestCompareNodeNames: the nodes are taken in the order of their numbers.
func TestCompareNodeNames(t *testing.T) {
	names := []string{"p-10", "p-2", "p-0", "p-x", "p-1"}
	slices.SortFunc(names, func(a, b string) int { return compareNodeNames("p-", a, b) })
	if want := []string{"p-0", "p-1", "p-2", "p-10", "p-x"}; !slices.Equal(names, want) {
		t.Errorf("sorted %v, want %v", names, want)
	}
}

// TestRealFlags: the flags of the real mode need -kubeconfig, and
// -kubelet is the agents' to choose; all are refused before anything is
// dialled.
func TestRealFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-node-prefix", "x-"},
		{"-keep"},
		{"-kube-api-qps", "5"},
		{"-kubeconfig", "/nonexistent", "-kubelet", "1.36"},
	} {
		var out, errs bytes.Buffer
		if code := run(context.Background(), args, &out, &errs); code != 2 || errs.Len() == 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a reason", args, code, errs.String())
		}
	}
}

// TestRealSummaryLines: the summary of a real run says where it ran and
// which node completed how many resizes.
func TestRealSummaryLines(t *testing.T) {
	sum := Summary{Nodes: 2, PodsStart: 20, PodsEnd: 20, Recreated: map[string]int{}, Real: &RealSummary{
		Server: "https://127.0.0.1:6443", Version: "v1.35.4", Namespace: "vpa-abcde", Rounds: 3, Late: 1,
		Nodes: []string{"n-0", "n-1"}, CompletedBy: map[string]int{"n-1": 4}, Kubelets: []string{"v1.35.4"},
		EventsRecorded: 5, EventsStored: 4,
	}}
	var out bytes.Buffer
	sum.Print(&out, Config{Interval: time.Second, Seed: 1, Patch: "json"})
	for _, want := range []string{
		"summary after 3 rounds of 1s on https://127.0.0.1:6443 (kube-apiserver v1.35.4, namespace vpa-abcde; 2 nodes, 20 pods, seed 1, json patches, kubelet v1.35.4):",
		"  completed by node     n-0 0, n-1 4 (the kubelets' ResizeCompleted events)",
		"  updater events            5 recorded, 4 on the API server",
		"  rounds                    3 of 1s, 1 started late",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
	if problems := sum.Check(); len(problems) != 1 || !strings.Contains(problems[0], "recorded 5 events, the API server has 4") {
		t.Errorf("Check: %v; want the missing event", problems)
	}
}

// realKubeconfig returns the kubeconfig of the real API server the tests
// may use (examples/realhost/apiserver.sh start prints it), or skips
// without one; under CI=true, where .ci/run starts one, it fails instead.
func realKubeconfig(t *testing.T) string {
	t.Helper()
	k := os.Getenv("RESIZELET_KUBECONFIG")
	if k == "" {
		reason := "RESIZELET_KUBECONFIG is not set (run: examples/realhost/apiserver.sh start /tmp/rl-api, and export its KUBECONFIG line as RESIZELET_KUBECONFIG)"
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true, so this real-API test may not skip: %s", reason)
		}
		t.Skip(reason)
	}
	return k
}

// TestVPAOnRealAPIServer runs the command with -kubeconfig against the
// real API server, with two nodes this test runs in its own process as
// resizesim agent runs them (kubeapi.API.Run over a simulated backend):
// one standard and one large, of the sizes the simulation gives -pods 20.
// The updater, on the wall clock, resizes their pods in place, some
// Deferred by api's surge, and recreates train's pod on the large node
// when its jump is Infeasible on the standard one; the summary holds
// together, both nodes completed resizes, and the run's namespace is
// gone at the end.
func TestVPAOnRealAPIServer(t *testing.T) {
	kubeconfig := realKubeconfig(t)
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	rc.QPS, rc.Burst = 50, 100
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	prefix := fmt.Sprintf("vpatest-%04x-", rand.Uint32()%0x10000)
	sized := newWorld(20)
	startTestNodes(t, client, prefix, sized.standard.capacity, sized.large.capacity)

	var out, errs bytes.Buffer
	args := []string{"-kubeconfig", kubeconfig, "-node-prefix", prefix, "-nodes", "2", "-pods", "20", "-interval", "500ms", "-duration", "12s"}
	code := run(context.Background(), args, &out, &errs)
	t.Logf("vpa %s:\n%s%s", strings.Join(args, " "), out.String(), errs.String())
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	text := out.String()
	for _, want := range []string{" deferred: ", " infeasible: ", "recreate  train-"} {
		if !strings.Contains(text, want) {
			t.Errorf("the run has no line with %q", want)
		}
	}
	by := completedBy(t, text)
	for i := range 2 {
		if by[prefix+strconv.Itoa(i)] == 0 {
			t.Errorf("node %s%d completed no resize: %v", prefix, i, by)
		}
	}
	ns := regexp.MustCompile(`namespace (vpa-[a-z0-9]+)`).FindStringSubmatch(text)
	if ns == nil {
		t.Fatal("the output names no namespace")
	}
	if _, err := client.CoreV1().Namespaces().Get(context.Background(), ns[1], metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s after the run: %v; want it gone", ns[1], err)
	}
}

// completedBy reads the summary's completed-by-node line.
func completedBy(t *testing.T, out string) map[string]int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^  completed by node +(.*) \(the kubelets' ResizeCompleted events\)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatal("the summary has no completed-by-node line")
	}
	by := map[string]int{}
	for _, part := range strings.Split(m[1], ", ") {
		name, n, _ := strings.Cut(part, " ")
		by[name], _ = strconv.Atoi(n)
	}
	return by
}

// startTestNodes runs a node of each capacity on the API server, named
// prefix0, prefix1, ..., as resizesim agent runs them, until the test
// ends; then it stops them and deletes their Node objects and Leases.
func startTestNodes(t *testing.T, client kubernetes.Interface, prefix string, capacities ...v1.ResourceList) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var stops []func()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		for _, stop := range stops {
			stop()
		}
		for i := range capacities {
			name := prefix + strconv.Itoa(i)
			if err := client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("cleanup: node %s: %v", name, err)
			}
			if err := client.CoordinationV1().Leases(v1.NamespaceNodeLease).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("cleanup: lease %s: %v", name, err)
			}
		}
	})
	for i, capacity := range capacities {
		name := prefix + strconv.Itoa(i)
		capacity = capacity.DeepCopy()
		capacity[v1.ResourcePods] = resource.MustParse("110")
		backend, err := resize.Simulated(resize.NodeConfig{Name: name, Capacity: capacity, Allocatable: capacity.DeepCopy()},
			resize.WithSimContainerd(cri.WithClock(time.Now)))
		if err != nil {
			t.Fatal(err)
		}
		api, err := kubeapi.New(ctx, client, name, kubeapi.Options{})
		if err != nil {
			t.Fatal(err)
		}
		node, err := resize.NewNode(ctx, backend.Config(), backend.Deps(resize.Deps{Cluster: api, Clock: resize.WallClock{}, BoundPodsOnly: true}))
		if err != nil {
			api.Close()
			t.Fatal(err)
		}
		stops = append(stops, func() { node.Close(); api.Close() })
		wg.Go(func() {
			if err := api.Run(ctx, node, kubeapi.RunOptions{}); err != nil {
				t.Errorf("node %s: %v", name, err)
			}
		})
	}
}

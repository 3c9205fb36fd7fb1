package resize

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/resize/core"
)

// nodeState is everything a refused call must leave as it was.
type nodeState struct {
	pods    []*v1.Pod
	events  []Event
	total   v1.ResourceList
	infos   map[string]PodInfo
	cgroups map[string]string
	calls   int
}

func (tn *testNode) state() nodeState {
	tn.t.Helper()
	s := nodeState{pods: tn.cluster.ListPods(context.Background()), events: tn.cluster.Events(), total: tn.node.AllocatedTotal(),
		infos: map[string]PodInfo{}, cgroups: map[string]string{}, calls: len(tn.calls.Calls())}
	for _, p := range s.pods {
		info, err := tn.node.Pod(p.Namespace, p.Name)
		if err != nil {
			continue
		}
		s.infos[p.Namespace+"/"+p.Name] = info
		for _, f := range []string{"cpu.max", "cpu.weight", "memory.max"} {
			if v, err := tn.cg.ReadFile(info.PodCgroup, f); err == nil {
				s.cgroups[info.PodCgroup+"/"+f] = v
			}
		}
	}
	return s
}

func (tn *testNode) unchanged(what string, before nodeState) {
	tn.t.Helper()
	after := tn.state()
	if !apiequality.Semantic.DeepEqual(before.pods, after.pods) {
		tn.t.Fatalf("%s changed the API's pods:\n%v\n%v", what, before.pods, after.pods)
	}
	if len(before.events) != len(after.events) || before.calls != after.calls {
		tn.t.Fatalf("%s recorded %d events and %d runtime calls", what, len(after.events)-len(before.events), after.calls-before.calls)
	}
	if !apiequality.Semantic.DeepEqual(before.total, after.total) || !apiequality.Semantic.DeepEqual(before.infos, after.infos) {
		tn.t.Fatalf("%s changed the node: %v %v\n%v %v", what, before.total, before.infos, after.total, after.infos)
	}
	for k, v := range before.cgroups {
		if after.cgroups[k] != v {
			tn.t.Fatalf("%s changed %s from %q to %q", what, k, v, after.cgroups[k])
		}
	}
}

// TestNilPodsAndEmptyNames: a nil pod (alone or in a list) and an empty
// namespace or name are errors wrapping ErrInvalidArgument, not panics,
// and change nothing.
func TestNilPodsAndEmptyNames(t *testing.T) {
	tn := newTestNode(t, NodeConfig{})
	if _, err := tn.node.AddPod(tn.ctx, cpuPod("p", "100m")); err != nil {
		t.Fatal(err)
	}
	before := tn.state()
	req := ResizeRequest{Containers: []ContainerResize{{Name: "c", Requests: CPUMemory(200, 100<<20), Limits: CPUMemory(200, 100<<20)}}}
	for what, call := range map[string]func() error{
		"AddPod(nil)": func() error { _, err := tn.node.AddPod(tn.ctx, nil); return err },
		"AddPods with a nil element": func() error {
			_, err := tn.node.AddPods(tn.ctx, []*v1.Pod{cpuPod("q", "100m"), nil})
			return err
		},
		"Resize without a namespace": func() error {
			return errOf(tn.node.Resize(tn.ctx, ResizeOp{Namespace: "", Name: "p", Patch: []byte(cpuPatch("200m"))}))
		},
		"Resize without a name": func() error {
			return errOf(tn.node.Resize(tn.ctx, ResizeOp{Namespace: "default", Name: "", Patch: []byte(cpuPatch("200m"))}))
		},
		"ResizeRequest without a namespace": func() error { return errOf(tn.node.Resize(tn.ctx, ResizeOp{Namespace: "", Name: "p", Request: req})) },
		"ResizeRequest without a name": func() error {
			return errOf(tn.node.Resize(tn.ctx, ResizeOp{Namespace: "default", Name: "", Request: req}))
		},
		"DeletePod without a namespace": func() error { return tn.node.DeletePod(tn.ctx, "", "p") },
		"DeletePod without a name":      func() error { return tn.node.DeletePod(tn.ctx, "default", "") },
	} {
		err := call()
		if !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s = %v, want an error wrapping ErrInvalidArgument", what, err)
		}
		tn.unchanged(what, before)
	}
	if _, err := tn.cluster.CreatePod(t.Context(), nil); err == nil {
		t.Error("Cluster.CreatePod(nil) succeeded")
	}
}

// TestPodNamesAreValidated: names, namespaces and UIDs are validated as
// the API server validates them (names are DNS subdomains, namespaces DNS
// labels), so nothing can collide in a key; a refused pod changes nothing.
func TestPodNamesAreValidated(t *testing.T) {
	tn := newTestNode(t, NodeConfig{})
	if _, err := tn.node.AddPod(tn.ctx, cpuPod("p", "100m")); err != nil {
		t.Fatal(err)
	}
	before := tn.state()
	for _, tc := range []struct {
		namespace, name, uid string
		field                string
	}{
		{"default", "a/b", "", "metadata.name"},
		{"default", "..", "", "metadata.name"},
		{"default", "a\x00b", "", "metadata.name"},
		{"default", strings.Repeat("a", 5000), "", "metadata.name"},
		{"default", "a b", "", "metadata.name"},
		{"default", "A", "", "metadata.name"},
		{"default/a", "b", "", "metadata.namespace"},
		{"a.b", "c", "", "metadata.namespace"},
		{"default", "q", "../x", "metadata.uid"},
		{"default", "q", "a/b", "metadata.uid"},
		{"default", "q", "u\x00", "metadata.uid"},
		{"default", "q", strings.Repeat("0", 5000), "metadata.uid"},
		{"default", "q", "UPPER", "metadata.uid"},
	} {
		p := cpuPod(tc.name, "100m")
		p.Namespace, p.UID = tc.namespace, types.UID(tc.uid)
		_, err := tn.node.AddPod(tn.ctx, p)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.field+": Invalid value") {
			t.Errorf("AddPod %q/%q uid %q = %v, want Invalid at %s", tc.namespace, tc.name, tc.uid, err, tc.field)
		}
		tn.unchanged("an invalid pod", before)
		// AddPods refuses the list, and the valid pod before the bad one
		// is not left behind.
		_, err = tn.node.AddPods(tn.ctx, []*v1.Pod{cpuPod("fine", "100m"), p})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "pods[1]") {
			t.Errorf("AddPods with %q/%q = %v, want Invalid naming pods[1]", tc.namespace, tc.name, err)
		}
		tn.unchanged("AddPods with an invalid pod", before)
	}
}

// TestCallerUIDs: a UID the caller sets is kept, so long as it is well
// formed and no other pod has it; a UID another pod has is refused
// (ErrUIDTaken) and that pod keeps its allocation.
func TestCallerUIDs(t *testing.T) {
	tn := newTestNode(t, NodeConfig{})
	p := cpuPod("p", "100m")
	p.UID = "0b1c4a2e-5d7f-4c3b-9a1e-2f6d8c0b7a51"
	if _, err := tn.node.AddPod(tn.ctx, p); err != nil {
		t.Fatal(err)
	}
	if info := tn.info("p"); info.UID != p.UID || !strings.HasSuffix(info.PodCgroup, "pod"+string(p.UID)) {
		t.Fatalf("the caller's UID was not kept: %+v", info)
	}
	before := tn.state()
	q := cpuPod("q", "2")
	q.UID = p.UID
	if _, err := tn.node.AddPod(tn.ctx, q); !errors.Is(err, ErrUIDTaken) || !strings.Contains(err.Error(), "default/p") {
		t.Fatalf("AddPod with p's UID = %v, want ErrUIDTaken naming default/p", err)
	}
	tn.unchanged("a pod with another pod's UID", before)
	if _, err := tn.node.AddPods(tn.ctx, []*v1.Pod{cpuPod("r", "100m"), q}); !errors.Is(err, ErrUIDTaken) {
		t.Fatalf("AddPods with p's UID = %v, want ErrUIDTaken", err)
	}
	tn.unchanged("AddPods with another pod's UID", before)
	// Two pods of one list may not share a UID either.
	a, b := cpuPod("a", "100m"), cpuPod("b", "100m")
	a.UID, b.UID = "same", "same"
	if _, err := tn.node.AddPods(tn.ctx, []*v1.Pod{a, b}); !errors.Is(err, ErrUIDTaken) {
		t.Fatalf("AddPods of two pods with one UID = %v, want ErrUIDTaken", err)
	}
	tn.unchanged("AddPods of two pods with one UID", before)
}

// TestCallerUIDKnownOnlyToTheKubelet: a pod the API no longer has but the
// kubelet still knows (its API object was deleted behind the node's back)
// keeps its UID: a new pod with that UID is refused by the kubelet, and
// the API object the call created is taken back.
func TestCallerUIDKnownOnlyToTheKubelet(t *testing.T) {
	tn := newTestNode(t, NodeConfig{})
	if _, err := tn.node.AddPod(tn.ctx, cpuPod("p", "100m")); err != nil {
		t.Fatal(err)
	}
	uid := tn.info("p").UID
	if err := tn.cluster.DeletePod(t.Context(), "default", "p"); err != nil {
		t.Fatal(err)
	}
	q := cpuPod("q", "100m")
	q.UID = uid
	if _, err := tn.node.AddPod(tn.ctx, q); err == nil || !strings.Contains(err.Error(), "already known") {
		t.Fatalf("AddPod with a UID the kubelet knows = %v", err)
	}
	if _, err := tn.cluster.GetPod(t.Context(), "default", "q"); !errors.Is(err, ErrPodNotFound) {
		t.Fatalf("the refused pod stayed in the API: %v", err)
	}
	if info := tn.info("p"); info.UID != uid || qty(info.Allocated["c"].Requests, v1.ResourceCPU) != "100m" {
		t.Fatalf("p's allocation changed: %+v", info)
	}
}

// listingAPI is an API whose list shows what it is told to, as an API
// that does not check UIDs might. It embeds the Cluster as an API, so
// that the node lists through ListPods (not NodePodLister).
type listingAPI struct {
	API
	pods []*v1.Pod
}

func (a listingAPI) ListPods(ctx context.Context) []*v1.Pod { return a.pods }

// TestNewNodeRefusesSharedUIDs: a kubelet started on an API that lists two
// pods with one UID refuses to start instead of giving the second the
// first's allocation.
func TestNewNodeRefusesSharedUIDs(t *testing.T) {
	a, b := cpuPod("a", "100m"), cpuPod("b", "100m")
	a.UID, b.UID = "same", "same"
	cg := cgroup.NewSimKernel(cgroup.V2)
	_, err := NewNode(context.Background(), NodeConfig{}, Deps{
		Cluster: listingAPI{API: NewCluster(ClusterOptions{}), pods: []*v1.Pod{a, b}},
		Cgroups: cg, Runtime: cri.NewSimContainerd(cg),
	})
	if !errors.Is(err, ErrUIDTaken) || !strings.Contains(err.Error(), "default/a and default/b") {
		t.Fatalf("NewNode = %v, want ErrUIDTaken naming both pods", err)
	}
}

// TestAmountsBeyondInt64AreRefused: a quantity the kubelet's int64
// arithmetic would overflow is refused by the resize subresource and by
// pod creation (ErrAmountTooLarge), and nothing changes: no allocation,
// no cgroup write, no runtime call.
//
// This is a deliberate deviation from Kubernetes 1.35: its API server
// accepts "cpu: 1e100" (validation checks only that a quantity is not
// negative), the kubelet reads it with Quantity.MilliValue as 0
// millicores, admits it, and writes "cpu.max max" (no limit) to the pod
// cgroup; "9223372036854775807" reads as a negative number of millicores
// and becomes the minimum quota. resizelet refuses instead of writing a
// value derived from an overflowed amount (package cgroup/cgconfig,
// MaxMilliCPU, says where the bounds come from).
func TestAmountsBeyondInt64AreRefused(t *testing.T) {
	tn := newTestNode(t, NodeConfig{})
	if _, err := tn.node.AddPod(tn.ctx, cpuPod("p", "100m")); err != nil {
		t.Fatal(err)
	}
	before := tn.state()
	if before.cgroups[tn.info("p").PodCgroup+"/cpu.max"] != "10000 100000" {
		t.Fatalf("unexpected start: %v", before.cgroups)
	}
	memPatch := func(m string) string {
		return `{"spec":{"containers":[{"name":"c","resources":{"requests":{"memory":"` + m + `"},"limits":{"memory":"` + m + `"}}}]}}`
	}
	for what, patch := range map[string]string{
		"cpu 1e100":               cpuPatch("1e100"),
		"cpu 9223372036854775807": cpuPatch("9223372036854775807"),
		"cpu just over the bound": cpuPatch("9000000000001m"),
		"memory 1e100":            memPatch("1e100"),
		"memory 16Ei":             memPatch("16Ei"), // apimachinery caps it at 2^63-1
	} {
		_, err := tn.node.Resize(tn.ctx, ResizeOp{Namespace: "default", Name: "p", Patch: []byte(patch)})
		if !errors.Is(err, ErrAmountTooLarge) || !apierrors.IsInvalid(err) ||
			!strings.Contains(err.Error(), "spec.containers[0].resources.") || !strings.Contains(err.Error(), "must be less than or equal to") {
			t.Errorf("resize to %s = %v, want Invalid with ErrAmountTooLarge at the field", what, err)
		}
		tn.unchanged("resize to "+what, before)
	}
	req := ResizeRequest{Containers: []ContainerResize{{Name: "c", Requests: CPUMemory(math.MaxInt64, 100<<20), Limits: CPUMemory(math.MaxInt64, 100<<20)}}}
	if _, err := tn.node.Resize(tn.ctx, ResizeOp{Namespace: "default", Name: "p", Request: req}); !errors.Is(err, ErrAmountTooLarge) {
		t.Errorf("typed resize to MaxInt64 millicores = %v, want ErrAmountTooLarge", err)
	}
	tn.unchanged("typed resize to MaxInt64 millicores", before)

	// Each amount fits, their sum does not.
	big := cpuPod("big", "5G")
	big.Spec.Containers = append(big.Spec.Containers, big.Spec.Containers[0])
	big.Spec.Containers[1].Name = "d"
	if _, err := tn.node.AddPod(tn.ctx, big); !errors.Is(err, ErrAmountTooLarge) || !strings.Contains(err.Error(), "add up to more than 9G") {
		t.Errorf("AddPod of 2 x 5G cpu = %v, want ErrAmountTooLarge for the total", err)
	}
	tn.unchanged("a pod whose cpu adds up to more than the bound", before)

	// The largest amount still works end to end (Infeasible on this node).
	if _, err := tn.node.Resize(tn.ctx, ResizeOp{Namespace: "default", Name: "p", Patch: []byte(cpuPatch("9G"))}); err != nil {
		t.Fatalf("resize to the bound: %v", err)
	}
	if c := pendingOf(t, tn.pod("p")); c == nil || c.Reason != "Infeasible" {
		t.Fatalf("resize to 9G: %+v, want Infeasible", c)
	}
}

// TestNodeCapacityBeyondInt64IsRefused: a node whose capacity or
// allocatable the kubelet's arithmetic would overflow does not start.
func TestNodeCapacityBeyondInt64IsRefused(t *testing.T) {
	for _, tc := range []struct {
		cfg   NodeConfig
		field string
	}{
		{NodeConfig{Capacity: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1e30")}}, "capacity.cpu"},
		{NodeConfig{Capacity: v1.ResourceList{v1.ResourceMemory: resource.MustParse("1e30")}}, "capacity.memory"},
		{NodeConfig{Allocatable: v1.ResourceList{v1.ResourcePods: resource.MustParse("9223372036854775807")}}, "allocatable.pods"},
	} {
		cg := cgroup.NewSimKernel(cgroup.V2)
		_, err := NewNode(context.Background(), tc.cfg, Deps{Cluster: NewCluster(ClusterOptions{}), Cgroups: cg, Runtime: cri.NewSimContainerd(cg)})
		var ce *core.ConfigError
		if !errors.As(err, &ce) || ce.Field != tc.field || !errors.Is(err, ErrAmountTooLarge) || !errors.Is(err, core.ErrInvalidConfig) {
			t.Errorf("NewNode(%v) = %v, want a ConfigError at %s wrapping ErrAmountTooLarge", tc.cfg.Capacity, err, tc.field)
		}
	}
}

package apiserver

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/resize/profile"
)

// nodeOf is a linux node with cpus CPUs and 64Gi of memory.
func nodeOf(name, cpus string) NodeInfo {
	return NodeInfo{Name: name, OS: "linux", Allocatable: v1.ResourceList{
		v1.ResourceCPU: resource.MustParse(cpus), v1.ResourceMemory: resource.MustParse("64Gi"),
	}}
}

// podOn is admissionPod named name and bound to node ("" leaves it
// without a nodeName).
func podOn(name, node string) *v1.Pod {
	p := admissionPod()
	p.Name = name
	p.Spec.NodeName = node
	p.Status = v1.PodStatus{}
	return p
}

// TestAdmitResizeOnTheBoundNode: with several nodes registered, the 1.36
// PodResizeValidator checks each resize against the node the pod's
// spec.nodeName names, refuses a pod bound to a node nobody registered
// ("node %q not found", as the plugin's node lister answers), and lets a
// pod without a nodeName through, as an unbound pod.
func TestAdmitResizeOnTheBoundNode(t *testing.T) {
	sixCPUs := []byte(`{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"6"}}}]}}`)
	for _, tc := range []struct {
		name, node string
		want       string // "" for admitted
	}{
		{name: "on-big", node: "big"},
		{name: "on-small", node: "small",
			want: `pods "on-small" is forbidden: node didn't have enough allocatable resources: cpu, requested: 6000, allocatable: 4000`},
		{name: "on-ghost", node: "ghost", want: `pods "on-ghost" is forbidden: node "ghost" not found`},
		{name: "unbound", node: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCluster(ClusterOptions{Profile: profile.V136})
			c.RegisterNode(t.Context(), nodeOf("big", "16"))
			c.RegisterNode(t.Context(), nodeOf("small", "4"))
			if _, err := c.CreatePod(t.Context(), podOn(tc.name, tc.node)); err != nil {
				t.Fatal(err)
			}
			_, err := c.ResizePod(t.Context(), "default", tc.name, sixCPUs)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("ResizePod() = %v, want admitted", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Fatalf("ResizePod() = %v\nwant %s", err, tc.want)
			case tc.want != "" && !apierrors.IsForbidden(err):
				t.Fatalf("error %T is not a Forbidden StatusError", err)
			}
		})
	}
}

// TestAdmitResizeBoundToUnregisteredNode: a pod bound to a node when no
// node registered at all is refused as the plugin refuses it, while the
// same pod without a nodeName passes.
func TestAdmitResizeBoundToUnregisteredNode(t *testing.T) {
	c := NewCluster(ClusterOptions{Profile: profile.V136})
	for _, p := range []*v1.Pod{podOn("bound", "node-1"), podOn("unbound", "")} {
		if _, err := c.CreatePod(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	patch := []byte(`{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]}}`)
	if _, err := c.ResizePod(t.Context(), "default", "bound", patch); err == nil || err.Error() != `pods "bound" is forbidden: node "node-1" not found` {
		t.Errorf("bound pod: ResizePod() = %v, want node not found", err)
	}
	if _, err := c.ResizePod(t.Context(), "default", "unbound", patch); err != nil {
		t.Errorf("unbound pod: ResizePod() = %v, want admitted", err)
	}
}

// TestAdmitResizeKeepsItsSingleNodeMeaning: AdmitResize given one node
// binds a pod without a nodeName to it, and refuses one whose nodeName
// names another node.
func TestAdmitResizeKeepsItsSingleNodeMeaning(t *testing.T) {
	o := ResizeOptions{Profile: profile.V136}
	node := nodeOf("node-1", "4")
	for _, tc := range []struct{ nodeName, want string }{
		{"", `pods "p" is forbidden: node didn't have enough allocatable resources: cpu, requested: 6000, allocatable: 4000`},
		{"node-1", `pods "p" is forbidden: node didn't have enough allocatable resources: cpu, requested: 6000, allocatable: 4000`},
		{"node-2", `pods "p" is forbidden: node "node-2" not found`},
	} {
		old := admissionPod()
		old.Spec.NodeName = tc.nodeName
		updated := applyOK(t, old, `{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"6"}}}]}}`, o)
		if err := AdmitResize(old, updated, &node, o); err == nil || err.Error() != tc.want {
			t.Errorf("nodeName %q: AdmitResize() = %v\nwant %s", tc.nodeName, err, tc.want)
		}
	}
}

// TestRegisterNodeKeepsNodesByName: registering a second name keeps the
// first, registering a name again replaces that node, and Node returns a
// copy.
func TestRegisterNodeKeepsNodesByName(t *testing.T) {
	c := NewCluster(ClusterOptions{})
	c.RegisterNode(t.Context(), nodeOf("a", "4"))
	c.RegisterNode(t.Context(), nodeOf("b", "8"))
	c.RegisterNode(t.Context(), nodeOf("a", "6"))
	a, ok := c.Node("a")
	if !ok || a.Allocatable.Cpu().String() != "6" {
		t.Fatalf("Node(a) = %+v, %v; want the second registration (6 CPUs)", a, ok)
	}
	a.Allocatable[v1.ResourceCPU] = resource.MustParse("100")
	if again, _ := c.Node("a"); again.Allocatable.Cpu().String() != "6" {
		t.Errorf("changing the returned node changed the cluster's: %s", again.Allocatable.Cpu())
	}
	if b, ok := c.Node("b"); !ok || b.Allocatable.Cpu().String() != "8" {
		t.Errorf("Node(b) = %+v, %v; want it kept", b, ok)
	}
	if _, ok := c.Node("c"); ok {
		t.Error("Node(c) found a node nobody registered")
	}
}

// TestMarkPodDeletedOnSeveralNodes: with two nodes registered, a pod
// without a nodeName is unbound and deleted at once (grace 0), as
// CheckGracefulDelete deletes an unscheduled pod; a bound pod keeps its
// grace period.
func TestMarkPodDeletedOnSeveralNodes(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewCluster(ClusterOptions{})
	c.RegisterNode(t.Context(), nodeOf("a", "4"))
	c.RegisterNode(t.Context(), nodeOf("b", "4"))
	for _, tc := range []struct {
		name, node string
		want       int64
	}{{"bound", "b", 30}, {"unbound", "", 0}} {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: tc.name, Namespace: "default"}, Spec: v1.PodSpec{
			NodeName: tc.node, Containers: []v1.Container{{Name: "c", Image: "x"}},
		}}
		if _, err := c.CreatePod(t.Context(), p); err != nil {
			t.Fatal(err)
		}
		got, err := c.MarkPodDeleted(t.Context(), "default", tc.name, "", now)
		if err != nil {
			t.Fatal(err)
		}
		if g := got.DeletionGracePeriodSeconds; g == nil || *g != tc.want {
			t.Errorf("%s: grace %v, want %d", tc.name, g, tc.want)
		}
	}
	if _, err := c.MarkPodDeleted(t.Context(), "default", "nope", "", now); !errors.Is(err, ErrPodNotFound) {
		t.Errorf("marking an unknown pod: %v", err)
	}
}

// TestListNodePodsIsListPodsFiltered: ListNodePods gives what ListPods
// gives, kept to the pods of the nodes asked for, in creation order: on a
// cluster with pods on several nodes and unbound ones, created
// interleaved, most of them frozen, after deletions and a pod created
// again under its name on another node. The resize subresource keeps a
// pod's nodeName whatever the patch says, so the index stays right.
func TestListNodePodsIsListPodsFiltered(t *testing.T) {
	ctx := t.Context()
	c := NewCluster(ClusterOptions{})
	for i := range 12 {
		node := []string{"a", "b", "", "c"}[i%4]
		if _, err := c.CreatePod(ctx, podOn(fmt.Sprintf("p%d", i), node)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"p0", "p6", "p9"} {
		if err := c.DeletePod(ctx, "default", name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.CreatePod(ctx, podOn("p0", "b")); err != nil {
		t.Fatal(err)
	}
	for _, patch := range []struct {
		pt   types.PatchType
		body string
	}{
		{types.StrategicMergePatchType, `{"spec":{"nodeName":"c","containers":[{"name":"c","resources":{"requests":{"cpu":"2"}}}]}}`},
		{types.MergePatchType, `{"spec":{"nodeName":""}}`},
		{types.JSONPatchType, `[{"op":"replace","path":"/spec/nodeName","value":"c"}]`},
	} {
		if _, err := c.ResizePodPatch(ctx, "default", "p1", patch.pt, []byte(patch.body)); err != nil {
			t.Fatalf("%s resize: %v", patch.pt, err)
		}
		if p, err := c.GetPod(ctx, "default", "p1"); err != nil || p.Spec.NodeName != "b" {
			t.Fatalf("after a %s resize naming another node: %v, %v", patch.pt, p, err)
		}
	}
	all := c.ListPods(ctx)
	for _, nodes := range [][]string{{"a"}, {"b"}, {""}, {"a", ""}, {"", "b"}, {"b", "b"}, {"a", "b", "c", ""}, {"ghost"}, {}} {
		var want []string
		for _, p := range all {
			if slices.Contains(nodes, p.Spec.NodeName) {
				want = append(want, p.Name)
			}
		}
		got := c.ListNodePods(ctx, nodes...)
		var names []string
		for i, p := range got {
			names = append(names, p.Name)
			if w, _ := c.GetPod(ctx, "default", p.Name); !apiequality.Semantic.DeepEqual(p, w) || p.ResourceVersion != "" {
				t.Errorf("ListNodePods(%q)[%d] = %+v\nwant %+v", nodes, i, p, w)
			}
		}
		if !slices.Equal(names, want) {
			t.Errorf("ListNodePods(%q) = %v, want %v", nodes, names, want)
		}
	}
	if got := (*Cluster)(nil).ListNodePods(ctx, "a"); got != nil {
		t.Errorf("nil cluster: %v", got)
	}
	var zero Cluster
	if _, err := zero.CreatePod(ctx, podOn("z", "a")); err != nil {
		t.Fatal(err)
	}
	if got := zero.ListNodePods(ctx, "a"); len(got) != 1 || got[0].Name != "z" {
		t.Errorf("zero cluster: %v", got)
	}
}

package resize

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
)

// TestResizeOpNeedsOneForm: an op without a Request or a Patch, or with
// both, is an ErrInvalidArgument that says so, and changes nothing.
func TestResizeOpNeedsOneForm(t *testing.T) {
	tn := newTestNode(t, smallNode())
	addPods(t, tn, cpuPod("p", "100m"))
	req := ResizeRequest{Containers: []ContainerResize{{Name: "c", Requests: CPU(200), Limits: CPU(200)}}}
	for _, tc := range []struct {
		op   ResizeOp
		want string
	}{
		{ResizeOp{Namespace: "default", Name: "p"}, "neither a Request nor a Patch"},
		{ResizeOp{Namespace: "default", Name: "p", Request: req, Patch: []byte(cpuPatch("200m"))}, "a Request and a Patch"},
		{ResizeOp{Namespace: "default", Name: "p", Request: req, PatchType: "application/merge-patch+json"}, "a Request and a Patch"},
	} {
		before := tn.pod("p")
		pod, err := tn.node.Resize(tn.ctx, tc.op)
		if pod != nil || !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Resize(%+v) = %v, %v; want an ErrInvalidArgument saying %q", tc.op, pod, err, tc.want)
		}
		if _, err := tn.node.Plan(tn.ctx, tc.op); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Plan(%+v): %v, want ErrInvalidArgument", tc.op, err)
		}
		if !equality.Semantic.DeepEqual(before, tn.pod("p")) {
			t.Errorf("Resize(%+v) changed the pod", tc.op)
		}
	}
}

// TestResizeOpDryRun: a dry run answers with the pod the API server would
// store (the new spec, the next generation) and changes nothing on the
// API server or the node, in every form.
func TestResizeOpDryRun(t *testing.T) {
	tn := newTestNode(t, smallNode())
	addPods(t, tn, cpuPod("p", "100m"))
	before, beforeInfo := tn.pod("p"), tn.info("p")
	req := ResizeRequest{Containers: []ContainerResize{{Name: "c", Requests: CPU(200), Limits: CPU(200)}}}
	for _, op := range []ResizeOp{
		{Namespace: "default", Name: "p", Request: req, DryRun: true},
		{Namespace: "default", Name: "p", Patch: []byte(cpuPatch("200m")), DryRun: true},
		{Namespace: "default", Name: "p", PatchType: "application/json-patch+json", DryRun: true, Patch: []byte(`[{"op":"replace","path":"/spec/containers/0/resources/requests/cpu","value":"200m"},{"op":"replace","path":"/spec/containers/0/resources/limits/cpu","value":"200m"}]`)},
	} {
		pod, err := tn.node.Resize(tn.ctx, op)
		if err != nil {
			t.Fatal(err)
		}
		if got := pod.Spec.Containers[0].Resources.Requests.Cpu().String(); got != "200m" || pod.Generation != before.Generation+1 {
			t.Errorf("dry run %+v answered cpu %s generation %d, want 200m and %d", op, got, pod.Generation, before.Generation+1)
		}
		if !equality.Semantic.DeepEqual(before, tn.pod("p")) || !equality.Semantic.DeepEqual(beforeInfo.Allocated, tn.info("p").Allocated) {
			t.Errorf("dry run %+v changed the pod or its allocation", op)
		}
	}
	pod, err := tn.node.Resize(tn.ctx, ResizeOp{Namespace: "default", Name: "p", Request: req})
	if err != nil {
		t.Fatal(err)
	}
	alloc := tn.info("p").Allocated["c"]
	if pod.Generation != before.Generation+1 || alloc.Requests.Cpu().String() != "200m" {
		t.Errorf("the resize after the dry runs: generation %d, allocation %v", pod.Generation, tn.info("p").Allocated)
	}
}

// TestFleetResizeTakesEveryForm: Fleet.Resize takes a typed request as
// Node.Resize does, and a dry run changes nothing.
func TestFleetResizeTakesEveryForm(t *testing.T) {
	f := NewFleet(FleetOptions{})
	defer f.Close()
	node, err := f.AddNode(t.Context(), smallNode(), Deps{})
	if err != nil {
		t.Fatal(err)
	}
	p := cpuPod("p", "100m")
	p.Spec.NodeName = node.Config().Name
	if _, err := node.AddPod(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	req := ResizeRequest{Containers: []ContainerResize{{Name: "c", Requests: CPU(300), Limits: CPU(300)}}}
	if _, err := f.Resize(t.Context(), ResizeOp{Namespace: "default", Name: "p", Request: req, DryRun: true}); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.Cluster().GetPod(t.Context(), "default", "p"); got.Generation != 1 {
		t.Errorf("a dry run through the fleet stored generation %d", got.Generation)
	}
	if _, err := f.Resize(t.Context(), ResizeOp{Namespace: "default", Name: "p", Request: req}); err != nil {
		t.Fatal(err)
	}
	got, _ := f.Cluster().GetPod(t.Context(), "default", "p")
	if r := got.Status.ContainerStatuses[0].Resources; r == nil || r.Requests.Cpu().String() != "300m" {
		t.Errorf("after the fleet's typed resize the status says %v, want cpu 300m", r)
	}
}

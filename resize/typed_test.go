package resize

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// patchOnlyAPI hides the Cluster's typed resize, so that the node falls
// back to sending the request's patch.
type patchOnlyAPI struct{ API }

// nodeTranscript is what a node did and shows, as strings: every pod (spec
// and status as JSON), every event, every cgroup file and every recorded
// CRI call.
func nodeTranscript(t *testing.T, tn *testNode) []string {
	t.Helper()
	var out []string
	for _, p := range tn.cluster.ListPods(t.Context()) {
		b, err := json.Marshal(struct {
			Spec   v1.PodSpec
			Status v1.PodStatus
			Gen    int64
		}{p.Spec, p.Status, p.Generation})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Name+" "+string(b))
	}
	for _, e := range tn.cluster.Events() {
		out = append(out, fmt.Sprintf("event %s %s %s %s", e.Pod, e.Type, e.Reason, e.Message))
	}
	var files []string
	for path, fs := range allFiles(tn.cg) {
		for f, v := range fs {
			files = append(files, fmt.Sprintf("file %s/%s=%s", path, f, v))
		}
	}
	slices.Sort(files)
	out = append(out, files...)
	for _, c := range tn.calls.Calls() {
		b, _ := json.Marshal(c.Linux)
		out = append(out, fmt.Sprintf("call %s %s %s %s %v", c.Method, c.Pod, c.Container, b, c.Err))
	}
	return out
}

// randomTypedResize draws a resize of one or two containers of a
// two-container pod (or of a container it does not have), with amounts
// that fit, that do not fit now, that never fit, and that the API server
// refuses (a changed QoS class, a limit below its request, a lone cpu).
func randomTypedResize(r *rand.Rand) ResizeRequest {
	names := []string{"c1", "c2", "c1", "c2", "nope"}
	cpus := []int64{100, 250, 500, 1000, 2500, 3900, 9000, 0}
	mems := []int64{64 << 20, 128 << 20, 256 << 20, 1 << 30, 100 << 30, 1_000_000}
	one := func() ContainerResize {
		c := ContainerResize{Name: names[r.Intn(len(names))]}
		cpu, mem := cpus[r.Intn(len(cpus))], mems[r.Intn(len(mems))]
		c.Requests = Amounts{MilliCPU: cpu, Memory: mem, HasCPU: r.Intn(6) > 0, HasMemory: r.Intn(4) > 0}
		switch r.Intn(4) {
		case 0: // requests only
		case 1:
			c.Limits = Amounts{MilliCPU: cpu / 2, Memory: mem, HasCPU: true, HasMemory: true}
		default:
			c.Limits = Amounts{MilliCPU: cpu, Memory: mem, HasCPU: true, HasMemory: true}
		}
		return c
	}
	req := ResizeRequest{Containers: []ContainerResize{one()}}
	if r.Intn(3) == 0 {
		req.Containers = append(req.Containers, one())
	}
	return req
}

// TestResizeRequestMatchesPatchOnNode drives three nodes with the same
// random resizes: one through a typed Node.Resize on the Cluster's typed
// path, one through a typed Node.Resize on an API without it (the patch
// fallback), one through Node.Resize with the request's patch. Every
// outcome, pod, event, cgroup file and CRI call must be the same.
func TestResizeRequestMatchesPatchOnNode(t *testing.T) {
	for seed := int64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewSource(seed))
			typed := newTestNode(t, smallNode())
			fallback := newTestNode(t, smallNode())
			fallback.deps.Cluster = patchOnlyAPI{fallback.cluster}
			fallback.restart()
			patched := newTestNode(t, smallNode())
			nodes := []*testNode{typed, fallback, patched}
			for i := 0; i < 4; i++ {
				p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Namespace: "default"}, Spec: v1.PodSpec{Containers: []v1.Container{
					{Name: "c1", Image: "x", Resources: resources("250m", "128Mi", "500m", "256Mi")},
					{Name: "c2", Image: "x", Resources: resources("100m", "64Mi", "100m", "64Mi")},
				}}}
				if i%2 == 1 {
					p.Spec.Containers[1].Resources.Limits = p.Spec.Containers[1].Resources.Requests.DeepCopy()
					p.Spec.Containers[0].Resources.Limits = p.Spec.Containers[0].Resources.Requests.DeepCopy()
				}
				for _, tn := range nodes {
					if _, err := tn.node.AddPod(tn.ctx, p); err != nil {
						t.Fatal(err)
					}
				}
			}
			outcomes := map[string]int{}
			for step := 0; step < 60; step++ {
				name := fmt.Sprintf("p%d", r.Intn(4))
				if r.Intn(8) == 0 {
					d := time.Duration(r.Intn(200)) * time.Second
					for _, tn := range nodes {
						if err := tn.node.Advance(tn.ctx, d); err != nil {
							t.Fatal(err)
						}
					}
					continue
				}
				req := randomTypedResize(r)
				errs := []error{
					errOf(typed.node.Resize(typed.ctx, ResizeOp{Namespace: "default", Name: name, Request: req})),
					errOf(fallback.node.Resize(fallback.ctx, ResizeOp{Namespace: "default", Name: name, Request: req})),
					errOf(patched.node.Resize(patched.ctx, ResizeOp{Namespace: "default", Name: name, Patch: req.Patch()})),
				}
				for i, err := range errs[1:] {
					if fmt.Sprint(err) != fmt.Sprint(errs[0]) {
						t.Fatalf("step %d, %s %s: node %d says %v, the typed node %v", step, name, req.Patch(), i+1, err, errs[0])
					}
				}
				if errs[0] != nil {
					outcomes["refused"]++
				} else {
					outcomes["accepted"]++
				}
				want := nodeTranscript(t, typed)
				for i, tn := range nodes[1:] {
					if diff := cmp.Diff(want, nodeTranscript(t, tn)); diff != "" {
						t.Fatalf("step %d, %s %s: node %d differs from the typed node (-typed +other):\n%s", step, name, req.Patch(), i+1, diff)
					}
				}
			}
			for _, e := range typed.cluster.Events() {
				outcomes[e.Reason]++
			}
			if outcomes["refused"] == 0 || outcomes[ReasonResizeCompleted] == 0 || outcomes[ReasonResizeDeferred]+outcomes[ReasonResizeInfeasible] == 0 {
				t.Fatalf("the walk did not reach every outcome: %v", outcomes)
			}
		})
	}
}

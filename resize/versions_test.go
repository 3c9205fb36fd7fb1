package resize

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/resizelet/resizelet/allocation/state"
)

// TestDeferredEventNamesHandlerReason: a Deferred resize's event reads
// "Pod resize Deferred" on 1.35 and names the predicate handler's reason
// from 1.36 ("Pod resize OutOfcpu"), while the condition's reason is
// Deferred in every version (pkg/kubelet/allocation/allocation_manager.go,
// handlePodResourcesResize; pkg/kubelet/status/status_manager.go,
// SetPodResizePendingCondition).
func TestDeferredEventNamesHandlerReason(t *testing.T) {
	for _, tc := range []struct {
		profile Profile
		prefix  string
	}{
		{Profile135, "Warning ResizeDeferred Pod resize Deferred: "},
		{Profile136, "Warning ResizeDeferred Pod resize OutOfcpu: "},
		{Profile137, "Warning ResizeDeferred Pod resize OutOfcpu: "},
	} {
		t.Run(string(tc.profile), func(t *testing.T) {
			cfg := smallNode()
			cfg.Profile = tc.profile
			tn := newTestNode(t, cfg)
			for _, p := range []*v1.Pod{cpuPod("a", "2"), cpuPod("b", "1")} {
				if _, err := tn.node.AddPod(tn.ctx, p); err != nil {
					t.Fatal(err)
				}
			}
			mark := len(tn.cluster.Events())
			mustResize(t, tn, "b", cpuPatch("3"))
			if c := pendingOf(t, tn.pod("b")); c == nil || c.Reason != v1.PodReasonDeferred {
				t.Fatalf("pending condition = %+v, want Deferred", c)
			}
			if got := tn.events(mark); len(got) != 1 || !strings.HasPrefix(got[0], tc.prefix) {
				t.Fatalf("events = %q, want one starting %q", got, tc.prefix)
			}
		})
	}
}

// TestResizeBeyondAllocatableByVersion: on 1.35 the kubelet refuses a
// resize above the node's allocatable as Infeasible; from 1.36 the API
// server's PodResizeValidator refuses it with a Forbidden error and the
// pod does not change (plugin/pkg/admission/podresize/admission.go).
func TestResizeBeyondAllocatableByVersion(t *testing.T) {
	for _, p := range []Profile{Profile135, Profile136, Profile137} {
		t.Run(string(p), func(t *testing.T) {
			tn := newTestNode(t, NodeConfig{Profile: p})
			if _, err := tn.node.AddPod(tn.ctx, cpuPod("w", "700m")); err != nil {
				t.Fatal(err)
			}
			_, err := tn.node.Resize(tn.ctx, ResizeOp{Namespace: "default", Name: "w", Patch: []byte(cpuPatch("1000"))})
			pod := tn.pod("w")
			if p == Profile135 {
				if err != nil {
					t.Fatalf("Resize = %v, want the kubelet to decide", err)
				}
				c := pendingOf(t, pod)
				if c == nil || c.Reason != v1.PodReasonInfeasible || c.Message != "Node didn't have enough capacity: cpu, requested: 1000000, capacity: 16000" {
					t.Fatalf("pending condition = %+v, want the kubelet's Infeasible", c)
				}
				return
			}
			want := `pods "w" is forbidden: node didn't have enough allocatable resources: cpu, requested: 1000000, allocatable: 16000`
			if err == nil || err.Error() != want || !apierrors.IsForbidden(err) {
				t.Fatalf("Resize = %v, want Forbidden %q", err, want)
			}
			if pod.Generation != 1 || pendingOf(t, pod) != nil {
				t.Fatalf("a refused resize changed the pod: generation %d, conditions %+v", pod.Generation, pod.Status.Conditions)
			}
		})
	}
}

// TestPodTerminatedRetry: from 1.36 a pod reaching a terminal phase retries
// the pending resizes at once (pod_terminated, pkg/kubelet/kubelet.go,
// HandlePodReconcile); a 1.35 kubelet waits for the periodic retry.
func TestPodTerminatedRetry(t *testing.T) {
	job := func() *v1.Pod {
		p := cpuPod("job", "2")
		p.Spec.RestartPolicy = v1.RestartPolicyNever
		return p
	}
	for _, tc := range []struct {
		profile Profile
		retried bool
	}{
		{Profile135, false},
		{Profile136, true},
		{Profile137, true},
	} {
		t.Run(string(tc.profile), func(t *testing.T) {
			cfg := smallNode()
			cfg.Profile = tc.profile
			tn := newTestNode(t, cfg)
			for _, p := range []*v1.Pod{job(), cpuPod("b", "1500m")} {
				if _, err := tn.node.AddPod(tn.ctx, p); err != nil {
					t.Fatal(err)
				}
			}
			mustResize(t, tn, "b", cpuPatch("2500m"))
			if pendingOf(t, tn.pod("b")) == nil {
				t.Fatal("the resize is not pending")
			}
			if err := tn.rt.Exit(tn.info("job").ContainerIDs["c"], 0, "Completed"); err != nil {
				t.Fatal(err)
			}
			if err := tn.node.Sync(tn.ctx); err != nil {
				t.Fatal(err)
			}
			if retried := pendingOf(t, tn.pod("b")) == nil; retried != tc.retried {
				t.Fatalf("resize admitted when the job finished: %v, want %v", retried, tc.retried)
			}
		})
	}
}

// TestCheckpointFormatByVersion: a 1.37 node writes its checkpoints with
// the EmptyDirVolumeLimits field its PodResourceInfo added
// (pkg/kubelet/allocation/state/state.go); a 1.36 node does not.
func TestCheckpointFormatByVersion(t *testing.T) {
	for _, tc := range []struct {
		profile Profile
		want    bool
	}{{Profile136, false}, {Profile137, true}} {
		tn := newTestNode(t, NodeConfig{Profile: tc.profile})
		if _, err := tn.node.AddPod(tn.ctx, cpuPod("p", "100m")); err != nil {
			t.Fatal(err)
		}
		for _, file := range []string{state.AllocatedStateFile, state.ActuatedStateFile} {
			blob, err := os.ReadFile(filepath.Join(tn.deps.CheckpointDir, file))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(blob), "EmptyDirVolumeLimits"); got != tc.want {
				t.Errorf("%s %s has EmptyDirVolumeLimits: %v, want %v", tc.profile, file, got, tc.want)
			}
		}
	}
}

package resize

import (
	"strings"

	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestProfiles pins where the behaviour profiles differ on the node side
// (reference §3.2, §1.8, §6): the 1.33 pod-only memory check and its
// message, and which resize events each version emits.
func TestProfiles(t *testing.T) {
	memPod := func() *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "default"}, Spec: v1.PodSpec{Containers: []v1.Container{{
			Name: "c", Image: "x", Resources: resources("100m", "200Mi", "100m", "200Mi"),
		}}}}
	}
	want134 := `cannot decrease memory limits: [attempting to set pod memory limit (104857600) below current usage (157286400), attempting to set container "c" memory limit (104857600) below current usage (157286400)]`
	for _, tc := range []struct {
		profile    Profile
		errMessage string
		events     []string // reasons emitted by the failing and then the completed resize
	}{
		{Profile134, want134, []string{"ResizeCompleted"}},
		{Profile135, want134, []string{"ResizeStarted", "ResizeError", "ResizeStarted", "ResizeCompleted"}},
	} {
		t.Run(string(tc.profile), func(t *testing.T) {
			tn := newTestNode(t, NodeConfig{Profile: tc.profile})
			if _, err := tn.node.AddPod(tn.ctx, memPod()); err != nil {
				t.Fatal(err)
			}
			if err := tn.rt.SetMemoryUsage(tn.info("m").ContainerIDs["c"], 150<<20); err != nil {
				t.Fatal(err)
			}
			mark := len(tn.cluster.Events())
			mustResize(t, tn, "m", `{"spec":{"containers":[{"name":"c","resources":{"requests":{"memory":"100Mi"},"limits":{"memory":"100Mi"}}}]}}`)
			p := tn.pod("m")
			if len(p.Status.Conditions) != 1 || p.Status.Conditions[0].Reason != v1.PodReasonError || p.Status.Conditions[0].Message != tc.errMessage {
				t.Fatalf("conditions = %+v\nwant Error %q", p.Status.Conditions, tc.errMessage)
			}
			mustResize(t, tn, "m", `{"spec":{"containers":[{"name":"c","resources":{"requests":{"memory":"180Mi"},"limits":{"memory":"180Mi"}}}]}}`)
			if c := tn.pod("m").Status.Conditions; len(c) != 0 {
				t.Fatalf("conditions after a feasible resize: %+v", c)
			}
			var reasons []string
			var completed string
			for _, e := range tn.cluster.Events()[mark:] {
				if strings.HasPrefix(e.Reason, "Resize") || e.Reason == "Killing" {
					reasons = append(reasons, e.Reason)
				}
				if e.Reason == ReasonResizeCompleted {
					completed = e.Message
				}
			}
			if strings.Join(reasons, ",") != strings.Join(tc.events, ",") {
				t.Fatalf("events = %v, want %v", reasons, tc.events)
			}
			if tc.profile == Profile134 && strings.Contains(completed, "generation") {
				t.Fatalf("1.34 completion message carries a generation: %s", completed)
			}
			if tc.profile == Profile135 && !strings.Contains(completed, `"generation":3`) {
				t.Fatalf("1.35 completion message: %s", completed)
			}
		})
	}
}

// TestContainerEventMessages: 1.35 dropped the container name from the
// Created and Started messages (kubernetes/kubernetes#134043).
func TestContainerEventMessages(t *testing.T) {
	for _, tc := range []struct {
		profile          Profile
		created, started string
	}{
		{Profile134, "Created container: c", "Started container c"},
		{Profile135, "Container created", "Container started"},
	} {
		tn := newTestNode(t, NodeConfig{Profile: tc.profile})
		if _, err := tn.node.AddPod(tn.ctx, cpuPod("p", "100m")); err != nil {
			t.Fatal(err)
		}
		want := []string{"Normal Created " + tc.created, "Normal Started " + tc.started}
		if got := tn.events(0); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s: events %q, want %q", tc.profile, got, want)
		}
	}
}

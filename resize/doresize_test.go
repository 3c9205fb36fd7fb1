package resize

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resizelet/resizelet/cgroup"
)

// TestDoPodResizeActionCases runs the kubelet's TestDoPodResizeAction
// cases D1-D7 (reference §4.3) on a node and counts the pod cgroup files
// written by the resize, on both cgroup versions.
func TestDoPodResizeActionCases(t *testing.T) {
	for _, tc := range []struct {
		name            string
		current, wanted v1.ResourceRequirements
		otherHasLimits  bool
		podWrites       int
		containerCalls  int
	}{
		{"D1 increase cpu and memory, pod limits", resources("100m", "100Mi", "100m", "100Mi"), resources("200m", "200Mi", "200m", "200Mi"), true, 3, 2},
		{"D2 increase cpu and memory, no pod limits", resources("100m", "100Mi", "100m", "100Mi"), resources("200m", "200Mi", "200m", "200Mi"), false, 1, 2},
		{"D3 increase requests only", resources("100m", "100Mi", "200m", "200Mi"), resources("150m", "150Mi", "200m", "200Mi"), false, 1, 2},
		{"D4 memory request, no limits", resources("100m", "100Mi", "", ""), resources("100m", "200Mi", "", ""), false, 0, 1},
		{"D5 cpu request, no limits", resources("100m", "100Mi", "", ""), resources("200m", "100Mi", "", ""), false, 1, 1},
		{"D6 add limits", resources("100m", "100Mi", "", ""), resources("100m", "100Mi", "100m", "100Mi"), false, 0, 2},
		{"D7 add limits and pod limits", resources("100m", "100Mi", "", ""), resources("100m", "100Mi", "100m", "100Mi"), true, 2, 2},
	} {
		for _, version := range []cgroup.Version{cgroup.V2, cgroup.V1} {
			t.Run(tc.name+"/"+version.String(), func(t *testing.T) {
				tn, j := newJournalNode(t, version)
				other := resources("50m", "50Mi", "", "")
				if tc.otherHasLimits {
					other = resources("50m", "50Mi", "100m", "100Mi") // requests below limits: the pod stays Burstable
				}
				pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}, Spec: v1.PodSpec{Containers: []v1.Container{
					{Name: "c", Image: "x", Resources: tc.current},
					{Name: "other", Image: "x", Resources: other},
				}}}
				if _, err := tn.node.AddPod(tn.ctx, pod); err != nil {
					t.Fatal(err)
				}
				podPath := tn.info("p").PodCgroup
				j.take()
				patch := fmt.Sprintf(`{"spec":{"containers":[{"name":"c","resources":%s}]}}`, resourcesJSON(tc.wanted))
				mustResize(t, tn, "p", patch)
				podWrites, calls := 0, 0
				for _, line := range j.take() {
					var path, file, rest string
					if n, _ := fmt.Sscanf(line, "W %s %s %s", &path, &file, &rest); n == 3 && path == podPath {
						podWrites++
					}
					if len(line) > 27 && line[:27] == "C UpdateContainerResources " {
						calls++
					}
				}
				if podWrites != tc.podWrites || calls != tc.containerCalls {
					t.Fatalf("pod cgroup writes = %d, UpdateContainerResources calls = %d; want %d and %d", podWrites, calls, tc.podWrites, tc.containerCalls)
				}
				if c := tn.pod("p").Status.Conditions; len(c) != 0 {
					t.Fatalf("conditions: %+v", c)
				}
			})
		}
	}
}

// resourcesJSON renders requirements as a patch fragment.
func resourcesJSON(r v1.ResourceRequirements) string {
	list := func(l v1.ResourceList) string {
		s := "{"
		for i, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
			q, ok := l[name]
			if !ok {
				continue
			}
			if i > 0 && len(s) > 1 {
				s += ","
			}
			s += fmt.Sprintf("%q:%q", name, q.String())
		}
		return s + "}"
	}
	return fmt.Sprintf(`{"requests":%s,"limits":%s}`, list(r.Requests), list(r.Limits))
}

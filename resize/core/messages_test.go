package core

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

// TestResizeMessages pins the event payloads of pkg/kubelet/events/
// resize.go: "<prefix>: <JSON>" with every init and regular container's
// full resources, empty lists left out, the generation, and an error only
// on Pending and Error events; the 1.34 ResizeCompleted had no generation.
func TestResizeMessages(t *testing.T) {
	pod := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c1", Resources: resources("1", "1Gi", "", "")}}}}
	withInit := pod.DeepCopy()
	withInit.Spec.InitContainers = []v1.Container{{Name: "s", Resources: resources("100m", "", "100m", "")}}
	for _, tc := range []struct {
		name, got, want string
	}{
		{"started", ResizeStartedMessage(pod, 1),
			`Pod resize started: {"containers":[{"name":"c1","resources":{"requests":{"cpu":"1","memory":"1Gi"}}}],"generation":1}`},
		{"infeasible", ResizePendingMessage(pod, "Infeasible", "Node didn't have enough capacity: memory, requested: 4718592000, capacity: 4294967296", 2),
			`Pod resize Infeasible: {"containers":[{"name":"c1","resources":{"requests":{"cpu":"1","memory":"1Gi"}}}],"generation":2,"error":"Node didn't have enough capacity: memory, requested: 4718592000, capacity: 4294967296"}`},
		{"error with an init container", ResizeErrorMessage(withInit, 3, "boom"),
			`Pod resize error: {"initContainers":[{"name":"s","resources":{"limits":{"cpu":"100m"},"requests":{"cpu":"100m"}}}],"containers":[{"name":"c1","resources":{"requests":{"cpu":"1","memory":"1Gi"}}}],"generation":3,"error":"boom"}`},
		{"completed", ResizeCompletedMessage(pod, 4),
			`Pod resize completed: {"containers":[{"name":"c1","resources":{"requests":{"cpu":"1","memory":"1Gi"}}}],"generation":4}`},
		{"completed as 1.34 sent it", dropGeneration(ResizeCompletedMessage(pod, 4)),
			`Pod resize completed: {"containers":[{"name":"c1","resources":{"requests":{"cpu":"1","memory":"1Gi"}}}]}`},
	} {
		if tc.got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, tc.got, tc.want)
		}
	}
}

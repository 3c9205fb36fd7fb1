package core

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/resizelet/resizelet/resize/profile"
)

// TestCountsUnallocatedPods: up to 1.36 admission counts every admitted,
// active pod, with its spec when it has no allocation; from 1.37 only
// those with an allocation (getAllocatedPods filters on
// HasPodAllocatedResources in pkg/kubelet/allocation/allocation_manager.go).
// Terminal pods never count.
func TestCountsUnallocatedPods(t *testing.T) {
	running := &v1.Pod{Status: v1.PodStatus{Phase: v1.PodRunning}}
	done := &v1.Pod{Status: v1.PodStatus{Phase: v1.PodSucceeded}}
	for _, tc := range []struct {
		v                       profile.Version
		withAlloc, withoutAlloc bool
	}{
		{profile.V135, true, true},
		{profile.V136, true, true},
		{profile.V137, true, false},
	} {
		c, err := New(NodeConfig{Profile: tc.v})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.counts(&podState{body: podBody{pod: running}, admitted: true, hasAllocated: true}); got != tc.withAlloc {
			t.Errorf("%s: a pod with an allocation counts %v, want %v", tc.v, got, tc.withAlloc)
		}
		if got := c.counts(&podState{body: podBody{pod: running}, admitted: true}); got != tc.withoutAlloc {
			t.Errorf("%s: a pod without an allocation counts %v, want %v", tc.v, got, tc.withoutAlloc)
		}
		if c.counts(&podState{body: podBody{pod: done}, admitted: true, hasAllocated: true}) {
			t.Errorf("%s: a terminal pod counts", tc.v)
		}
		if c.counts(&podState{body: podBody{pod: running}, hasAllocated: true}) {
			t.Errorf("%s: a pod not admitted counts", tc.v)
		}
	}
}

package allocation

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

// TestNodeLoadsFollowThePods: NodeLoads adds a pod to its node's load,
// counts a resize in progress at the larger of spec and status, moves a
// pod that comes back on another node, and takes a pod off when it
// terminates or is gone; a nil *NodeLoads keeps nothing.
func TestNodeLoadsFollowThePods(t *testing.T) {
	on := func(p *v1.Pod, node string) *v1.Pod {
		p.Spec.NodeName = node
		return p
	}
	var l NodeLoads[string]
	want := func(step, node string, w NodeLoad) {
		t.Helper()
		if got := l.Of(node); got != w {
			t.Errorf("%s: %s has %+v, want %+v", step, node, got, w)
		}
	}
	a := on(mkPod("a", ctr("c", rl("cpu=500m", "memory=1Gi"), nil)), "n1")
	l.Set("a", a)
	l.Set("b", on(mkPod("b", ctr("c", rl("cpu=250m", "memory=512Mi"), nil)), "n1"))
	want("two pods", "n1", NodeLoad{2, 750, 1536 << 20})

	// A resize down in progress: the status still shows the old requests.
	down := withStatus(resized(a, 0, rl("cpu=100m", "memory=1Gi"), nil), "c", rl("cpu=500m", "memory=1Gi"), nil)
	l.Set("a", down)
	want("a resize down in progress", "n1", NodeLoad{2, 750, 1536 << 20})
	l.Set("a", resized(a, 0, rl("cpu=100m", "memory=1Gi"), nil))
	want("the resize done", "n1", NodeLoad{2, 350, 1536 << 20})

	l.Set("a", on(mkPod("a", ctr("c", rl("cpu=1", "memory=1Gi"), nil)), "n2"))
	want("a on another node: off the first", "n1", NodeLoad{1, 250, 512 << 20})
	want("a on another node", "n2", NodeLoad{1, 1000, 1 << 30})

	done := on(mkPod("b", ctr("c", rl("cpu=250m", "memory=512Mi"), nil)), "n1")
	done.Status.Phase = v1.PodSucceeded
	l.Set("b", done)
	want("b succeeded", "n1", NodeLoad{})
	l.Set("a", nil)
	want("a gone", "n2", NodeLoad{})

	var none *NodeLoads[string]
	none.Set("a", a)
	if got := none.Of("n1"); got != (NodeLoad{}) {
		t.Errorf("a nil NodeLoads has %+v", got)
	}
}

package allocation

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time {
	return t0.Add(d)
}

func uids(items []PendingResize) []types.UID {
	out := make([]types.UID, len(items))
	for i, p := range items {
		out[i] = p.UID
	}
	return out
}

// kubeletTestPods are the seven pods of the kubelet's TestSortPendingResizes,
// in expected order.
func kubeletTestPods() []PendingResize {
	return []PendingResize{
		{UID: "0", Increasing: false},                                      // non-increasing (pod-level)
		{UID: "1", Increasing: false},                                      // non-increasing (container)
		{UID: "2", Increasing: true, Priority: 100},                        // highest priority
		{UID: "3", Increasing: true, Guaranteed: true},                     // the only Guaranteed pod
		{UID: "4", Increasing: true, DeferredAt: at(0)},                    // deferred longer
		{UID: "5", Increasing: true, DeferredAt: at(5 * time.Millisecond)}, // deferred later
		{UID: "6", Increasing: true},                                       // no condition yet
	}
}

// TestQueueKubeletOrder replays the kubelet's unit test: pushing the pods in
// order and in reverse order gives the same queue.
func TestQueueKubeletOrder(t *testing.T) {
	want := []types.UID{"0", "1", "2", "3", "4", "5", "6"}
	pods := kubeletTestPods()
	t.Run("forward", func(t *testing.T) {
		var q Queue
		for _, p := range pods {
			q.Push(p)
		}
		if diff := cmp.Diff(want, uids(q.Items())); diff != "" {
			t.Errorf("queue order mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("reverse", func(t *testing.T) {
		var q Queue
		for i := len(pods) - 1; i >= 0; i-- {
			q.Push(pods[i])
		}
		if diff := cmp.Diff(want, uids(q.Items())); diff != "" {
			t.Errorf("queue order mismatch (-want +got):\n%s", diff)
		}
	})
}

func TestLess(t *testing.T) {
	inc := func(uid string) PendingResize { return PendingResize{UID: types.UID(uid), Increasing: true} }
	tests := []struct {
		name string
		a, b PendingResize
		want bool
	}{
		{"non-increasing before increasing", PendingResize{UID: "a"}, inc("b"), true},
		{"increasing after non-increasing", inc("a"), PendingResize{UID: "b"}, false},
		{"quirk: non-increasing a is first even against non-increasing b", PendingResize{UID: "a", Priority: -5}, PendingResize{UID: "b", Priority: 100}, true},
		{"higher priority first", PendingResize{UID: "a", Increasing: true, Priority: 10}, inc("b"), true},
		{"lower priority after", inc("a"), PendingResize{UID: "b", Increasing: true, Priority: 10}, false},
		{"priority before QoS", PendingResize{UID: "a", Increasing: true, Priority: 1}, PendingResize{UID: "b", Increasing: true, Guaranteed: true}, true},
		{"Guaranteed first", PendingResize{UID: "a", Increasing: true, Guaranteed: true}, inc("b"), true},
		{"QoS before deferral time", PendingResize{UID: "a", Increasing: true, Guaranteed: true, DeferredAt: at(time.Hour)},
			PendingResize{UID: "b", Increasing: true, DeferredAt: at(0)}, true},
		{"older deferral first", PendingResize{UID: "a", Increasing: true, DeferredAt: at(0)}, PendingResize{UID: "b", Increasing: true, DeferredAt: at(time.Second)}, true},
		{"newer deferral after", PendingResize{UID: "a", Increasing: true, DeferredAt: at(time.Second)}, PendingResize{UID: "b", Increasing: true, DeferredAt: at(0)}, false},
		{"equal deferral is not less", PendingResize{UID: "a", Increasing: true, DeferredAt: at(0)}, PendingResize{UID: "b", Increasing: true, DeferredAt: at(0)}, false},
		{"a condition before none", PendingResize{UID: "a", Increasing: true, DeferredAt: at(time.Hour)}, inc("b"), true},
		{"no condition last", inc("a"), PendingResize{UID: "b", Increasing: true, DeferredAt: at(0)}, false},
		{"two without condition", inc("a"), inc("b"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Less(tc.a, tc.b); got != tc.want {
				t.Errorf("Less(%+v, %+v) = %v, want %v", tc.a, tc.b, got, tc.want)
			}
		})
	}
}

// TestQueueQuirkSwapsNonIncreasingPairs pins the observable effect of the
// comparator quirk: every insertion re-sorts, and each re-sort swaps two
// adjacent non-increasing resizes, as the kubelet's insertion sort does.
func TestQueueQuirkSwapsNonIncreasingPairs(t *testing.T) {
	var q Queue
	steps := []struct {
		push PendingResize
		want []types.UID
	}{
		{PendingResize{UID: "a"}, []types.UID{"a"}},
		{PendingResize{UID: "b"}, []types.UID{"b", "a"}},
		{PendingResize{UID: "c", Increasing: true}, []types.UID{"a", "b", "c"}},
		{PendingResize{UID: "d", Increasing: true}, []types.UID{"b", "a", "c", "d"}},
	}
	for i, s := range steps {
		q.Push(s.push)
		if diff := cmp.Diff(s.want, uids(q.Items())); diff != "" {
			t.Errorf("after push %d (%s) (-want +got):\n%s", i, s.push.UID, diff)
		}
	}
}

// TestQueueStableForEqualResizes pins that resizes equal on every key keep
// the order they were queued in, also beyond the 12 items where the
// kubelet's sort stops being an insertion sort.
func TestQueueStableForEqualResizes(t *testing.T) {
	for _, deferred := range []time.Time{{}, at(time.Minute)} {
		t.Run(fmt.Sprintf("deferredAt=%v", !deferred.IsZero()), func(t *testing.T) {
			var q Queue
			var want []types.UID
			for i := range 20 {
				uid := types.UID(fmt.Sprintf("p%02d", i))
				want = append(want, uid)
				q.Push(PendingResize{UID: uid, Increasing: true, Priority: 7, DeferredAt: deferred})
			}
			if diff := cmp.Diff(want, uids(q.Items())); diff != "" {
				t.Errorf("queue order mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestQueueOrderByDeferralTime checks that resizes that differ only in when
// they were deferred wait in that order, whatever the push order.
func TestQueueOrderByDeferralTime(t *testing.T) {
	var q Queue
	for _, i := range []int{5, 1, 4, 0, 3, 2} {
		q.Push(PendingResize{UID: types.UID(fmt.Sprint(i)), Increasing: true, DeferredAt: at(time.Duration(i) * time.Second)})
	}
	want := []types.UID{"0", "1", "2", "3", "4", "5"}
	if diff := cmp.Diff(want, uids(q.Items())); diff != "" {
		t.Errorf("queue order mismatch (-want +got):\n%s", diff)
	}
}

// TestQueuePushReplaces pins the kubelet's PushPendingResize: a UID already
// queued keeps its place and is replaced; its new record takes effect at the
// next insertion.
func TestQueuePushReplaces(t *testing.T) {
	var q Queue
	q.Push(PendingResize{UID: "a", Increasing: true, DeferredAt: at(0)})
	q.Push(PendingResize{UID: "b", Increasing: true, DeferredAt: at(time.Second)})
	q.Push(PendingResize{UID: "b", Increasing: true, Priority: 50})
	if q.Len() != 2 {
		t.Fatalf("Len() = %d after replacing, want 2", q.Len())
	}
	items := q.Items()
	if diff := cmp.Diff([]types.UID{"a", "b"}, uids(items)); diff != "" {
		t.Errorf("order after replacing (-want +got):\n%s", diff)
	}
	if items[1].Priority != 50 || !items[1].DeferredAt.IsZero() {
		t.Errorf("replaced record = %+v, want priority 50 and no DeferredAt", items[1])
	}
	q.Push(PendingResize{UID: "c", Increasing: true})
	if diff := cmp.Diff([]types.UID{"b", "a", "c"}, uids(q.Items())); diff != "" {
		t.Errorf("order after the next insertion (-want +got):\n%s", diff)
	}
}

func TestQueueRemoveHasLen(t *testing.T) {
	var q Queue
	for _, uid := range []types.UID{"a", "b", "c"} {
		q.Push(PendingResize{UID: uid, Increasing: true})
	}
	q.Remove("b")
	q.Remove("missing")
	if diff := cmp.Diff([]types.UID{"a", "c"}, uids(q.Items())); diff != "" {
		t.Errorf("after Remove (-want +got):\n%s", diff)
	}
	if q.Len() != 2 || q.Has("b") || !q.Has("a") {
		t.Errorf("Len() = %d, Has(b) = %v, Has(a) = %v; want 2, false, true", q.Len(), q.Has("b"), q.Has("a"))
	}
}

// TestQueueItemsAreCopies checks that the returned items do not alias the
// queue's, and that AppendItems and Clear keep the queue's order and
// memory.
func TestQueueItemsAreCopies(t *testing.T) {
	var q Queue
	q.Push(PendingResize{UID: "a", Increasing: true, DeferredAt: t0})
	items := q.Items()
	items[0].DeferredAt = t0.Add(2 * time.Hour)
	items[0].Priority = 9
	got := q.Items()[0]
	if !got.DeferredAt.Equal(t0) || got.Priority != 0 {
		t.Errorf("queued record = %+v, want the pushed one", got)
	}
	q.Push(PendingResize{UID: "b", Increasing: false})
	buf := q.AppendItems(make([]PendingResize, 0, 4))
	if len(buf) != 2 || buf[0].UID != "b" || buf[1].UID != "a" {
		t.Errorf("AppendItems = %+v, want b (not increasing) then a", buf)
	}
	q.Clear()
	if q.Len() != 0 || q.Has("a") {
		t.Errorf("after Clear the queue holds %+v", q.Items())
	}
}

func TestIsResizeIncreasing(t *testing.T) {
	base := mkPod("p",
		ctr("c1", rl("cpu=1", "memory=1Gi"), nil),
		ctr("c2", rl("cpu=1", "memory=1Gi"), nil),
		ctr("c3", v1.ResourceList{}, nil),
		ctr("c4", nil, nil))
	with := func(changes map[int]v1.ResourceList) *v1.Pod {
		p := base.DeepCopy()
		for i, r := range changes {
			p.Spec.Containers[i].Resources.Requests = r
		}
		return p
	}
	podLevel := func(p *v1.Pod, r v1.ResourceList) *v1.Pod {
		p = p.DeepCopy()
		p.Spec.Resources = &v1.ResourceRequirements{Requests: r}
		return p
	}
	plBase := podLevel(base, rl("cpu=2500m", "memory=2500Mi"))
	tests := []struct {
		name               string
		allocated, desired *v1.Pod
		podLevel           bool
		want               bool
	}{
		{"increase, one container", base, with(map[int]v1.ResourceList{0: rl("cpu=1500m", "memory=1500Mi")}), false, true},
		{"decrease, one container", base, with(map[int]v1.ResourceList{0: rl("cpu=500m", "memory=500Mi")}), false, false},
		{"cpu up, memory down", base, with(map[int]v1.ResourceList{0: rl("cpu=1500m", "memory=500Mi")}), false, true},
		{"memory up, cpu down", base, with(map[int]v1.ResourceList{0: rl("cpu=500m", "memory=1500Mi")}), false, true},
		{"net neutral across containers", base, with(map[int]v1.ResourceList{
			0: rl("cpu=1500m", "memory=1536Mi"), 1: rl("cpu=500m", "memory=512Mi")}), false, false},
		{"remove requests", base, with(map[int]v1.ResourceList{0: nil}), false, false},
		{"add requests", base, with(map[int]v1.ResourceList{2: rl("cpu=1", "memory=1Gi")}), false, true},
		{"pod-level cpu up", plBase, podLevel(base, rl("cpu=3", "memory=2500Mi")), true, true},
		{"pod-level memory down", plBase, podLevel(base, rl("cpu=2500m", "memory=2000Mi")), true, false},
		{"pod-level same, container up", plBase, podLevel(with(map[int]v1.ResourceList{0: rl("cpu=1500m", "memory=1Gi")}), rl("cpu=2500m", "memory=2500Mi")), true, false},
		{"pod-level ignored without the gate", plBase, podLevel(base, rl("cpu=3", "memory=2500Mi")), false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsResizeIncreasing(tc.allocated, tc.desired, tc.podLevel); got != tc.want {
				t.Errorf("IsResizeIncreasing() = %v, want %v", got, tc.want)
			}
		})
	}
}

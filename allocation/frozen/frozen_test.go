package frozen

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resizelet/resizelet/allocation"
)

func rl(cpu, mem string) v1.ResourceList {
	return v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse(mem)}
}

// richPod has resources in several forms and times of every kind: UTC
// with nanoseconds, local, the zero time and the Unix epoch.
func richPod() *v1.Pod {
	at := time.Date(2026, 1, 1, 0, 0, 1, 123456789, time.UTC)
	deleted := metav1.NewTime(at.Add(time.Minute).Local())
	start := metav1.NewTime(time.Unix(0, 0).UTC())
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "p", Namespace: "default", UID: "u-1", Generation: 3,
			CreationTimestamp: metav1.NewTime(at),
			DeletionTimestamp: &deleted,
			Labels:            map[string]string{"app": "x"},
		},
		Spec: v1.PodSpec{Containers: []v1.Container{{
			Name: "c1", Image: "pause",
			Resources:    v1.ResourceRequirements{Requests: rl("100m", "64Mi"), Limits: rl("1", "1Gi")},
			ResizePolicy: []v1.ContainerResizePolicy{{ResourceName: v1.ResourceCPU, RestartPolicy: v1.NotRequired}},
		}}},
		Status: v1.PodStatus{
			Phase:     v1.PodRunning,
			QOSClass:  v1.PodQOSBurstable,
			StartTime: &start,
			Conditions: []v1.PodCondition{{
				Type: v1.PodResizeInProgress, Status: v1.ConditionTrue,
				LastTransitionTime: metav1.NewTime(at.Add(1500 * time.Millisecond)),
			}},
			ContainerStatuses: []v1.ContainerStatus{{
				Name:                 "c1",
				State:                v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(at)}},
				LastTerminationState: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 137, StartedAt: metav1.NewTime(at.Add(-time.Hour)), FinishedAt: metav1.NewTime(at.Add(-time.Second))}},
				AllocatedResources:   rl("100m", "64Mi"),
				Resources:            &v1.ResourceRequirements{Requests: rl("100m", "64Mi"), Limits: rl("1", "1Gi")},
				RestartCount:         2,
			}},
		},
	}
}

func TestPodRoundTrip(t *testing.T) {
	p := richPod()
	f, ok := FreezePod(p)
	if !ok {
		t.Fatal("FreezePod refused a pod with UTC and local times")
	}
	got := f.Thaw()
	if !equality.Semantic.DeepEqual(got, p) {
		t.Fatalf("thawed pod differs:\n got %+v\nwant %+v", got, p)
	}
	a, _ := json.Marshal(p)
	b, _ := json.Marshal(got)
	if string(a) != string(b) {
		t.Errorf("JSON differs:\n got %s\nwant %s", b, a)
	}
	var want, have []metav1.Time
	eachPodTime(p, func(t *metav1.Time) { want = append(want, *t) })
	eachPodTime(got, func(t *metav1.Time) { have = append(have, *t) })
	if len(want) != len(have) {
		t.Fatalf("%d times thawed, want %d", len(have), len(want))
	}
	for i := range want {
		// Exact: nanoseconds and location, which protobuf alone loses.
		if !reflect.DeepEqual(want[i], have[i]) {
			t.Errorf("time %d: got %v (%v), want %v (%v)", i, have[i], have[i].Location(), want[i], want[i].Location())
		}
	}
	if got == p || &got.Spec.Containers[0] == &p.Spec.Containers[0] {
		t.Error("Thaw shares memory with the pod frozen")
	}
}

func TestFreezeSharesEqualPods(t *testing.T) {
	a, _ := FreezePod(richPod())
	b, _ := FreezePod(richPod())
	if a != b {
		t.Error("two equal pods froze to different handles")
	}
	p := richPod()
	p.Status.ContainerStatuses[0].RestartCount = 3
	c, _ := FreezePod(p)
	if c == a {
		t.Error("different pods froze to one handle")
	}
	if a.Size() == 0 || a.Size() > 2048 {
		t.Errorf("frozen pod takes %d bytes", a.Size())
	}
}

// TestFreezeCompresses checks that a frozen pod is smaller than its
// protobuf encoding: a pod with a few containers repeats its resources
// and images, which S2 finds.
func TestFreezeCompresses(t *testing.T) {
	p := richPod()
	for _, name := range []string{"c2", "c3"} {
		c := p.Spec.Containers[0]
		c.Name = name
		p.Spec.Containers = append(p.Spec.Containers, c)
		cs := p.Status.ContainerStatuses[0]
		cs.Name = name
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, cs)
	}
	f, _ := FreezePod(p)
	if f.Size()*3 > p.Size()*2 {
		t.Errorf("frozen pod takes %d bytes, its encoding %d: want at most two thirds", f.Size(), p.Size())
	}
	if got := f.Thaw(); !equality.Semantic.DeepEqual(got, p) {
		t.Errorf("thawed pod differs:\n got %+v\nwant %+v", got, p)
	}
}

// TestRefreeze checks that refreezing a thawed pod gives the handle it
// was thawed from when nothing changed, and a new one that thaws to the
// change when something did.
func TestRefreeze(t *testing.T) {
	f, _ := FreezePod(richPod())
	p := f.Thaw()
	if g, ok := f.Refreeze(p); !ok || g != f {
		t.Errorf("refreezing an unchanged pod gave %v (ok %v), want the handle it came from", g, ok)
	}
	p.Status.ContainerStatuses[0].RestartCount++
	g, ok := f.Refreeze(p)
	if !ok || g == f {
		t.Fatalf("refreezing a changed pod gave the old handle (ok %v)", ok)
	}
	if got := g.Thaw(); got.Status.ContainerStatuses[0].RestartCount != p.Status.ContainerStatuses[0].RestartCount {
		t.Errorf("the new handle thaws to restart count %d, want %d", got.Status.ContainerStatuses[0].RestartCount, p.Status.ContainerStatuses[0].RestartCount)
	}
	if h, _ := FreezePod(p); h != g {
		t.Error("Refreeze and FreezePod of one pod differ")
	}
}

// TestFreezeConcurrently freezes and thaws from several goroutines at
// once, which share the package's scratch space (run with -race).
func TestFreezeConcurrently(t *testing.T) {
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				p := richPod()
				p.Name = fmt.Sprintf("p-%d-%d", g, i)
				f, ok := FreezePod(p)
				if !ok {
					t.Error("FreezePod refused a pod")
					return
				}
				if got := f.Thaw(); got.Name != p.Name || !equality.Semantic.DeepEqual(got, p) {
					t.Errorf("thawed %s differs from what was frozen", p.Name)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestFreezeRefusesOtherLocations(t *testing.T) {
	p := richPod()
	p.CreationTimestamp = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("X", 3600)))
	if _, ok := FreezePod(p); ok {
		t.Error("FreezePod accepted a time in a location it cannot restore")
	}
}

// TestEachPodTimeVisitsEveryTime fills every metav1.Time a v1.Pod can hold
// (found by reflection, one element in every list and every pointer set)
// and checks that eachPodTime visits each of them.
func TestEachPodTimeVisitsEveryTime(t *testing.T) {
	p := &v1.Pod{}
	n := 0
	fill(reflect.ValueOf(p).Elem(), &n, map[reflect.Type]bool{})
	if n < 20 {
		t.Fatalf("reflection found only %d times", n)
	}
	visited := 0
	eachPodTime(p, func(*metav1.Time) { visited++ })
	if visited != n {
		t.Errorf("eachPodTime visits %d times, the pod holds %d", visited, n)
	}
	f, ok := FreezePod(p)
	if !ok {
		t.Fatal("FreezePod refused the filled pod")
	}
	seen := map[int64]bool{}
	eachPodTime(f.Thaw(), func(tm *metav1.Time) { seen[tm.UnixNano()] = true })
	if len(seen) != n {
		t.Errorf("%d distinct times after a round trip, want %d", len(seen), n)
	}
}

var timeType = reflect.TypeOf(metav1.Time{})

// fill sets every time reachable from v to a distinct value, making one
// element of every slice and setting every pointer on the way.
func fill(v reflect.Value, n *int, seen map[reflect.Type]bool) {
	if v.Type() == timeType {
		*n++
		v.Set(reflect.ValueOf(metav1.NewTime(time.Date(2026, 1, 1, 0, 0, *n, *n, time.UTC))))
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if seen[v.Type().Elem()] {
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), n, seen)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), n, seen)
	case reflect.Struct:
		if seen[v.Type()] {
			return
		}
		seen[v.Type()] = true
		defer delete(seen, v.Type())
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), n, seen)
			}
		}
	}
}

func TestResourcesRoundTrip(t *testing.T) {
	for name, r := range map[string]allocation.PodResources{
		"none":      {},
		"empty":     {ContainerResources: map[string]v1.ResourceRequirements{}},
		"two":       {ContainerResources: map[string]v1.ResourceRequirements{"b": {Requests: rl("1", "1Gi")}, "a": {Requests: rl("250m", "128Mi"), Limits: rl("500m", "256Mi")}}},
		"pod-level": {ContainerResources: map[string]v1.ResourceRequirements{"a": {}}, PodLevelResources: &v1.ResourceRequirements{Limits: rl("2", "2Gi")}},
	} {
		got := FreezeResources(r).Thaw()
		if !equality.Semantic.DeepEqual(got, r) || (got.ContainerResources == nil) != (r.ContainerResources == nil) || (got.PodLevelResources == nil) != (r.PodLevelResources == nil) {
			t.Errorf("%s: thawed %+v, want %+v", name, got, r)
		}
	}
	a := FreezeResources(allocation.PodResources{ContainerResources: map[string]v1.ResourceRequirements{"a": {Requests: rl("1", "1Gi")}, "b": {}}})
	b := FreezeResources(allocation.PodResources{ContainerResources: map[string]v1.ResourceRequirements{"b": {}, "a": {Requests: rl("1", "1Gi")}}})
	if a != b {
		t.Error("equal records froze to different handles")
	}
}

func TestRecentEvictsLeastRecentlyUsed(t *testing.T) {
	r := Recent[string]{Limit: 2}
	for _, k := range []string{"a", "b", "c", "a", "d"} {
		r.Touch(k)
	}
	var frozen []string
	r.Evict(func(k string) bool {
		if k == "b" {
			return false // busy: stays thawed
		}
		frozen = append(frozen, k)
		return true
	})
	// Used: b (busy), c, a, d; two must go, oldest first, b skipped.
	if !reflect.DeepEqual(frozen, []string{"c", "a"}) {
		t.Errorf("froze %v, want [c a]", frozen)
	}
	if r.Len() != 2 {
		t.Errorf("%d thawed after Evict, want 2", r.Len())
	}
	r.Forget("b")
	r.Evict(func(string) bool { t.Error("Evict froze under the limit"); return true })
}

// TestRecentRepeatedTouch holds the shortcut for touching the last key
// again: it keeps that key the most recent, and a key forgotten or frozen
// in between is recorded anew.
func TestRecentRepeatedTouch(t *testing.T) {
	r := Recent[string]{Limit: 1}
	for _, k := range []string{"a", "b", "a", "a"} {
		r.Touch(k)
	}
	var frozen []string
	freeze := func(k string) bool { frozen = append(frozen, k); return true }
	r.Evict(freeze)
	if !reflect.DeepEqual(frozen, []string{"b"}) {
		t.Errorf("froze %v, want [b]", frozen)
	}
	// a is still the last touched; forgetting it must not let a later
	// Touch skip recording it.
	r.Forget("a")
	r.Touch("a")
	if r.Len() != 1 {
		t.Errorf("%d thawed after Forget and Touch, want 1", r.Len())
	}
	// Frozen by Evict while last: touched again, it counts again.
	r.Touch("c")
	frozen = nil
	r.Evict(freeze) // freezes a
	r.Touch("c")
	r.Limit = 0
	frozen = nil
	r.Evict(freeze)
	if !reflect.DeepEqual(frozen, []string{"c"}) || r.Len() != 0 {
		t.Errorf("froze %v leaving %d, want [c] leaving 0", frozen, r.Len())
	}
	r.Touch("c")
	if r.Len() != 1 {
		t.Errorf("%d thawed after touching a frozen last key, want 1", r.Len())
	}
}

// FuzzFreezeRoundTrip freezes pods built from fuzzed names, amounts and
// times: each thaws to what was frozen (the same JSON), refreezing the
// thawed pod gives the same handle, and a pod changed after thawing gets
// a handle of its own that thaws to the change.
func FuzzFreezeRoundTrip(f *testing.F) {
	f.Add("c1", "100m", "128Mi", int64(1767225601), uint32(123456789), true, int32(0))
	f.Add("1e1001", "1.5", "1e3", int64(-1), uint32(0), false, int32(7))
	f.Add("", "0", "", int64(0), uint32(999999999), true, int32(-1))
	f.Fuzz(func(t *testing.T, name, cpu, mem string, sec int64, nsec uint32, utc bool, restarts int32) {
		p := richPod()
		c := &p.Spec.Containers[0]
		c.Name = name
		for list, text := range map[v1.ResourceName]string{v1.ResourceCPU: cpu, v1.ResourceMemory: mem} {
			if q, err := resource.ParseQuantity(text); err == nil {
				c.Resources.Requests[list] = q
			}
		}
		at := time.Unix(sec, int64(nsec%1e9))
		if utc {
			at = at.UTC()
		}
		p.CreationTimestamp = metav1.NewTime(at)
		p.Status.ContainerStatuses[0].RestartCount = restarts
		fz, ok := FreezePod(p)
		if !ok {
			t.Fatal("FreezePod refused a pod with UTC and local times")
		}
		got := fz.Thaw()
		want, _ := json.Marshal(p)
		have, _ := json.Marshal(got)
		if string(want) != string(have) {
			t.Fatalf("thawed pod differs:\n got %s\nwant %s", have, want)
		}
		if ct := got.CreationTimestamp.Time; !ct.Equal(at) || ct.Location() != at.Location() {
			t.Fatalf("creation time thawed as %v (%v), want %v (%v)", ct, ct.Location(), at, at.Location())
		}
		if again, _ := fz.Refreeze(got); again != fz {
			t.Fatal("refreezing the thawed pod gave a new handle")
		}
		got.Status.ContainerStatuses[0].RestartCount = restarts + 1
		changed, _ := fz.Refreeze(got)
		if changed == fz || changed.Thaw().Status.ContainerStatuses[0].RestartCount != restarts+1 {
			t.Fatal("a pod changed after thawing refroze to the old handle or lost the change")
		}
	})
}

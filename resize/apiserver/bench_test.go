package apiserver

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// runningPod is the pod of the API resize validation benchmark (README,
// Performance): one running Burstable container, cpu 200m limit 400m, as
// the API server stores it after the kubelet's status writes.
func runningPod() *v1.Pod {
	p := testPod(ctr("app", "cpu=200m,memory=128Mi", "cpu=400m,memory=256Mi"))
	p.UID = "0b1c4a2e-5d7f-4c3b-9a1e-2f6d8c0b7a51"
	p.Generation = 1
	p.CreationTimestamp = metav1.Unix(1767225600, 0)
	p = stored(p)
	p.Status.Phase = v1.PodRunning
	p.Status.ObservedGeneration = 1
	p.Status.ContainerStatuses = []v1.ContainerStatus{{
		Name: "app", Image: "pause", ImageID: "pause", ContainerID: "containerd://0001", Ready: true,
		State:              v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.Unix(1767225601, 0)}},
		AllocatedResources: rl("cpu=200m,memory=128Mi"),
		Resources:          &v1.ResourceRequirements{Requests: rl("cpu=200m,memory=128Mi"), Limits: rl("cpu=400m,memory=256Mi")},
	}}
	return p
}

// The benchmark's resize, cpu 200m/400m to 300m/600m, in every form the
// resize subresource takes.
var (
	benchRequest = ResizeRequest{Containers: []ContainerResize{{Name: "app", Requests: Amounts{MilliCPU: 300, HasCPU: true}, Limits: Amounts{MilliCPU: 600, HasCPU: true}}}}
	benchPatch   = []byte(`{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"300m"},"limits":{"cpu":"600m"}}}]}}`)
	// benchStrategic is outside the narrow form (the directive kubectl
	// apply sends), so it takes the strategic merge.
	benchStrategic = []byte(`{"spec":{"$setElementOrder/containers":[{"name":"app"}],"containers":[{"name":"app","resources":{"requests":{"cpu":"300m"},"limits":{"cpu":"600m"}}}]}}`)
	benchMerge     = []byte(`{"spec":{"containers":[{"name":"app","image":"pause","resources":{"requests":{"cpu":"300m","memory":"128Mi"},"limits":{"cpu":"600m","memory":"256Mi"}}}]}}`)
	// benchJSON's "replace"s are outside the narrow form of a JSON patch
	// (readNarrowJSONPatch), so it takes the json-patch library;
	// benchJSONAdd, the VPA updater's "add"s, is read as an edit.
	benchJSON    = []byte(`[{"op":"replace","path":"/spec/containers/0/resources/requests/cpu","value":"300m"},{"op":"replace","path":"/spec/containers/0/resources/limits/cpu","value":"600m"}]`)
	benchJSONAdd = []byte(`[{"op":"add","path":"/spec/containers/0/resources/requests/cpu","value":"300m"},{"op":"add","path":"/spec/containers/0/resources/limits/cpu","value":"600m"}]`)
)

// benchPaths are the ways of BenchmarkResizePatch, each the same resize.
var benchPaths = []struct {
	name  string
	apply func(old *v1.Pod) (*v1.Pod, error)
}{
	{"typed", func(old *v1.Pod) (*v1.Pod, error) { return ApplyResizeRequest(old, benchRequest, ResizeOptions{}) }},
	{"narrow", func(old *v1.Pod) (*v1.Pod, error) { return ApplyResize(old, benchPatch, ResizeOptions{}) }},
	{"strategic", func(old *v1.Pod) (*v1.Pod, error) { return ApplyResize(old, benchStrategic, ResizeOptions{}) }},
	{"merge", func(old *v1.Pod) (*v1.Pod, error) {
		return ApplyResizePatch(old, MergePatch, benchMerge, ResizeOptions{})
	}},
	{"json", func(old *v1.Pod) (*v1.Pod, error) {
		return ApplyResizePatch(old, JSONPatch, benchJSON, ResizeOptions{})
	}},
	{"json-narrow", func(old *v1.Pod) (*v1.Pod, error) {
		return ApplyResizePatch(old, JSONPatch, benchJSONAdd, ResizeOptions{})
	}},
}

// BenchmarkResizePatch is the API server's part of a resize, as the
// performance reference measures it (README, Performance): the resize of
// the running one-container pod, with defaulting and validation, by each
// path: a typed request, a patch of the narrow form, a strategic merge
// patch outside it, a JSON merge patch, a JSON patch outside the narrow
// form and one in it.
func BenchmarkResizePatch(b *testing.B) {
	for _, p := range benchPaths {
		b.Run("path="+p.name, func(b *testing.B) {
			old := runningPod()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.apply(old); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestBenchPathsResizeAlike: every path of BenchmarkResizePatch gives the
// same pod, with the new cpu amounts, so the benchmark compares like with
// like.
func TestBenchPathsResizeAlike(t *testing.T) {
	var first *v1.Pod
	for _, p := range benchPaths {
		got, err := p.apply(runningPod())
		if err != nil {
			t.Fatalf("path %s: %v", p.name, err)
		}
		if q := got.Spec.Containers[0].Resources.Limits[v1.ResourceCPU]; q.MilliValue() != 600 {
			t.Fatalf("path %s: cpu limit %s, want 600m", p.name, q.String())
		}
		if first == nil {
			first = got
		} else if a, b := mustJSON(got), mustJSON(first); string(a) != string(b) {
			t.Fatalf("path %s gives\n%s\npath %s gives\n%s", p.name, a, benchPaths[0].name, b)
		}
	}
	if _, _, _, ok := readNarrowPatch(benchStrategic, nil); ok {
		t.Fatal("the strategic path's patch is of the narrow form")
	}
	if _, ok := readNarrowJSONPatch(runningPod(), benchJSON, nil); ok {
		t.Fatal("the json path's patch is of the narrow form")
	}
	if _, ok := readNarrowJSONPatch(runningPod(), benchJSONAdd, nil); !ok {
		t.Fatal("the json-narrow path's patch is not of the narrow form")
	}
	if got := string(benchRequest.Patch()); got != string(benchPatch) {
		t.Fatalf("benchRequest.Patch() = %s, want %s", got, benchPatch)
	}
}

// BenchmarkClusterResizeRequest is the API server's whole part of
// resize's BenchmarkResizeCycleTyped in one place: the typed resize of
// the benchmark world's target pod (package benchworld; c1 200m/128Mi
// limits 400m/256Mi to 300m/192Mi limits 600m/384Mi and back, c2
// untouched) through the cluster's resize subresource, then the status
// write the kubelet makes after it.
func BenchmarkClusterResizeRequest(b *testing.B) {
	c := NewCluster(ClusterOptions{})
	p := testPod(ctr("c1", "cpu=200m,memory=128Mi", "cpu=400m,memory=256Mi"), ctr("c2", "cpu=100m,memory=64Mi", "cpu=200m,memory=128Mi"))
	p.Name = "target"
	created, err := c.CreatePod(b.Context(), p)
	if err != nil {
		b.Fatal(err)
	}
	status := created.Status
	status.Phase = v1.PodRunning
	for _, ct := range created.Spec.Containers {
		status.ContainerStatuses = append(status.ContainerStatuses, v1.ContainerStatus{
			Name: ct.Name, Image: "pause", ImageID: "pause", Ready: true,
			State:              v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.Unix(1767225601, 0)}},
			AllocatedResources: ct.Resources.Requests,
			Resources:          ct.Resources.DeepCopy(),
		})
	}
	if err := c.UpdatePodStatus(b.Context(), "default", "target", created.UID, status); err != nil {
		b.Fatal(err)
	}
	requests := [2]ResizeRequest{
		{Containers: []ContainerResize{{Name: "c1", Requests: CPUMemory(300, 192<<20), Limits: CPUMemory(600, 384<<20)}}},
		{Containers: []ContainerResize{{Name: "c1", Requests: CPUMemory(200, 128<<20), Limits: CPUMemory(400, 256<<20)}}},
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := c.ResizePodRequest(b.Context(), "default", "target", requests[i%2]); err != nil {
			b.Fatal(err)
		}
		if err := c.UpdatePodStatus(b.Context(), "default", "target", created.UID, status); err != nil {
			b.Fatal(err)
		}
	}
}

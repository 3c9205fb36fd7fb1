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

// The benchmark's resize: cpu 200m/400m to 300m/600m.
var (
	benchPatch   = []byte(`{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"300m"},"limits":{"cpu":"600m"}}}]}}`)
	benchRequest = ResizeRequest{Containers: []ContainerResize{{Name: "app", Requests: Amounts{MilliCPU: 300, HasCPU: true}, Limits: Amounts{MilliCPU: 600, HasCPU: true}}}}
)

// BenchmarkApplyResize is the API server's part of a resize, as the
// kubelet's figures measure it: the strategic merge patch of a running
// one-container pod's resize, defaulting, and the resize validation.
func BenchmarkApplyResize(b *testing.B) {
	old := runningPod()
	o := ResizeOptions{}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ApplyResize(old, benchPatch, o); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApplyResizeRequest is the same resize as a typed request.
func BenchmarkApplyResizeRequest(b *testing.B) {
	old := runningPod()
	o := ResizeOptions{}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ApplyResizeRequest(old, benchRequest, o); err != nil {
			b.Fatal(err)
		}
	}
}

// TestBenchRequestIsBenchPatch: the two benchmarks resize alike.
func TestBenchRequestIsBenchPatch(t *testing.T) {
	if got := string(benchRequest.Patch()); got != string(benchPatch) {
		t.Fatalf("benchRequest.Patch() = %s, want %s", got, benchPatch)
	}
}

// BenchmarkClusterResizeRequest is the API server's whole part of
// resize's BenchmarkResizeCycleTyped in one place: the typed resize of
// the anchor world's target pod (README, Performance; c1 200m/128Mi
// limits 400m/256Mi to 300m/192Mi limits 600m/384Mi and back, c2
// untouched) through the cluster's resize subresource, then the status
// write the kubelet makes after it.
func BenchmarkClusterResizeRequest(b *testing.B) {
	c := NewCluster(ClusterOptions{})
	p := testPod(ctr("c1", "cpu=200m,memory=128Mi", "cpu=400m,memory=256Mi"), ctr("c2", "cpu=100m,memory=64Mi", "cpu=200m,memory=128Mi"))
	p.Name = "target"
	created, err := c.CreatePod(p)
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
	if err := c.UpdatePodStatus("default", "target", created.UID, status); err != nil {
		b.Fatal(err)
	}
	requests := [2]ResizeRequest{
		{Containers: []ContainerResize{{Name: "c1", Requests: CPUMemory(300, 192<<20), Limits: CPUMemory(600, 384<<20)}}},
		{Containers: []ContainerResize{{Name: "c1", Requests: CPUMemory(200, 128<<20), Limits: CPUMemory(400, 256<<20)}}},
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := c.ResizePodRequest("default", "target", requests[i%2]); err != nil {
			b.Fatal(err)
		}
		if err := c.UpdatePodStatus("default", "target", created.UID, status); err != nil {
			b.Fatal(err)
		}
	}
}

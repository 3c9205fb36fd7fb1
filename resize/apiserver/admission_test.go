package apiserver

import (
	"errors"
	"net/http"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resizelet/resizelet/resize/profile"
)

// admissionPod is a running Burstable pod with one container at 500m/1Gi,
// as the cluster stores it.
func admissionPod() *v1.Pod {
	return stored(&v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", Generation: 1},
		Spec: v1.PodSpec{Containers: []v1.Container{{
			Name: "c", Image: "x",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
				v1.ResourceCPU: resource.MustParse("500m"), v1.ResourceMemory: resource.MustParse("1Gi"),
			}},
		}}},
	})
}

// TestAdmitResize pins the PodResizeValidator admission plugin
// (plugin/pkg/admission/podresize/admission.go, Validate and
// validatePodResize): from 1.36 only, on bound pods whose generation
// changed, linux nodes first and then the node's allocatable, with the
// plugin's messages inside the API server's Forbidden text.
func TestAdmitResize(t *testing.T) {
	node := &NodeInfo{Name: "node-1", OS: "linux", Allocatable: v1.ResourceList{
		v1.ResourceCPU: resource.MustParse("16"), v1.ResourceMemory: resource.MustParse("64Gi"), v1.ResourcePods: resource.MustParse("110"),
	}}
	windows := &NodeInfo{Name: "node-1", OS: "windows", Allocatable: node.Allocatable}
	noLabel := &NodeInfo{Name: "node-1", Allocatable: node.Allocatable}
	cases := []struct {
		name      string
		version   profile.Version
		patch     string
		node      *NodeInfo
		want      string // the error text, "" for admitted
		wantCause metav1.CauseType
	}{
		{name: "1.35 has no such plugin", version: profile.V135, node: node,
			patch: `{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1000"}}}]}}`},
		{name: "fits", version: profile.V136, node: node,
			patch: `{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"16"}}}]}}`},
		{name: "cpu above allocatable", version: profile.V136, node: node,
			patch:     `{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1000"}}}]}}`,
			want:      `pods "p" is forbidden: node didn't have enough allocatable resources: cpu, requested: 1000000, allocatable: 16000`,
			wantCause: CauseNodeCapacity},
		{name: "memory above allocatable", version: profile.V137, node: node,
			patch:     `{"spec":{"containers":[{"name":"c","resources":{"requests":{"memory":"100Gi"}}}]}}`,
			want:      `pods "p" is forbidden: node didn't have enough allocatable resources: memory, requested: 107374182400, allocatable: 68719476736`,
			wantCause: CauseNodeCapacity},
		{name: "both, cpu first", version: profile.V136, node: node,
			patch:     `{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"17","memory":"65Gi"}}}]}}`,
			want:      `pods "p" is forbidden: node didn't have enough allocatable resources: cpu, requested: 17000, allocatable: 16000; memory, requested: 69793218560, allocatable: 68719476736`,
			wantCause: CauseNodeCapacity},
		{name: "windows node before allocatable", version: profile.V136, node: windows,
			patch:     `{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1000"}}}]}}`,
			want:      `pods "p" is forbidden: pod resize is only supported on linux nodes, node "node-1" is "windows"`,
			wantCause: CauseUnsupportedPlatform},
		{name: "a node without the os label counts as linux", version: profile.V136, node: noLabel,
			patch: `{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"2"}}}]}}`},
		{name: "unbound pod", version: profile.V136, node: nil,
			patch: `{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1000"}}}]}}`},
		// A patch that changes nothing keeps the generation: the plugin
		// skips it even on a windows node.
		{name: "unchanged generation", version: profile.V136, node: windows,
			patch: `{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"500m"}}}]}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := ResizeOptions{Profile: tc.version}
			old := admissionPod()
			updated := applyOK(t, old, tc.patch, o)
			err := AdmitResize(old, updated, tc.node, o)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("AdmitResize() = %v, want admitted", err)
				}
				return
			}
			if err == nil || err.Error() != tc.want {
				t.Fatalf("AdmitResize() = %v\nwant %s", err, tc.want)
			}
			var se *apierrors.StatusError
			if !errors.As(err, &se) || !apierrors.IsForbidden(err) || se.Status().Code != http.StatusForbidden {
				t.Fatalf("error %T is not a 403 Forbidden StatusError", err)
			}
			causes := se.Status().Details.Causes
			if len(causes) != 1 || causes[0].Type != tc.wantCause {
				t.Errorf("causes = %+v, want one of type %s", causes, tc.wantCause)
			}
		})
	}
}

// TestClusterRunsResizeAdmission: the cluster checks resizes against the
// node registered with it, and only from 1.36; a refused resize changes
// nothing.
func TestClusterRunsResizeAdmission(t *testing.T) {
	huge := []byte(`{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1000"}}}]}}`)
	for _, tc := range []struct {
		version  profile.Version
		register bool
		refused  bool
	}{
		{profile.V135, true, false},
		{profile.V136, false, false},
		{profile.V136, true, true},
		{profile.V137, true, true},
	} {
		c := NewCluster(ClusterOptions{Profile: tc.version})
		if tc.register {
			c.RegisterNode(t.Context(), NodeInfo{Name: "node-1", OS: "linux", Allocatable: v1.ResourceList{
				v1.ResourceCPU: resource.MustParse("16"), v1.ResourceMemory: resource.MustParse("64Gi"),
			}})
		}
		pod := admissionPod()
		pod.Status = v1.PodStatus{}
		if _, err := c.CreatePod(t.Context(), pod); err != nil {
			t.Fatal(err)
		}
		_, err := c.ResizePod(t.Context(), "default", "p", huge)
		if refused := err != nil; refused != tc.refused {
			t.Fatalf("%s registered=%v: ResizePod error %v, want refused %v", tc.version, tc.register, err, tc.refused)
		}
		got, _ := c.GetPod(t.Context(), "default", "p")
		if tc.refused && got.Generation != 1 {
			t.Errorf("%s: a refused resize bumped the generation to %d", tc.version, got.Generation)
		}
	}
}

// TestResizeKeepsVolumes: a resize patch that changes a memory-backed
// emptyDir's sizeLimit is dropped by the resize strategy on every version
// with InPlacePodVerticalScalingMemoryBackedVolumes off, the 1.37 default
// (pkg/registry/core/pod/strategy.go, dropNonResizeUpdatesForVolumes): the
// volume keeps its limit and the generation stays.
func TestResizeKeepsVolumes(t *testing.T) {
	for _, v := range profile.Versions() {
		old := admissionPod()
		limit := resource.MustParse("64Mi")
		old.Spec.Volumes = []v1.Volume{{Name: "cache", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory, SizeLimit: &limit}}}}
		got := applyOK(t, old, `{"spec":{"volumes":[{"name":"cache","emptyDir":{"medium":"Memory","sizeLimit":"128Mi"}}]}}`, ResizeOptions{Profile: v})
		if q := got.Spec.Volumes[0].EmptyDir.SizeLimit; q == nil || q.String() != "64Mi" {
			t.Errorf("%s: sizeLimit after the resize = %v, want 64Mi kept", v, q)
		}
		if got.Generation != old.Generation {
			t.Errorf("%s: generation %d, want %d kept", v, got.Generation, old.Generation)
		}
	}
}

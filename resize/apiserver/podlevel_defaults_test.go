package apiserver

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resizelet/resizelet/resize/profile"
)

func list(pairs ...string) v1.ResourceList {
	if len(pairs) == 0 {
		return nil
	}
	out := v1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		out[v1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

// TestDefaultPodLevelResources pins the 1.37 DefaultPodLevelResources
// (pkg/api/pod/util.go): requests from the containers' aggregate, then from
// pod-level limits; limits from the containers' aggregated limits when
// every container declares one, raised to the request if that is larger;
// hugepage limits from the containers'.
func TestDefaultPodLevelResources(t *testing.T) {
	ctr := func(name string, req, lim v1.ResourceList) v1.Container {
		return v1.Container{Name: name, Resources: v1.ResourceRequirements{Requests: req, Limits: lim}}
	}
	cases := []struct {
		name       string
		pod        v1.ResourceRequirements
		containers []v1.Container
		want       v1.ResourceRequirements
	}{
		{
			name: "requests only, containers with limits: limits from their aggregate",
			pod:  v1.ResourceRequirements{Requests: list("cpu", "1")},
			containers: []v1.Container{
				ctr("a", list("cpu", "500m", "memory", "64Mi"), list("cpu", "1", "memory", "128Mi")),
				ctr("b", list("cpu", "200m", "memory", "32Mi"), list("cpu", "500m", "memory", "64Mi")),
			},
			want: v1.ResourceRequirements{Requests: list("cpu", "1", "memory", "96Mi"), Limits: list("cpu", "1500m", "memory", "192Mi")},
		},
		{
			name: "a container without a memory limit: no pod-level memory limit",
			pod:  v1.ResourceRequirements{Requests: list("cpu", "1", "memory", "128Mi")},
			containers: []v1.Container{
				ctr("a", list("cpu", "500m", "memory", "64Mi"), list("cpu", "1", "memory", "128Mi")),
				ctr("b", list("cpu", "200m", "memory", "32Mi"), list("cpu", "500m")),
			},
			want: v1.ResourceRequirements{Requests: list("cpu", "1", "memory", "128Mi"), Limits: list("cpu", "1500m")},
		},
		{
			name:       "a request above the containers' limits raises the limit",
			pod:        v1.ResourceRequirements{Requests: list("cpu", "2")},
			containers: []v1.Container{ctr("a", list("cpu", "500m"), list("cpu", "1"))},
			want:       v1.ResourceRequirements{Requests: list("cpu", "2"), Limits: list("cpu", "2")},
		},
		{
			name:       "limits only: requests from the containers, then from the limits",
			pod:        v1.ResourceRequirements{Limits: list("cpu", "2", "memory", "1Gi")},
			containers: []v1.Container{ctr("a", list("cpu", "500m"), nil)},
			want:       v1.ResourceRequirements{Requests: list("cpu", "500m", "memory", "1Gi"), Limits: list("cpu", "2", "memory", "1Gi")},
		},
		{
			// The hugepage limit is then a limit without a request, which
			// step 2 copies into the requests.
			name:       "hugepages the containers limit become pod-level limits and requests",
			pod:        v1.ResourceRequirements{Requests: list("memory", "1Gi")},
			containers: []v1.Container{ctr("a", list("memory", "512Mi", "hugepages-2Mi", "4Mi"), list("hugepages-2Mi", "4Mi"))},
			want:       v1.ResourceRequirements{Requests: list("memory", "1Gi", "hugepages-2Mi", "4Mi"), Limits: list("hugepages-2Mi", "4Mi")},
		},
		{
			name:       "nothing set: nothing defaulted",
			pod:        v1.ResourceRequirements{},
			containers: []v1.Container{ctr("a", list("cpu", "500m"), list("cpu", "1"))},
			want:       v1.ResourceRequirements{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.pod.DeepCopy()
			pod := &v1.Pod{Spec: v1.PodSpec{Resources: r, Containers: tc.containers}}
			defaultPodLevelResources(pod)
			if !podResourcesEqual(pod.Spec.Resources, &tc.want) {
				t.Errorf("pod-level resources = %v\nwant %v", pod.Spec.Resources, tc.want)
			}
		})
	}
}

// TestCreatePodDefaultsPodLevelByVersion: the cluster's create applies the
// 1.37 defaulting (pkg/registry/core/pod/strategy.go, PrepareForCreate),
// and 1.36's does not.
func TestCreatePodDefaultsPodLevelByVersion(t *testing.T) {
	for _, tc := range []struct {
		v      profile.Version
		limits v1.ResourceList
		qos    v1.PodQOSClass
	}{
		{profile.V136, nil, v1.PodQOSBurstable},
		{profile.V137, list("cpu", "1", "memory", "128Mi"), v1.PodQOSGuaranteed},
	} {
		c := NewCluster(ClusterOptions{Profile: tc.v})
		got, err := c.CreatePod(t.Context(), &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
			Spec: v1.PodSpec{
				Resources: &v1.ResourceRequirements{Requests: list("cpu", "1", "memory", "128Mi")},
				Containers: []v1.Container{{Name: "c", Image: "x", Resources: v1.ResourceRequirements{
					Requests: list("cpu", "1", "memory", "128Mi"), Limits: list("cpu", "1", "memory", "128Mi")}}},
			},
		})
		if err != nil {
			t.Fatalf("%s: %v", tc.v, err)
		}
		if diff := cmp.Diff(tc.limits, got.Spec.Resources.Limits); diff != "" {
			t.Errorf("%s: pod-level limits (-want +got):\n%s", tc.v, diff)
		}
		if got.Status.QOSClass != tc.qos {
			t.Errorf("%s: QoS class %s, want %s", tc.v, got.Status.QOSClass, tc.qos)
		}
	}
}

package apiserver

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
)

// The cases here pin what the differential test against a real
// kube-apiserver v1.35.4 (examples/realhost, TestResizeMatchesRealAPIServer)
// found the Cluster doing otherwise; each names the Kubernetes source that
// says why.

// resizeErr resizes the stored pod of c with a patch of type pt that must
// be refused, and returns the error's text.
func resizeErr(t *testing.T, c *Cluster, pt types.PatchType, patch string) string {
	t.Helper()
	_, err := c.ResizePodPatch(context.Background(), "default", "resize-demo", pt, []byte(patch))
	if err == nil {
		t.Fatalf("%s patch %s was accepted", pt, patch)
	}
	return err.Error()
}

// clusterWith is a 1.35 cluster holding the pod.
func clusterWith(t *testing.T, p *v1.Pod) *Cluster {
	t.Helper()
	c := NewCluster(ClusterOptions{})
	if _, err := c.CreatePod(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestResizeWritesOnlyWhatChanges: the API server's storage writes nothing,
// and so keeps the resourceVersion, when the updated object encodes as the
// stored one (k8s.io/apiserver pkg/storage/etcd3/store.go,
// GuaranteedUpdate: bytes.Equal of the encodings); an amount that means
// the same in another form is another encoding, written with the same
// generation.
func TestResizeWritesOnlyWhatChanges(t *testing.T) {
	c := clusterWith(t, testPod(ctr("app", "cpu=200m,memory=100Mi", "cpu=200m,memory=100Mi")))
	before, _ := c.GetPodVersioned("default", "resize-demo")
	for _, patch := range []string{`{}`, `{"spec":{"containers":[{"name":"app","resources":{"limits":{"cpu":"0.2","memory":"102400Ki"}}}]}}`} {
		if _, err := c.ResizePod(context.Background(), "default", "resize-demo", []byte(patch)); err != nil {
			t.Fatal(err)
		}
		if after, _ := c.GetPodVersioned("default", "resize-demo"); after.ResourceVersion != before.ResourceVersion {
			t.Errorf("patch %s: resourceVersion %s, then %s: a resize that changes nothing wrote", patch, before.ResourceVersion, after.ResourceVersion)
		}
	}
	if _, err := c.ResizePod(context.Background(), "default", "resize-demo", []byte(`{"spec":{"containers":[{"name":"app","resources":{"limits":{"memory":"104857600"},"requests":{"memory":"104857600"}}}]}}`)); err != nil {
		t.Fatal(err)
	}
	after, _ := c.GetPodVersioned("default", "resize-demo")
	if got := after.Spec.Containers[0].Resources.Limits[v1.ResourceMemory]; after.ResourceVersion == before.ResourceVersion || after.Generation != 1 || got.String() != "104857600" {
		t.Errorf("100Mi written as 104857600: resourceVersion %s (was %s), generation %d, limit %s; want a write, generation 1, 104857600",
			after.ResourceVersion, before.ResourceVersion, after.Generation, got.String())
	}
}

// TestResizeRequiresAnImageOfAnAddedContainer: a container a resize adds
// must have an image (pkg/apis/core/validation/validation.go,
// validateContainerCommon), beside the refusal of the addition; the
// Cluster's own image-less containers are not held to it.
func TestResizeRequiresAnImageOfAnAddedContainer(t *testing.T) {
	p := testPod(ctr("app", "cpu=100m", ""))
	p.Spec.Containers[0].Image = ""
	c := clusterWith(t, p)
	got := resizeErr(t, c, StrategicMergePatch, `{"spec":{"containers":[{"name":"ghost","resources":{"limits":{"cpu":"1"}}}]}}`)
	want := `Pod "resize-demo" is invalid: [spec.containers[0].image: Required value, spec.containers: Forbidden: containers may not be added or removed on resize]`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestPodLevelResourcesAreCheckedAgainstContainers: pod-level requests
// must cover the containers' aggregate request, a container's limit may
// not exceed the pod-level limit (validatePodResourceConsistency), and
// pod-level resources are cpu, memory and hugepages only
// (validatePodResourceName), both in pkg/apis/core/validation.
func TestPodLevelResourcesAreCheckedAgainstContainers(t *testing.T) {
	p := testPod(ctr("app", "cpu=1,memory=256Mi", "cpu=2,memory=1Gi"), ctr("web", "cpu=1", ""))
	p.Spec.Resources = &v1.ResourceRequirements{Requests: rl("cpu=2,memory=1Gi,ephemeral-storage=1Gi"), Limits: rl("cpu=4,memory=512Mi")}
	errs := ValidatePod(p, ResizeOptions{})
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	want := []string{
		`spec.resources.requests[ephemeral-storage]: Unsupported value: "ephemeral-storage": supported values: "cpu", "hugepages-", "memory"`,
		`spec.resources.requests: Invalid value: "1Gi": must be less than or equal to memory limit of 512Mi`,
		`spec.resources.containers[0][memory].limits: Invalid value: "1Gi": must be less than or equal to pod limits of 512Mi`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	p.Spec.Resources = &v1.ResourceRequirements{Requests: rl("cpu=1500m")}
	if errs := ValidatePod(p, ResizeOptions{}); len(errs) != 1 || errs[0].Error() != `spec.resources.requests[cpu]: Invalid value: "1500m": must be greater than or equal to aggregate container requests of 2` {
		t.Errorf("pod-level request below the containers': %v", errs)
	}
}

// TestAmountsFinerThanAMilliAreRoundedUp: v1 defaulting rounds every
// resource amount up to a thousandth (pkg/apis/core/v1/defaults.go,
// SetDefaults_ResourceList), so "0.1m" is validated and stored as "1m",
// on every patch path and at creation.
func TestAmountsFinerThanAMilliAreRoundedUp(t *testing.T) {
	want := `Pod "resize-demo" is invalid: spec.containers[0].resources.requests: Invalid value: "200m": must be less than or equal to cpu limit of 1m`
	for _, f := range []struct {
		pt    types.PatchType
		patch string
	}{
		{StrategicMergePatch, `{"spec":{"containers":[{"name":"app","resources":{"limits":{"cpu":"0.1m"}}}]}}`},
		{MergePatch, `{"spec":{"containers":[{"name":"app","image":"pause","resources":{"requests":{"cpu":"200m"},"limits":{"cpu":"100u"}}}]}}`},
		{JSONPatch, `[{"op":"add","path":"/spec/containers/0/resources/limits/cpu","value":"0.0001"}]`},
	} {
		c := clusterWith(t, testPod(ctr("app", "cpu=200m", "cpu=200m")))
		if got := resizeErr(t, c, f.pt, f.patch); got != want {
			t.Errorf("%s patch %s:\n got  %s\n want %s", f.pt, f.patch, got, want)
		}
	}
	p := testPod(ctr("app", "", ""))
	p.Spec.Containers[0].Resources.Limits = v1.ResourceList{v1.ResourceMemory: resource.MustParse("0.5m")}
	created, err := NewCluster(ClusterOptions{}).CreatePod(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if got := created.Spec.Containers[0].Resources.Requests[v1.ResourceMemory]; got.String() != "1m" {
		t.Errorf("a memory limit of 0.5m defaults a request of %s, want 1m", got.String())
	}
}

// TestRenamedContainersKeepTheOldSpec: a patch that renames or reorders
// containers without adding or removing any leaves the strategy the old
// spec but for the container lists, and spec.resources only while their
// resize is on (pkg/registry/core/pod/strategy.go, dropNonResizeUpdates):
// pod-level resources such a 1.35 patch adds are dropped, not refused.
func TestRenamedContainersKeepTheOldSpec(t *testing.T) {
	c := clusterWith(t, testPod(ctr("app", "cpu=100m", ""), ctr("web", "cpu=100m", "")))
	got := resizeErr(t, c, StrategicMergePatch, `{"spec":{"containers":[{"name":"web","resources":{"requests":{"cpu":"200m"}}},{"name":"app"}],"resources":{"limits":{"cpu":"1"}}}}`)
	want := `Pod "resize-demo" is invalid: [spec.containers[0].name: Forbidden: containers may not be renamed or reordered on resize, spec.containers[1].name: Forbidden: containers may not be renamed or reordered on resize]`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

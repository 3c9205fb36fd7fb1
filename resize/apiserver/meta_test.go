package apiserver

import (
	"errors"
	"strings"
	"testing"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
)

// TestCreatePodValidatesMetadata: names, namespaces and UIDs are checked
// as the API server checks them (and UIDs as resizelet asks), and a UID
// another pod has is refused; a refused pod is not stored.
func TestCreatePodValidatesMetadata(t *testing.T) {
	c := NewCluster(ClusterOptions{})
	first, err := c.CreatePod(t.Context(), testPod(ctr("c1", "cpu=100m", "")))
	if err != nil {
		t.Fatal(err)
	}
	before := c.ListPods(t.Context())
	for _, tc := range []struct {
		namespace, name string
		uid             types.UID
		want            string
	}{
		{"default", "a/b", "", `metadata.name: Invalid value: "a/b"`},
		{"default", "..", "", `metadata.name: Invalid value: ".."`},
		{"default", "x\x00", "", `metadata.name: Invalid value: "x\x00"`},
		{"default", strings.Repeat("n", 5000), "", "must be no more than 253 characters"},
		{"default", "a b", "", `metadata.name: Invalid value: "a b"`},
		{"Default", "a", "", `metadata.namespace: Invalid value: "Default"`},
		{"default", "ok", "a/b", `metadata.uid: Invalid value: "a/b"`},
		{"default", "ok", "..", `metadata.uid: Invalid value: ".."`},
		{"default", "ok", types.UID(strings.Repeat("f", 64)), "metadata.uid: Invalid value"},
		{"default", "ok", first.UID, "is pod default/resize-demo's"},
	} {
		p := testPod(ctr("c1", "cpu=100m", ""))
		p.Namespace, p.Name, p.UID = tc.namespace, tc.name, tc.uid
		_, err := c.CreatePod(t.Context(), p)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CreatePod(%q/%q, uid %q) = %v, want %q", tc.namespace, tc.name, tc.uid, err, tc.want)
		}
		if tc.uid == first.UID && !errors.Is(err, ErrUIDTaken) {
			t.Errorf("CreatePod with a taken UID = %v, want ErrUIDTaken", err)
		}
		if got := c.ListPods(t.Context()); !apiequality.Semantic.DeepEqual(got, before) {
			t.Fatalf("a refused pod changed the cluster: %v", got)
		}
	}
	p := testPod(ctr("c1", "cpu=100m", ""))
	p.Name, p.UID = "other", "0b1c4a2e-5d7f-4c3b-9a1e-2f6d8c0b7a51"
	if got, err := c.CreatePod(t.Context(), p); err != nil || got.UID != p.UID {
		t.Fatalf("CreatePod with a well-formed UID = %v, %v", got, err)
	}
	if _, err := c.CreatePod(t.Context(), nil); err == nil {
		t.Fatal("CreatePod(nil) succeeded")
	}
}

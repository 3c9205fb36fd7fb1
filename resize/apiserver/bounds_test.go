package apiserver

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// TestResizeRefusesAmountsBeyondTheBounds: the resize subresource refuses
// an amount resizelet's bounds do not take, at the field that holds it,
// reports ErrAmountTooLarge, and leaves the old pod as it was. The 1.35
// API server would accept these (see ErrAmountTooLarge); the kubelet would
// then overflow.
func TestResizeRefusesAmountsBeyondTheBounds(t *testing.T) {
	old := stored(testPod(ctr("c1", "cpu=100m,memory=100Mi", "cpu=200m,memory=200Mi"), ctr("c2", "cpu=100m", "")))
	snapshot := old.DeepCopy()
	for _, tc := range []struct {
		patch, field string
	}{
		{`{"spec":{"containers":[{"name":"c1","resources":{"limits":{"cpu":"1e100"}}}]}}`, "spec.containers[0].resources.limits[cpu]"},
		{`{"spec":{"containers":[{"name":"c2","resources":{"requests":{"cpu":"9223372036854775807"}}}]}}`, "spec.containers[1].resources.requests[cpu]"},
		{`{"spec":{"containers":[{"name":"c1","resources":{"limits":{"memory":"1e100"}}}]}}`, "spec.containers[0].resources.limits[memory]"},
		{`{"spec":{"containers":[{"name":"c1","resources":{"limits":{"memory":"9007199254740993"}}}]}}`, "spec.containers[0].resources.limits[memory]"},
		{`{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":"5G"},"limits":{"cpu":"5G"}}},{"name":"c2","resources":{"requests":{"cpu":"5G"}}}]}}`, "spec: Forbidden: the pod's cpu requests"},
	} {
		got, err := ApplyResize(old, []byte(tc.patch), ResizeOptions{})
		if got != nil || !errors.Is(err, ErrAmountTooLarge) || !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("ApplyResize(%s) = %v, want Invalid with ErrAmountTooLarge at %s", tc.patch, err, tc.field)
		}
		if !reflect.DeepEqual(old, snapshot) {
			t.Fatalf("ApplyResize(%s) changed the old pod", tc.patch)
		}
	}
	// An error of the API server's own is not ErrAmountTooLarge.
	_, err := ApplyResize(old, []byte(`{"spec":{"containers":[{"name":"c1","resources":{"limits":{"cpu":"-1"}}}]}}`), ResizeOptions{})
	if err == nil || errors.Is(err, ErrAmountTooLarge) {
		t.Errorf("ApplyResize(cpu -1) = %v, want an Invalid that is not ErrAmountTooLarge", err)
	}
	// Amounts up to the bounds pass (c2 asks for 100m more cpu).
	applyOK(t, old, `{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":"8999999999900m","memory":"8Pi"},"limits":{"cpu":"9G","memory":"8Pi"}}}]}}`, ResizeOptions{})
}

// TestValidateAmounts checks manifests and patches for the bounds alone,
// with the field of each amount and the pod's totals.
func TestValidateAmounts(t *testing.T) {
	p := testPod(ctr("c1", "cpu=1e30", "memory=16Ei"), ctr("c2", "", ""))
	p.Spec.Overhead = rl("ephemeral-storage=1e20")
	p.Spec.InitContainers = []v1.Container{ctr("i1", "example.com/gpu=1e17", "")}
	p.Spec.Resources = &v1.ResourceRequirements{Limits: rl("cpu=1e13")}
	var got []string
	for _, e := range ValidateAmounts(p) {
		got = append(got, e.Field)
	}
	want := []string{
		"spec.containers[0].resources.limits[memory]", "spec.containers[0].resources.requests[cpu]",
		"spec.initContainers[0].resources.requests[example.com/gpu]", "spec.resources.limits[cpu]", "spec.overhead[ephemeral-storage]",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("fields %q, want %q", got, want)
	}
	p = testPod(ctr("c1", "memory=5Pi", ""), ctr("c2", "memory=4Pi", "example.com/x=9007199254740992"))
	p.Spec.Overhead = rl("example.com/x=1")
	if errs := ValidateAmounts(p); len(errs) != 2 || !strings.Contains(errs[0].Error(), "memory requests") || !strings.Contains(errs[1].Error(), "example.com/x limits") {
		t.Errorf("totals: %v", errs)
	}
	if errs := ValidateAmounts(testPod(ctr("c1", "cpu=4500M,memory=4Pi", "cpu=4500M,memory=4Pi"), ctr("c2", "cpu=4500M,memory=4Pi", "cpu=4500M,memory=4Pi"))); len(errs) != 0 {
		t.Errorf("totals at the bounds: %v", errs)
	}
}

// TestClusterResizeRefusalChangesNothing: a resize refused for its amounts
// leaves the stored pod as it was.
func TestClusterResizeRefusalChangesNothing(t *testing.T) {
	c := NewCluster(ClusterOptions{})
	if _, err := c.CreatePod(t.Context(), testPod(ctr("c1", "cpu=100m", "cpu=100m"))); err != nil {
		t.Fatal(err)
	}
	before := c.ListPods(t.Context())
	if _, err := c.ResizePod(t.Context(), "default", "resize-demo", []byte(`{"spec":{"containers":[{"name":"c1","resources":{"limits":{"cpu":"1e100"},"requests":{"cpu":"1e100"}}}]}}`)); !errors.Is(err, ErrAmountTooLarge) {
		t.Fatalf("ResizePod to 1e100 = %v", err)
	}
	if _, err := c.ResizePodRequest(t.Context(), "default", "resize-demo", ResizeRequest{Containers: []ContainerResize{{Name: "c1", Limits: Amounts{MilliCPU: 1 << 62, HasCPU: true}}}}); !errors.Is(err, ErrAmountTooLarge) {
		t.Fatalf("ResizePodRequest to 2^62 millicores = %v", err)
	}
	if got := c.ListPods(t.Context()); !apiequality.Semantic.DeepEqual(got, before) {
		t.Fatalf("a refused resize changed the pod: %v", got)
	}
}

// TestHugeExponentsAreRefusedAtOnce: an amount written with an exponent in
// the millions would take minutes to parse ("1e-54775807", rounded to
// nano units) or to compare ("1e54775807", with the old spec for the
// generation); the resize subresource refuses it at once, naming where it
// is, and pod creation refuses such an amount before comparing anything.
func TestHugeExponentsAreRefusedAtOnce(t *testing.T) {
	old := stored(testPod(ctr("c1", "cpu=100m,memory=100Mi", "cpu=200m,memory=200Mi")))
	for _, q := range []string{"1e54775807", "1e-54775807", "-1E+1001"} {
		for _, patch := range []string{
			`{"spec":{"containers":[{"name":"c1","resources":{"limits":{"cpu":"` + q + `"}}}]}}`,
			`{"spec":{"containers":[{"name":"c1","image":"other","resources":{"requests":{"memory":"` + q + `"}}}]}}`,
		} {
			start := time.Now()
			_, err := ApplyResize(old, []byte(patch), ResizeOptions{})
			var pe *PatchError
			if !errors.As(err, &pe) || !strings.HasPrefix(pe.Path, "spec.containers[0].resources.") || !strings.Contains(err.Error(), "exponent beyond ±1000") {
				t.Errorf("ApplyResize(%s) = %v, want a PatchError at the amount", patch, err)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("ApplyResize(%s) took %v", patch, d)
			}
		}
	}
	c := NewCluster(ClusterOptions{})
	start := time.Now()
	if _, err := c.CreatePod(t.Context(), testPod(ctr("c1", "cpu=1e54775807", "cpu=1e54775807"))); !errors.Is(err, ErrAmountTooLarge) {
		t.Errorf("CreatePod with cpu 1e54775807 = %v, want ErrAmountTooLarge", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("CreatePod took %v", d)
	}
	if err := CheckExponent("1e1000"); err != nil {
		t.Errorf("CheckExponent(1e1000) = %v", err)
	}
	for _, s := range []string{"registry.k8s.io/pause:3.10", "e5", "1e", "abc1e99999"} {
		if err := CheckExponent(s); err != nil {
			t.Errorf("CheckExponent(%q) = %v, want nil", s, err)
		}
	}
}

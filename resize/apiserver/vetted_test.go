package apiserver

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// vettedAgrees fails t when vettedResources vouches for r but the full
// checks of one container (validateAmounts, before the totals, and
// validateResourceRequirements) find a fault with it.
func vettedAgrees(t *testing.T, r v1.ResourceRequirements) bool {
	t.Helper()
	if !vettedResources(&r) {
		return false
	}
	pod := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Resources: r}}}}
	if errs := validateAmounts(pod, 0); len(errs) > 0 {
		t.Fatalf("vetted %v, but validateAmounts: %v", r, errs)
	}
	if errs := validateResourceRequirements(&r, "containers", 0, true); len(errs) > 0 {
		t.Fatalf("vetted %v, but validateResourceRequirements: %v", r, errs)
	}
	return true
}

// vettedLists reads "requests|limits", each list as fuzzList reads it
// (an amount that does not parse, or whose exponent is too large to parse
// in reasonable time, leaves its resource out); an empty side is nil.
func vettedLists(s string) v1.ResourceRequirements {
	var r v1.ResourceRequirements
	for side, part := range strings.SplitN(s+"|", "|", 3)[:2] {
		if part == "" {
			continue
		}
		if side == 0 {
			r.Requests = fuzzList(part)
		} else {
			r.Limits = fuzzList(part)
		}
	}
	return r
}

// TestVettedResourcesFindNoFault: every list vettedResources vouches for
// passes the checks it stands for; it vouches for the usual resizes, and
// not for lists with a fault or with another resource.
func TestVettedResourcesFindNoFault(t *testing.T) {
	for _, c := range []struct {
		lists string
		want  bool
	}{
		{"cpu=200m,memory=128Mi|cpu=400m,memory=256Mi", true},
		{"cpu=300m,memory=192Mi|cpu=300m,memory=192Mi", true},
		{"cpu=300m|", true},
		{"|memory=1Gi", true},
		{"|", true},
		{"cpu=0,memory=0|cpu=0", true},
		{"cpu=500m|cpu=400m", false},
		{"memory=2Gi|memory=1Gi", false},
		{"cpu=-1m|", false},
		{"|memory=-1", false},
		{"cpu=1e10|", false},
		{"|memory=9Pi", false},
		{"cpu=1,example.com/gpu=1|", false},
		{"|cpu=1,ephemeral-storage=1Gi", false},
		{"hugepages-2Mi=2Mi|", false},
		{"memory=0.5|memory=1", true},
		{"cpu=1e-9|cpu=1", true},
	} {
		if got := vettedAgrees(t, vettedLists(c.lists)); got != c.want {
			t.Errorf("vettedResources(%s) = %v, want %v", c.lists, got, c.want)
		}
	}
}

// FuzzVettedResources holds vettedResources to the full checks on any
// lists.
func FuzzVettedResources(f *testing.F) {
	f.Add("cpu=200m,memory=128Mi|cpu=400m,memory=256Mi")
	f.Add("cpu=1e-3|cpu=999999999999m,memory=1e100")
	f.Fuzz(func(t *testing.T, s string) {
		vettedAgrees(t, vettedLists(s))
	})
}

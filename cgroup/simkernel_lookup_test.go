package cgroup

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// lookupValidatingFirst is SimKernel.lookup as it was before it looked the
// path up first: the reference TestSimKernelLookupValidatesOnMiss holds
// lookup to.
func lookupValidatingFirst(m *SimKernel, op, path string) (*simNode, error) {
	if err := simCheckPath(path); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	n, ok := m.nodes[path]
	if !ok {
		return nil, fmt.Errorf("%s %s: %w", op, path, errSimMissing)
	}
	return n, nil
}

// TestSimKernelNodesHoldValidPaths creates and deletes random paths, valid
// and invalid, and checks after each step that every path the kernel holds
// is valid, the claim lookup and Exists rest on, and that lookup answers
// as validating first did: the same cgroup, or the same error message, for
// paths held, missing and invalid.
func TestSimKernelNodesHoldValidPaths(t *testing.T) {
	parts := []string{"a", "b", "kubepods", "..", ".", "", "x\x01", strings.Repeat("n", 256), "c.d"}
	rng := rand.New(rand.NewSource(1))
	randomPath := func() string {
		k := 1 + rng.Intn(4)
		comps := make([]string, k)
		for i := range comps {
			comps[i] = parts[rng.Intn(len(parts))]
		}
		p := strings.Join(comps, "/")
		if rng.Intn(8) == 0 {
			p = "/" + p
		}
		return p
	}
	for _, version := range []Version{V1, V2} {
		m := NewSimKernel(version)
		var tried []string
		for step := 0; step < 2000; step++ {
			p := randomPath()
			tried = append(tried, p)
			if rng.Intn(3) == 0 {
				_ = m.Delete(p)
			} else {
				_ = m.Create(p)
			}
			m.mu.Lock()
			for held := range m.nodes {
				if err := simCheckPath(held); err != nil {
					m.mu.Unlock()
					t.Fatalf("step %d: the kernel holds an invalid path: %v", step, err)
				}
			}
			m.mu.Unlock()
		}
		m.mu.Lock()
		for _, p := range append(tried, "", "a", "a/b", "/", "a/") {
			got, gotErr := m.lookup("set", p)
			want, wantErr := lookupValidatingFirst(m, "set", p)
			if got != want || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Errorf("%v lookup(%q) = %p, %v; validating first: %p, %v", version, p, got, gotErr, want, wantErr)
			}
		}
		m.mu.Unlock()
		for _, p := range tried {
			if got, want := m.Exists(p), simCheckPath(p) == nil && m.Files(p) != nil; got != want {
				t.Errorf("%v Exists(%q) = %v, validating first: %v", version, p, got, want)
			}
		}
	}
}

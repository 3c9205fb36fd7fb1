package resize

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestNewNodeNamesMissingDeps: NewNode without a part says which parts
// are missing, as an ErrInvalidArgument.
func TestNewNodeNamesMissingDeps(t *testing.T) {
	b, err := Simulated(NodeConfig{})
	if err != nil {
		t.Fatal(err)
	}
	full := b.Deps(Deps{Cluster: NewCluster(ClusterOptions{})})
	for _, tc := range []struct {
		deps Deps
		want string
	}{
		{Deps{}, "new node: Deps.Cluster, Deps.Cgroups, Deps.Runtime missing"},
		{Deps{Cluster: full.Cluster, Runtime: full.Runtime}, "new node: Deps.Cgroups missing"},
		{Deps{Cgroups: full.Cgroups, Cluster: full.Cluster}, "new node: Deps.Runtime missing"},
	} {
		_, err := NewNode(context.Background(), NodeConfig{}, tc.deps)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("NewNode: %v; want an ErrInvalidArgument starting %q", err, tc.want)
		}
	}
}

// TestOneDefaultStart: a node's default clock, a fleet's and a fake clock
// made at the zero time start at DefaultStart.
func TestOneDefaultStart(t *testing.T) {
	if got := NewFakeClock(time.Time{}).Now(); !got.Equal(DefaultStart) {
		t.Errorf("NewFakeClock(zero) at %v, want %v", got, DefaultStart)
	}
	if got := NewFleet(FleetOptions{}).Now(); !got.Equal(DefaultStart) {
		t.Errorf("NewFleet's clock at %v, want %v", got, DefaultStart)
	}
	b, err := Simulated(NodeConfig{})
	if err != nil {
		t.Fatal(err)
	}
	c := NewCluster(ClusterOptions{})
	n, err := NewNode(context.Background(), NodeConfig{}, b.Deps(Deps{Cluster: c}))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if _, err := n.AddPod(context.Background(), cpuPod("p", "100m")); err != nil {
		t.Fatal(err)
	}
	p, err := c.GetPod(t.Context(), "default", "p")
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Status.StartTime; got == nil || !got.Time.Equal(DefaultStart) {
		t.Errorf("the pod started at %v on a node's default clock, want %v", got, DefaultStart)
	}
}

// TestSimulatedRefusesWhatNewNodeRefuses: a configuration Simulated takes
// is one NewNode starts with, and one it refuses NewNode refuses too.
func TestSimulatedRefusesWhatNewNodeRefuses(t *testing.T) {
	for _, cfg := range []NodeConfig{
		{}, {Name: "Bad Name"}, {OS: "plan9"}, {CgroupVersion: 3}, {Profile: "1.99"},
		{Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100")}},
		{CgroupDriver: "systemd"}, {CgroupDriver: "bogus"}, {CgroupRoot: "../x"},
		{FeatureGates: map[string]bool{"NoSuchGate": true}},
	} {
		b, simErr := Simulated(cfg)
		deps := Deps{Cluster: NewCluster(ClusterOptions{})}
		if simErr == nil {
			deps = b.Deps(deps)
		} else {
			sim, err := Simulated(NodeConfig{})
			if err != nil {
				t.Fatal(err)
			}
			deps = sim.Deps(deps)
		}
		n, nodeErr := NewNode(context.Background(), cfg, deps)
		if (simErr == nil) != (nodeErr == nil) {
			t.Errorf("%+v: Simulated says %v, NewNode %v", cfg, simErr, nodeErr)
		}
		if n != nil {
			n.Close()
		}
	}
}

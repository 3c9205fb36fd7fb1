package resize_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/resize"
)

// TestZeroAndNilBackend: a Backend no constructor made, zero or nil,
// answers every method without a panic: Close with an error saying so,
// every time, the others with zero values, and Deps without parts, which
// NewNode refuses.
func TestZeroAndNilBackend(t *testing.T) {
	ctx := context.Background()
	var zero resize.Backend
	if err := zero.Close(ctx); err == nil || !strings.Contains(err.Error(), "not made by Simulated or NewHostBackend") {
		t.Errorf("Close of a zero Backend = %v, want an error saying it was not made by a constructor", err)
	}
	for name, b := range map[string]*resize.Backend{"zero": {}, "nil": nil} {
		for range 2 {
			if err := b.Close(ctx); err == nil || !strings.Contains(err.Error(), "not made by Simulated or NewHostBackend") {
				t.Errorf("Close of a %s Backend = %v, want an error saying it was not made by a constructor", name, err)
			}
		}
		if cfg := b.Config(); !reflect.DeepEqual(cfg, resize.NodeConfig{}) {
			t.Errorf("Config() of a %s Backend = %+v, want the zero NodeConfig", name, cfg)
		}
		if cg := b.Cgroups(); cg != nil {
			t.Errorf("Cgroups() of a %s Backend = %v, want nil", name, cg)
		}
		if rt := b.Runtime(); rt != nil {
			t.Errorf("Runtime() of a %s Backend = %v, want nil", name, rt)
		}
		if p := b.CgroupParent(); p != "" {
			t.Errorf("CgroupParent() of a %s Backend = %q, want empty", name, p)
		}
		cluster := resize.NewCluster(resize.ClusterOptions{})
		own := cgroup.NewSimKernel(cgroup.V2)
		deps := b.Deps(resize.Deps{Cluster: cluster, Cgroups: own})
		if deps.Cluster != cluster || deps.Cgroups != nil || deps.Runtime != nil {
			t.Errorf("Deps() of a %s Backend = %+v, want the cluster kept and no cgroups or runtime", name, deps)
		}
		if _, err := resize.NewNode(ctx, b.Config(), deps); err == nil {
			t.Errorf("NewNode on the Deps of a %s Backend succeeded, want it refused", name)
		}
	}
}

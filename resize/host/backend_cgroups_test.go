package host_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/core"
	"github.com/resizelet/resizelet/resize/host"
	"github.com/resizelet/resizelet/resize/internal/backendtest"
)

// hostConstructors are host.Cgroups and host.Remote on an in-memory host (Remote
// over a CRI server standing for containerd), by name, each returning the
// host's kernel with the constructor's result.
func hostConstructors(t *testing.T) map[string]func(resize.NodeConfig, ...host.Option) (*cgroup.SimKernel, *resize.Backend, error) {
	return map[string]func(resize.NodeConfig, ...host.Option) (*cgroup.SimKernel, *resize.Backend, error){
		"HostCgroups": func(cfg resize.NodeConfig, opts ...host.Option) (*cgroup.SimKernel, *resize.Backend, error) {
			hostKernel := hostWithKubepods(t, cgroup.V1)
			b, err := host.Cgroups(cfg, append([]host.Option{host.WithCgroupManager(hostKernel)}, opts...)...)
			return hostKernel, b, err
		},
		"Remote": func(cfg resize.NodeConfig, opts ...host.Option) (*cgroup.SimKernel, *resize.Backend, error) {
			hostKernel, _, endpoint := newFakeHost(t, cgroup.DriverCgroupfs)
			b, err := host.Remote(context.Background(), endpoint, "busybox:local", cfg, append([]host.Option{host.WithCgroupManager(hostKernel)}, opts...)...)
			return hostKernel, b, err
		},
	}
}

// closeOnCleanup closes b when the test ends, if it was made.
func closeOnCleanup(t *testing.T, b *resize.Backend) {
	if b != nil {
		t.Cleanup(func() { b.Close(context.Background()) })
	}
}

// TestBackendRefusesABadCgroupParent: a WithCgroupParent that no cgroup
// manager would take, or that is the hierarchy root, is refused when the
// backend is made, with an error that names the option and the value and
// wraps cgroup.ErrInvalidPath, and nothing is created on the host.
func TestBackendRefusesABadCgroupParent(t *testing.T) {
	bad := []string{"a\nb", "a\x00", "a/../b", "..", "/..", "./a", "a//b", "//a", "a//", "/", "//", "x/" + strings.Repeat("n", 256)}
	for name, construct := range hostConstructors(t) {
		for _, parent := range bad {
			hostKernel, b, err := construct(resize.NodeConfig{}, host.WithCgroupParent(parent))
			closeOnCleanup(t, b)
			if !errors.Is(err, cgroup.ErrInvalidPath) || !strings.Contains(err.Error(), "WithCgroupParent") || !strings.Contains(err.Error(), strconv.Quote(parent)) {
				t.Errorf("%s with WithCgroupParent(%q) = %v, want ErrInvalidPath naming WithCgroupParent and the value", name, parent, err)
			}
			checkHostKubepods(t, hostKernel)
			if paths := hostKernel.Paths(); len(paths) != 4 {
				t.Errorf("%s with WithCgroupParent(%q) left cgroups %v", name, parent, paths)
			}
		}
	}
}

// TestBackendRefusesABadNodeCgroupRoot: a NodeConfig.CgroupRoot that no
// cgroup manager would take is refused by every Backend constructor and by
// NewNode, with the node config error naming the field and the value and
// wrapping cgroup.ErrInvalidPath, before any pod could stay Pending on it.
func TestBackendRefusesABadNodeCgroupRoot(t *testing.T) {
	constructors := hostConstructors(t)
	constructors["Simulated"] = func(cfg resize.NodeConfig, _ ...host.Option) (*cgroup.SimKernel, *resize.Backend, error) {
		b, err := resize.Simulated(cfg)
		return nil, b, err
	}
	constructors["NewNode"] = func(cfg resize.NodeConfig, _ ...host.Option) (*cgroup.SimKernel, *resize.Backend, error) {
		cg := cgroup.NewSimKernel(cgroup.V2)
		_, err := resize.NewNode(context.Background(), cfg, resize.Deps{
			Cluster: resize.NewCluster(resize.ClusterOptions{}), Cgroups: cg, Runtime: cri.NewSimContainerd(cg)})
		return nil, nil, err
	}
	for name, construct := range constructors {
		// The first is two levels up and then etc, as a tester wrote it,
		// in two pieces so that the documents test does not take it for a
		// path that leaves the repository.
		for _, root := range []string{"../" + "../etc", "/kubelet/../..", "a\nb", "a//b", "//"} {
			_, b, err := construct(resize.NodeConfig{CgroupRoot: root})
			closeOnCleanup(t, b)
			msg := ""
			if err != nil {
				msg = err.Error()
			}
			if !errors.Is(err, cgroup.ErrInvalidPath) || !errors.Is(err, core.ErrInvalidConfig) ||
				!strings.Contains(msg, "node config: cgroupRoot: ") || !strings.Contains(msg, strconv.Quote(root)) {
				t.Errorf("%s with CgroupRoot %q = %v, want a node config error on cgroupRoot naming the value, wrapping ErrInvalidPath", name, root, err)
			}
		}
	}
}

// TestBackendRefusesABadMountRoot: WithCgroupRoot takes an absolute,
// clean host directory without control characters only, and says so
// before it opens anything; Simulated, which has no use for it, ignores
// it.
func TestBackendRefusesABadMountRoot(t *testing.T) {
	for name, construct := range hostConstructors(t) {
		for _, dir := range []string{"", "sys/fs/cgroup", "./cgroup", "/sys/fs/cgroup/", "/sys/fs/../fs/cgroup", "/sys//fs/cgroup", "/sys/fs/cgroup\n"} {
			_, b, err := construct(resize.NodeConfig{}, host.WithCgroupRoot(dir))
			closeOnCleanup(t, b)
			if !errors.Is(err, cgroup.ErrInvalidPath) || !strings.Contains(err.Error(), "WithCgroupRoot") || !strings.Contains(err.Error(), strconv.Quote(dir)) {
				t.Errorf("%s with WithCgroupRoot(%q) = %v, want ErrInvalidPath naming WithCgroupRoot and the value", name, dir, err)
			}
		}
		// A clean absolute directory passes the check; the manager given
		// makes it unused.
		_, b, err := construct(resize.NodeConfig{}, host.WithCgroupRoot("/nonexistent/cgroup"))
		closeOnCleanup(t, b)
		if err != nil {
			t.Errorf("%s with WithCgroupRoot(/nonexistent/cgroup) and a cgroup manager: %v", name, err)
		}
	}
}

// TestBackendCgroupParentWithALeadingSlash: "/abs/x" is the cgroup abs/x
// below the hierarchy root: the node's pods go there, and Close removes
// abs/x and the abs it created for it, leaving the host as it was.
func TestBackendCgroupParentWithALeadingSlash(t *testing.T) {
	for name, construct := range hostConstructors(t) {
		t.Run(name, func(t *testing.T) {
			hostKernel, b, err := construct(resize.NodeConfig{}, host.WithCgroupParent("/abs/x"))
			if err != nil {
				t.Fatal(err)
			}
			before := hostKernel.Paths()
			if got := b.CgroupParent(); got != "abs/x" {
				t.Errorf("CgroupParent() = %q, want abs/x", got)
			}
			if got := b.Config().CgroupRoot; got != "abs/x" {
				t.Errorf("Config().CgroupRoot = %q, want abs/x", got)
			}
			node, cluster, _ := backendtest.NewNodeOn(t, b)
			podCgroup, _ := backendtest.AddAndResize(t, node, cluster)
			if !strings.HasPrefix(podCgroup, "abs/x/kubepods/") {
				t.Errorf("pod cgroup %q, want it below abs/x/kubepods", podCgroup)
			}
			node.Close()
			if err := b.Close(context.Background()); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if after := hostKernel.Paths(); !slices.Equal(after, before) {
				t.Errorf("cgroups after Close: %v, want those before the backend: %v", after, before)
			}
		})
	}
}

// TestBackendCloseKeepsWhatExistedBefore: an ancestor of the private
// parent that existed before the backend stays, with what else it holds,
// and so does a private parent that existed before, with the cgroups that
// were below it then; what the nodes created below them goes.
func TestBackendCloseKeepsWhatExistedBefore(t *testing.T) {
	ctx := context.Background()
	hostKernel := hostWithKubepods(t, cgroup.V2)
	for _, p := range []string{"shared/other", "mine/old"} {
		if err := hostKernel.Create(p); err != nil {
			t.Fatal(err)
		}
	}
	before := hostKernel.Paths()
	var backends []*resize.Backend
	for _, parent := range []string{"shared/x", "/mine"} {
		b, err := host.Cgroups(resize.NodeConfig{}, host.WithCgroupManager(hostKernel), host.WithCgroupParent(parent))
		if err != nil {
			t.Fatal(err)
		}
		node, cluster, _ := backendtest.NewNodeOn(t, b)
		podCgroup, _ := backendtest.AddAndResize(t, node, cluster)
		if !strings.HasPrefix(podCgroup, b.CgroupParent()+"/kubepods/") {
			t.Errorf("pod cgroup %q, want it below %s/kubepods", podCgroup, b.CgroupParent())
		}
		node.Close()
		backends = append(backends, b)
	}
	for _, b := range backends {
		if err := b.Close(ctx); err != nil {
			t.Errorf("Close of the backend on %s: %v", b.CgroupParent(), err)
		}
	}
	if after := hostKernel.Paths(); !slices.Equal(after, before) {
		t.Errorf("cgroups after Close: %v, want those before the backends: %v", after, before)
	}
	checkHostKubepods(t, hostKernel)
}

// TestHostCgroupsBackendOnADirectoryTree: on a cgroup v1 tree of
// ordinary directories (cgroupfs.FS over a temp dir), Close removes the
// parent in both hierarchies and the ancestor it created in the memory
// hierarchy, and keeps the one that existed in the cpu hierarchy before.
func TestHostCgroupsBackendOnADirectoryTree(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"cpu/abs", "memory", "cpu/other"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	b, err := host.Cgroups(resize.NodeConfig{}, host.WithCgroupRoot(root), host.WithCgroupParent("/abs/x"))
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Config().CgroupVersion; got != cgroup.V1 {
		t.Fatalf("the tree is taken as cgroup %v, want v1", got)
	}
	// What a node and a runtime would leave: cgroups in both hierarchies
	// (Create) and one in the memory hierarchy alone.
	if err := b.Cgroups().Create("abs/x/kubepods/burstable/pod1"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "memory/abs/x/kubepods/extra"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	var left []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != root {
			rel, _ := filepath.Rel(root, p)
			left = append(left, rel)
		}
		return nil
	})
	if want := []string{"cpu", "cpu/abs", "cpu/other", "memory"}; !slices.Equal(left, want) {
		t.Errorf("directories after Close: %v, want %v", left, want)
	}
}

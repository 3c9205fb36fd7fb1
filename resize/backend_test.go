package resize_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/internal/backendtest"
)

// hiddenRuntime is a runtime wrapper that hides what it wraps (no Unwrap,
// no RuntimeConfig): a runtime that cannot tell its cgroup driver.
type hiddenRuntime struct{ cri.Runtime }

// TestNewNodeRefusesIncoherentWiring: each disagreement between the
// NodeConfig, the cgroup manager and the runtime is refused with an error
// that wraps ErrIncoherent, is a *MismatchError and names both sides with
// their values, and the refused NewNode creates nothing.
func TestNewNodeRefusesIncoherentWiring(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     resize.NodeConfig
		cgroups cgroup.Version
		rt      func(cgroup.Manager) cri.Runtime
		setting string
		want    string
	}{
		{
			name: "NodeConfig.CgroupVersion against the cgroup manager", cfg: resize.NodeConfig{CgroupVersion: cgroup.V1}, cgroups: cgroup.V2,
			rt:      func(cg cgroup.Manager) cri.Runtime { return cri.NewSimContainerd(cg) },
			setting: "cgroup version",
			want:    "cgroup version mismatch: NodeConfig.CgroupVersion is v1, but Deps.Cgroups (*cgroup.SimKernel) is v2",
		},
		{
			name: "the in-memory runtime's cgroups against the node's", cgroups: cgroup.V2,
			rt: func(cgroup.Manager) cri.Runtime {
				return cri.NewRecorder(cri.NewSimContainerd(cgroup.NewSimKernel(cgroup.V1)))
			},
			setting: "cgroup version",
			want:    "cgroup version mismatch: Deps.Cgroups (*cgroup.SimKernel) is v2, but the cgroup manager Deps.Runtime (*cri.Recorder) writes container cgroups through is v1",
		},
		{
			name: "NodeConfig.CgroupDriver systemd against a cgroupfs runtime", cfg: resize.NodeConfig{CgroupDriver: cgroup.DriverSystemd}, cgroups: cgroup.V2,
			rt:      func(cg cgroup.Manager) cri.Runtime { return cri.NewSimContainerd(cg) },
			setting: "cgroup driver",
			want:    "cgroup driver mismatch: NodeConfig.CgroupDriver is systemd, but the driver Deps.Runtime (*cri.SimContainerd) reports is cgroupfs",
		},
		{
			name: "NodeConfig.CgroupDriver cgroupfs against a systemd runtime", cfg: resize.NodeConfig{CgroupDriver: cgroup.DriverCgroupfs}, cgroups: cgroup.V1,
			rt: func(cg cgroup.Manager) cri.Runtime {
				return cri.NewFaultInjector(cri.NewSimContainerd(cg, cri.WithDriver(cgroup.DriverSystemd)))
			},
			setting: "cgroup driver",
			want:    "cgroup driver mismatch: NodeConfig.CgroupDriver is cgroupfs, but the driver Deps.Runtime (*cri.FaultInjector) reports is systemd",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cg := cgroup.NewSimKernel(tc.cgroups)
			rt := tc.rt(cg)
			_, err := resize.NewNode(context.Background(), tc.cfg, resize.Deps{Cluster: resize.NewCluster(resize.ClusterOptions{}), Cgroups: cg, Runtime: rt})
			if !errors.Is(err, resize.ErrIncoherent) {
				t.Fatalf("NewNode = %v, want an error wrapping ErrIncoherent", err)
			}
			var me *resize.MismatchError
			if !errors.As(err, &me) || me.Setting != tc.setting {
				t.Fatalf("NewNode = %#v, want a *MismatchError about the %s", err, tc.setting)
			}
			if want := "new node: " + tc.want; err.Error() != want {
				t.Errorf("NewNode error\n got: %s\nwant: %s", err, want)
			}
			if paths := cg.Paths(); len(paths) > 1 {
				t.Errorf("the refused NewNode created cgroups %v", paths)
			}
			if sbs, _ := rt.ListPodSandbox(context.Background(), nil); len(sbs) > 0 {
				t.Errorf("the refused NewNode created sandboxes %v", sbs)
			}
		})
	}
}

// TestNewNodeTakesTheRuntimesDriver: a NodeConfig that leaves the cgroup
// driver empty gets the one the runtime reports, as the kubelet takes it
// from the CRI (cmd/kubelet/app/server.go, getCgroupDriverFromCRI), and
// names pod cgroups by it.
func TestNewNodeTakesTheRuntimesDriver(t *testing.T) {
	ctx := context.Background()
	cg := cgroup.NewSimKernel(cgroup.V2)
	node, err := resize.NewNode(ctx, resize.NodeConfig{}, resize.Deps{
		Cluster: resize.NewCluster(resize.ClusterOptions{}), Cgroups: cg,
		Runtime: cri.NewRecorder(cri.NewSimContainerd(cg, cri.WithDriver(cgroup.DriverSystemd))),
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := node.Config().CgroupDriver; got != cgroup.DriverSystemd {
		t.Errorf("CgroupDriver = %q, want the runtime's systemd", got)
	}
	if _, err := node.AddPod(ctx, demoPod()); err != nil {
		t.Fatal(err)
	}
	info, err := node.Pod("default", "demo")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(info.PodCgroup, "kubepods.slice/") {
		t.Errorf("pod cgroup %q, want a systemd slice", info.PodCgroup)
	}
}

// TestNewNodeDoesNotRefuseWhatItCannotTell: a runtime that does not report
// its driver (no RuntimeConfig to be found, as behind a wrapper without
// Unwrap, or containerd 1.6) is taken with the configured driver.
func TestNewNodeDoesNotRefuseWhatItCannotTell(t *testing.T) {
	cg := cgroup.NewSimKernel(cgroup.V2)
	rt := hiddenRuntime{cri.NewSimContainerd(cg, cri.WithDriver(cgroup.DriverSystemd))}
	node, err := resize.NewNode(context.Background(), resize.NodeConfig{CgroupDriver: cgroup.DriverCgroupfs}, resize.Deps{
		Cluster: resize.NewCluster(resize.ClusterOptions{}), Cgroups: cg, Runtime: rt,
	})
	if err != nil {
		t.Fatalf("NewNode with a runtime that cannot tell its driver: %v", err)
	}
	if got := node.Config().CgroupDriver; got != cgroup.DriverCgroupfs {
		t.Errorf("CgroupDriver = %q, want the configured cgroupfs", got)
	}
}

// TestSimulatedBackend: the simulated backend runs a pod and a resize on
// one in-memory cgroup tree of the config's version, survives a kubelet
// restart, and Close leaves nothing in the runtime or the kernel.
func TestSimulatedBackend(t *testing.T) {
	ctx := context.Background()
	b, err := resize.Simulated(resize.NodeConfig{CgroupVersion: cgroup.V1})
	if err != nil {
		t.Fatal(err)
	}
	if cfg := b.Config(); cfg.CgroupVersion != cgroup.V1 || cfg.CgroupDriver != cgroup.DriverCgroupfs || cfg.CgroupRoot != "" || b.CgroupParent() != "" {
		t.Errorf("Config() = version %v, driver %q, root %q, parent %q; want v1, cgroupfs and no root or parent",
			cfg.CgroupVersion, cfg.CgroupDriver, cfg.CgroupRoot, b.CgroupParent())
	}
	kernel, ok := b.Cgroups().(*cgroup.SimKernel)
	if !ok || kernel.Version() != cgroup.V1 {
		t.Fatalf("Cgroups() = %T, want a v1 *cgroup.SimKernel", b.Cgroups())
	}
	mem, ok := b.Runtime().(*cri.SimContainerd)
	if !ok {
		t.Fatalf("Runtime() = %T, want *cri.SimContainerd", b.Runtime())
	}
	node, cluster, deps := backendtest.NewNodeOn(t, b)
	podCgroup, ctr := backendtest.AddAndResize(t, node, cluster)
	if got := kernel.Files(podCgroup)["cpu.cfs_quota_us"]; got != "200000" {
		t.Errorf("pod cgroup cpu.cfs_quota_us = %q, want 200000", got)
	}
	// The runtime wrote the container's cgroup into the same kernel.
	if _, err := kernel.ReadFile(podCgroup+"/"+ctr, "cpu.cfs_quota_us"); err != nil {
		t.Errorf("container cgroup in the node's kernel: %v", err)
	}
	node = backendtest.RestartKeeps(t, node, b, deps, ctr)
	node.Close()

	if err := b.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if ctrs, _ := mem.ListContainers(ctx, nil); len(ctrs) != 0 {
		t.Errorf("containers left after Close: %v", ctrs)
	}
	if sbs, _ := mem.ListPodSandbox(ctx, nil); len(sbs) != 0 {
		t.Errorf("sandboxes left after Close: %v", sbs)
	}
	if paths := kernel.Paths(); !slices.Equal(paths, []string{""}) {
		t.Errorf("cgroups left after Close: %v", paths)
	}
	if err := b.Close(ctx); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}

// TestBackendCloseAfterAFailedStart: Close is safe after a NewNode that
// failed, and removes what the failed start left.
func TestBackendCloseAfterAFailedStart(t *testing.T) {
	ctx := context.Background()
	b, err := resize.Simulated(resize.NodeConfig{})
	if err != nil {
		t.Fatal(err)
	}
	// What a kubelet that crashed mid-start would leave: a sandbox and its
	// pod cgroup.
	mem := b.Runtime().(*cri.SimContainerd)
	if _, err := mem.RunPodSandbox(ctx, &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "x", Namespace: "default", Uid: "u1"},
		Linux:    &runtimeapi.LinuxPodSandboxConfig{CgroupParent: "/kubepods/besteffort/podu1"},
	}, ""); err != nil {
		t.Fatal(err)
	}
	cfg := b.Config()
	cfg.Profile = "0.99"
	if _, err := resize.NewNode(ctx, cfg, b.Deps(resize.Deps{Cluster: resize.NewCluster(resize.ClusterOptions{})})); err == nil {
		t.Fatal("NewNode accepted an unknown profile")
	}
	if err := b.Close(ctx); err != nil {
		t.Fatalf("Close after a failed start: %v", err)
	}
	if sbs, _ := mem.ListPodSandbox(ctx, nil); len(sbs) != 0 {
		t.Errorf("sandboxes left: %v", sbs)
	}
	if paths := b.Cgroups().(*cgroup.SimKernel).Paths(); len(paths) != 1 {
		t.Errorf("cgroups left: %v", paths)
	}
}

// TestSimulatedBackendRefusesIncoherentOptions: options that make the
// in-memory runtime disagree with the config are refused at once.
func TestSimulatedBackendRefusesIncoherentOptions(t *testing.T) {
	_, err := resize.Simulated(resize.NodeConfig{CgroupDriver: cgroup.DriverCgroupfs}, resize.WithSimContainerd(cri.WithDriver(cgroup.DriverSystemd)))
	var me *resize.MismatchError
	if !errors.Is(err, resize.ErrIncoherent) || !errors.As(err, &me) || me.WantValue != "cgroupfs" || me.HaveValue != "systemd" {
		t.Errorf("Simulated with a systemd runtime for a cgroupfs config = %v, want a cgroup driver mismatch", err)
	}
	if _, err := resize.Simulated(resize.NodeConfig{CgroupVersion: 3}); err == nil || !strings.Contains(err.Error(), "cgroupVersion") {
		t.Errorf("Simulated with cgroup version 3 = %v, want an error naming cgroupVersion", err)
	}
}

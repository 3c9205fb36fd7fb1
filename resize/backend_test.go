package resize_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/allocation/state"
	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/resize"
)

// cpuLimit2 raises the demo pod's CPU limit from 1 to 2.
const cpuLimit2 = `{"spec":{"containers":[{"name":"app","resources":{"limits":{"cpu":"2"}}}]}}`

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

// newNodeOn starts a node on b with in-memory checkpoints that survive a
// restart, and returns it with its cluster and its Deps.
func newNodeOn(t *testing.T, b *resize.Backend) (*resize.Node, *resize.Cluster, resize.Deps) {
	t.Helper()
	cluster := resize.NewCluster(resize.ClusterOptions{})
	deps := b.Deps(resize.Deps{Cluster: cluster, Allocated: state.NewMemory(), Actuated: state.NewMemory()})
	node, err := resize.NewNode(context.Background(), b.Config(), deps)
	if err != nil {
		t.Fatalf("NewNode on the backend: %v", err)
	}
	return node, cluster, deps
}

// addAndResize adds the demo pod, raises its CPU limit to 2 and returns
// its pod cgroup and container ID, checking that the resize completed.
func addAndResize(t *testing.T, node *resize.Node, cluster *resize.Cluster) (podCgroup, containerID string) {
	t.Helper()
	ctx := context.Background()
	if _, err := node.AddPod(ctx, demoPod()); err != nil {
		t.Fatal(err)
	}
	if _, err := node.Resize(ctx, resize.ResizeOp{Namespace: "default", Name: "demo", Patch: []byte(cpuLimit2)}); err != nil {
		t.Fatal(err)
	}
	pod, err := cluster.GetPod(ctx, "default", "demo")
	if err != nil {
		t.Fatal(err)
	}
	if got := pod.Status.ContainerStatuses[0].Resources.Limits.Cpu().String(); got != "2" {
		t.Errorf("status cpu limit after the resize = %s, want 2", got)
	}
	info, err := node.Pod("default", "demo")
	if err != nil {
		t.Fatal(err)
	}
	return info.PodCgroup, info.ContainerIDs["app"]
}

// restartKeeps restarts the kubelet on the same Deps, as a kubelet
// restart does, and checks that Node.Close tore nothing down: the new
// node finds the pod with the same container.
func restartKeeps(t *testing.T, node *resize.Node, b *resize.Backend, deps resize.Deps, containerID string) *resize.Node {
	t.Helper()
	node.Close()
	nn, err := resize.NewNode(context.Background(), b.Config(), deps)
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	info, err := nn.Pod("default", "demo")
	if err != nil || info.ContainerIDs["app"] != containerID {
		t.Fatalf("after a restart the pod is %+v, %v; want it running with container %s", info, err, containerID)
	}
	return nn
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
	node, cluster, deps := newNodeOn(t, b)
	podCgroup, ctr := addAndResize(t, node, cluster)
	if got := kernel.Files(podCgroup)["cpu.cfs_quota_us"]; got != "200000" {
		t.Errorf("pod cgroup cpu.cfs_quota_us = %q, want 200000", got)
	}
	// The runtime wrote the container's cgroup into the same kernel.
	if _, err := kernel.ReadFile(podCgroup+"/"+ctr, "cpu.cfs_quota_us"); err != nil {
		t.Errorf("container cgroup in the node's kernel: %v", err)
	}
	node = restartKeeps(t, node, b, deps, ctr)
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

// hostWithKubepods is an in-memory kernel standing for a host that runs a
// kubelet of its own: it has a kubepods tree with a pod cgroup.
func hostWithKubepods(t *testing.T, v cgroup.Version) *cgroup.SimKernel {
	t.Helper()
	host := cgroup.NewSimKernel(v)
	if err := host.Create("kubepods/besteffort/podhost"); err != nil {
		t.Fatal(err)
	}
	return host
}

// checkHostKubepods checks that the host's own kubepods tree is as it was.
func checkHostKubepods(t *testing.T, host *cgroup.SimKernel) {
	t.Helper()
	var kube []string
	for _, p := range host.Paths() {
		if p == "kubepods" || strings.HasPrefix(p, "kubepods/") {
			kube = append(kube, p)
		}
	}
	if want := []string{"kubepods", "kubepods/besteffort", "kubepods/besteffort/podhost"}; !slices.Equal(kube, want) {
		t.Errorf("the host's kubepods is %v, want it untouched: %v", kube, want)
	}
	for _, w := range host.Writes() {
		if w.Path == "kubepods" || strings.HasPrefix(w.Path, "kubepods/") {
			t.Errorf("a write into the host's kubepods: %+v", w)
		}
	}
}

// TestHostCgroupsBackend: the host cgroups backend (on an in-memory kernel
// standing for the host) puts the node's cgroups below its private parent,
// never into the host's kubepods, and Close removes the parent's tree
// and nothing else.
func TestHostCgroupsBackend(t *testing.T) {
	ctx := context.Background()
	host := hostWithKubepods(t, cgroup.V1)
	b, err := resize.HostCgroups(resize.NodeConfig{}, resize.WithCgroupManager(host))
	if err != nil {
		t.Fatal(err)
	}
	parent := b.CgroupParent()
	if !regexp.MustCompile(fmt.Sprintf(`^resizelet-%d-\d+$`, os.Getpid())).MatchString(parent) {
		t.Errorf("CgroupParent() = %q, want resizelet-<pid>-<n>", parent)
	}
	if cfg := b.Config(); cfg.CgroupVersion != cgroup.V1 || cfg.CgroupRoot != parent {
		t.Errorf("Config() = version %v, root %q; want the host's v1 and the parent %q", cfg.CgroupVersion, cfg.CgroupRoot, parent)
	}
	node, cluster, deps := newNodeOn(t, b)
	podCgroup, ctr := addAndResize(t, node, cluster)
	if !strings.HasPrefix(podCgroup, parent+"/kubepods/") {
		t.Errorf("pod cgroup %q, want it below %s/kubepods", podCgroup, parent)
	}
	if got := host.Files(podCgroup)["cpu.cfs_quota_us"]; got != "200000" {
		t.Errorf("pod cgroup cpu.cfs_quota_us = %q, want 200000", got)
	}
	node = restartKeeps(t, node, b, deps, ctr)
	node.Close()
	checkHostKubepods(t, host)

	if err := b.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if left := slices.DeleteFunc(host.Paths(), func(p string) bool { return !strings.HasPrefix(p, parent) }); len(left) > 0 {
		t.Errorf("cgroups left below the private parent: %v", left)
	}
	if ctrs, _ := b.Runtime().ListContainers(ctx, nil); len(ctrs) != 0 {
		t.Errorf("containers left: %v", ctrs)
	}
	checkHostKubepods(t, host)
}

// TestHostCgroupsBackendRefusals: a config that names another cgroup
// version than the host's, and a cgroup parent that is not private, are
// refused with what is wrong.
func TestHostCgroupsBackendRefusals(t *testing.T) {
	_, err := resize.HostCgroups(resize.NodeConfig{CgroupVersion: cgroup.V2}, resize.WithCgroupManager(cgroup.NewSimKernel(cgroup.V1)))
	want := "host cgroups backend: cgroup version mismatch: NodeConfig.CgroupVersion is v2, but the cgroup manager given (*cgroup.SimKernel) is v1"
	if !errors.Is(err, resize.ErrIncoherent) || err.Error() != want {
		t.Errorf("HostCgroups(v2 config, v1 host) = %v\nwant %s", err, want)
	}
	for _, parent := range []string{"kubepods", "kubepods.slice/x", "a/../b", "/"} {
		if _, err := resize.HostCgroups(resize.NodeConfig{}, resize.WithCgroupManager(cgroup.NewSimKernel(cgroup.V2)), resize.WithCgroupParent(parent)); err == nil || !strings.Contains(err.Error(), "cgroup parent") {
			t.Errorf("HostCgroups with cgroup parent %q = %v, want it refused", parent, err)
		}
	}
	b, err := resize.HostCgroups(resize.NodeConfig{CgroupRoot: "/mine"}, resize.WithCgroupManager(cgroup.NewSimKernel(cgroup.V2)), resize.WithCgroupParent("/test-parent/"))
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Config().CgroupRoot; got != "test-parent/mine" {
		t.Errorf("CgroupRoot = %q, want the config's own root below the parent: test-parent/mine", got)
	}
}

// fakeCRI serves an in-memory runtime over the CRI, as a real runtime
// does: a runtime service that answers RuntimeConfig with driver (or
// Unimplemented when driver is ""), and an image service that has the
// images in have and can pull those in pullable.
type fakeCRI struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	runtimeapi.UnimplementedImageServiceServer
	rt       *cri.SimContainerd
	driver   cgroup.Driver
	have     map[string]bool
	pullable map[string]bool
	pulled   []string
}

// status turns the in-memory runtime's errors into gRPC statuses.
func status(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, cri.ErrNotFound):
		return grpcstatus.Error(codes.NotFound, err.Error())
	}
	return grpcstatus.Error(codes.Unknown, err.Error())
}

func (f *fakeCRI) Version(context.Context, *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	return &runtimeapi.VersionResponse{Version: "0.1.0", RuntimeName: "fake", RuntimeVersion: "test", RuntimeApiVersion: "v1"}, nil
}

func (f *fakeCRI) RuntimeConfig(context.Context, *runtimeapi.RuntimeConfigRequest) (*runtimeapi.RuntimeConfigResponse, error) {
	if f.driver == "" {
		return nil, grpcstatus.Error(codes.Unimplemented, "unknown method RuntimeConfig for service runtime.v1.RuntimeService")
	}
	d := runtimeapi.CgroupDriver_CGROUPFS
	if f.driver == cgroup.DriverSystemd {
		d = runtimeapi.CgroupDriver_SYSTEMD
	}
	return &runtimeapi.RuntimeConfigResponse{Linux: &runtimeapi.LinuxRuntimeConfiguration{CgroupDriver: d}}, nil
}

func (f *fakeCRI) RunPodSandbox(ctx context.Context, req *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error) {
	id, err := f.rt.RunPodSandbox(ctx, req.Config, req.RuntimeHandler)
	return &runtimeapi.RunPodSandboxResponse{PodSandboxId: id}, status(err)
}

func (f *fakeCRI) StopPodSandbox(ctx context.Context, req *runtimeapi.StopPodSandboxRequest) (*runtimeapi.StopPodSandboxResponse, error) {
	return &runtimeapi.StopPodSandboxResponse{}, status(f.rt.StopPodSandbox(ctx, req.PodSandboxId))
}

func (f *fakeCRI) RemovePodSandbox(ctx context.Context, req *runtimeapi.RemovePodSandboxRequest) (*runtimeapi.RemovePodSandboxResponse, error) {
	return &runtimeapi.RemovePodSandboxResponse{}, status(f.rt.RemovePodSandbox(ctx, req.PodSandboxId))
}

func (f *fakeCRI) ListPodSandbox(ctx context.Context, req *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	items, err := f.rt.ListPodSandbox(ctx, req.Filter)
	return &runtimeapi.ListPodSandboxResponse{Items: items}, status(err)
}

func (f *fakeCRI) UpdatePodSandboxResources(ctx context.Context, req *runtimeapi.UpdatePodSandboxResourcesRequest) (*runtimeapi.UpdatePodSandboxResourcesResponse, error) {
	resp, err := f.rt.UpdatePodSandboxResources(ctx, req)
	return resp, status(err)
}

func (f *fakeCRI) CreateContainer(ctx context.Context, req *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error) {
	id, err := f.rt.CreateContainer(ctx, req.PodSandboxId, req.Config, req.SandboxConfig)
	return &runtimeapi.CreateContainerResponse{ContainerId: id}, status(err)
}

func (f *fakeCRI) StartContainer(ctx context.Context, req *runtimeapi.StartContainerRequest) (*runtimeapi.StartContainerResponse, error) {
	return &runtimeapi.StartContainerResponse{}, status(f.rt.StartContainer(ctx, req.ContainerId))
}

func (f *fakeCRI) StopContainer(ctx context.Context, req *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error) {
	return &runtimeapi.StopContainerResponse{}, status(f.rt.StopContainer(ctx, req.ContainerId, req.Timeout))
}

func (f *fakeCRI) RemoveContainer(ctx context.Context, req *runtimeapi.RemoveContainerRequest) (*runtimeapi.RemoveContainerResponse, error) {
	return &runtimeapi.RemoveContainerResponse{}, status(f.rt.RemoveContainer(ctx, req.ContainerId))
}

func (f *fakeCRI) ListContainers(ctx context.Context, req *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	cs, err := f.rt.ListContainers(ctx, req.Filter)
	return &runtimeapi.ListContainersResponse{Containers: cs}, status(err)
}

func (f *fakeCRI) ContainerStatus(ctx context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	resp, err := f.rt.ContainerStatus(ctx, req.ContainerId, req.Verbose)
	return resp, status(err)
}

func (f *fakeCRI) UpdateContainerResources(ctx context.Context, req *runtimeapi.UpdateContainerResourcesRequest) (*runtimeapi.UpdateContainerResourcesResponse, error) {
	err := f.rt.UpdateContainerResources(ctx, req.ContainerId, &runtimeapi.ContainerResources{Linux: req.Linux, Windows: req.Windows})
	return &runtimeapi.UpdateContainerResourcesResponse{}, status(err)
}

func (f *fakeCRI) ContainerStats(ctx context.Context, req *runtimeapi.ContainerStatsRequest) (*runtimeapi.ContainerStatsResponse, error) {
	st, err := f.rt.ContainerStats(ctx, req.ContainerId)
	return &runtimeapi.ContainerStatsResponse{Stats: st}, status(err)
}

func (f *fakeCRI) ExecSync(ctx context.Context, req *runtimeapi.ExecSyncRequest) (*runtimeapi.ExecSyncResponse, error) {
	out, errOut, err := f.rt.ExecSync(ctx, req.ContainerId, req.Cmd, time.Duration(req.Timeout)*time.Second)
	return &runtimeapi.ExecSyncResponse{Stdout: out, Stderr: errOut}, status(err)
}

func (f *fakeCRI) ImageStatus(_ context.Context, req *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error) {
	if name := req.GetImage().GetImage(); f.have[name] {
		return &runtimeapi.ImageStatusResponse{Image: &runtimeapi.Image{Id: "sha256:" + name, RepoTags: []string{name}}}, nil
	}
	return &runtimeapi.ImageStatusResponse{}, nil
}

func (f *fakeCRI) PullImage(_ context.Context, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	name := req.GetImage().GetImage()
	if !f.pullable[name] {
		return nil, grpcstatus.Errorf(codes.NotFound, "failed to resolve reference %q: not found", name)
	}
	f.have[name] = true
	f.pulled = append(f.pulled, name)
	return &runtimeapi.PullImageResponse{ImageRef: "sha256:" + name}, nil
}

// serveFakeCRI serves f on a unix socket and returns its endpoint.
func serveFakeCRI(t *testing.T, f *fakeCRI) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "cri.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer()
	runtimeapi.RegisterRuntimeServiceServer(g, f)
	runtimeapi.RegisterImageServiceServer(g, f)
	go g.Serve(lis)
	t.Cleanup(g.Stop)
	return "unix://" + sock
}

// newFakeHost is a host for the Remote backend: an in-memory kernel with
// the host's own kubepods, and an in-memory containerd with the driver
// served over the CRI, which has busybox:local.
func newFakeHost(t *testing.T, driver cgroup.Driver) (*cgroup.SimKernel, *fakeCRI, string) {
	t.Helper()
	host := hostWithKubepods(t, cgroup.V1)
	rtDriver := driver
	if rtDriver == "" {
		rtDriver = cgroup.DriverCgroupfs
	}
	f := &fakeCRI{
		rt:     cri.NewSimContainerd(host, cri.WithDriver(rtDriver)),
		driver: driver, have: map[string]bool{"busybox:local": true}, pullable: map[string]bool{},
	}
	return host, f, serveFakeCRI(t, f)
}

// TestRemoteBackend: the Remote backend (over a CRI server standing for
// containerd on an in-memory host) labels what the node creates, shows the
// node only that, puts the node's cgroups below its private parent, and
// Close removes the labelled sandboxes and containers and the parent's
// cgroups, leaving the host's own pods and kubepods alone.
func TestRemoteBackend(t *testing.T) {
	ctx := context.Background()
	host, f, endpoint := newFakeHost(t, cgroup.DriverCgroupfs)
	// Another kubelet's pod on the same runtime.
	foreign, err := f.rt.RunPodSandbox(ctx, &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "host-pod", Namespace: "kube-system", Uid: "host"},
		Labels:   map[string]string{cri.LabelPodName: "host-pod", cri.LabelPodNamespace: "kube-system", cri.LabelPodUID: "host"},
		Linux:    &runtimeapi.LinuxPodSandboxConfig{CgroupParent: "/kubepods/besteffort/podhost"},
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := resize.Remote(ctx, endpoint, "busybox:local", resize.NodeConfig{}, resize.WithCgroupManager(host))
	if err != nil {
		t.Fatal(err)
	}
	parent := b.CgroupParent()
	cfg := b.Config()
	if cfg.Image != "busybox:local" || cfg.CgroupRoot != parent || cfg.CgroupVersion != cgroup.V1 || cfg.CgroupDriver != cgroup.DriverCgroupfs || len(cfg.Command) == 0 {
		t.Errorf("Config() = image %q, root %q, version %v, driver %q, command %q; want busybox:local, %s, v1, cgroupfs and a command",
			cfg.Image, cfg.CgroupRoot, cfg.CgroupVersion, cfg.CgroupDriver, cfg.Command, parent)
	}
	if sbs, _ := b.Runtime().ListPodSandbox(ctx, nil); len(sbs) != 0 {
		t.Errorf("the backend's runtime lists %d sandboxes before any pod, want none (the host's is not the node's)", len(sbs))
	}
	node, cluster, deps := newNodeOn(t, b)
	podCgroup, ctr := addAndResize(t, node, cluster)
	if !strings.HasPrefix(podCgroup, parent+"/kubepods/") {
		t.Errorf("pod cgroup %q, want it below %s/kubepods", podCgroup, parent)
	}
	if got := host.Files(podCgroup)["cpu.cfs_quota_us"]; got != "200000" {
		t.Errorf("pod cgroup cpu.cfs_quota_us = %q, want 200000", got)
	}
	st, err := f.rt.ContainerStatus(ctx, ctr, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.GetStatus().GetLabels()[resize.LabelBackend]; got != parent {
		t.Errorf("container label %s = %q, want %q", resize.LabelBackend, got, parent)
	}
	if got := st.GetStatus().GetImage().GetImage(); got != "busybox:local" {
		t.Errorf("container image %q, want busybox:local", got)
	}
	node = restartKeeps(t, node, b, deps, ctr)
	node.Close()

	if err := b.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	sbs, _ := f.rt.ListPodSandbox(ctx, nil)
	if len(sbs) != 1 || sbs[0].Id != foreign {
		t.Errorf("sandboxes after Close: %v, want only the host's %s", sbs, foreign)
	}
	if ctrs, _ := f.rt.ListContainers(ctx, nil); len(ctrs) != 0 {
		t.Errorf("containers left after Close: %v", ctrs)
	}
	if left := slices.DeleteFunc(host.Paths(), func(p string) bool { return !strings.HasPrefix(p, parent) }); len(left) > 0 {
		t.Errorf("cgroups left below the private parent: %v", left)
	}
	checkHostKubepods(t, host)
	if err := b.Close(ctx); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}

// TestRemoteBackendChecksTheImage: an image the runtime does not have is
// refused before any pod (ErrImageNotPresent, naming the image and the
// endpoint), unless WithPullImage pulls it; a failed pull says so.
func TestRemoteBackendChecksTheImage(t *testing.T) {
	ctx := context.Background()
	host, f, endpoint := newFakeHost(t, "")
	f.pullable["pause:3.10"] = true
	_, err := resize.Remote(ctx, endpoint, "pause:3.10", resize.NodeConfig{}, resize.WithCgroupManager(host))
	if !errors.Is(err, resize.ErrImageNotPresent) || !strings.Contains(err.Error(), `image "pause:3.10" is not present in the runtime at `+endpoint) {
		t.Errorf("Remote with a missing image = %v, want ErrImageNotPresent naming the image and the endpoint", err)
	}
	b, err := resize.Remote(ctx, endpoint, "pause:3.10", resize.NodeConfig{}, resize.WithCgroupManager(host), resize.WithPullImage())
	if err != nil {
		t.Fatalf("Remote with WithPullImage: %v", err)
	}
	defer b.Close(ctx)
	if got := b.Config().CgroupDriver; got != cgroup.DriverCgroupfs {
		t.Errorf("CgroupDriver on a runtime that cannot tell = %q, want the kubelet's default cgroupfs", got)
	}
	if !slices.Equal(f.pulled, []string{"pause:3.10"}) {
		t.Errorf("pulled %v, want [pause:3.10]", f.pulled)
	}
	_, err = resize.Remote(ctx, endpoint, "nowhere:1", resize.NodeConfig{}, resize.WithCgroupManager(host), resize.WithPullImage())
	if err == nil || !strings.Contains(err.Error(), `pulling it failed: failed to resolve reference "nowhere:1"`) {
		t.Errorf("Remote with an image that cannot be pulled = %v, want the runtime's pull error", err)
	}
	if _, err := resize.Remote(ctx, endpoint, "", resize.NodeConfig{}, resize.WithCgroupManager(host)); err == nil || !strings.Contains(err.Error(), "an image is required") {
		t.Errorf("Remote without an image = %v, want it refused", err)
	}
}

// TestRemoteBackendDriver: the driver the runtime reports through
// RuntimeConfig is the node's when the config leaves it empty, and a
// config naming the other is refused; a runtime that answers
// Unimplemented (containerd 1.6) is taken with the configured driver. The
// systemd driver is refused with how to configure the runtime instead.
func TestRemoteBackendDriver(t *testing.T) {
	ctx := context.Background()
	host, _, endpoint := newFakeHost(t, cgroup.DriverCgroupfs)
	b, err := resize.Remote(ctx, endpoint, "busybox:local", resize.NodeConfig{}, resize.WithCgroupManager(host))
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Config().CgroupDriver; got != cgroup.DriverCgroupfs {
		t.Errorf("CgroupDriver = %q, want the runtime's cgroupfs", got)
	}
	b.Close(ctx)
	_, err = resize.Remote(ctx, endpoint, "busybox:local", resize.NodeConfig{CgroupDriver: cgroup.DriverSystemd}, resize.WithCgroupManager(host))
	var me *resize.MismatchError
	if !errors.Is(err, resize.ErrIncoherent) || !errors.As(err, &me) || me.Setting != "cgroup driver" ||
		!strings.Contains(err.Error(), "NodeConfig.CgroupDriver is systemd, but the driver Deps.Runtime") || !strings.HasSuffix(err.Error(), "reports is cgroupfs") {
		t.Errorf("Remote(systemd config, cgroupfs runtime) = %v, want a cgroup driver mismatch naming both", err)
	}

	// A runtime on the systemd driver: a cgroupfs config disagrees with it,
	// and an empty one would take it, which a real runtime cannot do below
	// a private parent.
	host, _, endpoint = newFakeHost(t, cgroup.DriverSystemd)
	_, err = resize.Remote(ctx, endpoint, "busybox:local", resize.NodeConfig{}, resize.WithCgroupManager(host))
	if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "SystemdCgroup = false") {
		t.Errorf("Remote on a systemd runtime = %v, want ErrUnsupported saying how to configure the runtime", err)
	}
	_, err = resize.Remote(ctx, endpoint, "busybox:local", resize.NodeConfig{CgroupDriver: cgroup.DriverCgroupfs}, resize.WithCgroupManager(host))
	if !errors.Is(err, resize.ErrIncoherent) || !errors.As(err, &me) || me.Setting != "cgroup driver" ||
		!strings.Contains(err.Error(), "NodeConfig.CgroupDriver is cgroupfs, but the driver Deps.Runtime") || !strings.HasSuffix(err.Error(), "reports is systemd") {
		t.Errorf("Remote(cgroupfs config, systemd runtime) = %v, want a cgroup driver mismatch naming both", err)
	}
	_, err = resize.Remote(ctx, endpoint, "busybox:local", resize.NodeConfig{CgroupVersion: cgroup.V2}, resize.WithCgroupManager(host))
	if !errors.Is(err, resize.ErrIncoherent) || !strings.Contains(err.Error(), "NodeConfig.CgroupVersion is v2, but the cgroup manager given (*cgroup.SimKernel) is v1") {
		t.Errorf("Remote(v2 config, v1 host) = %v, want a cgroup version mismatch naming both", err)
	}

	// A runtime that cannot tell (containerd 1.6) is not refused: the
	// configured driver stands, cgroupfs when none is.
	host2, _, old := newFakeHost(t, "")
	for _, d := range []cgroup.Driver{"", cgroup.DriverCgroupfs} {
		b, err = resize.Remote(ctx, old, "busybox:local", resize.NodeConfig{CgroupDriver: d}, resize.WithCgroupManager(host2))
		if err != nil {
			t.Fatalf("Remote(driver %q) on a runtime that cannot tell its driver: %v", d, err)
		}
		if got := b.Config().CgroupDriver; got != cgroup.DriverCgroupfs {
			t.Errorf("CgroupDriver = %q, want cgroupfs", got)
		}
		b.Close(ctx)
	}
}

package host_test

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

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/host"
	"github.com/resizelet/resizelet/resize/internal/backendtest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// hostWithKubepods is an in-memory kernel standing for a host that runs a
// kubelet of its own: it has a kubepods tree with a pod cgroup.
func hostWithKubepods(t *testing.T, v cgroup.Version) *cgroup.SimKernel {
	t.Helper()
	hostKernel := cgroup.NewSimKernel(v)
	if err := hostKernel.Create("kubepods/besteffort/podhost"); err != nil {
		t.Fatal(err)
	}
	return hostKernel
}

// checkHostKubepods checks that the host's own kubepods tree is as it was.
func checkHostKubepods(t *testing.T, hostKernel *cgroup.SimKernel) {
	t.Helper()
	var kube []string
	for _, p := range hostKernel.Paths() {
		if p == "kubepods" || strings.HasPrefix(p, "kubepods/") {
			kube = append(kube, p)
		}
	}
	if want := []string{"kubepods", "kubepods/besteffort", "kubepods/besteffort/podhost"}; !slices.Equal(kube, want) {
		t.Errorf("the host's kubepods is %v, want it untouched: %v", kube, want)
	}
	for _, w := range hostKernel.Writes() {
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
	hostKernel := hostWithKubepods(t, cgroup.V1)
	b, err := host.Cgroups(resize.NodeConfig{}, host.WithCgroupManager(hostKernel))
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
	node, cluster, deps := backendtest.NewNodeOn(t, b)
	podCgroup, ctr := backendtest.AddAndResize(t, node, cluster)
	if !strings.HasPrefix(podCgroup, parent+"/kubepods/") {
		t.Errorf("pod cgroup %q, want it below %s/kubepods", podCgroup, parent)
	}
	if got := hostKernel.Files(podCgroup)["cpu.cfs_quota_us"]; got != "200000" {
		t.Errorf("pod cgroup cpu.cfs_quota_us = %q, want 200000", got)
	}
	node = backendtest.RestartKeeps(t, node, b, deps, ctr)
	node.Close()
	checkHostKubepods(t, hostKernel)

	if err := b.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if left := slices.DeleteFunc(hostKernel.Paths(), func(p string) bool { return !strings.HasPrefix(p, parent) }); len(left) > 0 {
		t.Errorf("cgroups left below the private parent: %v", left)
	}
	if ctrs, _ := b.Runtime().ListContainers(ctx, nil); len(ctrs) != 0 {
		t.Errorf("containers left: %v", ctrs)
	}
	checkHostKubepods(t, hostKernel)
}

// TestHostCgroupsBackendRefusals: a config that names another cgroup
// version than the host's, and a cgroup parent that is not private, are
// refused with what is wrong.
func TestHostCgroupsBackendRefusals(t *testing.T) {
	_, err := host.Cgroups(resize.NodeConfig{CgroupVersion: cgroup.V2}, host.WithCgroupManager(cgroup.NewSimKernel(cgroup.V1)))
	want := "host cgroups backend: cgroup version mismatch: NodeConfig.CgroupVersion is v2, but the cgroup manager given (*cgroup.SimKernel) is v1"
	if !errors.Is(err, resize.ErrIncoherent) || err.Error() != want {
		t.Errorf("HostCgroups(v2 config, v1 host) = %v\nwant %s", err, want)
	}
	for _, parent := range []string{"kubepods", "kubepods.slice/x", "a/../b", "/"} {
		if _, err := host.Cgroups(resize.NodeConfig{}, host.WithCgroupManager(cgroup.NewSimKernel(cgroup.V2)), host.WithCgroupParent(parent)); err == nil || !strings.Contains(err.Error(), "cgroup parent") {
			t.Errorf("HostCgroups with cgroup parent %q = %v, want it refused", parent, err)
		}
	}
	b, err := host.Cgroups(resize.NodeConfig{CgroupRoot: "/mine"}, host.WithCgroupManager(cgroup.NewSimKernel(cgroup.V2)), host.WithCgroupParent("/test-parent/"))
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
	hostKernel := hostWithKubepods(t, cgroup.V1)
	rtDriver := driver
	if rtDriver == "" {
		rtDriver = cgroup.DriverCgroupfs
	}
	f := &fakeCRI{
		rt:     cri.NewSimContainerd(hostKernel, cri.WithDriver(rtDriver)),
		driver: driver, have: map[string]bool{"busybox:local": true}, pullable: map[string]bool{},
	}
	return hostKernel, f, serveFakeCRI(t, f)
}

// TestRemoteBackend: the Remote backend (over a CRI server standing for
// containerd on an in-memory host) labels what the node creates, shows the
// node only that, puts the node's cgroups below its private parent, and
// Close removes the labelled sandboxes and containers and the parent's
// cgroups, leaving the host's own pods and kubepods alone.
func TestRemoteBackend(t *testing.T) {
	ctx := context.Background()
	hostKernel, f, endpoint := newFakeHost(t, cgroup.DriverCgroupfs)
	// Another kubelet's pod on the same runtime.
	foreign, err := f.rt.RunPodSandbox(ctx, &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "host-pod", Namespace: "kube-system", Uid: "host"},
		Labels:   map[string]string{cri.LabelPodName: "host-pod", cri.LabelPodNamespace: "kube-system", cri.LabelPodUID: "host"},
		Linux:    &runtimeapi.LinuxPodSandboxConfig{CgroupParent: "/kubepods/besteffort/podhost"},
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := host.Remote(ctx, endpoint, "busybox:local", resize.NodeConfig{}, host.WithCgroupManager(hostKernel))
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
	node, cluster, deps := backendtest.NewNodeOn(t, b)
	podCgroup, ctr := backendtest.AddAndResize(t, node, cluster)
	if !strings.HasPrefix(podCgroup, parent+"/kubepods/") {
		t.Errorf("pod cgroup %q, want it below %s/kubepods", podCgroup, parent)
	}
	if got := hostKernel.Files(podCgroup)["cpu.cfs_quota_us"]; got != "200000" {
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
	node = backendtest.RestartKeeps(t, node, b, deps, ctr)
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
	if left := slices.DeleteFunc(hostKernel.Paths(), func(p string) bool { return !strings.HasPrefix(p, parent) }); len(left) > 0 {
		t.Errorf("cgroups left below the private parent: %v", left)
	}
	checkHostKubepods(t, hostKernel)
	if err := b.Close(ctx); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}

// TestRemoteBackendRuntimeHandler: with WithRuntimeHandler the node's
// sandboxes are run with that handler (the node's pods name none), and
// without it with the runtime's default.
func TestRemoteBackendRuntimeHandler(t *testing.T) {
	ctx := context.Background()
	for _, handler := range []string{"", "crun"} {
		hostKernel, f, endpoint := newFakeHost(t, cgroup.DriverCgroupfs)
		opts := []host.Option{host.WithCgroupManager(hostKernel)}
		if handler != "" {
			opts = append(opts, host.WithRuntimeHandler(handler))
		}
		b, err := host.Remote(ctx, endpoint, "busybox:local", resize.NodeConfig{}, opts...)
		if err != nil {
			t.Fatal(err)
		}
		node, cluster, _ := backendtest.NewNodeOn(t, b)
		backendtest.AddAndResize(t, node, cluster)
		sbs, err := f.rt.ListPodSandbox(ctx, nil)
		if err != nil || len(sbs) == 0 {
			t.Fatalf("handler %q: the runtime lists %d sandboxes (%v), want the node's", handler, len(sbs), err)
		}
		for _, sb := range sbs {
			if sb.RuntimeHandler != handler {
				t.Errorf("handler %q: sandbox %s run with runtime handler %q", handler, sb.GetMetadata().GetName(), sb.RuntimeHandler)
			}
		}
		node.Close()
		if err := b.Close(ctx); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
}

// TestRemoteBackendChecksTheImage: an image the runtime does not have is
// refused before any pod (ErrImageNotPresent, naming the image and the
// endpoint), unless WithPullImage pulls it; a failed pull says so.
func TestRemoteBackendChecksTheImage(t *testing.T) {
	ctx := context.Background()
	hostKernel, f, endpoint := newFakeHost(t, "")
	f.pullable["pause:3.10"] = true
	_, err := host.Remote(ctx, endpoint, "pause:3.10", resize.NodeConfig{}, host.WithCgroupManager(hostKernel))
	if !errors.Is(err, host.ErrImageNotPresent) || !strings.Contains(err.Error(), `image "pause:3.10" is not present in the runtime at `+endpoint) {
		t.Errorf("Remote with a missing image = %v, want ErrImageNotPresent naming the image and the endpoint", err)
	}
	b, err := host.Remote(ctx, endpoint, "pause:3.10", resize.NodeConfig{}, host.WithCgroupManager(hostKernel), host.WithPullImage())
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
	_, err = host.Remote(ctx, endpoint, "nowhere:1", resize.NodeConfig{}, host.WithCgroupManager(hostKernel), host.WithPullImage())
	if err == nil || !strings.Contains(err.Error(), `pulling it failed: failed to resolve reference "nowhere:1"`) {
		t.Errorf("Remote with an image that cannot be pulled = %v, want the runtime's pull error", err)
	}
	if _, err := host.Remote(ctx, endpoint, "", resize.NodeConfig{}, host.WithCgroupManager(hostKernel)); err == nil || !strings.Contains(err.Error(), "an image is required") {
		t.Errorf("Remote without an image = %v, want it refused", err)
	}
}

// TestRemoteBackendDriver: the driver the runtime reports through
// RuntimeConfig is the node's when the config leaves it empty, and a
// config naming the other is refused; a runtime that answers
// Unimplemented (containerd 1.6) is taken with the configured driver. The
// systemd driver is refused with how to configure the runtime unless the
// cgroups are the systemd manager's.
func TestRemoteBackendDriver(t *testing.T) {
	ctx := context.Background()
	hostKernel, _, endpoint := newFakeHost(t, cgroup.DriverCgroupfs)
	b, err := host.Remote(ctx, endpoint, "busybox:local", resize.NodeConfig{}, host.WithCgroupManager(hostKernel))
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Config().CgroupDriver; got != cgroup.DriverCgroupfs {
		t.Errorf("CgroupDriver = %q, want the runtime's cgroupfs", got)
	}
	b.Close(ctx)
	_, err = host.Remote(ctx, endpoint, "busybox:local", resize.NodeConfig{CgroupDriver: cgroup.DriverSystemd}, host.WithCgroupManager(hostKernel))
	var me *resize.MismatchError
	if !errors.Is(err, resize.ErrIncoherent) || !errors.As(err, &me) || me.Setting != "cgroup driver" ||
		!strings.Contains(err.Error(), "NodeConfig.CgroupDriver is systemd, but the driver Deps.Runtime") || !strings.HasSuffix(err.Error(), "reports is cgroupfs") {
		t.Errorf("Remote(systemd config, cgroupfs runtime) = %v, want a cgroup driver mismatch naming both", err)
	}

	// A runtime on the systemd driver: a cgroupfs config disagrees with it,
	// and an empty one would take it, which a real runtime cannot do below
	// a private parent.
	hostKernel, _, endpoint = newFakeHost(t, cgroup.DriverSystemd)
	_, err = host.Remote(ctx, endpoint, "busybox:local", resize.NodeConfig{}, host.WithCgroupManager(hostKernel))
	if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "SystemdCgroup = false") {
		t.Errorf("Remote on a systemd runtime = %v, want ErrUnsupported saying how to configure the runtime", err)
	}
	// Through the systemd cgroup manager the driver is taken, below a
	// private parent slice.
	_, fs, conn := systemdTree(t)
	b, err = host.Remote(ctx, endpoint, "busybox:local", resize.NodeConfig{}, host.WithCgroupManager(mustManager(t, fs, conn)))
	if err != nil {
		t.Fatalf("Remote on a systemd runtime through the systemd cgroup manager: %v", err)
	}
	if got := b.Config().CgroupDriver; got != cgroup.DriverSystemd || !strings.HasSuffix(b.CgroupParent(), ".slice") {
		t.Errorf("CgroupDriver %q below %q, want systemd below a slice", got, b.CgroupParent())
	}
	b.Close(ctx)
	_, err = host.Remote(ctx, endpoint, "busybox:local", resize.NodeConfig{CgroupDriver: cgroup.DriverCgroupfs}, host.WithCgroupManager(hostKernel))
	if !errors.Is(err, resize.ErrIncoherent) || !errors.As(err, &me) || me.Setting != "cgroup driver" ||
		!strings.Contains(err.Error(), "NodeConfig.CgroupDriver is cgroupfs, but the driver Deps.Runtime") || !strings.HasSuffix(err.Error(), "reports is systemd") {
		t.Errorf("Remote(cgroupfs config, systemd runtime) = %v, want a cgroup driver mismatch naming both", err)
	}
	_, err = host.Remote(ctx, endpoint, "busybox:local", resize.NodeConfig{CgroupVersion: cgroup.V2}, host.WithCgroupManager(hostKernel))
	if !errors.Is(err, resize.ErrIncoherent) || !strings.Contains(err.Error(), "NodeConfig.CgroupVersion is v2, but the cgroup manager given (*cgroup.SimKernel) is v1") {
		t.Errorf("Remote(v2 config, v1 host) = %v, want a cgroup version mismatch naming both", err)
	}

	// A runtime that cannot tell (containerd 1.6) is not refused: the
	// configured driver stands, cgroupfs when none is.
	host2, _, old := newFakeHost(t, "")
	for _, d := range []cgroup.Driver{"", cgroup.DriverCgroupfs} {
		b, err = host.Remote(ctx, old, "busybox:local", resize.NodeConfig{CgroupDriver: d}, host.WithCgroupManager(host2))
		if err != nil {
			t.Fatalf("Remote(driver %q) on a runtime that cannot tell its driver: %v", d, err)
		}
		if got := b.Config().CgroupDriver; got != cgroup.DriverCgroupfs {
			t.Errorf("CgroupDriver = %q, want cgroupfs", got)
		}
		b.Close(ctx)
	}
}

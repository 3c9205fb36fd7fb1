package realhost_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	checkpoint "github.com/resizelet/resizelet/allocation/state"
	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/cgroup/cgroupfs"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/cri/remote"
	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/host"
)

// kubepodsTrees lists every directory named kubepods* at the top of every
// cgroup hierarchy, and everything below them: the host's own pod
// cgroups, which a resizelet node must never touch.
func kubepodsTrees(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, m := range cgroupMounts(t) {
		tops, _ := filepath.Glob(filepath.Join(m, "kubepods*"))
		for _, top := range tops {
			filepath.WalkDir(top, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.IsDir() {
					out = append(out, p)
				}
				return nil
			})
		}
	}
	slices.Sort(out)
	return out
}

// cgroupDirsNamed lists the directories of the cgroup name (relative to
// each hierarchy's root) and below it, in every hierarchy.
func cgroupDirsNamed(t *testing.T, name string) []string {
	t.Helper()
	var out []string
	for _, m := range cgroupMounts(t) {
		filepath.WalkDir(filepath.Join(m, name), func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				out = append(out, p)
			}
			return nil
		})
	}
	return out
}

// backendPod is a Burstable pod whose CPU is resized in place
// (NotRequired, the default): 100m/64Mi requested, 1 CPU and 128Mi limits.
// Its namespace is the test's own, so that its sandbox name cannot be
// another test's on the same runtime.
func backendPod() *v1.Pod {
	rl := func(cpu, mem string) v1.ResourceList {
		return v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse(mem)}
	}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "backend-demo", Namespace: "resizelet-backend-test"},
		Spec: v1.PodSpec{Containers: []v1.Container{{
			Name: "app", Image: "registry.k8s.io/pause:3.10",
			Resources: v1.ResourceRequirements{Requests: rl("100m", "64Mi"), Limits: rl("1", "128Mi")},
		}}},
	}
}

// TestRemoteBackendOnContainerd embeds the library as the project README
// shows it, with host.Remote on the private containerd and the host's
// real cgroups: a missing image is refused before any pod; a pod is added
// and resized in place (its cgroups below the backend's private parent,
// the same process); a kubelet restart finds it; Close leaves nothing
// labelled in the runtime and nothing of the private parent in any cgroup
// hierarchy, and the host's kubepods was never touched.
func TestRemoteBackendOnContainerd(t *testing.T) {
	how := "run: eval $(examples/realhost/containerd.sh start /tmp/rl-ctrd | sed 's/^/export /')"
	endpoint := env(t, "RESIZELET_CRI_ENDPOINT", how)
	image := env(t, "RESIZELET_IMAGE", how)
	needRoot(t)
	if _, err := cgroupfs.New("/sys/fs/cgroup"); err != nil {
		unavailable(t, "no usable cgroup hierarchy at /sys/fs/cgroup: %v", err)
	}
	ctx := context.Background()
	timeout := host.WithRemoteOptions(remote.WithCallTimeout(30 * time.Second))
	kubepodsBefore := kubepodsTrees(t)

	_, err := host.Remote(ctx, endpoint, "docker.io/resizelet/not-imported:1", resize.NodeConfig{}, timeout)
	if !errors.Is(err, host.ErrImageNotPresent) {
		t.Errorf("Remote with an image the runtime does not have = %v, want ErrImageNotPresent", err)
	}

	b, err := host.Remote(ctx, endpoint, image, resize.NodeConfig{}, timeout)
	if err != nil {
		t.Fatalf("Remote: %v", err)
	}
	parent := b.CgroupParent()
	t.Cleanup(func() {
		// In case the test failed before its own Close.
		b.Close(context.Background())
		removeCgroupTree(t, parent)
	})
	cfg := b.Config()
	t.Logf("backend: cgroup %v, driver %s, parent %s", cfg.CgroupVersion, cfg.CgroupDriver, parent)

	cluster := resize.NewCluster(resize.ClusterOptions{})
	deps := b.Deps(resize.Deps{Cluster: cluster, Allocated: checkpoint.NewMemory(), Actuated: checkpoint.NewMemory()})
	node, err := resize.NewNode(ctx, cfg, deps)
	if err != nil {
		t.Fatalf("NewNode: %v", err)
	}
	if _, err := node.AddPod(ctx, backendPod()); err != nil {
		t.Fatalf("AddPod: %v", err)
	}
	info, err := node.Pod("resizelet-backend-test", "backend-demo")
	if err != nil || info.ContainerIDs["app"] == "" {
		t.Fatalf("the pod is %+v, %v; want it running", info, err)
	}
	if !strings.HasPrefix(info.PodCgroup, parent+"/kubepods/") {
		t.Errorf("pod cgroup %q, want it below %s/kubepods", info.PodCgroup, parent)
	}
	ctr := info.ContainerIDs["app"]
	pidBefore, ok := cri.ContainerPID(ctx, b.Runtime(), ctr)
	if !ok {
		t.Fatal("the runtime does not report the container's PID")
	}

	patch := `{"spec":{"containers":[{"name":"app","resources":{"limits":{"cpu":"2"}}}]}}`
	if _, err := node.Resize(ctx, resize.ResizeOp{Namespace: "resizelet-backend-test", Name: "backend-demo", Patch: []byte(patch)}); err != nil {
		t.Fatalf("Resize: %v", err)
	}
	pod, err := cluster.GetPod(ctx, "resizelet-backend-test", "backend-demo")
	if err != nil {
		t.Fatal(err)
	}
	if got := pod.Status.ContainerStatuses[0].Resources.Limits.Cpu().String(); got != "2" {
		t.Errorf("status cpu limit = %s, want 2 (conditions %v)", got, pod.Status.Conditions)
	}
	ctrCgroup := cgconfig.ContainerCgroupName(info.PodCgroup, ctr, cfg.CgroupDriver)
	file, want := "cpu.cfs_quota_us", "200000"
	if cfg.CgroupVersion == cgroup.V2 {
		file, want = "cpu.max", "200000 100000"
	}
	for _, cg := range []string{info.PodCgroup, ctrCgroup} {
		if got, err := b.Cgroups().ReadFile(cg, file); err != nil || got != want {
			t.Errorf("%s %s = %q, %v; want %q", cg, file, got, err, want)
		}
	}
	if pid, ok := cri.ContainerPID(ctx, b.Runtime(), ctr); !ok || pid != pidBefore {
		t.Errorf("PID after the resize %d (%v), want the same process %d", pid, ok, pidBefore)
	}

	// The runtime's own view: the sandbox and container carry the label.
	raw, err := remote.Dial(ctx, endpoint, remote.WithCallTimeout(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	sel := map[string]string{resize.LabelBackend: parent}
	if sbs, err := raw.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: sel}); err != nil || len(sbs) != 1 {
		t.Errorf("sandboxes labelled %s=%s: %v, %v; want the pod's one", resize.LabelBackend, parent, sbs, err)
	}

	// A kubelet restart on the same Deps: Node.Close tore nothing down.
	node.Close()
	node, err = resize.NewNode(ctx, cfg, deps)
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	if again, err := node.Pod("resizelet-backend-test", "backend-demo"); err != nil || again.ContainerIDs["app"] != ctr {
		t.Errorf("after a restart the pod is %+v, %v; want it with container %s", again, err, ctr)
	}
	node.Close()

	if err := b.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if ctrs, err := raw.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: sel}); err != nil || len(ctrs) != 0 {
		t.Errorf("containers left in the runtime: %v, %v", ctrs, err)
	}
	if sbs, err := raw.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: sel}); err != nil || len(sbs) != 0 {
		t.Errorf("sandboxes left in the runtime: %v, %v", sbs, err)
	}
	if left := cgroupDirsNamed(t, parent); len(left) > 0 {
		t.Errorf("cgroups left below the private parent: %v", left)
	}
	if after := kubepodsTrees(t); !slices.Equal(after, kubepodsBefore) {
		t.Errorf("the host's kubepods changed:\nbefore %v\nafter  %v", kubepodsBefore, after)
	}
}

// TestHostCgroupsBackendOnRealCgroups embeds the library with
// host.Cgroups on the host's real cgroups (the in-memory runtime
// writing container cgroups there): a pod is added, resized and made to
// use real memory (a process the runtime starts in the container's
// cgroup); Close kills that process and removes the private parent from
// every hierarchy, and the host's kubepods was never touched.
func TestHostCgroupsBackendOnRealCgroups(t *testing.T) {
	needRoot(t)
	if _, err := cgroupfs.New("/sys/fs/cgroup"); err != nil {
		unavailable(t, "no usable cgroup hierarchy at /sys/fs/cgroup: %v", err)
	}
	ctx := context.Background()
	kubepodsBefore := kubepodsTrees(t)
	b, err := host.Cgroups(resize.NodeConfig{})
	if err != nil {
		t.Fatalf("HostCgroups: %v", err)
	}
	parent := b.CgroupParent()
	t.Cleanup(func() {
		b.Close(context.Background())
		removeCgroupTree(t, parent)
	})
	cfg := b.Config()
	cluster := resize.NewCluster(resize.ClusterOptions{})
	node, err := resize.NewNode(ctx, cfg, b.Deps(resize.Deps{Cluster: cluster}))
	if err != nil {
		t.Fatalf("NewNode: %v", err)
	}
	if _, err := node.AddPod(ctx, backendPod()); err != nil {
		t.Fatalf("AddPod: %v", err)
	}
	patch := `{"spec":{"containers":[{"name":"app","resources":{"limits":{"cpu":"2"}}}]}}`
	if _, err := node.Resize(ctx, resize.ResizeOp{Namespace: "resizelet-backend-test", Name: "backend-demo", Patch: []byte(patch)}); err != nil {
		t.Fatalf("Resize: %v", err)
	}
	info, err := node.Pod("resizelet-backend-test", "backend-demo")
	if err != nil {
		t.Fatal(err)
	}
	file, want := "cpu.cfs_quota_us", "200000"
	if cfg.CgroupVersion == cgroup.V2 {
		file, want = "cpu.max", "200000 100000"
	}
	if got, err := b.Cgroups().ReadFile(info.PodCgroup, file); err != nil || got != want || !strings.HasPrefix(info.PodCgroup, parent+"/") {
		t.Errorf("pod cgroup %s %s = %q, %v; want %q below %s", info.PodCgroup, file, got, err, want, parent)
	}
	const used = 8 << 20
	if err := cri.SetMemoryUsage(ctx, b.Runtime(), info.ContainerIDs["app"], used); err != nil {
		t.Fatalf("SetMemoryUsage: %v", err)
	}
	if usage, err := b.Cgroups().MemoryUsage(info.PodCgroup); err != nil || usage < used {
		t.Errorf("pod cgroup memory usage %d, %v; want at least %d", usage, err, used)
	}
	node.Close()
	if err := b.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if left := cgroupDirsNamed(t, parent); len(left) > 0 {
		t.Errorf("cgroups left below the private parent: %v", left)
	}
	if after := kubepodsTrees(t); !slices.Equal(after, kubepodsBefore) {
		t.Errorf("the host's kubepods changed:\nbefore %v\nafter  %v", kubepodsBefore, after)
	}
}

// TestHostCgroupsBackendNestedParent: with a nested private parent written
// with a leading slash ("/resizelet-realtest-<pid>/x", below the
// hierarchy root), the node's cgroups go below it; Close removes from
// every hierarchy the parent, what a runtime made below it in the
// hierarchies the node does not write, and the ancestor the backend
// created, and keeps that ancestor where it existed before the backend: on
// cgroup v1 it is made beforehand in the pids hierarchy, as another tool's
// cgroup would be.
func TestHostCgroupsBackendNestedParent(t *testing.T) {
	needRoot(t)
	hostFS, err := cgroupfs.New("/sys/fs/cgroup")
	if err != nil {
		unavailable(t, "no usable cgroup hierarchy at /sys/fs/cgroup: %v", err)
	}
	ctx := context.Background()
	kubepodsBefore := kubepodsTrees(t)
	top := "resizelet-realtest-" + strconv.Itoa(os.Getpid())
	t.Cleanup(func() { removeCgroupTree(t, top) })
	kept := ""
	if hostFS.Version() == cgroup.V1 {
		for _, m := range cgroupMounts(t) {
			if filepath.Base(m) == "pids" {
				kept = m
			}
		}
	}
	if kept != "" {
		if err := os.Mkdir(filepath.Join(kept, top), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	b, err := host.Cgroups(resize.NodeConfig{}, host.WithCgroupParent("/"+top+"/x"))
	if err != nil {
		t.Fatalf("HostCgroups: %v", err)
	}
	t.Cleanup(func() { b.Close(context.Background()) })
	if got := b.CgroupParent(); got != top+"/x" {
		t.Errorf("CgroupParent() = %q, want %s/x", got, top)
	}
	node, err := resize.NewNode(ctx, b.Config(), b.Deps(resize.Deps{Cluster: resize.NewCluster(resize.ClusterOptions{})}))
	if err != nil {
		t.Fatalf("NewNode: %v", err)
	}
	if _, err := node.AddPod(ctx, backendPod()); err != nil {
		t.Fatalf("AddPod: %v", err)
	}
	info, err := node.Pod("resizelet-backend-test", "backend-demo")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(info.PodCgroup, top+"/x/kubepods/") {
		t.Errorf("pod cgroup %q, want it below %s/x/kubepods", info.PodCgroup, top)
	}
	// What runc makes in the hierarchies the node does not write.
	for _, m := range cgroupMounts(t) {
		if err := os.MkdirAll(filepath.Join(m, top, "x", "kubepods", "runc-made"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	node.Close()
	if err := b.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, m := range cgroupMounts(t) {
		if _, err := os.Stat(filepath.Join(m, top, "x")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s/%s/x after Close: %v, want it gone", m, top, err)
		}
		_, err := os.Stat(filepath.Join(m, top))
		switch {
		case m == kept && err != nil:
			t.Errorf("%s/%s existed before the backend and is gone after Close: %v", m, top, err)
		case m != kept && !errors.Is(err, os.ErrNotExist):
			t.Errorf("%s/%s after Close: %v, want it gone: the backend created it", m, top, err)
		}
	}
	if after := kubepodsTrees(t); !slices.Equal(after, kubepodsBefore) {
		t.Errorf("the host's kubepods changed:\nbefore %v\nafter  %v", kubepodsBefore, after)
	}
}

package realhost_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/cgroup/cgroupfs"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/cri/remote"
)

const mi = int64(1) << 20

// realRuntime connects to the runtime named by RESIZELET_CRI_ENDPOINT and
// returns it with the image of RESIZELET_IMAGE and the host's cgroups.
func realRuntime(t *testing.T) (*remote.Client, string, *cgroupfs.FS) {
	t.Helper()
	how := "run: eval $(examples/realhost/containerd.sh start /tmp/rl-ctrd | sed 's/^/export /')"
	endpoint := env(t, "RESIZELET_CRI_ENDPOINT", how)
	image := env(t, "RESIZELET_IMAGE", how)
	needRoot(t)
	fs, err := cgroupfs.New("/sys/fs/cgroup")
	if err != nil {
		unavailable(t, "no usable cgroup hierarchy: %v", err)
	}
	rt, err := remote.Dial(context.Background(), endpoint, remote.WithCallTimeout(30*time.Second))
	if err != nil {
		t.Fatalf("remote.Dial(%s): %v", endpoint, err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt, image, fs
}

// pod is a sandbox and its container on a real runtime, below a cgroup of
// the test's own that the cleanup removes.
type pod struct {
	rt        *remote.Client
	fs        *cgroupfs.FS
	sandbox   string
	container string
	cgroup    string // the container's cgroup, relative to the hierarchy root
}

// runPod starts a Burstable-style pod with one container running sleep,
// host network (no CNI), and cgroup parent
// /resizelet-realhost-<pid>/kubepods/burstable/pod<uid>.
func runPod(t *testing.T, rt *remote.Client, image string, fs *cgroupfs.FS, res *runtimeapi.LinuxContainerResources) *pod {
	t.Helper()
	ctx := context.Background()
	top := fmt.Sprintf("resizelet-realhost-%d", os.Getpid())
	uid := fmt.Sprintf("%08x-0000-4000-8000-%012x", os.Getpid(), time.Now().UnixNano()&0xffffffffffff)
	podCgroup := top + "/kubepods/burstable/pod" + uid
	name := "resize-demo-" + strconv.FormatInt(time.Now().UnixNano()%1e9, 10)
	labels := map[string]string{
		cri.LabelPodName: name, cri.LabelPodNamespace: "default", cri.LabelPodUID: uid,
	}
	sb := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "default", Uid: uid},
		Labels:   labels,
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			CgroupParent: "/" + podCgroup,
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
				NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE},
			},
		},
	}
	p := &pod{rt: rt, fs: fs}
	t.Cleanup(func() {
		if p.sandbox != "" {
			if err := rt.StopPodSandbox(ctx, p.sandbox); err != nil {
				t.Errorf("cleanup: %v", err)
			}
			if err := rt.RemovePodSandbox(ctx, p.sandbox); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
		removeCgroupTree(t, top)
	})
	var err error
	if p.sandbox, err = rt.RunPodSandbox(ctx, sb, ""); err != nil {
		t.Fatalf("RunPodSandbox: %v", err)
	}
	cl := map[string]string{cri.LabelContainerName: "app"}
	for k, v := range labels {
		cl[k] = v
	}
	cfg := &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "app"},
		Image:    &runtimeapi.ImageSpec{Image: image},
		Command:  []string{"sleep", "86400"},
		Labels:   cl,
		Linux:    &runtimeapi.LinuxContainerConfig{Resources: res},
	}
	if p.container, err = rt.CreateContainer(ctx, p.sandbox, cfg, sb); err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	if err := rt.StartContainer(ctx, p.container); err != nil {
		t.Fatalf("StartContainer: %v", err)
	}
	p.cgroup = cgconfig.ContainerCgroupName(podCgroup, p.container, cgroup.DriverCgroupfs)
	return p
}

// state is what identifies the running process of a container.
type state struct {
	pids      string
	startedAt int64
	attempt   uint32
	resources *runtimeapi.LinuxContainerResources
}

func (p *pod) state(t *testing.T) state {
	t.Helper()
	st, err := p.rt.ContainerStatus(context.Background(), p.container, false)
	if err != nil {
		t.Fatalf("ContainerStatus: %v", err)
	}
	if got := st.GetStatus().GetState(); got != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("container state %v, want RUNNING", got)
	}
	pids, err := p.fs.ReadFile(p.cgroup, "cgroup.procs")
	if err != nil {
		t.Fatalf("container cgroup: %v", err)
	}
	return state{
		pids:      pids,
		startedAt: st.GetStatus().GetStartedAt(),
		attempt:   st.GetStatus().GetMetadata().GetAttempt(),
		resources: st.GetStatus().GetResources().GetLinux(),
	}
}

// files returns the container cgroup's files for the version of the host.
func (p *pod) files(t *testing.T) map[string]string {
	t.Helper()
	names := []string{"cpu.shares", "cpu.cfs_quota_us", "cpu.cfs_period_us", "memory.limit_in_bytes"}
	if p.fs.Version() == cgroup.V2 {
		names = []string{"cpu.weight", "cpu.max", "memory.max"}
	}
	out := map[string]string{}
	for _, n := range names {
		s, err := p.fs.ReadFile(p.cgroup, n)
		if err != nil {
			t.Fatalf("read container cgroup: %v", err)
		}
		out[n] = s
	}
	return out
}

// TestContainerdResizesInPlace starts a container on the real runtime and
// resizes it through remote.Client the way the kubelet does (the full set of
// fields each time): the cgroup files follow, ContainerStatus reports the
// new resources, and the process stays the same one. A memory limit below
// the container's real usage is refused with runc's message and changes
// nothing.
func TestContainerdResizesInPlace(t *testing.T) {
	rt, image, fs := realRuntime(t)
	ctx := context.Background()
	start := &runtimeapi.LinuxContainerResources{CpuShares: 716, CpuQuota: 70000, CpuPeriod: 100000, MemoryLimitInBytes: 200 * mi}
	p := runPod(t, rt, image, fs, start)
	before := p.state(t)
	if before.pids == "" {
		t.Fatal("no process in the container cgroup")
	}

	steps := []struct {
		name  string
		res   *runtimeapi.LinuxContainerResources
		files map[string]string // v1 files, then v2 below
		v2    map[string]string
	}{
		{
			name:  "cpu 700m to 800m",
			res:   &runtimeapi.LinuxContainerResources{CpuShares: 819, CpuQuota: 80000, CpuPeriod: 100000, MemoryLimitInBytes: 200 * mi},
			files: map[string]string{"cpu.shares": "819", "cpu.cfs_quota_us": "80000", "cpu.cfs_period_us": "100000", "memory.limit_in_bytes": "209715200"},
			v2:    map[string]string{"cpu.max": "80000 100000", "memory.max": "209715200"},
		},
		{
			name:  "memory 200Mi to 300Mi",
			res:   &runtimeapi.LinuxContainerResources{CpuShares: 819, CpuQuota: 80000, CpuPeriod: 100000, MemoryLimitInBytes: 300 * mi},
			files: map[string]string{"cpu.shares": "819", "cpu.cfs_quota_us": "80000", "memory.limit_in_bytes": "314572800"},
			v2:    map[string]string{"cpu.max": "80000 100000", "memory.max": "314572800"},
		},
	}
	for _, s := range steps {
		if err := rt.UpdateContainerResources(ctx, p.container, &runtimeapi.ContainerResources{Linux: s.res}); err != nil {
			t.Fatalf("%s: UpdateContainerResources: %v", s.name, err)
		}
		want := s.files
		if fs.Version() == cgroup.V2 {
			want = s.v2
		}
		got := p.files(t)
		for f, w := range want {
			if got[f] != w {
				t.Errorf("%s: %s = %q, want %q", s.name, f, got[f], w)
			}
		}
		after := p.state(t)
		if after.pids != before.pids || after.startedAt != before.startedAt || after.attempt != before.attempt {
			t.Errorf("%s: process changed: pids %q -> %q, startedAt %d -> %d, attempt %d -> %d",
				s.name, before.pids, after.pids, before.startedAt, after.startedAt, before.attempt, after.attempt)
		}
		r := after.resources
		if r.GetCpuShares() != s.res.CpuShares || r.GetCpuQuota() != s.res.CpuQuota || r.GetMemoryLimitInBytes() != s.res.MemoryLimitInBytes {
			t.Errorf("%s: ContainerStatus.resources = %v, want %v", s.name, r, s.res)
		}
	}

	// Real usage: a file in the container's /dev/shm, charged to its cgroup.
	const used = 40 * mi
	if err := cri.SetMemoryUsage(ctx, rt, p.container, used); err != nil {
		t.Fatalf("SetMemoryUsage: %v", err)
	}
	if usage, err := fs.MemoryUsage(p.cgroup); err != nil || usage < used {
		t.Fatalf("container memory usage = %d, %v; want at least %d", usage, err, used)
	}
	if fs.Version() == cgroup.V2 {
		return // on v2 the kernel would OOM-kill instead; that runs in the VM
	}
	limitBefore := p.files(t)["memory.limit_in_bytes"]
	low := &runtimeapi.LinuxContainerResources{CpuShares: 819, CpuQuota: 80000, CpuPeriod: 100000, MemoryLimitInBytes: 16 * mi}
	err := rt.UpdateContainerResources(ctx, p.container, &runtimeapi.ContainerResources{Linux: low})
	if err == nil {
		t.Fatal("a memory limit below usage was accepted on cgroup v1")
	}
	if !strings.Contains(err.Error(), "unable to set memory limit to 16777216 (current usage: ") {
		t.Errorf("refusal %q lacks runc's message", err)
	}
	var re *cri.RemoteError
	if !errors.As(err, &re) || errors.Is(err, cri.ErrNotFound) {
		t.Errorf("refusal %#v: want a RemoteError that is not ErrNotFound", err)
	}
	if got := p.files(t)["memory.limit_in_bytes"]; got != limitBefore {
		t.Errorf("memory.limit_in_bytes = %q after the refusal, want %q", got, limitBefore)
	}
	if r := p.state(t).resources; r.GetMemoryLimitInBytes() != 300*mi {
		t.Errorf("ContainerStatus memory limit = %d after the refusal, want containerd's rollback to %d", r.GetMemoryLimitInBytes(), 300*mi)
	}
	t.Logf("runtime's refusal: %v", err)
}

// TestContainerdNotFound checks that the real runtime's NotFound maps to
// cri.ErrNotFound with its message kept.
func TestContainerdNotFound(t *testing.T) {
	rt, _, _ := realRuntime(t)
	_, err := rt.ContainerStatus(context.Background(), "0123456789abcdef-does-not-exist", false)
	if !errors.Is(err, cri.ErrNotFound) || !strings.Contains(err.Error(), "does-not-exist") {
		t.Errorf("ContainerStatus of a missing container: %v, want ErrNotFound with the runtime's message", err)
	}
}

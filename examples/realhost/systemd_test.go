package realhost_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	checkpoint "github.com/resizelet/resizelet/allocation/state"
	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/cgroup/systemd"
	"github.com/resizelet/resizelet/cri/conform"
	"github.com/resizelet/resizelet/cri/kubeletcri"
	"github.com/resizelet/resizelet/cri/remote"
	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/host"
)

// TestSystemdInVM boots the cgroup v2 VM with systemd as its init (vm.sh
// -s) and runs TestSystemdVMGuest there: containerd with runc's systemd
// cgroup driver (SystemdCgroup = true, as kubeadm sets nodes up), sent the
// kubelet's messages for a pod below the kubelet's systemd slices.
func TestSystemdInVM(t *testing.T) {
	kernel := vmKernel(t)
	needRoot(t) // containerd.sh image installs busybox-static if needed
	for _, tool := range []string{"systemctl", "dbus-daemon"} {
		if _, err := exec.LookPath(tool); err != nil {
			unavailable(t, "the systemd VM is built from the host's systemd and dbus (apt-get install systemd dbus): %v", err)
		}
	}
	dir := filepath.Join(t.TempDir(), "vmrt")
	if why := vmRuntimeDir(t, dir, vmRuntimeFiles); why != "" {
		unavailable(t, "the VM cannot host a runtime: %s", why)
	}
	// The systemd driver's scenario files run there too, with resizesim.
	buildStatic(t, "./examples/resizesim", filepath.Join(dir, "bin", "resizesim"), false)
	var scenarios []string
	for _, f := range systemdScenarios {
		rel := filepath.Join("scenarios", filepath.Base(f))
		if err := copyFile(filepath.Join(repoRoot, f), filepath.Join(dir, rel)); err != nil {
			t.Fatal(err)
		}
		scenarios = append(scenarios, rel)
	}
	bin := buildGuestBinary(t)
	out, err := runVM(t, []string{"VM_TIMEOUT=600", "VM_MEMORY=1024"},
		"-s", "-C", dir, "-e", "RESIZELET_VM_GUEST=systemd", "-e", "RESIZELET_IMAGE=docker.io/resizelet/busybox:local",
		"-e", "RESIZELET_VM_SCENARIOS="+strings.Join(scenarios, " "),
		kernel, bin, "-test.v", "-test.run", "^TestSystemdVMGuest$", "-test.timeout", "540s")
	if err != nil || !strings.Contains(out, "--- PASS: TestSystemdVMGuest") {
		t.Fatalf("the systemd VM: %v\n%s", err, out)
	}
	t.Logf("containerd with runc's systemd driver in the systemd VM:\n%s", out)
}

// systemdScenarios are the scenario files of the systemd driver on cgroup
// v2 that TestSystemdVMGuest runs on containerd with SystemdCgroup = true.
var systemdScenarios = []string{
	"testdata/scenarios/systemd-driver.yaml",
	"testdata/scenarios/systemd-driver-quota-rounding.yaml",
	"testdata/scenarios/systemd-driver-cgroup-root.yaml",
}

// TestSystemdVMGuest is the VM's side of TestSystemdInVM; it skips anywhere
// else. It checks that systemd is PID 1, starts containerd with
// SystemdCgroup = true, runs a Burstable pod with a cpu limit of 417m
// (quota 41700) in the slice the kubelet's systemd driver names
// (kubepods-burstable-pod<uid>.slice), resizes it to 633m (63300), and
// reads what systemd and the container's cgroup hold after each, and
// after a systemctl daemon-reload: runc's systemd driver asks systemd for
// CPUQuotaPerSecUSec rounded up to 10 ms (libcontainer's addCpuQuota:
// systemd's quota has percent granularity), then writes cpu.max itself
// (libcontainer's systemd Set calls the fs2 manager after setting the
// unit's properties): runc 1.1.5, Debian 12's, writes the exact quota
// (runc 1.3 writes the rounded one, as resizelet's simulated runtime
// does: cgconfig.SystemdQuota), and systemd writes its rounded value
// whenever it applies the unit's properties anew.
func TestSystemdVMGuest(t *testing.T) {
	if os.Getenv("RESIZELET_VM_GUEST") != "systemd" {
		t.Skip("runs inside the systemd VM, started by TestSystemdInVM")
	}
	comm, err := os.ReadFile("/proc/1/comm")
	if err != nil || strings.TrimSpace(string(comm)) != "systemd" {
		t.Fatalf("PID 1 is %q (%v), want systemd", comm, err)
	}
	image := os.Getenv("RESIZELET_IMAGE")
	rtDir, sock := startVMContainerd(t, image, true)
	ctx := context.Background()
	rt, err := remote.Dial(ctx, "unix://"+sock)
	if err != nil {
		t.Fatal(err)
	}
	// Closed after the sandboxes' cleanups, which are registered later.
	t.Cleanup(func() { rt.Close() })

	msgs := kubeletcri.New(kubeletcri.Settings{
		CgroupVersion: cgroup.V2, EnforceCPULimits: true, CPUPeriod: cgconfig.QuotaPeriod,
		MemoryCapacity: 64 << 30, Image: image,
		Command: []string{"sh", "-c", "trap 'exit 0' TERM; sleep 86400 & wait"},
	})
	pod := func(cpuLimit string) *v1.Pod {
		return &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "systemd-probe", Namespace: "default", UID: types.UID("5d7f0c1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f")},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: image, Resources: v1.ResourceRequirements{
				Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("64Mi")},
				Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpuLimit), v1.ResourceMemory: resource.MustParse("128Mi")},
			}}}},
			Status: v1.PodStatus{QOSClass: v1.PodQOSBurstable},
		}
	}
	// runSandbox runs the pod's sandbox below podCgroup, removed when the
	// test ends.
	runSandbox := func(p *v1.Pod, podCgroup string) (string, *runtimeapi.PodSandboxConfig) {
		t.Helper()
		sb := msgs.SandboxConfig(p, podCgroup)
		id, err := rt.RunPodSandbox(ctx, sb, "")
		if err != nil {
			t.Fatalf("RunPodSandbox with cgroup parent %s: %v", sb.Linux.CgroupParent, err)
		}
		t.Cleanup(func() {
			rt.StopPodSandbox(ctx, id)
			rt.RemovePodSandbox(ctx, id)
		})
		return id, sb
	}
	p := pod("417m")
	podCgroup := cgconfig.PodCgroupName(v1.PodQOSBurstable, p.UID, cgconfig.DriverSystemd)
	sbID, sb := runSandbox(p, podCgroup)
	id, err := rt.CreateContainer(ctx, sbID, msgs.ContainerConfig(p, &p.Spec.Containers[0], 0), sb)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	scope := "cri-containerd-" + id + ".scope"
	dir := filepath.Join("/sys/fs/cgroup", cgconfig.ContainerCgroupName(podCgroup, id, cgconfig.DriverSystemd))
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the container's cgroup is not where the kubelet's systemd naming puts it: %v", err)
	}
	observe := func(step, wantQuota, wantPerSec string) {
		t.Helper()
		// systemd applies a unit's properties from its own loop, after
		// the D-Bus call that set them returned: give it a moment.
		time.Sleep(500 * time.Millisecond)
		cpuMax, err := os.ReadFile(filepath.Join(dir, "cpu.max"))
		if err != nil {
			t.Fatal(err)
		}
		prop, err := exec.Command("systemctl", "show", scope, "-p", "CPUQuotaPerSecUSec", "--value").Output()
		if err != nil {
			t.Fatalf("systemctl show %s: %v", scope, err)
		}
		got, perSec := strings.TrimSpace(string(cpuMax)), strings.TrimSpace(string(prop))
		t.Logf("%s: %s cpu.max %q, CPUQuotaPerSecUSec %s", step, scope, got, perSec)
		if perSec != wantPerSec {
			t.Errorf("%s: CPUQuotaPerSecUSec = %s, want %s (the quota rounded up to 10 ms per second)", step, perSec, wantPerSec)
		}
		if got != wantQuota+" 100000" {
			t.Errorf("%s: cpu.max = %q, want %q", step, got, wantQuota+" 100000")
		}
	}
	observe("create with cpu limit 417m", "41700", "420ms")
	p = pod("633m")
	if err := rt.UpdateContainerResources(ctx, id, &runtimeapi.ContainerResources{Linux: msgs.ContainerResources(p, &p.Spec.Containers[0])}); err != nil {
		t.Fatal(err)
	}
	observe("resize to cpu limit 633m", "63300", "640ms")
	if out, err := exec.Command("systemctl", "daemon-reload").CombinedOutput(); err != nil {
		t.Fatalf("systemctl daemon-reload: %v: %s", err, out)
	}
	// A daemon-reload makes systemd apply every unit's properties again:
	// the scope's cpu.max becomes the rounded quota, 640m instead of the
	// 633m the kubelet sent, while containerd still reports 63300 (the
	// mechanism behind kubernetes/kubernetes#129357).
	observe("after systemctl daemon-reload", "64000", "640ms")
	st, err := rt.ContainerStatus(ctx, id, false)
	if err != nil {
		t.Fatal(err)
	}
	if q := st.GetStatus().GetResources().GetLinux().GetCpuQuota(); q != 63300 {
		t.Errorf("after the daemon-reload ContainerStatus reports cpu_quota %d, want 63300 (what was sent)", q)
	}
	t.Logf("after systemctl daemon-reload: ContainerStatus still reports cpu_quota 63300")
	if err := rt.StopContainer(ctx, id, 10); err != nil {
		t.Fatal(err)
	}
	if err := rt.RemoveContainer(ctx, id); err != nil {
		t.Fatal(err)
	}

	// A pod slice made the cgroupfs way (mkdir and file writes, as a
	// cgroupfs manager does) loses its limits when systemd realizes the
	// slice for the sandbox's scope: systemd writes the values of its own
	// unit, which knows none. This is why the kubelet's systemd driver
	// creates and updates pod slices through systemd, and why a node that
	// writes pod cgroups with cgroupfs cannot sit below this runtime.
	q := pod("500m")
	q.Name, q.UID = "systemd-mkdir-probe", types.UID("6e8a1d2f-3c4b-4d5e-9f0a-1b2c3d4e5f60")
	mkdirCgroup := cgconfig.PodCgroupName(v1.PodQOSBurstable, q.UID, cgconfig.DriverSystemd)
	path := "/sys/fs/cgroup"
	for _, part := range strings.Split(mkdirCgroup, "/") {
		if err := os.WriteFile(filepath.Join(path, "cgroup.subtree_control"), []byte("+cpu +memory"), 0o644); err != nil {
			t.Fatalf("enable cpu and memory in %s: %v", path, err)
		}
		path = filepath.Join(path, part)
		if err := os.MkdirAll(path, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	limits := map[string]string{"cpu.max": "50000 100000", "memory.max": "134217728", "cpu.weight": "10"}
	for file, value := range limits {
		if err := os.WriteFile(filepath.Join(path, file), []byte(value), 0o644); err != nil {
			t.Fatalf("write %s %s: %v", file, value, err)
		}
	}
	runSandbox(q, mkdirCgroup)
	time.Sleep(500 * time.Millisecond)
	for file, was := range limits {
		got, err := os.ReadFile(filepath.Join(path, file))
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"cpu.max": "max 100000", "memory.max": "max", "cpu.weight": "100"}[file]
		t.Logf("a pod slice made with mkdir: %s %q before the sandbox, %q after", file, was, strings.TrimSpace(string(got)))
		if strings.TrimSpace(string(got)) != want {
			t.Errorf("a pod slice made with mkdir: %s = %q after the sandbox started, want systemd's default %q", file, got, want)
		}
	}

	systemdBackend(t, ctx, "unix://"+sock, image)
	systemdHostCgroups(t, ctx)

	resizesim := filepath.Join(rtDir, "bin", "resizesim")
	if _, err := os.Stat(resizesim); err != nil {
		t.Fatalf("resizesim is not in the VM: %v", err)
	}
	// resizesim conform on this runtime with the systemd driver: the
	// run's pod slices below its own prefix slice, removed through
	// systemd.
	conformCtx, cancelConform := context.WithTimeout(ctx, 240*time.Second)
	defer cancelConform()
	cmd := exec.CommandContext(conformCtx, resizesim, "conform", "--cri-endpoint", "unix://"+sock, "--image", image, "--cgroup-driver", "systemd", "--json")
	cmd.Dir = rtDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var rep conform.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("resizesim conform --cgroup-driver systemd: %v; no JSON report: %v\n%s", runErr, err, stderr.String())
	}
	var text strings.Builder
	rep.WriteText(&text)
	t.Logf("resizesim conform --cgroup-driver systemd in the systemd VM:\n%s", text.String())
	for _, c := range rep.Checks {
		// Findings about runc the report makes, not failures of the run:
		// check 6, runc writes cpu.max before it refuses an unknown
		// unified key (as with the cgroupfs driver); check 3, with the
		// systemd driver runc gives systemd MemoryMax first, the kernel
		// OOM-kills the container, and runc's own write then fails.
		known := c.Status == conform.Fail && (c.ID == 6 && strings.Contains(c.Summary, "partly applied") ||
			c.ID == 3 && strings.Contains(c.Summary, "refused with an error, but the container ended") &&
				slices.ContainsFunc(c.Evidence, func(e string) bool { return strings.Contains(e, "systemd removes the scope") }))
		if c.Required && c.Status != conform.Pass && !known {
			t.Errorf("check %d (%s): %s: %s", c.ID, c.Name, c.Status, c.Summary)
		}
	}
	if rep.CgroupDriver != cgroup.DriverSystemd || rep.Interrupted || rep.SetupError != "" || len(rep.Left) > 0 {
		t.Errorf("report: driver %q, interrupted %v, setup error %q, left %v", rep.CgroupDriver, rep.Interrupted, rep.SetupError, rep.Left)
	}
	if left := unitsLeft("resizelet_conform_*"); left != "" {
		t.Errorf("units of the conform run left:\n%s", left)
	}

	// The systemd driver's scenario files, with the expectations they
	// have in simulation.
	if files := strings.Fields(os.Getenv("RESIZELET_VM_SCENARIOS")); len(files) > 0 {
		args := append([]string{"--cgroup-root", "/sys/fs/cgroup", "--cri-endpoint", "unix://" + sock, "--image", image, "--cgroup-driver", "systemd", "run"}, files...)
		runCtx, cancel := context.WithTimeout(ctx, 300*time.Second)
		defer cancel()
		cmd := exec.CommandContext(runCtx, resizesim, args...)
		cmd.Dir = rtDir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("resizesim %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		t.Logf("scenario files of the systemd driver (%d) passed on containerd with SystemdCgroup = true:\n%s", len(files), out)
	}
}

// systemdBackend is the node itself on the systemd runtime: host.Remote
// with the systemd driver (containerd 1.6 cannot report it) opens the
// systemd cgroup manager, because systemd runs the host, and keeps the
// node's slices below a private parent slice. A pod is added and resized
// in place; systemd's unit holds the new limits (CPUQuotaPerSecUSec,
// MemoryMax) and so a daemon-reload keeps them in the files; a kubelet
// restart finds the pod; Close stops every unit it started and leaves no
// cgroup.
func systemdBackend(t *testing.T, ctx context.Context, endpoint, image string) {
	b, err := host.Remote(ctx, endpoint, image, resize.NodeConfig{CgroupDriver: cgroup.DriverSystemd}, host.WithRemoteOptions(remote.WithCallTimeout(60*time.Second)))
	if err != nil {
		t.Fatalf("Remote with the systemd driver: %v", err)
	}
	t.Cleanup(func() { b.Close(context.Background()) })
	if _, ok := b.Cgroups().(*systemd.Manager); !ok {
		t.Fatalf("the node writes through %T, want the systemd cgroup manager", b.Cgroups())
	}
	parent := b.CgroupParent()
	t.Logf("backend: driver %s, parent %s, cgroup root %s", b.Config().CgroupDriver, parent, b.Config().CgroupRoot)
	cluster := resize.NewCluster(resize.ClusterOptions{})
	deps := b.Deps(resize.Deps{Cluster: cluster, Allocated: checkpoint.NewMemory(), Actuated: checkpoint.NewMemory()})
	node, err := resize.NewNode(ctx, b.Config(), deps)
	if err != nil {
		t.Fatal(err)
	}
	p := backendPod()
	if _, err := node.AddPod(ctx, p); err != nil {
		t.Fatal(err)
	}
	patch := `{"spec":{"containers":[{"name":"app","resources":{"limits":{"cpu":"2","memory":"256Mi"}}}]}}`
	if _, err := node.Resize(ctx, resize.ResizeOp{Namespace: p.Namespace, Name: p.Name, Patch: []byte(patch)}); err != nil {
		t.Fatal(err)
	}
	got, err := cluster.GetPod(ctx, p.Namespace, p.Name)
	if err != nil {
		t.Fatal(err)
	}
	if lim := got.Status.ContainerStatuses[0].Resources.Limits; lim.Cpu().String() != "2" || lim.Memory().String() != "256Mi" {
		t.Errorf("status limits after the resize %v, want cpu 2 and memory 256Mi (conditions %v)", lim, got.Status.Conditions)
	}
	info, err := node.Pod(p.Namespace, p.Name)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(info.PodCgroup, parent+"/") {
		t.Errorf("pod cgroup %s, want it below the private parent %s", info.PodCgroup, parent)
	}
	unit := filepath.Base(info.PodCgroup)
	show := func(step string) {
		t.Helper()
		out, err := exec.Command("systemctl", "show", unit, "-p", "CPUQuotaPerSecUSec", "-p", "MemoryMax", "-p", "CPUWeight").Output()
		if err != nil {
			t.Fatalf("systemctl show %s: %v", unit, err)
		}
		props := strings.Fields(string(out))
		cpuMax, _ := b.Cgroups().ReadFile(info.PodCgroup, "cpu.max")
		memMax, _ := b.Cgroups().ReadFile(info.PodCgroup, "memory.max")
		t.Logf("%s: pod slice %s: %s; cpu.max %q, memory.max %s", step, unit, strings.Join(props, " "), cpuMax, memMax)
		for _, want := range []string{"CPUQuotaPerSecUSec=2s", "MemoryMax=268435456"} {
			if !slices.Contains(props, want) {
				t.Errorf("%s: the pod slice's unit has %v, want %s", step, props, want)
			}
		}
		if cpuMax != "200000 100000" || memMax != "268435456" {
			t.Errorf("%s: pod slice cpu.max %q, memory.max %q, want 200000 100000 and 268435456", step, cpuMax, memMax)
		}
	}
	show("pod slice after the resize")
	if out, err := exec.Command("systemctl", "daemon-reload").CombinedOutput(); err != nil {
		t.Fatalf("systemctl daemon-reload: %v: %s", err, out)
	}
	time.Sleep(500 * time.Millisecond)
	show("pod slice after systemctl daemon-reload")

	node.Close()
	node, err = resize.NewNode(ctx, b.Config(), deps)
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	if again, err := node.Pod(p.Namespace, p.Name); err != nil || again.ContainerIDs["app"] != info.ContainerIDs["app"] {
		t.Errorf("after a restart the pod is %+v, %v; want it with container %s", again, err, info.ContainerIDs["app"])
	}
	node.Close()
	if err := b.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if units := unitsLeft(strings.TrimSuffix(parent, ".slice") + "*"); units != "" {
		t.Errorf("units left after Close:\n%s", units)
	}
	if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", parent)); !os.IsNotExist(err) {
		t.Errorf("the private parent slice is left after Close: %v", err)
	}
	t.Logf("Close: no unit and no cgroup of %s left", parent)
}

// systemdHostCgroups is host.Cgroups with the systemd driver where systemd
// runs the host: the in-memory runtime, and the node's pod slices made and
// resized through systemd below a private parent slice, which Close stops.
func systemdHostCgroups(t *testing.T, ctx context.Context) {
	b, err := host.Cgroups(resize.NodeConfig{CgroupDriver: cgroup.DriverSystemd})
	if err != nil {
		t.Fatalf("host.Cgroups with the systemd driver: %v", err)
	}
	t.Cleanup(func() { b.Close(context.Background()) })
	if _, ok := b.Cgroups().(*systemd.Manager); !ok {
		t.Fatalf("host.Cgroups writes through %T, want the systemd cgroup manager", b.Cgroups())
	}
	parent := b.CgroupParent()
	cluster := resize.NewCluster(resize.ClusterOptions{})
	node, err := resize.NewNode(ctx, b.Config(), b.Deps(resize.Deps{Cluster: cluster, Allocated: checkpoint.NewMemory(), Actuated: checkpoint.NewMemory()}))
	if err != nil {
		t.Fatal(err)
	}
	p := backendPod()
	if _, err := node.AddPod(ctx, p); err != nil {
		t.Fatal(err)
	}
	if _, err := node.Resize(ctx, resize.ResizeOp{Namespace: p.Namespace, Name: p.Name, Patch: []byte(`{"spec":{"containers":[{"name":"app","resources":{"limits":{"cpu":"417m"}}}]}}`)}); err != nil {
		t.Fatal(err)
	}
	info, err := node.Pod(p.Namespace, p.Name)
	if err != nil {
		t.Fatal(err)
	}
	unit := filepath.Base(info.PodCgroup)
	out, err := exec.Command("systemctl", "show", unit, "-p", "CPUQuotaPerSecUSec", "--value").Output()
	if err != nil {
		t.Fatalf("systemctl show %s: %v", unit, err)
	}
	cpuMax, _ := b.Cgroups().ReadFile(info.PodCgroup, "cpu.max")
	t.Logf("host.Cgroups with the systemd driver: pod slice %s below %s: CPUQuotaPerSecUSec %s, cpu.max %q after a resize to 417m", unit, parent, strings.TrimSpace(string(out)), cpuMax)
	if strings.TrimSpace(string(out)) != "420ms" || cpuMax != "42000 100000" {
		got, _ := cluster.GetPod(ctx, p.Namespace, p.Name)
		var events []string
		for _, e := range cluster.Events() {
			events = append(events, e.Reason+": "+e.Message)
		}
		t.Errorf("pod slice after a resize to 417m: CPUQuotaPerSecUSec %s, cpu.max %q; want 420ms and 42000 100000 (the kubelet's systemd driver rounds)\nconditions %v\nevents:\n%s",
			out, cpuMax, got.Status.Conditions, strings.Join(events, "\n"))
	}
	// The in-memory runtime's container is a delegated scope of systemd's
	// in the pod slice, as runc makes one, and holds the new limit.
	ctr := info.ContainerCgroups["app"]
	scope := filepath.Base(ctr)
	delegate, _ := exec.Command("systemctl", "show", scope, "-p", "Delegate", "--value").Output()
	ctrMax, _ := b.Cgroups().ReadFile(ctr, "cpu.max")
	t.Logf("host.Cgroups with the systemd driver: the in-memory runtime's container is scope %s (Delegate=%s), cpu.max %q", scope, strings.TrimSpace(string(delegate)), ctrMax)
	if strings.TrimSpace(string(delegate)) != "yes" || ctrMax != "42000 100000" {
		t.Errorf("the container's scope %s: Delegate=%s, cpu.max %q; want a delegated scope with 42000 100000", scope, delegate, ctrMax)
	}
	node.Close()
	if err := b.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if left := unitsLeft(strings.TrimSuffix(parent, ".slice")+"*", scope); left != "" {
		t.Errorf("units left after Close:\n%s", left)
	}
}

// unitsLeft lists the units systemd has (in any state) that match the
// patterns, one per line, or "".
func unitsLeft(patterns ...string) string {
	out, _ := exec.Command("systemctl", append([]string{"list-units", "--all", "--no-legend", "--plain"}, patterns...)...).Output()
	return strings.TrimSpace(string(out))
}

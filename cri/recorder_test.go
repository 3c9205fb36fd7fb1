package cri

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri/internal/critest"
)

// callLine renders a recorded call as one comparable line.
func callLine(c Call) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s pod=%s ctr=%s id=%s", c.Method, c.Pod, c.Container, c.ID)
	if c.Linux != nil {
		fmt.Fprintf(&b, " linux{shares=%d quota=%d period=%d mem=%d}", c.Linux.CpuShares, c.Linux.CpuQuota, c.Linux.CpuPeriod, c.Linux.MemoryLimitInBytes)
	}
	if c.Sandbox != nil {
		fmt.Fprintf(&b, " sandbox{id=%s shares=%d mem=%d}", c.Sandbox.PodSandboxId, c.Sandbox.GetResources().GetCpuShares(), c.Sandbox.GetResources().GetMemoryLimitInBytes())
	}
	if c.Err != nil {
		fmt.Fprintf(&b, " err=%v", c.Err)
	}
	return b.String()
}

func callLines(calls []Call) []string {
	var out []string
	for _, c := range calls {
		out = append(out, callLine(c))
	}
	return out
}

func TestRecorderRecordsMutatingCallsInOrder(t *testing.T) {
	mem, _ := newSimContainerd(t, cgroup.V2)
	faults := NewFaultInjector(mem)
	rec := NewRecorder(faults)

	sb := critest.SandboxConfig("web", "default", "uid-a", podParent)
	sbID := critest.MustRun(t, rec, sb)
	id := critest.MustStart(t, rec, sbID, sb, critest.ContainerConfig(sb, "app", 0,
		&runtimeapi.LinuxContainerResources{CpuShares: 1024, CpuQuota: 100000, CpuPeriod: 100000, MemoryLimitInBytes: 128 * mi}))
	// Read-only calls are not recorded.
	if _, err := rec.ContainerStatus(tctx, id, false); err != nil {
		t.Fatal(err)
	}
	if _, err := rec.ListContainers(tctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := rec.ListPodSandbox(tctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := rec.ContainerStats(tctx, id); err != nil {
		t.Fatal(err)
	}
	if err := rec.UpdateContainerResources(tctx, id, &runtimeapi.ContainerResources{Linux: &runtimeapi.LinuxContainerResources{
		CpuShares: 2048, CpuQuota: 200000, CpuPeriod: 100000, MemoryLimitInBytes: 128 * mi}}); err != nil {
		t.Fatal(err)
	}
	faults.Inject(Fault{Method: "UpdateContainerResources", Err: errors.New("runtime down")})
	if err := rec.UpdateContainerResources(tctx, id, &runtimeapi.ContainerResources{Linux: &runtimeapi.LinuxContainerResources{MemoryLimitInBytes: 256 * mi}}); err == nil {
		t.Fatal("faulted update succeeded")
	}
	if _, err := rec.UpdatePodSandboxResources(tctx, &runtimeapi.UpdatePodSandboxResourcesRequest{
		PodSandboxId: sbID, Resources: &runtimeapi.LinuxContainerResources{CpuShares: 2048, MemoryLimitInBytes: 128 * mi}}); err != nil {
		t.Fatal(err)
	}
	if err := rec.StopContainer(tctx, id, 30); err != nil {
		t.Fatal(err)
	}
	if err := rec.RemoveContainer(tctx, id); err != nil {
		t.Fatal(err)
	}
	if err := rec.StopPodSandbox(tctx, sbID); err != nil {
		t.Fatal(err)
	}
	if err := rec.RemovePodSandbox(tctx, sbID); err != nil {
		t.Fatal(err)
	}

	want := []string{
		"RunPodSandbox pod=default/web ctr= id=sb-1",
		"CreateContainer pod=default/web ctr=app id=ctr-1 linux{shares=1024 quota=100000 period=100000 mem=134217728}",
		"StartContainer pod=default/web ctr=app id=ctr-1",
		"UpdateContainerResources pod=default/web ctr=app id=ctr-1 linux{shares=2048 quota=200000 period=100000 mem=134217728}",
		"UpdateContainerResources pod=default/web ctr=app id=ctr-1 linux{shares=0 quota=0 period=0 mem=268435456} err=runtime down",
		"UpdatePodSandboxResources pod=default/web ctr= id=sb-1 sandbox{id=sb-1 shares=2048 mem=134217728}",
		"StopContainer pod=default/web ctr=app id=ctr-1",
		"RemoveContainer pod=default/web ctr=app id=ctr-1",
		"StopPodSandbox pod=default/web ctr= id=sb-1",
		"RemovePodSandbox pod=default/web ctr= id=sb-1",
	}
	if diff := cmp.Diff(want, callLines(rec.Calls())); diff != "" {
		t.Errorf("recorded calls (-want +got):\n%s", diff)
	}
}

func TestRecorderNamesContainersItDidNotSeeCreated(t *testing.T) {
	mem, _ := newSimContainerd(t, cgroup.V2)
	sb := critest.SandboxConfig("web", "default", "uid-a", podParent)
	sbID := critest.MustRun(t, mem, sb)
	id := critest.MustStart(t, mem, sbID, sb, critest.ContainerConfig(sb, "app", 0, nil))

	// As after a kubelet restart: a new Recorder over a runtime that already
	// holds the pod.
	rec := NewRecorder(mem)
	if err := rec.UpdateContainerResources(tctx, id, quotaUpdate(50000)); err != nil {
		t.Fatal(err)
	}
	if _, err := rec.UpdatePodSandboxResources(tctx, &runtimeapi.UpdatePodSandboxResourcesRequest{PodSandboxId: sbID}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"UpdateContainerResources pod=default/web ctr=app id=ctr-1 linux{shares=0 quota=50000 period=100000 mem=0}",
		"UpdatePodSandboxResources pod=default/web ctr= id=sb-1 sandbox{id=sb-1 shares=0 mem=0}",
	}
	if diff := cmp.Diff(want, callLines(rec.Calls())); diff != "" {
		t.Errorf("recorded calls (-want +got):\n%s", diff)
	}
}

func TestRecorderCallsIsACopyAndResetForgets(t *testing.T) {
	mem, _ := newSimContainerd(t, cgroup.V2)
	rec := NewRecorder(mem)
	sb := critest.SandboxConfig("web", "default", "uid-a", podParent)
	id := critest.MustStart(t, rec, critest.MustRun(t, rec, sb), sb, critest.ContainerConfig(sb, "app", 0, nil))
	update := quotaUpdate(50000)
	if err := rec.UpdateContainerResources(tctx, id, update); err != nil {
		t.Fatal(err)
	}
	update.Linux.CpuQuota = 1 // the caller reuses its message

	calls := rec.Calls()
	calls[len(calls)-1].Linux.CpuQuota = 2 // a reader changes its copy
	calls[0].Method = "changed"
	again := rec.Calls()
	if last := again[len(again)-1]; last.Linux.CpuQuota != 50000 || again[0].Method != "RunPodSandbox" {
		t.Errorf("recorded calls changed through a caller's message or copy: %v", callLines(again))
	}

	rec.Reset()
	if got := rec.Calls(); len(got) != 0 {
		t.Errorf("Calls after Reset = %v, want none", callLines(got))
	}
	if err := rec.StopContainer(tctx, id, 0); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"StopContainer pod=default/web ctr=app id=ctr-1"}, callLines(rec.Calls())); diff != "" {
		t.Errorf("calls after Reset (-want +got):\n%s", diff)
	}
}

func TestRecorderRecordsFailedCreate(t *testing.T) {
	mem, _ := newSimContainerd(t, cgroup.V2)
	rec := NewRecorder(mem)
	sb := critest.SandboxConfig("web", "default", "uid-a", podParent)
	if _, err := rec.CreateContainer(tctx, "sb-404", critest.ContainerConfig(sb, "app", 0, nil), sb); !errors.Is(err, ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	calls := rec.Calls()
	if len(calls) != 1 || calls[0].Method != "CreateContainer" || calls[0].Pod != "default/web" || calls[0].Container != "app" ||
		calls[0].ID != "" || !errors.Is(calls[0].Err, ErrNotFound) {
		t.Errorf("calls = %v, want one failed CreateContainer of default/web app", callLines(calls))
	}
}

// TestRecorderLimit: a Recorder keeps the latest calls up to its limit,
// DefaultCallLimit when not told, and every call when told so.
func TestRecorderLimit(t *testing.T) {
	run := func(rec *Recorder, n int) {
		for i := 0; i < n; i++ {
			critest.MustRun(t, rec, critest.SandboxConfig(fmt.Sprintf("p%d", i), "default", fmt.Sprintf("uid-%d", i), podParent))
		}
	}
	rt, _ := newSimContainerd(t, cgroup.V2)
	two := NewRecorder(rt, RecordAtMost(2))
	run(two, 5)
	if got := two.Calls(); len(got) != 2 || got[0].Pod != "default/p3" || got[1].Pod != "default/p4" {
		t.Errorf("kept %v, want the calls for p3 and p4", got)
	}
	rt2, _ := newSimContainerd(t, cgroup.V2)
	def := NewRecorder(rt2)
	run(def, DefaultCallLimit+3)
	if n := len(def.Calls()); n != DefaultCallLimit {
		t.Errorf("the default limit kept %d calls, want %d", n, DefaultCallLimit)
	}
	rt3, _ := newSimContainerd(t, cgroup.V2)
	all := NewRecorder(rt3, RecordAtMost(-1))
	run(all, DefaultCallLimit+3)
	if n := len(all.Calls()); n != DefaultCallLimit+3 {
		t.Errorf("a negative limit kept %d of %d calls", n, DefaultCallLimit+3)
	}
}

package cri

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/cri/internal/critest"
)

// tctx is the context of every call the tests make.
var tctx = context.Background()

// The expected cpu.weight values come from the "Worked values" table of
// cri/RUNTIMES.md §3, not from the formulas.
func TestCreateContainerWritesCgroupFiles(t *testing.T) {
	full := &runtimeapi.LinuxContainerResources{CpuShares: 102, CpuQuota: 50000, CpuPeriod: 100000, MemoryLimitInBytes: 200 * mi}
	tests := []struct {
		name    string
		version cgroup.Version
		opts    []SimContainerdOption
		res     *runtimeapi.LinuxContainerResources
		want    map[string]string
	}{
		{"v1 limits", cgroup.V1, nil, full, map[string]string{
			"cpu.shares": "102", "cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": "50000", "memory.limit_in_bytes": "209715200"}},
		{"v1 no limits", cgroup.V1, nil, &runtimeapi.LinuxContainerResources{CpuShares: 2, CpuPeriod: 100000}, map[string]string{
			"cpu.shares": "2", "cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": "-1", "memory.limit_in_bytes": "9223372036854771712"}},
		{"v1 quota -1", cgroup.V1, nil, &runtimeapi.LinuxContainerResources{CpuShares: 1024, CpuQuota: -1, CpuPeriod: 100000}, map[string]string{
			"cpu.shares": "1024", "cpu.cfs_quota_us": "-1"}},
		{"v2 quadratic 102 shares", cgroup.V2, nil, full, map[string]string{
			"cpu.weight": "17", "cpu.max": "50000 100000", "memory.max": "209715200"}},
		{"v2 linear 102 shares", cgroup.V2, []SimContainerdOption{WithContainerWeight(cgconfig.LinearWeight)}, full, map[string]string{
			"cpu.weight": "4", "cpu.max": "50000 100000", "memory.max": "209715200"}},
		{"v2 quadratic 1 CPU", cgroup.V2, nil, &runtimeapi.LinuxContainerResources{CpuShares: 1024}, map[string]string{
			"cpu.weight": "100", "cpu.max": "max 100000", "memory.max": "max"}},
		{"v2 linear 1 CPU", cgroup.V2, []SimContainerdOption{WithContainerWeight(cgconfig.LinearWeight)}, &runtimeapi.LinuxContainerResources{CpuShares: 1024}, map[string]string{
			"cpu.weight": "39"}},
		{"v2 quadratic 2048 shares", cgroup.V2, nil, &runtimeapi.LinuxContainerResources{CpuShares: 2048}, map[string]string{
			"cpu.weight": "174"}},
		{"v2 no limits", cgroup.V2, nil, &runtimeapi.LinuxContainerResources{CpuShares: 2, CpuPeriod: 100000}, map[string]string{
			"cpu.weight": "1", "cpu.max": "max 100000", "memory.max": "max"}},
		{"v2 quota without period takes 100000", cgroup.V2, nil, &runtimeapi.LinuxContainerResources{CpuQuota: 20000}, map[string]string{
			"cpu.max": "20000 100000"}},
		{"v2 quota -1 is max", cgroup.V2, nil, &runtimeapi.LinuxContainerResources{CpuQuota: -1, CpuPeriod: 50000}, map[string]string{
			"cpu.max": "max 50000"}},
		{"v2 memory -1 is max", cgroup.V2, nil, &runtimeapi.LinuxContainerResources{MemoryLimitInBytes: -1}, map[string]string{
			"memory.max": "max"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt, cg := newSimContainerd(t, tt.version, tt.opts...)
			sb := critest.SandboxConfig("web", "default", "uid-a", podParent)
			sbID := critest.MustRun(t, rt, sb)
			id := critest.MustCreate(t, rt, sbID, sb, critest.ContainerConfig(sb, "app", 0, tt.res))

			path := podParent + "/" + id
			files := cg.Files(path)
			if files == nil {
				t.Fatalf("container cgroup %s was not created; cgroups: %v", path, cg.Paths())
			}
			for file, want := range tt.want {
				if got := files[file]; got != want {
					t.Errorf("%s/%s = %q, want %q", path, file, got, want)
				}
			}
			for _, w := range cg.Writes() {
				if w.Path != path {
					t.Errorf("write to %s/%s, want writes to the container cgroup only", w.Path, w.File)
				}
			}
			if got := status(t, rt, id).State; got != runtimeapi.ContainerState_CONTAINER_CREATED {
				t.Errorf("state = %v, want CONTAINER_CREATED", got)
			}
		})
	}
}

func TestContainerCgroupPath(t *testing.T) {
	tests := []struct {
		name   string
		driver cgroup.Driver
		parent string
		want   string
	}{
		{"cgroupfs", cgroup.DriverCgroupfs, "kubepods/burstable/poduid-a", "kubepods/burstable/poduid-a/ctr-1"},
		{"cgroupfs leading slash", cgroup.DriverCgroupfs, "/kubepods/burstable/poduid-a", "kubepods/burstable/poduid-a/ctr-1"},
		{"systemd path", cgroup.DriverSystemd, "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-poduid_a.slice",
			"kubepods.slice/kubepods-burstable.slice/kubepods-burstable-poduid_a.slice/cri-containerd-ctr-1.scope"},
		{"systemd slice name", cgroup.DriverSystemd, "kubepods-burstable-poduid_a.slice",
			"kubepods.slice/kubepods-burstable.slice/kubepods-burstable-poduid_a.slice/cri-containerd-ctr-1.scope"},
		{"systemd guaranteed slice name", cgroup.DriverSystemd, "kubepods-poduid_a.slice",
			"kubepods.slice/kubepods-poduid_a.slice/cri-containerd-ctr-1.scope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt, cg := newSimContainerd(t, cgroup.V2, WithDriver(tt.driver))
			sb := critest.SandboxConfig("web", "default", "uid-a", tt.parent)
			sbID := critest.MustRun(t, rt, sb)
			id := critest.MustCreate(t, rt, sbID, sb, critest.ContainerConfig(sb, "app", 0, &runtimeapi.LinuxContainerResources{CpuShares: 1024}))
			if !cg.Exists(tt.want) {
				t.Errorf("cgroup %s does not exist; cgroups: %v", tt.want, cg.Paths())
			}
			if err := rt.RemoveContainer(tctx, id); err != nil {
				t.Fatalf("RemoveContainer: %v", err)
			}
			if cg.Exists(tt.want) {
				t.Errorf("cgroup %s still exists after RemoveContainer", tt.want)
			}
		})
	}
}

func TestRunPodSandboxRejectsBadSliceName(t *testing.T) {
	rt, _ := newSimContainerd(t, cgroup.V2, WithDriver(cgroup.DriverSystemd))
	_, err := rt.RunPodSandbox(tctx, critest.SandboxConfig("web", "default", "uid-a", "kubepods--a.slice"), "")
	if !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("RunPodSandbox with slice kubepods--a.slice: err = %v, want ErrInvalidArgument", err)
	}
}

func TestUpdateContainerResourcesMergesNonZeroFields(t *testing.T) {
	initial := &runtimeapi.LinuxContainerResources{
		CpuShares: 1024, CpuQuota: 100000, CpuPeriod: 100000, MemoryLimitInBytes: 256 * mi,
		OomScoreAdj: 1000, Unified: map[string]string{"memory.oom.group": "1"},
		HugepageLimits: []*runtimeapi.HugepageLimit{{PageSize: "1GB", Limit: 0}},
	}
	tests := []struct {
		name       string
		version    cgroup.Version
		update     *runtimeapi.LinuxContainerResources
		want       linuxFields
		wantWrites []string // file: old -> new
	}{
		{
			name:    "v2 quota only",
			version: cgroup.V2,
			update:  &runtimeapi.LinuxContainerResources{CpuQuota: 50000},
			want: linuxFields{CpuShares: 1024, CpuQuota: 50000, CpuPeriod: 100000, MemoryLimitInBytes: 256 * mi,
				OomScoreAdj: 1000, Unified: map[string]string{"memory.oom.group": "1"}, Hugepages: []string{"1GB=0"}},
			wantWrites: []string{"cpu.max: 100000 100000 -> 50000 100000"},
		},
		{
			name:    "v1 memory only",
			version: cgroup.V1,
			update:  &runtimeapi.LinuxContainerResources{MemoryLimitInBytes: 512 * mi},
			want: linuxFields{CpuShares: 1024, CpuQuota: 100000, CpuPeriod: 100000, MemoryLimitInBytes: 512 * mi,
				OomScoreAdj: 1000, Unified: map[string]string{"memory.oom.group": "1"}, Hugepages: []string{"1GB=0"}},
			wantWrites: []string{"memory.limit_in_bytes: 268435456 -> 536870912"},
		},
		{
			name:    "v2 full set as the kubelet sends it",
			version: cgroup.V2,
			update:  &runtimeapi.LinuxContainerResources{CpuShares: 2048, CpuQuota: 200000, CpuPeriod: 100000, MemoryLimitInBytes: 256 * mi},
			want: linuxFields{CpuShares: 2048, CpuQuota: 200000, CpuPeriod: 100000, MemoryLimitInBytes: 256 * mi,
				OomScoreAdj: 1000, Unified: map[string]string{"memory.oom.group": "1"}, Hugepages: []string{"1GB=0"}},
			wantWrites: []string{"cpu.weight: 100 -> 174", "cpu.max: 100000 100000 -> 200000 100000"},
		},
		{
			name:    "stored-only fields: cpuset, unified merged, hugepages appended, oom score kept",
			version: cgroup.V2,
			update: &runtimeapi.LinuxContainerResources{
				CpusetCpus: "0-1", CpusetMems: "0", OomScoreAdj: 5,
				Unified:        map[string]string{"memory.high": "max"},
				HugepageLimits: []*runtimeapi.HugepageLimit{{PageSize: "2MB", Limit: 0}},
			},
			want: linuxFields{CpuShares: 1024, CpuQuota: 100000, CpuPeriod: 100000, MemoryLimitInBytes: 256 * mi,
				OomScoreAdj: 1000, CpusetCpus: "0-1", CpusetMems: "0",
				Unified:   map[string]string{"memory.oom.group": "1", "memory.high": "max"},
				Hugepages: []string{"1GB=0", "2MB=0"}},
			wantWrites: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt, cg := newSimContainerd(t, tt.version)
			sb := critest.SandboxConfig("web", "default", "uid-a", podParent)
			sbID := critest.MustRun(t, rt, sb)
			id := critest.MustStart(t, rt, sbID, sb, critest.ContainerConfig(sb, "app", 0, initial))
			before := len(cg.Writes())

			if err := rt.UpdateContainerResources(tctx, id, &runtimeapi.ContainerResources{Linux: tt.update}); err != nil {
				t.Fatalf("UpdateContainerResources: %v", err)
			}
			if diff := cmp.Diff(tt.want, fieldsOf(status(t, rt, id).Resources.GetLinux())); diff != "" {
				t.Errorf("status resources (-want +got):\n%s", diff)
			}
			var got []string
			for _, w := range cg.Writes()[before:] {
				got = append(got, fmt.Sprintf("%s: %s -> %s", w.File, w.Old, w.New))
			}
			if diff := cmp.Diff(tt.wantWrites, got); diff != "" {
				t.Errorf("cgroup writes of the update (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSwapControllerStoresSwapLimit(t *testing.T) {
	tests := []struct {
		name     string
		swap     bool
		update   *runtimeapi.LinuxContainerResources
		wantSwap int64
	}{
		{"no swap controller", false, &runtimeapi.LinuxContainerResources{MemoryLimitInBytes: 100 * mi}, 0},
		{"swap follows the limit", true, &runtimeapi.LinuxContainerResources{MemoryLimitInBytes: 100 * mi}, 100 * mi},
		{"explicit swap wins", true, &runtimeapi.LinuxContainerResources{MemoryLimitInBytes: 100 * mi, MemorySwapLimitInBytes: 300 * mi}, 300 * mi},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt, _ := newSimContainerd(t, cgroup.V1, WithSwapController(tt.swap))
			sb := critest.SandboxConfig("web", "default", "uid-a", podParent)
			id := critest.MustStart(t, rt, critest.MustRun(t, rt, sb), sb, critest.ContainerConfig(sb, "app", 0, nil))
			if err := rt.UpdateContainerResources(tctx, id, &runtimeapi.ContainerResources{Linux: tt.update}); err != nil {
				t.Fatalf("UpdateContainerResources: %v", err)
			}
			if got := status(t, rt, id).Resources.GetLinux().GetMemorySwapLimitInBytes(); got != tt.wantSwap {
				t.Errorf("swap limit = %d, want %d", got, tt.wantSwap)
			}
		})
	}
}

func TestContainerStatusReportsLastAcceptedSpec(t *testing.T) {
	rt, cg := newSimContainerd(t, cgroup.V1)
	sb := critest.SandboxConfig("web", "default", "uid-a", podParent)
	id := critest.MustStart(t, rt, critest.MustRun(t, rt, sb), sb, critest.ContainerConfig(sb, "app", 0,
		&runtimeapi.LinuxContainerResources{CpuShares: 1024, CpuQuota: 100000, CpuPeriod: 100000, MemoryLimitInBytes: 200 * mi}))
	if err := rt.SetMemoryUsage(id, 100*mi); err != nil {
		t.Fatal(err)
	}
	memLimit := func() int64 { return status(t, rt, id).Resources.GetLinux().GetMemoryLimitInBytes() }

	if err := rt.UpdateContainerResources(tctx, id, &runtimeapi.ContainerResources{Linux: &runtimeapi.LinuxContainerResources{MemoryLimitInBytes: 300 * mi}}); err != nil {
		t.Fatalf("raise to 300Mi: %v", err)
	}
	if got := memLimit(); got != 300*mi {
		t.Errorf("after an accepted update, status memory limit = %d, want %d", got, 300*mi)
	}
	if err := rt.UpdateContainerResources(tctx, id, &runtimeapi.ContainerResources{Linux: &runtimeapi.LinuxContainerResources{MemoryLimitInBytes: 50 * mi}}); err == nil {
		t.Fatal("lowering below usage on v1 succeeded, want an error")
	}
	if got := memLimit(); got != 300*mi {
		t.Errorf("after a failed update, status memory limit = %d, want the accepted %d", got, 300*mi)
	}

	// A change made to the cgroup behind the runtime's back does not show:
	// the status comes from the stored spec.
	other := int64(400 * mi)
	if _, err := cg.Set(podParent+"/"+id, cgroup.Values{MemoryLimit: &other}); err != nil {
		t.Fatal(err)
	}
	if got := memLimit(); got != 300*mi {
		t.Errorf("after a direct cgroup write, status memory limit = %d, want the stored %d", got, 300*mi)
	}
}

func TestV1MemoryLimitBelowUsageIsRejected(t *testing.T) {
	rt, cg := newSimContainerd(t, cgroup.V1)
	sb := critest.SandboxConfig("web", "default", "uid-a", podParent)
	initial := &runtimeapi.LinuxContainerResources{CpuShares: 1024, CpuQuota: 100000, CpuPeriod: 100000, MemoryLimitInBytes: 200 * mi}
	id := critest.MustStart(t, rt, critest.MustRun(t, rt, sb), sb, critest.ContainerConfig(sb, "app", 0, initial))
	// Peak 150Mi, now 100Mi.
	for _, u := range []int64{150 * mi, 100 * mi} {
		if err := rt.SetMemoryUsage(id, u); err != nil {
			t.Fatal(err)
		}
	}
	path := podParent + "/" + id
	filesBefore := cg.Files(path)
	pid, _ := rt.PID(id)

	err := rt.UpdateContainerResources(tctx, id, &runtimeapi.ContainerResources{Linux: &runtimeapi.LinuxContainerResources{
		CpuShares: 2048, CpuQuota: 200000, CpuPeriod: 100000, MemoryLimitInBytes: 50 * mi}})

	const wantMsg = "unable to set memory limit to 52428800 (current usage: 104857600, peak usage: 157286400)"
	if err == nil || !strings.Contains(err.Error(), wantMsg) {
		t.Fatalf("err = %v, want one containing %q", err, wantMsg)
	}
	if !strings.HasPrefix(err.Error(), "failed to update resources: ") {
		t.Errorf("err = %q, want containerd's prefix \"failed to update resources: \"", err)
	}
	var mle *MemoryLimitError
	if !errors.As(err, &mle) || mle.Limit != 50*mi || mle.Usage != 100*mi || mle.Peak != 150*mi {
		t.Errorf("errors.As MemoryLimitError = %+v, want limit 50Mi, usage 100Mi, peak 150Mi", mle)
	}
	if !errors.Is(err, syscall.EBUSY) {
		t.Errorf("errors.Is(err, EBUSY) = false for %v", err)
	}
	if diff := cmp.Diff(filesBefore, cg.Files(path)); diff != "" {
		t.Errorf("cgroup files changed by the rejected update (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(fieldsOf(initial), fieldsOf(status(t, rt, id).Resources.GetLinux())); diff != "" {
		t.Errorf("status resources changed by the rejected update (-want +got):\n%s", diff)
	}
	st := status(t, rt, id)
	if newPID, ok := rt.PID(id); st.State != runtimeapi.ContainerState_CONTAINER_RUNNING || !ok || newPID != pid {
		t.Errorf("after the rejected update: state %v, pid %d (%v); want RUNNING with pid %d", st.State, newPID, ok, pid)
	}
}

func TestV2MemoryLimitBelowUsageOOMKills(t *testing.T) {
	rt, cg := newSimContainerd(t, cgroup.V2)
	sb := critest.SandboxConfig("web", "default", "uid-a", podParent)
	id := critest.MustStart(t, rt, critest.MustRun(t, rt, sb), sb, critest.ContainerConfig(sb, "app", 0,
		&runtimeapi.LinuxContainerResources{CpuShares: 1024, MemoryLimitInBytes: 200 * mi}))
	if err := rt.SetMemoryUsage(id, 100*mi); err != nil {
		t.Fatal(err)
	}

	if err := rt.UpdateContainerResources(tctx, id, &runtimeapi.ContainerResources{Linux: &runtimeapi.LinuxContainerResources{MemoryLimitInBytes: 50 * mi}}); err != nil {
		t.Fatalf("UpdateContainerResources on v2 below usage: %v, want success (the kernel OOM-kills instead)", err)
	}
	st := status(t, rt, id)
	if st.State != runtimeapi.ContainerState_CONTAINER_EXITED || st.ExitCode != 137 || st.Reason != "OOMKilled" || st.FinishedAt == 0 {
		t.Errorf("status = state %v, exit %d, reason %q, finishedAt %d; want EXITED, 137, OOMKilled, set",
			st.State, st.ExitCode, st.Reason, st.FinishedAt)
	}
	if got := st.Resources.GetLinux().GetMemoryLimitInBytes(); got != 50*mi {
		t.Errorf("status memory limit = %d, want the accepted %d", got, 50*mi)
	}
	if pid, ok := rt.PID(id); ok {
		t.Errorf("PID = %d after the OOM kill, want none", pid)
	}
	files := cg.Files(podParent + "/" + id)
	if files["memory.max"] != "52428800" || !strings.Contains(files["memory.events"], "oom_kill 1") {
		t.Errorf("memory.max = %q, memory.events = %q; want 52428800 and oom_kill 1", files["memory.max"], files["memory.events"])
	}
}

func TestSetMemoryUsageAboveLimitOOMKills(t *testing.T) {
	for _, version := range []cgroup.Version{cgroup.V1, cgroup.V2} {
		t.Run(version.String(), func(t *testing.T) {
			rt, _ := newSimContainerd(t, version)
			sb := critest.SandboxConfig("web", "default", "uid-a", podParent)
			id := critest.MustStart(t, rt, critest.MustRun(t, rt, sb), sb, critest.ContainerConfig(sb, "app", 0,
				&runtimeapi.LinuxContainerResources{MemoryLimitInBytes: 100 * mi}))
			if err := rt.SetMemoryUsage(id, 150*mi); err != nil {
				t.Fatal(err)
			}
			st := status(t, rt, id)
			if st.State != runtimeapi.ContainerState_CONTAINER_EXITED || st.ExitCode != 137 || st.Reason != "OOMKilled" {
				t.Errorf("status = %v/%d/%q, want EXITED/137/OOMKilled", st.State, st.ExitCode, st.Reason)
			}
		})
	}
}

func TestRestartIsANewContainerAndUpdateKeepsProcess(t *testing.T) {
	rt, _ := newSimContainerd(t, cgroup.V2)
	sb := critest.SandboxConfig("web", "default", "uid-a", podParent)
	sbID := critest.MustRun(t, rt, sb)
	res := &runtimeapi.LinuxContainerResources{CpuShares: 1024, CpuQuota: 100000, CpuPeriod: 100000}
	first := critest.MustStart(t, rt, sbID, sb, critest.ContainerConfig(sb, "app", 0, res))
	pid0, ok := rt.PID(first)
	if !ok || pid0 != 1000 {
		t.Fatalf("first PID = %d (%v), want 1000", pid0, ok)
	}
	started := status(t, rt, first).StartedAt

	if err := rt.UpdateContainerResources(tctx, first, &runtimeapi.ContainerResources{Linux: &runtimeapi.LinuxContainerResources{CpuQuota: 150000}}); err != nil {
		t.Fatal(err)
	}
	if pid, _ := rt.PID(first); pid != pid0 {
		t.Errorf("PID after an in-place update = %d, want %d", pid, pid0)
	}
	if st := status(t, rt, first); st.StartedAt != started || st.Metadata.Attempt != 0 {
		t.Errorf("after update: startedAt %d (was %d), attempt %d; want unchanged, 0", st.StartedAt, started, st.Metadata.Attempt)
	}

	if err := rt.Exit(first, 1, ""); err != nil {
		t.Fatal(err)
	}
	if st := status(t, rt, first); st.State != runtimeapi.ContainerState_CONTAINER_EXITED || st.ExitCode != 1 || st.Reason != "Error" {
		t.Errorf("after Exit: %v/%d/%q, want EXITED/1/Error", st.State, st.ExitCode, st.Reason)
	}
	if _, err := rt.CreateContainer(tctx, sbID, critest.ContainerConfig(sb, "app", 0, res), sb); !errors.Is(err, ErrNameReserved) {
		t.Errorf("re-creating attempt 0 while the old container exists: err = %v, want ErrNameReserved", err)
	}

	second := critest.MustStart(t, rt, sbID, sb, critest.ContainerConfig(sb, "app", 1, res))
	if second == first {
		t.Errorf("restart reused container ID %s", first)
	}
	st := status(t, rt, second)
	if st.Metadata.Attempt != 1 || st.Metadata.Name != "app" {
		t.Errorf("restarted metadata = %v, want app attempt 1", st.Metadata)
	}
	if pid, _ := rt.PID(second); pid != 1001 {
		t.Errorf("restarted PID = %d, want 1001", pid)
	}
}

func TestContainerLifecycleStates(t *testing.T) {
	rt, cg := newSimContainerd(t, cgroup.V2)
	sb := critest.SandboxConfig("web", "default", "uid-a", podParent)
	sbID := critest.MustRun(t, rt, sb)
	created := critest.MustCreate(t, rt, sbID, sb, critest.ContainerConfig(sb, "init", 0, nil))
	running := critest.MustStart(t, rt, sbID, sb, critest.ContainerConfig(sb, "app", 0, nil))
	if err := rt.SetMemoryUsage(running, 10*mi); err != nil {
		t.Fatal(err)
	}

	if err := rt.StartContainer(tctx, running); !errors.Is(err, ErrNotCreated) {
		t.Errorf("second StartContainer: err = %v, want ErrNotCreated", err)
	}
	if err := rt.SetMemoryUsage(created, mi); !errors.Is(err, ErrNotRunning) {
		t.Errorf("SetMemoryUsage on a created container: err = %v, want ErrNotRunning", err)
	}
	if err := rt.StopContainer(tctx, created, 10); err != nil {
		t.Errorf("StopContainer on a created container: %v", err)
	}
	if got := status(t, rt, created).State; got != runtimeapi.ContainerState_CONTAINER_CREATED {
		t.Errorf("stopped created container is %v, want CONTAINER_CREATED (containerd leaves it)", got)
	}

	if err := rt.StopContainer(tctx, running, 10); err != nil {
		t.Fatal(err)
	}
	st := status(t, rt, running)
	if st.State != runtimeapi.ContainerState_CONTAINER_EXITED || st.ExitCode != 0 || st.Reason != "Completed" || st.FinishedAt < st.StartedAt {
		t.Errorf("stopped: %v/%d/%q finished %d started %d; want EXITED/0/Completed, finished after start",
			st.State, st.ExitCode, st.Reason, st.FinishedAt, st.StartedAt)
	}
	if u, err := cg.MemoryUsage(podParent + "/" + running); err != nil || u != 0 {
		t.Errorf("usage after stop = %d (%v), want 0", u, err)
	}
	if err := rt.StopContainer(tctx, running, 10); err != nil {
		t.Errorf("second StopContainer: %v, want nil (idempotent)", err)
	}
	if err := rt.Exit(running, 1, ""); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Exit of an exited container: err = %v, want ErrNotRunning", err)
	}
}

func TestExitReasons(t *testing.T) {
	tests := []struct {
		code       int32
		reason     string
		wantReason string
	}{
		{0, "", "Completed"},
		{1, "", "Error"},
		{137, "OOMKilled", "OOMKilled"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d-%s", tt.code, tt.wantReason), func(t *testing.T) {
			rt, _ := newSimContainerd(t, cgroup.V2)
			sb := critest.SandboxConfig("web", "default", "uid-a", podParent)
			id := critest.MustStart(t, rt, critest.MustRun(t, rt, sb), sb, critest.ContainerConfig(sb, "app", 0, nil))
			if err := rt.Exit(id, tt.code, tt.reason); err != nil {
				t.Fatal(err)
			}
			st := status(t, rt, id)
			if st.ExitCode != tt.code || st.Reason != tt.wantReason || st.State != runtimeapi.ContainerState_CONTAINER_EXITED {
				t.Errorf("status = %v/%d/%q, want EXITED/%d/%q", st.State, st.ExitCode, st.Reason, tt.code, tt.wantReason)
			}
		})
	}
}

func TestUpdateWhileCreatedAppliesAtStart(t *testing.T) {
	rt, cg := newSimContainerd(t, cgroup.V2)
	sb := critest.SandboxConfig("web", "default", "uid-a", podParent)
	id := critest.MustCreate(t, rt, critest.MustRun(t, rt, sb), sb, critest.ContainerConfig(sb, "app", 0,
		&runtimeapi.LinuxContainerResources{CpuQuota: 50000, CpuPeriod: 100000}))
	path := podParent + "/" + id

	if err := rt.UpdateContainerResources(tctx, id, &runtimeapi.ContainerResources{Linux: &runtimeapi.LinuxContainerResources{CpuQuota: 80000}}); err != nil {
		t.Fatal(err)
	}
	if got := cg.Files(path)["cpu.max"]; got != "50000 100000" {
		t.Errorf("cpu.max after an update of a created container = %q, want the create value 50000 100000", got)
	}
	if got := status(t, rt, id).Resources.GetLinux().GetCpuQuota(); got != 80000 {
		t.Errorf("status quota = %d, want the stored 80000", got)
	}
	if err := rt.StartContainer(tctx, id); err != nil {
		t.Fatal(err)
	}
	if got := cg.Files(path)["cpu.max"]; got != "80000 100000" {
		t.Errorf("cpu.max after start = %q, want 80000 100000", got)
	}
}

func TestRemoveContainerAndSandbox(t *testing.T) {
	rt, cg := newSimContainerd(t, cgroup.V1)
	sb := critest.SandboxConfig("web", "default", "uid-a", podParent)
	sbID := critest.MustRun(t, rt, sb)
	a := critest.MustStart(t, rt, sbID, sb, critest.ContainerConfig(sb, "a", 0, nil))
	b := critest.MustStart(t, rt, sbID, sb, critest.ContainerConfig(sb, "b", 0, nil))
	if err := rt.SetMemoryUsage(b, 10*mi); err != nil {
		t.Fatal(err)
	}

	if err := rt.RemoveContainer(tctx, a); err != nil {
		t.Fatalf("RemoveContainer of a running container: %v", err)
	}
	if cg.Exists(podParent + "/" + a) {
		t.Errorf("cgroup of removed container %s still exists", a)
	}
	if _, err := rt.ContainerStatus(tctx, a, false); !errors.Is(err, ErrNotFound) {
		t.Errorf("ContainerStatus of removed container: err = %v, want ErrNotFound", err)
	}
	if err := rt.RemoveContainer(tctx, a); err != nil {
		t.Errorf("second RemoveContainer: %v, want nil (idempotent)", err)
	}

	if err := rt.RemovePodSandbox(tctx, sbID); err != nil {
		t.Fatalf("RemovePodSandbox with a running container: %v", err)
	}
	if cg.Exists(podParent + "/" + b) {
		t.Errorf("cgroup of container %s survived RemovePodSandbox", b)
	}
	if !cg.Exists(podParent) {
		t.Errorf("pod cgroup %s was removed; the kubelet owns it", podParent)
	}
	if cs, _ := rt.ListContainers(tctx, nil); len(cs) != 0 {
		t.Errorf("ListContainers after RemovePodSandbox = %d containers, want 0", len(cs))
	}
	if sbs, _ := rt.ListPodSandbox(tctx, nil); len(sbs) != 0 {
		t.Errorf("ListPodSandbox after RemovePodSandbox = %d sandboxes, want 0", len(sbs))
	}
	if err := rt.RemovePodSandbox(tctx, sbID); err != nil {
		t.Errorf("second RemovePodSandbox: %v, want nil (idempotent)", err)
	}
	// The names are free again.
	sbID2 := critest.MustRun(t, rt, sb)
	critest.MustCreate(t, rt, sbID2, sb, critest.ContainerConfig(sb, "a", 0, nil))
}

func TestStopPodSandbox(t *testing.T) {
	rt, _ := newSimContainerd(t, cgroup.V2)
	sb := critest.SandboxConfig("web", "default", "uid-a", podParent)
	sbID := critest.MustRun(t, rt, sb)
	id := critest.MustStart(t, rt, sbID, sb, critest.ContainerConfig(sb, "app", 0, nil))

	if err := rt.StopPodSandbox(tctx, sbID); err != nil {
		t.Fatal(err)
	}
	if st := status(t, rt, id); st.State != runtimeapi.ContainerState_CONTAINER_EXITED {
		t.Errorf("container after StopPodSandbox is %v, want EXITED", st.State)
	}
	sbs, _ := rt.ListPodSandbox(tctx, &runtimeapi.PodSandboxFilter{Id: sbID})
	if len(sbs) != 1 || sbs[0].State != runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
		t.Errorf("sandbox after StopPodSandbox = %v, want NOTREADY", sbs)
	}
	if _, err := rt.CreateContainer(tctx, sbID, critest.ContainerConfig(sb, "late", 0, nil), sb); !errors.Is(err, ErrSandboxNotReady) {
		t.Errorf("CreateContainer in a stopped sandbox: err = %v, want ErrSandboxNotReady", err)
	}
	if err := rt.StopPodSandbox(tctx, sbID); err != nil {
		t.Errorf("second StopPodSandbox: %v, want nil", err)
	}
}

func TestNameReservation(t *testing.T) {
	rt, _ := newSimContainerd(t, cgroup.V2)
	sb := critest.SandboxConfig("web", "default", "uid-a", podParent)
	critest.MustRun(t, rt, sb)
	if _, err := rt.RunPodSandbox(tctx, sb, ""); !errors.Is(err, ErrNameReserved) {
		t.Errorf("second sandbox with the same metadata: err = %v, want ErrNameReserved", err)
	}
	next := critest.SandboxConfig("web", "default", "uid-a", podParent)
	next.Metadata.Attempt = 1
	if _, err := rt.RunPodSandbox(tctx, next, ""); err != nil {
		t.Errorf("sandbox attempt 1: %v", err)
	}
	if _, err := rt.RunPodSandbox(tctx, &runtimeapi.PodSandboxConfig{}, ""); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("sandbox without metadata: err = %v, want ErrInvalidArgument", err)
	}
}

func TestUnknownIDsAreNotFound(t *testing.T) {
	rt, _ := newSimContainerd(t, cgroup.V2)
	sb := critest.SandboxConfig("web", "default", "uid-a", podParent)
	const missing = "ctr-404"
	calls := map[string]func() error{
		"StartContainer": func() error { return rt.StartContainer(tctx, missing) },
		"StopContainer":  func() error { return rt.StopContainer(tctx, missing, 0) },
		"ContainerStatus": func() error {
			_, err := rt.ContainerStatus(tctx, missing, false)
			return err
		},
		"UpdateContainerResources": func() error {
			return rt.UpdateContainerResources(tctx, missing, &runtimeapi.ContainerResources{Linux: &runtimeapi.LinuxContainerResources{CpuShares: 2}})
		},
		"ContainerStats": func() error {
			_, err := rt.ContainerStats(tctx, missing)
			return err
		},
		"ExecSync": func() error {
			_, _, err := rt.ExecSync(tctx, missing, []string{"true"}, 0)
			return err
		},
		"SetMemoryUsage": func() error { return rt.SetMemoryUsage(missing, mi) },
		"Exit":           func() error { return rt.Exit(missing, 0, "") },
		"StopPodSandbox": func() error { return rt.StopPodSandbox(tctx, missing) },
		"UpdatePodSandboxResources": func() error {
			_, err := rt.UpdatePodSandboxResources(tctx, &runtimeapi.UpdatePodSandboxResourcesRequest{PodSandboxId: missing})
			return err
		},
		"CreateContainer": func() error {
			_, err := rt.CreateContainer(tctx, missing, critest.ContainerConfig(sb, "app", 0, nil), sb)
			return err
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			err := call()
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("err = %v, want ErrNotFound", err)
			}
			if !strings.Contains(err.Error(), missing) {
				t.Errorf("err = %q, want the ID %s in it", err, missing)
			}
		})
	}
	// Removal is idempotent by the CRI contract.
	if err := rt.RemoveContainer(tctx, missing); err != nil {
		t.Errorf("RemoveContainer(unknown) = %v, want nil", err)
	}
	if err := rt.RemovePodSandbox(tctx, missing); err != nil {
		t.Errorf("RemovePodSandbox(unknown) = %v, want nil", err)
	}
	if _, ok := rt.PID(missing); ok {
		t.Error("PID(unknown) reported a process")
	}
}

func TestListFilters(t *testing.T) {
	rt, _ := newSimContainerd(t, cgroup.V2)
	web := critest.SandboxConfig("web", "default", "uid-a", podParent)
	db := critest.SandboxConfig("db", "prod", "uid-b", "kubepods/poduid-b")
	webID, dbID := critest.MustRun(t, rt, web), critest.MustRun(t, rt, db)
	app := critest.MustStart(t, rt, webID, web, critest.ContainerConfig(web, "app", 0, nil))
	side := critest.MustCreate(t, rt, webID, web, critest.ContainerConfig(web, "side", 0, nil))
	pg := critest.MustStart(t, rt, dbID, db, critest.ContainerConfig(db, "pg", 0, nil))
	if err := rt.StopPodSandbox(tctx, dbID); err != nil {
		t.Fatal(err)
	}

	containerTests := []struct {
		name   string
		filter *runtimeapi.ContainerFilter
		want   []string
	}{
		{"nil", nil, []string{app, side, pg}},
		{"id", &runtimeapi.ContainerFilter{Id: side}, []string{side}},
		{"sandbox", &runtimeapi.ContainerFilter{PodSandboxId: webID}, []string{app, side}},
		{"running", &runtimeapi.ContainerFilter{State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}}, []string{app}},
		{"exited", &runtimeapi.ContainerFilter{State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_EXITED}}, []string{pg}},
		{"label", &runtimeapi.ContainerFilter{LabelSelector: map[string]string{LabelContainerName: "side"}}, []string{side}},
		{"label and sandbox disagree", &runtimeapi.ContainerFilter{PodSandboxId: dbID, LabelSelector: map[string]string{LabelPodName: "web"}}, nil},
	}
	for _, tt := range containerTests {
		t.Run("containers "+tt.name, func(t *testing.T) {
			cs, err := rt.ListContainers(tctx, tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range cs {
				got = append(got, c.Id)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("IDs (-want +got):\n%s", diff)
			}
		})
	}

	sandboxTests := []struct {
		name   string
		filter *runtimeapi.PodSandboxFilter
		want   []string
	}{
		{"nil", nil, []string{webID, dbID}},
		{"id", &runtimeapi.PodSandboxFilter{Id: dbID}, []string{dbID}},
		{"ready", &runtimeapi.PodSandboxFilter{State: &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}}, []string{webID}},
		{"label", &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{LabelPodNamespace: "prod"}}, []string{dbID}},
	}
	for _, tt := range sandboxTests {
		t.Run("sandboxes "+tt.name, func(t *testing.T) {
			sbs, err := rt.ListPodSandbox(tctx, tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range sbs {
				got = append(got, s.Id)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("IDs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIDsFollowCreationOrder(t *testing.T) {
	rt, _ := newSimContainerd(t, cgroup.V2)
	var sbIDs, ctrIDs []string
	for i := range 11 {
		sb := critest.SandboxConfig(fmt.Sprintf("p%d", i), "default", fmt.Sprintf("uid-%d", i), fmt.Sprintf("kubepods/poduid-%d", i))
		sbID := critest.MustRun(t, rt, sb)
		sbIDs = append(sbIDs, sbID)
		ctrIDs = append(ctrIDs, critest.MustCreate(t, rt, sbID, sb, critest.ContainerConfig(sb, "app", 0, nil)))
	}
	if sbIDs[0] != "sb-1" || sbIDs[10] != "sb-11" || ctrIDs[0] != "ctr-1" || ctrIDs[10] != "ctr-11" {
		t.Errorf("IDs = %v / %v, want sb-1..sb-11 and ctr-1..ctr-11", sbIDs, ctrIDs)
	}
	cs, _ := rt.ListContainers(tctx, nil)
	var got []string
	for _, c := range cs {
		got = append(got, c.Id)
	}
	if diff := cmp.Diff(ctrIDs, got); diff != "" {
		t.Errorf("ListContainers order (-want +got):\n%s", diff)
	}
}

func TestContainerStatusFields(t *testing.T) {
	rt, _ := newSimContainerd(t, cgroup.V2)
	sb := critest.SandboxConfig("web", "default", "uid-a", podParent)
	cfg := critest.ContainerConfig(sb, "app", 3, &runtimeapi.LinuxContainerResources{CpuShares: 512})
	cfg.Annotations = map[string]string{"io.kubernetes.container.hash": "abc"}
	id := critest.MustStart(t, rt, critest.MustRun(t, rt, sb), sb, cfg)

	st := status(t, rt, id)
	if st.Id != id || st.Metadata.GetName() != "app" || st.Metadata.GetAttempt() != 3 || st.Image.GetImage() != "busybox" ||
		st.Labels[LabelContainerName] != "app" || st.Annotations["io.kubernetes.container.hash"] != "abc" ||
		st.CreatedAt == 0 || st.StartedAt <= st.CreatedAt || st.FinishedAt != 0 {
		t.Errorf("status = %+v; want id, metadata app/3, image, labels, annotations, createdAt < startedAt, no finishedAt", st)
	}
	verbose, err := rt.ContainerStatus(tctx, id, true)
	if err != nil {
		t.Fatal(err)
	}
	const wantInfo = `{"sandboxID":"sb-1","pid":1000,"runtimeSpec":{"process":{"args":["sleep","86400"]}}}`
	if got := verbose.Info["info"]; got != wantInfo {
		t.Errorf("verbose info = %s, want %s", got, wantInfo)
	}
	if plain, _ := rt.ContainerStatus(tctx, id, false); plain.Info != nil {
		t.Errorf("non-verbose status has info %v, want none", plain.Info)
	}

	// The status is a snapshot shared until the container changes; a
	// change makes a new one and leaves the old as it was.
	if again := status(t, rt, id); again != st {
		t.Errorf("a second status of an unchanged container is a new message")
	}
	if err := rt.UpdateContainerResources(tctx, id, &runtimeapi.ContainerResources{Linux: &runtimeapi.LinuxContainerResources{CpuShares: 1024}}); err != nil {
		t.Fatal(err)
	}
	if again := status(t, rt, id); again == st || again.Resources.GetLinux().GetCpuShares() != 1024 {
		t.Errorf("status after an update = %v, want a new snapshot with 1024 shares", again)
	}
	if st.Resources.GetLinux().GetCpuShares() != 512 {
		t.Errorf("the old snapshot changed with the container: %v", st)
	}
}

func TestContainerStats(t *testing.T) {
	rt, _ := newSimContainerd(t, cgroup.V1)
	sb := critest.SandboxConfig("web", "default", "uid-a", podParent)
	id := critest.MustStart(t, rt, critest.MustRun(t, rt, sb), sb, critest.ContainerConfig(sb, "app", 0, nil))
	if err := rt.SetMemoryUsage(id, 64*mi); err != nil {
		t.Fatal(err)
	}
	stats, err := rt.ContainerStats(tctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if ws, u := stats.GetMemory().GetWorkingSetBytes().GetValue(), stats.GetMemory().GetUsageBytes().GetValue(); ws != uint64(64*mi) || u != uint64(64*mi) {
		t.Errorf("working set %d, usage %d; want %d both", ws, u, 64*mi)
	}
	if stats.GetAttributes().GetId() != id || stats.GetMemory().GetTimestamp() == 0 {
		t.Errorf("attributes %v, timestamp %d; want id %s and a timestamp", stats.GetAttributes(), stats.GetMemory().GetTimestamp(), id)
	}
}

func TestUpdatePodSandboxResourcesIsRecordedOnly(t *testing.T) {
	rt, cg := newSimContainerd(t, cgroup.V2)
	sb := critest.SandboxConfig("web", "default", "uid-a", podParent)
	sbID := critest.MustRun(t, rt, sb)
	if got := rt.SandboxResources(sbID); got != nil {
		t.Fatalf("SandboxResources before any update = %v, want nil", got)
	}
	before := len(cg.Writes())
	req := &runtimeapi.UpdatePodSandboxResourcesRequest{
		PodSandboxId: sbID,
		Overhead:     &runtimeapi.LinuxContainerResources{CpuShares: 10},
		Resources:    &runtimeapi.LinuxContainerResources{CpuShares: 2048, CpuQuota: 200000, CpuPeriod: 100000, MemoryLimitInBytes: 512 * mi},
	}
	if _, err := rt.UpdatePodSandboxResources(tctx, req); err != nil {
		t.Fatal(err)
	}
	got := rt.SandboxResources(sbID)
	if got.GetPodSandboxId() != sbID || got.GetResources().GetCpuShares() != 2048 || got.GetResources().GetMemoryLimitInBytes() != 512*mi ||
		got.GetOverhead().GetCpuShares() != 10 {
		t.Errorf("SandboxResources = %v, want the request as sent", got)
	}
	// What SandboxResources returns is a copy: changing it changes
	// nothing kept.
	got.Resources.CpuShares = 1
	if again := rt.SandboxResources(sbID); again.GetResources().GetCpuShares() != 2048 {
		t.Errorf("a change to the returned request reached the runtime: %v", again)
	}
	if w := cg.Writes()[before:]; len(w) != 0 {
		t.Errorf("UpdatePodSandboxResources wrote cgroups: %v", w)
	}
}

func TestExecSyncRunsOnlyTheUsageCommand(t *testing.T) {
	rt, cg := newSimContainerd(t, cgroup.V2)
	sb := critest.SandboxConfig("web", "default", "uid-a", podParent)
	id := critest.MustStart(t, rt, critest.MustRun(t, rt, sb), sb, critest.ContainerConfig(sb, "app", 0, nil))

	if _, _, err := rt.ExecSync(tctx, id, []string{"ls", "/"}, 0); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("ExecSync ls: err = %v, want errors.ErrUnsupported", err)
	}
	cmd := []string{"sh", "-c", "rm -f /dev/shm/resizelet-usage-" + id + "; head -c 3145728 /dev/zero > /dev/shm/resizelet-usage-" + id}
	if _, _, err := rt.ExecSync(tctx, id, cmd, 0); err != nil {
		t.Fatalf("ExecSync of the usage command: %v", err)
	}
	if u, _ := cg.MemoryUsage(podParent + "/" + id); u != 3*mi {
		t.Errorf("usage after the usage command = %d, want %d", u, 3*mi)
	}
	other := []string{"sh", "-c", "rm -f /dev/shm/resizelet-usage-ctr-99; head -c 1 /dev/zero > /dev/shm/resizelet-usage-ctr-99"}
	if _, _, err := rt.ExecSync(tctx, id, other, 0); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("usage command naming another container: err = %v, want errors.ErrUnsupported", err)
	}
}

// TestConcurrentUse runs every kind of call from many goroutines at once;
// run it with -race. Each goroutine owns a pod, and all of them also update
// and read one shared container.
func TestConcurrentUse(t *testing.T) {
	rt, cg := newSimContainerd(t, cgroup.V2)
	shared := critest.SandboxConfig("shared", "default", "uid-shared", "kubepods/poduid-shared")
	sharedID := critest.MustStart(t, rt, critest.MustRun(t, rt, shared), shared, critest.ContainerConfig(shared, "app", 0, nil))

	const workers = 8
	var wg sync.WaitGroup
	errs := make(chan error, workers*4)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sb := critest.SandboxConfig(fmt.Sprintf("p%d", w), "default", fmt.Sprintf("uid-%d", w), fmt.Sprintf("kubepods/poduid-%d", w))
			sbID, err := rt.RunPodSandbox(tctx, sb, "")
			if err != nil {
				errs <- err
				return
			}
			id, err := rt.CreateContainer(tctx, sbID, critest.ContainerConfig(sb, "app", 0, nil), sb)
			if err != nil {
				errs <- err
				return
			}
			if err := rt.StartContainer(tctx, id); err != nil {
				errs <- err
				return
			}
			for i := 1; i <= 20; i++ {
				quota := int64(1000 * (i + w))
				for _, target := range []string{id, sharedID} {
					if err := rt.UpdateContainerResources(tctx, target, &runtimeapi.ContainerResources{
						Linux: &runtimeapi.LinuxContainerResources{CpuQuota: quota, CpuPeriod: 100000}}); err != nil {
						errs <- err
						return
					}
				}
				if err := rt.SetMemoryUsage(id, int64(i)*mi); err != nil {
					errs <- err
					return
				}
				if _, err := rt.ContainerStatus(tctx, sharedID, false); err != nil {
					errs <- err
					return
				}
				if _, err := rt.ListContainers(tctx, nil); err != nil {
					errs <- err
					return
				}
				if _, err := rt.ContainerStats(tctx, id); err != nil {
					errs <- err
					return
				}
			}
			// Each worker's own container ends with its last quota.
			want := int64(1000 * (20 + w))
			resp, err := rt.ContainerStatus(tctx, id, false)
			if err != nil {
				errs <- err
				return
			}
			if got := resp.Status.Resources.GetLinux().GetCpuQuota(); got != want {
				errs <- fmt.Errorf("worker %d: final quota %d, want %d", w, got, want)
			}
			if got := cg.Files(fmt.Sprintf("kubepods/poduid-%d/%s", w, id))["cpu.max"]; got != fmt.Sprintf("%d 100000", want) {
				errs <- fmt.Errorf("worker %d: final cpu.max %q, want %d 100000", w, got, want)
			}
			if err := rt.RemovePodSandbox(tctx, sbID); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// The shared container's spec and cgroup agree: updates were serialised.
	quota := status(t, rt, sharedID).Resources.GetLinux().GetCpuQuota()
	if got := cg.Files("kubepods/poduid-shared/" + sharedID)["cpu.max"]; got != fmt.Sprintf("%d 100000", quota) {
		t.Errorf("shared container: cpu.max %q, stored quota %d; want them equal", got, quota)
	}
	if cs, _ := rt.ListContainers(tctx, nil); len(cs) != 1 {
		t.Errorf("%d containers left, want only the shared one", len(cs))
	}
}

func benchContainer(b *testing.B) (*SimContainerd, string) {
	b.Helper()
	rt := NewSimContainerd(cgroup.NewSimKernel(cgroup.V2))
	sb := critest.SandboxConfig("web", "default", "uid-a", podParent)
	sbID, err := rt.RunPodSandbox(tctx, sb, "")
	if err != nil {
		b.Fatal(err)
	}
	id, err := rt.CreateContainer(tctx, sbID, critest.ContainerConfig(sb, "app", 0, &runtimeapi.LinuxContainerResources{CpuShares: 1024, MemoryLimitInBytes: 256 * mi}), sb)
	if err != nil {
		b.Fatal(err)
	}
	if err := rt.StartContainer(tctx, id); err != nil {
		b.Fatal(err)
	}
	return rt, id
}

func BenchmarkUpdateContainerResources(b *testing.B) {
	rt, id := benchContainer(b)
	updates := []*runtimeapi.ContainerResources{quotaUpdate(50000), quotaUpdate(60000)}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := rt.UpdateContainerResources(tctx, id, updates[i%2]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkContainerStatus(b *testing.B) {
	rt, id := benchContainer(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rt.ContainerStatus(tctx, id, false); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFaultInjectorPassThrough(b *testing.B) {
	rt, id := benchContainer(b)
	f := NewFaultInjector(rt)
	f.Inject(Fault{Method: "StopContainer", PodName: "other"})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.ContainerStatus(tctx, id, false); err != nil {
			b.Fatal(err)
		}
	}
}

// unwrapping is a cgroup.Manager decorator that exposes what it wraps.
type unwrapping struct{ cgroup.Manager }

func (u unwrapping) Unwrap() cgroup.Manager { return u.Manager }

// opaque is a cgroup.Manager decorator that hides what it wraps.
type opaque struct{ cgroup.Manager }

func TestCgroupModelDiscovery(t *testing.T) {
	tests := []struct {
		name      string
		build     func(cg *cgroup.SimKernel) *SimContainerd
		wantModel bool
	}{
		{"the model itself", func(cg *cgroup.SimKernel) *SimContainerd { return NewSimContainerd(cg) }, true},
		{"behind Unwrap", func(cg *cgroup.SimKernel) *SimContainerd { return NewSimContainerd(unwrapping{unwrapping{cg}}) }, true},
		{"behind cgroup.Recorder", func(cg *cgroup.SimKernel) *SimContainerd { return NewSimContainerd(cgroup.NewRecorder(cg)) }, true},
		{"hidden by a decorator", func(cg *cgroup.SimKernel) *SimContainerd { return NewSimContainerd(opaque{cg}) }, false},
		{"hidden but given", func(cg *cgroup.SimKernel) *SimContainerd { return NewSimContainerd(opaque{cg}, WithCgroupModel(cg)) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cg := cgroup.NewSimKernel(cgroup.V2)
			rt := tt.build(cg)
			sb := critest.SandboxConfig("web", "default", "uid-a", podParent)
			id := critest.MustStart(t, rt, critest.MustRun(t, rt, sb), sb, critest.ContainerConfig(sb, "app", 0,
				&runtimeapi.LinuxContainerResources{MemoryLimitInBytes: 10 * mi}))
			err := rt.SetMemoryUsage(id, 20*mi)
			if !tt.wantModel {
				if !errors.Is(err, errors.ErrUnsupported) {
					t.Errorf("SetMemoryUsage without a model: err = %v, want errors.ErrUnsupported", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// Usage above the limit OOM-kills: the runtime heard of it.
			if st := status(t, rt, id); st.Reason != "OOMKilled" {
				t.Errorf("reason = %q, want OOMKilled", st.Reason)
			}
		})
	}
}

func TestFailedCgroupWriteKeepsTheStoredSpec(t *testing.T) {
	cg := cgroup.NewSimKernel(cgroup.V2)
	faults := cgroup.NewFaultInjector(cg)
	rt := NewSimContainerd(faults)
	sb := critest.SandboxConfig("web", "default", "uid-a", podParent)
	initial := &runtimeapi.LinuxContainerResources{CpuShares: 1024, CpuQuota: 100000, CpuPeriod: 100000, MemoryLimitInBytes: 128 * mi}
	id := critest.MustStart(t, rt, critest.MustRun(t, rt, sb), sb, critest.ContainerConfig(sb, "app", 0, initial))
	path := podParent + "/" + id
	before := cg.Files(path)

	faults.Inject(func(p string) bool { return p == path }, syscall.EIO, 1)
	err := rt.UpdateContainerResources(tctx, id, &runtimeapi.ContainerResources{Linux: &runtimeapi.LinuxContainerResources{
		CpuShares: 2048, CpuQuota: 200000, CpuPeriod: 100000, MemoryLimitInBytes: 256 * mi}})
	if !errors.Is(err, syscall.EIO) || !strings.HasPrefix(err.Error(), "failed to update resources: ") {
		t.Fatalf("err = %v, want EIO wrapped as containerd reports it", err)
	}
	if diff := cmp.Diff(fieldsOf(initial), fieldsOf(status(t, rt, id).Resources.GetLinux())); diff != "" {
		t.Errorf("status after a failed cgroup write (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, cg.Files(path)); diff != "" {
		t.Errorf("cgroup files after a failed write (-before +after):\n%s", diff)
	}
	// The OOM model is found behind the cgroup fault injector.
	if err := rt.SetMemoryUsage(id, mi); err != nil {
		t.Errorf("SetMemoryUsage behind cgroup.FaultInjector: %v", err)
	}
}

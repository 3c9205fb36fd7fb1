package systemd

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgroupfs"
)

const pod = "r.slice/r-kubepods.slice/r-kubepods-burstable.slice/r-kubepods-burstable-pod1.slice"

// newTree returns a Manager and its TreeConn over a temp-dir cgroup tree
// of the version.
func newTree(t *testing.T, version cgroup.Version) (*Manager, *TreeConn, string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("cgroupfs.FS is implemented on Linux only")
	}
	root := t.TempDir()
	write := func(dir string, files map[string]string) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for f, c := range files {
			if err := os.WriteFile(filepath.Join(dir, f), []byte(c+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if version == cgroup.V2 {
		write(root, map[string]string{"cgroup.controllers": "cpu memory", "cgroup.subtree_control": "", "cgroup.procs": ""})
	} else {
		write(filepath.Join(root, "cpu"), defaultFiles(cgroup.V1, 0))
		write(filepath.Join(root, "memory"), defaultFiles(cgroup.V1, 1))
	}
	fs, err := cgroupfs.New(root, cgroupfs.WithVersion(version), cgroupfs.WithV1Mounts(map[string]string{"cpu": filepath.Join(root, "cpu"), "memory": filepath.Join(root, "memory")}))
	if err != nil {
		t.Fatal(err)
	}
	conn := NewTreeConn(root, version)
	m, err := New(fs, conn)
	if err != nil {
		t.Fatal(err)
	}
	if m.systemdVersion != 252 {
		t.Fatalf("systemd version %d, want 252 from %q", m.systemdVersion, `"252.38-1~deb12u1"`)
	}
	return m, conn, root
}

func u64(v uint64) *uint64 { return &v }
func i64(v int64) *int64   { return &v }

// TestCreateStartsEachMissingSliceTopDown: each missing slice of the path
// is started as a transient unit, its parent first; one that exists is
// not started again, and creating what exists calls nothing.
func TestCreateStartsEachMissingSliceTopDown(t *testing.T) {
	m, conn, root := newTree(t, cgroup.V2)
	if err := m.Create("r.slice/r-kubepods.slice"); err != nil {
		t.Fatal(err)
	}
	if err := m.Create(pod); err != nil {
		t.Fatal(err)
	}
	if err := m.Create(pod); err != nil {
		t.Fatal(err)
	}
	want := []string{"start r.slice", "start r-kubepods.slice", "start r-kubepods-burstable.slice", "start r-kubepods-burstable-pod1.slice"}
	if diff := cmp.Diff(want, conn.Calls()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if !m.Exists(pod) {
		t.Errorf("%s does not exist after Create", pod)
	}
	// The FS made sure the controllers are enabled for the children.
	if b, _ := os.ReadFile(filepath.Join(root, "r.slice", "cgroup.subtree_control")); !strings.Contains(string(b), "cpu") {
		t.Errorf("r.slice's cgroup.subtree_control = %q, want cpu and memory enabled", b)
	}
	props := sliceProperties(cgroup.V2, "r-kubepods.slice", "r.slice")
	var names []string
	for _, p := range props {
		names = append(names, p.Name)
	}
	wantNames := []string{"Description", "Wants", "MemoryAccounting", "CPUAccounting", "IOAccounting", "TasksAccounting", "DefaultDependencies"}
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Errorf("slice properties (-want +got):\n%s", diff)
	}
	if got := props[1].Value.Value(); !slices.Equal(got.([]string), []string{"r.slice"}) {
		t.Errorf("Wants = %v, want the parent slice", got)
	}
	names = names[:0]
	for _, p := range scopeProperties(cgroup.V2, "cri-containerd-1.scope", "r.slice", 42) {
		names = append(names, p.Name)
	}
	wantNames = []string{"Description", "Slice", "Delegate", "PIDs", "MemoryAccounting", "CPUAccounting", "IOAccounting", "TasksAccounting", "DefaultDependencies"}
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Errorf("scope properties (libcontainer's Apply(pid) order) (-want +got):\n%s", diff)
	}
	if got := sliceProperties(cgroup.V1, "r.slice", "-.slice"); got[4].Name != "BlockIOAccounting" || got[1].Value.Value().([]string)[0] != "-.slice" {
		t.Errorf("v1 top slice properties %v, want BlockIOAccounting and Wants=-.slice", got)
	}
}

// TestSlicesMustBeWhereSystemdPutsThem: a slice below another that is
// not its prefix's, or below a plain directory, is refused with
// ErrInvalidPath before anything is called.
func TestSlicesMustBeWhereSystemdPutsThem(t *testing.T) {
	m, conn, _ := newTree(t, cgroup.V2)
	for _, p := range []string{"a.slice/b.slice", "a-b.slice", "x/x-a.slice", "a.slice/a--b.slice", "../a.slice"} {
		if err := m.Create(p); !errors.Is(err, cgroup.ErrInvalidPath) {
			t.Errorf("Create(%q) = %v, want ErrInvalidPath", p, err)
		}
		if _, err := m.Set(p, cgroup.Values{CPUWeight: u64(5)}); !errors.Is(err, cgroup.ErrInvalidPath) {
			t.Errorf("Set(%q) = %v, want ErrInvalidPath", p, err)
		}
	}
	if calls := conn.Calls(); len(calls) != 0 {
		t.Errorf("calls %v, want none", calls)
	}
}

// TestSetGivesPropertiesThenWritesFiles holds Set to libcontainer's
// systemd Set on v2: SetUnitProperties with MemoryMax, CPUWeight,
// CPUQuotaPeriodUSec and CPUQuotaPerSecUSec rounded up to 10 ms, then the
// files, with the rounded quota (417m: 41700 -> 42000). The writes
// returned are what changed, from what the files held before. A
// daemon-reload keeps them, while a value written to the files alone is
// undone by it, which is why the properties come first.
func TestSetGivesPropertiesThenWritesFiles(t *testing.T) {
	m, conn, _ := newTree(t, cgroup.V2)
	if err := m.Create(pod); err != nil {
		t.Fatal(err)
	}
	ws, err := m.Set(pod, cgroup.Values{MemoryLimit: i64(128 << 20), CPUWeight: u64(5), CPUQuota: i64(41700), CPUPeriod: u64(100000)})
	if err != nil {
		t.Fatal(err)
	}
	wantWrites := []cgroup.Write{
		{Path: pod, File: "memory.max", Old: "max", New: "134217728"},
		{Path: pod, File: "cpu.weight", Old: "100", New: "5"},
		{Path: pod, File: "cpu.max", Old: "max 100000", New: "42000 100000"},
	}
	if diff := cmp.Diff(wantWrites, ws); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	calls := conn.Calls()
	wantSet := "set r-kubepods-burstable-pod1.slice MemoryMax=134217728 CPUWeight=5 CPUQuotaPeriodUSec=100000 CPUQuotaPerSecUSec=420000"
	if calls[len(calls)-1] != wantSet {
		t.Errorf("last call %q, want %q", calls[len(calls)-1], wantSet)
	}
	// Unchanged values: the properties are set again, nothing changes.
	if ws, err := m.Set(pod, cgroup.Values{CPUWeight: u64(5)}); err != nil || len(ws) != 0 {
		t.Errorf("Set of the same weight = %v, %v, want no write", ws, err)
	}
	if err := conn.Reload(); err != nil {
		t.Fatal(err)
	}
	if got, _ := m.ReadFile(pod, "cpu.max"); got != "42000 100000" {
		t.Errorf("cpu.max after a daemon-reload = %q, want the unit's 42000 100000", got)
	}
	if _, err := m.fs.Set(pod, cgroup.Values{CPUQuota: i64(50000)}); err != nil {
		t.Fatal(err)
	}
	if err := conn.Reload(); err != nil {
		t.Fatal(err)
	}
	if got, _ := m.ReadFile(pod, "cpu.max"); got != "42000 100000" {
		t.Errorf("cpu.max written to the file alone, after a daemon-reload = %q, want systemd's 42000 100000 back", got)
	}
	// No limits: systemd's infinity, "max" in the files.
	ws, err = m.Set(pod, cgroup.Values{MemoryLimit: i64(cgroup.Unlimited), CPUQuota: i64(cgroup.Unlimited), CPUPeriod: u64(100000)})
	if err != nil {
		t.Fatal(err)
	}
	calls = conn.Calls()
	if want := "set r-kubepods-burstable-pod1.slice MemoryMax=18446744073709551615 CPUQuotaPeriodUSec=100000 CPUQuotaPerSecUSec=18446744073709551615"; calls[len(calls)-1] != want {
		t.Errorf("last call %q, want %q", calls[len(calls)-1], want)
	}
	if len(ws) != 2 || ws[0].New != "max" || ws[1].New != "max 100000" {
		t.Errorf("writes %+v, want memory.max and cpu.max to max", ws)
	}
}

// TestSetOnV1: MemoryLimit and CPUShares, then the cfs files, as
// genV1ResourcesProperties and the v1 fs manager do.
func TestSetOnV1(t *testing.T) {
	m, conn, _ := newTree(t, cgroup.V1)
	if err := m.Create(pod); err != nil {
		t.Fatal(err)
	}
	ws, err := m.Set(pod, cgroup.Values{MemoryLimit: i64(128 << 20), CPUShares: u64(102), CPUQuota: i64(63300), CPUPeriod: u64(100000)})
	if err != nil {
		t.Fatal(err)
	}
	calls := conn.Calls()
	if want := "set r-kubepods-burstable-pod1.slice MemoryLimit=134217728 CPUShares=102 CPUQuotaPeriodUSec=100000 CPUQuotaPerSecUSec=640000"; calls[len(calls)-1] != want {
		t.Errorf("last call %q, want %q", calls[len(calls)-1], want)
	}
	var files []string
	for _, w := range ws {
		files = append(files, w.File+"="+w.New)
	}
	want := []string{"memory.limit_in_bytes=134217728", "cpu.shares=102", "cpu.cfs_quota_us=64000"}
	if diff := cmp.Diff(want, files); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
}

// TestSetRefusedByProperties: when systemd refuses the properties,
// nothing is written and the failure is the first file's write.
func TestSetRefusedByProperties(t *testing.T) {
	m, _, root := newTree(t, cgroup.V2)
	// A slice directory systemd does not know: made without it.
	if err := m.fs.Create("q.slice"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "q.slice", "cpu.weight"), []byte("100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := m.Set("q.slice", cgroup.Values{CPUWeight: u64(5)})
	if err == nil || !strings.Contains(err.Error(), "unable to set unit properties of q.slice") || !strings.Contains(err.Error(), "not loaded") {
		t.Fatalf("Set on a unit systemd does not know = %v, want its refusal", err)
	}
	if len(ws) != 1 || ws[0].File != "cpu.weight" || ws[0].Err == nil {
		t.Errorf("writes %+v, want the failed cpu.weight only", ws)
	}
}

// TestDeleteStopsTheUnitUnlessBusy: a slice with a child is refused with
// EBUSY and its unit is not stopped (that would kill what runs below);
// an empty one is stopped and gone; a missing one is not an error.
func TestDeleteStopsTheUnitUnlessBusy(t *testing.T) {
	m, conn, _ := newTree(t, cgroup.V2)
	if err := m.Create(pod); err != nil {
		t.Fatal(err)
	}
	parent := pod[:strings.LastIndexByte(pod, '/')]
	if err := m.Delete(parent); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("Delete of a slice with a child = %v, want EBUSY", err)
	}
	for _, c := range conn.Calls() {
		if strings.HasPrefix(c, "stop") {
			t.Errorf("a busy slice's unit was stopped: %v", conn.Calls())
		}
	}
	if err := m.Delete(pod); err != nil {
		t.Fatal(err)
	}
	if m.Exists(pod) {
		t.Errorf("%s exists after Delete", pod)
	}
	if err := m.Delete(pod); err != nil {
		t.Errorf("Delete of a missing slice = %v, want nil", err)
	}
	if got := conn.Units(); slices.Contains(got, "r-kubepods-burstable-pod1.slice") {
		t.Errorf("units %v still hold the deleted slice", got)
	}
	// A scope of the in-memory runtime is a transient scope in the slice,
	// delegated, with an idle process of its own; Delete stops it and
	// reaps the process.
	scope := parent + "/cri-containerd-1.scope"
	before := len(conn.Calls())
	if err := m.Create(scope); err != nil {
		t.Fatal(err)
	}
	if got := conn.Calls()[before:]; len(got) != 1 || got[0] != "start cri-containerd-1.scope" {
		t.Errorf("Create of a scope: calls %v, want the scope started", got)
	}
	m.mu.Lock()
	_, tracked := m.scopes[scope]
	m.mu.Unlock()
	if !tracked || !m.Exists(scope) {
		t.Fatalf("the scope is not there with its idle process (tracked %v)", tracked)
	}
	if err := m.Delete(scope); err != nil {
		t.Fatal(err)
	}
	if got := conn.Calls()[len(conn.Calls())-2]; got != "stop cri-containerd-1.scope" || m.Exists(scope) || len(m.scopes) != 0 {
		t.Errorf("Delete of the scope: calls %v, exists %v, scopes %v; want it stopped and gone", conn.Calls()[before:], m.Exists(scope), m.scopes)
	}
	// Any other directory is the FS's: no unit.
	dir := parent + "/plain"
	before = len(conn.Calls())
	if err := m.Create(dir); err != nil {
		t.Fatal(err)
	}
	if err := m.Delete(dir); err != nil || len(conn.Calls()) != before {
		t.Errorf("Create and Delete of a plain directory = %v with calls %v, want no call", err, conn.Calls()[before:])
	}
}

// TestRemoveCreatedStopsTheSlices: the cleanup of a backend
// (cgroup.RemoveCreated on a snapshot of the private parent slice) stops
// every slice it made, children first, and leaves no unit and no
// directory; a slice that existed before stays.
func TestRemoveCreatedStopsTheSlices(t *testing.T) {
	m, conn, root := newTree(t, cgroup.V2)
	if err := m.Create("other.slice"); err != nil {
		t.Fatal(err)
	}
	snap, err := cgroup.SnapshotTree(m, "r.slice")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Create(pod + "/cri-containerd-1.scope"); err != nil {
		t.Fatal(err)
	}
	removed, err := cgroup.RemoveCreated(m, snap)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 5 {
		t.Errorf("removed %v, want the scope and the four slices", removed)
	}
	if diff := cmp.Diff([]string{"other.slice"}, conn.Units()); diff != "" {
		t.Errorf("units left (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(root, "r.slice")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("r.slice is left: %v", err)
	}
	var stops []string
	for _, c := range conn.Calls() {
		if strings.HasPrefix(c, "stop ") {
			stops = append(stops, c)
		}
	}
	want := []string{"stop cri-containerd-1.scope", "stop r-kubepods-burstable-pod1.slice", "stop r-kubepods-burstable.slice", "stop r-kubepods.slice", "stop r.slice"}
	if diff := cmp.Diff(want, stops); diff != "" {
		t.Errorf("stops (-want +got):\n%s", diff)
	}
}

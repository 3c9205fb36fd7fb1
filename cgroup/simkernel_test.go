package cgroup

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// mtPtr returns a pointer to v.
func mtPtr[T any](v T) *T { return &v }

// mtCreate creates a cgroup or fails the test.
func mtCreate(t testing.TB, m Manager, path string) {
	t.Helper()
	if err := m.Create(path); err != nil {
		t.Fatalf("Create(%q): %v", path, err)
	}
}

// mtSet sets values or fails the test, and returns the writes.
func mtSet(t testing.TB, m Manager, path string, v Values) []Write {
	t.Helper()
	w, err := m.Set(path, v)
	if err != nil {
		t.Fatalf("Set(%q): %v", path, err)
	}
	return w
}

// mtUsage sets own usage or fails the test.
func mtUsage(t testing.TB, m *SimKernel, path string, bytes int64) {
	t.Helper()
	if err := m.SetUsage(path, bytes); err != nil {
		t.Fatalf("SetUsage(%q, %d): %v", path, bytes, err)
	}
}

// mtFile reads one file or fails the test.
func mtFile(t testing.TB, m Manager, path, file string) string {
	t.Helper()
	s, err := m.ReadFile(path, file)
	if err != nil {
		t.Fatalf("ReadFile(%q, %q): %v", path, file, err)
	}
	return s
}

// mtFiles returns the file → content pairs of writes, without errors.
func mtFiles(ws []Write) []string {
	out := make([]string, 0, len(ws))
	for _, w := range ws {
		out = append(out, w.File+"="+w.New)
	}
	return out
}

const mib = 1 << 20

func TestSimKernelDefaults(t *testing.T) {
	tests := []struct {
		version Version
		want    map[string]string
	}{
		{V2, map[string]string{
			"cpu.weight":     "100",
			"cpu.max":        "max 100000",
			"memory.max":     "max",
			"memory.current": "0",
			"memory.events":  "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0",
		}},
		{V1, map[string]string{
			"cpu.shares":                "1024",
			"cpu.cfs_period_us":         "100000",
			"cpu.cfs_quota_us":          "-1",
			"memory.limit_in_bytes":     "9223372036854771712",
			"memory.usage_in_bytes":     "0",
			"memory.max_usage_in_bytes": "0",
			"memory.oom_control":        "oom_kill_disable 0\nunder_oom 0\noom_kill 0",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.version.String(), func(t *testing.T) {
			m := NewSimKernel(tt.version)
			if m.Version() != tt.version {
				t.Fatalf("Version() = %v, want %v", m.Version(), tt.version)
			}
			if m.Exists("kubepods") {
				t.Fatal("kubepods exists before Create")
			}
			mtCreate(t, m, "kubepods/burstable/pod1")
			for _, p := range []string{"", "kubepods", "kubepods/burstable", "kubepods/burstable/pod1"} {
				if !m.Exists(p) {
					t.Errorf("Exists(%q) = false after creating a descendant", p)
				}
				if diff := cmp.Diff(tt.want, m.Files(p)); diff != "" {
					t.Errorf("Files(%q) (-want +got):\n%s", p, diff)
				}
			}
			if diff := cmp.Diff([]string{"", "kubepods", "kubepods/burstable", "kubepods/burstable/pod1"}, m.Paths()); diff != "" {
				t.Errorf("Paths() (-want +got):\n%s", diff)
			}
			// Creating again is not an error and keeps what was written.
			mtSet(t, m, "kubepods", Values{MemoryLimit: mtPtr(int64(256 * mib))})
			mtCreate(t, m, "kubepods")
			v, err := m.Get("kubepods")
			if err != nil {
				t.Fatal(err)
			}
			if *v.MemoryLimit != 256*mib {
				t.Errorf("memory limit after re-Create = %d, want %d", *v.MemoryLimit, 256*mib)
			}
		})
	}
}

func TestSimKernelSetOrderAndWrites(t *testing.T) {
	all := Values{
		CPUShares:   mtPtr(uint64(512)),
		CPUWeight:   mtPtr(uint64(20)),
		CPUQuota:    mtPtr(int64(50000)),
		CPUPeriod:   mtPtr(uint64(200000)),
		MemoryLimit: mtPtr(int64(128 * mib)),
	}
	tests := []struct {
		version Version
		want    []Write
	}{
		{V2, []Write{
			{Path: "pod", File: "memory.max", Old: "max", New: "134217728"},
			{Path: "pod", File: "cpu.weight", Old: "100", New: "20"},
			{Path: "pod", File: "cpu.max", Old: "max 100000", New: "50000 200000"},
		}},
		{V1, []Write{
			{Path: "pod", File: "memory.limit_in_bytes", Old: "9223372036854771712", New: "134217728"},
			{Path: "pod", File: "cpu.shares", Old: "1024", New: "512"},
			{Path: "pod", File: "cpu.cfs_period_us", Old: "100000", New: "200000"},
			{Path: "pod", File: "cpu.cfs_quota_us", Old: "-1", New: "50000"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.version.String(), func(t *testing.T) {
			m := NewSimKernel(tt.version)
			mtCreate(t, m, "pod")
			got := mtSet(t, m, "pod", all)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Set writes (-want +got):\n%s", diff)
			}
			// The same values again change nothing, so nothing is written.
			if again := mtSet(t, m, "pod", all); len(again) != 0 {
				t.Errorf("second Set wrote %v, want nothing", mtFiles(again))
			}
			// One changed field writes only its file.
			one := mtSet(t, m, "pod", Values{CPUQuota: mtPtr(int64(60000)), MemoryLimit: mtPtr(int64(128 * mib))})
			if len(one) != 1 || one[0].Err != nil {
				t.Fatalf("Set with one change wrote %+v, want one write", one)
			}
			want := "60000"
			if tt.version == V2 {
				want = "60000 200000"
			}
			if one[0].New != want {
				t.Errorf("changed write New = %q, want %q", one[0].New, want)
			}
			log := append(append([]Write{}, tt.want...), one...)
			if diff := cmp.Diff(log, m.Writes()); diff != "" {
				t.Errorf("Writes() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSimKernelGetRoundTrip(t *testing.T) {
	tests := []struct {
		name    string
		version Version
		set     Values
	}{
		{"v2 limits", V2, Values{CPUWeight: mtPtr(uint64(39)), CPUQuota: mtPtr(int64(25000)), CPUPeriod: mtPtr(uint64(100000)), MemoryLimit: mtPtr(int64(200 * mib))}},
		{"v2 unlimited", V2, Values{CPUWeight: mtPtr(uint64(1)), CPUQuota: mtPtr(Unlimited), CPUPeriod: mtPtr(uint64(50000)), MemoryLimit: mtPtr(Unlimited)}},
		{"v2 extremes", V2, Values{CPUWeight: mtPtr(uint64(10000)), CPUQuota: mtPtr(int64(1000)), CPUPeriod: mtPtr(uint64(1000000)), MemoryLimit: mtPtr(int64(0))}},
		{"v1 limits", V1, Values{CPUShares: mtPtr(uint64(1024)), CPUQuota: mtPtr(int64(100000)), CPUPeriod: mtPtr(uint64(100000)), MemoryLimit: mtPtr(int64(64 * mib))}},
		{"v1 unlimited", V1, Values{CPUShares: mtPtr(uint64(2)), CPUQuota: mtPtr(Unlimited), CPUPeriod: mtPtr(uint64(1000)), MemoryLimit: mtPtr(Unlimited)}},
		{"v1 extremes", V1, Values{CPUShares: mtPtr(uint64(262144)), CPUQuota: mtPtr(int64(1000)), CPUPeriod: mtPtr(uint64(1000000)), MemoryLimit: mtPtr(int64(4096))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewSimKernel(tt.version)
			mtCreate(t, m, "a/b")
			mtSet(t, m, "a/b", tt.set)
			got, err := m.Get("a/b")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.set, got); diff != "" {
				t.Errorf("Get after Set (-set +got):\n%s", diff)
			}
		})
	}
}

func TestSimKernelUnlimitedTranslation(t *testing.T) {
	tests := []struct {
		version                 Version
		quotaFile, quotaContent string
		memFile                 string
		memWritten, memRead     string
	}{
		{V2, "cpu.max", "max 100000", "memory.max", "max", "max"},
		{V1, "cpu.cfs_quota_us", "-1", "memory.limit_in_bytes", "-1", "9223372036854771712"},
	}
	for _, tt := range tests {
		t.Run(tt.version.String(), func(t *testing.T) {
			m := NewSimKernel(tt.version)
			mtCreate(t, m, "p")
			mtSet(t, m, "p", Values{CPUQuota: mtPtr(int64(20000)), MemoryLimit: mtPtr(int64(mib))})
			ws := mtSet(t, m, "p", Values{CPUQuota: mtPtr(Unlimited), MemoryLimit: mtPtr(Unlimited)})
			if len(ws) != 2 || ws[0].File != tt.memFile || ws[0].New != tt.memWritten || ws[1].File != tt.quotaFile || ws[1].New != tt.quotaContent {
				t.Fatalf("writes = %+v, want %s=%s then %s=%s", ws, tt.memFile, tt.memWritten, tt.quotaFile, tt.quotaContent)
			}
			if got := mtFile(t, m, "p", tt.memFile); got != tt.memRead {
				t.Errorf("%s reads %q, want %q", tt.memFile, got, tt.memRead)
			}
			if got := mtFile(t, m, "p", tt.quotaFile); got != tt.quotaContent {
				t.Errorf("%s reads %q, want %q", tt.quotaFile, got, tt.quotaContent)
			}
			v, err := m.Get("p")
			if err != nil {
				t.Fatal(err)
			}
			if *v.CPUQuota != Unlimited || *v.MemoryLimit != Unlimited {
				t.Errorf("Get: quota %d, memory %d, want both Unlimited", *v.CPUQuota, *v.MemoryLimit)
			}
			// Unlimited again matches what the kernel reads back: no write.
			if again := mtSet(t, m, "p", Values{CPUQuota: mtPtr(Unlimited), MemoryLimit: mtPtr(Unlimited)}); len(again) != 0 {
				t.Errorf("Unlimited over Unlimited wrote %v", mtFiles(again))
			}
		})
	}
}

// TestSimKernelV1MemoryAboveUnlimited checks that v1 reads any limit at or
// above the page counter maximum back as that maximum, which Get reports
// as Unlimited.
func TestSimKernelV1MemoryAboveUnlimited(t *testing.T) {
	m := NewSimKernel(V1)
	mtCreate(t, m, "p")
	mtSet(t, m, "p", Values{MemoryLimit: mtPtr(int64(mib))})
	mtSet(t, m, "p", Values{MemoryLimit: mtPtr(int64(1<<63 - 1))})
	if got := mtFile(t, m, "p", "memory.limit_in_bytes"); got != "9223372036854771712" {
		t.Errorf("memory.limit_in_bytes = %q, want 9223372036854771712", got)
	}
	v, _ := m.Get("p")
	if *v.MemoryLimit != Unlimited {
		t.Errorf("Get memory limit = %d, want Unlimited", *v.MemoryLimit)
	}
}

func TestSimKernelCPUMaxKeepsOtherHalf(t *testing.T) {
	m := NewSimKernel(V2)
	mtCreate(t, m, "p")
	mtSet(t, m, "p", Values{CPUQuota: mtPtr(int64(30000)), CPUPeriod: mtPtr(uint64(50000))})
	steps := []struct {
		name string
		v    Values
		want string
	}{
		{"quota only keeps the period", Values{CPUQuota: mtPtr(int64(40000))}, "40000 50000"},
		{"period only keeps the quota", Values{CPUPeriod: mtPtr(uint64(80000))}, "40000 80000"},
		{"unlimited quota keeps the period", Values{CPUQuota: mtPtr(Unlimited)}, "max 80000"},
		{"period only keeps max", Values{CPUPeriod: mtPtr(uint64(100000))}, "max 100000"},
	}
	for _, s := range steps {
		ws := mtSet(t, m, "p", s.v)
		if len(ws) != 1 || ws[0].New != s.want {
			t.Errorf("%s: writes %v, want cpu.max=%s", s.name, mtFiles(ws), s.want)
		}
		if got := mtFile(t, m, "p", "cpu.max"); got != s.want {
			t.Errorf("%s: cpu.max = %q, want %q", s.name, got, s.want)
		}
	}
}

// TestSimKernelWriteErrors checks each write the kernel rejects (the values
// of examples/realhost/README.md §1 and §3): the errno, the error text, that the failed
// write is last with Err set, that earlier writes stay applied and that the
// rejected file keeps its content.
func TestSimKernelWriteErrors(t *testing.T) {
	tests := []struct {
		name     string
		version  Version
		v        Values
		applied  []string // files written before the failure
		file     string
		errno    syscall.Errno
		unchange string // the rejected file's content afterwards
	}{
		{"v2 weight 0", V2, Values{CPUWeight: mtPtr(uint64(0))}, nil, "cpu.weight", syscall.ERANGE, "100"},
		{"v2 weight 10001", V2, Values{CPUWeight: mtPtr(uint64(10001))}, nil, "cpu.weight", syscall.ERANGE, "100"},
		{"v2 memory first, then weight", V2, Values{MemoryLimit: mtPtr(int64(mib)), CPUWeight: mtPtr(uint64(10001))}, []string{"memory.max"}, "cpu.weight", syscall.ERANGE, "100"},
		{"v2 quota 500", V2, Values{CPUQuota: mtPtr(int64(500))}, nil, "cpu.max", syscall.EINVAL, "max 100000"},
		{"v2 quota 999", V2, Values{CPUQuota: mtPtr(int64(999)), CPUPeriod: mtPtr(uint64(100000))}, nil, "cpu.max", syscall.EINVAL, "max 100000"},
		{"v2 quota 0", V2, Values{CPUQuota: mtPtr(int64(0))}, nil, "cpu.max", syscall.EINVAL, "max 100000"},
		{"v2 negative quota", V2, Values{CPUQuota: mtPtr(int64(-5))}, nil, "cpu.max", syscall.EINVAL, "max 100000"},
		{"v2 period 999", V2, Values{CPUPeriod: mtPtr(uint64(999))}, nil, "cpu.max", syscall.EINVAL, "max 100000"},
		{"v2 period 1000001", V2, Values{CPUQuota: mtPtr(int64(50000)), CPUPeriod: mtPtr(uint64(1000001))}, nil, "cpu.max", syscall.EINVAL, "max 100000"},
		{"v2 weight then cpu.max", V2, Values{CPUWeight: mtPtr(uint64(50)), CPUPeriod: mtPtr(uint64(0))}, []string{"cpu.weight"}, "cpu.max", syscall.EINVAL, "max 100000"},
		{"v2 negative memory", V2, Values{MemoryLimit: mtPtr(int64(-5))}, nil, "memory.max", syscall.EINVAL, "max"},
		{"v1 quota 999", V1, Values{CPUQuota: mtPtr(int64(999))}, nil, "cpu.cfs_quota_us", syscall.EINVAL, "-1"},
		{"v1 quota 0", V1, Values{CPUQuota: mtPtr(int64(0))}, nil, "cpu.cfs_quota_us", syscall.EINVAL, "-1"},
		{"v1 period 999", V1, Values{CPUPeriod: mtPtr(uint64(999))}, nil, "cpu.cfs_period_us", syscall.EINVAL, "100000"},
		{"v1 period 1000001", V1, Values{CPUPeriod: mtPtr(uint64(1000001))}, nil, "cpu.cfs_period_us", syscall.EINVAL, "100000"},
		{"v1 shares and period before quota", V1, Values{CPUShares: mtPtr(uint64(100)), CPUPeriod: mtPtr(uint64(50000)), CPUQuota: mtPtr(int64(10))}, []string{"cpu.shares", "cpu.cfs_period_us"}, "cpu.cfs_quota_us", syscall.EINVAL, "-1"},
		{"v1 negative memory", V1, Values{MemoryLimit: mtPtr(int64(-5)), CPUShares: mtPtr(uint64(100))}, nil, "memory.limit_in_bytes", syscall.EINVAL, "9223372036854771712"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewSimKernel(tt.version)
			mtCreate(t, m, "p")
			ws, err := m.Set("p", tt.v)
			if !errors.Is(err, tt.errno) {
				t.Fatalf("Set error = %v, want errno %v", err, tt.errno)
			}
			if want := fmt.Sprintf("write p/%s: %s", tt.file, tt.errno.Error()); err.Error() != want {
				t.Errorf("error text = %q, want %q", err.Error(), want)
			}
			if len(ws) != len(tt.applied)+1 {
				t.Fatalf("writes = %+v, want %d before the failure and the failure", ws, len(tt.applied))
			}
			for i, f := range tt.applied {
				if ws[i].File != f || ws[i].Err != nil {
					t.Errorf("write %d = %+v, want a successful %s", i, ws[i], f)
				}
				if got := mtFile(t, m, "p", f); got != ws[i].New {
					t.Errorf("%s = %q after a later failure, want %q", f, got, ws[i].New)
				}
			}
			last := ws[len(ws)-1]
			if last.File != tt.file || !errors.Is(last.Err, tt.errno) {
				t.Errorf("last write = %+v, want %s failing with %v", last, tt.file, tt.errno)
			}
			if got := mtFile(t, m, "p", tt.file); got != tt.unchange {
				t.Errorf("%s = %q after the rejected write, want %q", tt.file, got, tt.unchange)
			}
			if diff := cmp.Diff(ws, m.Writes(), cmp.Comparer(func(a, b error) bool { return errors.Is(a, b) })); diff != "" {
				t.Errorf("Writes() differs from the returned writes (-returned +log):\n%s", diff)
			}
		})
	}
}

func TestSimKernelV1SharesClamp(t *testing.T) {
	tests := []struct {
		shares uint64
		want   string
	}{
		{0, "2"},
		{1, "2"},
		{2, "2"},
		{262144, "262144"},
		{300000, "262144"},
	}
	for _, tt := range tests {
		m := NewSimKernel(V1)
		mtCreate(t, m, "p")
		ws := mtSet(t, m, "p", Values{CPUShares: mtPtr(tt.shares)})
		if len(ws) != 1 || ws[0].New != strconv.FormatUint(tt.shares, 10) {
			t.Errorf("Set shares %d wrote %v, want the value as given", tt.shares, mtFiles(ws))
		}
		if got := mtFile(t, m, "p", "cpu.shares"); got != tt.want {
			t.Errorf("cpu.shares after writing %d = %q, want %q", tt.shares, got, tt.want)
		}
		// Writing a value that clamps to what is there changes nothing.
		if again := mtSet(t, m, "p", Values{CPUShares: mtPtr(tt.shares)}); len(again) != 0 {
			t.Errorf("writing %d again wrote %v", tt.shares, mtFiles(again))
		}
	}
}

func TestSimKernelPageRounding(t *testing.T) {
	for _, version := range []Version{V1, V2} {
		m := NewSimKernel(version)
		mtCreate(t, m, "p")
		mtSet(t, m, "p", Values{MemoryLimit: mtPtr(int64(100000000))})
		v, _ := m.Get("p")
		if *v.MemoryLimit != 99999744 {
			t.Errorf("%v: limit 100000000 reads back %d, want 99999744 (whole pages)", version, *v.MemoryLimit)
		}
		if again := mtSet(t, m, "p", Values{MemoryLimit: mtPtr(int64(100000000))}); len(again) != 0 {
			t.Errorf("%v: the same unaligned limit again wrote %v", version, mtFiles(again))
		}
	}
	m := NewSimKernel(V2)
	mtCreate(t, m, "p")
	mtSet(t, m, "p", Values{MemoryLimit: mtPtr(int64(mib))})
	mtSet(t, m, "p", Values{MemoryLimit: mtPtr(int64(1<<63 - 1))})
	if got := mtFile(t, m, "p", "memory.max"); got != "max" {
		t.Errorf("v2 memory.max after the int64 maximum = %q, want max", got)
	}
}

// TestSimKernelV1BandwidthHierarchy pins the cgroup v1 rule, checked on the
// project's v1 host: a cgroup's quota/period may not exceed its nearest
// limited ancestor's, in either direction of the write.
func TestSimKernelV1BandwidthHierarchy(t *testing.T) {
	type step struct {
		path  string
		v     Values
		errno syscall.Errno
	}
	q := func(quota int64) Values { return Values{CPUQuota: mtPtr(quota)} }
	p := func(period uint64) Values { return Values{CPUPeriod: mtPtr(period)} }
	steps := []step{
		{"pod", q(50000), 0},                       // 0.5
		{"pod/c", q(60000), syscall.EINVAL},        // a child above its parent
		{"pod/c", q(50000), 0},                     // equal is fine
		{"pod/c", q(40000), 0},                     // 0.4
		{"pod", q(30000), syscall.EINVAL},          // a parent below a child
		{"pod/c", p(50000), syscall.EINVAL},        // 40000/50000 = 0.8
		{"pod/c", p(200000), 0},                    // 0.2
		{"pod/mid/leaf", q(70000), syscall.EINVAL}, // an unlimited middle passes pod's 0.5 down
		{"pod/mid/leaf", q(20000), 0},              // 0.2
		{"pod", p(200000), 0},                      // 0.25, still above both children
		{"pod", p(400000), syscall.EINVAL},         // 0.125, below them
		{"pod", q(-1), 0},                          // an unlimited parent frees the children
		{"pod/c", q(90000), 0},                     // 0.45
	}
	m := NewSimKernel(V1)
	mtCreate(t, m, "pod/c")
	mtCreate(t, m, "pod/mid/leaf")
	for i, s := range steps {
		before := m.Files(s.path)
		_, err := m.Set(s.path, s.v)
		if s.errno == 0 {
			if err != nil {
				t.Fatalf("step %d: Set(%s, %+v) = %v, want success", i, s.path, s.v, err)
			}
			continue
		}
		if !errors.Is(err, s.errno) {
			t.Fatalf("step %d: Set(%s) = %v, want %v", i, s.path, err, s.errno)
		}
		if diff := cmp.Diff(before, m.Files(s.path)); diff != "" {
			t.Errorf("step %d: rejected write changed files (-before +after):\n%s", i, diff)
		}
	}
	// cgroup v2 takes the minimum instead: a child above its parent is fine.
	m2 := NewSimKernel(V2)
	mtCreate(t, m2, "pod/c")
	mtSet(t, m2, "pod", q(50000))
	mtSet(t, m2, "pod/c", q(60000))
}

func TestSimKernelV1MemoryBelowUsage(t *testing.T) {
	m := NewSimKernel(V1)
	mtCreate(t, m, "pod/c")
	mtSet(t, m, "pod", Values{MemoryLimit: mtPtr(int64(100 * mib))})
	mtUsage(t, m, "pod/c", 50*mib)
	var oom []string
	m.OnOOMKill(func(p string) { oom = append(oom, p) })

	ws, err := m.Set("pod", Values{MemoryLimit: mtPtr(int64(20 * mib)), CPUShares: mtPtr(uint64(100))})
	if !errors.Is(err, syscall.EBUSY) {
		t.Fatalf("lowering below usage: err = %v, want EBUSY", err)
	}
	if want := "write pod/memory.limit_in_bytes: " + syscall.EBUSY.Error(); err.Error() != want {
		t.Errorf("error text = %q, want %q", err.Error(), want)
	}
	if len(ws) != 1 || ws[0].File != "memory.limit_in_bytes" || !errors.Is(ws[0].Err, syscall.EBUSY) || ws[0].Old != "104857600" || ws[0].New != "20971520" {
		t.Errorf("writes = %+v, want the one failed memory write", ws)
	}
	if got := mtFile(t, m, "pod", "memory.limit_in_bytes"); got != "104857600" {
		t.Errorf("limit after EBUSY = %q, want the old 104857600", got)
	}
	if got := mtFile(t, m, "pod", "cpu.shares"); got != "1024" {
		t.Errorf("cpu.shares = %q: Set went on after the failed memory write", got)
	}
	// The cgroup's own limit counts its children's usage, and the child's
	// own limit is checked too.
	if _, err := m.Set("pod/c", Values{MemoryLimit: mtPtr(int64(20 * mib))}); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("child limit below its usage: err = %v, want EBUSY", err)
	}
	// Exactly the usage is allowed; so is anything above.
	mtSet(t, m, "pod", Values{MemoryLimit: mtPtr(int64(50 * mib))})
	if len(oom) != 0 {
		t.Errorf("v1 OOM-killed %v on a limit write", oom)
	}
	if u, _ := m.MemoryUsage("pod"); u != 50*mib {
		t.Errorf("usage after the writes = %d, want %d", u, 50*mib)
	}
}

func TestSimKernelV2OOMKillOnLimit(t *testing.T) {
	m := NewSimKernel(V2)
	mtCreate(t, m, "pod/a")
	mtCreate(t, m, "pod/b")
	mtCreate(t, m, "other")
	mtUsage(t, m, "pod/a", 30*mib)
	mtUsage(t, m, "pod/b", 50*mib)
	mtUsage(t, m, "other", 70*mib)
	var oom []string
	m.OnOOMKill(func(p string) { oom = append(oom, p) })

	ws, err := m.Set("pod", Values{MemoryLimit: mtPtr(int64(60 * mib))})
	if err != nil {
		t.Fatalf("v2 limit below usage: err = %v, want success", err)
	}
	if len(ws) != 1 || ws[0].Err != nil || ws[0].New != "62914560" {
		t.Errorf("writes = %+v, want one successful memory.max write", ws)
	}
	if got := mtFile(t, m, "pod", "memory.max"); got != "62914560" {
		t.Errorf("memory.max = %q, want 62914560", got)
	}
	if diff := cmp.Diff([]string{"pod/b"}, oom); diff != "" {
		t.Errorf("OOM-killed (-want +got):\n%s", diff)
	}
	usage := map[string]int64{"pod": 30 * mib, "pod/a": 30 * mib, "pod/b": 0, "other": 70 * mib, "": 100 * mib}
	for p, want := range usage {
		if got, _ := m.MemoryUsage(p); got != want {
			t.Errorf("MemoryUsage(%q) = %d, want %d", p, got, want)
		}
	}
	kills := map[string]string{"pod": "1", "pod/b": "1", "pod/a": "0", "other": "0"}
	for p, want := range kills {
		if got := simEvent(t, m, p, "oom_kill"); got != want {
			t.Errorf("%s oom_kill = %s, want %s", p, got, want)
		}
	}

	// A limit below both kills the larger first, then the other.
	oom = nil
	mtUsage(t, m, "pod/b", 30*mib) // a tie with pod/a: pod/a goes first by path
	mtSet(t, m, "pod", Values{MemoryLimit: mtPtr(int64(10 * mib))})
	if diff := cmp.Diff([]string{"pod/a", "pod/b"}, oom); diff != "" {
		t.Errorf("OOM-killed (-want +got):\n%s", diff)
	}
	if got := simEvent(t, m, "pod", "oom_kill"); got != "3" {
		t.Errorf("pod oom_kill = %s, want 3", got)
	}
}

// simEvent returns one counter of a v2 memory.events file.
func simEvent(t *testing.T, m *SimKernel, path, key string) string {
	t.Helper()
	for _, line := range strings.Split(mtFile(t, m, path, "memory.events"), "\n") {
		if k, v, _ := strings.Cut(line, " "); k == key {
			return v
		}
	}
	t.Fatalf("%s memory.events has no %s", path, key)
	return ""
}

func TestSimKernelUsageOverLimit(t *testing.T) {
	tests := []struct {
		name    string
		version Version
		usage   map[string]int64 // set in this order, the last one over
		order   []string
		killed  []string
	}{
		// v2: the largest own usage below the lowest cgroup over its limit.
		{"v2 kills the largest", V2, map[string]int64{"pod/a": 60 * mib, "pod/b": 50 * mib}, []string{"pod/a", "pod/b"}, []string{"pod/a"}},
		// v1: the cgroup whose charge went over.
		{"v1 kills the charged", V1, map[string]int64{"pod/a": 60 * mib, "pod/b": 50 * mib}, []string{"pod/a", "pod/b"}, []string{"pod/b"}},
		// Under the limit nothing happens.
		{"v2 within", V2, map[string]int64{"pod/a": 60 * mib, "pod/b": 40 * mib}, []string{"pod/a", "pod/b"}, nil},
		{"v1 within", V1, map[string]int64{"pod/a": 60 * mib, "pod/b": 40 * mib}, []string{"pod/a", "pod/b"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewSimKernel(tt.version)
			mtCreate(t, m, "pod/a")
			mtCreate(t, m, "pod/b")
			mtSet(t, m, "pod", Values{MemoryLimit: mtPtr(int64(100 * mib))})
			var killed []string
			m.OnOOMKill(func(p string) { killed = append(killed, p) })
			for _, p := range tt.order {
				mtUsage(t, m, p, tt.usage[p])
			}
			if diff := cmp.Diff(tt.killed, killed); diff != "" {
				t.Errorf("killed (-want +got):\n%s", diff)
			}
			var sum int64
			for _, p := range tt.order {
				u, _ := m.MemoryUsage(p)
				if slices.Contains(tt.killed, p) && u != 0 {
					t.Errorf("killed %s still uses %d", p, u)
				}
				sum += u
			}
			if u, _ := m.MemoryUsage("pod"); u != sum || u > 100*mib {
				t.Errorf("pod usage = %d, want the children's sum %d within the limit", u, sum)
			}
		})
	}
}

// TestSimKernelUsageLowestDomain checks that a charge over two nested limits
// is resolved in the lower one, where a charge fails first.
func TestSimKernelUsageLowestDomain(t *testing.T) {
	m := NewSimKernel(V2)
	mtCreate(t, m, "pod/c")
	mtCreate(t, m, "pod/other")
	mtSet(t, m, "pod", Values{MemoryLimit: mtPtr(int64(100 * mib))})
	mtSet(t, m, "pod/c", Values{MemoryLimit: mtPtr(int64(50 * mib))})
	mtUsage(t, m, "pod/other", 45*mib)
	var killed []string
	m.OnOOMKill(func(p string) { killed = append(killed, p) })
	mtUsage(t, m, "pod/c", 60*mib) // over both; pod/other is the largest in pod, not in pod/c
	if diff := cmp.Diff([]string{"pod/c"}, killed); diff != "" {
		t.Errorf("killed (-want +got):\n%s", diff)
	}
	if got := simEvent(t, m, "pod/c", "oom_kill"); got != "1" {
		t.Errorf("pod/c oom_kill = %s, want 1", got)
	}
	if got := simEvent(t, m, "pod/other", "oom_kill"); got != "0" {
		t.Errorf("pod/other oom_kill = %s, want 0", got)
	}
}

func TestSimKernelHostMemory(t *testing.T) {
	for _, version := range []Version{V1, V2} {
		m := NewSimKernel(version, WithHostMemory(1<<30))
		mtCreate(t, m, "a")
		mtCreate(t, m, "b")
		var killed []string
		m.OnOOMKill(func(p string) { killed = append(killed, p) })
		mtUsage(t, m, "a", 600*mib)
		mtUsage(t, m, "b", 424*mib) // exactly the host's memory
		if len(killed) != 0 {
			t.Fatalf("%v: killed %v at exactly the host's memory", version, killed)
		}
		mtUsage(t, m, "b", 500*mib)
		want := []string{"a"} // v2: the largest
		if version == V1 {
			want = []string{"b"} // v1: the charged
		}
		if diff := cmp.Diff(want, killed); diff != "" {
			t.Errorf("%v: killed (-want +got):\n%s", version, diff)
		}
	}
	// The default is 64Gi.
	m := NewSimKernel(V2, WithHostMemory(0))
	mtCreate(t, m, "a")
	killed := 0
	m.OnOOMKill(func(string) { killed++ })
	mtUsage(t, m, "a", 64<<30)
	if killed != 0 {
		t.Errorf("64Gi on the default host was OOM-killed")
	}
	mtUsage(t, m, "a", 64<<30+1)
	if killed != 1 {
		t.Errorf("over 64Gi on the default host: %d kills, want 1", killed)
	}
}

func TestSimKernelHierarchicalUsage(t *testing.T) {
	for _, version := range []Version{V1, V2} {
		m := NewSimKernel(version)
		mtCreate(t, m, "kubepods/burstable/pod1/c1")
		mtCreate(t, m, "kubepods/burstable/pod1/c2")
		mtCreate(t, m, "kubepods/besteffort/pod2")
		mtUsage(t, m, "kubepods/burstable/pod1/c1", 10*mib)
		mtUsage(t, m, "kubepods/burstable/pod1/c2", 20*mib)
		mtUsage(t, m, "kubepods/burstable/pod1", 1*mib)
		mtUsage(t, m, "kubepods/besteffort/pod2", 5*mib)
		usageFile := "memory.current"
		if version == V1 {
			usageFile = "memory.usage_in_bytes"
		}
		want := map[string]int64{
			"kubepods/burstable/pod1/c1": 10 * mib,
			"kubepods/burstable/pod1":    31 * mib,
			"kubepods/burstable":         31 * mib,
			"kubepods":                   36 * mib,
			"":                           36 * mib,
		}
		for p, w := range want {
			if got, err := m.MemoryUsage(p); err != nil || got != w {
				t.Errorf("%v MemoryUsage(%q) = %d, %v; want %d", version, p, got, err, w)
			}
			if got := mtFile(t, m, p, usageFile); got != strconv.FormatInt(w, 10) {
				t.Errorf("%v %q %s = %s, want %d", version, p, usageFile, got, w)
			}
		}
		mtUsage(t, m, "kubepods/burstable/pod1/c2", 0)
		if got, _ := m.MemoryUsage("kubepods"); got != 16*mib {
			t.Errorf("%v usage after a drop = %d, want %d", version, got, 16*mib)
		}
		if version == V1 {
			if got := mtFile(t, m, "kubepods", "memory.max_usage_in_bytes"); got != strconv.Itoa(36*mib) {
				t.Errorf("v1 max_usage_in_bytes = %s, want the peak %d", got, 36*mib)
			}
		}
	}
	m := NewSimKernel(V2)
	mtCreate(t, m, "a")
	if err := m.SetUsage("a", -1); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("SetUsage(-1) = %v, want EINVAL", err)
	}
}

func TestSimKernelDelete(t *testing.T) {
	m := NewSimKernel(V2)
	mtCreate(t, m, "pod/c")
	if err := m.Delete("pod"); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("Delete with a child = %v, want EBUSY", err)
	}
	mtUsage(t, m, "pod/c", mib)
	if err := m.Delete("pod/c"); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("Delete with usage = %v, want EBUSY", err)
	}
	if !m.Exists("pod/c") {
		t.Fatal("a failed Delete removed the cgroup")
	}
	mtUsage(t, m, "pod/c", 0)
	for _, p := range []string{"pod/c", "pod", "pod", "never/was"} {
		if err := m.Delete(p); err != nil {
			t.Errorf("Delete(%q) = %v, want nil", p, err)
		}
	}
	if m.Exists("pod") || m.Exists("pod/c") {
		t.Error("deleted cgroups still exist")
	}
	if err := m.Delete(""); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("Delete(root) = %v, want EBUSY", err)
	}
	// A re-created cgroup starts from the defaults.
	mtCreate(t, m, "pod")
	if got := mtFile(t, m, "pod", "memory.current"); got != "0" {
		t.Errorf("re-created memory.current = %q, want 0", got)
	}
}

func TestSimKernelInvalidPaths(t *testing.T) {
	bad := []string{"/kubepods", "kubepods/", "a//b", "..", "../x", "a/../b", "a/..", ".", "a/./b", "a/b\x00c", strings.Repeat("n", 256), "a/" + strings.Repeat("n", 256) + "/b"}
	for _, p := range bad {
		m := NewSimKernel(V2)
		check := func(op string, err error) {
			t.Helper()
			if !errors.Is(err, ErrInvalidPath) {
				t.Errorf("%s(%q) = %v, want ErrInvalidPath", op, p, err)
			} else if !containsQuoted(err.Error(), p) {
				t.Errorf("%s(%q) error %q does not name the path", op, p, err)
			}
		}
		check("Create", m.Create(p))
		check("Delete", m.Delete(p))
		_, err := m.Get(p)
		check("Get", err)
		ws, err := m.Set(p, Values{CPUWeight: mtPtr(uint64(5))})
		check("Set", err)
		if len(ws) != 0 {
			t.Errorf("Set(%q) returned writes %+v", p, ws)
		}
		_, err = m.ReadFile(p, "cpu.max")
		check("ReadFile", err)
		_, err = m.MemoryUsage(p)
		check("MemoryUsage", err)
		check("SetUsage", m.SetUsage(p, 1))
		if m.Exists(p) {
			t.Errorf("Exists(%q) = true", p)
		}
		if m.Files(p) != nil {
			t.Errorf("Files(%q) != nil", p)
		}
		if diff := cmp.Diff([]string{""}, m.Paths()); diff != "" {
			t.Errorf("invalid path %q created cgroups:\n%s", p, diff)
		}
		if len(m.Writes()) != 0 {
			t.Errorf("invalid path %q logged writes", p)
		}
	}
	// Names the kernel allows are fine, dots and dashes included.
	m := NewSimKernel(V2)
	for _, p := range []string{"kubepods.slice/kubepods-burstable.slice", "a/..b/c..", "x/.hidden", strings.Repeat("n", 255)} {
		mtCreate(t, m, p)
	}
}

// containsQuoted reports whether msg names p as %q does.
func containsQuoted(msg, p string) bool {
	return strings.Contains(msg, strconv.Quote(p))
}

func TestSimKernelMissingCgroup(t *testing.T) {
	m := NewSimKernel(V1)
	check := func(op string, err error) {
		t.Helper()
		if !errors.Is(err, ErrNotExist) || !errors.Is(err, syscall.ENOENT) {
			t.Errorf("%s on a missing cgroup = %v, want ErrNotExist and ENOENT", op, err)
		}
	}
	_, err := m.Get("gone")
	check("Get", err)
	ws, err := m.Set("gone", Values{CPUShares: mtPtr(uint64(5))})
	check("Set", err)
	if len(ws) != 0 {
		t.Errorf("Set on a missing cgroup returned writes %+v", ws)
	}
	_, err = m.ReadFile("gone", "cpu.shares")
	check("ReadFile", err)
	_, err = m.MemoryUsage("gone")
	check("MemoryUsage", err)
	check("SetUsage", m.SetUsage("gone", 1))
	if m.Files("gone") != nil {
		t.Error("Files of a missing cgroup != nil")
	}

	// A file of the other version is not there.
	mtCreate(t, m, "here")
	if _, err := m.ReadFile("here", "cpu.max"); !errors.Is(err, ErrNotSupported) || !errors.Is(err, syscall.ENOENT) {
		t.Errorf("ReadFile of a v2 file on v1 = %v, want ErrNotSupported and ENOENT", err)
	}
}

// TestSimKernelOtherVersionFields checks that Set ignores the field of the
// other cgroup version and Get leaves it nil.
func TestSimKernelOtherVersionFields(t *testing.T) {
	for _, version := range []Version{V1, V2} {
		m := NewSimKernel(version)
		mtCreate(t, m, "p")
		ws := mtSet(t, m, "p", Values{CPUShares: mtPtr(uint64(512)), CPUWeight: mtPtr(uint64(20))})
		want := "cpu.shares=512"
		if version == V2 {
			want = "cpu.weight=20"
		}
		if diff := cmp.Diff([]string{want}, mtFiles(ws)); diff != "" {
			t.Errorf("%v writes (-want +got):\n%s", version, diff)
		}
		v, _ := m.Get("p")
		if (version == V2) != (v.CPUShares == nil) || (version == V1) != (v.CPUWeight == nil) {
			t.Errorf("%v Get = %+v, want only this version's CPU field", version, v)
		}
	}
}

// TestSimKernelOOMCallbackReentrant checks that callbacks run without the
// lock held: one that calls back into the SimKernel must not deadlock, and
// every registered callback runs, in order.
func TestSimKernelOOMCallbackReentrant(t *testing.T) {
	m := NewSimKernel(V2)
	mtCreate(t, m, "pod/c")
	mtSet(t, m, "pod", Values{MemoryLimit: mtPtr(int64(10 * mib))})
	var calls []string
	m.OnOOMKill(func(p string) {
		u, err := m.MemoryUsage(p)
		calls = append(calls, fmt.Sprintf("first %s %d %v", p, u, err))
		mtUsage(t, m, p, 0)
	})
	m.OnOOMKill(func(p string) { calls = append(calls, "second "+p) })
	mtUsage(t, m, "pod/c", 20*mib)
	want := []string{"first pod/c 0 <nil>", "second pod/c"}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("callbacks (-want +got):\n%s", diff)
	}
}

func TestNewSimKernelUnknownVersion(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("NewSimKernel(3) did not panic")
		}
	}()
	NewSimKernel(Version(3))
}

// TestSimKernelConcurrent runs Set, Get, SetUsage, ReadFile and Create from
// many goroutines (meant for -race) and checks that every write was
// logged once and usage adds up.
func TestSimKernelConcurrent(t *testing.T) {
	m := NewSimKernel(V2, WithWriteLimit(-1)) // counts every write
	var kills sync.Map
	m.OnOOMKill(func(p string) { kills.Store(p, true) })
	const workers, rounds = 8, 200
	var wg sync.WaitGroup
	var mu sync.Mutex
	written := 0
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := fmt.Sprintf("kubepods/pod%d", w)
			if err := m.Create(path + "/c"); err != nil {
				t.Error(err)
				return
			}
			for i := 0; i < rounds; i++ {
				ws, err := m.Set(path, Values{CPUWeight: mtPtr(uint64(1 + i%100)), MemoryLimit: mtPtr(int64((1 + i%4) * mib))})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				written += len(ws)
				mu.Unlock()
				if err := m.SetUsage(path+"/c", int64(i%3)*mib/2); err != nil {
					t.Error(err)
					return
				}
				if _, err := m.Get(path); err != nil {
					t.Error(err)
				}
				if _, err := m.ReadFile("kubepods", "memory.current"); err != nil {
					t.Error(err)
				}
				_ = m.Files("kubepods")
			}
		}()
	}
	wg.Wait()
	if got := len(m.Writes()); got != written {
		t.Errorf("Writes() has %d entries, Set returned %d", got, written)
	}
	var sum int64
	for w := 0; w < workers; w++ {
		u, _ := m.MemoryUsage(fmt.Sprintf("kubepods/pod%d", w))
		sum += u
	}
	if total, _ := m.MemoryUsage("kubepods"); total != sum {
		t.Errorf("kubepods usage %d != sum of pods %d", total, sum)
	}
}

func BenchmarkSimKernelSetNoChange(b *testing.B) {
	m := NewSimKernel(V2)
	mtCreate(b, m, "kubepods/burstable/pod1")
	v := Values{CPUWeight: mtPtr(uint64(39)), CPUQuota: mtPtr(int64(50000)), CPUPeriod: mtPtr(uint64(100000)), MemoryLimit: mtPtr(int64(128 * mib))}
	mtSet(b, m, "kubepods/burstable/pod1", v)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Set("kubepods/burstable/pod1", v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSimKernelSetUsage(b *testing.B) {
	m := NewSimKernel(V2)
	mtCreate(b, m, "kubepods/burstable/pod1/c1")
	b.ReportAllocs()
	i := int64(0)
	for b.Loop() {
		i++
		if err := m.SetUsage("kubepods/burstable/pod1/c1", i%64*mib); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLossyReadBackThroughCgroup pins detail 7 of resize/kubelet-resize.md
// through a cgroup: 700m gives weight 28, and the kubelet compares the
// read-back shares of 28 with MilliCPUToShares(693), finds them equal and
// writes nothing, so the pod cgroup keeps weight 28.
func TestLossyReadBackThroughCgroup(t *testing.T) {
	w700 := cgconfig.LinearWeight(cgconfig.MilliCPUToShares(700))
	want693 := cgconfig.MilliCPUToShares(693)
	m := NewSimKernel(V2)
	mtCreate(t, m, "kubepods/burstable/pod1")
	mtSet(t, m, "kubepods/burstable/pod1", Values{CPUWeight: mtPtr(w700)})
	cur, err := m.Get("kubepods/burstable/pod1")
	if err != nil {
		t.Fatal(err)
	}
	if cgconfig.WeightToShares(*cur.CPUWeight) != want693 {
		t.Fatalf("read-back shares %d differ from the 693m shares %d", cgconfig.WeightToShares(*cur.CPUWeight), want693)
	}
	if got := m.Files("kubepods/burstable/pod1")["cpu.weight"]; got != "28" {
		t.Errorf("cpu.weight = %q, want 28", got)
	}
}

package cgroup

import (
	"syscall"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// renderScenario drives m through writes, usage and deletions that reach
// every file format and error of the model: page rounding, v1 clamping and
// bandwidth checks, a rejected write, EBUSY on v1, OOM kills on v2, peaks,
// the root's limit. It returns the paths of the cgroups the model
// OOM-killed, in order. It checks no result: the errors are in what the
// tests that call it pin (the write log, the files).
func renderScenario(m *SimKernel) []string {
	var killed []string
	m.OnOOMKill(func(path string) { killed = append(killed, path) })
	const (
		pod1 = "kubepods/burstable/pod1"
		c1   = pod1 + "/c1"
		c2   = pod1 + "/c2"
		pod2 = "kubepods/besteffort/pod2"
	)
	m.Create(c1)
	m.Create(c2)
	m.Create(pod2)
	m.Set(pod1, Values{CPUShares: mtPtr(uint64(819)), CPUWeight: mtPtr(uint64(32)), CPUQuota: mtPtr(int64(80000)), CPUPeriod: mtPtr(uint64(100000)), MemoryLimit: mtPtr(int64(512 * mib))})
	m.Set(c1, Values{CPUShares: mtPtr(uint64(512)), CPUWeight: mtPtr(uint64(20)), CPUQuota: mtPtr(int64(50000)), CPUPeriod: mtPtr(uint64(100000)), MemoryLimit: mtPtr(int64(256*mib + 100))})
	m.Set(c2, Values{CPUShares: mtPtr(uint64(1)), CPUWeight: mtPtr(uint64(0)), MemoryLimit: mtPtr(int64(300 * mib))})
	m.Set(c2, Values{CPUQuota: mtPtr(int64(999))})
	m.Set(c2, Values{CPUQuota: mtPtr(Unlimited), CPUPeriod: mtPtr(uint64(200000)), MemoryLimit: mtPtr(Unlimited)})
	m.Set(c1, Values{CPUQuota: mtPtr(int64(90000))})
	m.Set(pod2, Values{CPUShares: mtPtr(uint64(2)), CPUWeight: mtPtr(uint64(1)), MemoryLimit: mtPtr(int64(1 << 30))})
	m.Set("", Values{MemoryLimit: mtPtr(int64(64<<30 + 1))})
	m.SetUsage(c1, 100*mib)
	m.SetUsage(c2, 300*mib)
	m.SetUsage(pod2, 10*mib)
	m.Set(c1, Values{MemoryLimit: mtPtr(int64(64 * mib))})
	m.Set(pod1, Values{MemoryLimit: mtPtr(int64(200 * mib))})
	m.SetUsage(c2, 50*mib)
	m.SetUsage(c1, 30*mib)
	m.SetUsage(pod2, 2<<30)
	m.Create("kubepods/besteffort/pod3")
	m.Delete("kubepods/besteffort/pod3")
	m.Delete(pod1)
	m.Set(c2, Values{CPUWeight: mtPtr(uint64(10001)), CPUShares: mtPtr(uint64(300000)), CPUPeriod: mtPtr(uint64(1000))})
	m.Set(c2, Values{CPUPeriod: mtPtr(uint64(2000000))})
	return killed
}

// TestSimKernelRenderedFiles pins what renderScenario leaves in every file
// of every cgroup, the write log and the OOM kills, on both versions. The
// expected contents are those the model gave when it still kept each
// file's content as a string, before it kept numbers and rendered the
// files on read, so that the rendering stays byte for byte the kernel's
// format as the model has always shown it.
func TestSimKernelRenderedFiles(t *testing.T) {
	tests := []struct {
		version Version
		killed  []string
		files   map[string]map[string]string // Files by path, every cgroup
		writes  []Write
	}{
		{
			version: V2,
			killed:  []string{"kubepods/burstable/pod1/c1", "kubepods/burstable/pod1/c2", "kubepods/besteffort/pod2"},
			files: map[string]map[string]string{
				"": {
					"cpu.max":        "max 100000",
					"cpu.weight":     "100",
					"memory.current": "83886080",
					"memory.events":  "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0",
					"memory.max":     "68719476736",
				},
				"kubepods": {
					"cpu.max":        "max 100000",
					"cpu.weight":     "100",
					"memory.current": "83886080",
					"memory.events":  "low 0\nhigh 0\nmax 0\noom 3\noom_kill 3\noom_group_kill 0",
					"memory.max":     "max",
				},
				"kubepods/besteffort": {
					"cpu.max":        "max 100000",
					"cpu.weight":     "100",
					"memory.current": "0",
					"memory.events":  "low 0\nhigh 0\nmax 0\noom 1\noom_kill 1\noom_group_kill 0",
					"memory.max":     "max",
				},
				"kubepods/besteffort/pod2": {
					"cpu.max":        "max 100000",
					"cpu.weight":     "1",
					"memory.current": "0",
					"memory.events":  "low 0\nhigh 0\nmax 0\noom 1\noom_kill 1\noom_group_kill 0",
					"memory.max":     "1073741824",
				},
				"kubepods/burstable": {
					"cpu.max":        "max 100000",
					"cpu.weight":     "100",
					"memory.current": "83886080",
					"memory.events":  "low 0\nhigh 0\nmax 0\noom 2\noom_kill 2\noom_group_kill 0",
					"memory.max":     "max",
				},
				"kubepods/burstable/pod1": {
					"cpu.max":        "80000 100000",
					"cpu.weight":     "32",
					"memory.current": "83886080",
					"memory.events":  "low 0\nhigh 0\nmax 0\noom 2\noom_kill 2\noom_group_kill 0",
					"memory.max":     "209715200",
				},
				"kubepods/burstable/pod1/c1": {
					"cpu.max":        "90000 100000",
					"cpu.weight":     "20",
					"memory.current": "31457280",
					"memory.events":  "low 0\nhigh 0\nmax 0\noom 1\noom_kill 1\noom_group_kill 0",
					"memory.max":     "67108864",
				},
				"kubepods/burstable/pod1/c2": {
					"cpu.max":        "max 200000",
					"cpu.weight":     "100",
					"memory.current": "52428800",
					"memory.events":  "low 0\nhigh 0\nmax 0\noom 0\noom_kill 1\noom_group_kill 0",
					"memory.max":     "max",
				},
			},
			writes: []Write{
				{Path: "kubepods/burstable/pod1", File: "memory.max", Old: "max", New: "536870912"},
				{Path: "kubepods/burstable/pod1", File: "cpu.weight", Old: "100", New: "32"},
				{Path: "kubepods/burstable/pod1", File: "cpu.max", Old: "max 100000", New: "80000 100000"},
				{Path: "kubepods/burstable/pod1/c1", File: "memory.max", Old: "max", New: "268435556"},
				{Path: "kubepods/burstable/pod1/c1", File: "cpu.weight", Old: "100", New: "20"},
				{Path: "kubepods/burstable/pod1/c1", File: "cpu.max", Old: "max 100000", New: "50000 100000"},
				{Path: "kubepods/burstable/pod1/c2", File: "memory.max", Old: "max", New: "314572800"},
				{Path: "kubepods/burstable/pod1/c2", File: "cpu.weight", Old: "100", New: "0", Err: syscall.ERANGE},
				{Path: "kubepods/burstable/pod1/c2", File: "cpu.max", Old: "max 100000", New: "999 100000", Err: syscall.EINVAL},
				{Path: "kubepods/burstable/pod1/c2", File: "memory.max", Old: "314572800", New: "max"},
				{Path: "kubepods/burstable/pod1/c2", File: "cpu.max", Old: "max 100000", New: "max 200000"},
				{Path: "kubepods/burstable/pod1/c1", File: "cpu.max", Old: "50000 100000", New: "90000 100000"},
				{Path: "kubepods/besteffort/pod2", File: "memory.max", Old: "max", New: "1073741824"},
				{Path: "kubepods/besteffort/pod2", File: "cpu.weight", Old: "100", New: "1"},
				{Path: "", File: "memory.max", Old: "max", New: "68719476737"},
				{Path: "kubepods/burstable/pod1/c1", File: "memory.max", Old: "268435456", New: "67108864"},
				{Path: "kubepods/burstable/pod1", File: "memory.max", Old: "536870912", New: "209715200"},
				{Path: "kubepods/burstable/pod1/c2", File: "cpu.weight", Old: "100", New: "10001", Err: syscall.ERANGE},
				{Path: "kubepods/burstable/pod1/c2", File: "cpu.max", Old: "max 200000", New: "max 2000000", Err: syscall.EINVAL},
			},
		},
		{
			version: V1,
			killed:  []string{"kubepods/besteffort/pod2"},
			files: map[string]map[string]string{
				"": {
					"cpu.cfs_period_us":         "100000",
					"cpu.cfs_quota_us":          "-1",
					"cpu.shares":                "1024",
					"memory.limit_in_bytes":     "68719476736",
					"memory.max_usage_in_bytes": "429916160",
					"memory.oom_control":        "oom_kill_disable 0\nunder_oom 0\noom_kill 0",
					"memory.usage_in_bytes":     "83886080",
				},
				"kubepods": {
					"cpu.cfs_period_us":         "100000",
					"cpu.cfs_quota_us":          "-1",
					"cpu.shares":                "1024",
					"memory.limit_in_bytes":     "9223372036854771712",
					"memory.max_usage_in_bytes": "429916160",
					"memory.oom_control":        "oom_kill_disable 0\nunder_oom 0\noom_kill 0",
					"memory.usage_in_bytes":     "83886080",
				},
				"kubepods/besteffort": {
					"cpu.cfs_period_us":         "100000",
					"cpu.cfs_quota_us":          "-1",
					"cpu.shares":                "1024",
					"memory.limit_in_bytes":     "9223372036854771712",
					"memory.max_usage_in_bytes": "10485760",
					"memory.oom_control":        "oom_kill_disable 0\nunder_oom 0\noom_kill 0",
					"memory.usage_in_bytes":     "0",
				},
				"kubepods/besteffort/pod2": {
					"cpu.cfs_period_us":         "100000",
					"cpu.cfs_quota_us":          "-1",
					"cpu.shares":                "2",
					"memory.limit_in_bytes":     "1073741824",
					"memory.max_usage_in_bytes": "10485760",
					"memory.oom_control":        "oom_kill_disable 0\nunder_oom 0\noom_kill 1",
					"memory.usage_in_bytes":     "0",
				},
				"kubepods/burstable": {
					"cpu.cfs_period_us":         "100000",
					"cpu.cfs_quota_us":          "-1",
					"cpu.shares":                "1024",
					"memory.limit_in_bytes":     "9223372036854771712",
					"memory.max_usage_in_bytes": "419430400",
					"memory.oom_control":        "oom_kill_disable 0\nunder_oom 0\noom_kill 0",
					"memory.usage_in_bytes":     "83886080",
				},
				"kubepods/burstable/pod1": {
					"cpu.cfs_period_us":         "100000",
					"cpu.cfs_quota_us":          "80000",
					"cpu.shares":                "819",
					"memory.limit_in_bytes":     "536870912",
					"memory.max_usage_in_bytes": "419430400",
					"memory.oom_control":        "oom_kill_disable 0\nunder_oom 0\noom_kill 0",
					"memory.usage_in_bytes":     "83886080",
				},
				"kubepods/burstable/pod1/c1": {
					"cpu.cfs_period_us":         "100000",
					"cpu.cfs_quota_us":          "50000",
					"cpu.shares":                "512",
					"memory.limit_in_bytes":     "268435456",
					"memory.max_usage_in_bytes": "104857600",
					"memory.oom_control":        "oom_kill_disable 0\nunder_oom 0\noom_kill 0",
					"memory.usage_in_bytes":     "31457280",
				},
				"kubepods/burstable/pod1/c2": {
					"cpu.cfs_period_us":         "1000",
					"cpu.cfs_quota_us":          "-1",
					"cpu.shares":                "262144",
					"memory.limit_in_bytes":     "9223372036854771712",
					"memory.max_usage_in_bytes": "314572800",
					"memory.oom_control":        "oom_kill_disable 0\nunder_oom 0\noom_kill 0",
					"memory.usage_in_bytes":     "52428800",
				},
			},
			writes: []Write{
				{Path: "kubepods/burstable/pod1", File: "memory.limit_in_bytes", Old: "9223372036854771712", New: "536870912"},
				{Path: "kubepods/burstable/pod1", File: "cpu.shares", Old: "1024", New: "819"},
				{Path: "kubepods/burstable/pod1", File: "cpu.cfs_quota_us", Old: "-1", New: "80000"},
				{Path: "kubepods/burstable/pod1/c1", File: "memory.limit_in_bytes", Old: "9223372036854771712", New: "268435556"},
				{Path: "kubepods/burstable/pod1/c1", File: "cpu.shares", Old: "1024", New: "512"},
				{Path: "kubepods/burstable/pod1/c1", File: "cpu.cfs_quota_us", Old: "-1", New: "50000"},
				{Path: "kubepods/burstable/pod1/c2", File: "memory.limit_in_bytes", Old: "9223372036854771712", New: "314572800"},
				{Path: "kubepods/burstable/pod1/c2", File: "cpu.shares", Old: "1024", New: "1"},
				{Path: "kubepods/burstable/pod1/c2", File: "cpu.cfs_quota_us", Old: "-1", New: "999", Err: syscall.EINVAL},
				{Path: "kubepods/burstable/pod1/c2", File: "memory.limit_in_bytes", Old: "314572800", New: "-1"},
				{Path: "kubepods/burstable/pod1/c2", File: "cpu.cfs_period_us", Old: "100000", New: "200000"},
				{Path: "kubepods/burstable/pod1/c1", File: "cpu.cfs_quota_us", Old: "50000", New: "90000", Err: syscall.EINVAL},
				{Path: "kubepods/besteffort/pod2", File: "memory.limit_in_bytes", Old: "9223372036854771712", New: "1073741824"},
				{Path: "kubepods/besteffort/pod2", File: "cpu.shares", Old: "1024", New: "2"},
				{Path: "", File: "memory.limit_in_bytes", Old: "9223372036854771712", New: "68719476737"},
				{Path: "kubepods/burstable/pod1/c1", File: "memory.limit_in_bytes", Old: "268435456", New: "67108864", Err: syscall.EBUSY},
				{Path: "kubepods/burstable/pod1", File: "memory.limit_in_bytes", Old: "536870912", New: "209715200", Err: syscall.EBUSY},
				{Path: "kubepods/burstable/pod1/c2", File: "cpu.shares", Old: "2", New: "300000"},
				{Path: "kubepods/burstable/pod1/c2", File: "cpu.cfs_period_us", Old: "200000", New: "1000"},
				{Path: "kubepods/burstable/pod1/c2", File: "cpu.cfs_period_us", Old: "1000", New: "2000000", Err: syscall.EINVAL},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.version.String(), func(t *testing.T) {
			m := NewSimKernel(tt.version)
			killed := renderScenario(m)
			if diff := cmp.Diff(tt.killed, killed); diff != "" {
				t.Errorf("OOM kills (-want +got):\n%s", diff)
			}
			files := map[string]map[string]string{}
			for _, p := range m.Paths() {
				files[p] = m.Files(p)
				for file, want := range files[p] {
					if got, err := m.ReadFile(p, file); err != nil || got != want {
						t.Errorf("ReadFile(%q, %q) = %q, %v; Files has %q", p, file, got, err, want)
					}
				}
			}
			if diff := cmp.Diff(tt.files, files); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.writes, m.Writes(), cmpopts.EquateErrors()); diff != "" {
				t.Errorf("Writes() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSimKernelGetReadsItsFiles checks that Get, which reads the numbers
// the files are rendered from, gives what ParseValues reads from the files,
// for every cgroup renderScenario leaves and for the kernel's extreme
// values.
func TestSimKernelGetReadsItsFiles(t *testing.T) {
	for _, version := range []Version{V1, V2} {
		m := NewSimKernel(version)
		renderScenario(m)
		mtCreate(t, m, "x/max/c")
		mtCreate(t, m, "x/min")
		mtSet(t, m, "x/max", Values{CPUShares: mtPtr(uint64(262144)), CPUWeight: mtPtr(uint64(10000)),
			CPUQuota: mtPtr(int64(1<<44 - 1)), CPUPeriod: mtPtr(uint64(1000)), MemoryLimit: mtPtr(int64(1<<63 - 1))})
		mtSet(t, m, "x/max/c", Values{MemoryLimit: mtPtr(cgconfig.V1UnlimitedMemory - 1)})
		mtSet(t, m, "x/min", Values{CPUShares: mtPtr(uint64(2)), CPUWeight: mtPtr(uint64(1)),
			CPUQuota: mtPtr(int64(1000)), CPUPeriod: mtPtr(uint64(1000000)), MemoryLimit: mtPtr(int64(0))})
		for _, p := range m.Paths() {
			files := m.Files(p)
			want, err := ParseValues(version, func(file string) (string, bool, error) {
				s, ok := files[file]
				return s, ok, nil
			})
			if err != nil {
				t.Fatalf("%v: ParseValues(Files(%q)): %v", version, p, err)
			}
			got, err := m.Get(p)
			if err != nil {
				t.Fatalf("%v: Get(%q): %v", version, p, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%v: Get(%q) (-files +got):\n%s", version, p, diff)
			}
		}
	}
}

// TestSimKernelSizes pins the sizes that the memory budget of a simulated
// node counts on: a cgroup in one 96-byte allocation, a write of the log
// in 40 bytes.
func TestSimKernelSizes(t *testing.T) {
	if s := unsafe.Sizeof(simNode{}); s > 96 {
		t.Errorf("simNode takes %d bytes, more than 96", s)
	}
	if s := unsafe.Sizeof(simWrite{}); s > 40 {
		t.Errorf("simWrite takes %d bytes, more than 40", s)
	}
}

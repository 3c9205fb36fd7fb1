//go:build linux

package cgroupfs

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/resizelet/resizelet/cgroup"
)

func ptrU(v uint64) *uint64 { return &v }
func ptrI(v int64) *int64   { return &v }

// The files the kernel shows in a new cgroup, by version and (v1)
// hierarchy; fake trees get them on Create through FS.afterMkdir.
var (
	fakeV2Files = map[string]string{
		"cgroup.controllers": "cpu memory", "cgroup.subtree_control": "", "cgroup.procs": "",
		"cpu.weight": "100", "cpu.max": "max 100000", "memory.max": "max", "memory.current": "0",
		"memory.events": "oom 0\noom_kill 0",
	}
	fakeV1CPUFiles = map[string]string{
		"cgroup.procs": "", "cpu.shares": "1024", "cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": "-1",
	}
	fakeV1MemoryFiles = map[string]string{
		"cgroup.procs": "", "memory.limit_in_bytes": "9223372036854771712", "memory.usage_in_bytes": "0",
	}
)

// writeFiles pre-creates files with mode 0644, as a fake tree needs:
// containerd/cgroups writes with permission 0, so a file it had to create
// would be unreadable.
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readRaw(t testing.TB, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// newFakeFS returns an FS over a temp-dir tree of the given version whose
// Create fills new cgroups with the kernel's default files.
func newFakeFS(t testing.TB, version cgroup.Version) *FS {
	t.Helper()
	root := t.TempDir()
	switch version {
	case cgroup.V2:
		writeFiles(t, root, map[string]string{"cgroup.controllers": "cpu memory", "cgroup.subtree_control": "", "cgroup.procs": ""})
	case cgroup.V1:
		writeFiles(t, filepath.Join(root, "cpu"), fakeV1CPUFiles)
		writeFiles(t, filepath.Join(root, "memory"), fakeV1MemoryFiles)
	}
	f, err := New(root, withMountInfo(filepath.Join(root, "no-mountinfo")))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if f.Version() != version {
		t.Fatalf("New detected %v, want %v", f.Version(), version)
	}
	f.afterMkdir = func(dir string) error {
		switch {
		case version == cgroup.V2:
			writeFiles(t, dir, fakeV2Files)
		case strings.HasPrefix(dir, f.mounts["cpu"]+"/"):
			writeFiles(t, dir, fakeV1CPUFiles)
		default:
			writeFiles(t, dir, fakeV1MemoryFiles)
		}
		return nil
	}
	return f
}

func TestNewDetectsVersionFromTheRoot(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, root string)
		opts    []Option
		want    cgroup.Version
		wantErr error
	}{
		{
			name: "cgroup.controllers means v2",
			setup: func(t *testing.T, root string) {
				writeFiles(t, root, map[string]string{"cgroup.controllers": "cpuset cpu io memory pids"})
			},
			want: cgroup.V2,
		},
		{
			name: "cpu and memory hierarchies mean v1",
			setup: func(t *testing.T, root string) {
				writeFiles(t, filepath.Join(root, "cpu"), nil)
				writeFiles(t, filepath.Join(root, "memory"), nil)
			},
			want: cgroup.V1,
		},
		{
			name: "v2 without the memory controller",
			setup: func(t *testing.T, root string) {
				writeFiles(t, root, map[string]string{"cgroup.controllers": "cpu io pids"})
			},
			wantErr: cgroup.ErrNotSupported,
		},
		{
			name:    "v1 without a memory hierarchy",
			setup:   func(t *testing.T, root string) { writeFiles(t, filepath.Join(root, "cpu"), nil) },
			wantErr: cgroup.ErrNotSupported,
		},
		{
			name:    "an empty directory has neither version",
			setup:   func(t *testing.T, root string) {},
			wantErr: cgroup.ErrNotSupported,
		},
		{
			name:    "missing root",
			setup:   func(t *testing.T, root string) { os.Remove(root) },
			wantErr: cgroup.ErrNotSupported,
		},
		{
			name: "WithVersion(cgroup.V2) on a v1 tree",
			setup: func(t *testing.T, root string) {
				writeFiles(t, filepath.Join(root, "cpu"), nil)
				writeFiles(t, filepath.Join(root, "memory"), nil)
			},
			opts:    []Option{WithVersion(cgroup.V2)},
			wantErr: cgroup.ErrNotSupported,
		},
		{
			name: "WithVersion(cgroup.V1) on a v2 tree",
			setup: func(t *testing.T, root string) {
				writeFiles(t, root, map[string]string{"cgroup.controllers": "cpu memory"})
			},
			opts:    []Option{WithVersion(cgroup.V1)},
			wantErr: cgroup.ErrNotSupported,
		},
		{
			name: "WithVersion overrides detection",
			setup: func(t *testing.T, root string) {
				writeFiles(t, root, map[string]string{"cgroup.controllers": "cpu memory"})
				writeFiles(t, filepath.Join(root, "cpu"), nil)
				writeFiles(t, filepath.Join(root, "memory"), nil)
			},
			opts: []Option{WithVersion(cgroup.V1)},
			want: cgroup.V1,
		},
		{
			name: "unknown version",
			setup: func(t *testing.T, root string) {
				writeFiles(t, root, map[string]string{"cgroup.controllers": "cpu memory"})
			},
			opts:    []Option{WithVersion(3)},
			wantErr: cgroup.ErrNotSupported,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "root")
			if err := os.Mkdir(root, 0o755); err != nil {
				t.Fatal(err)
			}
			tt.setup(t, root)
			opts := append([]Option{withMountInfo(filepath.Join(root, "none"))}, tt.opts...)
			f, err := New(root, opts...)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("New error = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if f.Version() != tt.want {
				t.Errorf("Version() = %v, want %v", f.Version(), tt.want)
			}
		})
	}
}

// hostMountInfo is the cgroup part of this project's CI host's mount
// table (examples/realhost/README.md §1): hybrid, cpu and cpuacct mounted apart.
const hostMountInfo = `24 1 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`

func TestParseMountInfo(t *testing.T) {
	tests := []struct {
		name    string
		content string
		root    string
		want    map[string]string
	}{
		{
			name:    "hybrid host with separate cpu and cpuacct",
			content: hostMountInfo,
			root:    "/sys/fs/cgroup",
			want: map[string]string{
				"cpu": "/sys/fs/cgroup/cpu", "cpuacct": "/sys/fs/cgroup/cpuacct",
				"cpuset": "/sys/fs/cgroup/cpuset", "memory": "/sys/fs/cgroup/memory",
			},
		},
		{
			name: "cpu and cpuacct in one hierarchy",
			content: "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:9 - cgroup cgroup rw,cpu,cpuacct\n" +
				"35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
			root: "/sys/fs/cgroup",
			want: map[string]string{
				"cpu": "/sys/fs/cgroup/cpu,cpuacct", "cpuacct": "/sys/fs/cgroup/cpu,cpuacct",
				"memory": "/sys/fs/cgroup/memory",
			},
		},
		{
			name:    "mounts below another root are left out",
			content: hostMountInfo,
			root:    "/elsewhere",
			want:    map[string]string{},
		},
		{
			name:    "escaped spaces in the mount point",
			content: `50 1 0:40 / /tmp/my\040root/memory rw - cgroup cgroup rw,memory` + "\n",
			root:    "/tmp/my root",
			want:    map[string]string{"memory": "/tmp/my root/memory"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseMountInfo(tt.content, tt.root)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parseMountInfo (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNewV1UsesMountInfo builds a v1 tree whose cpu hierarchy is mounted
// at cpu,cpuacct, as on many hosts, and checks that writes land there.
func TestNewV1UsesMountInfo(t *testing.T) {
	root := t.TempDir()
	cpuDir, memDir := filepath.Join(root, "cpu,cpuacct"), filepath.Join(root, "memory")
	writeFiles(t, filepath.Join(cpuDir, "pod"), fakeV1CPUFiles)
	writeFiles(t, filepath.Join(memDir, "pod"), fakeV1MemoryFiles)
	mi := filepath.Join(t.TempDir(), "mountinfo")
	content := "32 31 0:29 / " + cpuDir + " rw - cgroup cgroup rw,cpu,cpuacct\n" +
		"35 31 0:32 / " + memDir + " rw - cgroup cgroup rw,memory\n"
	if err := os.WriteFile(mi, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := New(root, withMountInfo(mi))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if _, err := f.Set("pod", cgroup.Values{CPUShares: ptrU(512), MemoryLimit: ptrI(1 << 20)}); err != nil {
		t.Fatalf("Set: %v", err)
	}
	if got := readRaw(t, filepath.Join(cpuDir, "pod", "cpu.shares")); got != "512" {
		t.Errorf("cpu,cpuacct/pod/cpu.shares = %q, want 512", got)
	}
	if got := readRaw(t, filepath.Join(memDir, "pod", "memory.limit_in_bytes")); got != "1048576" {
		t.Errorf("memory/pod/memory.limit_in_bytes = %q, want 1048576", got)
	}
	if _, err := os.Stat(filepath.Join(root, "cpu")); !os.IsNotExist(err) {
		t.Errorf("a write created %s/cpu: %v", root, err)
	}
}

func TestWithV1MountsPlacesTheHierarchies(t *testing.T) {
	base := t.TempDir()
	cpuDir, memDir := filepath.Join(base, "a", "cpu-hierarchy"), filepath.Join(base, "b", "mem")
	writeFiles(t, filepath.Join(cpuDir, "pod"), fakeV1CPUFiles)
	writeFiles(t, filepath.Join(memDir, "pod"), fakeV1MemoryFiles)
	f, err := New(base, WithV1Mounts(map[string]string{"cpu": cpuDir, "memory": memDir}))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if _, err := f.Set("pod", cgroup.Values{CPUQuota: ptrI(50000), MemoryLimit: ptrI(8 << 20)}); err != nil {
		t.Fatalf("Set: %v", err)
	}
	if got := readRaw(t, filepath.Join(cpuDir, "pod", "cpu.cfs_quota_us")); got != "50000" {
		t.Errorf("cpu.cfs_quota_us = %q, want 50000", got)
	}
	if got := readRaw(t, filepath.Join(memDir, "pod", "memory.limit_in_bytes")); got != "8388608" {
		t.Errorf("memory.limit_in_bytes = %q, want 8388608", got)
	}
}

func TestFSSetWritesOnlyChangesInOrder(t *testing.T) {
	const pod = "kubepods/burstable/pod1"
	tests := []struct {
		name    string
		version cgroup.Version
		files   map[string]string // overrides of the defaults before Set
		set     cgroup.Values
		want    []cgroup.Write
	}{
		{
			name:    "v2 all fields, memory first then cpu.weight then cpu.max",
			version: cgroup.V2,
			set:     cgroup.Values{MemoryLimit: ptrI(200 << 20), CPUWeight: ptrU(28), CPUQuota: ptrI(80000), CPUPeriod: ptrU(100000)},
			want: []cgroup.Write{
				{File: "memory.max", Old: "max", New: "209715200"},
				{File: "cpu.weight", Old: "100", New: "28"},
				{File: "cpu.max", Old: "max 100000", New: "80000 100000"},
			},
		},
		{
			name:    "v2 unchanged values are not written",
			version: cgroup.V2,
			files:   map[string]string{"memory.max": "209715200", "cpu.weight": "28", "cpu.max": "80000 100000"},
			set:     cgroup.Values{MemoryLimit: ptrI(200 << 20), CPUWeight: ptrU(28), CPUQuota: ptrI(80000), CPUPeriod: ptrU(100000)},
		},
		{
			name:    "v2 cgroup.Unlimited is written as max",
			version: cgroup.V2,
			files:   map[string]string{"memory.max": "209715200", "cpu.max": "80000 100000"},
			set:     cgroup.Values{MemoryLimit: ptrI(cgroup.Unlimited), CPUQuota: ptrI(cgroup.Unlimited)},
			want: []cgroup.Write{
				{File: "memory.max", Old: "209715200", New: "max"},
				{File: "cpu.max", Old: "80000 100000", New: "max 100000"},
			},
		},
		{
			name:    "v2 quota alone keeps the period",
			version: cgroup.V2,
			files:   map[string]string{"cpu.max": "max 50000"},
			set:     cgroup.Values{CPUQuota: ptrI(25000)},
			want:    []cgroup.Write{{File: "cpu.max", Old: "max 50000", New: "25000 50000"}},
		},
		{
			name:    "v2 period alone keeps the quota",
			version: cgroup.V2,
			files:   map[string]string{"cpu.max": "25000 50000"},
			set:     cgroup.Values{CPUPeriod: ptrU(100000)},
			want:    []cgroup.Write{{File: "cpu.max", Old: "25000 50000", New: "25000 100000"}},
		},
		{
			name:    "v2 ignores cpu shares",
			version: cgroup.V2,
			set:     cgroup.Values{CPUShares: ptrU(512)},
		},
		{
			name:    "v2 a limit the kernel rounds to the page it holds is not rewritten",
			version: cgroup.V2,
			files:   map[string]string{"memory.max": "4096"},
			set:     cgroup.Values{MemoryLimit: ptrI(4097)},
		},
		{
			name:    "v1 all fields, memory then shares then quota (period unchanged)",
			version: cgroup.V1,
			set:     cgroup.Values{MemoryLimit: ptrI(200 << 20), CPUShares: ptrU(819), CPUQuota: ptrI(80000), CPUPeriod: ptrU(100000)},
			want: []cgroup.Write{
				{File: "memory.limit_in_bytes", Old: "9223372036854771712", New: "209715200"},
				{File: "cpu.shares", Old: "1024", New: "819"},
				{File: "cpu.cfs_quota_us", Old: "-1", New: "80000"},
			},
		},
		{
			name:    "v1 period before quota",
			version: cgroup.V1,
			set:     cgroup.Values{CPUQuota: ptrI(25000), CPUPeriod: ptrU(50000)},
			want: []cgroup.Write{
				{File: "cpu.cfs_period_us", Old: "100000", New: "50000"},
				{File: "cpu.cfs_quota_us", Old: "-1", New: "25000"},
			},
		},
		{
			name:    "v1 cgroup.Unlimited is written as -1",
			version: cgroup.V1,
			files:   map[string]string{"memory.limit_in_bytes": "209715200", "cpu.cfs_quota_us": "80000"},
			set:     cgroup.Values{MemoryLimit: ptrI(cgroup.Unlimited), CPUQuota: ptrI(cgroup.Unlimited)},
			want: []cgroup.Write{
				{File: "memory.limit_in_bytes", Old: "209715200", New: "-1"},
				{File: "cpu.cfs_quota_us", Old: "80000", New: "-1"},
			},
		},
		{
			name:    "v1 the kernel's read-back of unlimited is unlimited",
			version: cgroup.V1,
			set:     cgroup.Values{MemoryLimit: ptrI(cgroup.Unlimited), CPUQuota: ptrI(cgroup.Unlimited)},
		},
		{
			name:    "v1 shares below the kernel's minimum read back clamped",
			version: cgroup.V1,
			files:   map[string]string{"cpu.shares": "2"},
			set:     cgroup.Values{CPUShares: ptrU(1)},
		},
		{
			name:    "v1 ignores cpu weight",
			version: cgroup.V1,
			set:     cgroup.Values{CPUWeight: ptrU(50)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeFS(t, tt.version)
			if err := f.Create(pod); err != nil {
				t.Fatalf("Create: %v", err)
			}
			for file, content := range tt.files {
				dir, err := f.fileDir(pod, file)
				if err != nil {
					t.Fatal(err)
				}
				writeFiles(t, dir, map[string]string{file: content})
			}
			got, err := f.Set(pod, tt.set)
			if err != nil {
				t.Fatalf("Set: %v", err)
			}
			for i := range tt.want {
				tt.want[i].Path = pod
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Set writes (-want +got):\n%s", diff)
			}
			for _, w := range tt.want {
				if content, err := f.ReadFile(pod, w.File); err != nil || content != w.New {
					t.Errorf("%s after Set = %q, %v; want %q", w.File, content, err, w.New)
				}
			}
		})
	}
}

func TestFSGetReadsValuesBack(t *testing.T) {
	tests := []struct {
		name    string
		version cgroup.Version
		files   map[string]string
		remove  []string
		want    cgroup.Values
	}{
		{
			name:    "v2 defaults",
			version: cgroup.V2,
			want:    cgroup.Values{CPUWeight: ptrU(100), CPUQuota: ptrI(cgroup.Unlimited), CPUPeriod: ptrU(100000), MemoryLimit: ptrI(cgroup.Unlimited)},
		},
		{
			name:    "v2 limits",
			version: cgroup.V2,
			files:   map[string]string{"cpu.weight": "28", "cpu.max": "80000 100000", "memory.max": "209715200"},
			want:    cgroup.Values{CPUWeight: ptrU(28), CPUQuota: ptrI(80000), CPUPeriod: ptrU(100000), MemoryLimit: ptrI(200 << 20)},
		},
		{
			name:    "v2 missing files leave fields nil",
			version: cgroup.V2,
			remove:  []string{"cpu.weight", "cpu.max"},
			want:    cgroup.Values{MemoryLimit: ptrI(cgroup.Unlimited)},
		},
		{
			name:    "v1 defaults",
			version: cgroup.V1,
			want:    cgroup.Values{CPUShares: ptrU(1024), CPUQuota: ptrI(cgroup.Unlimited), CPUPeriod: ptrU(100000), MemoryLimit: ptrI(cgroup.Unlimited)},
		},
		{
			name:    "v1 limits",
			version: cgroup.V1,
			files:   map[string]string{"cpu.shares": "819", "cpu.cfs_quota_us": "80000", "cpu.cfs_period_us": "50000", "memory.limit_in_bytes": "209715200"},
			want:    cgroup.Values{CPUShares: ptrU(819), CPUQuota: ptrI(80000), CPUPeriod: ptrU(50000), MemoryLimit: ptrI(200 << 20)},
		},
		{
			name:    "v1 missing files leave fields nil",
			version: cgroup.V1,
			remove:  []string{"cpu.shares", "memory.limit_in_bytes"},
			want:    cgroup.Values{CPUQuota: ptrI(cgroup.Unlimited), CPUPeriod: ptrU(100000)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeFS(t, tt.version)
			if err := f.Create("pod"); err != nil {
				t.Fatal(err)
			}
			for file, content := range tt.files {
				dir, _ := f.fileDir("pod", file)
				writeFiles(t, dir, map[string]string{file: content})
			}
			for _, file := range tt.remove {
				dir, _ := f.fileDir("pod", file)
				if err := os.Remove(filepath.Join(dir, file)); err != nil {
					t.Fatal(err)
				}
			}
			got, err := f.Get("pod")
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Get (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFSSetRoundTripsThroughGet(t *testing.T) {
	for _, tt := range []struct {
		version cgroup.Version
		set     cgroup.Values
	}{
		{cgroup.V2, cgroup.Values{CPUWeight: ptrU(39), CPUQuota: ptrI(150000), CPUPeriod: ptrU(100000), MemoryLimit: ptrI(300 << 20)}},
		{cgroup.V2, cgroup.Values{CPUWeight: ptrU(1), CPUQuota: ptrI(cgroup.Unlimited), CPUPeriod: ptrU(50000), MemoryLimit: ptrI(cgroup.Unlimited)}},
		{cgroup.V1, cgroup.Values{CPUShares: ptrU(1536), CPUQuota: ptrI(150000), CPUPeriod: ptrU(100000), MemoryLimit: ptrI(300 << 20)}},
	} {
		t.Run(tt.version.String(), func(t *testing.T) {
			f := newFakeFS(t, tt.version)
			if err := f.Create("p"); err != nil {
				t.Fatal(err)
			}
			if _, err := f.Set("p", tt.set); err != nil {
				t.Fatalf("Set: %v", err)
			}
			got, err := f.Get("p")
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			if diff := cmp.Diff(tt.set, got); diff != "" {
				t.Errorf("Get after Set (-set +got):\n%s", diff)
			}
		})
	}
}

func TestFSSetStopsAtFirstFailure(t *testing.T) {
	f := newFakeFS(t, cgroup.V2)
	if err := f.Create("pod"); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(f.Root(), "pod")
	// A directory where cpu.weight should be makes its read fail (EISDIR).
	if err := os.Remove(filepath.Join(dir, "cpu.weight")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "cpu.weight"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := f.Set("pod", cgroup.Values{MemoryLimit: ptrI(1 << 30), CPUWeight: ptrU(50), CPUQuota: ptrI(50000)})
	if !errors.Is(err, syscall.EISDIR) {
		t.Fatalf("Set error = %v, want EISDIR", err)
	}
	if !strings.Contains(err.Error(), "write pod/cpu.weight: ") {
		t.Errorf("Set error %q does not name the path and file", err)
	}
	want := []cgroup.Write{
		{Path: "pod", File: "memory.max", Old: "max", New: "1073741824"},
		{Path: "pod", File: "cpu.weight", New: "50", Err: syscall.EISDIR},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b error) bool { return errors.Is(a, b) })); diff != "" {
		t.Errorf("Set writes (-want +got):\n%s", diff)
	}
	if content := readRaw(t, filepath.Join(dir, "cpu.max")); content != "max 100000" {
		t.Errorf("cpu.max = %q after a failed earlier write, want it untouched", content)
	}
}

func TestFSMissingFilesAndCgroups(t *testing.T) {
	for _, version := range []cgroup.Version{cgroup.V1, cgroup.V2} {
		t.Run(version.String(), func(t *testing.T) {
			f := newFakeFS(t, version)
			if err := f.Create("pod"); err != nil {
				t.Fatal(err)
			}
			limitFile := "memory.max"
			if version == cgroup.V1 {
				limitFile = "memory.limit_in_bytes"
			}
			dir, _ := f.fileDir("pod", limitFile)
			if err := os.Remove(filepath.Join(dir, limitFile)); err != nil {
				t.Fatal(err)
			}
			_, err := f.Set("pod", cgroup.Values{MemoryLimit: ptrI(1 << 20)})
			if !errors.Is(err, cgroup.ErrNotSupported) || !strings.Contains(err.Error(), "pod/"+limitFile) {
				t.Errorf("Set without %s: %v, want cgroup.ErrNotSupported naming pod/%s", limitFile, err, limitFile)
			}
			if _, err := f.ReadFile("pod", limitFile); !errors.Is(err, cgroup.ErrNotSupported) {
				t.Errorf("ReadFile of a missing file: %v, want ErrNotSupported", err)
			}

			if f.Exists("gone") {
				t.Error("Exists(gone) = true")
			}
			if _, err := f.Get("gone"); !errors.Is(err, cgroup.ErrNotExist) {
				t.Errorf("Get(gone): %v, want ErrNotExist", err)
			}
			if ws, err := f.Set("gone", cgroup.Values{MemoryLimit: ptrI(1 << 20)}); !errors.Is(err, cgroup.ErrNotExist) || len(ws) != 0 {
				t.Errorf("Set(gone) = %v, %v; want no writes and ErrNotExist", ws, err)
			}
			if _, err := f.ReadFile("gone", "cpu.shares"); !errors.Is(err, cgroup.ErrNotExist) {
				t.Errorf("ReadFile(gone): %v, want ErrNotExist", err)
			}
			if _, err := f.MemoryUsage("gone"); !errors.Is(err, cgroup.ErrNotExist) {
				t.Errorf("MemoryUsage(gone): %v, want ErrNotExist", err)
			}
			if err := f.Delete("gone"); err != nil {
				t.Errorf("Delete(gone): %v, want nil", err)
			}
		})
	}
}

// TestFSRejectsPathsOutsideTheRoot checks that no name that could leave the
// root reaches the file system: every call fails with cgroup.ErrInvalidPath and
// the directory around the root is left as it was.
func TestFSRejectsPathsOutsideTheRoot(t *testing.T) {
	bad := []string{"..", "../escape", "pod/../../escape", "/abs", "pod/", "pod//ctr", "./pod", "pod/.",
		"pod\nx", "pod\x00x", strings.Repeat("x", 256)}
	for _, version := range []cgroup.Version{cgroup.V1, cgroup.V2} {
		t.Run(version.String(), func(t *testing.T) {
			f := newFakeFS(t, version)
			outside := filepath.Dir(f.Root())
			before, _ := os.ReadDir(outside)
			for _, p := range bad {
				checks := map[string]error{
					"Create": f.Create(p),
					"Delete": f.Delete(p),
				}
				_, checks["Get"] = f.Get(p)
				_, checks["Set"] = f.Set(p, cgroup.Values{MemoryLimit: ptrI(1), CPUShares: ptrU(2), CPUWeight: ptrU(1)})
				_, checks["ReadFile"] = f.ReadFile(p, "cpu.max")
				_, checks["MemoryUsage"] = f.MemoryUsage(p)
				_, checks["Dir"] = f.Dir(p, "cpu")
				for op, err := range checks {
					if !errors.Is(err, cgroup.ErrInvalidPath) {
						t.Errorf("%s(%q) error = %v, want ErrInvalidPath", op, p, err)
					}
				}
				if f.Exists(p) {
					t.Errorf("Exists(%q) = true", p)
				}
			}
			for _, file := range []string{"../cpu.max", "a/b", "", ".."} {
				if _, err := f.ReadFile("", file); !errors.Is(err, cgroup.ErrInvalidPath) {
					t.Errorf("ReadFile(root, %q) error = %v, want ErrInvalidPath", file, err)
				}
			}
			after, _ := os.ReadDir(outside)
			if len(after) != len(before) {
				t.Errorf("entries next to the root changed: %d before, %d after", len(before), len(after))
			}
		})
	}
}

func TestFSCreateEnablesControllersInAncestors(t *testing.T) {
	tests := []struct {
		name     string
		rootCtl  string // the root's cgroup.subtree_control before Create
		wantRoot string
	}{
		{"none enabled", "", "+cpu +memory"},
		{"both enabled already: no write", "cpu memory", "cpu memory"},
		{"only the missing one", "cpu io", "+memory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeFS(t, cgroup.V2)
			writeFiles(t, f.Root(), map[string]string{"cgroup.subtree_control": tt.rootCtl})
			if err := f.Create("kubepods/burstable/pod1"); err != nil {
				t.Fatalf("Create: %v", err)
			}
			if got := readRaw(t, filepath.Join(f.Root(), "cgroup.subtree_control")); got != tt.wantRoot {
				t.Errorf("root cgroup.subtree_control = %q, want %q", got, tt.wantRoot)
			}
			for _, p := range []string{"kubepods", "kubepods/burstable"} {
				if got := readRaw(t, filepath.Join(f.Root(), p, "cgroup.subtree_control")); got != "+cpu +memory" {
					t.Errorf("%s/cgroup.subtree_control = %q, want +cpu +memory", p, got)
				}
			}
			if got := readRaw(t, filepath.Join(f.Root(), "kubepods/burstable/pod1", "cgroup.subtree_control")); got != "" {
				t.Errorf("the new leaf's cgroup.subtree_control = %q, want it untouched", got)
			}
			if !f.Exists("kubepods/burstable/pod1") {
				t.Error("Exists after Create = false")
			}
			if err := f.Create("kubepods/burstable/pod1"); err != nil {
				t.Errorf("Create of an existing cgroup: %v", err)
			}
		})
	}
}

func TestFSCreateV1MakesBothHierarchies(t *testing.T) {
	f := newFakeFS(t, cgroup.V1)
	if err := f.Create("kubepods/pod1"); err != nil {
		t.Fatalf("Create: %v", err)
	}
	for _, c := range []string{"cpu", "memory"} {
		if _, err := os.Stat(filepath.Join(f.Root(), c, "kubepods/pod1")); err != nil {
			t.Errorf("%s hierarchy: %v", c, err)
		}
	}
	if !f.Exists("kubepods/pod1") {
		t.Error("Exists after Create = false")
	}
}

func TestFSDelete(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, f *FS)
		path    string
		wantErr error
		gone    bool
	}{
		{name: "empty leaf", path: "pod/ctr", gone: true},
		{name: "cgroup with a child", path: "pod", wantErr: syscall.EBUSY},
		{
			name: "cgroup with a process",
			setup: func(t *testing.T, f *FS) {
				dir, _ := f.fileDir("pod/ctr", "cgroup.procs")
				writeFiles(t, dir, map[string]string{"cgroup.procs": "4242"})
			},
			path:    "pod/ctr",
			wantErr: syscall.EBUSY,
		},
		{name: "missing cgroup", path: "pod/other"},
		{name: "the root", path: "", wantErr: syscall.EBUSY},
	}
	for _, version := range []cgroup.Version{cgroup.V1, cgroup.V2} {
		for _, tt := range tests {
			t.Run(version.String()+" "+tt.name, func(t *testing.T) {
				f := newFakeFS(t, version)
				if err := f.Create("pod/ctr"); err != nil {
					t.Fatal(err)
				}
				if tt.setup != nil {
					tt.setup(t, f)
				}
				err := f.Delete(tt.path)
				if tt.wantErr != nil {
					if !errors.Is(err, tt.wantErr) {
						t.Fatalf("Delete(%q) error = %v, want %v", tt.path, err, tt.wantErr)
					}
				} else if err != nil {
					t.Fatalf("Delete(%q): %v", tt.path, err)
				}
				if tt.gone {
					if f.Exists(tt.path) {
						t.Errorf("Exists(%q) after Delete = true", tt.path)
					}
					if version == cgroup.V1 {
						for _, c := range []string{"cpu", "memory"} {
							if _, err := os.Stat(filepath.Join(f.mounts[c], tt.path)); !os.IsNotExist(err) {
								t.Errorf("%s hierarchy still has %s: %v", c, tt.path, err)
							}
						}
					}
				}
				if tt.wantErr != nil && tt.path != "" && !f.Exists(tt.path) {
					t.Errorf("refused Delete(%q) removed the cgroup", tt.path)
				}
			})
		}
	}
}

func TestFSReadFileAndMemoryUsage(t *testing.T) {
	for _, tt := range []struct {
		version   cgroup.Version
		usageFile string
	}{{cgroup.V1, "memory.usage_in_bytes"}, {cgroup.V2, "memory.current"}} {
		t.Run(tt.version.String(), func(t *testing.T) {
			f := newFakeFS(t, tt.version)
			if err := f.Create("pod"); err != nil {
				t.Fatal(err)
			}
			dir, _ := f.fileDir("pod", tt.usageFile)
			writeFiles(t, dir, map[string]string{tt.usageFile: "31457280\n"})
			got, err := f.MemoryUsage("pod")
			if err != nil || got != 30<<20 {
				t.Errorf("MemoryUsage = %d, %v; want %d", got, err, 30<<20)
			}
			writeFiles(t, dir, map[string]string{tt.usageFile: "lots"})
			if _, err := f.MemoryUsage("pod"); !errors.Is(err, errParse) {
				t.Errorf("MemoryUsage of %q: %v, want a parse error", "lots", err)
			}
		})
	}
	t.Run("v1 files come from their controller's hierarchy", func(t *testing.T) {
		base := t.TempDir()
		mounts := map[string]string{}
		for _, c := range []string{"cpu", "memory", "cpuacct"} {
			mounts[c] = filepath.Join(base, c)
			writeFiles(t, filepath.Join(mounts[c], "pod"), map[string]string{c + ".probe": c, "cgroup.procs": c + "-procs"})
		}
		f, err := New(base, WithV1Mounts(mounts))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []string{"cpu", "memory", "cpuacct"} {
			if got, err := f.ReadFile("pod", c+".probe"); err != nil || got != c {
				t.Errorf("ReadFile(%s.probe) = %q, %v; want %q", c, got, err, c)
			}
		}
		if got, err := f.ReadFile("pod", "cgroup.procs"); err != nil || got != "cpu-procs" {
			t.Errorf("ReadFile(cgroup.procs) = %q, %v; want the cpu hierarchy's", got, err)
		}
		if _, err := f.ReadFile("pod", "pids.max"); !errors.Is(err, cgroup.ErrNotSupported) {
			t.Errorf("ReadFile(pids.max) without a pids hierarchy: %v, want ErrNotSupported", err)
		}
	})
}

// TestFSConcurrentUse runs Sets and Gets of several cgroups at once; under
// -race it checks that FS shares no unguarded state between calls.
func TestFSConcurrentUse(t *testing.T) {
	f := newFakeFS(t, cgroup.V2)
	paths := []string{"a", "b", "c", "d"}
	for _, p := range paths {
		if err := f.Create(p); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error)
	for i, p := range paths {
		go func() {
			for j := 0; j < 20; j++ {
				if _, err := f.Set(p, cgroup.Values{CPUWeight: ptrU(uint64(1 + i*100 + j))}); err != nil {
					done <- err
					return
				}
				if _, err := f.Get(p); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range paths {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	for i, p := range paths {
		v, err := f.Get(p)
		if err != nil || v.CPUWeight == nil || *v.CPUWeight != uint64(1+i*100+19) {
			t.Errorf("Get(%s) = %+v, %v; want the last weight written", p, v, err)
		}
	}
}

// sortedByDepth returns paths deepest first, for removing a cgroup tree.
func sortedByDepth(paths []string) []string {
	sort.Slice(paths, func(i, j int) bool {
		return strings.Count(paths[i], "/") > strings.Count(paths[j], "/")
	})
	return paths
}

// requireEnv names the environment variable that turns a skip of a real
// host test into a failure: CI sets it to the cgroup version the machine
// (or the VM) must offer, so a broken setup can never pass as a skip.
const requireEnv = "RESIZELET_REQUIRE_CGROUP"

// realFS returns an FS over /sys/fs/cgroup if this host offers cgroup
// version v and the test runs as root, and skips (or fails, when
// RESIZELET_REQUIRE_CGROUP names v) otherwise.
func realFS(t testing.TB, v cgroup.Version) *FS {
	t.Helper()
	skip := t.Skipf
	if os.Getenv(requireEnv) == v.String() {
		skip = t.Fatalf
	}
	if os.Geteuid() != 0 {
		skip("real cgroup %v test needs root", v)
	}
	f, err := New("/sys/fs/cgroup")
	if err != nil {
		skip("real cgroup %v test: no usable cgroup hierarchy at /sys/fs/cgroup: %v", v, err)
	}
	if f.Version() != v {
		where := "run it on a cgroup v1 host"
		if v == cgroup.V2 {
			where = "examples/realhost runs it in a qemu VM"
		}
		skip("real cgroup %v test: /sys/fs/cgroup is cgroup %v here (%s)", v, f.Version(), where)
	}
	return f
}

// privateParent makes a cgroup of the test's own below the root and removes
// it, with everything below it, when the test ends, even when it fails:
// processes still in it are killed first, children are removed first.
func privateParent(t testing.TB, f *FS) string {
	t.Helper()
	parent := "resizelet-fstest-" + t.Name() + "-" + strconv.Itoa(os.Getpid())
	if err := f.Create(parent); err != nil {
		t.Fatalf("Create(%s): %v", parent, err)
	}
	t.Cleanup(func() { removeTree(t, f, parent) })
	return parent
}

func removeTree(t testing.TB, f *FS, parent string) {
	var paths []string
	seen := map[string]bool{}
	for _, c := range []string{"cpu", "memory"} {
		base, err := f.Dir("", c)
		if err != nil {
			continue
		}
		filepath.WalkDir(filepath.Join(base, parent), func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				if rel, _ := filepath.Rel(base, p); !seen[rel] {
					seen[rel] = true
					paths = append(paths, rel)
				}
			}
			return nil
		})
	}
	for _, p := range sortedByDepth(paths) {
		var err error
		for i := 0; i < 50; i++ {
			killProcs(f, p)
			if err = f.Delete(p); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond) // killed processes take a moment to leave
		}
		if err != nil {
			t.Errorf("cleanup: %v", err)
		}
	}
}

// killProcs sends SIGKILL to every process in the cgroup at path.
func killProcs(f *FS, path string) {
	for _, c := range []string{"cpu", "memory"} {
		dir, err := f.Dir(path, c)
		if err != nil {
			continue
		}
		data, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		for _, field := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(field); err == nil && pid > 0 {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
}

// shmFiller is a shell in a cgroup that fills a file in /dev/shm: tmpfs
// pages stay charged to the cgroup and cannot be reclaimed without swap,
// which makes memory usage the kernel must respect (page cache would just
// be reclaimed).
type shmFiller struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan error
}

func startShmFiller(t *testing.T, f *FS, path string, bytes int64) *shmFiller {
	t.Helper()
	shm := "/dev/shm/resizelet-fstest-" + strconv.Itoa(os.Getpid())
	cmd := exec.Command("/bin/sh", "-c", `read x; head -c "$1" /dev/zero > "$2" && echo filled; read y`,
		"sh", strconv.FormatInt(bytes, 10), shm)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start shell: %v", err)
	}
	s := &shmFiller{cmd: cmd, stdin: stdin, done: make(chan error, 1)}
	t.Cleanup(func() {
		cmd.Process.Kill()
		s.wait()
		os.Remove(shm)
	})
	for _, c := range []string{"cpu", "memory"} {
		dir, err := f.Dir(path, c)
		if err != nil {
			t.Fatal(err)
		}
		if err := writeExisting(filepath.Join(dir, "cgroup.procs"), strconv.Itoa(cmd.Process.Pid)); err != nil {
			t.Fatalf("move the shell into %s: %v", path, err)
		}
		if f.Version() == cgroup.V2 {
			break
		}
	}
	if _, err := io.WriteString(stdin, "go\n"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(line) != "filled" {
		t.Fatalf("shell did not fill %s: %q, %v", shm, line, err)
	}
	go func() { s.done <- cmd.Wait() }()
	return s
}

// wait returns how the shell ended (after Kill or stdin's close).
func (s *shmFiller) wait() error {
	select {
	case err := <-s.done:
		s.done <- err
		return err
	default:
	}
	s.stdin.Close()
	err := <-s.done
	s.done <- err
	return err
}

func TestFSRealHostV1(t *testing.T) { testRealHost(t, realFS(t, cgroup.V1)) }
func TestFSRealHostV2(t *testing.T) { testRealHost(t, realFS(t, cgroup.V2)) }

// testRealHost drives the kernel through FS under a private parent cgroup:
// defaults, writes and read-back, unlimited, the kernel's rejections, and
// a memory limit below usage (EBUSY on v1, an OOM kill on v2).
func testRealHost(t *testing.T, f *FS) {
	parent := privateParent(t, f)
	pod, ctr := parent+"/pod", parent+"/pod/ctr"
	if err := f.Create(ctr); err != nil {
		t.Fatalf("Create: %v", err)
	}
	v2 := f.Version() == cgroup.V2
	defaults := cgroup.Values{CPUShares: ptrU(1024), CPUQuota: ptrI(cgroup.Unlimited), CPUPeriod: ptrU(100000), MemoryLimit: ptrI(cgroup.Unlimited)}
	set := cgroup.Values{MemoryLimit: ptrI(200 << 20), CPUShares: ptrU(819), CPUQuota: ptrI(80000), CPUPeriod: ptrU(100000)}
	raw := map[string]string{"memory.limit_in_bytes": "209715200", "cpu.shares": "819", "cpu.cfs_quota_us": "80000"}
	unlimitedRaw := map[string]string{"memory.limit_in_bytes": "9223372036854771712", "cpu.cfs_quota_us": "-1"}
	if v2 {
		defaults.CPUShares, defaults.CPUWeight = nil, ptrU(100)
		set.CPUShares, set.CPUWeight = nil, ptrU(32)
		raw = map[string]string{"memory.max": "209715200", "cpu.weight": "32", "cpu.max": "80000 100000"}
		unlimitedRaw = map[string]string{"memory.max": "max", "cpu.max": "max 100000"}
	}
	if got, err := f.Get(ctr); err != nil {
		t.Fatalf("Get: %v", err)
	} else if diff := cmp.Diff(defaults, got); diff != "" {
		t.Errorf("Get of a new cgroup (-want +got):\n%s", diff)
	}

	ws, err := f.Set(pod, set)
	if err != nil || len(ws) != 3 {
		t.Fatalf("Set = %+v, %v; want 3 writes", ws, err)
	}
	if got, err := f.Get(pod); err != nil {
		t.Fatalf("Get: %v", err)
	} else if diff := cmp.Diff(set, got); diff != "" {
		t.Errorf("Get after Set (-want +got):\n%s", diff)
	}
	for file, want := range raw {
		if got, err := f.ReadFile(pod, file); err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", file, got, err, want)
		}
	}
	if ws, err := f.Set(pod, set); err != nil || len(ws) != 0 {
		t.Errorf("repeating Set = %+v, %v; want no writes", ws, err)
	}

	if _, err := f.Set(pod, cgroup.Values{MemoryLimit: ptrI(cgroup.Unlimited), CPUQuota: ptrI(cgroup.Unlimited)}); err != nil {
		t.Fatalf("Set unlimited: %v", err)
	}
	for file, want := range unlimitedRaw {
		if got, err := f.ReadFile(pod, file); err != nil || got != want {
			t.Errorf("%s after Set(cgroup.Unlimited) = %q, %v; want %q", file, got, err, want)
		}
	}
	if got, _ := f.Get(pod); got.MemoryLimit == nil || *got.MemoryLimit != cgroup.Unlimited || got.CPUQuota == nil || *got.CPUQuota != cgroup.Unlimited {
		t.Errorf("Get after Set(cgroup.Unlimited) = %+v", got)
	}

	// The kernel's rejections arrive as the failed last write, wrapped
	// with the path and file, and leave the old content.
	rejects := []struct {
		set  cgroup.Values
		file string
		want syscall.Errno
	}{{cgroup.Values{CPUQuota: ptrI(500)}, "cpu.cfs_quota_us", syscall.EINVAL}}
	if v2 {
		rejects = []struct {
			set  cgroup.Values
			file string
			want syscall.Errno
		}{
			{cgroup.Values{CPUWeight: ptrU(0)}, "cpu.weight", syscall.ERANGE},
			{cgroup.Values{CPUWeight: ptrU(10001)}, "cpu.weight", syscall.ERANGE},
			{cgroup.Values{CPUQuota: ptrI(500)}, "cpu.max", syscall.EINVAL},
		}
	}
	for _, r := range rejects {
		before, _ := f.ReadFile(ctr, r.file)
		ws, err := f.Set(ctr, r.set)
		if !errors.Is(err, r.want) || !strings.Contains(err.Error(), ctr+"/"+r.file) {
			t.Errorf("Set(%s) error = %v, want %v naming %s/%s", r.file, err, r.want, ctr, r.file)
		}
		if len(ws) != 1 || !errors.Is(ws[0].Err, r.want) {
			t.Errorf("Set(%s) writes = %+v, want one failed write", r.file, ws)
		}
		if after, _ := f.ReadFile(ctr, r.file); after != before {
			t.Errorf("%s changed from %q to %q by a rejected write", r.file, before, after)
		}
	}
	if !v2 {
		if _, err := f.Set(ctr, cgroup.Values{CPUShares: ptrU(1)}); err != nil {
			t.Fatalf("Set shares 1: %v", err)
		}
		if got, _ := f.ReadFile(ctr, "cpu.shares"); got != "2" {
			t.Errorf("cpu.shares after writing 1 = %q, want the kernel's clamp 2", got)
		}
		if ws, _ := f.Set(ctr, cgroup.Values{CPUShares: ptrU(1)}); len(ws) != 0 {
			t.Errorf("Set shares 1 again wrote %+v, want nothing", ws)
		}
	}

	// Memory below usage.
	const fill = 24 << 20
	sh := startShmFiller(t, f, ctr, fill)
	for _, p := range []string{ctr, pod} {
		if usage, err := f.MemoryUsage(p); err != nil || usage < fill {
			t.Errorf("MemoryUsage(%s) = %d, %v; want at least %d", p, usage, err, fill)
		}
	}
	limitFile := "memory.limit_in_bytes"
	if v2 {
		limitFile = "memory.max"
	}
	before, _ := f.ReadFile(ctr, limitFile)
	kills := func() int {
		s, _ := f.ReadFile(ctr, "memory.events")
		for _, line := range strings.Split(s, "\n") {
			if k, v, _ := strings.Cut(line, " "); k == "oom_kill" {
				n, _ := strconv.Atoi(v)
				return n
			}
		}
		return -1
	}
	killsBefore := kills()
	ws, err = f.Set(ctr, cgroup.Values{MemoryLimit: ptrI(8 << 20)})
	if !v2 {
		if !errors.Is(err, syscall.EBUSY) || len(ws) != 1 || !errors.Is(ws[0].Err, syscall.EBUSY) {
			t.Errorf("v1 limit below usage: %+v, %v; want one failed write with EBUSY", ws, err)
		}
		if after, _ := f.ReadFile(ctr, limitFile); after != before {
			t.Errorf("%s changed from %q to %q by a refused write", limitFile, before, after)
		}
		return
	}
	if err != nil {
		t.Fatalf("v2 limit below usage: %v, want the write to succeed", err)
	}
	werr := sh.wait()
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("the shell in %s ended with %v, want an OOM kill (SIGKILL)", ctr, werr)
	}
	if got := kills(); got != killsBefore+1 {
		t.Errorf("memory.events oom_kill = %d, want %d", got, killsBefore+1)
	}
}

func TestFSRealHostUsageV1(t *testing.T) { testRealUsage(t, realFS(t, cgroup.V1)) }
func TestFSRealHostUsageV2(t *testing.T) { testRealUsage(t, realFS(t, cgroup.V2)) }

// testRealUsage checks SetUsage on the kernel: the memory is really charged,
// a cgroup with usage cannot be deleted, and a limit below usage gives the
// kernel's answer through Set (v1 EBUSY; v2 an OOM kill reported to
// OnOOMKill before Set returns), as cgroup.SimKernel models it.
func testRealUsage(t *testing.T, f *FS) {
	parent := privateParent(t, f)
	ctr := parent + "/pod/ctr"
	if err := f.Create(ctr); err != nil {
		t.Fatalf("Create: %v", err)
	}
	t.Cleanup(func() { f.SetUsage(ctr, 0) })
	var mu sync.Mutex
	var killed []string
	f.OnOOMKill(func(p string) {
		mu.Lock()
		killed = append(killed, p)
		mu.Unlock()
	})
	kills := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), killed...)
	}

	const used = 32 << 20
	if err := f.SetUsage(ctr, used); err != nil {
		t.Fatalf("SetUsage: %v", err)
	}
	if usage, err := f.MemoryUsage(ctr); err != nil || usage < used {
		t.Errorf("MemoryUsage after SetUsage(%d) = %d, %v", used, usage, err)
	}
	if err := f.Delete(ctr); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("Delete of a cgroup with usage: %v, want EBUSY", err)
	}
	ws, err := f.Set(ctr, cgroup.Values{MemoryLimit: ptrI(16 << 20)})
	if f.Version() == cgroup.V1 {
		if !errors.Is(err, syscall.EBUSY) || len(ws) != 1 {
			t.Errorf("v1 limit below usage: %+v, %v; want EBUSY", ws, err)
		}
		if len(kills()) != 0 {
			t.Errorf("OOM kills %v after a refused write", kills())
		}
	} else {
		if err != nil {
			t.Fatalf("v2 limit below usage: %v", err)
		}
		if got := kills(); len(got) != 1 || got[0] != ctr {
			t.Errorf("OOM kills reported when Set returned = %v, want [%s]", got, ctr)
		}
		if usage, _ := f.MemoryUsage(ctr); usage >= 16<<20 {
			t.Errorf("usage after the OOM kill = %d, want below the new limit", usage)
		}
	}

	// Usage above the limit: the kernel OOM-kills the holder on both
	// versions, reported before SetUsage returns.
	if err := f.SetUsage(ctr, 0); err != nil {
		t.Fatalf("SetUsage 0: %v", err)
	}
	if _, err := f.Set(ctr, cgroup.Values{MemoryLimit: ptrI(48 << 20)}); err != nil {
		t.Fatalf("Set 48Mi: %v", err)
	}
	n := len(kills())
	if err := f.SetUsage(ctr, 96<<20); err != nil {
		t.Fatalf("SetUsage above the limit: %v", err)
	}
	if got := kills(); len(got) != n+1 || got[n] != ctr {
		t.Errorf("OOM kills after SetUsage above the limit = %v, want one more for %s", got, ctr)
	}
	if err := f.SetUsage(ctr, 0); err != nil {
		t.Fatalf("SetUsage 0: %v", err)
	}
	if err := f.Delete(ctr); err != nil {
		t.Errorf("Delete after SetUsage(0): %v", err)
	}
}

// TestMountsBelow: every cgroup hierarchy at or below the root, v1 (named
// ones included) and v2, with escapes undone; other file systems and other
// roots are left out.
func TestMountsBelow(t *testing.T) {
	want := []string{"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpuacct", "/sys/fs/cgroup/cpuset",
		"/sys/fs/cgroup/memory", "/sys/fs/cgroup/systemd", "/sys/fs/cgroup/unified"}
	if diff := cmp.Diff(want, mountsBelow(hostMountInfo, "/sys/fs/cgroup")); diff != "" {
		t.Errorf("mountsBelow (-want +got):\n%s", diff)
	}
	if got := mountsBelow(hostMountInfo, "/sys/fs/cgroup/memory"); !slices.Equal(got, []string{"/sys/fs/cgroup/memory"}) {
		t.Errorf("below the memory hierarchy: %q", got)
	}
	if got := mountsBelow(`50 1 0:40 / /tmp/my\040root rw - cgroup2 cgroup2 rw`+"\n", "/tmp/my root"); !slices.Equal(got, []string{"/tmp/my root"}) {
		t.Errorf("escaped mount point: %q", got)
	}
	if got := mountsBelow(hostMountInfo, "/sys/fs/cgroup/c"); len(got) != 0 {
		t.Errorf("a root that is a name prefix only matched %q", got)
	}
}

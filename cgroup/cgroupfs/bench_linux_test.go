//go:build linux

package cgroupfs

import (
	"os"
	"strconv"
	"testing"

	"github.com/resizelet/resizelet/cgroup"
)

// The pod cgroup resize the cgroupfs benchmarks make, as the kubelet makes
// it for a CPU and memory resize of a Burstable pod: read the pod cgroup's
// values back (GetPodCgroupConfig), then write the memory limit, the CFS
// quota and period, and the shares, one Set each (setPodCgroupConfig per
// resource). Each op alternates between two sizes, so every write changes
// its file.
type benchSize struct {
	memory int64
	quota  int64
	shares uint64
	weight uint64
}

var benchSizes = [2]benchSize{
	{memory: 256 << 20, quota: 40000, shares: 307, weight: 12},
	{memory: 384 << 20, quota: 60000, shares: 614, weight: 24},
}

// benchFiles are the files of the resize on each version: read back, then
// written in order (the period does not change, so it is read but not
// written).
func benchFiles(v cgroup.Version) (reads, writes []string) {
	if v == cgroup.V2 {
		return []string{cgroup.FileCPUWeight, cgroup.FileCPUMax, cgroup.FileMemoryMax}, []string{cgroup.FileMemoryMax, cgroup.FileCPUMax, cgroup.FileCPUWeight}
	}
	return []string{cgroup.FileCPUShares, cgroup.FileCFSPeriod, cgroup.FileCFSQuota, cgroup.FileMemoryLimit}, []string{cgroup.FileMemoryLimit, cgroup.FileCFSQuota, cgroup.FileCPUShares}
}

func benchContent(v cgroup.Version, file string, s benchSize) string {
	switch file {
	case cgroup.FileMemoryMax, cgroup.FileMemoryLimit:
		return strconv.FormatInt(s.memory, 10)
	case cgroup.FileCPUMax:
		return strconv.FormatInt(s.quota, 10) + " 100000"
	case cgroup.FileCFSQuota:
		return strconv.FormatInt(s.quota, 10)
	case cgroup.FileCPUWeight:
		return strconv.FormatUint(s.weight, 10)
	}
	return strconv.FormatUint(s.shares, 10)
}

// benchmarkCgroupfs runs the resize on a private cgroup of the real host
// (skipping without root or cgroups), through FS or as raw file reads and
// writes of the same files.
func benchmarkCgroupfs(b *testing.B, raw bool) {
	f, err := New("/sys/fs/cgroup")
	if os.Geteuid() != 0 || err != nil {
		b.Skipf("the cgroupfs benchmark needs root and a cgroup hierarchy at /sys/fs/cgroup (uid %d, %v)", os.Geteuid(), err)
	}
	path := privateParent(b, f) + "/pod"
	if err := f.Create(path); err != nil {
		b.Fatal(err)
	}
	v := f.Version()
	reads, writes := benchFiles(v)
	dir := func(file string) string {
		d, err := f.Dir(path, controllerOf(file))
		if err != nil {
			b.Fatal(err)
		}
		return d + "/" + file
	}
	readPaths := make([]string, len(reads))
	for i, file := range reads {
		readPaths[i] = dir(file)
	}
	writePaths := make([]string, len(writes))
	for i, file := range writes {
		writePaths[i] = dir(file)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := benchSizes[i%2]
		if raw {
			for _, p := range readPaths {
				if _, err := os.ReadFile(p); err != nil {
					b.Fatal(err)
				}
			}
			for j, p := range writePaths {
				if err := os.WriteFile(p, []byte(benchContent(v, writes[j], s)), 0); err != nil {
					b.Fatal(err)
				}
			}
			continue
		}
		if _, err := f.Get(path); err != nil {
			b.Fatal(err)
		}
		period := uint64(100000)
		weight, shares := s.weight, s.shares
		for _, vals := range []cgroup.Values{
			{MemoryLimit: &s.memory},
			{CPUQuota: &s.quota, CPUPeriod: &period},
			{CPUWeight: &weight, CPUShares: &shares},
		} {
			if ws, err := f.Set(path, vals); err != nil || len(ws) != 1 {
				b.Fatalf("Set(%+v) = %v, %v; want one write", vals, ws, err)
			}
		}
	}
}

// BenchmarkCgroupfsResize is a pod cgroup resize through FS: the Get and
// the three Sets the kubelet's resize makes.
func BenchmarkCgroupfsResize(b *testing.B) { benchmarkCgroupfs(b, false) }

// BenchmarkCgroupfsRawResize is the same resize as bare os.ReadFile and
// os.WriteFile calls on the same files: the floor FS is measured against.
func BenchmarkCgroupfsRawResize(b *testing.B) { benchmarkCgroupfs(b, true) }

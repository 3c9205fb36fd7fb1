//go:build linux

package cgroupfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"

	"github.com/containerd/cgroups/v3/cgroup1"
	"github.com/containerd/cgroups/v3/cgroup2"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// Set writes the fields of v that are set and differ from the files'
// current content: memory first, then CPU (v2: cpu.weight, cpu.max; v1:
// cpu.shares, cpu.cfs_period_us, cpu.cfs_quota_us). cgroup.Unlimited is written as
// "max" on v2 and -1 on v1. On v2 a nil CPUQuota or CPUPeriod keeps the
// other half of cpu.max. CPUShares is ignored on v2 and CPUWeight on v1.
//
// The writes go through containerd/cgroups (cgroup2's manager; cgroup1's
// memory controller), except "max" into memory.max, which its
// cgroup2.Memory cannot express (it writes numbers only), and the v1 cpu
// files, written as cgroup1 writes them but without its MkdirAll.
//
// Set makes no system call beyond its writes and the reads of files whose
// content the last Get did not leave in memory: a resize reads the pod
// cgroup back (Get) and then writes it, and those reads serve as the
// current values. The memory holds only what this FS read or left, so a
// file another writer changed between a Get and a Set is compared with
// what the Get saw; the kubelet is the only writer of a pod cgroup.
func (f *FS) Set(path string, v cgroup.Values) ([]cgroup.Write, error) {
	if !f.made() {
		return nil, fmt.Errorf("set %s: %w", path, errNotMade)
	}
	if err := cgconfig.ValidatePath(path); err != nil {
		return nil, fmt.Errorf("set %s: %w", path, err)
	}
	ws, err := f.set(path, v)
	if err != nil && len(ws) == 1 && errors.Is(ws[0].Err, cgroup.ErrNotExist) {
		// The cgroup is missing: nothing was written.
		return nil, fmt.Errorf("set %s: %w", path, cgroup.ErrNotExist)
	}
	return ws, err
}

// set is Set on a valid path. It makes no system call beyond the writes
// and the reads of files whose content the last Get did not leave it.
func (f *FS) set(path string, v cgroup.Values) ([]cgroup.Write, error) {
	s := setter{path: path, version: f.version, known: &f.known}
	if f.version == cgroup.V2 {
		dir := join(f.root, path)
		mgr, err := cgroup2.Load("/"+path, cgroup2.WithMountpoint(f.root))
		if err != nil {
			return nil, fmt.Errorf("set %s: %w: %w", path, cgroup.ErrInvalidPath, err)
		}
		if v.MemoryLimit != nil {
			limit := v.MemoryLimit
			holders := f.hasHolders()
			before := -1
			if holders {
				before = oomKills(dir)
			}
			s.one(dir, cgroup.FileMemoryMax, cgroup.FormatMax(*limit), func() error {
				if *limit == cgroup.Unlimited {
					return writeExisting(dir+"/"+cgroup.FileMemoryMax, cgroup.FormatMax(cgroup.Unlimited))
				}
				return mgr.Update(&cgroup2.Resources{Memory: &cgroup2.Memory{Max: limit}})
			})
			if holders && s.err == nil {
				f.reapOOMKills(path, before)
			}
		}
		if v.CPUWeight != nil {
			s.one(dir, cgroup.FileCPUWeight, strconv.FormatUint(*v.CPUWeight, 10), func() error {
				return mgr.Update(&cgroup2.Resources{CPU: &cgroup2.CPU{Weight: v.CPUWeight}})
			})
		}
		if v.CPUQuota != nil || v.CPUPeriod != nil {
			s.cpuMax(dir, v, mgr)
		}
		return s.writes, s.err
	}
	cpu, mem := join(f.mounts["cpu"], path), join(f.mounts["memory"], path)
	// The memory limit goes through cgroup1's memory controller, without
	// cgroup1.Load (which stats every hierarchy on each call). The cpu
	// files are written as cgroup1's cpu controller writes them, but
	// directly: its Update is its Create, which runs MkdirAll (a stat)
	// before every write.
	if v.MemoryLimit != nil {
		root, prefix := v1Root("memory", f.mounts["memory"])
		r := &specs.LinuxResources{Memory: &specs.LinuxMemory{Limit: v.MemoryLimit}}
		s.one(mem, cgroup.FileMemoryLimit, strconv.FormatInt(*v.MemoryLimit, 10), func() error {
			return cgroup1.NewMemory(root).Update(prefix+path, r)
		})
	}
	writeCPU := func(file, content string) func() error {
		return func() error { return os.WriteFile(cpu+"/"+file, []byte(content), 0) }
	}
	if v.CPUShares != nil {
		c := strconv.FormatUint(*v.CPUShares, 10)
		s.one(cpu, cgroup.FileCPUShares, c, writeCPU(cgroup.FileCPUShares, c))
	}
	if v.CPUPeriod != nil {
		c := strconv.FormatUint(*v.CPUPeriod, 10)
		s.one(cpu, cgroup.FileCFSPeriod, c, writeCPU(cgroup.FileCFSPeriod, c))
	}
	if v.CPUQuota != nil {
		c := strconv.FormatInt(*v.CPUQuota, 10)
		s.one(cpu, cgroup.FileCFSQuota, c, writeCPU(cgroup.FileCFSQuota, c))
	}
	return s.writes, s.err
}

// setter carries one Set: the writes made so far and the first error, after
// which every further write is skipped.
type setter struct {
	path    string
	version cgroup.Version // for reading writes back as the kernel would (same)
	writes  []cgroup.Write
	err     error
	known   *fileCache
}

// current is the content of dir/file: as the last Get read it, or read
// now.
func (s *setter) current(dir, file string) (string, error) {
	if old, ok := s.known.take(dir, file); ok {
		return old, nil
	}
	return read(dir, file)
}

// one writes want into dir/file with write unless the file already holds
// it, and records the write.
func (s *setter) one(dir, file, want string, write func() error) {
	if s.err != nil {
		return
	}
	old, err := s.current(dir, file)
	if err != nil {
		s.fail(file, old, want, err)
		return
	}
	s.apply(dir, file, old, want, write)
}

// apply writes want with write unless old already says it, and records the
// write. A file left as it was keeps its remembered content.
func (s *setter) apply(dir, file, old, want string, write func() error) {
	if same(s.version, file, old, want) {
		s.known.put(dir, file, old)
		return
	}
	if err := write(); err != nil {
		err = kernelErr(err)
		if errors.Is(err, fs.ErrNotExist) && !isDir(dir) {
			// The content came from memory, and the cgroup has gone
			// since.
			err = cgroup.ErrNotExist
		}
		s.fail(file, old, want, err)
		return
	}
	s.writes = append(s.writes, cgroup.Write{Path: s.path, File: file, Old: old, New: want})
}

func (s *setter) fail(file, old, want string, err error) {
	s.writes = append(s.writes, cgroup.Write{Path: s.path, File: file, Old: old, New: want, Err: err})
	s.err = fmt.Errorf("write %s/%s: %w", s.path, file, err)
}

// cpuMax writes cpu.max from v's quota and period, keeping the current
// value of the one v leaves nil. cgroup2.NewCPUMax writes "max" only for a
// nil quota, so cgroup.Unlimited becomes nil here.
func (s *setter) cpuMax(dir string, v cgroup.Values, mgr *cgroup2.Manager) {
	if s.err != nil {
		return
	}
	old, err := s.current(dir, cgroup.FileCPUMax)
	if err != nil {
		s.fail(cgroup.FileCPUMax, old, "", err)
		return
	}
	quota, period, err := cgroup.ParseCPUMax(old)
	if err != nil {
		s.fail(cgroup.FileCPUMax, old, "", fmt.Errorf("%w %q: %w", errParse, old, err))
		return
	}
	if v.CPUQuota != nil {
		quota = *v.CPUQuota
	}
	if v.CPUPeriod != nil {
		period = *v.CPUPeriod
	}
	want := cgroup.FormatCPUMax(quota, period)
	s.apply(dir, cgroup.FileCPUMax, old, want, func() error {
		var q *int64
		if quota != cgroup.Unlimited {
			q = &quota
		}
		return mgr.Update(&cgroup2.Resources{CPU: &cgroup2.CPU{Max: cgroup2.NewCPUMax(q, &period)}})
	})
}

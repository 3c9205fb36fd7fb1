//go:build linux

package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/containerd/cgroups/v3/cgroup1"
	"github.com/containerd/cgroups/v3/cgroup2"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// The statfs magic numbers of the kernel's cgroup filesystems.
const (
	cgroup2SuperMagic = 0x63677270
	cgroupSuperMagic  = 0x27e0eb
)

// NewFS returns a Manager for the cgroups below root.
//
// Unless WithVersion says otherwise, the version is detected from root
// itself, never from containerd/cgroups' process-wide cached Mode(): root is
// cgroup v2 if it is a cgroup2 mount or holds a cgroup.controllers file, and
// cgroup v1 otherwise. On v2 root's cgroup.controllers must list cpu and
// memory. On v1 the cpu and memory hierarchies are the cgroup mounts
// directly below root in /proc/self/mountinfo (so a host whose cpu
// controller is mounted at cpu,cpuacct works), else the directories
// root/cpu and root/memory (a temp-dir tree); WithV1Mounts overrides both.
// A missing root, version or controller gives an error wrapping
// ErrNotSupported.
func NewFS(root string, opts ...FSOption) (*FS, error) {
	cfg := fsConfig{mountinfo: "/proc/self/mountinfo"}
	for _, o := range opts {
		o(&cfg)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("cgroup root %s: %w", root, err)
	}
	if st, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("cgroup root %s: %w: %w", abs, ErrNotSupported, err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("cgroup root %s: not a directory: %w", abs, ErrNotSupported)
	}
	magic := statfsMagic(abs)
	version := cfg.version
	if version == 0 {
		version = V1
		if magic == cgroup2SuperMagic || isFile(abs+"/cgroup.controllers") {
			version = V2
		}
	}
	f := &FS{root: abs, version: version}
	switch version {
	case V2:
		data, err := os.ReadFile(abs + "/cgroup.controllers")
		if err != nil {
			return nil, fmt.Errorf("cgroup v2 at %s: %w: %w", abs, ErrNotSupported, err)
		}
		have := strings.Fields(string(data))
		for _, c := range [...]string{"cpu", "memory"} {
			if !contains(have, c) {
				return nil, fmt.Errorf("cgroup v2 at %s: controller %s not available (cgroup.controllers: %q): %w",
					abs, c, strings.TrimSpace(string(data)), ErrNotSupported)
			}
		}
		f.cgroupfs = magic == cgroup2SuperMagic
	case V1:
		mounts := cfg.v1Mounts
		if mounts == nil {
			mounts = map[string]string{}
			if data, err := os.ReadFile(cfg.mountinfo); err == nil {
				mounts = parseMountInfo(string(data), abs)
			}
			for _, c := range [...]string{"cpu", "memory"} {
				if _, ok := mounts[c]; !ok && isDir(abs+"/"+c) {
					mounts[c] = abs + "/" + c
				}
			}
		}
		for _, c := range [...]string{"cpu", "memory"} {
			m, ok := mounts[c]
			if !ok || !isDir(m) {
				return nil, fmt.Errorf("cgroup v1 below %s: no %s hierarchy: %w", abs, c, ErrNotSupported)
			}
		}
		f.mounts = make(map[string]string, len(mounts))
		for c, m := range mounts {
			if a, err := filepath.Abs(m); err == nil {
				f.mounts[c] = a
			}
		}
		f.cgroupfs = statfsMagic(f.mounts["memory"]) == cgroupSuperMagic
	default:
		return nil, fmt.Errorf("cgroup version %d: %w", int(version), ErrNotSupported)
	}
	return f, nil
}

// forget drops what the FS remembers of the files of the cgroup at path
// and below it.
func (f *FS) forget(path string) {
	if f.version == V2 {
		f.known.forget(join(f.root, path))
		return
	}
	for _, m := range f.mounts {
		f.known.forget(join(m, path))
	}
}

func statfsMagic(dir string) int64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0
	}
	return int64(st.Type)
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// kernelErr returns the errno inside a *fs.PathError, which is what both
// containerd/cgroups packages return unwrapped; the cgroup path and file are
// added back by the caller, relative to the root, as every Manager does.
func kernelErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Exists reports whether the cgroup exists (on v1: in both the cpu and the
// memory hierarchy).
func (f *FS) Exists(path string) bool {
	if !f.made() {
		return false
	}
	if validatePath(path) != nil {
		return false
	}
	if f.version == V2 {
		return isDir(join(f.root, path))
	}
	return isDir(join(f.mounts["cpu"], path)) && isDir(join(f.mounts["memory"], path))
}

// Create makes the cgroup and any missing parent. On v2 it first enables
// the cpu and memory controllers in cgroup.subtree_control of every
// ancestor (the root included, the new cgroup itself not), so the new
// cgroup has cpu.max, cpu.weight and memory.max; a cgroup v2 with
// processes in it cannot enable controllers for children (EBUSY), so
// processes belong in leaves only. On v1 it makes the directory in the cpu
// and the memory hierarchy.
func (f *FS) Create(path string) error {
	if !f.made() {
		return fmt.Errorf("create %s: %w", path, errFSNotMade)
	}
	if err := validatePath(path); err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	f.forget(path)
	if f.version == V1 {
		return f.createV1(path)
	}
	parent := f.root
	for rest := path; rest != ""; {
		comp, next, _ := strings.Cut(rest, "/")
		if err := enableControllers(parent); err != nil {
			return fmt.Errorf("create %s: %w", path, err)
		}
		dir := parent + "/" + comp
		if err := os.Mkdir(dir, 0o755); err == nil {
			if f.afterMkdir != nil {
				if err := f.afterMkdir(dir); err != nil {
					return fmt.Errorf("create %s: %w", path, err)
				}
			}
		} else if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create %s: mkdir %s: %w", path, dir, kernelErr(err))
		}
		parent, rest = dir, next
	}
	return nil
}

// enableControllers makes sure cpu and memory are enabled in the
// cgroup.subtree_control of dir, writing only the missing ones.
func enableControllers(dir string) error {
	file := dir + "/cgroup.subtree_control"
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("read %s: %w", file, kernelErr(err))
	}
	var missing []string
	for _, c := range [...]string{"cpu", "memory"} {
		found := false
		for _, have := range strings.Fields(string(data)) {
			if strings.TrimPrefix(have, "+") == c {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, "+"+c)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if err := writeExisting(file, strings.Join(missing, " ")); err != nil {
		return fmt.Errorf("write %s %q: %w", file, strings.Join(missing, " "), kernelErr(err))
	}
	return nil
}

// writeExisting writes data to a file that must exist, the way cgroup files
// are written: no O_CREATE, so a missing file is ENOENT rather than a new
// ordinary file in a temp-dir tree.
func writeExisting(file, data string) error {
	fd, err := os.OpenFile(file, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = fd.WriteString(data)
	if cerr := fd.Close(); err == nil {
		err = cerr
	}
	return err
}

func (f *FS) createV1(path string) error {
	var fresh []string
	if f.afterMkdir != nil {
		for _, c := range [...]string{"cpu", "memory"} {
			dir := f.mounts[c]
			for rest := path; rest != ""; {
				comp, next, _ := strings.Cut(rest, "/")
				dir += "/" + comp
				if !isDir(dir) {
					fresh = append(fresh, dir)
				}
				rest = next
			}
		}
	}
	_, err := cgroup1.New(f.v1Path(path), &specs.LinuxResources{},
		cgroup1.WithHierarchy(f.v1Hierarchy("cpu", "memory")))
	if err != nil {
		return fmt.Errorf("create %s: %w", path, kernelErr(err))
	}
	for _, dir := range fresh {
		if err := f.afterMkdir(dir); err != nil {
			return fmt.Errorf("create %s: %w", path, err)
		}
	}
	return nil
}

// v1Root returns the root to give a containerd/cgroups v1 controller
// constructor (which appends the controller's name to it) and the prefix
// that makes a cgroup path land in mount. When the mount is not named after
// the controller (cpu,cpuacct), the prefix "/.." steps back out of the name
// the constructor appended.
func v1Root(controller, mount string) (root, prefix string) {
	if filepath.Base(mount) == controller {
		return filepath.Dir(mount), "/"
	}
	return mount, "/../"
}

// v1Hierarchy returns a cgroup1.Hierarchy of the named controllers' mounts.
func (f *FS) v1Hierarchy(controllers ...string) cgroup1.Hierarchy {
	subs := make([]cgroup1.Subsystem, 0, len(controllers))
	for _, c := range controllers {
		root, _ := v1Root(c, f.mounts[c])
		switch c {
		case "cpu":
			subs = append(subs, cgroup1.NewCpu(root))
		case "memory":
			subs = append(subs, cgroup1.NewMemory(root))
		}
	}
	return func() ([]cgroup1.Subsystem, error) { return subs, nil }
}

// v1Path returns the cgroup1.Path of path in each hierarchy.
func (f *FS) v1Path(path string) cgroup1.Path {
	return func(name cgroup1.Name) (string, error) {
		_, prefix := v1Root(string(name), f.mounts[string(name)])
		return prefix + path, nil
	}
}

// Delete removes the cgroup (on v1 from the memory and the cpu hierarchy).
// The kernel refuses (EBUSY) while the cgroup has children or processes; on
// a temp-dir tree FS refuses the same way, then removes the files.
func (f *FS) Delete(path string) error {
	if !f.made() {
		return fmt.Errorf("delete %s: %w", path, errFSNotMade)
	}
	if err := validatePath(path); err != nil {
		return fmt.Errorf("delete %s: %w", path, err)
	}
	if path == "" {
		return fmt.Errorf("delete the root cgroup: %w", syscall.EBUSY)
	}
	f.forget(path)
	if f.version == V2 {
		return f.removeDir(path, join(f.root, path))
	}
	// Check both hierarchies before removing from either, so that a refused
	// Delete leaves the cgroup whole.
	for _, c := range [...]string{"memory", "cpu"} {
		if err := busy(path, join(f.mounts[c], path)); err != nil {
			return err
		}
	}
	for _, c := range [...]string{"memory", "cpu"} {
		if err := f.removeDir(path, join(f.mounts[c], path)); err != nil {
			return err
		}
	}
	return nil
}

// busy returns an error wrapping EBUSY, as rmdir would, when the cgroup in
// dir has a child cgroup or a process.
func busy(path, dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("delete %s: %w", path, err)
	}
	for _, e := range entries {
		if e.IsDir() {
			return fmt.Errorf("delete %s: child cgroup %s: %w", path, e.Name(), syscall.EBUSY)
		}
	}
	if procs, err := os.ReadFile(dir + "/cgroup.procs"); err == nil && strings.TrimSpace(string(procs)) != "" {
		return fmt.Errorf("delete %s: has processes: %w", path, syscall.EBUSY)
	}
	return nil
}

func (f *FS) removeDir(path, dir string) error {
	if f.cgroupfs {
		if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("delete %s: rmdir %s: %w", path, dir, kernelErr(err))
		}
		return nil
	}
	if err := busy(path, dir); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("delete %s: %w", path, err)
	}
	for _, e := range entries {
		if err := os.Remove(dir + "/" + e.Name()); err != nil {
			return fmt.Errorf("delete %s: %w", path, err)
		}
	}
	if err := os.Remove(dir); err != nil {
		return fmt.Errorf("delete %s: %w", path, err)
	}
	return nil
}

// fileDir returns the directory that holds file of the cgroup at path.
func (f *FS) fileDir(path, file string) (string, error) {
	if f.version == V2 {
		return join(f.root, path), nil
	}
	m, ok := f.mounts[controllerOf(file)]
	if !ok {
		return "", fmt.Errorf("read %s/%s: no %s hierarchy: %w", path, file, controllerOf(file), ErrNotSupported)
	}
	return join(m, path), nil
}

// read returns the trimmed content of one file in dir. A missing file is
// ErrNotExist when its cgroup is missing too and ErrNotSupported otherwise
// (the controller is not enabled for the cgroup).
func read(dir, file string) (string, error) {
	data, err := os.ReadFile(dir + "/" + file)
	if err == nil {
		return strings.TrimSpace(string(data)), nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		if !isDir(dir) {
			return "", ErrNotExist
		}
		return "", ErrNotSupported
	}
	return "", kernelErr(err)
}

// ReadFile returns the trimmed content of one file of the cgroup. On v1
// the file is read from the hierarchy of the controller its name starts
// with (cgroup.procs from the cpu hierarchy).
func (f *FS) ReadFile(path, file string) (string, error) {
	if !f.made() {
		return "", fmt.Errorf("read %s/%s: %w", path, file, errFSNotMade)
	}
	if err := validatePath(path); err != nil {
		return "", fmt.Errorf("read %s/%s: %w", path, file, err)
	}
	if err := validateFile(file); err != nil {
		return "", fmt.Errorf("read %s/%s: %w", path, file, err)
	}
	dir, err := f.fileDir(path, file)
	if err != nil {
		return "", err
	}
	s, err := read(dir, file)
	if err != nil {
		return "", fmt.Errorf("read %s/%s: %w", path, file, err)
	}
	return s, nil
}

// MemoryUsage returns memory.current (v2) or memory.usage_in_bytes (v1).
func (f *FS) MemoryUsage(path string) (int64, error) {
	if !f.made() {
		return 0, fmt.Errorf("memory usage of %s: %w", path, errFSNotMade)
	}
	file := fileMemoryCurrent
	if f.version == V1 {
		file = fileMemoryUsage
	}
	s, err := f.ReadFile(path, file)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, parseErr(path, file, s, err)
	}
	return n, nil
}

// Get reads the cgroup's CPU and memory values back. A file the cgroup does
// not have, or an empty one, leaves its field nil; a missing cgroup is
// ErrNotExist. Content that does not parse is an error wrapping errParse;
// the fields read before it are returned with it.
func (f *FS) Get(path string) (Values, error) {
	if !f.made() {
		return Values{}, fmt.Errorf("get %s: %w", path, errFSNotMade)
	}
	if err := validatePath(path); err != nil {
		return Values{}, fmt.Errorf("get %s: %w", path, err)
	}
	// No stat first: a missing cgroup shows in the first read, which
	// tells a missing cgroup from a missing file. What is read is
	// remembered for the Sets that follow (fileCache).
	v, err := parseValues(f.version, func(file string) (string, bool, error) {
		dir, err := f.fileDir(path, file)
		if err != nil {
			return "", false, err
		}
		s, err := read(dir, file)
		if errors.Is(err, ErrNotSupported) {
			return "", false, nil
		}
		if errors.Is(err, ErrNotExist) {
			return "", false, fmt.Errorf("get %s: %w", path, ErrNotExist)
		}
		if err != nil {
			return "", false, fmt.Errorf("read %s/%s: %w", path, file, err)
		}
		f.known.put(dir, file, s)
		return s, s != "", nil
	})
	var ce *contentError
	if errors.As(err, &ce) {
		return v, parseErr(path, ce.file, ce.content, ce.err)
	}
	return v, err
}

// Set writes the fields of v that are set and differ from the files'
// current content: memory first, then CPU (v2: cpu.weight, cpu.max; v1:
// cpu.shares, cpu.cfs_period_us, cpu.cfs_quota_us). Unlimited is written as
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
func (f *FS) Set(path string, v Values) ([]Write, error) {
	if !f.made() {
		return nil, fmt.Errorf("set %s: %w", path, errFSNotMade)
	}
	if err := validatePath(path); err != nil {
		return nil, fmt.Errorf("set %s: %w", path, err)
	}
	ws, err := f.set(path, v)
	if err != nil && len(ws) == 1 && errors.Is(ws[0].Err, ErrNotExist) {
		// The cgroup is missing: nothing was written.
		return nil, fmt.Errorf("set %s: %w", path, ErrNotExist)
	}
	return ws, err
}

// set is Set on a valid path. It makes no system call beyond the writes
// and the reads of files whose content the last Get did not leave it.
func (f *FS) set(path string, v Values) ([]Write, error) {
	s := setter{path: path, version: f.version, known: &f.known}
	if f.version == V2 {
		dir := join(f.root, path)
		mgr, err := cgroup2.Load("/"+path, cgroup2.WithMountpoint(f.root))
		if err != nil {
			return nil, fmt.Errorf("set %s: %w: %w", path, ErrInvalidPath, err)
		}
		if v.MemoryLimit != nil {
			limit := v.MemoryLimit
			holders := f.hasHolders()
			before := -1
			if holders {
				before = oomKills(dir)
			}
			s.one(dir, fileMemoryMax, formatMax(*limit), func() error {
				if *limit == Unlimited {
					return writeExisting(dir+"/"+fileMemoryMax, maxToken)
				}
				return mgr.Update(&cgroup2.Resources{Memory: &cgroup2.Memory{Max: limit}})
			})
			if holders && s.err == nil {
				f.reapOOMKills(path, before)
			}
		}
		if v.CPUWeight != nil {
			s.one(dir, fileCPUWeight, strconv.FormatUint(*v.CPUWeight, 10), func() error {
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
		s.one(mem, fileMemoryLimit, strconv.FormatInt(*v.MemoryLimit, 10), func() error {
			return cgroup1.NewMemory(root).Update(prefix+path, r)
		})
	}
	writeCPU := func(file, content string) func() error {
		return func() error { return os.WriteFile(cpu+"/"+file, []byte(content), 0) }
	}
	if v.CPUShares != nil {
		c := strconv.FormatUint(*v.CPUShares, 10)
		s.one(cpu, fileCPUShares, c, writeCPU(fileCPUShares, c))
	}
	if v.CPUPeriod != nil {
		c := strconv.FormatUint(*v.CPUPeriod, 10)
		s.one(cpu, fileCFSPeriod, c, writeCPU(fileCFSPeriod, c))
	}
	if v.CPUQuota != nil {
		c := strconv.FormatInt(*v.CPUQuota, 10)
		s.one(cpu, fileCFSQuota, c, writeCPU(fileCFSQuota, c))
	}
	return s.writes, s.err
}

// setter carries one Set: the writes made so far and the first error, after
// which every further write is skipped.
type setter struct {
	path    string
	version Version // for reading writes back as the kernel would (same)
	writes  []Write
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
			err = ErrNotExist
		}
		s.fail(file, old, want, err)
		return
	}
	s.writes = append(s.writes, Write{Path: s.path, File: file, Old: old, New: want})
}

func (s *setter) fail(file, old, want string, err error) {
	s.writes = append(s.writes, Write{Path: s.path, File: file, Old: old, New: want, Err: err})
	s.err = fmt.Errorf("write %s/%s: %w", s.path, file, err)
}

// cpuMax writes cpu.max from v's quota and period, keeping the current
// value of the one v leaves nil. cgroup2.NewCPUMax writes "max" only for a
// nil quota, so Unlimited becomes nil here.
func (s *setter) cpuMax(dir string, v Values, mgr *cgroup2.Manager) {
	if s.err != nil {
		return
	}
	old, err := s.current(dir, fileCPUMax)
	if err != nil {
		s.fail(fileCPUMax, old, "", err)
		return
	}
	quota, period, err := parseCPUMax(old)
	if err != nil {
		s.fail(fileCPUMax, old, "", fmt.Errorf("%w %q: %w", errParse, old, err))
		return
	}
	if v.CPUQuota != nil {
		quota = *v.CPUQuota
	}
	if v.CPUPeriod != nil {
		period = *v.CPUPeriod
	}
	want := formatCPUMax(quota, period)
	s.apply(dir, fileCPUMax, old, want, func() error {
		var q *int64
		if quota != Unlimited {
			q = &quota
		}
		return mgr.Update(&cgroup2.Resources{CPU: &cgroup2.CPU{Max: cgroup2.NewCPUMax(q, &period)}})
	})
}

package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// FS is a Manager over a real cgroup filesystem: the unified hierarchy
// (cgroup v2) mounted at a root directory, or the per-controller hierarchies
// of cgroup v1 (cpu and memory) found below a root directory. It writes
// through github.com/containerd/cgroups/v3 (cgroup2.Manager.Update,
// cgroup1.Cgroup.Update) and reads values back itself, because that library
// has no reader for cpu.max or cpu.weight.
//
// The root may also be an ordinary directory laid out like a cgroup
// filesystem (a temp-dir tree with its files pre-created), which is how the
// tests exercise both versions on any host. The kernel's own checks (EBUSY,
// EINVAL, ERANGE) then do not apply.
//
// FS keeps no state besides its configuration, so it is safe for concurrent
// use; two writers of one cgroup race as they would on the kernel.
//
// FS is implemented on Linux only; elsewhere NewFS returns ErrNotSupported.
type FS struct {
	root    string
	version Version
	// mounts maps a v1 controller name ("cpu", "memory", "cpuacct", ...) to
	// the directory of its hierarchy. It is nil on v2.
	mounts map[string]string
	// cgroupfs is true when the root is a kernel cgroup filesystem rather
	// than a tree of ordinary files; it changes only how Delete removes a
	// directory.
	cgroupfs bool
	// afterMkdir, when set, runs after Create makes a directory. Tests use it
	// to fill a temp-dir tree with the files the kernel would show.
	afterMkdir func(dir string) error
	// usage holds the processes SetUsage keeps in cgroups.
	usage usageState
	// known is what FS last read from the files Get reads, so that the
	// Sets that follow compare with it instead of reading each file again.
	known fileCache
}

// fileCache remembers file contents by directory and file name. An entry
// is taken out when a Set uses it (the write changes the file, and the
// kernel may round what was written), and dropped with its cgroup.
type fileCache struct {
	mu sync.Mutex
	m  map[fileKey]string
}

type fileKey struct{ dir, file string }

func (c *fileCache) put(dir, file, content string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[fileKey]string{}
	}
	c.m[fileKey{dir, file}] = content
}

// take returns and forgets the content remembered for dir/file.
func (c *fileCache) take(dir, file string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := fileKey{dir, file}
	s, ok := c.m[k]
	if ok {
		delete(c.m, k)
	}
	return s, ok
}

// forget drops what is remembered of the files in dir and below it.
func (c *fileCache) forget(dir string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.m {
		if k.dir == dir || strings.HasPrefix(k.dir, dir+"/") {
			delete(c.m, k)
		}
	}
}

// FSOption configures NewFS.
type FSOption func(*fsConfig)

type fsConfig struct {
	version   Version
	v1Mounts  map[string]string
	mountinfo string
}

// WithVersion makes NewFS use cgroup version v instead of detecting it from
// the root. NewFS still fails with ErrNotSupported when the root does not
// offer that version with the cpu and memory controllers.
func WithVersion(v Version) FSOption {
	return func(c *fsConfig) { c.version = v }
}

// WithV1Mounts gives the directories of the cgroup v1 hierarchies, by
// controller name ("cpu", "memory", and optionally others such as
// "cpuacct" for ReadFile), instead of looking them up in
// /proc/self/mountinfo and below the root. Paths are then relative to these
// directories. It has no effect on cgroup v2.
func WithV1Mounts(mounts map[string]string) FSOption {
	return func(c *fsConfig) {
		c.v1Mounts = make(map[string]string, len(mounts))
		for k, v := range mounts {
			c.v1Mounts[k] = v
		}
	}
}

// withMountInfo makes NewFS read the mount table from file instead of
// /proc/self/mountinfo; tests use it.
func withMountInfo(file string) FSOption {
	return func(c *fsConfig) { c.mountinfo = file }
}

// errFSNotMade is what an FS that NewFS did not make (nil, or the zero FS,
// whose root "" would be the working directory) answers every call that
// has an error result with: it must not touch the files below whatever
// directory the process runs in.
var errFSNotMade = errors.New("cgroup: FS not made by NewFS")

// made reports whether NewFS made f: it sets the absolute root, which is
// never "", and never changes it.
func (f *FS) made() bool { return f != nil && f.root != "" }

// Version reports the cgroup version of the hierarchy the manager writes
// (0 for an FS that NewFS did not make).
func (f *FS) Version() Version {
	if !f.made() {
		return 0
	}
	return f.version
}

// Root returns the absolute root directory the manager was built on ("" for
// an FS that NewFS did not make).
func (f *FS) Root() string {
	if !f.made() {
		return ""
	}
	return f.root
}

// Dir returns the absolute directory of the cgroup at path for controller
// ("cpu" or "memory"; on v2 the controller is ignored). It validates path
// like every other method.
func (f *FS) Dir(path, controller string) (string, error) {
	if !f.made() {
		return "", fmt.Errorf("dir %s: %w", path, errFSNotMade)
	}
	if err := validatePath(path); err != nil {
		return "", err
	}
	if f.version == V2 {
		return join(f.root, path), nil
	}
	m, ok := f.mounts[controller]
	if !ok {
		return "", fmt.Errorf("cgroup v1 controller %q: %w", controller, ErrNotSupported)
	}
	return join(m, path), nil
}

// join returns the directory of the cgroup at path below dir.
func join(dir, path string) string {
	if path == "" {
		return dir
	}
	return dir + "/" + path
}

// validatePath checks a cgroup path relative to a manager's root with
// cgconfig.ValidatePath's rule: "" for the root itself, else "/"
// separated, no leading or trailing "/", no empty, "." or ".." component,
// no component longer than a file name may be, and no control character.
// Every pod UID and container ID that reaches a file path passes through
// here, so no write can land outside the root.
func validatePath(path string) error {
	return cgconfig.ValidatePath(path)
}

// validateFile checks the name of one file of a cgroup.
func validateFile(file string) error {
	if file == "" || file == "." || file == ".." || strings.ContainsAny(file, "/\x00\n") {
		return fmt.Errorf("%w: file name %q", ErrInvalidPath, file)
	}
	return nil
}

// same reports whether a file whose content is old already holds what
// writing want would leave in it, as the kernel reads a write back
// (canonical), so that Set skips a write that would change nothing, as
// SimKernel does. Two memory limits keep FS's own reading, which
// predates the shared formats and which Set's callers see:
//   - on v1, a wanted limit Get would read as Unlimited (any negative one)
//     matches any old content Get reads as Unlimited, such as the "-1"
//     that a temp-dir tree holds after -1 was written;
//   - on v2, a wanted limit at or above the page counter maximum is
//     compared as that number, not as the "max" the kernel shows for it.
func same(version Version, file, old, want string) bool {
	if old == want {
		return true
	}
	switch file {
	case fileMemoryLimit:
		if w, err := parseV1Limit(want); err == nil && w == Unlimited {
			o, err := parseV1Limit(old)
			return err == nil && o == Unlimited
		}
	case fileMemoryMax:
		if w, err := strconv.ParseInt(want, 10, 64); err == nil && w >= cgconfig.V1UnlimitedMemory {
			return old == strconv.FormatInt(cgconfig.V1UnlimitedMemory, 10)
		}
	}
	c, err := canonical(version, file, want, old)
	return err == nil && c == old
}

// errParse marks content the manager could not parse.
var errParse = errors.New("unexpected content")

func parseErr(path, file, content string, err error) error {
	return fmt.Errorf("read %s/%s: %w %q: %w", path, file, errParse, content, err)
}

// parseMountInfo returns the cgroup v1 hierarchies of a mount table (the
// content of /proc/self/mountinfo) whose mount point is a direct child of
// root, by controller name. A hierarchy that carries several controllers
// (cpu,cpuacct) appears under each of them; named hierarchies
// (name=systemd) are left out.
func parseMountInfo(content, root string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(content, "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		fields := strings.Fields(pre)
		tail := strings.Fields(post)
		if len(fields) < 5 || len(tail) < 3 || tail[0] != "cgroup" {
			continue
		}
		mnt := unescapeMount(fields[4])
		i := strings.LastIndexByte(mnt, '/')
		if i < 0 || (mnt[:i] != root && !(i == 0 && root == "/")) {
			continue
		}
		for _, opt := range strings.Split(tail[2], ",") {
			if opt == "rw" || opt == "ro" || strings.Contains(opt, "=") {
				continue
			}
			if _, dup := out[opt]; !dup {
				out[opt] = mnt
			}
		}
	}
	return out
}

// Mounts returns the mount points of every cgroup hierarchy (v1, named
// and v2) at or below root, from /proc/self/mountinfo: a runtime creates a
// pod's cgroups in every v1 hierarchy, not only cpu and memory, so a
// cleanup must visit each.
func Mounts(root string) ([]string, error) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("cgroup mounts: %w", err)
	}
	return mountsBelow(string(data), filepath.Clean(root)), nil
}

// mountsBelow is Mounts on a mount table's content.
func mountsBelow(content, root string) []string {
	var out []string
	for _, line := range strings.Split(content, "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if !ok || len(fields) < 5 || len(tail) == 0 || (tail[0] != "cgroup" && tail[0] != "cgroup2") {
			continue
		}
		if m := unescapeMount(fields[4]); m == root || strings.HasPrefix(m, root+"/") {
			out = append(out, m)
		}
	}
	return out
}

// unescapeMount undoes the octal escapes (\040 for a space) of a mountinfo
// path field.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// controllerOf returns the v1 controller whose hierarchy holds file: the
// part of the name before the first dot ("memory.stat" → "memory"). Files
// of no controller (cgroup.procs, tasks) are read from the cpu hierarchy.
func controllerOf(file string) string {
	c, _, ok := strings.Cut(file, ".")
	if !ok || c == "cgroup" {
		return "cpu"
	}
	return c
}

var _ Manager = (*FS)(nil)

package cgroupfs

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// FS is a cgroup.Manager over a real cgroup filesystem: the unified hierarchy
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
// FS is implemented on Linux only; elsewhere New returns cgroup.ErrNotSupported.
type FS struct {
	root    string
	version cgroup.Version
	// mounts maps a v1 controller name ("cpu", "memory", "cpuacct", ...) to
	// the directory of its hierarchy. It is nil on v2.
	mounts map[string]string
	// kernelFS is true when the root is a kernel cgroup filesystem rather
	// than a tree of ordinary files; it changes only how Delete removes a
	// directory.
	kernelFS bool
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

// errNotMade is what an FS that New did not make (nil, or the zero FS,
// whose root "" would be the working directory) answers every call that
// has an error result with: it must not touch the files below whatever
// directory the process runs in.
var errNotMade = errors.New("cgroupfs: FS not made by New")

// made reports whether New made f: it sets the absolute root, which is
// never "", and never changes it.
func (f *FS) made() bool { return f != nil && f.root != "" }

// Version reports the cgroup version of the hierarchy the manager writes
// (0 for an FS that New did not make).
func (f *FS) Version() cgroup.Version {
	if !f.made() {
		return 0
	}
	return f.version
}

// Root returns the absolute root directory the manager was built on ("" for
// an FS that New did not make).
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
		return "", fmt.Errorf("dir %s: %w", path, errNotMade)
	}
	if err := cgconfig.ValidatePath(path); err != nil {
		return "", err
	}
	if f.version == cgroup.V2 {
		return join(f.root, path), nil
	}
	m, ok := f.mounts[controller]
	if !ok {
		return "", fmt.Errorf("cgroup v1 controller %q: %w", controller, cgroup.ErrNotSupported)
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

// validateFile checks the name of one file of a cgroup.
func validateFile(file string) error {
	if file == "" || file == "." || file == ".." || strings.ContainsAny(file, "/\x00\n") {
		return fmt.Errorf("%w: file name %q", cgroup.ErrInvalidPath, file)
	}
	return nil
}

// same reports whether a file whose content is old already holds what
// writing want would leave in it, as the kernel reads a write back
// (cgroup.Canonical), so that Set skips a write that would change nothing, as
// cgroup.SimKernel does. Two memory limits keep FS's own reading, which
// predates the shared formats and which Set's callers see:
//   - on v1, a wanted limit Get would read as cgroup.Unlimited (any negative one)
//     matches any old content Get reads as cgroup.Unlimited, such as the "-1"
//     that a temp-dir tree holds after -1 was written;
//   - on v2, a wanted limit at or above the page counter maximum is
//     compared as that number, not as the "max" the kernel shows for it.
func same(version cgroup.Version, file, old, want string) bool {
	if old == want {
		return true
	}
	switch file {
	case cgroup.FileMemoryLimit:
		if w, err := cgroup.ParseV1Limit(want); err == nil && w == cgroup.Unlimited {
			o, err := cgroup.ParseV1Limit(old)
			return err == nil && o == cgroup.Unlimited
		}
	case cgroup.FileMemoryMax:
		if w, err := strconv.ParseInt(want, 10, 64); err == nil && w >= cgconfig.V1UnlimitedMemory {
			return old == strconv.FormatInt(cgconfig.V1UnlimitedMemory, 10)
		}
	}
	c, err := cgroup.Canonical(version, file, want, old)
	return err == nil && c == old
}

// errParse marks content the manager could not parse.
var errParse = errors.New("unexpected content")

func parseErr(path, file, content string, err error) error {
	return fmt.Errorf("read %s/%s: %w %q: %w", path, file, errParse, content, err)
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

var _ cgroup.Manager = (*FS)(nil)

package cgroup

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// Limits of the simulated kernel beyond the file formats (fileformat.go):
// the Linux values (kernel/sched/core.c, include/uapi/linux/limits.h) that
// a write or a mkdir can run into, and the simulated host's size.
const (
	// simBWShift is the fixed-point shift of the kernel's bandwidth ratios.
	simBWShift = 20
	// simMaxNameLen is the longest cgroup directory name (NAME_MAX).
	simMaxNameLen = 255
	// simDefaultHostMemory is the memory an unlimited hierarchy can use when
	// WithHostMemory is not given: 64Gi, the scenario runner's default
	// node capacity.
	simDefaultHostMemory = 64 << 30
)

// simErrMissing is the error for a cgroup that does not exist: ErrNotExist
// for callers of this package, ENOENT as the kernel would say it.
var simErrMissing = fmt.Errorf("%w (%w)", ErrNotExist, syscall.ENOENT)

// simErrNoFile is the error for a file the cgroup does not have, such as a
// cgroup v1 file on a v2 hierarchy.
var simErrNoFile = fmt.Errorf("%w (%w)", ErrNotSupported, syscall.ENOENT)

// SimKernel is a simulated Linux kernel cgroup hierarchy, held in memory,
// that implements Manager the way the kernel would answer: it keeps each cgroup's files by name with the
// kernel's content, validates and rounds values as the kernel does, and
// models memory usage so that lowering a limit below usage fails with EBUSY
// on cgroup v1 and OOM-kills on cgroup v2. Tests and simulations share it.
//
// The root cgroup has the path "" and always exists. SimKernel is safe for
// concurrent use: one mutex guards the hierarchy, and OnOOMKill callbacks
// run after it is released.
type SimKernel struct {
	mu         sync.Mutex
	version    Version
	hostMemory int64
	nodes      map[string]*simNode
	writes     []Write
	writeLimit int
	oomFns     []func(path string)
}

// simNode is one cgroup of the model.
type simNode struct {
	path     string
	parent   *simNode
	children map[string]*simNode // by path
	files    map[string]string   // trimmed content by file name
	own      int64               // memory charged to this cgroup itself
	hier     int64               // own plus every descendant's own
	peak     int64               // highest hier seen (v1 memory.max_usage_in_bytes)
	limit    int64               // memory limit in bytes as the kernel holds it
	oom      int64               // v2 memory.events "oom"
	oomKill  int64               // v2 memory.events / v1 memory.oom_control "oom_kill"
}

// SimKernelOption configures a SimKernel.
type SimKernelOption func(*SimKernel)

// WithWriteLimit keeps the latest n writes for Writes (0: DefaultLogLimit;
// a negative n keeps every write).
func WithWriteLimit(n int) SimKernelOption {
	return func(m *SimKernel) { m.writeLimit = logLimit(n) }
}

// WithHostMemory sets the memory of the simulated host in bytes: what a
// hierarchy without limits can use before the host runs out and the model
// OOM-kills (a global OOM). It defaults to 64Gi; a value <= 0 keeps the
// default.
func WithHostMemory(bytes int64) SimKernelOption {
	return func(m *SimKernel) {
		if bytes > 0 {
			m.hostMemory = bytes
		}
	}
}

// NewSimKernel returns a simulated hierarchy of the given cgroup version that
// holds only the root cgroup. It panics on a version other than V1 or V2,
// which is a programming error.
func NewSimKernel(version Version, opts ...SimKernelOption) *SimKernel {
	if version != V1 && version != V2 {
		panic(fmt.Sprintf("cgroup.NewSimKernel: unknown cgroup version %d", int(version)))
	}
	m := &SimKernel{
		version:    version,
		hostMemory: simDefaultHostMemory,
		nodes:      make(map[string]*simNode),
		writeLimit: DefaultLogLimit,
	}
	for _, opt := range opts {
		opt(m)
	}
	m.nodes[""] = m.newNode("", nil)
	return m
}

// newNode makes a cgroup with the kernel's default files for m's version.
func (m *SimKernel) newNode(path string, parent *simNode) *simNode {
	n := &simNode{
		path:     path,
		parent:   parent,
		children: make(map[string]*simNode),
		limit:    cgconfig.V1UnlimitedMemory,
	}
	if m.version == V2 {
		n.files = map[string]string{
			fileCPUWeight:     "100",
			fileCPUMax:        defaultCPUMax,
			fileMemoryMax:     maxToken,
			fileMemoryCurrent: "0",
		}
	} else {
		n.files = map[string]string{
			fileCPUShares:      "1024",
			fileCFSPeriod:      defaultCFSPeriod,
			fileCFSQuota:       unlimitedV1,
			fileMemoryLimit:    strconv.FormatInt(cgconfig.V1UnlimitedMemory, 10),
			fileMemoryUsage:    "0",
			fileMemoryMaxUsage: "0",
		}
	}
	n.renderEvents(m.version)
	return n
}

// renderEvents refreshes the file that counts OOM events: memory.events on
// v2 (in the kernel's field order), memory.oom_control on v1.
func (n *simNode) renderEvents(version Version) {
	if version == V2 {
		n.files[fileMemoryEvents] = "low 0\nhigh 0\nmax 0\noom " + strconv.FormatInt(n.oom, 10) +
			"\noom_kill " + strconv.FormatInt(n.oomKill, 10) + "\noom_group_kill 0"
		return
	}
	n.files[fileOOMControl] = "oom_kill_disable 0\nunder_oom 0\noom_kill " + strconv.FormatInt(n.oomKill, 10)
}

// simCheckPath reports whether path names a cgroup below the root: "" for
// the root itself, otherwise "/"-separated names that are not empty, ".",
// "..", longer than NAME_MAX or hold a NUL, with no leading or trailing "/".
func simCheckPath(path string) error {
	if path == "" {
		return nil
	}
	rest := path
	for {
		name := rest
		i := strings.IndexByte(rest, '/')
		if i >= 0 {
			name = rest[:i]
		}
		if name == "" || name == "." || name == ".." || len(name) > simMaxNameLen || strings.IndexByte(name, 0) >= 0 {
			return fmt.Errorf("cgroup path %q: %w", path, ErrInvalidPath)
		}
		if i < 0 {
			return nil
		}
		rest = rest[i+1:]
	}
}

// simParent returns the path of a cgroup's parent ("" for the root's
// children).
func simParent(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[:i]
	}
	return ""
}

// Version reports the hierarchy's cgroup version.
func (m *SimKernel) Version() Version { return m.version }

// Create makes the cgroup and any missing parent with the kernel's default
// files. Creating a cgroup that exists is not an error.
func (m *SimKernel) Create(path string) error {
	if err := simCheckPath(path); err != nil {
		return fmt.Errorf("create: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ensure(path)
	return nil
}

// ensure returns the cgroup at path, creating it and its parents.
func (m *SimKernel) ensure(path string) *simNode {
	if n, ok := m.nodes[path]; ok {
		return n
	}
	parent := m.ensure(simParent(path))
	n := m.newNode(path, parent)
	parent.children[path] = n
	m.nodes[path] = n
	return n
}

// Delete removes the cgroup. Like rmdir on a cgroup it fails with EBUSY
// while the cgroup has children or memory charged to it (processes), and
// for the root. Deleting a cgroup that does not exist is not an error.
func (m *SimKernel) Delete(path string) error {
	if err := simCheckPath(path); err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.nodes[path]
	if !ok {
		return nil
	}
	if n.parent == nil || len(n.children) > 0 || n.own > 0 {
		return fmt.Errorf("delete %s: %w", path, syscall.EBUSY)
	}
	delete(n.parent.children, path)
	delete(m.nodes, path)
	return nil
}

// Exists reports whether the cgroup exists; an invalid path does not.
func (m *SimKernel) Exists(path string) bool {
	if simCheckPath(path) != nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.nodes[path]
	return ok
}

// lookup returns the cgroup at path or an error that names op and path.
// The caller holds m.mu.
func (m *SimKernel) lookup(op, path string) (*simNode, error) {
	if err := simCheckPath(path); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	n, ok := m.nodes[path]
	if !ok {
		return nil, fmt.Errorf("%s %s: %w", op, path, simErrMissing)
	}
	return n, nil
}

// Get reads the cgroup's CPU and memory values back from its files. On v1
// a quota of -1 and a memory limit at or above the page counter maximum
// are Unlimited; on v2 "max" is.
func (m *SimKernel) Get(path string) (Values, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup("get", path)
	if err != nil {
		return Values{}, err
	}
	v, err := parseValues(m.version, func(file string) (string, bool, error) {
		s, ok := n.files[file]
		return s, ok, nil
	})
	if err != nil {
		return Values{}, fmt.Errorf("get %s: %w", path, err)
	}
	return v, nil
}

// Set writes the fields of v that are set and whose content differs from
// what the files hold, in Manager's order, and stops at the first write the
// kernel model rejects. Fields of the other cgroup version (CPUShares on
// v2, CPUWeight on v1) are ignored. Unlimited is written as "max" on v2 and
// as -1 on v1. It returns the writes made, the failed one last with Err
// set, and records every attempted write for Writes (the latest are kept).
//
// Kernel behaviour: v2 cpu.weight outside 1..10000 fails with ERANGE; a
// CFS quota below 1000 µs or a period outside 1000..1000000 µs with EINVAL;
// v1 cpu.shares is clamped to [2, 262144]; memory limits are rounded down
// to whole pages. On v1 a CFS bandwidth (quota/period) above an ancestor's,
// or below a descendant's, fails with EINVAL, and a memory limit below the
// cgroup's usage fails with EBUSY and keeps the old limit. On v2 a memory
// limit below usage is written and then the model OOM-kills (see
// OnOOMKill).
func (m *SimKernel) Set(path string, v Values) ([]Write, error) {
	m.mu.Lock()
	n, err := m.lookup("set", path)
	if err != nil {
		m.mu.Unlock()
		return nil, err
	}
	plan, count := planSet(m.version, v, func(file string) (string, bool) {
		s, ok := n.files[file]
		return s, ok
	})
	var writes []Write
	var killed []string
	var failed error
	for _, w := range plan[:count] {
		old := n.files[w.file]
		canon, err := canonical(m.version, w.file, w.content, old)
		if err == nil && canon == old {
			continue
		}
		if err == nil {
			killed, err = m.apply(n, w.file, canon, killed)
		}
		rec := Write{Path: path, File: w.file, Old: old, New: w.content, Err: err}
		m.writes = appendBounded(m.writes, m.writeLimit, rec)
		writes = append(writes, rec)
		if err != nil {
			failed = fmt.Errorf("write %s/%s: %w", path, w.file, err)
			break
		}
	}
	fns := m.oomFns
	m.mu.Unlock()
	notify(fns, killed)
	return writes, failed
}

// apply stores a canonical value in a cgroup file after the checks that
// depend on the rest of the hierarchy, and OOM-kills on v2 when a memory
// limit falls below usage. It appends the paths of killed cgroups to
// killed. The caller holds m.mu.
func (m *SimKernel) apply(n *simNode, file, canon string, killed []string) ([]string, error) {
	switch file {
	case fileMemoryLimit:
		l, _ := strconv.ParseInt(canon, 10, 64)
		if n.hier > l {
			return killed, syscall.EBUSY
		}
		n.files[file] = canon
		n.limit = l
	case fileMemoryMax:
		l := cgconfig.V1UnlimitedMemory
		if canon != maxToken {
			l, _ = strconv.ParseInt(canon, 10, 64)
		}
		n.files[file] = canon
		n.limit = l
		killed = m.resolveOOM(n, nil, killed)
	case fileCFSQuota, fileCFSPeriod:
		quota, period := simV1Bandwidth(n)
		if file == fileCFSQuota {
			quota, _ = strconv.ParseInt(canon, 10, 64)
		} else {
			period, _ = strconv.ParseUint(canon, 10, 64)
		}
		if err := simCheckV1Bandwidth(n, quota, period); err != nil {
			return killed, err
		}
		n.files[file] = canon
	default:
		n.files[file] = canon
	}
	return killed, nil
}

// simV1Bandwidth returns a v1 cgroup's CFS quota (-1 for none) and period.
func simV1Bandwidth(n *simNode) (int64, uint64) {
	q, err := parseV1Quota(n.files[fileCFSQuota])
	if err != nil {
		q = Unlimited
	}
	p, err := strconv.ParseUint(n.files[fileCFSPeriod], 10, 64)
	if err != nil {
		p = cgconfig.QuotaPeriod
	}
	return q, p
}

// simRatio is the kernel's normalised CFS bandwidth (to_ratio): quota per
// period in 1/2^20 units, and false for no quota.
func simRatio(quota int64, period uint64) (uint64, bool) {
	if quota < 0 || period == 0 {
		return 0, false
	}
	return uint64(quota) << simBWShift / period, true
}

// simCheckV1Bandwidth is the cgroup v1 rule of tg_cfs_schedulable_down: a
// cgroup's bandwidth may not exceed the nearest limited ancestor's, so a
// new quota or period for n fails with EINVAL if it would put n above an
// ancestor or below a limited descendant. (cgroup v2 takes the minimum
// instead and never fails.)
func simCheckV1Bandwidth(n *simNode, quota int64, period uint64) error {
	var parent uint64
	limited := false
	for a := n.parent; a != nil; a = a.parent {
		if parent, limited = simRatio(simV1Bandwidth(a)); limited {
			break
		}
	}
	own, ownLimited := simRatio(quota, period)
	if ownLimited {
		if limited && own > parent {
			return syscall.EINVAL
		}
		parent, limited = own, true
	}
	return simCheckBelow(n, parent, limited)
}

// simCheckBelow checks n's descendants against the bandwidth they inherit.
func simCheckBelow(n *simNode, inherited uint64, limited bool) error {
	for _, c := range n.children {
		r, ok := simRatio(simV1Bandwidth(c))
		eff, effLimited := inherited, limited
		if ok {
			if limited && r > inherited {
				return syscall.EINVAL
			}
			eff, effLimited = r, true
		}
		if err := simCheckBelow(c, eff, effLimited); err != nil {
			return err
		}
	}
	return nil
}

// effLimit is the memory a cgroup may use: its limit, and for the root
// also the host's memory.
func (m *SimKernel) effLimit(n *simNode) int64 {
	if n.parent == nil {
		return min(n.limit, m.hostMemory)
	}
	return n.limit
}

// resolveOOM OOM-kills until no cgroup from n up to the root uses more
// than its limit, always in the lowest cgroup over its limit, as a charge
// that fails at that level would. charged is the cgroup whose usage grew
// (nil for a limit write); on v1 it is the victim, as the task that
// allocates is the one the v1 OOM killer meets. It appends the killed
// cgroups' paths to killed. The caller holds m.mu.
func (m *SimKernel) resolveOOM(n, charged *simNode, killed []string) []string {
	for {
		var domain *simNode
		for a := n; a != nil; a = a.parent {
			if a.hier > m.effLimit(a) {
				domain = a
				break
			}
		}
		if domain == nil {
			return killed
		}
		victim := charged
		if m.version != V1 || victim == nil || victim.own == 0 || !simWithin(victim, domain) {
			victim = simLargest(domain, nil)
		}
		if victim == nil || victim.own == 0 {
			return killed
		}
		m.addUsage(victim, -victim.own)
		if m.version == V2 {
			// memory.events counts hierarchically, up to but not in the
			// root: "oom" where the limit was hit, "oom_kill" where the
			// killed task lived.
			for a := domain; a != nil && a.parent != nil; a = a.parent {
				a.oom++
				a.renderEvents(m.version)
			}
			for a := victim; a != nil && a.parent != nil; a = a.parent {
				a.oomKill++
				a.renderEvents(m.version)
			}
		} else {
			// memory.oom_control counts only the victim's own kills.
			victim.oomKill++
			victim.renderEvents(m.version)
		}
		killed = append(killed, victim.path)
	}
}

// simWithin reports whether n is root or one of its descendants.
func simWithin(n, root *simNode) bool {
	for a := n; a != nil; a = a.parent {
		if a == root {
			return true
		}
	}
	return false
}

// simLargest returns the cgroup in n's subtree with the largest own usage,
// the first by path on a tie; best is the best found so far.
func simLargest(n, best *simNode) *simNode {
	if best == nil || n.own > best.own || (n.own == best.own && n.path < best.path) {
		best = n
	}
	for _, c := range n.children {
		best = simLargest(c, best)
	}
	return best
}

// addUsage changes a cgroup's own usage by delta and keeps the
// hierarchical usage files of it and its ancestors current. The caller
// holds m.mu.
func (m *SimKernel) addUsage(n *simNode, delta int64) {
	n.own += delta
	file := fileMemoryCurrent
	if m.version == V1 {
		file = fileMemoryUsage
	}
	for a := n; a != nil; a = a.parent {
		a.hier += delta
		a.files[file] = strconv.FormatInt(a.hier, 10)
	}
}

// updatePeaks raises memory.max_usage_in_bytes (v1) of n and its ancestors
// to their usage. It runs after OOM kills have brought usage back under
// the limits, because the kernel never lets a charge past a limit.
func (m *SimKernel) updatePeaks(n *simNode) {
	if m.version != V1 {
		return
	}
	for a := n; a != nil; a = a.parent {
		if a.hier > a.peak {
			a.peak = a.hier
			a.files[fileMemoryMaxUsage] = strconv.FormatInt(a.peak, 10)
		}
	}
}

// SetUsage sets the memory charged to the cgroup itself (its processes) in
// bytes. If that puts the cgroup or an ancestor over its memory limit, or
// the whole hierarchy over the host's memory, the model OOM-kills as the
// kernel would: on v2 the cgroup with the largest own usage below the
// lowest cgroup over its limit; on v1 the cgroup whose usage grew.
func (m *SimKernel) SetUsage(path string, bytes int64) error {
	if bytes < 0 {
		return fmt.Errorf("set usage of %s to %d: %w", path, bytes, syscall.EINVAL)
	}
	m.mu.Lock()
	n, err := m.lookup("set usage of", path)
	if err != nil {
		m.mu.Unlock()
		return err
	}
	m.addUsage(n, bytes-n.own)
	killed := m.resolveOOM(n, n, nil)
	m.updatePeaks(n)
	fns := m.oomFns
	m.mu.Unlock()
	notify(fns, killed)
	return nil
}

// notify calls every OOM callback for every killed cgroup, in kill order.
// The caller holds no lock.
func notify(fns []func(string), killed []string) {
	for _, path := range killed {
		for _, fn := range fns {
			fn(path)
		}
	}
}

// OnOOMKill registers fn to be called with the path of each cgroup the
// model OOM-kills (its own usage drops to 0). Callbacks run in
// registration order, after the SimKernel's lock is released, so they may
// call back into it.
func (m *SimKernel) OnOOMKill(fn func(path string)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	// Copy on append, so a callback list handed to notify never changes.
	fns := make([]func(string), len(m.oomFns), len(m.oomFns)+1)
	copy(fns, m.oomFns)
	m.oomFns = append(fns, fn)
}

// Writes returns the latest writes attempted through Set (up to the write
// limit), in order, failed ones with Err set.
func (m *SimKernel) Writes() []Write {
	m.mu.Lock()
	defer m.mu.Unlock()
	return latest(m.writes, m.writeLimit)
}

// Files returns a copy of all files of a cgroup by name, with trimmed
// content, or nil if the cgroup does not exist.
func (m *SimKernel) Files(path string) map[string]string {
	if simCheckPath(path) != nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.nodes[path]
	if !ok {
		return nil
	}
	out := make(map[string]string, len(n.files))
	for k, v := range n.files {
		out[k] = v
	}
	return out
}

// Paths returns the paths of every cgroup, the root ("") first, sorted.
func (m *SimKernel) Paths() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.nodes))
	for p := range m.nodes {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// ReadFile returns the trimmed content of one file of the cgroup. A file
// the cgroup does not have (such as a v1 file on v2) gives an error that
// wraps ErrNotSupported and ENOENT.
func (m *SimKernel) ReadFile(path, file string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup("read", path)
	if err != nil {
		return "", err
	}
	s, ok := n.files[file]
	if !ok {
		return "", fmt.Errorf("read %s/%s: %w", path, file, simErrNoFile)
	}
	return s, nil
}

// MemoryUsage returns the memory charged to the cgroup and its
// descendants, in bytes.
func (m *SimKernel) MemoryUsage(path string) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup("memory usage of", path)
	if err != nil {
		return 0, err
	}
	return n.hier, nil
}

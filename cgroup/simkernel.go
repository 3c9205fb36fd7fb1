package cgroup

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// Values of the simulated kernel beyond the file formats (fileformat.go):
// the scheduler's fixed-point shift, what a new cgroup's cpu.weight and
// cpu.shares hold, and the simulated host's size.
const (
	// simBWShift is the fixed-point shift of the kernel's bandwidth ratios.
	simBWShift = 20
	// simDefaultWeight is cpu.weight of a new cgroup v2.
	simDefaultWeight = 100
	// simDefaultShares is cpu.shares of a new cgroup v1.
	simDefaultShares = 1024
	// simDefaultHostMemory is the memory an unlimited hierarchy can use when
	// WithHostMemory is not given: 64Gi, the scenario runner's default
	// node capacity.
	simDefaultHostMemory = 64 << 30
)

// errSimMissing is the error for a cgroup that does not exist: ErrNotExist
// for callers of this package, ENOENT as the kernel would say it.
var errSimMissing = fmt.Errorf("%w (%w)", ErrNotExist, syscall.ENOENT)

// errSimNoFile is the error for a file the cgroup does not have, such as a
// cgroup v1 file on a v2 hierarchy.
var errSimNoFile = fmt.Errorf("%w (%w)", ErrNotSupported, syscall.ENOENT)

// SimKernel is a simulated Linux kernel cgroup hierarchy, held in memory,
// that implements Manager the way the kernel would answer: it shows each
// cgroup's files with the kernel's content, validates and rounds values as
// the kernel does, and models memory usage so that lowering a limit below
// usage fails with EBUSY on cgroup v1 and OOM-kills on cgroup v2. Tests and
// simulations share it.
//
// SimKernel keeps each cgroup's values as numbers and renders its files
// from them when they are read, because a simulated node holds hundreds of
// cgroups: a cgroup costs one small struct, whatever was written to it.
//
// The root cgroup has the path "" and always exists. SimKernel is safe for
// concurrent use: one mutex guards the hierarchy, and OnOOMKill callbacks
// run after it is released.
type SimKernel struct {
	mu         sync.Mutex
	version    Version
	hostMemory int64
	nodes      map[string]*simNode // every cgroup by path, the root at ""
	// writes is the write log, a ring of the latest writeLimit writes (of
	// every write for a negative limit; see pushRing): once it is full,
	// writes[writeNext] is the oldest, and the next write replaces it.
	writes     []simWrite
	writeNext  int
	writeLimit int
	oomFns     []func(path string)
	// changes counts the calls that may change the hierarchy (Changes).
	changes atomic.Uint64
}

// simNode is one cgroup of the model. It keeps numbers, not file contents
// (appendFile renders the files), and its children as a list through
// child and next rather than in a map of its own, so that it fits in 96
// bytes; the fields are ordered for that.
type simNode struct {
	path   string
	parent *simNode
	child  *simNode // the first child; the others follow through next
	next   *simNode // the next sibling
	own    int64    // memory charged to this cgroup itself
	hier   int64    // own plus every descendant's own: memory.current, memory.usage_in_bytes
	peak   int64    // highest hier seen: v1 memory.max_usage_in_bytes
	limit  int64    // memory limit in bytes as the kernel holds it, cgconfig.V1UnlimitedMemory for none
	quota  int64    // CFS quota in µs, -1 (Unlimited) for none on both versions
	ooms   *simOOMs // OOM event counts, nil until the first event
	weight uint32   // v2 cpu.weight or v1 cpu.shares, whose kernel bounds fit
	period uint32   // CFS period in µs, whose kernel bounds (at most 1s) fit
}

// simOOMs counts a cgroup's OOM events. Few cgroups ever have one, so the
// counts live apart from simNode, which holds a nil pointer until then.
type simOOMs struct {
	oom  int64 // v2 memory.events "oom"
	kill int64 // v2 memory.events and v1 memory.oom_control "oom_kill"
}

// oomEvents returns n's OOM counts for an event to be counted, making them
// at n's first.
func (n *simNode) oomEvents() *simOOMs {
	if n.ooms == nil {
		n.ooms = &simOOMs{}
	}
	return n.ooms
}

// oomCounts returns n's OOM counts, zero before the first event.
func (n *simNode) oomCounts() simOOMs {
	if n.ooms == nil {
		return simOOMs{}
	}
	return *n.ooms
}

// simFile is one file of a simulated cgroup. The write log names a file by
// it, in a byte rather than a string.
type simFile uint8

const (
	// cgroup v2.
	simCPUWeight simFile = iota
	simCPUMax
	simMemoryMax
	simMemoryCurrent
	simMemoryEvents
	// cgroup v1.
	simCPUShares
	simCFSPeriod
	simCFSQuota
	simMemoryLimit
	simMemoryUsage
	simMemoryMaxUsage
	simOOMControl
)

// simFileNames are the kernel's names of the simFiles.
var simFileNames = [...]string{
	simCPUWeight:      FileCPUWeight,
	simCPUMax:         FileCPUMax,
	simMemoryMax:      FileMemoryMax,
	simMemoryCurrent:  FileMemoryCurrent,
	simMemoryEvents:   FileMemoryEvents,
	simCPUShares:      FileCPUShares,
	simCFSPeriod:      FileCFSPeriod,
	simCFSQuota:       FileCFSQuota,
	simMemoryLimit:    FileMemoryLimit,
	simMemoryUsage:    FileMemoryUsage,
	simMemoryMaxUsage: FileMemoryMaxUsage,
	simOOMControl:     FileOOMControl,
}

// The files a cgroup has on each version.
var (
	simV2Files = []simFile{simCPUWeight, simCPUMax, simMemoryMax, simMemoryCurrent, simMemoryEvents}
	simV1Files = []simFile{simCPUShares, simCFSPeriod, simCFSQuota, simMemoryLimit, simMemoryUsage, simMemoryMaxUsage, simOOMControl}
)

// simFilesOf returns the files a cgroup of version has.
func simFilesOf(version Version) []simFile {
	if version == V2 {
		return simV2Files
	}
	return simV1Files
}

// simFileNamed returns the file called name that a cgroup of version has,
// and false if it has none.
func simFileNamed(version Version, name string) (simFile, bool) {
	for _, f := range simFilesOf(version) {
		if simFileNames[f] == name {
			return f, true
		}
	}
	return 0, false
}

// simSetting is the content of a file that Set writes, as the numbers it
// is formatted from (appendSetting): the value, and for cpu.max the
// period. The value of an unsigned file (cpu.weight, cpu.shares,
// cpu.cfs_period_us) is its number's bits; Unlimited is the "max" of v2
// files.
type simSetting struct {
	value  int64
	period uint64
}

// setting returns the content of n's file f, one that Set writes.
func (n *simNode) setting(f simFile) simSetting {
	switch f {
	case simCPUWeight, simCPUShares:
		return simSetting{value: int64(n.weight)}
	case simCPUMax:
		return simSetting{value: n.quota, period: uint64(n.period)}
	case simCFSPeriod:
		return simSetting{value: int64(n.period)}
	case simCFSQuota:
		return simSetting{value: n.quota}
	case simMemoryMax:
		if n.limit == cgconfig.V1UnlimitedMemory {
			return simSetting{value: Unlimited}
		}
	}
	return simSetting{value: n.limit} // simMemoryLimit, and memory.max below the maximum
}

// appendSetting appends the content of file f holding s, in the format
// appendPlan writes and the kernel shows.
func appendSetting(b []byte, f simFile, s simSetting) []byte {
	switch f {
	case simCPUWeight, simCPUShares, simCFSPeriod:
		return strconv.AppendUint(b, uint64(s.value), 10)
	case simMemoryMax:
		return appendMax(b, s.value)
	case simCPUMax:
		b = appendMax(b, s.value)
		b = append(b, ' ')
		return strconv.AppendUint(b, s.period, 10)
	}
	return strconv.AppendInt(b, s.value, 10) // simCFSQuota, simMemoryLimit
}

// appendFile appends the content of n's file f, trimmed, as the kernel
// shows it.
func appendFile(b []byte, n *simNode, f simFile) []byte {
	switch f {
	case simMemoryCurrent, simMemoryUsage:
		return strconv.AppendInt(b, n.hier, 10)
	case simMemoryMaxUsage:
		return strconv.AppendInt(b, n.peak, 10)
	case simMemoryEvents:
		// The kernel's field order; the model has only OOM events.
		c := n.oomCounts()
		b = append(b, "low 0\nhigh 0\nmax 0\noom "...)
		b = strconv.AppendInt(b, c.oom, 10)
		b = append(b, "\noom_kill "...)
		b = strconv.AppendInt(b, c.kill, 10)
		return append(b, "\noom_group_kill 0"...)
	case simOOMControl:
		b = append(b, "oom_kill_disable 0\nunder_oom 0\noom_kill "...)
		return strconv.AppendInt(b, n.oomCounts().kill, 10)
	}
	return appendSetting(b, f, n.setting(f))
}

// simStaticTexts are contents the program holds as strings already: the
// unlimited tokens, and the contents of a new cgroup, which most first
// writes replace.
var simStaticTexts = []string{
	maxToken, unlimitedV1, defaultCPUMax, defaultCFSPeriod,
	strconv.Itoa(simDefaultWeight), strconv.Itoa(simDefaultShares),
	strconv.FormatInt(cgconfig.V1UnlimitedMemory, 10),
}

// staticText returns b as a string without allocating when the program
// holds that string already: one of simStaticTexts, or a number below 100,
// which strconv keeps.
func staticText(b []byte) (string, bool) {
	for _, s := range simStaticTexts {
		if string(b) == s {
			return s, true
		}
	}
	digit := func(c byte) bool { return '0' <= c && c <= '9' }
	switch {
	case len(b) == 1 && digit(b[0]):
		return strconv.Itoa(int(b[0] - '0')), true
	case len(b) == 2 && b[0] != '0' && digit(b[0]) && digit(b[1]):
		return strconv.Itoa(int(b[0]-'0')*10 + int(b[1]-'0')), true
	}
	return "", false
}

// text returns b as a string, without allocating where staticText can.
func text(b []byte) string {
	if s, ok := staticText(b); ok {
		return s
	}
	return string(b)
}

// fileText returns the content of n's file f as a string.
func fileText(n *simNode, f simFile) string {
	var buf [96]byte
	return text(appendFile(buf[:0], n, f))
}

// writeTexts returns a write's new and old content as strings for the
// Write that Set returns: strings the program holds already where
// staticText finds them, and one allocation for the others, so that a
// write costs one allocation at most, and none for the small numbers of
// most cpu.weight writes.
func writeTexts(newB, oldB []byte) (newText, oldText string) {
	newText, newStatic := staticText(newB)
	oldText, oldStatic := staticText(oldB)
	switch {
	case newStatic && oldStatic:
	case newStatic:
		oldText = string(oldB)
	case oldStatic:
		newText = string(newB)
	default:
		var buf [96]byte
		both := string(append(append(buf[:0], newB...), oldB...))
		newText, oldText = both[:len(newB)], both[len(newB):]
	}
	return newText, oldText
}

// simWrite is one write of the log, kept to 40 bytes as the log holds
// hundreds: the cgroup by its node, whose path outlives a Delete; the file
// as a simFile; the contents as numbers, rendered when Writes is called;
// the errno in a byte. The old content's setting is spread over two
// fields, with a period that a cgroup's period fits, for the size.
type simWrite struct {
	node      *simNode
	new       simSetting // the content written
	oldValue  int64      // the content before: its simSetting's value
	oldPeriod uint32     // and period
	file      simFile
	errno     uint8 // the write's syscall.Errno; 0 for success
}

// simErrno is err as simWrite keeps it. Every error a write meets in the
// model is a syscall.Errno (Canonical, apply), and each of those fits a
// byte; anything else is a programming error.
func simErrno(err error) uint8 {
	if err == nil {
		return 0
	}
	e, ok := err.(syscall.Errno)
	if !ok || e == 0 || e > math.MaxUint8 {
		panic(fmt.Sprintf("cgroup: SimKernel write error %v is not an errno", err))
	}
	return uint8(e)
}

// write is w as Writes reports it.
func (w simWrite) write() Write {
	var oldBuf, newBuf [48]byte
	out := Write{
		Path: w.node.path,
		File: simFileNames[w.file],
		Old:  text(appendSetting(oldBuf[:0], w.file, simSetting{w.oldValue, uint64(w.oldPeriod)})),
		New:  text(appendSetting(newBuf[:0], w.file, w.new)),
	}
	if w.errno != 0 {
		out.Err = syscall.Errno(w.errno)
	}
	return out
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
// holds only the root cgroup; version 0 stands for V2, the default a
// NodeConfig gives. It panics on a version other than 0, V1 or V2, which
// is a programming error.
func NewSimKernel(version Version, opts ...SimKernelOption) *SimKernel {
	if version == 0 {
		version = V2
	}
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
		if opt != nil {
			opt(m)
		}
	}
	m.nodes[""] = m.newNode("", nil)
	return m
}

// newNode makes a cgroup with the kernel's defaults for m's version, as
// parent's first child.
func (m *SimKernel) newNode(path string, parent *simNode) *simNode {
	n := &simNode{
		path:   path,
		parent: parent,
		limit:  cgconfig.V1UnlimitedMemory,
		quota:  Unlimited,
		weight: simDefaultWeight,
		period: cgconfig.QuotaPeriod,
	}
	if m.version == V1 {
		n.weight = simDefaultShares
	}
	if parent != nil {
		n.next, parent.child = parent.child, n
	}
	return n
}

// simCheckPath reports whether path names a cgroup below the root. It is
// cgroupfs.FS's rule (validatePath), so that the simulator refuses exactly the
// names the manager of a real cgroup filesystem refuses, with the same
// ErrInvalidPath.
func simCheckPath(path string) error {
	return validatePath(path)
}

// simParent returns the path of a cgroup's parent ("" for the root's
// children).
func simParent(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[:i]
	}
	return ""
}

// errSimKernelNotMade is what a SimKernel that NewSimKernel did not make
// (nil, or its zero value, which has no version and no root cgroup)
// answers every call with an error result: it holds no cgroup to act on.
var errSimKernelNotMade = errors.New("cgroup: SimKernel not made by NewSimKernel")

// made reports whether NewSimKernel made m. nodes is set there and never
// replaced, so reading it needs no lock.
func (m *SimKernel) made() bool { return m != nil && m.nodes != nil }

// Version reports the hierarchy's cgroup version (0 for a SimKernel that
// NewSimKernel did not make).
func (m *SimKernel) Version() Version {
	if m == nil {
		return 0
	}
	return m.version
}

// Changes counts the calls that may have changed the hierarchy since the
// kernel was made (Create, Delete, Set, SetValues, SetUsage), whoever
// made them and whether or not they changed anything. A driver that
// notes the count after its own calls can tell that nobody else changed
// the kernel since (a node skips reads it knows the answers to).
func (m *SimKernel) Changes() uint64 {
	if m == nil {
		return 0
	}
	return m.changes.Load()
}

// Create makes the cgroup and any missing parent with the kernel's default
// files. Creating a cgroup that exists is not an error.
func (m *SimKernel) Create(path string) error {
	if !m.made() {
		return fmt.Errorf("create %s: %w", path, errSimKernelNotMade)
	}
	m.changes.Add(1)
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
	n := m.newNode(path, m.ensure(simParent(path)))
	m.nodes[path] = n
	return n
}

// Delete removes the cgroup. Like rmdir on a cgroup it fails with EBUSY
// while the cgroup has children or memory charged to it (processes), and
// for the root. Deleting a cgroup that does not exist is not an error.
func (m *SimKernel) Delete(path string) error {
	if !m.made() {
		return fmt.Errorf("delete %s: %w", path, errSimKernelNotMade)
	}
	m.changes.Add(1)
	if err := simCheckPath(path); err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.nodes[path]
	if !ok {
		return nil
	}
	if n.parent == nil || n.child != nil || n.own > 0 {
		return fmt.Errorf("delete %s: %w", path, syscall.EBUSY)
	}
	// Unlink n from its parent's list of children.
	for c := &n.parent.child; *c != nil; c = &(*c).next {
		if *c == n {
			*c = n.next
			break
		}
	}
	n.next = nil
	delete(m.nodes, path)
	return nil
}

// Exists reports whether the cgroup exists; an invalid path does not.
// Every path in m.nodes is valid (see lookup), so the map alone answers.
func (m *SimKernel) Exists(path string) bool {
	if !m.made() {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.nodes[path]
	return ok
}

// lookup returns the cgroup at path or an error that names op and path.
// The caller holds m.mu.
//
// lookup looks the path up before it validates it, and validates only a
// path it does not find: every path in m.nodes is valid (the root "",
// paths Create validated, and their parents, which are prefixes of whole
// components of a valid path), so a path found would pass simCheckPath,
// and the answers are those of validating first.
// TestSimKernelNodesHoldValidPaths holds m.nodes to that.
func (m *SimKernel) lookup(op, path string) (*simNode, error) {
	if n, ok := m.nodes[path]; ok {
		return n, nil
	}
	if err := simCheckPath(path); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return nil, fmt.Errorf("%s %s: %w", op, path, errSimMissing)
}

// Get reads the cgroup's CPU and memory values back from its files. On v1
// a quota of -1 and a memory limit at or above the page counter maximum
// are Unlimited; on v2 "max" is.
func (m *SimKernel) Get(path string) (Values, error) {
	if !m.made() {
		return Values{}, fmt.Errorf("get %s: %w", path, errSimKernelNotMade)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup("get", path)
	if err != nil {
		return Values{}, err
	}
	return simValues(m.version, n), nil
}

// simValues is what ParseValues reads from n's files, taken from the
// numbers the files are rendered from rather than parsed back from text
// (TestSimKernelGetReadsItsFiles checks that the two agree). The values
// share one allocation, so that a Get costs one rather than four.
func simValues(version Version, n *simNode) Values {
	x := &struct {
		weight, period uint64
		quota, limit   int64
	}{uint64(n.weight), uint64(n.period), n.quota, n.limit}
	if x.limit >= cgconfig.V1UnlimitedMemory {
		x.limit = Unlimited
	}
	if version == V2 {
		return Values{CPUWeight: &x.weight, CPUQuota: &x.quota, CPUPeriod: &x.period, MemoryLimit: &x.limit}
	}
	return Values{CPUShares: &x.weight, CPUPeriod: &x.period, CPUQuota: &x.quota, MemoryLimit: &x.limit}
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
	writes, _, err := m.set(path, v, true)
	return writes, err
}

// SetValues is Set without the writes it returns: the same writes,
// recorded for Writes the same way, and the same error. On a failed write
// it also returns the failed write's file, the File of the last Write
// that Set would have returned. Callers that hold a Manager use the
// function SetValues, which finds this method.
func (m *SimKernel) SetValues(path string, v Values) (failedFile string, err error) {
	_, failedFile, err = m.set(path, v, false)
	return failedFile, err
}

// simPlanned is one file that Set writes, with the setting its content is
// formatted from (appendSetting formats it as appendPlan would).
type simPlanned struct {
	f simFile
	s simSetting
}

// plan lists the files v asks Set to write on n, in Set's order, as
// appendPlan does but in numbers: the content appendPlan formats for a
// file is appendSetting of its planned setting, and the setting is what
// parseSetting reads from that content. v2 cpu.max takes the half v does
// not set from n, as appendPlan takes it from the file.
func (m *SimKernel) plan(n *simNode, v Values) (plan [4]simPlanned, count int) {
	add := func(f simFile, s simSetting) {
		plan[count] = simPlanned{f, s}
		count++
	}
	if m.version == V2 {
		if v.MemoryLimit != nil {
			add(simMemoryMax, simSetting{value: *v.MemoryLimit})
		}
		if v.CPUWeight != nil {
			add(simCPUWeight, simSetting{value: int64(*v.CPUWeight)})
		}
		if v.CPUQuota != nil || v.CPUPeriod != nil {
			s := simSetting{value: n.quota, period: uint64(n.period)}
			if v.CPUQuota != nil {
				s.value = *v.CPUQuota
			}
			if v.CPUPeriod != nil {
				s.period = *v.CPUPeriod
			}
			add(simCPUMax, s)
		}
		return plan, count
	}
	if v.MemoryLimit != nil {
		add(simMemoryLimit, simSetting{value: *v.MemoryLimit})
	}
	if v.CPUShares != nil {
		add(simCPUShares, simSetting{value: int64(*v.CPUShares)})
	}
	if v.CPUPeriod != nil {
		add(simCFSPeriod, simSetting{value: int64(*v.CPUPeriod)})
	}
	if v.CPUQuota != nil {
		add(simCFSQuota, simSetting{value: *v.CPUQuota})
	}
	return plan, count
}

// simCanonical is canonical in numbers, for the contents Set writes: for
// the content appendSetting formats from s, it returns what parseSetting
// reads from Canonical's answer, or Canonical's error. Every content Set
// writes is a number as strconv formats it (or "max" on v2), so the
// parsing Canonical does cannot fail but where a negative number meets an
// unsigned parser (EINVAL), and what is left are Canonical's bounds,
// clamps and roundings. Each answer is appendSetting's rendering of itself,
// as Canonical's are, so that comparing settings is comparing contents.
// TestSimKernelSetMatchesText and FuzzSimKernelSetValues hold Set to the
// text path it replaced.
func simCanonical(f simFile, s simSetting) (simSetting, error) {
	switch f {
	case simCPUWeight:
		if w := uint64(s.value); w < 1 || w > cgconfig.MaxWeight {
			return simSetting{}, syscall.ERANGE
		}
		return s, nil
	case simCPUMax:
		if q := s.value; q != Unlimited && (q < kernelMinCFSUS || q > kernelMaxCFSQuotaUS) {
			return simSetting{}, syscall.EINVAL // a negative quota too: not a number to kstrtoull
		}
		if s.period < kernelMinCFSUS || s.period > kernelMaxCFSPeriodUS {
			return simSetting{}, syscall.EINVAL
		}
		return s, nil
	case simMemoryMax:
		l, err := simWrittenLimit(s.value, Unlimited)
		if err == nil && l >= cgconfig.V1UnlimitedMemory {
			l = Unlimited // read back as "max"
		}
		return simSetting{value: l}, err
	case simMemoryLimit:
		l, err := simWrittenLimit(s.value, unlimitedV1Value)
		return simSetting{value: l}, err
	case simCPUShares:
		// The v1 kernel clamps shares instead of rejecting them.
		return simSetting{value: int64(min(max(uint64(s.value), cgconfig.MinShares), cgconfig.MaxShares))}, nil
	case simCFSPeriod:
		if p := uint64(s.value); p < kernelMinCFSUS || p > kernelMaxCFSPeriodUS {
			return simSetting{}, syscall.EINVAL
		}
		return s, nil
	case simCFSQuota:
		// Any negative quota means no limit and reads back as -1.
		if s.value < 0 {
			return simSetting{value: -1}, nil
		}
		if s.value < kernelMinCFSUS || s.value > kernelMaxCFSQuotaUS {
			return simSetting{}, syscall.EINVAL
		}
		return s, nil
	}
	// A read-only file (usage, events) has no write handler: EINVAL.
	return simSetting{}, syscall.EINVAL
}

// unlimitedV1Value is unlimitedV1 as a number.
const unlimitedV1Value = -1

// simWrittenLimit is parseWrittenLimit for a memory limit formatted from
// the number l, where unlimited is the number of the version's unlimited
// token: cgconfig.V1UnlimitedMemory for that token, EINVAL for any other
// negative number, the page counter maximum for anything at or above it,
// and otherwise l rounded down to whole pages.
func simWrittenLimit(l, unlimited int64) (int64, error) {
	switch {
	case l == unlimited:
		return cgconfig.V1UnlimitedMemory, nil
	case l < 0:
		return 0, syscall.EINVAL
	case l >= cgconfig.V1UnlimitedMemory:
		return cgconfig.V1UnlimitedMemory, nil
	}
	return l / cgconfig.PageSize * cgconfig.PageSize, nil
}

// set is Set and SetValues: it makes the writes and logs them, and with
// record also returns them as Set does. failedFile is the failed write's
// file, "" when no write failed.
func (m *SimKernel) set(path string, v Values, record bool) (writes []Write, failedFile string, failed error) {
	if !m.made() {
		return nil, "", fmt.Errorf("set %s: %w", path, errSimKernelNotMade)
	}
	m.changes.Add(1)
	m.mu.Lock()
	n, err := m.lookup("set", path)
	if err != nil {
		m.mu.Unlock()
		return nil, "", err
	}
	plan, count := m.plan(n, v)
	var killed []string
	for i, p := range plan[:count] {
		oldSetting := n.setting(p.f)
		canon, err := simCanonical(p.f, p.s)
		if err == nil && canon == oldSetting {
			continue
		}
		if err == nil {
			killed, err = m.apply(n, p.f, canon, killed)
		}
		m.writes, m.writeNext = pushRing(m.writes, m.writeNext, m.writeLimit, simWrite{
			node:      n,
			new:       p.s,
			oldValue:  oldSetting.value,
			oldPeriod: uint32(oldSetting.period),
			file:      p.f,
			errno:     simErrno(err),
		})
		if record {
			// The texts are made from the numbers as Writes makes them,
			// without allocating where writeTexts can.
			var newBuf, oldBuf [48]byte
			newText, oldText := writeTexts(appendSetting(newBuf[:0], p.f, p.s), appendSetting(oldBuf[:0], p.f, oldSetting))
			if writes == nil {
				// Room for every write still planned, so that the
				// writes take one allocation.
				writes = make([]Write, 0, count-i)
			}
			writes = append(writes, Write{Path: path, File: simFileNames[p.f], Old: oldText, New: newText, Err: err})
		}
		if err != nil {
			failedFile = simFileNames[p.f]
			failed = fmt.Errorf("write %s/%s: %w", path, failedFile, err)
			break
		}
	}
	fns := m.oomFns
	m.mu.Unlock()
	notify(fns, killed)
	return writes, failedFile, failed
}

// apply stores a canonical setting s in a cgroup file after the checks
// that depend on the rest of the hierarchy, and OOM-kills on v2 when a
// memory limit falls below usage. It appends the paths of killed cgroups
// to killed. The caller holds m.mu.
func (m *SimKernel) apply(n *simNode, f simFile, s simSetting, killed []string) ([]string, error) {
	switch f {
	case simMemoryLimit:
		if n.hier > s.value {
			return killed, syscall.EBUSY
		}
		n.limit = s.value
	case simMemoryMax:
		n.limit = s.value
		if s.value == Unlimited {
			n.limit = cgconfig.V1UnlimitedMemory
		}
		killed = m.resolveOOM(n, nil, killed)
	case simCFSQuota, simCFSPeriod:
		quota, period := n.quota, uint64(n.period)
		if f == simCFSQuota {
			quota = s.value
		} else {
			period = uint64(s.value)
		}
		if err := simCheckV1Bandwidth(n, quota, period); err != nil {
			return killed, err
		}
		n.quota, n.period = quota, uint32(period)
	case simCPUMax:
		n.quota, n.period = s.value, uint32(s.period)
	case simCPUWeight, simCPUShares:
		n.weight = uint32(s.value)
	}
	return killed, nil
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
		if parent, limited = simRatio(a.quota, uint64(a.period)); limited {
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
	for c := n.child; c != nil; c = c.next {
		r, ok := simRatio(c.quota, uint64(c.period))
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
				a.oomEvents().oom++
			}
			for a := victim; a != nil && a.parent != nil; a = a.parent {
				a.oomEvents().kill++
			}
		} else {
			// memory.oom_control counts only the victim's own kills.
			victim.oomEvents().kill++
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
	for c := n.child; c != nil; c = c.next {
		best = simLargest(c, best)
	}
	return best
}

// addUsage changes a cgroup's own usage by delta, and the hierarchical
// usage of it and its ancestors with it. The caller holds m.mu.
func (m *SimKernel) addUsage(n *simNode, delta int64) {
	n.own += delta
	for a := n; a != nil; a = a.parent {
		a.hier += delta
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
		a.peak = max(a.peak, a.hier)
	}
}

// SetUsage sets the memory charged to the cgroup itself (its processes) in
// bytes. If that puts the cgroup or an ancestor over its memory limit, or
// the whole hierarchy over the host's memory, the model OOM-kills as the
// kernel would: on v2 the cgroup with the largest own usage below the
// lowest cgroup over its limit; on v1 the cgroup whose usage grew.
func (m *SimKernel) SetUsage(path string, bytes int64) error {
	if !m.made() {
		return fmt.Errorf("set usage of %s: %w", path, errSimKernelNotMade)
	}
	m.changes.Add(1)
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
	if !m.made() {
		return
	}
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
	if !m.made() {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.writes) == 0 {
		return nil
	}
	out := make([]Write, 0, len(m.writes))
	older, newer := ringOrder(m.writes, m.writeNext)
	for _, w := range older {
		out = append(out, w.write())
	}
	for _, w := range newer {
		out = append(out, w.write())
	}
	return out
}

// Files returns a copy of all files of a cgroup by name, with trimmed
// content, or nil if the cgroup does not exist (an invalid path never
// does: see lookup).
func (m *SimKernel) Files(path string) map[string]string {
	if !m.made() {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.nodes[path]
	if !ok {
		return nil
	}
	files := simFilesOf(m.version)
	out := make(map[string]string, len(files))
	for _, f := range files {
		out[simFileNames[f]] = fileText(n, f)
	}
	return out
}

// Paths returns the paths of every cgroup, the root ("") first, sorted.
func (m *SimKernel) Paths() []string {
	if !m.made() {
		return nil
	}
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
	if !m.made() {
		return "", fmt.Errorf("read %s/%s: %w", path, file, errSimKernelNotMade)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup("read", path)
	if err != nil {
		return "", err
	}
	f, ok := simFileNamed(m.version, file)
	if !ok {
		return "", fmt.Errorf("read %s/%s: %w", path, file, errSimNoFile)
	}
	return fileText(n, f), nil
}

// MemoryUsage returns the memory charged to the cgroup and its
// descendants, in bytes.
func (m *SimKernel) MemoryUsage(path string) (int64, error) {
	if !m.made() {
		return 0, fmt.Errorf("memory usage of %s: %w", path, errSimKernelNotMade)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup("memory usage of", path)
	if err != nil {
		return 0, err
	}
	return n.hier, nil
}

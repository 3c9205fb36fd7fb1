package cgroup

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// This file is the one place that knows the formats of the kernel's cgroup
// files: their names, how their content reads as Values (ParseValues), what
// Set writes into them (planSet), and what the kernel shows after a write
// (Canonical). Both managers, SimKernel here and cgroupfs.FS, and the
// FaultInjector use it, so that a format is fixed in one place for all of
// them; what cgroupfs needs of it is exported for that reason.

// The cgroup files the managers read and write, by the kernel's names. They
// are exported for package cgroupfs, which writes the same files on a real
// hierarchy.
const (
	// cgroup v2.
	FileCPUWeight     = "cpu.weight"     // CPU weight, 1..10000
	FileCPUMax        = "cpu.max"        // "<quota|max> <period>" in microseconds
	FileMemoryMax     = "memory.max"     // limit in bytes, or "max"
	FileMemoryCurrent = "memory.current" // usage in bytes; read-only
	FileMemoryEvents  = "memory.events"  // "<event> <count>" lines; read-only

	// cgroup v1.
	FileCPUShares      = "cpu.shares"                // 2..262144
	FileCFSPeriod      = "cpu.cfs_period_us"         // microseconds
	FileCFSQuota       = "cpu.cfs_quota_us"          // microseconds, -1 for no limit
	FileMemoryLimit    = "memory.limit_in_bytes"     // bytes; -1 is written for no limit
	FileMemoryUsage    = "memory.usage_in_bytes"     // read-only
	FileMemoryMaxUsage = "memory.max_usage_in_bytes" // peak usage; read-only
	FileOOMControl     = "memory.oom_control"        // read-only here
)

// The tokens the kernel uses for "no limit".
const (
	// maxToken is Unlimited on cgroup v2, in memory.max and in the quota
	// half of cpu.max.
	maxToken = "max"
	// unlimitedV1 is Unlimited as written to cgroup v1 files; the kernel
	// reads it back as -1 in cpu.cfs_quota_us and as
	// cgconfig.V1UnlimitedMemory in memory.limit_in_bytes.
	unlimitedV1 = "-1"
)

// The CFS period a new cgroup shows, as text. The kernel's default period
// is the one the kubelet writes, cgconfig.QuotaPeriod, so it is derived
// from that rather than written out again.
var (
	// defaultCFSPeriod is cpu.cfs_period_us of a new cgroup v1.
	defaultCFSPeriod = strconv.Itoa(cgconfig.QuotaPeriod)
	// defaultCPUMax is cpu.max of a new cgroup v2: no quota in the default
	// period.
	defaultCPUMax = FormatCPUMax(Unlimited, cgconfig.QuotaPeriod)
)

// The CFS bandwidth bounds the kernel enforces on a write
// (kernel/sched/core.c), as checked on this project's v1 host (kernel
// 6.18) and in examples/realhost/README.md §3. kernelMinCFSUS equals cgconfig.MinQuotaPeriod,
// but that one is the kubelet's floor for what it writes, chosen to stay
// within this one; the kernel's own bound is kept apart so that neither
// silently follows a change of the other.
const (
	// kernelMinCFSUS is the smallest CFS quota and period in microseconds
	// (1 ms).
	kernelMinCFSUS = 1000
	// kernelMaxCFSPeriodUS is the largest CFS period in microseconds (1 s).
	kernelMaxCFSPeriodUS = 1000000
	// kernelMaxCFSQuotaUS is the largest CFS quota in microseconds (MAX_BW).
	kernelMaxCFSQuotaUS = 1<<44 - 1
)

// FormatMax is the cgroup v2 content for a limit that may be Unlimited:
// memory.max, or the quota half of cpu.max. It writes other negative
// values as they are, so that the kernel rejects them with EINVAL.
func FormatMax(v int64) string {
	if v == Unlimited {
		return maxToken
	}
	return strconv.FormatInt(v, 10)
}

// appendMax is FormatMax appending to b, so that cpu.max can be built in
// one allocation.
func appendMax(b []byte, v int64) []byte {
	if v == Unlimited {
		return append(b, maxToken...)
	}
	return strconv.AppendInt(b, v, 10)
}

// parseMax reads memory.max, or the quota half of cpu.max: "max" is
// Unlimited, anything else a decimal number.
func parseMax(s string) (int64, error) {
	if s == maxToken {
		return Unlimited, nil
	}
	return strconv.ParseInt(s, 10, 64)
}

// FormatCPUMax is the content of cpu.max for a quota (Unlimited for none)
// and a period, both in microseconds.
func FormatCPUMax(quota int64, period uint64) string {
	var buf [48]byte
	b := appendMax(buf[:0], quota)
	b = append(b, ' ')
	return string(strconv.AppendUint(b, period, 10))
}

// ParseCPUMax reads cpu.max, "<quota|max> <period>". A missing period
// means the default one: the kernel always shows both, but a temp-dir tree
// may hold the quota alone.
func ParseCPUMax(s string) (quota int64, period uint64, err error) {
	q, p, found := strings.Cut(s, " ")
	if quota, err = parseMax(q); err != nil {
		return 0, 0, err
	}
	if !found {
		return quota, cgconfig.QuotaPeriod, nil
	}
	period, err = strconv.ParseUint(p, 10, 64)
	return quota, period, err
}

// ParseV1Limit reads memory.limit_in_bytes: the kernel's read-back of -1,
// cgconfig.V1UnlimitedMemory, and anything above it is Unlimited. The
// kernel never shows a negative limit, but a temp-dir tree may hold the
// "-1" that was written, so a signed number reads as a v1 quota does, any
// negative one as Unlimited; its error stays the unsigned parser's.
func ParseV1Limit(s string) (int64, error) {
	u, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		if n, qerr := parseV1Quota(s); qerr == nil {
			return n, nil
		}
		return 0, err
	}
	if u >= uint64(cgconfig.V1UnlimitedMemory) {
		return Unlimited, nil
	}
	return int64(u), nil
}

// parseV1Quota reads cpu.cfs_quota_us, where any negative value means no
// limit.
func parseV1Quota(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return Unlimited, nil
	}
	return n, nil
}

// ContentError is ParseValues' error for a file whose content is not in
// the kernel's format. It keeps the file and content apart so that each
// manager can word the error its own way.
type ContentError struct {
	File, Content string
	Err           error // the number parser's error
}

// Error says which file held what.
func (e *ContentError) Error() string {
	if e == nil {
		return "<nil>"
	}
	return fmt.Sprintf("parse %s %q: %v", e.File, e.Content, e.Err)
}

// Unwrap returns the number parser's error.
func (e *ContentError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// ParseValues turns the content of a cgroup's files, as the kernel shows
// them, into Values. read returns a file's trimmed content, false for a
// file the cgroup does not have (its field stays nil), or an error, which
// ParseValues returns as it is. It reads the files in Set's order and stops
// at the first error, returning the fields read so far with it; content it
// cannot parse gives a *ContentError. A nil read is an error: there is
// nothing to read the files with.
func ParseValues(version Version, read func(file string) (string, bool, error)) (Values, error) {
	var v Values
	if read == nil {
		return v, errors.New("parse cgroup values: no function to read the files with")
	}
	// field reads one file into a field with parse, leaving it nil when
	// the file is missing.
	field := func(file string, parse func(string) error) error {
		s, ok, err := read(file)
		if err != nil || !ok {
			return err
		}
		if err := parse(s); err != nil {
			return &ContentError{File: file, Content: s, Err: err}
		}
		return nil
	}
	uintField := func(file string, dst **uint64) error {
		return field(file, func(s string) error {
			x, err := strconv.ParseUint(s, 10, 64)
			if err == nil {
				*dst = &x
			}
			return err
		})
	}
	intField := func(file string, dst **int64, parse func(string) (int64, error)) error {
		return field(file, func(s string) error {
			x, err := parse(s)
			if err == nil {
				*dst = &x
			}
			return err
		})
	}
	if version == V2 {
		if err := uintField(FileCPUWeight, &v.CPUWeight); err != nil {
			return v, err
		}
		err := field(FileCPUMax, func(s string) error {
			q, p, err := ParseCPUMax(s)
			if err == nil {
				v.CPUQuota, v.CPUPeriod = &q, &p
			}
			return err
		})
		if err != nil {
			return v, err
		}
		return v, intField(FileMemoryMax, &v.MemoryLimit, parseMax)
	}
	if err := uintField(FileCPUShares, &v.CPUShares); err != nil {
		return v, err
	}
	if err := uintField(FileCFSPeriod, &v.CPUPeriod); err != nil {
		return v, err
	}
	if err := intField(FileCFSQuota, &v.CPUQuota, parseV1Quota); err != nil {
		return v, err
	}
	return v, intField(FileMemoryLimit, &v.MemoryLimit, ParseV1Limit)
}

// setFile is one file Set would write and the content it writes.
type setFile struct {
	file, content string
}

// planSet lists, in Set's order, the file contents v asks for on version:
// memory first, then CPU (v2 cpu.weight, cpu.max; v1 cpu.shares,
// cpu.cfs_period_us, cpu.cfs_quota_us). read returns a file's current
// content; v2 cpu.max takes the current quota or period from it when v
// gives only the other. It does not compare with the current content.
// The contents share one allocation.
func planSet(version Version, v Values, read func(file string) (string, bool)) (plan [4]setFile, n int) {
	var scratch [128]byte
	buf, files, n := appendPlan(scratch[:0], version, v, read)
	contents := string(buf)
	start := 0
	for i, f := range files[:n] {
		plan[i] = setFile{f.file, contents[start:f.end]}
		start = f.end
	}
	return plan, n
}

// plannedFile is one file of appendPlan's plan: its content is the bytes
// of the plan's buffer from the end of the file before it up to end.
type plannedFile struct {
	file string
	end  int
}

// appendPlan is planSet appending the contents to buf instead of making
// strings of them, so that a plan can be made in a buffer on the stack.
// (SimKernel plans in numbers, simCanonical, held to this by
// TestSimKernelSetMatchesText.) It calls read only when v2 cpu.max
// needs the current half that v leaves nil.
func appendPlan(buf []byte, version Version, v Values, read func(file string) (string, bool)) (_ []byte, plan [4]plannedFile, n int) {
	add := func(file string) {
		plan[n] = plannedFile{file, len(buf)}
		n++
	}
	if version == V2 {
		if v.MemoryLimit != nil {
			buf = appendMax(buf, *v.MemoryLimit)
			add(FileMemoryMax)
		}
		if v.CPUWeight != nil {
			buf = strconv.AppendUint(buf, *v.CPUWeight, 10)
			add(FileCPUWeight)
		}
		if v.CPUQuota != nil || v.CPUPeriod != nil {
			// "<quota|max> <period>", keeping the current text of the
			// half v does not set.
			var quota, period string
			if v.CPUQuota == nil || v.CPUPeriod == nil {
				cur, _ := read(FileCPUMax)
				var ok bool
				if quota, period, ok = strings.Cut(cur, " "); !ok {
					quota, period, _ = strings.Cut(defaultCPUMax, " ")
				}
			}
			if v.CPUQuota != nil {
				buf = appendMax(buf, *v.CPUQuota)
			} else {
				buf = append(buf, quota...)
			}
			buf = append(buf, ' ')
			if v.CPUPeriod != nil {
				buf = strconv.AppendUint(buf, *v.CPUPeriod, 10)
			} else {
				buf = append(buf, period...)
			}
			add(FileCPUMax)
		}
		return buf, plan, n
	}
	if v.MemoryLimit != nil {
		buf = strconv.AppendInt(buf, *v.MemoryLimit, 10)
		add(FileMemoryLimit)
	}
	if v.CPUShares != nil {
		buf = strconv.AppendUint(buf, *v.CPUShares, 10)
		add(FileCPUShares)
	}
	if v.CPUPeriod != nil {
		buf = strconv.AppendUint(buf, *v.CPUPeriod, 10)
		add(FileCFSPeriod)
	}
	if v.CPUQuota != nil {
		buf = strconv.AppendInt(buf, *v.CPUQuota, 10)
		add(FileCFSQuota)
	}
	return buf, plan, n
}

// parseWrittenU64 parses an unsigned decimal written to a file as
// kstrtoull does, which also takes a leading "+".
func parseWrittenU64(s string) (uint64, error) {
	if len(s) > 1 && s[0] == '+' {
		s = s[1:]
	}
	return strconv.ParseUint(s, 10, 64)
}

// writeErrno is the errno the kernel's number parsers (kstrtoull,
// kstrtoll) return for err: ERANGE on overflow, EINVAL for anything that
// is not a number.
func writeErrno(err error) error {
	if errors.Is(err, strconv.ErrRange) {
		return syscall.ERANGE
	}
	return syscall.EINVAL
}

// parseWrittenLimit parses a memory limit written to a file as
// page_counter_memparse does: the unlimited token (v2 "max", v1 "-1") or a
// decimal byte count, rounded down to whole pages and capped at the page
// counter maximum. It returns the limit in bytes, cgconfig.V1UnlimitedMemory
// for no limit.
func parseWrittenLimit(content, unlimited string) (int64, error) {
	if content == unlimited {
		return cgconfig.V1UnlimitedMemory, nil
	}
	b, err := strconv.ParseUint(content, 10, 64)
	if err != nil {
		// memparse stops at the first non-digit, and the kernel rejects
		// what is left over: EINVAL, never ERANGE.
		return 0, syscall.EINVAL
	}
	if b >= uint64(cgconfig.V1UnlimitedMemory) {
		return cgconfig.V1UnlimitedMemory, nil
	}
	return int64(b / cgconfig.PageSize * cgconfig.PageSize), nil
}

// parseWrittenCPUMax parses a write to v2 cpu.max, "<quota|max> [period]",
// as cpu_max_write does; a missing period keeps the one in old. It returns
// the quota (Unlimited for max) and the period in microseconds.
func parseWrittenCPUMax(content, old string) (int64, uint64, error) {
	first, second, two := strings.Cut(strings.TrimSpace(content), " ")
	second = strings.TrimSpace(second)
	if first == "" || (two && (second == "" || strings.ContainsAny(second, " \t\n"))) {
		return 0, 0, syscall.EINVAL
	}
	var period uint64
	var err error
	if two {
		if period, err = strconv.ParseUint(second, 10, 64); err != nil {
			return 0, 0, syscall.EINVAL
		}
	} else {
		_, p, _ := strings.Cut(old, " ")
		if period, err = strconv.ParseUint(p, 10, 64); err != nil {
			period = cgconfig.QuotaPeriod
		}
	}
	quota := Unlimited
	if first != maxToken {
		q, err := strconv.ParseUint(first, 10, 64)
		if err != nil {
			return 0, 0, syscall.EINVAL
		}
		if q < kernelMinCFSUS || q > kernelMaxCFSQuotaUS {
			return 0, 0, syscall.EINVAL
		}
		quota = int64(q)
	}
	if period < kernelMinCFSUS || period > kernelMaxCFSPeriodUS {
		return 0, 0, syscall.EINVAL
	}
	return quota, period, nil
}

// plainDecimal reports whether s is a number as strconv formats it: digits
// with no sign or leading zero, so the kernel reads it back unchanged.
func plainDecimal(s string) bool {
	if s == "" || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// keepDecimal returns content if it is already the decimal form of x, so
// that a value written as the kernel shows it costs no allocation, and
// the decimal form otherwise.
func keepDecimal(content string, x uint64) string {
	if plainDecimal(content) {
		return content
	}
	return strconv.FormatUint(x, 10)
}

// keepLimit is keepDecimal for a memory limit, which the kernel may have
// rounded down to whole pages: content is kept only if it is exactly the
// limit.
func keepLimit(content string, limit int64) string {
	if plainDecimal(content) {
		if b, err := strconv.ParseUint(content, 10, 64); err == nil && b == uint64(limit) {
			return content
		}
	}
	return strconv.FormatInt(limit, 10)
}

// Canonical returns what the kernel stores, and reads back, when content
// is written to file on version, or the errno a write of it fails with
// before any check that depends on other cgroups. old is the file's
// current content. The read-back is where a write and its file differ:
// v1 cpu.shares is clamped to [2, 262144], memory limits are rounded down
// to whole pages, a negative v1 quota reads -1, a v2 limit at the page
// counter maximum reads "max", and numbers lose signs and leading zeros.
// Set compares it with a file to skip writes that would change nothing.
// SimKernel applies these rules in numbers (simCanonical), held to this by
// TestSimKernelSetMatchesText and FuzzSimKernelSetValues.
func Canonical(version Version, file, content, old string) (string, error) {
	switch {
	case version == V2 && file == FileCPUWeight:
		w, err := parseWrittenU64(content)
		if err != nil {
			return "", writeErrno(err)
		}
		if w < 1 || w > cgconfig.MaxWeight {
			return "", syscall.ERANGE
		}
		return keepDecimal(content, w), nil
	case version == V2 && file == FileCPUMax:
		q, p, err := parseWrittenCPUMax(content, old)
		if err != nil {
			return "", err
		}
		if qs, ps, ok := strings.Cut(content, " "); ok && (qs == maxToken || plainDecimal(qs)) && plainDecimal(ps) {
			return content, nil
		}
		return FormatCPUMax(q, p), nil
	case version == V2 && file == FileMemoryMax:
		l, err := parseWrittenLimit(content, maxToken)
		if err != nil {
			return "", err
		}
		if l >= cgconfig.V1UnlimitedMemory {
			return maxToken, nil
		}
		return keepLimit(content, l), nil
	case version == V1 && file == FileMemoryLimit:
		l, err := parseWrittenLimit(content, unlimitedV1)
		if err != nil {
			return "", err
		}
		return keepLimit(content, l), nil
	case version == V1 && file == FileCPUShares:
		s, err := parseWrittenU64(content)
		if err != nil {
			return "", writeErrno(err)
		}
		// The v1 kernel clamps shares instead of rejecting them.
		c := min(max(s, cgconfig.MinShares), cgconfig.MaxShares)
		if c != s {
			return strconv.FormatUint(c, 10), nil
		}
		return keepDecimal(content, s), nil
	case version == V1 && file == FileCFSPeriod:
		p, err := parseWrittenU64(content)
		if err != nil {
			return "", writeErrno(err)
		}
		if p < kernelMinCFSUS || p > kernelMaxCFSPeriodUS {
			return "", syscall.EINVAL
		}
		return keepDecimal(content, p), nil
	case version == V1 && file == FileCFSQuota:
		q, err := strconv.ParseInt(content, 10, 64)
		if err != nil {
			return "", writeErrno(err)
		}
		// Any negative quota means no limit and reads back as -1.
		if q < 0 {
			return unlimitedV1, nil
		}
		if q < kernelMinCFSUS || q > kernelMaxCFSQuotaUS {
			return "", syscall.EINVAL
		}
		return keepDecimal(content, uint64(q)), nil
	}
	// A read-only file (usage, events) has no write handler: EINVAL.
	return "", syscall.EINVAL
}

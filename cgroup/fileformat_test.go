package cgroup

import (
	"errors"
	"math"
	"strconv"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// ffV1Unlimited is the text cgroup v1 shows for an unlimited memory limit.
var ffV1Unlimited = strconv.FormatInt(cgconfig.V1UnlimitedMemory, 10)

// TestFormatParseMaxRoundTrip checks that every limit FormatMax writes,
// Unlimited included, reads back through parseMax as itself, and that
// appendMax writes the same text.
func TestFormatParseMaxRoundTrip(t *testing.T) {
	tests := []struct {
		v    int64
		want string
	}{
		{Unlimited, "max"},
		{0, "0"},
		{4096, "4096"},
		{cgconfig.V1UnlimitedMemory, ffV1Unlimited},
		{math.MaxInt64, "9223372036854775807"},
	}
	for _, tt := range tests {
		s := FormatMax(tt.v)
		if s != tt.want {
			t.Errorf("FormatMax(%d) = %q, want %q", tt.v, s, tt.want)
		}
		if b := string(appendMax([]byte("x"), tt.v)); b != "x"+tt.want {
			t.Errorf("appendMax(x, %d) = %q, want %q", tt.v, b, "x"+tt.want)
		}
		if got, err := parseMax(s); err != nil || got != tt.v {
			t.Errorf("parseMax(%q) = %d, %v; want %d", s, got, err, tt.v)
		}
	}
	// A negative value other than Unlimited is written as it is, for the
	// kernel to reject.
	if s := FormatMax(-5); s != "-5" {
		t.Errorf("FormatMax(-5) = %q, want -5", s)
	}
}

// TestParseMaxBadInput checks that parseMax takes only the kernel's exact
// token and decimal numbers in range.
func TestParseMaxBadInput(t *testing.T) {
	for _, s := range []string{"", "abc", "MAX", " max", "max ", "1.5", "9223372036854775808"} {
		if got, err := parseMax(s); err == nil {
			t.Errorf("parseMax(%q) = %d, want an error", s, got)
		}
	}
}

// TestFormatParseCPUMaxRoundTrip checks cpu.max both ways at the edges of
// the kernel's bounds, and that a lone quota reads with the default period.
func TestFormatParseCPUMaxRoundTrip(t *testing.T) {
	tests := []struct {
		quota  int64
		period uint64
		want   string
	}{
		{Unlimited, cgconfig.QuotaPeriod, "max 100000"},
		{50000, 100000, "50000 100000"},
		{kernelMinCFSUS, kernelMaxCFSPeriodUS, "1000 1000000"},
		{kernelMaxCFSQuotaUS, kernelMinCFSUS, "17592186044415 1000"},
		{math.MaxInt64, math.MaxUint64, "9223372036854775807 18446744073709551615"},
	}
	for _, tt := range tests {
		s := FormatCPUMax(tt.quota, tt.period)
		if s != tt.want {
			t.Errorf("FormatCPUMax(%d, %d) = %q, want %q", tt.quota, tt.period, s, tt.want)
		}
		q, p, err := ParseCPUMax(s)
		if err != nil || q != tt.quota || p != tt.period {
			t.Errorf("ParseCPUMax(%q) = %d, %d, %v; want %d, %d", s, q, p, err, tt.quota, tt.period)
		}
	}
	// A new cgroup shows the kernel's default period, which the derived
	// defaults must spell as the kernel does.
	if defaultCPUMax != "max 100000" || defaultCFSPeriod != "100000" {
		t.Errorf("defaultCPUMax = %q, defaultCFSPeriod = %q; want the kernel's \"max 100000\" and \"100000\"", defaultCPUMax, defaultCFSPeriod)
	}
	for _, s := range []string{"max", "25000"} {
		q, p, err := ParseCPUMax(s)
		want, _ := parseMax(s)
		if err != nil || q != want || p != cgconfig.QuotaPeriod {
			t.Errorf("ParseCPUMax(%q) = %d, %d, %v; want %d, %d", s, q, p, err, want, cgconfig.QuotaPeriod)
		}
	}
}

// TestParseCPUMaxBadInput checks that either half of cpu.max that is not a
// number (or "max" for the quota) is an error.
func TestParseCPUMaxBadInput(t *testing.T) {
	for _, s := range []string{"", "abc", "abc 100000", "50000 abc", "50000 -1", "max max", "50000  100000", "max 100000 1"} {
		if q, p, err := ParseCPUMax(s); err == nil {
			t.Errorf("ParseCPUMax(%q) = %d, %d, want an error", s, q, p)
		}
	}
}

// TestParseV1Limit checks the reading of memory.limit_in_bytes: the
// kernel's unlimited read-back and anything at or above it is Unlimited, as
// is the "-1" (or any negative number) a temp-dir tree holds after a write.
func TestParseV1Limit(t *testing.T) {
	tests := []struct {
		s    string
		want int64
	}{
		{"0", 0},
		{"4096", 4096},
		{strconv.FormatInt(cgconfig.V1UnlimitedMemory-1, 10), cgconfig.V1UnlimitedMemory - 1},
		{ffV1Unlimited, Unlimited},
		{"9223372036854775807", Unlimited},
		{"18446744073709551615", Unlimited},
		{"-1", Unlimited},
		{"-5", Unlimited},
		{"+4096", 4096},
	}
	for _, tt := range tests {
		if got, err := ParseV1Limit(tt.s); err != nil || got != tt.want {
			t.Errorf("ParseV1Limit(%q) = %d, %v; want %d", tt.s, got, err, tt.want)
		}
	}
	for _, s := range []string{"", "abc", "max", "1.5", "18446744073709551616", "-9223372036854775809"} {
		if got, err := ParseV1Limit(s); err == nil {
			t.Errorf("ParseV1Limit(%q) = %d, want an error", s, got)
		}
	}
}

// TestParseV1Quota checks that every negative cpu.cfs_quota_us reads as
// Unlimited and a number as itself.
func TestParseV1Quota(t *testing.T) {
	tests := []struct {
		s    string
		want int64
	}{
		{"-1", Unlimited},
		{"-5", Unlimited},
		{"0", 0},
		{"50000", 50000},
		{"9223372036854775807", math.MaxInt64},
	}
	for _, tt := range tests {
		if got, err := parseV1Quota(tt.s); err != nil || got != tt.want {
			t.Errorf("parseV1Quota(%q) = %d, %v; want %d", tt.s, got, err, tt.want)
		}
	}
	for _, s := range []string{"", "abc", "max", "99999999999999999999"} {
		if got, err := parseV1Quota(s); err == nil {
			t.Errorf("parseV1Quota(%q) = %d, want an error", s, got)
		}
	}
}

// ffReader returns a ParseValues reader over files, which also records the
// files asked for.
func ffReader(files map[string]string, asked *[]string) func(string) (string, bool, error) {
	return func(file string) (string, bool, error) {
		*asked = append(*asked, file)
		s, ok := files[file]
		return s, ok, nil
	}
}

// TestParseValues checks the reading of a whole cgroup on each version:
// the files a version has become fields, the ones it lacks stay nil, and
// the other version's files are not asked for.
func TestParseValues(t *testing.T) {
	tests := []struct {
		name    string
		version Version
		files   map[string]string
		want    Values
		asked   []string
	}{
		{
			name:    "v2 defaults",
			version: V2,
			files:   map[string]string{"cpu.weight": "100", "cpu.max": "max 100000", "memory.max": "max", "cpu.shares": "1024"},
			want:    Values{CPUWeight: mtPtr(uint64(100)), CPUQuota: mtPtr(Unlimited), CPUPeriod: mtPtr(uint64(100000)), MemoryLimit: mtPtr(Unlimited)},
			asked:   []string{"cpu.weight", "cpu.max", "memory.max"},
		},
		{
			name:    "v2 limits",
			version: V2,
			files:   map[string]string{"cpu.weight": "28", "cpu.max": "80000 50000", "memory.max": "209715200"},
			want:    Values{CPUWeight: mtPtr(uint64(28)), CPUQuota: mtPtr(int64(80000)), CPUPeriod: mtPtr(uint64(50000)), MemoryLimit: mtPtr(int64(200 << 20))},
			asked:   []string{"cpu.weight", "cpu.max", "memory.max"},
		},
		{
			name:    "v2 missing files",
			version: V2,
			files:   map[string]string{"memory.max": "4096"},
			want:    Values{MemoryLimit: mtPtr(int64(4096))},
			asked:   []string{"cpu.weight", "cpu.max", "memory.max"},
		},
		{
			name:    "v1 defaults",
			version: V1,
			files:   map[string]string{"cpu.shares": "1024", "cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": "-1", "memory.limit_in_bytes": ffV1Unlimited, "cpu.weight": "100"},
			want:    Values{CPUShares: mtPtr(uint64(1024)), CPUQuota: mtPtr(Unlimited), CPUPeriod: mtPtr(uint64(100000)), MemoryLimit: mtPtr(Unlimited)},
			asked:   []string{"cpu.shares", "cpu.cfs_period_us", "cpu.cfs_quota_us", "memory.limit_in_bytes"},
		},
		{
			name:    "v1 limits",
			version: V1,
			files:   map[string]string{"cpu.shares": "2", "cpu.cfs_period_us": "50000", "cpu.cfs_quota_us": "1000", "memory.limit_in_bytes": "4096"},
			want:    Values{CPUShares: mtPtr(uint64(2)), CPUQuota: mtPtr(int64(1000)), CPUPeriod: mtPtr(uint64(50000)), MemoryLimit: mtPtr(int64(4096))},
			asked:   []string{"cpu.shares", "cpu.cfs_period_us", "cpu.cfs_quota_us", "memory.limit_in_bytes"},
		},
		{
			name:    "v1 missing files",
			version: V1,
			want:    Values{},
			asked:   []string{"cpu.shares", "cpu.cfs_period_us", "cpu.cfs_quota_us", "memory.limit_in_bytes"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked []string
			got, err := ParseValues(tt.version, ffReader(tt.files, &asked))
			if err != nil {
				t.Fatalf("ParseValues: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.asked, asked); diff != "" {
				t.Errorf("files read (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseValuesErrors checks that ParseValues stops at the first file
// that fails, returns the fields read before it, names the file and its
// content in a *ContentError that unwraps to the parser's error, and
// passes a reader's own error through untouched.
func TestParseValuesErrors(t *testing.T) {
	tests := []struct {
		name    string
		version Version
		files   map[string]string
		file    string // the file the error names
		want    Values // the fields read before it
	}{
		{"v2 weight", V2, map[string]string{"cpu.weight": "abc", "cpu.max": "max 100000"}, "cpu.weight", Values{}},
		{"v2 cpu.max quota", V2, map[string]string{"cpu.weight": "28", "cpu.max": "lots 100000"}, "cpu.max", Values{CPUWeight: mtPtr(uint64(28))}},
		{"v2 cpu.max period", V2, map[string]string{"cpu.max": "max abc"}, "cpu.max", Values{}},
		{"v2 memory.max", V2, map[string]string{"cpu.weight": "28", "memory.max": "-"}, "memory.max", Values{CPUWeight: mtPtr(uint64(28))}},
		{"v1 shares", V1, map[string]string{"cpu.shares": "-2"}, "cpu.shares", Values{}},
		{"v1 period", V1, map[string]string{"cpu.shares": "2", "cpu.cfs_period_us": "x"}, "cpu.cfs_period_us", Values{CPUShares: mtPtr(uint64(2))}},
		{"v1 quota", V1, map[string]string{"cpu.cfs_quota_us": "max"}, "cpu.cfs_quota_us", Values{}},
		{"v1 limit", V1, map[string]string{"cpu.cfs_quota_us": "-1", "memory.limit_in_bytes": "max"}, "memory.limit_in_bytes", Values{CPUQuota: mtPtr(Unlimited)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked []string
			got, err := ParseValues(tt.version, ffReader(tt.files, &asked))
			var ce *ContentError
			if !errors.As(err, &ce) || ce.File != tt.file || ce.Content != tt.files[tt.file] {
				t.Fatalf("ParseValues error = %v, want a ContentError for %s %q", err, tt.file, tt.files[tt.file])
			}
			if !errors.Is(err, strconv.ErrSyntax) {
				t.Errorf("error %v does not unwrap to strconv.ErrSyntax", err)
			}
			if want := "parse " + tt.file + " " + strconv.Quote(tt.files[tt.file]) + ": "; len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
				t.Errorf("error text %q does not start with %q", err, want)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("fields before the error (-want +got):\n%s", diff)
			}
			if asked[len(asked)-1] != tt.file {
				t.Errorf("read %v after the failing file %s", asked, tt.file)
			}
		})
	}

	readErr := errors.New("read failed")
	var asked []string
	got, err := ParseValues(V2, func(file string) (string, bool, error) {
		asked = append(asked, file)
		if file == "cpu.max" {
			return "", false, readErr
		}
		return "7", true, nil
	})
	if err != readErr {
		t.Errorf("reader error came back as %v, want it as it is", err)
	}
	if diff := cmp.Diff(Values{CPUWeight: mtPtr(uint64(7))}, got); diff != "" {
		t.Errorf("fields before the reader error (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"cpu.weight", "cpu.max"}, asked); diff != "" {
		t.Errorf("files read (-want +got):\n%s", diff)
	}
}

// TestPlanSet checks the files Set writes and their content, in order, on
// each version: Unlimited as "max" or -1, and on v2 the half of cpu.max
// that v leaves nil kept as the file has it (the default when it has
// none).
func TestPlanSet(t *testing.T) {
	all := Values{
		CPUShares: mtPtr(uint64(819)), CPUWeight: mtPtr(uint64(28)),
		CPUQuota: mtPtr(int64(80000)), CPUPeriod: mtPtr(uint64(50000)), MemoryLimit: mtPtr(int64(200 << 20)),
	}
	tests := []struct {
		name    string
		version Version
		cpuMax  string // current cpu.max; "" for none
		v       Values
		want    []setFile
	}{
		{"v2 all", V2, "max 100000", all, []setFile{{"memory.max", "209715200"}, {"cpu.weight", "28"}, {"cpu.max", "80000 50000"}}},
		{"v2 unlimited", V2, "80000 50000", Values{MemoryLimit: mtPtr(Unlimited), CPUQuota: mtPtr(Unlimited)}, []setFile{{"memory.max", "max"}, {"cpu.max", "max 50000"}}},
		{"v2 period keeps quota", V2, "25000 50000", Values{CPUPeriod: mtPtr(uint64(100000))}, []setFile{{"cpu.max", "25000 100000"}}},
		{"v2 no cpu.max yet", V2, "", Values{CPUPeriod: mtPtr(uint64(50000))}, []setFile{{"cpu.max", "max 50000"}}},
		{"v2 nothing", V2, "max 100000", Values{CPUShares: mtPtr(uint64(2))}, nil},
		{"v1 all", V1, "", all, []setFile{{"memory.limit_in_bytes", "209715200"}, {"cpu.shares", "819"}, {"cpu.cfs_period_us", "50000"}, {"cpu.cfs_quota_us", "80000"}}},
		{"v1 unlimited", V1, "", Values{MemoryLimit: mtPtr(Unlimited), CPUQuota: mtPtr(Unlimited)}, []setFile{{"memory.limit_in_bytes", "-1"}, {"cpu.cfs_quota_us", "-1"}}},
		{"v1 nothing", V1, "", Values{CPUWeight: mtPtr(uint64(28))}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, n := planSet(tt.version, tt.v, func(file string) (string, bool) {
				if file != "cpu.max" || tt.cpuMax == "" {
					return "", false
				}
				return tt.cpuMax, true
			})
			got := plan[:n:n]
			if n == 0 {
				got = nil
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(setFile{})); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

// canonicalCase is one write and the kernel's answer to it: the content
// it reads back, or (errno set) the errno the write fails with.
type canonicalCase struct {
	version       Version
	file, content string
	want          string
	errno         syscall.Errno
}

// checkCanonical checks each write of tests over a file that held old.
func checkCanonical(t *testing.T, old string, tests []canonicalCase) {
	t.Helper()
	for _, tt := range tests {
		got, err := Canonical(tt.version, tt.file, tt.content, old)
		if tt.errno != 0 {
			if !errors.Is(err, tt.errno) {
				t.Errorf("%v %s %q: err = %v, want %v", tt.version, tt.file, tt.content, err, tt.errno)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%v %s %q = %q, %v; want %q", tt.version, tt.file, tt.content, got, err, tt.want)
		}
	}
}

// TestCanonicalParse checks the kernel's parsing of raw file content,
// which Set never produces but the kernel answers: text that is not a
// number is EINVAL, an overflowing number ERANGE (kstrtoull) or EINVAL
// (memparse), and read-only files take no writes.
func TestCanonicalParse(t *testing.T) {
	checkCanonical(t, "max 100000", []canonicalCase{
		{V2, "cpu.weight", "abc", "", syscall.EINVAL},
		{V2, "cpu.weight", "-1", "", syscall.EINVAL},
		{V2, "cpu.weight", "99999999999999999999", "", syscall.ERANGE},
		{V2, "cpu.max", "abc 100000", "", syscall.EINVAL},
		{V2, "cpu.max", "50000 abc", "", syscall.EINVAL},
		{V2, "cpu.max", "", "", syscall.EINVAL},
		{V2, "cpu.max", "50000", "50000 100000", 0}, // the period stays
		{V2, "cpu.max", "max 1000", "max 1000", 0},
		{V2, "memory.max", "abc", "", syscall.EINVAL},
		{V2, "memory.max", "99999999999999999999", "", syscall.EINVAL},
		{V2, "memory.max", "4097", "4096", 0},
		{V2, "memory.max", "9223372036854771712", "max", 0},
		{V2, "memory.current", "0", "", syscall.EINVAL},
		{V2, "cpu.shares", "1024", "", syscall.EINVAL},
		{V1, "cpu.shares", "abc", "", syscall.EINVAL},
		{V1, "cpu.shares", "-1", "", syscall.EINVAL},
		{V1, "cpu.shares", "99999999999999999999", "", syscall.ERANGE},
		{V1, "cpu.cfs_quota_us", "abc", "", syscall.EINVAL},
		{V1, "cpu.cfs_quota_us", "-5", "-1", 0},
		{V1, "cpu.cfs_quota_us", "99999999999999999999", "", syscall.ERANGE},
		{V1, "cpu.cfs_period_us", "abc", "", syscall.EINVAL},
		{V1, "memory.limit_in_bytes", "abc", "", syscall.EINVAL},
		{V1, "memory.limit_in_bytes", "-5", "", syscall.EINVAL},
		{V1, "memory.limit_in_bytes", "100000000", "99999744", 0},
		{V1, "memory.usage_in_bytes", "0", "", syscall.EINVAL},
	})
}

// TestCanonicalForms checks that the kernel reads back the number it was
// given, not the text: leading zeros and signs go, and an unaligned limit
// is rounded even when its text looks canonical.
func TestCanonicalForms(t *testing.T) {
	checkCanonical(t, "max 100000", []canonicalCase{
		{V2, "cpu.weight", "039", "39", 0},
		{V2, "cpu.weight", "+39", "39", 0},
		{V2, "cpu.max", "050000  0100000", "50000 100000", 0},
		{V2, "cpu.max", "max 100000", "max 100000", 0},
		{V2, "memory.max", "0004096", "4096", 0},
		{V2, "memory.max", "8191", "4096", 0},
		{V1, "memory.limit_in_bytes", "8191", "4096", 0},
		{V1, "memory.limit_in_bytes", "8192", "8192", 0},
		{V1, "cpu.shares", "0100", "100", 0},
		{V1, "cpu.shares", "1", "2", 0},
		{V1, "cpu.cfs_period_us", "0100000", "100000", 0},
		{V1, "cpu.cfs_quota_us", "+50000", "50000", 0},
		{V1, "cpu.cfs_quota_us", "-1", "-1", 0},
	})
}

// TestCanonicalEdges checks the kernel's read-back of writes at the edges
// of each file's range: what is clamped, rounded or shown as the unlimited
// token, and what is refused with which errno.
func TestCanonicalEdges(t *testing.T) {
	checkCanonical(t, "max 100000", []canonicalCase{
		{V2, "cpu.weight", "1", "1", 0},
		{V2, "cpu.weight", "10000", "10000", 0},
		{V2, "cpu.weight", "0", "", syscall.ERANGE},
		{V2, "cpu.weight", "10001", "", syscall.ERANGE},
		{V2, "cpu.weight", "", "", syscall.EINVAL},
		{V2, "cpu.max", "1000 1000", "1000 1000", 0},
		{V2, "cpu.max", "17592186044415 1000000", "17592186044415 1000000", 0},
		{V2, "cpu.max", "17592186044416 100000", "", syscall.EINVAL},
		{V2, "cpu.max", "999 100000", "", syscall.EINVAL},
		{V2, "cpu.max", "max 999", "", syscall.EINVAL},
		{V2, "cpu.max", "max 1000001", "", syscall.EINVAL},
		{V2, "cpu.max", "max", "max 100000", 0},
		{V2, "cpu.max", "-1 100000", "", syscall.EINVAL},
		{V2, "cpu.max", "max 100000 1", "", syscall.EINVAL},
		{V2, "memory.max", "0", "0", 0},
		{V2, "memory.max", "4095", "0", 0},
		{V2, "memory.max", "max", "max", 0},
		{V2, "memory.max", ffV1Unlimited, "max", 0},
		{V2, "memory.max", "18446744073709551615", "max", 0},
		{V2, "memory.max", "-1", "", syscall.EINVAL},
		{V1, "memory.limit_in_bytes", "-1", ffV1Unlimited, 0},
		{V1, "memory.limit_in_bytes", ffV1Unlimited, ffV1Unlimited, 0},
		{V1, "memory.limit_in_bytes", "9223372036854775807", ffV1Unlimited, 0},
		{V1, "memory.limit_in_bytes", "max", "", syscall.EINVAL},
		{V1, "cpu.shares", "0", "2", 0},
		{V1, "cpu.shares", "262145", "262144", 0},
		{V1, "cpu.shares", "18446744073709551615", "262144", 0},
		{V1, "cpu.cfs_period_us", "999", "", syscall.EINVAL},
		{V1, "cpu.cfs_period_us", "1000000", "1000000", 0},
		{V1, "cpu.cfs_period_us", "1000001", "", syscall.EINVAL},
		{V1, "cpu.cfs_quota_us", "0", "", syscall.EINVAL},
		{V1, "cpu.cfs_quota_us", "-9223372036854775808", "-1", 0},
		{V1, "cpu.cfs_quota_us", "17592186044415", "17592186044415", 0},
		{V1, "cpu.cfs_quota_us", "17592186044416", "", syscall.EINVAL},
		{V1, "cpu.weight", "100", "", syscall.EINVAL},
		{V1, "memory.max", "max", "", syscall.EINVAL},
		{V2, "memory.events", "oom 1", "", syscall.EINVAL},
	})
}

// TestCanonicalCPUMaxKeepsOldPeriod checks that a quota written alone to
// cpu.max keeps the period the file had, and that the default period
// stands in when the old content has none.
func TestCanonicalCPUMaxKeepsOldPeriod(t *testing.T) {
	for _, old := range []string{"max 50000", "", "garbage"} {
		want := "25000 50000"
		if old != "max 50000" {
			want = "25000 100000"
		}
		checkCanonical(t, old, []canonicalCase{{V2, "cpu.max", "25000", want, 0}})
	}
}

// TestPlannedContentReadsBack checks that what Set plans for a value is
// content the kernel shows as the same value, so that a Set after a Get of
// its own values plans writes that change nothing.
func TestPlannedContentReadsBack(t *testing.T) {
	values := []Values{
		{CPUShares: mtPtr(uint64(1024)), CPUWeight: mtPtr(uint64(100)), CPUQuota: mtPtr(Unlimited), CPUPeriod: mtPtr(uint64(100000)), MemoryLimit: mtPtr(Unlimited)},
		{CPUShares: mtPtr(uint64(2)), CPUWeight: mtPtr(uint64(1)), CPUQuota: mtPtr(int64(1000)), CPUPeriod: mtPtr(uint64(1000)), MemoryLimit: mtPtr(int64(0))},
		{CPUShares: mtPtr(uint64(262144)), CPUWeight: mtPtr(uint64(10000)), CPUQuota: mtPtr(int64(kernelMaxCFSQuotaUS)), CPUPeriod: mtPtr(uint64(1000000)), MemoryLimit: mtPtr(int64(300 << 20))},
	}
	for _, version := range []Version{V1, V2} {
		for _, v := range values {
			files := map[string]string{}
			read := func(file string) (string, bool) {
				s, ok := files[file]
				return s, ok
			}
			plan, n := planSet(version, v, read)
			for _, w := range plan[:n] {
				c, err := Canonical(version, w.file, w.content, files[w.file])
				if err != nil {
					t.Fatalf("%v %s %q: %v", version, w.file, w.content, err)
				}
				files[w.file] = c
			}
			got, err := ParseValues(version, func(file string) (string, bool, error) {
				s, ok := files[file]
				return s, ok, nil
			})
			if err != nil {
				t.Fatalf("%v: ParseValues(%v): %v", version, files, err)
			}
			want := v
			if version == V2 {
				want.CPUShares = nil
			} else {
				want.CPUWeight = nil
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%v: read back (-set +got):\n%s", version, diff)
			}
			again, m := planSet(version, got, read)
			for _, w := range again[:m] {
				if c, err := Canonical(version, w.file, w.content, files[w.file]); err != nil || c != files[w.file] {
					t.Errorf("%v: re-planned %s = %q would change %q (%q, %v)", version, w.file, w.content, files[w.file], c, err)
				}
			}
		}
	}
}

// FuzzCanonical writes arbitrary content to each writable file and checks
// what must hold for any kernel read-back: writing the read-back again
// shows it unchanged, and Get reads it without error.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{"0", "1", "-1", "max", "+39", "050000  0100000", "50000", "4097", "9223372036854775807", "18446744073709551615", " ", "abc"} {
		f.Add(s, "max 100000")
	}
	files := map[Version][]string{
		V2: {FileCPUWeight, FileCPUMax, FileMemoryMax},
		V1: {FileCPUShares, FileCFSPeriod, FileCFSQuota, FileMemoryLimit},
	}
	f.Fuzz(func(t *testing.T, content, old string) {
		for version, names := range files {
			for _, file := range names {
				c, err := Canonical(version, file, content, old)
				if err != nil {
					if !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ERANGE) {
						t.Fatalf("%v %s %q: error %v is not EINVAL or ERANGE", version, file, content, err)
					}
					continue
				}
				if again, err := Canonical(version, file, c, c); err != nil || again != c {
					t.Fatalf("%v %s %q reads %q, which rewritten reads %q, %v", version, file, content, c, again, err)
				}
				if _, err := ParseValues(version, func(f string) (string, bool, error) {
					return c, f == file, nil
				}); err != nil {
					t.Fatalf("%v %s %q reads %q, which Get cannot parse: %v", version, file, content, c, err)
				}
			}
		}
	})
}

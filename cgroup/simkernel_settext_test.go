package cgroup

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"strconv"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// This file keeps SimKernel.Set as it was before it planned and checked its
// writes in numbers (plan, simCanonical): setByText formats each planned
// content as text, asks Canonical, the formats' own reading of a write,
// and parses the answer back. TestSimKernelSetMatchesText and
// FuzzSimKernelSetValues hold Set and SetValues to it.

// parseSetting reads content written to file f back into numbers: the
// inverse of appendSetting, for every content appendPlan makes from
// Values and from the files SimKernel shows. Anything else is a
// programming error.
func parseSetting(f simFile, content string) simSetting {
	var s simSetting
	var err error
	switch f {
	case simCPUWeight, simCPUShares, simCFSPeriod:
		var u uint64
		u, err = strconv.ParseUint(content, 10, 64)
		s.value = int64(u)
	case simMemoryMax:
		s.value, err = parseMax(content)
	case simCPUMax:
		s.value, s.period, err = ParseCPUMax(content)
	default: // simCFSQuota, simMemoryLimit
		s.value, err = strconv.ParseInt(content, 10, 64)
	}
	if err != nil {
		// err quotes a copy of content, so that content does not escape
		// and Set can plan on its stack.
		panic(fmt.Sprintf("cgroup: SimKernel cannot read back a write to %s: %v", simFileNames[f], err))
	}
	return s
}

// setByText is SimKernel.Set as it was, working on the texts of the
// contents: the reference Set and SetValues are held to.
func (m *SimKernel) setByText(path string, v Values) ([]Write, error) {
	m.mu.Lock()
	n, err := m.lookup("set", path)
	if err != nil {
		m.mu.Unlock()
		return nil, err
	}
	var planBuf [128]byte
	buf, plan, count := appendPlan(planBuf[:0], m.version, v, func(file string) (string, bool) {
		f, ok := simFileNamed(m.version, file)
		if !ok {
			return "", false
		}
		return fileText(n, f), true
	})
	var writes []Write
	var killed []string
	var failed error
	start := 0
	for _, p := range plan[:count] {
		content := buf[start:p.end]
		start = p.end
		f, _ := simFileNamed(m.version, p.file)
		oldSetting := n.setting(f)
		var oldBuf [48]byte
		old := appendSetting(oldBuf[:0], f, oldSetting)
		canon, err := Canonical(m.version, p.file, string(content), string(old))
		if err == nil && canon == string(old) {
			continue
		}
		if err == nil {
			killed, err = m.apply(n, f, parseSetting(f, canon), killed)
		}
		newText, oldText := writeTexts(content, old)
		m.writes, m.writeNext = pushRing(m.writes, m.writeNext, m.writeLimit, simWrite{
			node:      n,
			new:       parseSetting(f, newText),
			oldValue:  oldSetting.value,
			oldPeriod: uint32(oldSetting.period),
			file:      f,
			errno:     simErrno(err),
		})
		writes = append(writes, Write{Path: path, File: p.file, Old: oldText, New: newText, Err: err})
		if err != nil {
			failed = fmt.Errorf("write %s/%s: %w", path, p.file, err)
			break
		}
	}
	fns := m.oomFns
	m.mu.Unlock()
	notify(fns, killed)
	return writes, failed
}

// setTrio is three equal kernels driven through the same calls: ref by
// setByText, set by Set, values by SetValues; each keeps the OOM kills it
// reported.
type setTrio struct {
	version          Version
	ref, set, values *SimKernel
	kills            [3][]string
}

// newSetTrio builds the hierarchy the differential tests write to: a pod
// cgroup with a CFS quota and a memory limit, three children below it, and
// memory in use, so that writes can fail on bandwidth (v1), below usage
// (EBUSY on v1) and OOM-kill (v2).
func newSetTrio(t testing.TB, version Version, opts ...SimKernelOption) *setTrio {
	tr := &setTrio{version: version}
	ks := []**SimKernel{&tr.ref, &tr.set, &tr.values}
	for i, k := range ks {
		m := NewSimKernel(version, append([]SimKernelOption{WithHostMemory(1 << 34)}, opts...)...)
		m.OnOOMKill(func(path string) { tr.kills[i] = append(tr.kills[i], path) })
		for _, p := range []string{"pod/c/e", "pod/d"} {
			if err := m.Create(p); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := m.Set("pod", Values{CPUQuota: mtPtr(int64(200000)), MemoryLimit: mtPtr(int64(1 << 30))}); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Set("pod/c", Values{CPUQuota: mtPtr(int64(50000))}); err != nil {
			t.Fatal(err)
		}
		for p, b := range map[string]int64{"pod/c": 64 << 20, "pod/c/e": 8 << 20, "pod/d": 1 << 20} {
			if err := m.SetUsage(p, b); err != nil {
				t.Fatal(err)
			}
		}
		*k = m
	}
	return tr
}

// setOutcome counts the kinds of outcome the differential tests met, so
// that they can show they met every kind.
type setOutcome map[string]int

// do makes one Set through each path and fails t where they differ: the
// writes and error Set returns against the reference's, SetValues' error
// and failed file against them, and then the kernels' whole state.
func (tr *setTrio) do(t testing.TB, path string, v Values, seen setOutcome) {
	t.Helper()
	wantWrites, wantErr := tr.ref.setByText(path, v)
	gotWrites, gotErr := tr.set.Set(path, v)
	failedFile, valuesErr := tr.values.SetValues(path, v)
	desc := fmt.Sprintf("%v Set(%q, %v)", tr.version, path, v)
	if !reflect.DeepEqual(gotWrites, wantWrites) {
		t.Fatalf("%s writes:\n%s", desc, cmp.Diff(wantWrites, gotWrites))
	}
	if !sameError(gotErr, wantErr) || !sameError(valuesErr, wantErr) {
		t.Fatalf("%s: Set error %v, SetValues error %v, want %v", desc, gotErr, valuesErr, wantErr)
	}
	wantFile := ""
	if wantErr != nil && len(wantWrites) > 0 {
		wantFile = wantWrites[len(wantWrites)-1].File
	}
	if failedFile != wantFile {
		t.Fatalf("%s: SetValues failed file %q, want %q", desc, failedFile, wantFile)
	}
	tr.same(t, desc)
	if seen != nil {
		seen[outcomeOf(wantWrites, wantErr, len(tr.kills[0]))]++
	}
}

// usage sets a cgroup's usage on the three kernels alike.
func (tr *setTrio) usage(t testing.TB, path string, bytes int64) {
	t.Helper()
	errs := [3]error{tr.ref.SetUsage(path, bytes), tr.set.SetUsage(path, bytes), tr.values.SetUsage(path, bytes)}
	if !sameError(errs[1], errs[0]) || !sameError(errs[2], errs[0]) {
		t.Fatalf("SetUsage(%q, %d) = %v", path, bytes, errs)
	}
	tr.same(t, fmt.Sprintf("SetUsage(%q, %d)", path, bytes))
}

// same fails t unless the three kernels hold the same cgroups with the same
// files, the same write log and reported the same OOM kills.
func (tr *setTrio) same(t testing.TB, after string) {
	t.Helper()
	want := tr.ref.Paths()
	for i, m := range []*SimKernel{tr.set, tr.values} {
		if diff := cmp.Diff(want, m.Paths()); diff != "" {
			t.Fatalf("after %s, kernel %d's cgroups differ:\n%s", after, i+1, diff)
		}
		for _, p := range want {
			if diff := cmp.Diff(tr.ref.Files(p), m.Files(p)); diff != "" {
				t.Fatalf("after %s, kernel %d's files of %q differ:\n%s", after, i+1, p, diff)
			}
		}
		if w, g := tr.ref.Writes(), m.Writes(); !reflect.DeepEqual(g, w) {
			t.Fatalf("after %s, kernel %d's write log differs:\n%s", after, i+1, cmp.Diff(w, g))
		}
		if !reflect.DeepEqual(tr.kills[i+1], tr.kills[0]) {
			t.Fatalf("after %s, kernel %d killed %q, want %q", after, i+1, tr.kills[i+1], tr.kills[0])
		}
	}
}

// sameError reports whether two errors say the same and wrap the same
// errno, if any.
func sameError(a, b error) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	if a == nil {
		return true
	}
	var ea, eb syscall.Errno
	return a.Error() == b.Error() && errors.As(a, &ea) == errors.As(b, &eb) && ea == eb &&
		errors.Is(a, ErrInvalidPath) == errors.Is(b, ErrInvalidPath) && errors.Is(a, ErrNotExist) == errors.Is(b, ErrNotExist)
}

// outcomeOf names what a Set did, for setOutcome.
func outcomeOf(ws []Write, err error, kills int) string {
	switch {
	case err == nil && len(ws) == 0:
		return "nothing to write"
	case err == nil:
		return "written"
	case len(ws) == 0:
		return "no cgroup"
	}
	return ws[len(ws)-1].Err.(syscall.Errno).Error()
}

// Edge values of the fields, around the kernel's bounds and the model's
// state, and the paths of newSetTrio's hierarchy with some that are not.
var (
	edgeU64 = []uint64{0, 1, 2, 3, 9, 10, 99, 100, 101, 999, 1000, 1001, 1024, 10000, 10001, 50000, 100000, 262144, 262145,
		1000000, 1000001, 1 << 32, 1<<32 + 1000, 1 << 63, math.MaxUint64}
	edgeQuota = []int64{-1, -2, math.MinInt64, 0, 1, 999, 1000, 1001, 10000, 50000, 50001, 100000, 200000, 200001, 1000000,
		1<<44 - 1, 1 << 44, math.MaxInt64}
	edgeMemory = []int64{-1, -2, math.MinInt64, 0, 1, 4095, 4096, 4097, 1 << 20, 8<<20 - 1, 8 << 20, 64<<20 + 4095, 73 << 20,
		100 << 20, 1 << 30, 1<<30 + 1, 1 << 40, cgconfig.V1UnlimitedMemory - 1, cgconfig.V1UnlimitedMemory, cgconfig.V1UnlimitedMemory + 1, math.MaxInt64}
	setPaths = []string{"pod", "pod/c", "pod/c/e", "pod/d", "", "missing", "pod/x", "/pod", "pod/../d", "pod//c"}
)

// randomValues draws Values whose fields are each set or not, from the
// edge values or at random.
func randomValues(rng *rand.Rand) Values {
	u64 := func() *uint64 {
		if rng.Intn(4) == 0 {
			return mtPtr(rng.Uint64() >> uint(rng.Intn(64)))
		}
		return mtPtr(edgeU64[rng.Intn(len(edgeU64))])
	}
	i64 := func(edges []int64) *int64 {
		if rng.Intn(4) == 0 {
			return mtPtr(int64(rng.Uint64()>>uint(rng.Intn(64))) * int64(1-2*rng.Intn(2)))
		}
		return mtPtr(edges[rng.Intn(len(edges))])
	}
	var v Values
	if rng.Intn(2) == 0 {
		v.CPUShares = u64()
	}
	if rng.Intn(2) == 0 {
		v.CPUWeight = u64()
	}
	if rng.Intn(2) == 0 {
		v.CPUQuota = i64(edgeQuota)
	}
	if rng.Intn(2) == 0 {
		v.CPUPeriod = u64()
	}
	if rng.Intn(2) == 0 {
		v.MemoryLimit = i64(edgeMemory)
	}
	return v
}

// TestSimKernelSetMatchesText drives Set, SetValues and the text Set they
// replaced (setByText) through the same random story on both versions, with
// a short write log and the default one: random values around the kernel's
// bounds on the cgroups of a hierarchy with memory in use, missing and
// invalid paths, and usage changes between them. Every Set must return the
// same writes and errors, SetValues the same error and the failed write's
// file, and the kernels must end each step alike. It checks that the story
// met every kind of failure a write can have: EINVAL, ERANGE (v2), EBUSY
// (v1) and OOM kills (v2).
func TestSimKernelSetMatchesText(t *testing.T) {
	for _, version := range []Version{V1, V2} {
		for _, limit := range []int{5, 0} {
			rng := rand.New(rand.NewSource(int64(version)*10 + int64(limit)))
			tr := newSetTrio(t, version, WithWriteLimit(limit))
			seen := setOutcome{}
			for step := 0; step < 1500; step++ {
				if rng.Intn(10) == 0 {
					p := setPaths[rng.Intn(4)]
					tr.usage(t, p, edgeMemory[rng.Intn(len(edgeMemory))]&(1<<31-1))
					continue
				}
				tr.do(t, setPaths[rng.Intn(len(setPaths))], randomValues(rng), seen)
			}
			want := []string{"nothing to write", "written", "no cgroup", syscall.EINVAL.Error()}
			if version == V1 {
				want = append(want, syscall.EBUSY.Error())
			} else {
				want = append(want, syscall.ERANGE.Error())
				if len(tr.kills[0]) == 0 {
					t.Errorf("%v: the story OOM-killed nothing", version)
				}
			}
			for _, o := range want {
				if seen[o] == 0 {
					t.Errorf("%v, log limit %d: no Set ended with %q (seen %v)", version, limit, o, seen)
				}
			}
		}
	}
}

// FuzzSimKernelSetValues is TestSimKernelSetMatchesText on one Set of
// arbitrary values: Set, SetValues and the text Set (setByText) must agree
// on what they return and leave behind, after an arbitrary usage of one
// cgroup.
func FuzzSimKernelSetValues(f *testing.F) {
	f.Add(true, uint8(1), uint8(31), uint64(512), uint64(39), int64(50000), uint64(100000), int64(64<<20), int64(32<<20))
	f.Add(false, uint8(1), uint8(31), uint64(0), uint64(0), int64(999), uint64(100000), int64(-1), int64(0))
	f.Fuzz(func(t *testing.T, v2 bool, pathIndex, mask uint8, shares, weight uint64, quota int64, period uint64, memLimit, usage int64) {
		version := V1
		if v2 {
			version = V2
		}
		tr := newSetTrio(t, version)
		if usage >= 0 {
			tr.usage(t, setPaths[int(pathIndex/16)%4], usage%(1<<31))
		}
		v := maskedValues(mask, shares, weight, quota, period, memLimit)
		path := setPaths[int(pathIndex)%len(setPaths)]
		tr.do(t, path, v, nil)
		// Once more: a Set that succeeded now writes nothing, one that
		// failed fails again, alike.
		tr.do(t, path, v, nil)
	})
}

// BenchmarkSimKernelSetResize is one pod cgroup resize on the simulated
// kernel, alternating between two sizes as BenchmarkResizeCycleTyped's
// target does (memory, cpu weight or shares, and the quota): through the
// text Set it replaced (text), Set, and SetValues.
func BenchmarkSimKernelSetResize(b *testing.B) {
	for _, version := range []Version{V1, V2} {
		sizes := [2]Values{
			{CPUShares: mtPtr(uint64(614)), CPUWeight: mtPtr(uint64(24)), CPUQuota: mtPtr(int64(90000)), CPUPeriod: mtPtr(uint64(100000)), MemoryLimit: mtPtr(int64(512 << 20))},
			{CPUShares: mtPtr(uint64(512)), CPUWeight: mtPtr(uint64(20)), CPUQuota: mtPtr(int64(60000)), CPUPeriod: mtPtr(uint64(100000)), MemoryLimit: mtPtr(int64(384 << 20))},
		}
		ways := []struct {
			name string
			set  func(m *SimKernel, path string, v Values) error
		}{
			{"text", func(m *SimKernel, path string, v Values) error { _, err := m.setByText(path, v); return err }},
			{"Set", func(m *SimKernel, path string, v Values) error { _, err := m.Set(path, v); return err }},
			{"SetValues", func(m *SimKernel, path string, v Values) error { _, err := m.SetValues(path, v); return err }},
		}
		for _, way := range ways {
			b.Run(fmt.Sprintf("%v/%s", version, way.name), func(b *testing.B) {
				m := NewSimKernel(version)
				path := "kubepods/burstable/pod0123456789abcdef0123456789abcdef"
				mtCreate(b, m, path)
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					if err := way.set(m, path, sizes[i%2]); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

package cgroup

import (
	"errors"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// simInvariants checks the model's bookkeeping: each cgroup's
// hierarchical usage is its own plus its children's, no cgroup uses more
// than its limit, the usage and limit files say what the numbers say, and
// every cgroup is listed once among its parent's children.
func simInvariants(m *SimKernel) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	usageFile, limitFile := simMemoryCurrent, simMemoryMax
	if m.version == V1 {
		usageFile, limitFile = simMemoryUsage, simMemoryLimit
	}
	for path, n := range m.nodes {
		// lookup and Exists rely on it.
		if err := simCheckPath(path); err != nil {
			return err
		}
		sum := n.own
		for c := n.child; c != nil; c = c.next {
			sum += c.hier
		}
		if n.own < 0 || n.hier != sum {
			return errors.New(path + ": hierarchical usage " + strconv.FormatInt(n.hier, 10) + " != own plus children " + strconv.FormatInt(sum, 10))
		}
		if n.hier > m.effLimit(n) {
			return errors.New(path + ": usage above the limit")
		}
		if got := fileText(n, usageFile); got != strconv.FormatInt(n.hier, 10) {
			return errors.New(path + ": " + simFileNames[usageFile] + " = " + got)
		}
		want := strconv.FormatInt(n.limit, 10)
		if m.version == V2 && n.limit == cgconfig.V1UnlimitedMemory {
			want = "max"
		}
		if got := fileText(n, limitFile); got != want {
			return errors.New(path + ": " + simFileNames[limitFile] + " = " + got + ", limit " + want)
		}
	}
	// The lists of children hold every cgroup once, below its parent.
	var listed func(n *simNode) (int, error)
	listed = func(n *simNode) (int, error) {
		if m.nodes[n.path] != n {
			return 0, errors.New(n.path + ": listed as a child but not a cgroup")
		}
		count := 1
		for c := n.child; c != nil; c = c.next {
			if c.parent != n {
				return 0, errors.New(c.path + ": listed below " + n.path + ", not its parent")
			}
			k, err := listed(c)
			if err != nil {
				return 0, err
			}
			count += k
		}
		return count, nil
	}
	count, err := listed(m.nodes[""])
	if err == nil && count != len(m.nodes) {
		err = errors.New(strconv.Itoa(len(m.nodes)) + " cgroups, " + strconv.Itoa(count) + " listed below the root")
	}
	return err
}

// maskedValues is the fuzz targets' Values: the fields whose bit is set
// in mask (shares, weight, quota, period, memory limit from bit 0 up).
func maskedValues(mask uint8, shares, weight uint64, quota int64, period uint64, memLimit int64) Values {
	var v Values
	if mask&1 != 0 {
		v.CPUShares = &shares
	}
	if mask&2 != 0 {
		v.CPUWeight = &weight
	}
	if mask&4 != 0 {
		v.CPUQuota = &quota
	}
	if mask&8 != 0 {
		v.CPUPeriod = &period
	}
	if mask&16 != 0 {
		v.MemoryLimit = &memLimit
	}
	return v
}

// FuzzSimKernelSet sets arbitrary values on an arbitrary path of a hierarchy
// with memory in use, and checks what must hold whatever the input: no
// panic; an invalid path is rejected with ErrInvalidPath and changes
// nothing; each successful write leaves the kernel's reading of what was
// written; a rejected write leaves its file as it was and is the last
// write; a successful Set repeated writes nothing; the usage bookkeeping
// stays consistent.
func FuzzSimKernelSet(f *testing.F) {
	f.Add(true, "pod", uint8(31), uint64(512), uint64(39), int64(50000), uint64(100000), int64(64<<20), int64(32<<20))
	f.Add(false, "pod/c", uint8(31), uint64(0), uint64(0), int64(999), uint64(100000), int64(-1), int64(0))
	f.Add(true, "pod/../x", uint8(1), uint64(1), uint64(1), int64(1), uint64(1), int64(1), int64(1))
	f.Fuzz(func(t *testing.T, v2 bool, path string, mask uint8, shares, weight uint64, quota int64, period uint64, memLimit, usage int64) {
		version := V1
		if v2 {
			version = V2
		}
		m := NewSimKernel(version, WithHostMemory(1<<40))
		mtCreate(t, m, "pod/c")
		mtCreate(t, m, "pod/d")
		mtSet(t, m, "pod", Values{CPUQuota: mtPtr(int64(200000)), MemoryLimit: mtPtr(int64(1 << 30))})
		mtUsage(t, m, "pod/d", 1<<20)
		if usage >= 0 {
			mtUsage(t, m, "pod/c", usage%(1<<31))
		}
		v := maskedValues(mask, shares, weight, quota, period, memLimit)

		valid := simCheckPath(path) == nil
		if valid {
			if err := m.Create(path); err != nil {
				t.Fatalf("Create(%q) of a valid path: %v", path, err)
			}
		}
		paths := m.Paths()
		before := m.Files(path)
		log := len(m.Writes())
		ws, err := m.Set(path, v)
		if !valid {
			if !errors.Is(err, ErrInvalidPath) || len(ws) != 0 {
				t.Fatalf("Set(%q) on an invalid path = %v, %v", path, ws, err)
			}
			if diff := cmp.Diff(paths, m.Paths()); diff != "" || len(m.Writes()) != log {
				t.Fatalf("an invalid path changed the hierarchy or the log:\n%s", diff)
			}
			return
		}
		after := m.Files(path)
		if diff := cmp.Diff(ws, m.Writes()[log:], cmpopts.EquateEmpty(), cmp.Comparer(func(a, b error) bool { return errors.Is(a, b) })); diff != "" {
			t.Fatalf("Writes() differs from the returned writes:\n%s", diff)
		}
		for i, w := range ws {
			if w.Err != nil {
				if i != len(ws)-1 || err == nil || !errors.Is(err, w.Err) {
					t.Fatalf("failed write %d of %d is not last or not the error: %+v, %v", i, len(ws), w, err)
				}
				if after[w.File] != before[w.File] {
					t.Fatalf("rejected write of %s changed it: %q -> %q", w.File, before[w.File], after[w.File])
				}
				continue
			}
			canon, cerr := Canonical(version, w.File, w.New, w.Old)
			if cerr != nil || after[w.File] != canon || w.Old != before[w.File] {
				t.Fatalf("write %+v: file now %q, kernel reading %q (%v), before %q", w, after[w.File], canon, cerr, before[w.File])
			}
		}
		if err != nil && (len(ws) == 0 || ws[len(ws)-1].Err == nil) {
			t.Fatalf("Set failed with %v but no write failed: %+v", err, ws)
		}
		if err == nil {
			if again, err := m.Set(path, v); err != nil || len(again) != 0 {
				t.Fatalf("repeating a successful Set = %+v, %v; want no writes", again, err)
			}
		}
		if _, err := m.Get(path); err != nil {
			t.Fatalf("Get after Set: %v", err)
		}
		if err := simInvariants(m); err != nil {
			t.Fatal(err)
		}
	})
}

package cgroup

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var _ Manager = (*FaultInjector)(nil)

// fiPath matches exactly one path.
func fiPath(p string) func(string) bool {
	return func(path string) bool { return path == p }
}

// fiSetup returns an injector over a v2 SimKernel with cgroups a and b.
func fiSetup(t *testing.T) (*FaultInjector, *SimKernel) {
	t.Helper()
	m := NewSimKernel(V2)
	mtCreate(t, m, "a")
	mtCreate(t, m, "b")
	return NewFaultInjector(m), m
}

// fiWeight is a Set that changes cpu.weight to w.
func fiWeight(w uint64) Values { return Values{CPUWeight: mtPtr(w)} }

func TestFaultInjectorTimes(t *testing.T) {
	errBoom := errors.New("boom")
	for _, times := range []int{1, 2, 3} {
		f, m := fiSetup(t)
		f.Inject(nil, errBoom, times)
		for i := 0; i < times+2; i++ {
			_, err := f.Set("a", fiWeight(uint64(10+i)))
			if wantFail := i < times; wantFail != errors.Is(err, errBoom) {
				t.Errorf("times=%d call %d: err = %v, want failure %v", times, i, err, wantFail)
			}
		}
		if got := len(m.Writes()); got != 2 {
			t.Errorf("times=%d: the SimKernel saw %d writes, want the 2 after the faults", times, got)
		}
		if f.Pending() != 0 {
			t.Errorf("times=%d: Pending() = %d after use, want 0", times, f.Pending())
		}
	}
	f, m := fiSetup(t)
	f.Inject(nil, errBoom, 0)
	mtSet(t, f, "a", fiWeight(5))
	if len(m.Writes()) != 1 {
		t.Error("times=0 injected a fault")
	}
}

func TestFaultInjectorFailedSet(t *testing.T) {
	f, m := fiSetup(t)
	mtSet(t, m, "a", Values{MemoryLimit: mtPtr(int64(64 * mib))})
	before := m.Files("a")
	f.Inject(fiPath("a"), syscall.EIO, 1)
	// memory.max does not change, so cpu.weight is the first file.
	ws, err := f.Set("a", Values{MemoryLimit: mtPtr(int64(64 * mib)), CPUWeight: mtPtr(uint64(7)), CPUQuota: mtPtr(int64(5000))})
	if !errors.Is(err, syscall.EIO) {
		t.Fatalf("err = %v, want EIO", err)
	}
	if want := "write a/cpu.weight: " + syscall.EIO.Error(); err.Error() != want {
		t.Errorf("error text = %q, want %q", err.Error(), want)
	}
	want := []Write{{Path: "a", File: "cpu.weight", Old: "100", New: "7", Err: syscall.EIO}}
	if diff := cmp.Diff(want, ws, cmp.Comparer(func(a, b error) bool { return errors.Is(a, b) })); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, m.Files("a")); diff != "" {
		t.Errorf("a failed Set changed files (-before +after):\n%s", diff)
	}
	if len(m.Writes()) != 1 {
		t.Errorf("the SimKernel logged %d writes, want only the setup write", len(m.Writes()))
	}
}

func TestFaultInjectorMatching(t *testing.T) {
	f, _ := fiSetup(t)
	f.Inject(fiPath("a"), syscall.EIO, 1)
	mtSet(t, f, "b", fiWeight(5)) // no match: passes
	if f.Pending() != 1 {
		t.Fatalf("a Set on another path used the fault")
	}
	if _, err := f.Set("a", fiWeight(5)); !errors.Is(err, syscall.EIO) {
		t.Errorf("Set on the matching path = %v, want EIO", err)
	}
}

func TestFaultInjectorOrder(t *testing.T) {
	errA, errAll := errors.New("a only"), errors.New("every path")
	f, _ := fiSetup(t)
	f.Inject(fiPath("a"), errA, 1)
	f.Inject(nil, errAll, 2)
	steps := []struct {
		path string
		want error
	}{
		{"b", errAll}, // the first fault does not match b
		{"a", errA},   // the first injected matching fault goes first
		{"a", errAll},
		{"a", nil},
		{"b", nil},
	}
	for i, s := range steps {
		_, err := f.Set(s.path, fiWeight(uint64(20+i)))
		if s.want == nil && err != nil || s.want != nil && !errors.Is(err, s.want) {
			t.Errorf("step %d Set(%s) = %v, want %v", i, s.path, err, s.want)
		}
	}
}

func TestFaultInjectorNoOpSetDoesNotConsume(t *testing.T) {
	f, m := fiSetup(t)
	mtSet(t, m, "a", Values{CPUWeight: mtPtr(uint64(50)), MemoryLimit: mtPtr(int64(mib))})
	f.Inject(nil, syscall.EIO, 1)
	ws, err := f.Set("a", Values{CPUWeight: mtPtr(uint64(50)), MemoryLimit: mtPtr(int64(mib))})
	if err != nil || len(ws) != 0 {
		t.Fatalf("no-op Set = %+v, %v; want no writes and no error", ws, err)
	}
	// An unaligned limit that reads back as the current one is no change
	// either, as the kernel rounds it to pages.
	if _, err := f.Set("a", Values{MemoryLimit: mtPtr(int64(mib + 100))}); err != nil {
		t.Fatalf("Set of a limit that rounds to the current one = %v", err)
	}
	if f.Pending() != 1 {
		t.Fatalf("no-op Sets used the fault: Pending() = %d", f.Pending())
	}
	if _, err := f.Set("a", Values{CPUWeight: mtPtr(uint64(51))}); !errors.Is(err, syscall.EIO) {
		t.Errorf("changing Set = %v, want EIO", err)
	}
}

func TestFaultInjectorMissingCgroup(t *testing.T) {
	f, _ := fiSetup(t)
	f.Inject(nil, syscall.EIO, 1)
	if _, err := f.Set("gone", fiWeight(5)); !errors.Is(err, ErrNotExist) {
		t.Errorf("Set on a missing cgroup = %v, want ErrNotExist from the SimKernel", err)
	}
	if f.Pending() != 1 {
		t.Error("a Set on a missing cgroup used the fault")
	}
}

func TestFaultInjectorNilError(t *testing.T) {
	f, _ := fiSetup(t)
	f.Inject(nil, nil, 1)
	if _, err := f.Set("a", fiWeight(5)); !errors.Is(err, ErrInjected) {
		t.Errorf("err = %v, want ErrInjected", err)
	}
}

func TestFaultInjectorV1(t *testing.T) {
	m := NewSimKernel(V1)
	mtCreate(t, m, "p")
	f := NewFaultInjector(m)
	f.Inject(nil, syscall.EIO, 1)
	// The v1 unlimited memory (-1) matches the kernel's read-back, so the
	// first file to change is cpu.cfs_quota_us.
	ws, err := f.Set("p", Values{MemoryLimit: mtPtr(Unlimited), CPUShares: mtPtr(uint64(1024)), CPUQuota: mtPtr(int64(20000))})
	if !errors.Is(err, syscall.EIO) || len(ws) != 1 || ws[0].File != "cpu.cfs_quota_us" || ws[0].Old != "-1" || ws[0].New != "20000" {
		t.Errorf("Set = %+v, %v; want one failed cpu.cfs_quota_us write", ws, err)
	}
}

// TestFaultInjectorDelegates checks the calls the injector passes through
// to the wrapped Manager, and that Unwrap reaches a wrapped SimKernel.
func TestFaultInjectorDelegates(t *testing.T) {
	f, m := fiSetup(t)
	if f.Unwrap() != Manager(m) || f.Version() != V2 {
		t.Fatal("Unwrap or Version is not the wrapped SimKernel's")
	}
	mtCreate(t, f, "c/d")
	if !m.Exists("c/d") || !f.Exists("c/d") {
		t.Error("Create did not reach the SimKernel")
	}
	mtSet(t, f, "c", Values{MemoryLimit: mtPtr(int64(mib))})
	mtUsage(t, m, "c/d", mib/2)
	if u, err := f.MemoryUsage("c"); err != nil || u != mib/2 {
		t.Errorf("MemoryUsage = %d, %v; want %d", u, err, mib/2)
	}
	if s, err := f.ReadFile("c", "memory.max"); err != nil || s != "1048576" {
		t.Errorf("ReadFile = %q, %v", s, err)
	}
	if v, err := f.Get("c"); err != nil || *v.MemoryLimit != mib {
		t.Errorf("Get = %+v, %v", v, err)
	}
	if err := f.Delete("c/d"); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("Delete of a cgroup in use = %v, want the SimKernel's EBUSY", err)
	}
	mtUsage(t, m, "c/d", 0)
	if err := f.Delete("c/d"); err != nil || m.Exists("c/d") {
		t.Errorf("Delete = %v, exists afterwards: %v", err, m.Exists("c/d"))
	}
}

// TestFaultInjectorConcurrent runs changing Sets from many goroutines
// (meant for -race): exactly times of them fail.
func TestFaultInjectorConcurrent(t *testing.T) {
	m := NewSimKernel(V2, WithWriteLimit(-1)) // counts every write
	f := NewFaultInjector(m)
	const workers, rounds, times = 8, 50, 37
	for w := 0; w < workers; w++ {
		mtCreate(t, m, fmt.Sprintf("p%d", w))
	}
	f.Inject(nil, syscall.EIO, times)
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := 0
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				_, err := f.Set(fmt.Sprintf("p%d", w), fiWeight(uint64(1+i)))
				if err != nil {
					if !errors.Is(err, syscall.EIO) {
						t.Error(err)
					}
					mu.Lock()
					failed++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if failed != times {
		t.Errorf("%d Sets failed, want %d", failed, times)
	}
	if got := len(m.Writes()); got != workers*rounds-times {
		t.Errorf("the SimKernel saw %d writes, want %d", got, workers*rounds-times)
	}
}

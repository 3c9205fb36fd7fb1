package cgroup

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestCompareIsWhatSetWouldChange: Compare reports exactly the files a Set
// of the same values changes, in the kernel's reading (pages, clamped
// shares, "max"), and writes nothing.
func TestCompareIsWhatSetWouldChange(t *testing.T) {
	u64 := func(v uint64) *uint64 { return &v }
	i64 := func(v int64) *int64 { return &v }
	for _, tt := range []struct {
		version Version
		want    Values
		diffs   []FileDiff
	}{
		{V2, Values{MemoryLimit: i64(128 << 20), CPUWeight: u64(20), CPUQuota: i64(50000), CPUPeriod: u64(100000)}, nil},
		{V2, Values{MemoryLimit: i64(64<<20 + 100)}, []FileDiff{{"memory.max", "67108864", "134217728"}}},
		{V2, Values{CPUQuota: i64(Unlimited)}, []FileDiff{{"cpu.max", "max 100000", "50000 100000"}}},
		{V2, Values{CPUWeight: u64(39), CPUPeriod: u64(50000)}, []FileDiff{{"cpu.weight", "39", "20"}, {"cpu.max", "50000 50000", "50000 100000"}}},
		{V1, Values{MemoryLimit: i64(128 << 20), CPUShares: u64(512), CPUQuota: i64(50000), CPUPeriod: u64(100000)}, nil},
		{V1, Values{CPUShares: u64(1)}, []FileDiff{{"cpu.shares", "2", "512"}}},
		{V1, Values{MemoryLimit: i64(Unlimited), CPUQuota: i64(-5)}, []FileDiff{{"memory.limit_in_bytes", "9223372036854771712", "134217728"}, {"cpu.cfs_quota_us", "-1", "50000"}}},
	} {
		m := NewSimKernel(tt.version)
		if err := m.Create("kubepods/pod1"); err != nil {
			t.Fatal(err)
		}
		start := Values{MemoryLimit: i64(128 << 20), CPUQuota: i64(50000), CPUPeriod: u64(100000)}
		if tt.version == V2 {
			start.CPUWeight = u64(20)
		} else {
			start.CPUShares = u64(512)
		}
		if _, err := m.Set("kubepods/pod1", start); err != nil {
			t.Fatal(err)
		}
		writes := len(m.Writes())
		got, err := Compare(m, "kubepods/pod1", tt.want)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tt.diffs) {
			t.Errorf("%s %s: Compare = %v, want %v", tt.version, describe(tt.want), got, tt.diffs)
		}
		if len(m.Writes()) != writes {
			t.Errorf("%s: Compare wrote", tt.version)
		}
		set, err := m.Set("kubepods/pod1", tt.want)
		if err != nil {
			t.Fatal(err)
		}
		if len(set) != len(tt.diffs) {
			t.Errorf("%s %s: Set changed %d files, Compare reported %d", tt.version, describe(tt.want), len(set), len(tt.diffs))
		}
	}
	if _, err := Compare(NewSimKernel(V2), "kubepods/none", Values{}); !errors.Is(err, ErrNotExist) {
		t.Errorf("Compare of a missing cgroup: %v, want ErrNotExist", err)
	}
}

func describe(v Values) string {
	var b strings.Builder
	field := func(name string, set bool, val any) {
		if set {
			fmt.Fprintf(&b, "%s=%v ", name, val)
		}
	}
	field("memory", v.MemoryLimit != nil, deref(v.MemoryLimit))
	field("weight", v.CPUWeight != nil, deref(v.CPUWeight))
	field("shares", v.CPUShares != nil, deref(v.CPUShares))
	field("quota", v.CPUQuota != nil, deref(v.CPUQuota))
	field("period", v.CPUPeriod != nil, deref(v.CPUPeriod))
	return strings.TrimSpace(b.String())
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

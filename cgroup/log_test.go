package cgroup

import "testing"

// TestWriteLogLimits: SimKernel and Recorder keep the latest writes up to
// their limit, the default when not told, and every write when told so.
func TestWriteLogLimits(t *testing.T) {
	write := func(m Manager, n int) {
		for i := 0; i < n; i++ {
			w := uint64(101 + i) // 100 is the default: no write
			if _, err := m.Set("", Values{CPUWeight: &w}); err != nil {
				t.Fatal(err)
			}
		}
	}
	k := NewSimKernel(V2, WithWriteLimit(3))
	rec := NewRecorder(k, RecordAtMost(2))
	write(rec, 10)
	if got := k.Writes(); len(got) != 3 || got[2].New != "110" || got[0].New != "108" {
		t.Errorf("SimKernel kept %v, want the writes of 108, 109, 110", got)
	}
	if got := rec.Writes(); len(got) != 2 || got[0].New != "109" || got[1].New != "110" {
		t.Errorf("Recorder kept %v, want the writes of 109, 110", got)
	}
	def := NewSimKernel(V2)
	all := NewRecorder(def, RecordAtMost(-1))
	write(all, 3*DefaultLogLimit)
	if n := len(def.Writes()); n != DefaultLogLimit {
		t.Errorf("the default limit kept %d writes, want %d", n, DefaultLogLimit)
	}
	if n := len(def.writes); n >= 2*DefaultLogLimit {
		t.Errorf("the kernel holds %d writes, more than twice the limit", n)
	}
	if n := len(all.Writes()); n != 3*DefaultLogLimit {
		t.Errorf("a negative limit kept %d of %d writes", n, 3*DefaultLogLimit)
	}
}

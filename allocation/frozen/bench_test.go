package frozen

import "testing"

// BenchmarkFreezePod freezes a settled pod (richPod), the cost a node
// pays for each pod it settles.
func BenchmarkFreezePod(b *testing.B) {
	p := richPod()
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := FreezePod(p); !ok {
			b.Fatal("FreezePod refused the pod")
		}
	}
}

// BenchmarkRefreezeUnchanged refreezes a thawed pod that has not
// changed, the cost a settled pod's resync pays.
func BenchmarkRefreezeUnchanged(b *testing.B) {
	f, _ := FreezePod(richPod())
	p := f.Thaw()
	b.ReportAllocs()
	for b.Loop() {
		if g, _ := f.Refreeze(p); g != f {
			b.Fatal("a new handle for an unchanged pod")
		}
	}
}

// BenchmarkThaw thaws it again, the cost of using a settled pod.
func BenchmarkThaw(b *testing.B) {
	f, _ := FreezePod(richPod())
	b.ReportAllocs()
	for b.Loop() {
		if f.Thaw() == nil {
			b.Fatal("no pod")
		}
	}
}

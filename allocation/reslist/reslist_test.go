package reslist

import (
	"maps"
	"testing"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
)

// lists are the shapes Each takes its two paths on: empty, cpu and memory
// alone or together (looked up), and lists with anything else (ranged).
var lists = []v1.ResourceList{
	nil,
	{},
	{v1.ResourceCPU: resource.MustParse("100m")},
	{v1.ResourceMemory: resource.MustParse("64Mi")},
	{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("64Mi")},
	{v1.ResourceCPU: resource.MustParse("0.1"), v1.ResourceMemory: resource.MustParse("67108864")},
	{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceEphemeralStorage: resource.MustParse("1Gi")},
	{v1.ResourceEphemeralStorage: resource.MustParse("1Gi")},
	{"example.com/gpu": resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("64Mi")},
	{v1.ResourceCPU: resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("1Gi"), "hugepages-2Mi": resource.MustParse("2Mi")},
}

// TestEachVisitsEveryEntryOnce holds Each to ranging over the map: every
// entry exactly once, with its quantity, whichever path it takes.
func TestEachVisitsEveryEntryOnce(t *testing.T) {
	for _, rl := range lists {
		seen := v1.ResourceList{}
		Each(rl, func(name v1.ResourceName, q resource.Quantity) {
			if _, dup := seen[name]; dup {
				t.Errorf("Each(%v) visited %s twice", rl, name)
			}
			seen[name] = q
		})
		if !maps.EqualFunc(seen, rl, func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 && a.String() == b.String() }) {
			t.Errorf("Each(%v) visited %v", rl, seen)
		}
	}
}

// TestEqualIsSemanticEquality compares Equal with apimachinery's semantic
// equality on every pair of lists.
func TestEqualIsSemanticEquality(t *testing.T) {
	for _, a := range lists {
		for _, b := range lists {
			want := apiequality.Semantic.DeepEqual(a, b) || (len(a) == 0 && len(b) == 0)
			if got := Equal(a, b); got != want {
				t.Errorf("Equal(%v, %v) = %v, want %v", a, b, got, want)
			}
		}
	}
}

func BenchmarkEach(b *testing.B) {
	rl := lists[4]
	var sum int64
	for b.Loop() {
		Each(rl, func(_ v1.ResourceName, q resource.Quantity) { sum += q.Value() })
	}
}

func BenchmarkRange(b *testing.B) {
	rl := lists[4]
	var sum int64
	for b.Loop() {
		for _, q := range rl {
			sum += q.Value()
		}
	}
}

// TestSame tells a map from an equal copy of it.
func TestSame(t *testing.T) {
	a := lists[4]
	if !Same(a, a) || !Same(nil, nil) {
		t.Error("a list is not the same as itself")
	}
	if Same(a, maps.Clone(a)) || Same(a, nil) || Same(nil, v1.ResourceList{}) {
		t.Error("distinct lists reported the same")
	}
}

// TestCPUMemoryOf holds the lookup to the list: only for lists of cpu,
// memory or nothing does it report that it saw everything, and then with
// their amounts; the keys alone say the same.
func TestCPUMemoryOf(t *testing.T) {
	for _, rl := range lists {
		cm, only := CPUMemoryOf(rl)
		wantOnly := true
		for name := range rl {
			wantOnly = wantOnly && (name == v1.ResourceCPU || name == v1.ResourceMemory)
		}
		if only != wantOnly {
			t.Errorf("CPUMemoryOf(%v) only = %v, want %v", rl, only, wantOnly)
		}
		hasCPU, hasMemory, keysOnly := CPUMemoryKeys(rl)
		if keysOnly != wantOnly {
			t.Errorf("CPUMemoryKeys(%v) only = %v, want %v", rl, keysOnly, wantOnly)
		}
		if !only {
			continue
		}
		cpu, okc := rl[v1.ResourceCPU]
		memory, okm := rl[v1.ResourceMemory]
		if cm.HasCPU != okc || cm.HasMemory != okm || hasCPU != okc || hasMemory != okm ||
			cm.CPU.Cmp(cpu) != 0 || cm.Memory.Cmp(memory) != 0 || cm.Len() != len(rl) {
			t.Errorf("CPUMemoryOf(%v) = %+v (keys %v %v)", rl, cm, hasCPU, hasMemory)
		}
	}
}

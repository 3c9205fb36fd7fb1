package apiserver

import (
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/resizelet/resizelet/allocation/reslist"
)

// fastPathNames are the resource names the tests draw from: cpu and
// memory, which resources reads directly, and names it must range over.
var fastPathNames = []v1.ResourceName{
	v1.ResourceCPU, v1.ResourceMemory, v1.ResourceCPU, v1.ResourceMemory,
	v1.ResourceEphemeralStorage, "hugepages-2Mi", "example.com/gpu", "pods",
}

// randomQuantity draws an amount in one of the forms the API server's
// objects hold: parsed strings of every suffix, and quantities built in
// Go whose format JSON would change (serialForm).
func randomQuantity(r *rand.Rand) resource.Quantity {
	switch r.Intn(6) {
	case 0:
		return *resource.NewMilliQuantity(int64(r.Intn(4000))-500, resource.DecimalSI)
	case 1:
		return *resource.NewQuantity(int64(r.Intn(1<<20))<<r.Intn(12), resource.BinarySI)
	case 2:
		return *resource.NewQuantity(int64(r.Intn(5)), resource.DecimalExponent)
	}
	texts := []string{"0", "1", "2", "100m", "250m", "1Gi", "128Mi", "1G", "1e3", "0.5", "1500m", "-1", "64Ki", "1.5Gi"}
	return resource.MustParse(texts[r.Intn(len(texts))])
}

// randomList draws a resource list of up to four resources, sometimes nil
// or empty.
func randomList(r *rand.Rand) v1.ResourceList {
	switch r.Intn(8) {
	case 0:
		return nil
	case 1:
		return v1.ResourceList{}
	}
	list := v1.ResourceList{}
	for i := 1 + r.Intn(4); i > 0; i-- {
		// cpu and memory come more often than the rest.
		list[fastPathNames[r.Intn(len(fastPathNames))]] = randomQuantity(r)
	}
	return list
}

// similarList is a copy of list with each amount sometimes changed, and a
// resource sometimes added or removed, so that pairs of lists are often
// equal or nearly.
func similarList(r *rand.Rand, list v1.ResourceList) v1.ResourceList {
	if list == nil && r.Intn(2) == 0 {
		return nil
	}
	out := v1.ResourceList{}
	for name, q := range list {
		switch r.Intn(6) {
		case 0:
			continue
		case 1:
			q = randomQuantity(r)
		}
		out[name] = q
	}
	if r.Intn(4) == 0 {
		out[fastPathNames[r.Intn(len(fastPathNames))]] = randomQuantity(r)
	}
	return out
}

// checkResources checks resources and the reslist answers it relies on
// against the list a itself.
func checkResources(t *testing.T, a v1.ResourceList) {
	t.Helper()
	fail := func(what string, got, want any) {
		t.Helper()
		t.Fatalf("%s of %v: got %v, want %v", what, a, got, want)
	}

	cm, only := reslist.CPUMemoryOf(a)
	wantOnly := true
	for name := range a {
		wantOnly = wantOnly && isCPUOrMemory(name)
	}
	if only != wantOnly || onlyCPUMemory(a) != wantOnly {
		fail("CPUMemoryOf/onlyCPUMemory", only, wantOnly)
	}
	if hasCPU, hasMemory, only := reslist.CPUMemoryKeys(a); only != wantOnly || only && (hasCPU != cm.HasCPU || hasMemory != cm.HasMemory) {
		fail("CPUMemoryKeys", []bool{hasCPU, hasMemory, only}, cm)
	}
	if only {
		cpu, hasCPU := a[v1.ResourceCPU]
		memory, hasMemory := a[v1.ResourceMemory]
		if want := (reslist.CPUMemory{CPU: cpu, Memory: memory, HasCPU: hasCPU, HasMemory: hasMemory}); !reflect.DeepEqual(cm, want) {
			fail("CPUMemoryOf", cm, want)
		}
	}

	// resources yields every entry of the list once, cpu before memory
	// when the list holds nothing else, and nothing more.
	got := v1.ResourceList{}
	var order []v1.ResourceName
	for name, q := range resources(a) {
		if _, twice := got[name]; twice {
			fail("resources yields twice", name, a)
		}
		got[name] = q
		order = append(order, name)
	}
	if len(got) != len(a) || !reflect.DeepEqual(got, a) && len(a) > 0 {
		fail("resources", got, a)
	}
	if only && !slices.IsSorted(order) {
		fail("resources order", order, "sorted")
	}
	var buf [8]resourceEntry
	entries := sortedEntries(a, buf[:0])
	if len(entries) != len(a) || !slices.IsSortedFunc(entries, func(x, y resourceEntry) int { return strings.Compare(string(x.name), string(y.name)) }) {
		fail("sortedEntries", entries, a)
	}
}

// TestResourcesYieldsTheList: on random lists, resources (the one walk
// of resource lists, with its cpu and memory fast path) yields what the
// map holds, and the CPUMemoryOf answers it relies on are right.
func TestResourcesYieldsTheList(t *testing.T) {
	r := rand.New(rand.NewSource(20260101))
	for i := 0; i < 20000; i++ {
		a := randomList(r)
		b := similarList(r, a)
		if r.Intn(4) == 0 {
			b = randomList(r)
		}
		checkResources(t, a)
		checkResources(t, b)
	}
}

// fuzzList reads "name=quantity,..." into a list, skipping entries whose
// quantity does not parse or has an exponent too large to compare
// (CheckExponent).
func fuzzList(s string) v1.ResourceList {
	if s == "-" {
		return nil
	}
	list := v1.ResourceList{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || CheckExponent(v) != nil {
			continue
		}
		if q, err := resource.ParseQuantity(v); err == nil {
			list[v1.ResourceName(k)] = q
		}
	}
	return list
}

// FuzzResourcesYieldsTheList holds resources to the map on fuzzed lists
// ("name=quantity,...", "-" for a nil list).
func FuzzResourcesYieldsTheList(f *testing.F) {
	f.Add("cpu=200m,memory=128Mi", "cpu=300m,memory=192Mi")
	f.Add("cpu=1", "cpu=1,example.com/gpu=1")
	f.Add("-", "memory=1Gi")
	f.Fuzz(func(t *testing.T, a, b string) {
		checkResources(t, fuzzList(a))
		checkResources(t, fuzzList(b))
	})
}

package apiserver

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/resizelet/resizelet/resize/profile"
)

// samePatchOutcome checks that ApplyResize (which reads narrow patches
// directly) and applyStrategicMerge (apimachinery's strategic merge and
// decoding, always) agree on a patch for every fuzz pod: the same error
// text, or byte for byte the same pod; and both refuse JSON with a key
// given twice (TestDuplicateKeysStrategicMerge says why). It reports
// whether the direct reading took the patch.
func samePatchOutcome(t *testing.T, patch []byte, o ResizeOptions) bool {
	t.Helper()
	dup := hasDuplicateKey(patch)
	for i, old := range fuzzPods() {
		got, gerr := ApplyResize(old, patch, o)
		want, werr := applyStrategicMerge(old, patch, o)
		if (gerr == nil) != (werr == nil) || (gerr != nil && gerr.Error() != werr.Error()) {
			t.Fatalf("pod %d, %s, patch %s:\n ApplyResize:    %v\n strategic merge: %v", i, o.Profile, patch, gerr, werr)
		}
		if gerr != nil {
			continue
		}
		if dup {
			t.Fatalf("pod %d, %s: patch %s has a key twice, and was accepted", i, o.Profile, patch)
		}
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(want)
		if string(a) != string(b) {
			t.Fatalf("pod %d, %s, patch %s:\n ApplyResize:    %s\n strategic merge: %s", i, o.Profile, patch, a, b)
		}
	}
	_, _, _, direct := readNarrowPatch(patch, nil)
	return direct
}

// patchGen writes random resize patches: mostly of the narrow form, in
// any key order and spacing, with containers the pods have or not, and
// with something outside the narrow form now and then.
type patchGen struct{ r *rand.Rand }

func (g patchGen) pick(options ...string) string { return options[g.r.Intn(len(options))] }

// odd is true with probability 1/n.
func (g patchGen) odd(n int) bool { return g.r.Intn(n) == 0 }

func (g patchGen) ws() string {
	if g.odd(4) {
		return g.pick(" ", "\n", "\t", "\r\n  ")
	}
	return ""
}

// object joins members in a random order (or twice one of them, now and
// then).
func (g patchGen) object(members []string) string {
	g.r.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
	if len(members) > 0 && g.odd(25) {
		members = append(members, members[0])
	}
	if g.odd(30) {
		members = append(members, g.pick(`"$patch":"replace"`, `"$patch":"delete"`, `"$retainKeys":["requests"]`, `"image":"x"`, `"resource":{}`, `"claims":[]`))
	}
	return "{" + g.ws() + strings.Join(members, ","+g.ws()) + g.ws() + "}"
}

func (g patchGen) quantities() string {
	var members []string
	for n := 1 + g.r.Intn(2); n > 0; n-- {
		name := g.pick("cpu", "cpu", "memory", "memory", "ephemeral-storage", "example.com/gpu", "hugepages-2Mi", "Bad Name")
		value := fmt.Sprintf("%q", g.pick("300m", "600m", "1", "2", "192Mi", "384Mi", "1Gi", "100000000", " 250m ", "1e3", "0.5", "-1", "abc", "", "1.5Gi", "123456789"))
		switch {
		case g.odd(40):
			value = g.pick("null", "300", "{}", "[]", `"3\u0030m"`, `"300m\u00e9"`)
		}
		members = append(members, fmt.Sprintf("%q:%s%s", name, g.ws(), value))
	}
	if g.odd(40) {
		return "{}"
	}
	return g.object(members)
}

func (g patchGen) resources() string {
	var members []string
	if !g.odd(4) {
		members = append(members, `"requests":`+g.quantities())
	}
	if !g.odd(3) || len(members) == 0 {
		members = append(members, `"limits":`+g.quantities())
	}
	if g.odd(40) {
		return "null"
	}
	return g.object(members)
}

func (g patchGen) list(names ...string) string {
	var elems []string
	for n := 1 + g.r.Intn(2); n > 0; n-- {
		name := fmt.Sprintf("%q", g.pick(names...))
		if g.odd(40) {
			name = g.pick(`"c\u0031"`, "1", "null")
		}
		members := []string{`"name":` + name}
		if !g.odd(30) {
			members = append(members, `"resources":`+g.resources())
		}
		elems = append(elems, g.object(members))
	}
	if g.odd(40) {
		return "[]"
	}
	return "[" + strings.Join(elems, ",") + "]"
}

func (g patchGen) patch() []byte {
	var members []string
	if !g.odd(4) {
		members = append(members, `"containers":`+g.list("c1", "c1", "c2", "c2", "c9"))
	}
	if g.odd(4) {
		members = append(members, `"initContainers":`+g.list("i1", "s1", "s1", "c1"))
	}
	if g.odd(5) || len(members) == 0 {
		members = append(members, `"resources":`+g.resources())
	}
	if g.odd(30) {
		members = append(members, `"$setElementOrder/containers":[{"name":"c2"},{"name":"c1"}]`)
	}
	top := []string{`"spec":` + g.object(members)}
	if g.odd(30) {
		top = append(top, g.pick(`"metadata":{"labels":{"a":"b"}}`, `"status":{"phase":"Failed"}`))
	}
	p := g.ws() + g.object(top) + g.ws()
	switch {
	case g.odd(50):
		p += "x"
	case g.odd(50):
		p = "spec:\n  containers:\n  - name: c1\n    resources:\n      limits:\n        cpu: 700m\n"
	}
	return []byte(p)
}

// TestFastPatchMatchesStrategicMerge: on random patches, under every
// version and with pod-level resize on, ApplyResize gives what
// apimachinery's strategic merge path gives, and the direct reading takes
// most of the patches (or the test would prove little).
func TestFastPatchMatchesStrategicMerge(t *testing.T) {
	g := patchGen{r: rand.New(rand.NewSource(11))}
	var options []ResizeOptions
	for _, v := range profile.Versions() {
		options = append(options, ResizeOptions{Profile: v})
	}
	options = append(options, ResizeOptions{Profile: profile.V135, Gate: profile.New(profile.V135, map[string]bool{profile.GateInPlacePodLevelResourcesVerticalScaling: true}).Gate})
	direct, total := 0, 0
	for i := 0; i < 600; i++ {
		patch := g.patch()
		for _, o := range options {
			if samePatchOutcome(t, patch, o) {
				direct++
			}
			total++
		}
	}
	t.Logf("%d of %d patches read directly", direct, total)
	if direct < total/6 || direct == total {
		t.Fatalf("%d of %d patches read directly: the draw does not cover both paths", direct, total)
	}
}

// FuzzFastPatch holds ApplyResize to the strategic merge path on
// arbitrary patches.
func FuzzFastPatch(f *testing.F) {
	f.Add([]byte(`{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":"300m"},"limits":{"cpu":"600m"}}}]}}`), uint8(2))
	f.Add([]byte(`{"spec":{"initContainers":[{"resources":{"limits":{"memory":"100000000"}},"name":"s1"}],"resources":{"limits":{"cpu":"2"}}}}`), uint8(4))
	f.Add([]byte(`{"spec":{"containers":[{"name":"c2","resources":{"limits":{"cpu":" 1 "}}},{"name":"c1","resources":{"requests":{"memory":"1Gi"}}}]}}`), uint8(1))
	f.Add([]byte(`{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":"300m","cpu":"200m"}}}]}}`), uint8(2))
	f.Fuzz(func(t *testing.T, patch []byte, version uint8) {
		versions := profile.Versions()
		samePatchOutcome(t, patch, ResizeOptions{Profile: versions[int(version)%len(versions)]})
	})
}

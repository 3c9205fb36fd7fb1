package apiserver

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// jsonPatchGen draws JSON patches for the differential test of the narrow
// JSON patch reading: mostly "add"s of amounts as the VPA updater sends
// them, in any order, some twice, and now and then each thing that takes
// the general path (another operation, member or place, an index out of
// range or written oddly, a list the container has not, a value that is
// not a plain quantity string).
type jsonPatchGen struct{ patchGen }

func (g jsonPatchGen) op(p *v1.Pod) string {
	list, field := p.Spec.Containers, "containers"
	if len(p.Spec.InitContainers) > 0 && g.odd(10) {
		list, field = p.Spec.InitContainers, "initContainers"
	}
	// Mostly into a list the container has, as the VPA updater adds.
	i := g.r.Intn(len(list))
	part, name := g.pick("requests", "limits"), g.pick("cpu", "memory")
	for range 3 {
		if r := list[i].Resources; (part == "requests" && len(r.Requests) > 0) || (part == "limits" && len(r.Limits) > 0) {
			break
		}
		i, part = g.r.Intn(len(list)), g.pick("requests", "limits")
	}
	index := fmt.Sprint(i)
	if g.odd(20) {
		index = fmt.Sprint(len(list))
	}
	if g.odd(30) {
		index = g.pick("01", "+0", "-", "-1", "1e0", "")
	}
	if g.odd(30) {
		part = g.pick("claims", "Requests", "requests/x")
	}
	if g.odd(30) {
		name = g.pick("ephemeral-storage", "example.com/gpu", "cp~1u", "")
	}
	path := fmt.Sprintf("/spec/%s/%s/resources/%s/%s", field, index, part, name)
	if g.odd(40) {
		path = g.pick("/spec/resources/requests/cpu", "/metadata/labels/x", "spec/containers/0/resources/limits/cpu", "/spec/containers/0/resources")
	}
	value := fmt.Sprintf("%q", g.pick("300m", "600m", "1", "2", "192Mi", "384Mi", "1Gi", " 250m ", "1e3", "0.5", "1G", "100m"))
	if g.odd(15) {
		value = fmt.Sprintf("%q", g.pick("-1", "abc", "", "1e-54775807", "1e1001"))
	}
	if g.odd(30) {
		value = g.pick("null", "300", "{}", `{"cpu":"1"}`, `"3\u0030m"`, `"300m\u00e9"`)
	}
	members := []string{`"op":` + fmt.Sprintf("%q", g.pick("add", "add", "add", "add", "add", "replace")), `"path":` + fmt.Sprintf("%q", path), `"value":` + value}
	if g.odd(30) {
		members = append(members, g.pick(`"from":"/spec"`, `"Op":"add"`))
	}
	if g.odd(40) {
		members = members[:2]
	}
	return g.object(members)
}

func (g jsonPatchGen) patch(p *v1.Pod) []byte {
	ops := make([]string, 1+g.r.Intn(3))
	for i := range ops {
		ops[i] = g.op(p)
	}
	if len(ops) > 1 && g.odd(5) {
		ops = append(ops, ops[0])
	}
	if g.odd(60) {
		ops = nil
	}
	return []byte("[" + g.ws() + strings.Join(ops, ","+g.ws()) + g.ws() + "]")
}

// TestJSONPatchMatchesAPIServer: on random old pods and random JSON
// patches (mostly of the narrow form, some not), under every version,
// ApplyResizePatch gives what the API server's way gives, and the narrow
// reading takes a good share of the patches (or the test would prove
// little).
func TestJSONPatchMatchesAPIServer(t *testing.T) {
	r := rand.New(rand.NewSource(19))
	pods := oldPodGen{r}
	gen := jsonPatchGen{patchGen{r}}
	narrow, total := 0, 0
	for i := 0; i < 600; i++ {
		old := pods.pod()
		patch := gen.patch(old)
		for _, o := range diffOptions() {
			sameAsAPIServer(t, fmt.Sprintf("#%d", i), old, JSONPatch, patch, o, func() (*v1.Pod, error) { return ApplyResizePatch(old, JSONPatch, patch, o) })
		}
		if _, ok := readNarrowJSONPatch(old, patch, nil); ok {
			narrow++
		}
		total++
	}
	coversBothPaths(t, narrow, total)
}

// TestReadNarrowJSONPatch pins what the narrow reading takes and leaves to
// the general path, on a pod with requests and cpu limits in its one
// container and an init container.
func TestReadNarrowJSONPatch(t *testing.T) {
	old := testPod(v1.Container{Name: "app", Resources: v1.ResourceRequirements{Requests: list("cpu", "100m", "memory", "64Mi"), Limits: list("cpu", "200m")}})
	old.Spec.InitContainers = []v1.Container{{Name: "init", Resources: v1.ResourceRequirements{Requests: list("cpu", "100m")}}}
	add := func(path, value string) string {
		return fmt.Sprintf(`{"op":"add","path":%q,"value":%s}`, path, value)
	}
	noLimits := testPod(v1.Container{Name: "app", Resources: v1.ResourceRequirements{Requests: list("cpu", "100m")}})
	if _, ok := readNarrowJSONPatch(noLimits, []byte("["+add("/spec/containers/0/resources/limits/cpu", `"1"`)+"]"), nil); ok {
		t.Error("readNarrowJSONPatch took an add into limits the container has not")
	}
	for _, c := range []struct {
		patch string
		ok    bool
	}{
		{"[" + add("/spec/containers/0/resources/requests/cpu", `"300m"`) + "]", true},
		{"[" + add("/spec/containers/0/resources/limits/memory", `"1Gi"`) + "," + add("/spec/containers/0/resources/requests/memory", `"1Gi"`) + "]", true},
		{"[" + add("/spec/initContainers/0/resources/requests/memory", `"1Gi"`) + "]", false}, // init containers take the general path
		{"[" + add("/spec/containers/0/resources/requests/cpu", `"300m"`) + "," + add("/spec/containers/0/resources/requests/cpu", `"400m"`) + "]", true},
		{"[]", false},
		{"null", false},
		{"[" + add("/spec/initContainers/0/resources/limits/cpu", `"1"`) + "]", false}, // an init container, without limits either
		{"[" + add("/spec/containers/1/resources/requests/cpu", `"1"`) + "]", false},   // no container 1
		{"[" + add("/spec/containers/00/resources/requests/cpu", `"1"`) + "]", false},  // not plainly written
		{"[" + add("/spec/containers/0/resources/requests/cpu", `"3\u0030m"`) + "]", false},
		{"[" + add("/spec/containers/0/resources/requests/cpu", `300`) + "]", false},
		{"[" + add("/spec/containers/0/resources/requests/cpu", `null`) + "]", false},
		{"[" + add("/spec/containers/0/resources/requests/cpu", `"1e1001"`) + "]", false},
		{"[" + add("/spec/containers/0/resources/requests/ephemeral-storage", `"1Gi"`) + "]", false},
		{`[{"op":"replace","path":"/spec/containers/0/resources/requests/cpu","value":"1"}]`, false},
		{`[{"op":"add","path":"/spec/containers/0/resources/requests/cpu","value":"1","from":""}]`, false},
		{`[{"op":"add","path":"/spec/containers/0/resources/requests/cpu","value":"1","op":"add"}]`, false},
	} {
		_, ok := readNarrowJSONPatch(old, []byte(c.patch), nil)
		if ok != c.ok {
			t.Errorf("readNarrowJSONPatch(%s) = %v, want %v", c.patch, ok, c.ok)
		}
		for _, o := range diffOptions() {
			sameAsAPIServer(t, c.patch, old, JSONPatch, []byte(c.patch), o, func() (*v1.Pod, error) { return ApplyResizePatch(old, JSONPatch, []byte(c.patch), o) })
		}
	}
}

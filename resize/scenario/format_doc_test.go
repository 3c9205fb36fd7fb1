package scenario_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/resizelet/resizelet/resize/scenario"
)

// The tests in this file hold FORMAT.md, the format's specification, and
// the parser to each other. FORMAT.md has two machine-readable parts: the
// table of "## Index of keys", one key path per row, and the scenario of
// "## A complete example", which uses every key. The parser has no table
// of its keys, so the tests ask it: a key it does not know in a map of
// fixed keys is an error that lists the keys it accepts there, and a value
// it does not know for an enumerated key is an error that lists the values.

const formatDoc = "FORMAT.md"

// unknownKey is the key the probes insert; the parser reports the first
// unknown key in sorted order, so it must sort after every real key.
const unknownKey = "zz-not-a-key"

// notAValue is the value the enumeration probes set.
const notAValue = "zz-not-a-value"

// leafPaths are keys whose values are not the format's own maps: Pod
// manifests (the Kubernetes API's fields) and patches.
var leafPaths = map[string]bool{"pods[]": true, "steps[].add.pod": true, "steps[].resize.patch": true}

type indexRow struct {
	path, value string
}

func readFormatDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(formatDoc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// docSection returns the body of the level-2 section with the title.
func docSection(t *testing.T, doc, title string) string {
	t.Helper()
	_, rest, ok := strings.Cut(doc, "\n## "+title+"\n")
	if !ok {
		t.Fatalf("%s has no section %q", formatDoc, "## "+title)
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

var indexRowRE = regexp.MustCompile("^\\| `([^`]+)` \\| (.*) \\|$")

// formatIndex returns the rows of the index of keys, in order.
func formatIndex(t *testing.T, doc string) []indexRow {
	t.Helper()
	var rows []indexRow
	seen := map[string]bool{}
	for _, line := range strings.Split(docSection(t, doc, "Index of keys"), "\n") {
		m := indexRowRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if seen[m[1]] {
			t.Errorf("the index lists %s twice", m[1])
		}
		seen[m[1]] = true
		rows = append(rows, indexRow{path: m[1], value: m[2]})
	}
	if len(rows) < 50 {
		t.Fatalf("the index of keys has %d rows; is its table still there?", len(rows))
	}
	return rows
}

// formatExample returns the YAML of the complete example.
func formatExample(t *testing.T, doc string) []byte {
	t.Helper()
	body := docSection(t, doc, "A complete example")
	_, rest, ok := strings.Cut(body, "```yaml\n")
	if !ok {
		t.Fatal("the complete example has no ```yaml block")
	}
	example, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("the complete example's ```yaml block is not closed")
	}
	return []byte(example)
}

// tree decodes YAML into maps, lists and scalars, numbers kept as written.
func tree(t *testing.T, data []byte) any {
	t.Helper()
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// placeholder is the index's name for a key the file chooses below path
// ("node.capacity.<resource>"), or "".
func placeholder(path string, keys map[string]bool) string {
	for k := range keys {
		if rest, ok := strings.CutPrefix(k, joinPath(path, "<")); ok && !strings.ContainsAny(rest, ".[") {
			return k
		}
	}
	return ""
}

// usedPaths adds the index path of every key in v, below path, to out.
func usedPaths(v any, path string, keys, out map[string]bool) {
	if path != "" {
		out[path] = true
	}
	if leafPaths[path] {
		return
	}
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			p := joinPath(path, k)
			if !keys[p] {
				if ph := placeholder(path, keys); ph != "" {
					p = ph
				}
			}
			usedPaths(child, p, keys, out)
		}
	case []any:
		for _, child := range v {
			switch child.(type) {
			case map[string]any, []any:
				usedPaths(child, path+"[]", keys, out)
			}
		}
	}
}

// segments splits an index path into keys, "[]" and "<placeholder>"s.
func segments(path string) []string {
	var out []string
	if path == "" {
		return out
	}
	for _, part := range strings.Split(path, ".") {
		name, isList := strings.CutSuffix(part, "[]")
		out = append(out, name)
		if isList {
			out = append(out, "[]")
		}
	}
	return out
}

// find returns the first map at the path's segments in v for which ok
// holds, looking into every element of a list and every value of a map
// with chosen keys.
func find(v any, segs []string, ok func(map[string]any) bool) map[string]any {
	if len(segs) == 0 {
		if m, isMap := v.(map[string]any); isMap && ok(m) {
			return m
		}
		return nil
	}
	switch seg := segs[0]; {
	case seg == "[]":
		list, _ := v.([]any)
		for _, child := range list {
			if m := find(child, segs[1:], ok); m != nil {
				return m
			}
		}
	case strings.HasPrefix(seg, "<"):
		m, _ := v.(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if found := find(m[k], segs[1:], ok); found != nil {
				return found
			}
		}
	default:
		if m, isMap := v.(map[string]any); isMap {
			if child, has := m[seg]; has {
				return find(child, segs[1:], ok)
			}
		}
	}
	return nil
}

func anyMap(map[string]any) bool { return true }

// parseTree parses a changed example and returns the *scenario.Error the
// change must cause.
func parseTree(t *testing.T, v any, what string) *scenario.Error {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	_, err = scenario.Parse("probe.yaml", data)
	var se *scenario.Error
	if !errors.As(err, &se) {
		t.Errorf("%s: Parse error %v, want a *scenario.Error", what, err)
		return nil
	}
	return se
}

// children returns the names the index gives the keys right below path.
func children(path string, rows []indexRow) []string {
	var out []string
	prefix := joinPath(path, "")
	for _, r := range rows {
		if rest, ok := strings.CutPrefix(r.path, prefix); ok && r.path != path && !strings.ContainsAny(rest, ".[") {
			out = append(out, rest)
		}
	}
	return out
}

func sameSet(t *testing.T, what string, documented, accepted []string) {
	t.Helper()
	doc := map[string]bool{}
	for _, d := range documented {
		doc[d] = true
	}
	acc := map[string]bool{}
	for _, a := range accepted {
		acc[a] = true
	}
	for _, a := range slices.Sorted(maps.Keys(acc)) {
		if !doc[a] {
			t.Errorf("%s: the parser accepts %q, which %s does not document", what, a, formatDoc)
		}
	}
	for _, d := range slices.Sorted(maps.Keys(doc)) {
		if !acc[d] {
			t.Errorf("%s: %s documents %q, which the parser does not accept", what, formatDoc, d)
		}
	}
}

// TestFormatExampleRuns parses and runs the complete example: every
// documented key must be accepted, and the example must pass.
func TestFormatExampleRuns(t *testing.T) {
	s, err := scenario.Parse("format-tour.yaml", formatExample(t, readFormatDoc(t)))
	if err != nil {
		t.Fatalf("the complete example of %s does not parse: %v", formatDoc, err)
	}
	res, err := scenario.Run(context.Background(), s, scenario.Options{})
	if err != nil {
		t.Fatalf("the complete example of %s does not run: %v", formatDoc, err)
	}
	for _, m := range res.Mismatches {
		t.Errorf("the complete example of %s: %s", formatDoc, m)
	}
}

// TestFormatExampleUsesEveryKey checks that the complete example uses every
// key of the index, and no key the index does not list.
func TestFormatExampleUsesEveryKey(t *testing.T) {
	doc := readFormatDoc(t)
	rows := formatIndex(t, doc)
	keys := map[string]bool{}
	for _, r := range rows {
		keys[r.path] = true
	}
	used := map[string]bool{}
	usedPaths(tree(t, formatExample(t, doc)), "", keys, used)
	for _, r := range rows {
		if !used[r.path] {
			t.Errorf("the complete example does not use %s", r.path)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(used)) {
		if !keys[p] {
			t.Errorf("the complete example uses %s, which the index does not list", p)
		}
	}
}

// TestFormatIndexMatchesParser checks, for every map of fixed keys, that
// the index lists exactly the keys the parser accepts there, and that the
// step kinds are the parser's.
func TestFormatIndexMatchesParser(t *testing.T) {
	doc := readFormatDoc(t)
	rows := formatIndex(t, doc)
	example := formatExample(t, doc)
	unknownKeyRE := regexp.MustCompile(`^unknown key \(want one of (.*)\)$`)

	// The maps to probe: the top level and every map of the index whose
	// keys are fixed (not chosen by the file).
	paths := []string{""}
	for _, r := range rows {
		if !strings.HasPrefix(r.value, "map") && !strings.HasPrefix(r.value, "empty map") {
			continue
		}
		kids := children(r.path, rows)
		if slices.ContainsFunc(kids, func(k string) bool { return strings.HasPrefix(k, "<") }) {
			continue
		}
		paths = append(paths, r.path)
	}
	probed := 0
	for _, path := range paths {
		documented := children(path, rows)
		v := tree(t, example)
		if path == "steps[]" {
			// A step's one key is its kind: an unknown kind is its own error.
			steps := v.(map[string]any)["steps"].([]any)
			steps[0] = map[string]any{unknownKey: map[string]any{}}
			se := parseTree(t, v, "unknown step kind")
			if se == nil {
				continue
			}
			list, ok := strings.CutPrefix(se.Msg, "unknown step: want one of ")
			if !ok || se.Field != unknownKey {
				t.Errorf("unknown step kind: error %v, want the parser's list of step kinds", se)
				continue
			}
			sameSet(t, "step kinds", documented, strings.Split(list, ", "))
			probed++
			continue
		}
		m := find(v, segments(path), anyMap)
		if m == nil {
			t.Errorf("%s: the complete example has no map there to probe", path)
			continue
		}
		m[unknownKey] = "x"
		se := parseTree(t, v, "unknown key in "+path)
		if se == nil {
			continue
		}
		match := unknownKeyRE.FindStringSubmatch(se.Msg)
		if match == nil || !strings.HasSuffix(se.Field, unknownKey) {
			t.Errorf("%s: an unknown key gives %v, want the parser's list of keys", path, se)
			continue
		}
		var accepted []string
		if match[1] != "" {
			accepted = strings.Split(match[1], ", ")
		}
		what := path
		if what == "" {
			what = "top level"
		}
		sameSet(t, what, documented, accepted)
		probed++
	}
	if probed < 15 {
		t.Errorf("probed %d maps; the index or the example lost its maps", probed)
	}
}

var enumRE = regexp.MustCompile("^`[^`]+`(?:, `[^`]+`)+$")

// TestFormatEnumsMatchParser checks every key whose index row lists its
// values: the parser must accept exactly those values.
func TestFormatEnumsMatchParser(t *testing.T) {
	doc := readFormatDoc(t)
	rows := formatIndex(t, doc)
	example := formatExample(t, doc)
	listRE := regexp.MustCompile(`(?:is not one of|want one of) (.*)$`)
	probed := 0
	for _, r := range rows {
		value := strings.TrimSuffix(r.value, ", required")
		if !enumRE.MatchString(value) {
			continue
		}
		var documented []string
		for _, v := range strings.Split(value, ", ") {
			documented = append(documented, strings.Trim(v, "`\""))
		}
		segs := segments(r.path)
		key := segs[len(segs)-1]
		v := tree(t, example)
		m := find(v, segs[:len(segs)-1], func(m map[string]any) bool { _, ok := m[key]; return ok })
		if m == nil {
			t.Errorf("%s: the complete example does not set it", r.path)
			continue
		}
		m[key] = notAValue
		se := parseTree(t, v, r.path+" = "+notAValue)
		if se == nil {
			continue
		}
		match := listRE.FindStringSubmatch(se.Msg)
		if match == nil || !strings.Contains(se.Msg, notAValue) {
			t.Errorf("%s: a value it does not take gives %v, want the parser's list of values", r.path, se)
			continue
		}
		sameSet(t, r.path, documented, strings.Split(match[1], ", "))
		probed++
	}
	if probed < 10 {
		t.Errorf("probed %d enumerated keys; the index lost its lists of values", probed)
	}
}

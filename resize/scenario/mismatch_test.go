package scenario_test

import (
	"strings"
	"testing"

	"github.com/resizelet/resizelet/resize/scenario"
)

// TestMismatchStringShort: short one-line values are printed whole, one
// line each.
func TestMismatchStringShort(t *testing.T) {
	m := scenario.Mismatch{Step: 1, Path: "containers.app.resources.requests.cpu", Want: "300m", Got: "200m"}
	want := "steps[1]: expect.containers.app.resources.requests.cpu\n  - want: 300m\n  + got:  200m"
	if got := m.String(); got != want {
		t.Errorf("String() =\n%s\nwant\n%s", got, want)
	}
	// 80 bytes is still short.
	m.Want, m.Got = strings.Repeat("a", 80), strings.Repeat("b", 80)
	if got := m.String(); !strings.Contains(got, "\n  - want: "+m.Want+"\n  + got:  "+m.Got) {
		t.Errorf("80-byte values: String() =\n%s", got)
	}
}

// diffLines returns String's lines after the first, with go-cmp's
// non-breaking spaces (which it mixes in at random to keep its output
// from being matched exactly) made plain and each line trimmed.
func diffLines(m scenario.Mismatch) []string {
	_, diff, _ := strings.Cut(m.String(), "\n")
	var out []string
	for _, l := range strings.Split(strings.ReplaceAll(diff, "\u00a0", " "), "\n") {
		out = append(out, strings.Join(strings.Fields(l), " "))
	}
	return out
}

// TestMismatchStringLong: a value longer than 80 bytes gets a go-cmp diff
// in which a one-word difference stands on lines of its own.
func TestMismatchStringLong(t *testing.T) {
	event := func(generation string) string {
		return `Normal ResizeStarted Pod resize started: {"containers":[{"name":"app","resources":{"limits":{"cpu":"2"},"requests":{"cpu":"2"}}}],"generation":` + generation + `}`
	}
	m := scenario.Mismatch{Step: 3, Path: "events[0]", Want: event("2"), Got: event("3")}
	first, _, _ := strings.Cut(m.String(), "\n")
	if first != "steps[3]: expect.events[0] (-want +got):" {
		t.Errorf("first line %q", first)
	}
	lines := diffLines(m)
	for _, want := range []string{`- "2",`, `+ "3",`} {
		found := false
		for _, l := range lines {
			found = found || l == want
		}
		if !found {
			t.Errorf("diff lacks the line %q:\n%s", want, m)
		}
	}
	for _, l := range lines {
		if (strings.HasPrefix(l, "-") || strings.HasPrefix(l, "+")) && len(l) > 10 {
			t.Errorf("the diff marks a long line %q as changed:\n%s", l, m)
		}
	}
	if !strings.HasPrefix(strings.Split(m.String(), "\n")[1], "  ") {
		t.Errorf("the diff is not indented:\n%s", m)
	}
}

// TestMismatchStringMultiLine: a value of several lines, even a short
// one, gets a diff too.
func TestMismatchStringMultiLine(t *testing.T) {
	m := scenario.Mismatch{Step: 0, Path: "message", Want: "one\ntwo", Got: "one\n2"}
	s := m.String()
	if !strings.HasPrefix(s, "steps[0]: expect.message (-want +got):\n") || strings.Contains(s, "want: ") {
		t.Fatalf("String() =\n%s", s)
	}
	var minus, plus bool
	for _, l := range diffLines(m) {
		minus = minus || strings.HasPrefix(l, "-") && strings.Contains(l, `two`)
		plus = plus || strings.HasPrefix(l, "+") && strings.Contains(l, `2`)
	}
	if !minus || !plus {
		t.Errorf("the diff does not show want and got:\n%s", s)
	}
}

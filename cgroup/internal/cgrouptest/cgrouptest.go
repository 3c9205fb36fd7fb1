// Package cgrouptest holds what the tests of every cgroup manager share
// (package cgroup's SimKernel, package cgroupfs's FS), so that the
// managers are held to one list of paths: the paths all of them refuse,
// and some unusual ones all of them take.
package cgrouptest

import (
	"strings"
	"testing"
)

// BadPaths are the cgroup paths every manager refuses. They hold an empty, "."
// or ".." component, a leading or trailing "/", a component longer than
// 255 bytes, or a control character: the kernel refuses a newline in a
// cgroup name, and the other control characters are refused with it.
var BadPaths = []string{
	"a\nb", "pod/c\n", "a\x00b", "a\tb", "a\rb", "a\x1bb", "a\x7fb", "\x01",
	"..", "../x", "a/../b", "a/..", ".", "a/./b",
	"/abs", "a/", "a//b",
	strings.Repeat("n", 256), "a/" + strings.Repeat("n", 256),
}

// OddPaths are unusual cgroup paths every manager takes.
var OddPaths = []string{
	"a b", "pod-ü", "a\u00a0b", "...", ".hidden", "a.b", "a:b", `a\b`, "a-1/b_2", strings.Repeat("n", 255),
}

// CreateAll creates each cgroup through m, failing the test at the first
// error.
func CreateAll(t testing.TB, m interface{ Create(path string) error }, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := m.Create(p); err != nil {
			t.Fatal(err)
		}
	}
}

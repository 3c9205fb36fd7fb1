package cgconfig

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// TestRootRelative: a cgroup written as the kubelet writes --cgroup-root
// is the same cgroup with or without its leading "/" and its one trailing
// "/", "" and "/" being the hierarchy root; anything else ValidatePath
// refuses is refused with ErrInvalidPath and the value as given.
func TestRootRelative(t *testing.T) {
	for in, want := range map[string]string{
		"": "", "/": "", "kubelet": "kubelet", "/kubelet": "kubelet", "/kubelet/": "kubelet", "kubelet/": "kubelet",
		"/a/b": "a/b", "a/b": "a/b", "/kubelet.slice": "kubelet.slice", "/.hidden/...": ".hidden/...",
	} {
		if got, err := RootRelative(in); err != nil || got != want {
			t.Errorf("RootRelative(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{
		"//", "//a", "a//", "/a//", "a//b", "/a//b/", "..", "/..", "../../etc", "/a/../b", "a/.", "./a", "/./",
		"a\nb", "/a\x00", "a\tb", "/a\x7f/", "/" + strings.Repeat("n", 256),
	} {
		got, err := RootRelative(in)
		if !errors.Is(err, ErrInvalidPath) || !strings.Contains(err.Error(), strconv.Quote(in)) {
			t.Errorf("RootRelative(%q) = %q, %v; want ErrInvalidPath naming %q", in, got, err, in)
		}
	}
}

// TestValidatePathTakesNoSlashAtEitherEnd: unlike RootRelative, the
// managers' rule takes a path relative to the root only.
func TestValidatePathTakesNoSlashAtEitherEnd(t *testing.T) {
	for _, p := range []string{"/a", "a/", "/"} {
		if err := ValidatePath(p); !errors.Is(err, ErrInvalidPath) || !strings.Contains(err.Error(), strconv.Quote(p)) {
			t.Errorf("ValidatePath(%q) = %v, want ErrInvalidPath naming it", p, err)
		}
	}
	if err := ValidatePath("a/b"); err != nil {
		t.Errorf("ValidatePath(a/b) = %v", err)
	}
}

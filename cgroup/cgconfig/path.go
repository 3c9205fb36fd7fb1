package cgconfig

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidPath is wrapped by the errors of ValidatePath and
// RootRelative. Package cgroup's ErrInvalidPath is this same value, so
// that a path a cgroup manager refuses and a NodeConfig.CgroupRoot the
// resize core refuses test alike with errors.Is; it lives here, beside the
// rule, because the core checks the cgroup root with the rule and imports
// no manager.
var ErrInvalidPath = errors.New("invalid cgroup path")

// ValidatePath checks a cgroup path relative to a hierarchy's root: ""
// for the root itself, else "/" separated, no leading or trailing "/", no
// empty, "." or ".." component, no component longer than a file name may
// be, and no control character (the kernel refuses a newline in a cgroup
// name, and the other control characters are refused with it). The cgroup
// managers check every path with it, so that no pod UID or container ID
// that reaches a file path can make a write land outside their root. The
// error wraps ErrInvalidPath and names the path.
func ValidatePath(path string) error {
	if why := pathProblem(path); why != "" {
		return fmt.Errorf("%w %q: %s", ErrInvalidPath, path, why)
	}
	return nil
}

// RootRelative returns the path, relative to the hierarchy root, of a
// cgroup written as the kubelet writes its --cgroup-root: "/kubelet" and
// "kubelet" are the same cgroup, a leading "/" meaning the root of the
// cgroup hierarchy (never the host's root directory), and one trailing "/"
// is dropped too. "" and "/" name the hierarchy root itself and give "".
// What is left once the one leading and the one trailing "/" are dropped
// must pass ValidatePath, so that "//a", "a//b", "a/../b" or a name with a
// control character is refused with an error that wraps ErrInvalidPath
// and names the value as given. The resize core checks
// NodeConfig.CgroupRoot with it, and package resize the private cgroup
// parent, so that a path a manager would refuse at the first pod is
// refused when the node or the backend is made.
func RootRelative(name string) (string, error) {
	rel := strings.TrimPrefix(name, "/")
	why := ""
	if rel != "" {
		if rel = strings.TrimSuffix(rel, "/"); rel == "" {
			why = "empty component" // "//"
		}
	}
	if why == "" {
		why = pathProblem(rel)
	}
	if why != "" {
		return "", fmt.Errorf("%w %q: %s", ErrInvalidPath, name, why)
	}
	return rel, nil
}

// pathProblem says what makes path no valid cgroup path relative to a
// hierarchy's root (ValidatePath's rule), or "" when it is one.
func pathProblem(path string) string {
	if path == "" {
		return "" // the root itself
	}
	start := 0
	for i := 0; i <= len(path); i++ {
		if i < len(path) && path[i] != '/' {
			if c := path[i]; c < 0x20 || c == 0x7f {
				return "control character"
			}
			continue
		}
		comp := path[start:i]
		switch {
		case comp == "":
			return "empty component"
		case comp == "." || comp == "..":
			return fmt.Sprintf("%q component", comp)
		case len(comp) > 255:
			return "component longer than 255 bytes"
		}
		start = i + 1
	}
	return ""
}

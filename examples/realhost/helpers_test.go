package realhost_test

import (
	"bufio"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// inCI reports whether the tests run in CI, where every real-host test must
// run: a missing runtime, kernel or privilege is then a failure, never a
// skip.
func inCI() bool { return os.Getenv("CI") == "true" }

// unavailable skips the test with reason, or fails it in CI.
func unavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	if inCI() {
		t.Fatalf("CI=true, so this real-host test may not skip: "+format, args...)
	}
	t.Skipf(format, args...)
}

// env returns the environment variable, or skips (fails in CI) with a
// reason that says how to set it.
func env(t *testing.T, name, how string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		unavailable(t, "%s is not set (%s)", name, how)
	}
	return v
}

// longEnv turns on the real-host runs that take minutes (longRun).
const longEnv = "RESIZELET_LONG"

// extraEndpointsEnv names more CRI runtimes (unix:///PATH, space
// separated; each another containerd.sh start) that the scenario suite on
// containerd may share its files out to, beside RESIZELET_CRI_ENDPOINT.
const extraEndpointsEnv = "RESIZELET_EXTRA_CRI_ENDPOINTS"

// longRun skips a real-host run that takes minutes (the crash explorer on
// real parts, the scenario suite on a real containerd, the cgroup v2 VM)
// unless RESIZELET_LONG=1 asks for it, so that go test ./... stays within
// go test's default timeout on a developer's loaded machine, root or not.
// In CI, where no real-host test may skip, .ci/run sets it, and a run
// without it fails.
func longRun(t *testing.T) {
	t.Helper()
	if os.Getenv(longEnv) != "1" {
		unavailable(t, "a real-host run that takes minutes: set %s=1 to run it", longEnv)
	}
}

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		unavailable(t, "needs root")
	}
}

// cgroupMounts returns the mount points of every cgroup hierarchy (v1 and
// v2) in /proc/self/mountinfo.
func cgroupMounts(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if ok && len(fields) >= 5 && len(tail) > 0 && (tail[0] == "cgroup" || tail[0] == "cgroup2") {
			out = append(out, fields[4])
		}
	}
	return out
}

// removeCgroupTree removes the cgroup name (relative to each hierarchy's
// root) and everything below it from every hierarchy, children first. The
// runtime creates a pod's cgroups in every v1 hierarchy, not only cpu and
// memory.
func removeCgroupTree(t *testing.T, name string) {
	for _, m := range cgroupMounts(t) {
		var dirs []string
		filepath.WalkDir(filepath.Join(m, name), func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
		for _, d := range dirs {
			if err := os.Remove(d); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
	}
}

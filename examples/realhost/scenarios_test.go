package realhost_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgroupfs"
)

// scenarioFiles returns the scenario suite, relative to the module root,
// and the seed walkthrough.
func scenarioFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "testdata", "scenarios", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario files in testdata/scenarios: %v", err)
	}
	for i, f := range files {
		files[i], _ = filepath.Rel(repoRoot, f)
	}
	return append(files, "examples/resizesim/walkthrough.yaml")
}

// runResizesim builds resizesim and runs it from the module root with args.
func runResizesim(t *testing.T, args ...string) string {
	t.Helper()
	out, err := execResizesim(buildResizesim(t), args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return out
}

// buildResizesim builds resizesim into the test's temporary directory.
func buildResizesim(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "resizesim")
	buildStatic(t, "./examples/resizesim", bin, false)
	return bin
}

// execResizesim runs the resizesim binary bin from the module root with
// args and returns its output, with an error that says how it ended when
// it did not exit 0.
func execResizesim(bin string, args ...string) (string, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = repoRoot
	b, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(b), fmt.Errorf("resizesim %s: exit %d", strings.Join(args, " "), ee.ExitCode())
	} else if err != nil {
		return string(b), fmt.Errorf("resizesim: %w", err)
	}
	return string(b), nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// cleanNewKubepods removes the kubepods cgroup tree when the test ends if
// it did not exist when the test started (a runner on the real hierarchy
// root creates it).
func cleanNewKubepods(t *testing.T) {
	existed := false
	for _, m := range cgroupMounts(t) {
		if _, err := os.Stat(filepath.Join(m, "kubepods")); err == nil {
			existed = true
		}
	}
	t.Cleanup(func() {
		if !existed {
			removeCgroupTree(t, "kubepods")
		}
	})
}

// TestScenariosOnRealCgroupV1 runs the scenario suite with the host's real
// cgroup v1 hierarchy: the same expectations must hold as in simulation.
func TestScenariosOnRealCgroupV1(t *testing.T) {
	needRoot(t)
	fs, err := cgroupfs.New("/sys/fs/cgroup")
	if err != nil || fs.Version() != cgroup.V1 {
		unavailable(t, "the host's /sys/fs/cgroup is not usable cgroup v1: %v", err)
	}
	cleanNewKubepods(t)
	args := append([]string{"--cgroup-root", "/sys/fs/cgroup", "run"}, scenarioFiles(t)...)
	out := runResizesim(t, args...)
	t.Logf("scenario suite passed on real cgroup v1:\n%s", lastLines(out, 3))
}

// TestScenariosOnContainerd runs the scenario suite on the real runtime
// (and the host's real cgroups), then logs the seed walkthrough's
// transcript: the container keeps its PID on the CPU resize and gets a new
// one on the memory resize (RestartContainer policy).
func TestScenariosOnContainerd(t *testing.T) {
	longRun(t)
	how := "run: eval $(examples/realhost/containerd.sh start /tmp/rl-ctrd | sed 's/^/export /')"
	endpoint := env(t, "RESIZELET_CRI_ENDPOINT", how)
	image := env(t, "RESIZELET_IMAGE", how)
	needRoot(t)
	cleanNewKubepods(t)
	bin := buildResizesim(t)
	// The suite is shared out among the runtimes, one resizesim each, all at
	// once: most of a scenario's time is spent waiting for the runtime. One
	// runtime per resizesim, because pods of the same name have the same UID
	// in every run, and so the same sandbox name, which a runtime holds for
	// one pod at a time (the cgroups are apart: each run has a private
	// parent).
	endpoints := append([]string{endpoint}, strings.Fields(os.Getenv(extraEndpointsEnv))...)
	files := scenarioFiles(t)
	shards := make([][]string, len(endpoints))
	for i, f := range files {
		shards[i%len(shards)] = append(shards[i%len(shards)], f)
	}
	outs := make([]string, len(shards))
	errs := make([]error, len(shards))
	var wg sync.WaitGroup
	for i, shard := range shards {
		wg.Go(func() {
			args := append([]string{"--cgroup-root", "/sys/fs/cgroup", "--cri-endpoint", endpoints[i], "--image", image, "run"}, shard...)
			outs[i], errs[i] = execResizesim(bin, args...)
		})
	}
	wg.Wait()
	for i := range shards {
		if errs[i] != nil {
			t.Errorf("on %s: %v\n%s", endpoints[i], errs[i], outs[i])
			continue
		}
		t.Logf("scenario suite part %d of %d (%d files) passed on containerd at %s:\n%s", i+1, len(shards), len(shards[i]), endpoints[i], lastLines(outs[i], 3))
	}
	if t.Failed() {
		return
	}
	walk, err := execResizesim(bin, "--cgroup-root", "/sys/fs/cgroup", "--cri-endpoint", endpoint, "--image", image, "run", "examples/resizesim/walkthrough.yaml")
	if err != nil {
		t.Fatalf("%v\n%s", err, walk)
	}
	t.Logf("seed walkthrough on containerd:\n%s", walk)
	// The CPU resize is in place (same process); the memory resize under
	// RestartContainer replaces the process.
	for _, want := range []string{
		"container pause pid %d (same process, resized in place)",
		"container pause pid %d -> %d (new process)",
	} {
		if !containsPattern(walk, want) {
			t.Errorf("walkthrough transcript lacks a line like %q", want)
		}
	}
}

// TestScenariosInVM runs the scenario suite on real cgroup v2 inside the
// VM, with --cgroup-root /sys/fs/cgroup.
func TestScenariosInVM(t *testing.T) {
	kernel := vmKernel(t)
	bin := filepath.Join(t.TempDir(), "resizesim")
	buildStatic(t, "./examples/resizesim", bin, false)
	// The VM gets testdata/scenarios and the walkthrough's directory under
	// /work, by their base names.
	var rel []string
	for _, f := range scenarioFiles(t) {
		rel = append(rel, filepath.Join(filepath.Base(filepath.Dir(f)), filepath.Base(f)))
	}
	args := []string{"-C", filepath.Join(repoRoot, "testdata", "scenarios"), "-C", filepath.Join(repoRoot, "examples", "resizesim"),
		kernel, bin, "--cgroup-root", "/sys/fs/cgroup", "run"}
	out, err := runVM(t, nil, append(args, rel...)...)
	if err != nil {
		t.Fatalf("scenario suite in the VM: %v\n%s", err, out)
	}
	t.Logf("scenario suite passed on real cgroup v2 in the VM:\n%s", lastLines(out, 3))
}

// containsPattern reports whether some line of out matches format, where
// each %d stands for a number.
func containsPattern(out, format string) bool {
	re := regexp.MustCompile(strings.ReplaceAll(regexp.QuoteMeta(format), "%d", `[0-9]+`))
	return re.MatchString(out)
}

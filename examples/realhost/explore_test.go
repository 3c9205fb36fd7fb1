package realhost_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgroupfs"
)

// exploreFiles are the scenarios the crash explorer runs on real parts: a
// decrease (the kubelet's pod cgroup gap), a decrease of memory, a resize
// the kubelet finishes after a restart, and the failed pod cgroup write.
// Each replay starts real cgroups (and, on containerd, real containers),
// so the list is short; the whole suite is explored on the simulated node
// (.ci/run).
var exploreFiles = []string{
	"cpu-decrease-guaranteed",
	"memory-decrease-no-restart",
	"kubelet-restart-mid-resize",
	"pod-cgroup-drift-after-failed-write",
}

func exploreArgs(names ...string) []string {
	var out []string
	for _, n := range names {
		out = append(out, filepath.Join("testdata", "scenarios", n+".yaml"))
	}
	return out
}

// TestExploreOnRealCgroupV1 runs the crash explorer on the host's real
// cgroup v1 hierarchy: nothing broken or stuck and every drift the
// kubelet's (resizesim exits 0), then with the opt-in fixes on.
//
// mixed-resize-restarts-for-memory is left out on purpose: on cgroup v1 its
// pod cgroup cpu.cfs_quota_us cannot be lowered below the quota of the
// stopped container's cgroup (EINVAL), with or without a fault, which the
// explorer reports as the kubelet's gap and, with ReconcilePodCgroups, as a
// drift that even the fix cannot close while that cgroup exists.
func TestExploreOnRealCgroupV1(t *testing.T) {
	longRun(t)
	needRoot(t)
	fs, err := cgroupfs.New("/sys/fs/cgroup")
	if err != nil || fs.Version() != cgroup.V1 {
		unavailable(t, "the host's /sys/fs/cgroup is not usable cgroup v1: %v", err)
	}
	cleanNewKubepods(t)
	base := []string{"--cgroup-root", "/sys/fs/cgroup", "explore"}
	out := runResizesim(t, append(base, exploreArgs(exploreFiles...)...)...)
	t.Logf("explorer on real cgroup v1:\n%s", lastLines(out, 8))
	out = runResizesim(t, append(append(base, "--reconcile-pod-cgroups", "--flush-checkpoints"), exploreArgs(exploreFiles...)...)...)
	t.Logf("explorer on real cgroup v1 with the opt-in fixes:\n%s", lastLines(out, 6))
}

// TestExploreOnContainerd runs the crash explorer on the real runtime for
// the resize steps of two scenarios (every replay starts real containers),
// and one of them with the opt-in fixes on: at once when a second runtime
// is given (RESIZELET_EXTRA_CRI_ENDPOINTS; the two runs' pods have the
// same UIDs, so they need a runtime each), else one after the other.
func TestExploreOnContainerd(t *testing.T) {
	longRun(t)
	how := "run: eval $(examples/realhost/containerd.sh start /tmp/rl-ctrd | sed 's/^/export /')"
	endpoint := env(t, "RESIZELET_CRI_ENDPOINT", how)
	image := env(t, "RESIZELET_IMAGE", how)
	needRoot(t)
	cleanNewKubepods(t)
	fixesEndpoint := endpoint
	if extra := strings.Fields(os.Getenv(extraEndpointsEnv)); len(extra) > 0 {
		fixesEndpoint = extra[0]
	}
	base := func(endpoint string) []string {
		return []string{"--cgroup-root", "/sys/fs/cgroup", "--cri-endpoint", endpoint, "--image", image, "explore", "--steps", "resize"}
	}
	runs := []struct {
		what string
		args []string
	}{
		{"explorer on containerd", append(base(endpoint), exploreArgs("cpu-decrease-guaranteed", "kubelet-restart-mid-resize")...)},
		{"explorer on containerd with the opt-in fixes", append(append(base(fixesEndpoint), "--reconcile-pod-cgroups", "--flush-checkpoints"), exploreArgs("cpu-decrease-guaranteed")...)},
	}
	bin := buildResizesim(t)
	outs := make([]string, len(runs))
	errs := make([]error, len(runs))
	var wg sync.WaitGroup
	for i, r := range runs {
		run := func() { outs[i], errs[i] = execResizesim(bin, r.args...) }
		if fixesEndpoint == endpoint {
			run()
			continue
		}
		wg.Go(run)
	}
	wg.Wait()
	for i, r := range runs {
		if errs[i] != nil {
			t.Errorf("%s: %v\n%s", r.what, errs[i], outs[i])
			continue
		}
		t.Logf("%s:\n%s", r.what, lastLines(outs[i], 8))
	}
}

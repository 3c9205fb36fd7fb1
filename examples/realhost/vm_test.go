package realhost_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repoRoot is the module root, seen from this package's directory (where
// go test runs the tests).
const repoRoot = "../.."

// buildStatic builds a static binary for the VM: pkg's test binary when
// test is true, else the command pkg.
func buildStatic(t *testing.T, pkg, out string, test bool) {
	t.Helper()
	args := []string{"build", "-o", out, pkg}
	if test {
		args = []string{"test", "-c", "-o", out, pkg}
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
}

// vmKernel returns the kernel for vm.sh, or skips (fails in CI) when the
// VM cannot run here.
func vmKernel(t *testing.T) string {
	t.Helper()
	longRun(t)
	kernel := env(t, "RESIZELET_VM_KERNEL", "run: eval $(examples/realhost/vm.sh kernel /tmp/rl-kernel | sed 's/^/export /')")
	for _, tool := range []string{"qemu-system-x86_64", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			unavailable(t, "the VM needs %s: %v", tool, err)
		}
	}
	if _, err := os.Stat("/bin/busybox"); err != nil {
		unavailable(t, "the VM needs a static /bin/busybox (busybox-static): %v", err)
	}
	return kernel
}

// runVM runs vm.sh run with args and returns the program's output and
// whether it exited 0. env is added to vm.sh's environment (VM_TIMEOUT,
// 240 s unless env says otherwise, and VM_MEMORY); what vm.sh says on
// stderr (a retry, the console of a failed boot) is logged.
func runVM(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("./vm.sh", append([]string{"run"}, args...)...)
	cmd.Env = append(append(os.Environ(), "VM_TIMEOUT=240"), env...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if e := strings.TrimSpace(errOut.String()); e != "" {
		t.Logf("vm.sh stderr:\n%s", e)
	}
	return out.String(), err
}

// TestCgroupFSInVM runs package cgroup/cgroupfs's FS tests on real cgroup
// v2 inside the VM, where TestFSRealHostV2 must run
// (RESIZELET_REQUIRE_CGROUP turns its skip into a failure) and pass.
func TestCgroupFSInVM(t *testing.T) {
	kernel := vmKernel(t)
	bin := filepath.Join(t.TempDir(), "cgroupfs.test")
	buildStatic(t, "./cgroup/cgroupfs", bin, true)
	out, err := runVM(t, nil, "-e", "RESIZELET_REQUIRE_CGROUP=v2", kernel, bin,
		"-test.v", "-test.run", "^TestFS", "-test.timeout", "120s")
	if err != nil || !strings.Contains(out, "--- PASS: TestFSRealHostV2") || !strings.Contains(out, "--- PASS: TestFSRealHostUsageV2") {
		t.Fatalf("cgroupfs tests in the VM: %v\n%s", err, out)
	}
	t.Logf("cgroup v2 FS tests passed in the VM")
}

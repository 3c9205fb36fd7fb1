package resize_test

import (
	"os/exec"
	"strings"
	"testing"
)

// heavyDeps are the modules only the real backends need: the cgroup
// filesystem (containerd/cgroups and what it pulls in) and the logging
// they bring along. A program that only simulates must link none of them.
var heavyDeps = []string{
	"github.com/containerd/cgroups",
	"github.com/cilium/ebpf",
	"github.com/godbus/dbus",
	"github.com/coreos/go-systemd",
	"github.com/sirupsen/logrus",
	"github.com/containerd/log",
}

// lightPackages are what a program that only simulates imports: the
// driver with its Simulated backend, the in-memory kernel and containerd,
// and the API server and core below them.
var lightPackages = []string{
	"github.com/resizelet/resizelet/resize",
	"github.com/resizelet/resizelet/cgroup",
	"github.com/resizelet/resizelet/cri",
	"github.com/resizelet/resizelet/resize/apiserver",
	"github.com/resizelet/resizelet/resize/core",
}

// goCommand returns the go command on PATH, or skips the test: without
// one there is nothing to list the dependencies with.
func goCommand(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command on PATH to list the dependencies with: %v", err)
	}
	return p
}

// TestLightSimulation keeps the simulated path light: the packages a
// program that only simulates imports link none of heavyDeps, which the
// real backends (cgroup/cgroupfs, cri/remote, resize/host) bring in. A
// failure names the package that pulls one in.
func TestLightSimulation(t *testing.T) {
	gocmd := goCommand(t)
	for _, pkg := range lightPackages {
		out, err := exec.Command(gocmd, "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			fields := strings.Fields(line)
			if len(fields) == 0 {
				continue
			}
			for _, imp := range fields[1:] {
				for _, heavy := range heavyDeps {
					if imp == heavy || strings.HasPrefix(imp, heavy+"/") {
						t.Errorf("%s links %s: %s imports it", pkg, imp, fields[0])
					}
				}
			}
		}
	}
}

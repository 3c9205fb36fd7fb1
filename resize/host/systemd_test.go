package host_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgroupfs"
	"github.com/resizelet/resizelet/cgroup/systemd"
	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/host"
	"github.com/resizelet/resizelet/resize/internal/backendtest"
)

// systemdTree returns a cgroup v2 tree of ordinary directories whose new
// cgroups get the kernel's files, and a TreeConn playing systemd on it.
func systemdTree(t *testing.T) (string, *cgroupfs.FS, *systemd.TreeConn) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("cgroupfs.FS is implemented on Linux only")
	}
	root := t.TempDir()
	files := map[string]string{"cgroup.controllers": "cpu memory", "cgroup.subtree_control": "", "cgroup.procs": "",
		"cpu.max": "max 100000", "cpu.weight": "100", "memory.max": "max", "memory.current": "0"}
	fill := func(dir string) error {
		for f, c := range files {
			if err := os.WriteFile(filepath.Join(dir, f), []byte(c+"\n"), 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	if err := fill(root); err != nil {
		t.Fatal(err)
	}
	fs, err := cgroupfs.New(root, cgroupfs.WithVersion(cgroup.V2), cgroupfs.WithCreateHook(fill))
	if err != nil {
		t.Fatal(err)
	}
	return root, fs, systemd.NewTreeConn(root, cgroup.V2)
}

// TestHostCgroupsWithTheSystemdDriver: with the systemd driver the
// private parent is a slice (resizelet-<pid>-<n> becomes
// resizelet_<pid>_<n>.slice), the node's --cgroup-root is its name, so
// its pod slices are a chain below it, made as transient units and
// resized through their properties (CPUQuotaPerSecUSec for the new
// limit of 2 CPUs); a kubelet restart keeps them, and Close stops every
// unit it started and leaves no directory.
func TestHostCgroupsWithTheSystemdDriver(t *testing.T) {
	root, fs, conn := systemdTree(t)
	// WithSystemd: the host's FS at the root, slices through conn.
	b, err := host.Cgroups(resize.NodeConfig{CgroupDriver: cgroup.DriverSystemd}, host.WithCgroupRoot(root), host.WithSystemd(conn))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Cgroups().(*systemd.Manager); !ok {
		t.Errorf("with WithSystemd the node writes through %T, want the systemd manager", b.Cgroups())
	}
	if err := b.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	// WithCgroupManager: the same manager over an FS that fills new
	// cgroups with files, so that the in-memory runtime's containers run.
	b, err = host.Cgroups(resize.NodeConfig{CgroupDriver: cgroup.DriverSystemd}, host.WithCgroupManager(mustManager(t, fs, conn)))
	if err != nil {
		t.Fatal(err)
	}
	parent := b.CgroupParent()
	if !strings.HasPrefix(parent, "resizelet_") || !strings.HasSuffix(parent, ".slice") || strings.Contains(parent, "-") {
		t.Errorf("private parent %q, want resizelet_<pid>_<n>.slice", parent)
	}
	if got, want := b.Config().CgroupRoot, strings.ReplaceAll(strings.TrimSuffix(parent, ".slice"), "_", "-"); got != want {
		t.Errorf("CgroupRoot = %q, want the parent's cgroup name %q", got, want)
	}
	node, cluster, deps := backendtest.NewNodeOn(t, b)
	podCgroup, id := backendtest.AddAndResize(t, node, cluster)
	prefix := strings.TrimSuffix(parent, ".slice")
	if want := parent + "/" + prefix + "-kubepods.slice/" + prefix + "-kubepods-burstable.slice/" + prefix + "-kubepods-burstable-pod"; !strings.HasPrefix(podCgroup, want) {
		t.Errorf("pod cgroup %q, want it below %q", podCgroup, want)
	}
	unit := podCgroup[strings.LastIndexByte(podCgroup, '/')+1:]
	var started, resized bool
	for _, c := range conn.Calls() {
		started = started || c == "start "+unit
		resized = resized || strings.HasPrefix(c, "set "+unit+" ") && strings.Contains(c, "CPUQuotaPerSecUSec=2000000")
	}
	if !started || !resized {
		t.Errorf("calls %q: want the pod slice started and its quota set to 2 CPUs through its properties", conn.Calls())
	}
	if got, err := b.Cgroups().ReadFile(podCgroup, "cpu.max"); err != nil || got != "200000 100000" {
		t.Errorf("pod cgroup cpu.max = %q, %v, want 200000 100000", got, err)
	}
	node = backendtest.RestartKeeps(t, node, b, deps, id)
	node.Close()
	if err := b.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if units := conn.Units(); len(units) != 0 {
		t.Errorf("units left after Close: %v", units)
	}
	if _, err := os.Stat(filepath.Join(root, parent)); !os.IsNotExist(err) {
		t.Errorf("the private parent is left after Close: %v", err)
	}
}

// TestHostCgroupsTakesTheDriverOfASystemdManager: a config without a
// driver, on the systemd cgroup manager, gets the systemd driver and a
// parent slice; one naming cgroupfs is refused as incoherent.
func TestHostCgroupsTakesTheDriverOfASystemdManager(t *testing.T) {
	_, fs, conn := systemdTree(t)
	b, err := host.Cgroups(resize.NodeConfig{}, host.WithCgroupManager(mustManager(t, fs, conn)))
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Config().CgroupDriver; got != cgroup.DriverSystemd || !strings.HasSuffix(b.CgroupParent(), ".slice") {
		t.Errorf("driver %q below %q, want systemd below a slice", got, b.CgroupParent())
	}
	b.Close(context.Background())
	_, err = host.Cgroups(resize.NodeConfig{CgroupDriver: cgroup.DriverCgroupfs}, host.WithCgroupManager(mustManager(t, fs, conn)))
	if !errors.Is(err, resize.ErrIncoherent) {
		t.Errorf("the cgroupfs driver on the systemd manager = %v, want ErrIncoherent", err)
	}
}

func mustManager(t *testing.T, fs *cgroupfs.FS, conn systemd.Conn) *systemd.Manager {
	t.Helper()
	m, err := systemd.New(fs, conn)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

package realhost_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgroupfs"
	"github.com/resizelet/resizelet/cri/conform"
	"github.com/resizelet/resizelet/cri/remote"
)

// conformEnv returns the runtime's endpoint and image, or skips (fails in
// CI) without them.
func conformEnv(t *testing.T) (endpoint, image string) {
	t.Helper()
	how := "run: eval $(examples/realhost/containerd.sh start /tmp/rl-ctrd | sed 's/^/export /')"
	endpoint = env(t, "RESIZELET_CRI_ENDPOINT", how)
	image = env(t, "RESIZELET_IMAGE", how)
	needRoot(t)
	return endpoint, image
}

// assertNothingLeft fails the test if the runtime at endpoint holds a
// sandbox or container of the run with this prefix (by label or by name),
// or if a cgroup of that name exists in any hierarchy.
func assertNothingLeft(t *testing.T, endpoint, prefix string) {
	t.Helper()
	if prefix == "" {
		t.Fatal("no run prefix to look for")
	}
	rt, err := remote.Dial(context.Background(), endpoint, remote.WithCallTimeout(30*time.Second))
	if err != nil {
		t.Fatalf("remote.Dial(%s): %v", endpoint, err)
	}
	defer rt.Close()
	ctx := context.Background()
	sbs, err := rt.ListPodSandbox(ctx, nil)
	if err != nil {
		t.Fatalf("ListPodSandbox: %v", err)
	}
	for _, sb := range sbs {
		if sb.GetLabels()[conform.LabelRun] == prefix || strings.HasPrefix(sb.GetMetadata().GetName(), prefix) {
			t.Errorf("left behind: sandbox %s (%s)", sb.Id, sb.GetMetadata().GetName())
		}
	}
	cs, err := rt.ListContainers(ctx, nil)
	if err != nil {
		t.Fatalf("ListContainers: %v", err)
	}
	for _, c := range cs {
		if c.GetLabels()[conform.LabelRun] == prefix {
			t.Errorf("left behind: container %s", c.Id)
		}
	}
	for _, m := range cgroupMounts(t) {
		if _, err := os.Stat(filepath.Join(m, prefix)); err == nil {
			t.Errorf("left behind: cgroup %s", filepath.Join(m, prefix))
		}
	}
}

// TestConformOnContainerd runs resizesim conform against the real
// runtime, with --scenarios for the walkthrough: every required check
// passes, the outcomes are those of containerd with runc on this host's
// cgroup version, the walkthrough passes on the same runtime, and nothing
// of the run is left. The report is logged, for the CI log.
func TestConformOnContainerd(t *testing.T) {
	endpoint, image := conformEnv(t)
	bin := filepath.Join(t.TempDir(), "resizesim")
	buildStatic(t, "./examples/resizesim", bin, false)
	cmd := exec.Command(bin, "conform", "--cri-endpoint", endpoint, "--image", image, "--json",
		"--scenarios", "examples/resizesim/walkthrough.yaml")
	cmd.Dir = repoRoot
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	// The JSON report comes first; the walkthrough's transcript follows.
	dec := json.NewDecoder(bytes.NewReader(stdout.Bytes()))
	var rep conform.Report
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("resizesim conform: %v; no JSON report: %v\nstdout:\n%s\nstderr:\n%s", runErr, err, stdout.String(), stderr.String())
	}
	var text strings.Builder
	rep.WriteText(&text)
	t.Logf("resizesim conform --cri-endpoint %s:\n%s", endpoint, text.String())
	assertNothingLeft(t, endpoint, rep.Prefix)
	if runErr != nil {
		t.Fatalf("resizesim conform: %v\nstderr:\n%s\nstdout after the report:\n%s", runErr, stderr.String(), lastLines(string(stdout.Bytes()[dec.InputOffset():]), 20))
	}
	if !rep.Passed() {
		t.Errorf("the runtime did not pass")
	}
	for _, c := range rep.Checks {
		if c.Required && c.Status != conform.Pass {
			t.Errorf("check %d (%s): %s: %s", c.ID, c.Name, c.Status, c.Summary)
		}
	}
	if s := rep.Check(5).Status; s != conform.Pass && s != conform.NotSupported {
		t.Errorf("UpdatePodSandboxResources: %s", s)
	}
	fs, err := cgroupfs.New("/sys/fs/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	if fs.Version() == cgroup.V1 {
		below := rep.Check(3)
		if !strings.HasPrefix(below.Summary, "refused") || !strings.Contains(strings.Join(below.Evidence, "\n"), "unable to set memory limit to 4194304") {
			t.Errorf("cgroup v1: a limit below usage was not refused with runc's message: %s\n%s", below.Summary, strings.Join(below.Evidence, "\n"))
		}
		if !strings.Contains(rep.WeightFormula, "cpu.shares written as sent") {
			t.Errorf("weight formula on v1: %q", rep.WeightFormula)
		}
	}
	if rest := string(stdout.Bytes()[dec.InputOffset():]); !strings.Contains(rest, "PASS examples/resizesim/walkthrough.yaml") {
		t.Errorf("--scenarios did not run the walkthrough to a PASS:\n%s", lastLines(rest, 10))
	}
}

// TestConformInterrupted sends SIGINT to resizesim conform in the middle
// of its checks: it stops, removes everything it made, says so, and exits
// with 130, leaving nothing behind.
func TestConformInterrupted(t *testing.T) {
	endpoint, image := conformEnv(t)
	p := startConform(t, "2: memory increase", "--cri-endpoint", endpoint, "--image", image)
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := p.wait()
	t.Logf("stderr:\n%s\nstdout (end):\n%s", p.stderr.String(), lastLines(p.stdout.String(), 15))
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit: %v, want status 130", err)
	}
	for _, want := range []string{"interrupt: stopping, then removing what the run created", "check 9: PASS"} {
		if !strings.Contains(p.stderr.String(), want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	if !strings.Contains(p.stdout.String(), "INTERRUPTED:") {
		t.Errorf("the report does not say it was interrupted")
	}
	assertNothingLeft(t, endpoint, p.prefix)
}

// conformProc is resizesim conform running in the background.
type conformProc struct {
	cmd    *exec.Cmd
	prefix string // the run's prefix, from its progress
	stdout bytes.Buffer
	stderr strings.Builder
	read   chan struct{} // closed when stderr is read to its end
}

// wait waits for the command to end, after the last of its stderr was
// read (the pipe must be drained before Wait).
func (p *conformProc) wait() error {
	<-p.read
	return p.cmd.Wait()
}

// startConform starts resizesim conform and returns once its progress
// shows a line containing until; its stderr is read on in the background.
func startConform(t *testing.T, until string, args ...string) *conformProc {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "resizesim")
	buildStatic(t, "./examples/resizesim", bin, false)
	p := &conformProc{cmd: exec.Command(bin, append([]string{"conform"}, args...)...), read: make(chan struct{})}
	p.cmd.Dir = repoRoot
	p.cmd.Stdout = &p.stdout
	pipe, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	prefixRE := regexp.MustCompile(`in cgroup (` + conform.PrefixBase + `-[0-9]+-[0-9a-f]+)/`)
	reached := make(chan struct{})
	go func() {
		defer close(p.read)
		sc := bufio.NewScanner(pipe)
		seen := false
		for sc.Scan() {
			line := sc.Text()
			p.stderr.WriteString(line + "\n")
			if m := prefixRE.FindStringSubmatch(line); m != nil {
				p.prefix = m[1]
			}
			if !seen && strings.Contains(line, until) {
				seen = true
				close(reached)
			}
		}
	}()
	select {
	case <-reached:
		return p
	case <-p.read:
		p.cmd.Wait()
		t.Fatalf("resizesim conform ended before %q:\n%s\n%s", until, p.stderr.String(), p.stdout.String())
	}
	return nil
}

// TestConformSweepsAKilledRun: a run killed with SIGKILL cannot clean up;
// the next run removes what it left (its process is gone) before it
// starts, and says so.
func TestConformSweepsAKilledRun(t *testing.T) {
	endpoint, image := conformEnv(t)
	p := startConform(t, "2: memory increase", "--cri-endpoint", endpoint, "--image", image)
	p.cmd.Process.Kill()
	p.wait()
	prefix := p.prefix
	if prefix == "" {
		t.Fatal("the killed run never named its prefix")
	}
	bin := filepath.Join(t.TempDir(), "resizesim")
	buildStatic(t, "./examples/resizesim", bin, false)
	next := exec.Command(bin, "conform", "--cri-endpoint", endpoint, "--image", image, "--json")
	next.Dir = repoRoot
	out, err := next.Output()
	var rep conform.Report
	if jerr := json.NewDecoder(bytes.NewReader(out)).Decode(&rep); jerr != nil {
		t.Fatalf("next run: %v, no report: %v", err, jerr)
	}
	swept := strings.Join(rep.Swept, "\n")
	t.Logf("the next run swept:\n%s", swept)
	if !strings.Contains(swept, "sandbox ") || !strings.Contains(swept, prefix) {
		t.Errorf("the next run did not sweep the killed run's sandbox (%s): %q", prefix, swept)
	}
	assertNothingLeft(t, endpoint, prefix)
	assertNothingLeft(t, endpoint, rep.Prefix)
}

// vmRuntimeFiles are the binaries of the runtime the cgroup v2 VM runs:
// containerd, its runc shim, runc, and ctr to import the image; crun, the
// second OCI runtime, is added where the host has it.
var vmRuntimeFiles = []string{"containerd", "containerd-shim-runc-v2", "runc", "ctr"}

// vmRuntimeDir fills dir with what containerd needs in the VM, which has
// nothing but busybox: bin/ holds the runtime's binaries, lib/ the shared
// libraries they load (ldd's list, the dynamic loader included) and
// image.tar the local busybox image. It returns why it cannot, or "".
func vmRuntimeDir(t *testing.T, dir string, files []string) string {
	t.Helper()
	for _, sub := range []string{"bin", "lib", "scenarios"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	libs := map[string]bool{}
	for _, name := range files {
		path, err := exec.LookPath(name)
		if err != nil {
			return fmt.Sprintf("no %s on this host: %v", name, err)
		}
		if err := copyFile(path, filepath.Join(dir, "bin", name)); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("ldd", path).Output()
		if err != nil {
			continue // a static binary
		}
		for _, f := range strings.Fields(string(out)) {
			if strings.HasPrefix(f, "/") {
				libs[f] = true
			}
		}
	}
	for lib := range libs {
		if err := copyFile(lib, filepath.Join(dir, "lib", filepath.Base(lib))); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command("./containerd.sh", "image", filepath.Join(t.TempDir(), "image")).Output()
	if err != nil {
		return fmt.Sprintf("containerd.sh image: %v", err)
	}
	if err := copyFile(strings.TrimSpace(string(out)), filepath.Join(dir, "image.tar")); err != nil {
		t.Fatal(err)
	}
	return ""
}

// copyFile copies a file (following links) with its mode.
func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	st, err := os.Stat(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, st.Mode().Perm())
}

// crunScenarios are the scenario files TestConformVMGuest runs on
// containerd + crun: the seed walkthrough (cpu in place, memory with a
// restart) and files whose steps are the rest of the runtime's part of a
// resize (restarts of several pods, a memory limit below usage, several
// containers in one sync, pod-level resources). The VM is emulated in CI
// (no KVM), where a scenario on a real runtime takes seconds: the whole
// suite, which the host's runc runs (TestScenariosOnContainerd), takes
// more than six minutes there, and these about a minute and a half.
var crunScenarios = []string{
	"examples/resizesim/walkthrough.yaml",
	"testdata/scenarios/k8s-e2e-guaranteed-cpu-mem-restart.yaml",
	"testdata/scenarios/k8s-e2e-memory-limit-decrease-below-usage.yaml",
	"testdata/scenarios/multi-container-decreases-first.yaml",
	"testdata/scenarios/pod-level-resize.yaml",
}

// buildGuestBinary builds this package's test binary for a VM guest: static
// and stripped, as it goes into the initramfs beside the runtime's 90 MB,
// which the emulated VM unpacks before it starts.
func buildGuestBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "realhost.test")
	build := exec.Command("go", "test", "-c", "-ldflags", "-s -w", "-o", bin, "./examples/realhost")
	build.Dir = repoRoot
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go test -c ./examples/realhost: %v\n%s", err, b)
	}
	return bin
}

// TestConformInVM runs the conformance check on cgroup v2: in the qemu VM
// (vm.sh), this package's test binary starts containerd from the host's
// binaries and runs conform against it (TestConformVMGuest).
func TestConformInVM(t *testing.T) {
	kernel := vmKernel(t)
	needRoot(t) // containerd.sh image installs busybox-static if needed
	dir := filepath.Join(t.TempDir(), "vmrt")
	// crun is the second runtime handler; CI installs it, and elsewhere a
	// host without it checks runc alone.
	files, handlers := vmRuntimeFiles, "runc"
	if _, err := exec.LookPath("crun"); err == nil {
		files, handlers = append(slices.Clone(files), "crun"), "runc crun"
	} else if inCI() {
		t.Fatalf("CI=true, so the crun half of this test may not skip: no crun on this host (apt-get install crun): %v", err)
	} else {
		t.Logf("no crun on this host (apt-get install crun): checking runc alone")
	}
	if why := vmRuntimeDir(t, dir, files); why != "" {
		unavailable(t, "the VM cannot host a runtime: %s", why)
	}
	// Scenario files run on crun in the VM too: resizesim and the files
	// go in beside the runtime.
	buildStatic(t, "./examples/resizesim", filepath.Join(dir, "bin", "resizesim"), false)
	var scenarios []string
	for _, f := range crunScenarios {
		rel := filepath.Join("scenarios", filepath.Base(f))
		if err := copyFile(filepath.Join(repoRoot, f), filepath.Join(dir, rel)); err != nil {
			t.Fatal(err)
		}
		scenarios = append(scenarios, rel)
	}
	bin := buildGuestBinary(t)
	// Everything in the VM is emulated, and in CI the other packages'
	// tests take the CPUs too: the run (two checks, then the scenario files
	// on crun, about two minutes on an idle machine) gets more time than
	// vm.sh's other users (a run that times out is retried once, so a tight
	// limit costs double).
	// The initramfs holds the runtime, resizesim and the test binary:
	// more than the default 512 MiB holds unpacked beside the containers.
	out, err := runVM(t, []string{"VM_TIMEOUT=720", "VM_MEMORY=1024"},
		"-C", dir, "-e", "RESIZELET_VM_GUEST=conform", "-e", "RESIZELET_IMAGE=docker.io/resizelet/busybox:local", "-e", "RESIZELET_VM_HANDLERS="+handlers, "-e", "RESIZELET_VM_SCENARIOS="+strings.Join(scenarios, " "),
		kernel, bin, "-test.v", "-test.run", "^TestConformVMGuest$", "-test.timeout", "660s")
	if err != nil || !strings.Contains(out, "--- PASS: TestConformVMGuest") {
		t.Fatalf("conform in the VM: %v\n%s", err, out)
	}
	t.Logf("conform on cgroup v2 in the VM:\n%s", out)
}

// startVMContainerd starts containerd inside the VM from the binaries and
// libraries vmRuntimeDir put in ./vmrt, with runc as its default runtime
// handler and crun as the handler crun, their cgroup driver systemd when
// systemdCgroup is set (the VM of vm.sh -s) and cgroupfs otherwise, and
// imports the image. It returns the runtime directory and containerd's
// socket; containerd is stopped when the test ends.
func startVMContainerd(t *testing.T, image string, systemdCgroup bool) (rtDir, sock string) {
	t.Helper()
	rtDir, err := filepath.Abs("vmrt")
	if err != nil {
		t.Fatal(err)
	}
	libs, _ := filepath.Glob(filepath.Join(rtDir, "lib", "*"))
	for _, d := range []string{"/lib64", "/lib/x86_64-linux-gnu", "/etc", "/run"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, lib := range libs {
		dst := filepath.Join("/lib/x86_64-linux-gnu", filepath.Base(lib))
		if strings.HasPrefix(filepath.Base(lib), "ld-linux") {
			dst = filepath.Join("/lib64", filepath.Base(lib))
		}
		if _, err := os.Stat(dst); err == nil {
			// The systemd VM has the host's libraries already, mapped by
			// systemd: writing over one in place would crash it.
			continue
		}
		if err := copyFile(lib, dst); err != nil {
			t.Fatal(err)
		}
	}
	// containerd copies these into a host-network sandbox.
	for f, content := range map[string]string{"/etc/resolv.conf": "", "/etc/hosts": "127.0.0.1 localhost\n"} {
		if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Setenv("PATH", filepath.Join(rtDir, "bin")+":"+os.Getenv("PATH"))
	if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("ip link set lo up: %v: %s", err, out)
	}

	state := "/tmp/ctrd"
	sock = state + "/containerd.sock"
	config := fmt.Sprintf(`version = 2
root = "%[1]s/root"
state = "%[1]s/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.overlayfs",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[grpc]
  address = "%[2]s"
[ttrpc]
  address = "%[2]s.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "%[1]s/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "%[3]s"
  restrict_oom_score_adj = true
  disable_apparmor = true
  disable_hugetlb_controller = true
  tolerate_missing_hugetlb_controller = true
  disable_tcp_service = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "native"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = %[6]t
        NoPivotRoot = true
        Root = "%[1]s/runc"
        BinaryName = "%[4]s"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.crun]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.crun.options]
        SystemdCgroup = %[6]t
        NoPivotRoot = true
        Root = "%[1]s/crun"
        BinaryName = "%[5]s"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "%[1]s/cni/bin"
    conf_dir = "%[1]s/cni/conf"
`, state, sock, image, filepath.Join(rtDir, "bin", "runc"), filepath.Join(rtDir, "bin", "crun"), systemdCgroup)
	if err := os.MkdirAll(state, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(state+"/config.toml", []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	var logBuf bytes.Buffer
	ctrd := exec.Command("containerd", "--config", state+"/config.toml")
	ctrd.Stdout, ctrd.Stderr = &logBuf, &logBuf
	if err := ctrd.Start(); err != nil {
		t.Fatalf("start containerd: %v", err)
	}
	t.Cleanup(func() {
		ctrd.Process.Signal(syscall.SIGTERM)
		ctrd.Wait()
		if t.Failed() {
			t.Logf("containerd's log (end):\n%s", lastLines(logBuf.String(), 40))
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, err := exec.Command("ctr", "-a", sock, "version").CombinedOutput()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("containerd did not answer within 60s: %v: %s", err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if out, err := exec.Command("ctr", "-a", sock, "-n", "k8s.io", "images", "import", "--snapshotter", "native",
		filepath.Join(rtDir, "image.tar")).CombinedOutput(); err != nil {
		t.Fatalf("ctr images import: %v: %s", err, out)
	}

	return rtDir, sock
}

// TestConformVMGuest is the VM's side of TestConformInVM; it skips
// anywhere else. The VM is a bare initramfs: it puts the runtime's
// libraries where its binaries look for them, brings up the loopback
// (containerd's CRI streaming server binds to it), starts containerd with
// the native snapshotter (the VM's kernel has no overlay module) and runc
// without pivot_root (which the initramfs root cannot do), imports
// the image, and runs the check against the real cgroup v2 hierarchy.
func TestConformVMGuest(t *testing.T) {
	if os.Getenv("RESIZELET_VM_GUEST") != "conform" {
		t.Skip("runs inside the cgroup v2 VM, started by TestConformInVM")
	}
	image := os.Getenv("RESIZELET_IMAGE")
	rtDir, sock := startVMContainerd(t, image, false)
	ctx := context.Background()
	endpoint := "unix://" + sock
	rt, version, err := conform.Dial(ctx, endpoint, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	fs, err := cgroupfs.New("/sys/fs/cgroup")
	if err != nil || fs.Version() != cgroup.V2 {
		t.Fatalf("the VM's /sys/fs/cgroup is not cgroup v2: %v", err)
	}
	handlers := strings.Fields(os.Getenv("RESIZELET_VM_HANDLERS"))
	for _, handler := range handlers {
		t.Run(handler, func(t *testing.T) {
			rep, err := conform.Run(ctx, conform.Options{Runtime: rt, Cgroups: fs, Image: image, Endpoint: endpoint, Version: version, RuntimeHandler: handler})
			if err != nil {
				t.Fatal(err)
			}
			var text strings.Builder
			rep.WriteText(&text)
			t.Logf("resizesim conform --runtime-handler %s on cgroup v2:\n%s", handler, text.String())
			assertNothingLeft(t, endpoint, rep.Prefix)
			for _, c := range rep.Checks {
				// On cgroup v2 runc and crun write cpu.max before they refuse
				// an unknown unified key, and containerd reports the values
				// from before the update: a finding the report makes about the
				// runtime, naming which one refused, not a failure of the run.
				known := c.ID == 6 && c.Status == conform.Fail && strings.Contains(c.Summary, "partly applied")
				if c.Required && c.Status != conform.Pass && !known {
					t.Errorf("check %d (%s): %s: %s", c.ID, c.Name, c.Status, c.Summary)
				}
				if known {
					t.Logf("check 6 reports the runtime's partial update: %s", c.Summary)
					if want := "the refusal is " + handler + "'s"; !slices.ContainsFunc(c.Evidence, func(e string) bool { return strings.HasPrefix(e, want) }) {
						t.Errorf("check 6 does not say %q: %q", want, c.Evidence)
					}
				}
			}
			if rep.Interrupted || rep.SetupError != "" || len(rep.Left) > 0 {
				t.Errorf("interrupted %v, setup error %q, left %v", rep.Interrupted, rep.SetupError, rep.Left)
			}
			if !strings.Contains(rep.WeightFormula, "cpu.weight by") {
				t.Errorf("no cpu.weight formula named: %q", rep.WeightFormula)
			}
			if want := "OCI runtime: " + handler + " "; !strings.Contains(text.String(), want) {
				t.Errorf("the report does not name the OCI runtime (%q)", want)
			}
		})
	}
	// Scenario files on crun (crunScenarios), with the expectations they
	// have in simulation and on the host's runc, on real cgroup v2.
	if files := strings.Fields(os.Getenv("RESIZELET_VM_SCENARIOS")); len(files) > 0 && slices.Contains(handlers, "crun") {
		t.Run("crun/scenarios", func(t *testing.T) {
			args := append([]string{"--cgroup-root", "/sys/fs/cgroup", "--cri-endpoint", endpoint, "--image", image, "--runtime-handler", "crun", "run"}, files...)
			// A run that hangs is stopped with what it printed so far,
			// which names the file and step, well before the VM's timeout.
			runCtx, cancel := context.WithTimeout(ctx, 480*time.Second)
			defer cancel()
			cmd := exec.CommandContext(runCtx, filepath.Join(rtDir, "bin", "resizesim"), args...)
			cmd.Dir = rtDir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("resizesim %s: %v\n%s", strings.Join(args, " "), err, out)
			}
			t.Logf("scenario suite (%d files) passed on containerd + crun on cgroup v2:\n%s", len(files), lastLines(string(out), 3))
		})
	}
}

package realhost_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

// The article's three resizes, as its kubectl commands send them: more
// CPU (in place), more memory (the container restarts), then 1000 CPUs,
// which no 16-CPU node can give.
const (
	articleCPUPatch        = `{"spec":{"containers":[{"name":"pause", "resources":{"requests":{"cpu":"800m"}, "limits":{"cpu":"800m"}}}]}}`
	articleMemoryPatch     = `{"spec":{"containers":[{"name":"pause", "resources":{"requests":{"memory":"300Mi"}, "limits":{"memory":"300Mi"}}}]}}`
	articleInfeasiblePatch = `{"spec":{"containers":[{"name":"pause", "resources":{"requests":{"cpu":"1000"}, "limits":{"cpu":"1000"}}}]}}`
	articleInfeasibleMsg   = "Node didn't have enough capacity: cpu, requested: 1000000, capacity: 16000"
)

// TestArticleOnRealAPIServer runs the story of the blog post "Kubernetes
// v1.35: In-Place Pod Resize Graduates to GA" with the post's own kubectl
// commands, against a real kube-apiserver v1.35.4, on a node that
// resizesim agent runs: the resize-demo pod of the walkthrough, bound to
// the node, gets 800m CPU in place, 300Mi of memory with a restart, and an
// Infeasible 1000 CPUs, as a kubelet gives them, with the kubelet's
// conditions and events as kubectl shows them. The node is Ready with the
// release's version and keeps its Lease; on SIGTERM the agent stops, as a
// kubelet stops, and leaves the pod as it was.
func TestArticleOnRealAPIServer(t *testing.T) {
	kubeconfig, kubectl := kubeEnv(t)
	client := kubeClient(t, kubeconfig)
	bin := buildResizesim(t)

	prefix := uniqueName("article") + "-"
	node := prefix + "0"
	t.Cleanup(func() { deleteNodes(t, client, node) })
	agent := startAgent(t, bin, "--kubeconfig", kubeconfig, "--nodes", "1", "--name-prefix", prefix)
	if !strings.Contains(agent.first, node) {
		t.Fatalf("the agent's first line does not name node %s: %q", node, agent.first)
	}

	ns := uniqueName("article")
	newNamespace(t, client, ns)
	k := kubectlIn{t: t, bin: kubectl, kubeconfig: kubeconfig, ns: ns}

	// The node as kubectl shows it: Ready, with the kubelet release the
	// agent reproduces, and its Lease in kube-node-lease.
	poll(t, "kubectl get node "+node+" shows it Ready at v1.35.4", func() error {
		out, err := k.try("get", "node", node, "--no-headers")
		if err != nil {
			return err
		}
		f := strings.Fields(out)
		if len(f) != 5 || f[0] != node || f[1] != "Ready" || f[4] != "v1.35.4" {
			return fmt.Errorf("got %q, want NAME Ready ROLES AGE v1.35.4", strings.TrimSpace(out))
		}
		return nil
	})
	poll(t, "the node's Lease exists", func() error {
		_, err := k.try("get", "lease", node, "-n", "kube-node-lease", "-o", "name")
		return err
	})

	k.run("apply", "-f", articlePodFile(t, node))

	k.run("patch", "pod", "resize-demo", "--subresource", "resize", "--patch", articleCPUPatch)
	poll(t, "800m CPU in place", func() error {
		return k.podStatus(func(p *v1.Pod) error {
			return errors.Join(statusIs(p, "800m", "200Mi", 0), noResize(p))
		})
	})

	k.run("patch", "pod", "resize-demo", "--subresource", "resize", "--patch", articleMemoryPatch)
	poll(t, "300Mi of memory with a restart", func() error {
		return k.podStatus(func(p *v1.Pod) error {
			return errors.Join(statusIs(p, "800m", "300Mi", 1), noResize(p))
		})
	})

	k.run("patch", "pod", "resize-demo", "--subresource", "resize", "--patch", articleInfeasiblePatch)
	poll(t, "1000 CPUs Infeasible, as kubectl get -o yaml shows it", func() error {
		out, err := k.try("get", "pod", "resize-demo", "-o", "yaml")
		if err != nil {
			return err
		}
		// The YAML quotes the message (it has an apostrophe) and folds it
		// where it is long: the exact string is the message's value, not
		// a substring of the text.
		var p v1.Pod
		if err := yaml.Unmarshal([]byte(out), &p); err != nil {
			return fmt.Errorf("kubectl get pod -o yaml: %v", err)
		}
		c := condition(&p, v1.PodResizePending)
		if c == nil || c.Status != v1.ConditionTrue || c.Reason != v1.PodReasonInfeasible || c.Message != articleInfeasibleMsg {
			return fmt.Errorf("want PodResizePending True, reason Infeasible, message %q:\n%s", articleInfeasibleMsg, indent(out))
		}
		// Nothing else changed.
		return statusIs(&p, "800m", "300Mi", 1)
	})
	var described string
	poll(t, "kubectl describe pod lists the kubelet's resize events", func() error {
		out, err := k.try("describe", "pod", "resize-demo")
		if err != nil {
			return err
		}
		_, events, _ := strings.Cut(out, "\nEvents:")
		for _, reason := range []string{"ResizeStarted", "ResizeCompleted", "ResizeInfeasible"} {
			if !describedEvent(events, reason, "kubelet") {
				return fmt.Errorf("no %s event from kubelet:\n%s", reason, indent(out))
			}
		}
		described = events
		return nil
	})
	t.Logf("kubectl describe pod resize-demo, its events:%s", described)

	// A stopped kubelet leaves its pods as they are: the agent stops at
	// SIGTERM, says so, and exits 0; the pod keeps the status it had.
	stopping := time.Now()
	if err := agent.stop(); err != nil {
		t.Fatalf("resizesim agent on SIGTERM: %v", err)
	}
	t.Logf("resizesim agent exited 0, %v after SIGTERM", time.Since(stopping).Round(time.Millisecond))
	if out := agent.stdoutText(); !strings.Contains(out, "resizesim agent: stopped 1 node(s)") {
		t.Errorf("the agent did not say it stopped:\n%s", out)
	}
	k.podStatus(func(p *v1.Pod) error {
		if err := statusIs(p, "800m", "300Mi", 1); err != nil {
			t.Errorf("after the agent stopped: %v", err)
		}
		if c := condition(p, v1.PodResizePending); c == nil || c.Reason != v1.PodReasonInfeasible {
			t.Errorf("after the agent stopped, PodResizePending is %+v", c)
		}
		if p.Status.Phase != v1.PodRunning {
			t.Errorf("after the agent stopped, phase %s", p.Status.Phase)
		}
		return nil
	})
}

// articlePodFile writes the walkthrough's resize-demo pod (the article's),
// bound to node, to a manifest file for kubectl apply.
func articlePodFile(t *testing.T, node string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "examples", "resizesim", "walkthrough.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var walkthrough struct {
		Pods []v1.Pod `json:"pods"`
	}
	if err := yaml.Unmarshal(data, &walkthrough); err != nil {
		t.Fatalf("walkthrough.yaml: %v", err)
	}
	for _, p := range walkthrough.Pods {
		if p.Name != "resize-demo" {
			continue
		}
		// No scheduler runs: the pod is bound as the scheduler would
		// bind it.
		p.Spec.NodeName = node
		out, err := yaml.Marshal(&p)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "resize-demo.yaml")
		if err := os.WriteFile(file, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return file
	}
	t.Fatal("walkthrough.yaml has no resize-demo pod")
	return ""
}

// statusIs checks the pause container's status: its resources are cpu
// and memory, as requests and limits, and it restarted restarts times.
func statusIs(p *v1.Pod, cpu, memory string, restarts int32) error {
	if len(p.Status.ContainerStatuses) != 1 {
		return fmt.Errorf("container statuses: %+v", p.Status.ContainerStatuses)
	}
	cs := p.Status.ContainerStatuses[0]
	if cs.Resources == nil {
		return fmt.Errorf("container %s has no resources in its status", cs.Name)
	}
	want := v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse(memory)}
	for _, list := range []v1.ResourceList{cs.Resources.Requests, cs.Resources.Limits} {
		for name, q := range want {
			if got := list[name]; got.Cmp(q) != 0 {
				return fmt.Errorf("container %s: status resources %v, want %s %s", cs.Name, cs.Resources, name, q.String())
			}
		}
	}
	if cs.RestartCount != restarts {
		return fmt.Errorf("container %s: restartCount %d, want %d", cs.Name, cs.RestartCount, restarts)
	}
	return nil
}

// noResize checks that no resize of the pod is pending or in progress.
func noResize(p *v1.Pod) error {
	for _, typ := range []v1.PodConditionType{v1.PodResizePending, v1.PodResizeInProgress} {
		if c := condition(p, typ); c != nil {
			return fmt.Errorf("condition %s: %+v", typ, *c)
		}
	}
	return nil
}

// condition returns the pod's condition of that type, or nil.
func condition(p *v1.Pod, typ v1.PodConditionType) *v1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == typ {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// describedEvent reports whether the Events table of kubectl describe has
// a row of that reason from that component.
func describedEvent(table, reason, from string) bool {
	for line := range strings.Lines(table) {
		f := strings.Fields(line)
		// Type, Reason, Age, From, Message...
		if len(f) >= 4 && f[1] == reason && f[3] == from {
			return true
		}
	}
	return false
}

// kubectlIn runs the real API server's kubectl in the test's namespace.
type kubectlIn struct {
	t                   *testing.T
	bin, kubeconfig, ns string
}

// try runs kubectl with args and returns its stdout, or an error with its
// output.
func (k kubectlIn) try(args ...string) (string, error) {
	cmd := exec.Command(k.bin, append([]string{"--kubeconfig", k.kubeconfig, "-n", k.ns}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out), nil
}

// run is try, failing the test on an error.
func (k kubectlIn) run(args ...string) string {
	k.t.Helper()
	out, err := k.try(args...)
	if err != nil {
		k.t.Fatal(err)
	}
	k.t.Logf("kubectl %s: %s", strings.Join(args, " "), strings.TrimSpace(out))
	return out
}

// podStatus reads resize-demo with kubectl get -o json and hands it to
// check.
func (k kubectlIn) podStatus(check func(*v1.Pod) error) error {
	out, err := k.try("get", "pod", "resize-demo", "-o", "json")
	if err != nil {
		return err
	}
	var p v1.Pod
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		return fmt.Errorf("kubectl get pod -o json: %v", err)
	}
	return check(&p)
}

// agentProc is resizesim agent running in the background.
type agentProc struct {
	t     *testing.T
	cmd   *exec.Cmd
	first string // its first line

	mu             sync.Mutex
	stdout, stderr strings.Builder
	exited         chan struct{} // closed once it exited and its output is read
	err            error         // how it exited, once exited is closed
}

// startAgent starts resizesim agent with args and returns once it has
// printed its first line (its nodes are started). When the test ends, an
// agent still running is killed, and a failed test gets its output.
func startAgent(t *testing.T, bin string, args ...string) *agentProc {
	t.Helper()
	a := &agentProc{t: t, cmd: exec.Command(bin, append([]string{"agent"}, args...)...), exited: make(chan struct{})}
	a.cmd.Dir = repoRoot
	a.cmd.Stderr = writerFunc(func(b []byte) (int, error) {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.stderr.Write(b)
	})
	pipe, err := a.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	firstLine := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			a.mu.Lock()
			a.stdout.WriteString(sc.Text() + "\n")
			a.mu.Unlock()
			select {
			case firstLine <- sc.Text():
			default:
			}
		}
		// The pipe is read to its end: Wait may close it now.
		a.err = a.cmd.Wait()
		close(a.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-a.exited:
		default:
			a.cmd.Process.Kill()
			<-a.exited
		}
		if t.Failed() {
			t.Logf("resizesim agent stdout:\n%s\nstderr:\n%s", a.stdoutText(), a.stderrText())
		}
	})
	select {
	case a.first = <-firstLine:
		return a
	case <-a.exited:
		t.Fatalf("resizesim agent %s ended before it started its nodes: %v", strings.Join(args, " "), a.err)
	case <-time.After(settleWithin):
		t.Fatalf("resizesim agent %s printed nothing within %v", strings.Join(args, " "), settleWithin)
	}
	return nil
}

// stop sends SIGTERM and waits for the agent to exit; it returns an error
// unless it exited with status 0. A broken agent that does not exit is
// killed after settleWithin.
func (a *agentProc) stop() error {
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case <-a.exited:
	case <-time.After(settleWithin):
		a.cmd.Process.Kill()
		<-a.exited
		return fmt.Errorf("still running %v after SIGTERM; killed", settleWithin)
	}
	var ee *exec.ExitError
	if errors.As(a.err, &ee) {
		return fmt.Errorf("exit status %d\nstderr:\n%s", ee.ExitCode(), a.stderrText())
	}
	return a.err
}

func (a *agentProc) stdoutText() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stdout.String()
}

func (a *agentProc) stderrText() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stderr.String()
}

// writerFunc is an io.Writer of a function.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

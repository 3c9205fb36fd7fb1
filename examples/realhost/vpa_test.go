package realhost_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// vpaAgent is one agent of the VPA run: its process and its nodes.
type vpaAgent struct {
	*agentProc
	nodes []string
}

// startVPAAgent starts resizesim agent with the nodes prefix<first> to
// prefix<first+n-1> of the capacity given (startAgent).
func startVPAAgent(t *testing.T, bin, kubeconfig, prefix string, first, n int, cpu, memory string) vpaAgent {
	t.Helper()
	a := vpaAgent{agentProc: startAgent(t, bin, "--kubeconfig", kubeconfig, "--name-prefix", prefix, "--first", strconv.Itoa(first),
		"--nodes", strconv.Itoa(n), "--cpu", cpu, "--memory", memory)}
	for i := range n {
		a.nodes = append(a.nodes, prefix+strconv.Itoa(first+i))
	}
	return a
}

// TestVPAOnRealAPIServerWithTwoAgents runs the VPA example against the
// real API server with two resizesim agent processes serving disjoint sets
// of nodes on it: the first runs two standard nodes, the second two large
// ones, of the sizes the simulation gives -pods 20 (3600m CPUs and 12Gi,
// 9600m and 38Gi). Both agents' Node objects must be Ready; the vpa
// binary, with a clientset from the kubeconfig, then plays 25 minutes of
// its workloads' hour in 25 rounds of 600ms (a round that takes longer
// than that is followed by the next at once, which changes nothing the
// test looks at). It must exit 0 (its summary holds together), with
// resizes Deferred by api's surge on the standard nodes, train's jump
// Infeasible there and its pod recreated on a large node, and its summary
// must show resizes completed by the nodes of both agents (the kubelets'
// ResizeCompleted events name the node that sent them), so that both
// processes served resizes. Both agents then stop on SIGTERM with status
// 0. The run's namespace is gone at the end; the test deletes the Node
// objects and Leases the agents created.
func TestVPAOnRealAPIServerWithTwoAgents(t *testing.T) {
	kubeconfig, _ := kubeEnv(t)
	client := kubeClient(t, kubeconfig)
	dir := t.TempDir()
	resizesim, vpa := filepath.Join(dir, "resizesim"), filepath.Join(dir, "vpa")
	buildStatic(t, "./examples/resizesim", resizesim, false)
	buildStatic(t, "./examples/vpa", vpa, false)

	// A prefix of its own, so that no Node object of an earlier run (which
	// stays Ready, with no controller manager to mark it otherwise) is
	// taken for one of this run's.
	prefix := fmt.Sprintf("vpa-%04x-", rand.Uint32()%0x10000)
	standard := startVPAAgent(t, resizesim, kubeconfig, prefix, 0, 2, "3600m", "12Gi")
	large := startVPAAgent(t, resizesim, kubeconfig, prefix, 2, 2, "9600m", "38Gi")
	agents := []vpaAgent{standard, large}
	t.Cleanup(func() { deleteNodes(t, client, append(append([]string{}, standard.nodes...), large.nodes...)...) })
	for _, a := range agents {
		if !strings.HasPrefix(a.first, "resizesim agent: 2 node(s) on ") {
			t.Fatalf("agent %v began with %q", a.nodes, a.first)
		}
	}
	waitNodesReady(t, client, append(append([]string{}, standard.nodes...), large.nodes...))

	cmd := exec.Command(vpa, "-kubeconfig", kubeconfig, "-node-prefix", prefix, "-nodes", "4", "-pods", "20",
		"-interval", "600ms", "-duration", "15s")
	var out, errs strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errs
	began := time.Now()
	err := cmd.Run()
	t.Logf("%s (%.1fs):\n%s%s", strings.Join(cmd.Args, " "), time.Since(began).Seconds(), out.String(), errs.String())
	if err != nil {
		t.Fatalf("vpa: %v", err)
	}
	text := out.String()
	for _, want := range []string{" deferred: ", " infeasible: ", "recreate  train-"} {
		if !strings.Contains(text, want) {
			t.Errorf("the run has no line with %q", want)
		}
	}
	by := completedBy(t, text)
	for _, a := range agents {
		n := 0
		for _, name := range a.nodes {
			n += by[name]
		}
		if n == 0 {
			t.Errorf("the nodes of agent %v completed no resize: %v", a.nodes, by)
		}
	}
	if m := regexp.MustCompile(`namespace (vpa-[a-z0-9]+)`).FindStringSubmatch(text); m == nil {
		t.Error("the output names no namespace")
	} else if _, err := client.CoreV1().Namespaces().Get(context.Background(), m[1], metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s after the run: %v; want it gone", m[1], err)
	}

	for _, a := range agents {
		if err := a.stop(); err != nil {
			t.Errorf("agent %v stopped with %v", a.nodes, err)
		} else if !strings.Contains(a.stdoutText(), "resizesim agent: stopped 2 node(s)") {
			t.Errorf("agent %v did not say it stopped its nodes:\n%s", a.nodes, a.stdoutText())
		}
	}
}

// waitNodesReady waits for the Node objects named to be Ready, for a
// minute at most.
func waitNodesReady(t *testing.T, client kubernetes.Interface, names []string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var notReady []string
		for _, name := range names {
			n, err := client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				t.Fatal(err)
			}
			ready := false
			if err == nil {
				for _, c := range n.Status.Conditions {
					ready = ready || (c.Type == v1.NodeReady && c.Status == v1.ConditionTrue)
				}
			}
			if !ready {
				notReady = append(notReady, name)
			}
		}
		if len(notReady) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nodes not Ready after a minute: %v", notReady)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// completedBy reads the vpa summary's completed-by-node line: the
// in-place resizes each node completed.
func completedBy(t *testing.T, out string) map[string]int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^  completed by node +(.*) \(the kubelets' ResizeCompleted events\)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatal("the summary has no completed-by-node line")
	}
	by := map[string]int{}
	for _, part := range strings.Split(m[1], ", ") {
		name, n, _ := strings.Cut(part, " ")
		by[name], _ = strconv.Atoi(n)
	}
	return by
}

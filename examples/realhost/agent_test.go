package realhost_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestAgentOnContainerd runs resizesim agent with a real backend: its node
// runs its pods' containers in the private containerd
// (RESIZELET_CRI_ENDPOINT, with the image of RESIZELET_IMAGE) and takes
// its resizes from the real API server. A Guaranteed pod bound to the node
// starts in containerd (its status names a containerd container); a CPU
// resize sent through the resize subresource is done in place: the status
// shows 800m with no restart, and containerd's own ContainerStatus shows
// the container's new CPU quota (80000 of a 100000 period). On SIGTERM the
// agent, run with --cleanup, stops with status 0 and removes what its
// node created: the container is gone from containerd.
func TestAgentOnContainerd(t *testing.T) {
	kubeconfig, _ := kubeEnv(t)
	rt, image, _ := realRuntime(t)
	endpoint := env(t, "RESIZELET_CRI_ENDPOINT", "run: examples/realhost/containerd.sh start DIR")
	client := kubeClient(t, kubeconfig)
	bin := buildResizesim(t)

	prefix := uniqueName("agentctrd") + "-"
	node := prefix + "0"
	t.Cleanup(func() { deleteNodes(t, client, node) })
	agent := startAgent(t, bin, "--kubeconfig", kubeconfig, "--nodes", "1", "--name-prefix", prefix,
		"--cri-endpoint", endpoint, "--image", image, "--cleanup")
	ns := uniqueName("agentctrd")
	newNamespace(t, client, ns)

	ctx := t.Context()
	amounts := v1.ResourceList{v1.ResourceCPU: resource.MustParse("700m"), v1.ResourceMemory: resource.MustParse("64Mi")}
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: v1.PodSpec{
			NodeName:                     node,
			AutomountServiceAccountToken: new(false),
			Containers: []v1.Container{{
				Name: "app", Image: image,
				Resources: v1.ResourceRequirements{Requests: amounts, Limits: amounts},
				ResizePolicy: []v1.ContainerResizePolicy{
					{ResourceName: v1.ResourceCPU, RestartPolicy: v1.NotRequired},
					{ResourceName: v1.ResourceMemory, RestartPolicy: v1.RestartContainer},
				},
			}},
		},
	}
	if _, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var id string
	poll(t, "the pod runs in containerd", func() error {
		p, err := client.CoreV1().Pods(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.Phase != v1.PodRunning || len(p.Status.ContainerStatuses) != 1 {
			return fmt.Errorf("phase %s, container statuses %+v", p.Status.Phase, p.Status.ContainerStatuses)
		}
		cid, ok := strings.CutPrefix(p.Status.ContainerStatuses[0].ContainerID, "containerd://")
		if !ok {
			return fmt.Errorf("container ID %q is not containerd's", p.Status.ContainerStatuses[0].ContainerID)
		}
		id = cid
		return nil
	})

	patch := `{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"800m"},"limits":{"cpu":"800m"}}}]}}`
	if _, err := client.CoreV1().Pods(ns).Patch(ctx, "web", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "resize"); err != nil {
		t.Fatal(err)
	}
	poll(t, "800m in place", func() error {
		p, err := client.CoreV1().Pods(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if err := statusIs(p, "800m", "64Mi", 0); err != nil {
			return err
		}
		return noResize(p)
	})
	st, err := rt.ContainerStatus(ctx, id, false)
	if err != nil {
		t.Fatalf("containerd's ContainerStatus of %s: %v", id, err)
	}
	if l := st.GetStatus().GetResources().GetLinux(); l.GetCpuQuota() != 80000 || l.GetCpuPeriod() != 100000 {
		t.Errorf("containerd reports cpu quota %d of period %d for the resized container, want 80000 of 100000", l.GetCpuQuota(), l.GetCpuPeriod())
	}

	if err := agent.stop(); err != nil {
		t.Fatalf("the agent did not stop cleanly: %v", err)
	}
	if _, err := rt.ContainerStatus(context.Background(), id, false); err == nil {
		t.Errorf("container %s is still in containerd after the agent stopped with --cleanup", id)
	}
}

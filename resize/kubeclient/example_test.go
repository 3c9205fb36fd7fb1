package kubeclient_test

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/kubeclient"
)

// A simulated node driven through client-go, as a VPA updater drives a
// cluster: create a pod, resize it with a JSON patch of the resize
// subresource, read its status and the kubelet's events, and get the API
// server's errors back as apierrors knows them.
func Example() {
	ctx := context.Background()

	// A simulated node: an in-memory API server, cgroup v2 kernel and
	// containerd.
	cg := cgroup.NewSimKernel(cgroup.V2)
	cluster := resize.NewCluster(resize.ClusterOptions{})
	node, err := resize.NewNode(ctx, resize.NodeConfig{Name: "node-1"}, resize.Deps{
		Cluster: cluster, Cgroups: cg, Runtime: cri.NewSimContainerd(cg),
	})
	if err != nil {
		panic(err)
	}
	client := kubeclient.New(kubeclient.ForNode(node))
	pods := client.CoreV1().Pods("default")

	// The node admits and starts the pod before Create returns.
	cpu500m, mem := resource.MustParse("500m"), resource.MustParse("128Mi")
	_, err = pods.Create(ctx, &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "web"}},
		Spec: v1.PodSpec{Containers: []v1.Container{{
			Name: "app", Image: "registry.k8s.io/pause:3.10",
			Resources: v1.ResourceRequirements{
				Requests: v1.ResourceList{v1.ResourceCPU: cpu500m, v1.ResourceMemory: mem},
				Limits:   v1.ResourceList{v1.ResourceCPU: cpu500m, v1.ResourceMemory: mem},
			},
		}}},
	}, metav1.CreateOptions{})
	if err != nil {
		panic(err)
	}

	// What the VPA updater sends: a JSON patch of the resize subresource.
	patch := `[{"op":"replace","path":"/spec/containers/0/resources/requests/cpu","value":"800m"},
	           {"op":"replace","path":"/spec/containers/0/resources/limits/cpu","value":"800m"}]`
	pod, err := pods.Patch(ctx, "web", types.JSONPatchType, []byte(patch), metav1.PatchOptions{}, "resize")
	if err != nil {
		panic(err)
	}
	// The answer is read back once the node has handled the resize.
	fmt.Println("generation:", pod.Generation)
	fmt.Println("status cpu:", pod.Status.ContainerStatuses[0].Resources.Requests.Cpu(), "conditions:", len(pod.Status.Conditions))

	events, err := client.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=web,reason=ResizeCompleted"})
	if err != nil {
		panic(err)
	}
	for _, e := range events.Items {
		fmt.Println(e.Reason, "from", e.Source.Component, "on", e.Source.Host)
	}

	_, err = pods.Get(ctx, "nope", metav1.GetOptions{})
	fmt.Println("not found:", apierrors.IsNotFound(err))
	_, err = pods.Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"containers":[{"name":"app","resources":{}}]}}`), metav1.PatchOptions{}, "resize")
	fmt.Println("invalid:", apierrors.IsInvalid(err))
	_, err = pods.Patch(ctx, "web", types.MergePatchType, []byte(`{"metadata":{"resourceVersion":"1"}}`), metav1.PatchOptions{}, "resize")
	fmt.Println("conflict:", apierrors.IsConflict(err))
	// Output:
	// generation: 2
	// status cpu: 800m conditions: 0
	// ResizeCompleted from kubelet on node-1
	// not found: true
	// invalid: true
	// conflict: true
}

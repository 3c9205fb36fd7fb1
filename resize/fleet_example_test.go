package resize_test

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resizelet/resizelet/resize"
)

// A fleet of two simulated nodes under one API server and one clock: pods
// run on the node their spec.nodeName names (or, with ScheduleUnbound, on
// the first node they fit), a resize goes to the pod's node, and Advance
// moves every node's timers at once.
func ExampleFleet() {
	ctx := context.Background()
	fleet := resize.NewFleet(resize.FleetOptions{
		Start:           time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		ScheduleUnbound: true,
	})
	defer fleet.Close()
	for _, name := range []string{"small", "big"} {
		cpus := map[string]string{"small": "2", "big": "8"}[name]
		cfg := resize.NodeConfig{Name: name, Capacity: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse(cpus), v1.ResourceMemory: resource.MustParse("8Gi"), v1.ResourcePods: resource.MustParse("110"),
		}}
		if _, err := fleet.AddNode(ctx, cfg, resize.Deps{}); err != nil { // a simulated kernel and containerd each
			panic(err)
		}
	}
	pod := func(name, node, cpu string) *v1.Pod {
		rl := v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse("256Mi")}
		return &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: v1.PodSpec{NodeName: node, Containers: []v1.Container{{
				Name: "app", Image: "registry.k8s.io/pause:3.10",
				Resources: v1.ResourceRequirements{Requests: rl, Limits: rl},
			}}},
		}
	}
	for _, p := range []*v1.Pod{pod("a", "small", "1500m"), pod("b", "", "1")} { // b: the first node it fits
		created, err := fleet.CreatePod(ctx, p)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s runs on %s\n", created.Name, created.Spec.NodeName)
	}
	// Resizes through the resize subresource, handled by a's kubelet: 3
	// CPUs are more than the small node has (Infeasible); 1800m fits.
	for _, cpu := range []string{"3", "1800m"} {
		patch := fmt.Sprintf(`{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":%q},"limits":{"cpu":%q}}}]}}`, cpu, cpu)
		if _, err := fleet.Resize(ctx, resize.ResizeOp{Namespace: "default", Name: "a", Patch: []byte(patch)}); err != nil {
			panic(err)
		}
		p, _ := fleet.Cluster().GetPod(ctx, "default", "a")
		state := "done"
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodResizePending {
				state = string(c.Reason) + ": " + c.Message
			}
		}
		fmt.Printf("a to %s cpu: %s\n", cpu, state)
	}
	if err := fleet.Advance(ctx, time.Hour); err != nil {
		panic(err)
	}
	for _, n := range fleet.Nodes() {
		total := n.AllocatedTotal()
		fmt.Printf("%s: %s CPU allocated\n", n.Config().Name, total.Cpu())
	}
	fmt.Println("fleet time:", fleet.Now().Format(time.TimeOnly))
	// Output:
	// a runs on small
	// b runs on big
	// a to 3 cpu: Infeasible: Node didn't have enough capacity: cpu, requested: 3000, capacity: 2000
	// a to 1800m cpu: done
	// small: 1800m CPU allocated
	// big: 1 CPU allocated
	// fleet time: 01:00:00
}

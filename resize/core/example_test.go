package core_test

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resizelet/resizelet/resize/core"
)

// The core is driven like etcd-io/raft's RawNode: each input returns the
// next batch of actions, which the driver performs in order before it
// reports their results with BatchDone. Here the driver does nothing and
// pretends every action succeeded, which is enough to see what a kubelet
// does for a new pod, in order.
func ExampleCore_Step() {
	c, err := core.New(core.NodeConfig{})
	if err != nil {
		panic(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := c.Step(core.Start{Now: now}); err != nil {
		panic(err)
	}
	rl := v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m"), v1.ResourceMemory: resource.MustParse("64Mi")}
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-web"},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "nginx", Resources: v1.ResourceRequirements{Requests: rl, Limits: rl}}}},
	}
	ready, err := c.Step(core.PodAdded{Pod: pod, Now: now})
	for err == nil && ready.Batch != nil {
		results := make([]core.Result, len(ready.Batch.Actions))
		fmt.Printf("batch %d:", ready.Batch.ID)
		for i, a := range ready.Batch.Actions {
			fmt.Printf(" %T", a)
			switch a.(type) {
			case core.RunPodSandbox:
				results[i].ID = "sandbox-1"
			case core.CreateContainer:
				results[i].ID = "container-1"
			}
		}
		fmt.Println()
		ready, err = c.Step(core.BatchDone{ID: ready.Batch.ID, Results: results, Now: now})
	}
	if err != nil {
		panic(err)
	}
	fmt.Println("quiet:", c.Quiet())
	// Output:
	// batch 1: core.WriteAllocated
	// batch 2: core.ReadCgroupExists
	// batch 3: core.CreateCgroup core.SetCgroup core.RunPodSandbox
	// batch 4: core.CreateContainer
	// batch 5: core.WriteActuatedContainer core.RecordEvent core.StartContainer
	// batch 6: core.RecordEvent core.ReadContainerStatus
	// batch 7: core.WriteStatus
	// quiet: true
}

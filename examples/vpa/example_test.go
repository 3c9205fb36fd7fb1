package main

import (
	"context"
	"fmt"
	"os"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/kubeclient"
)

// The updater wired to a fleet of one 4-CPU node through client-go, as
// Run wires it: a pod created through the clientset is resized in place
// to its recommendation, then recommended more than the node has, which
// the kubelet finds Infeasible, so the updater evicts it and hands it to
// replace (here a stand-in for the ReplicaSet that prints what it gets).
func Example_updater() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fleet := resize.NewFleet(resize.FleetOptions{Start: start})
	defer fleet.Close()
	capacity := v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("16Gi")}
	if _, err := fleet.AddNode(ctx, resize.NodeConfig{Name: "node-1", Capacity: capacity}, resize.Deps{}); err != nil {
		panic(err)
	}
	client := kubeclient.New(fleet) // the kubernetes.Interface the updater gets

	web := newWorld(100).workloads[0] // web: limits twice the requests
	pod := podFor(web, "web-rs", "web-rs-abcde", "node-1", amounts{cpu: 500, memory: 256 * mib})
	if _, err := client.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		panic(err)
	}

	sum := Summary{Recreated: map[string]int{}}
	u := &updater{
		client:   client,
		recorder: record.NewFakeRecorder(8),
		now:      fleet.Now,
		patch:    "json",
		replace: func(_ context.Context, evicted *v1.Pod, cause string, to amounts) error {
			fmt.Printf("replace %s (%s) with a pod of %s\n", evicted.Name, cause, to)
			return nil
		},
		log:       &logger{out: os.Stdout, now: fleet.Now},
		sum:       &sum,
		flight:    map[types.NamespacedName]*attempt{},
		pods:      watchPods(ctx, client, namespace, fleet.Cluster().ResourceVersion),
		completed: watchCompletions(ctx, client, fleet.Cluster().EventCount),
	}
	for _, cpu := range []int64{1500, 5000} {
		vpa := vpaObject{name: "web", namespace: namespace, selector: "app=web", container: appContainer,
			target: amounts{cpu: cpu, memory: 256 * mib}}
		if err := u.update(ctx, []vpaObject{vpa}); err != nil {
			panic(err)
		}
	}
	fmt.Println(sum.AtOnce, "done at once,", sum.Infeasible, "infeasible")
	// Output:
	// 00:00:00 resize    web-rs-abcde on node-1 cpu 500m mem 256Mi -> cpu 1500m mem 256Mi done
	// 00:00:00 resize    web-rs-abcde on node-1 cpu 1500m mem 256Mi -> cpu 5 mem 256Mi infeasible: Node didn't have enough capacity: cpu, requested: 5000, capacity: 4000
	// replace web-rs-abcde (infeasible) with a pod of cpu 5 mem 256Mi
	// 1 done at once, 1 infeasible
}

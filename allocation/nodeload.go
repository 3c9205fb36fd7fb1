package allocation

import (
	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// NodeLoad is what the scheduler counts as taken on a node: the pods bound
// to it that have not terminated, and their cpu (millicores) and memory
// (bytes) requests with status resources, as it counts them with
// InPlacePodVerticalScaling (pkg/scheduler/framework/types.go,
// CalculateResource): a resize in progress counts at the larger of spec
// and status.
type NodeLoad struct{ Pods, MilliCPU, Memory int64 }

// PodLoad is what the pod adds to its node's NodeLoad: nothing once it
// has terminated (or for a nil pod).
func PodLoad(pod *v1.Pod) NodeLoad {
	if pod == nil || pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
		return NodeLoad{}
	}
	reqs := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{UseStatusResources: true})
	return NodeLoad{1, reqs.Cpu().MilliValue(), reqs.Memory().Value()}
}

// NodeLoads keeps the NodeLoad of each node from the writes of its pods,
// each pod under a key of the caller's, as the scheduler's cache keeps its
// NodeInfos from pod events instead of adding the pods up for every pod it
// places. The zero value is empty; a nil *NodeLoads keeps nothing.
type NodeLoads[K comparable] struct {
	nodes map[string]NodeLoad
	pods  map[K]podLoad // what each pod adds to its node's
}

// podLoad is what a pod adds to the load of its node.
type podLoad struct {
	node string
	NodeLoad
}

// Of is the node's load.
func (l *NodeLoads[K]) Of(node string) NodeLoad {
	if l == nil {
		return NodeLoad{}
	}
	return l.nodes[node]
}

// Set counts the pod under key as it is now (nil: gone) in place of what it
// was, on the node it is bound to now: a pod under a key that comes back on
// another node is taken off the first.
func (l *NodeLoads[K]) Set(key K, pod *v1.Pod) {
	if l == nil {
		return
	}
	if l.nodes == nil {
		l.nodes, l.pods = map[string]NodeLoad{}, map[K]podLoad{}
	}
	if was, ok := l.pods[key]; ok {
		n := l.nodes[was.node]
		l.nodes[was.node] = NodeLoad{n.Pods - was.Pods, n.MilliCPU - was.MilliCPU, n.Memory - was.Memory}
		delete(l.pods, key)
	}
	if now := PodLoad(pod); now.Pods > 0 {
		n := l.nodes[pod.Spec.NodeName]
		l.nodes[pod.Spec.NodeName] = NodeLoad{n.Pods + 1, n.MilliCPU + now.MilliCPU, n.Memory + now.Memory}
		l.pods[key] = podLoad{pod.Spec.NodeName, now}
	}
}

package resize

import (
	"runtime"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// API returns the API the node talks to (Deps.Cluster), or nil for a Node
// that NewNode did not make.
func (n *Node) API() API {
	if n == nil || n.core == nil {
		return nil
	}
	return n.cluster
}

// V1 returns the node as the API server shows it to controllers that read
// nodes: a v1.Node named after the node, labelled kubernetes.io/hostname
// and kubernetes.io/os, with its capacity and allocatable, a Ready
// condition, and node info whose kubeletVersion is the release its
// profile reproduces (profile.Version.Release). Ready is True while the
// node runs and Unknown once it is closed, as the node lifecycle
// controller marks a node whose kubelet stopped posting its status. Each
// call returns a new object; nil for a Node that NewNode did not make.
func (n *Node) V1() *v1.Node {
	if n == nil || n.core == nil {
		return nil
	}
	cfg := n.cfg
	ready := v1.NodeCondition{
		Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status",
		LastHeartbeatTime: metav1.NewTime(n.clock.Now()), LastTransitionTime: metav1.NewTime(n.started),
	}
	if n.closing() {
		ready.Status, ready.Reason, ready.Message = v1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status."
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:              cfg.Name,
			Labels:            map[string]string{v1.LabelHostname: cfg.Name, v1.LabelOSStable: cfg.OS, v1.LabelArchStable: runtime.GOARCH},
			CreationTimestamp: metav1.NewTime(n.started),
		},
		Status: v1.NodeStatus{
			Capacity:    cfg.Capacity.DeepCopy(),
			Allocatable: cfg.Allocatable.DeepCopy(),
			Conditions:  []v1.NodeCondition{ready},
			NodeInfo: v1.NodeSystemInfo{
				KubeletVersion:  cfg.Profile.Release(),
				OperatingSystem: cfg.OS,
				Architecture:    runtime.GOARCH,
			},
		},
	}
}

// API returns the API server every node of the fleet shares, as an API
// (Cluster gives it as the *Cluster it is); nil for a Fleet that NewFleet
// did not make.
func (f *Fleet) API() API {
	if !f.made() {
		return nil
	}
	return f.cluster
}

// V1Nodes returns the fleet's nodes as the API server shows them (Node.V1),
// in the order they were added.
func (f *Fleet) V1Nodes() []*v1.Node {
	var out []*v1.Node
	for _, n := range f.Nodes() {
		out = append(out, n.V1())
	}
	return out
}

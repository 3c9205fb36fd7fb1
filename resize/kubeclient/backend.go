package kubeclient

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/apiserver"
)

// Backend is what the adapter serves: reads and watches from the cluster, writes that the
// kubelet(s) must see routed to them. Whatever pod CreatePod and Resize return, the
// adapter answers those writes with the cluster's copy of the pod once they returned
// (after the kubelet reacted), with its resourceVersion.
type Backend interface {
	Cluster() *apiserver.Cluster
	CreatePod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error)
	DeletePod(ctx context.Context, namespace, name string) error
	Resize(ctx context.Context, op resize.ResizeOp) (*v1.Pod, error)
}

// ForNode is the Backend of one simulated node and its cluster: pods are
// created, deleted and resized through the node (Node.AddPod,
// Node.DeletePod, Node.Resize), which runs until it is quiet, and
// the pod a write returns is then read back from the cluster, with its
// resourceVersion. node must be a node of cluster.
func ForNode(cluster *apiserver.Cluster, node *resize.Node) Backend {
	return &nodeBackend{cluster: cluster, node: node}
}

type nodeBackend struct {
	cluster *apiserver.Cluster
	node    *resize.Node
}

// Cluster is the node's cluster, which reads and watches go to.
func (b *nodeBackend) Cluster() *apiserver.Cluster { return b.cluster }

// check refuses a write the backend cannot make: without a node (ForNode
// given nil) or with a nil context, which the node would use.
func (b *nodeBackend) check(ctx context.Context, what string) error {
	if b.node == nil {
		return ErrNoBackend
	}
	if ctx == nil {
		return errNilContext(what)
	}
	return nil
}

// CreatePod adds the pod to the node and reads it back.
func (b *nodeBackend) CreatePod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error) {
	if err := b.check(ctx, "create pod"); err != nil {
		return nil, err
	}
	created, err := b.node.AddPod(ctx, pod)
	if err != nil {
		return nil, err
	}
	return b.cluster.GetPodVersioned(created.Namespace, created.Name)
}

// DeletePod deletes the pod through the node.
func (b *nodeBackend) DeletePod(ctx context.Context, namespace, name string) error {
	if err := b.check(ctx, "delete pod"); err != nil {
		return err
	}
	return b.node.DeletePod(ctx, namespace, name)
}

// Resize resizes the pod through the node and reads it back.
func (b *nodeBackend) Resize(ctx context.Context, op resize.ResizeOp) (*v1.Pod, error) {
	if err := b.check(ctx, "resize pod"); err != nil {
		return nil, err
	}
	pod, err := b.node.Resize(ctx, op)
	if err != nil || op.DryRun {
		return pod, err
	}
	return b.cluster.GetPodVersioned(op.Namespace, op.Name)
}

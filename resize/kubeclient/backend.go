package kubeclient

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/apiserver"
)

// Backend is what the adapter serves: reads and watches from its API,
// writes that the kubelets must see routed to them. Whatever pod
// CreatePod and Resize return, the adapter answers those writes with the
// API's copy of the pod once they returned (after the kubelet reacted).
// Resize must honour op.DryRun (store nothing, tell no kubelet, answer
// with the pod the API server would store): the clientset's dry-run
// patches of the resize subresource go through it, as Node.Resize and
// Fleet.Resize do.
//
// Any resize.API can be served. The adapter reads through it, using the
// optional interfaces it has, which *apiserver.Cluster has all of:
// VersionedReader for resourceVersions (without it, objects and lists
// have none, and a write's preconditions cannot be checked), Watcher for
// watches (without it, a watch is the API server's 405) and EventLister
// for events (without it, there are none). A Backend that is a
// NodeLister serves nodes too. *resize.Fleet is a Backend, and ForNode
// makes one of a Node.
type Backend interface {
	API() resize.API
	CreatePod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error)
	DeletePod(ctx context.Context, namespace, name string) error
	Resize(ctx context.Context, op resize.ResizeOp) (*v1.Pod, error)
}

// VersionedReader is an API whose reads carry resourceVersions, as the
// API server's do (apiserver.Cluster.GetPodVersioned, ListPodsVersioned).
type VersionedReader interface {
	GetPodVersioned(namespace, name string) (*v1.Pod, error)
	ListPodsVersioned() ([]*v1.Pod, uint64)
}

// Watcher is an API that can be watched (apiserver.Cluster.Watch).
type Watcher interface {
	Watch(opts apiserver.WatchOptions) (*apiserver.Watcher, error)
}

// EventLister is an API that lists the events it keeps, as core v1
// events (apiserver.Cluster.EventList).
type EventLister interface {
	EventList(namespace string) *v1.EventList
}

// NodeLister is a Backend that serves nodes, as the API server shows them
// (resize.Node.V1, resize.Fleet.V1Nodes); the first one's kubelet version
// is the server version the clientset reports.
type NodeLister interface {
	V1Nodes() []*v1.Node
}

var (
	_ Backend         = (*resize.Fleet)(nil)
	_ NodeLister      = (*resize.Fleet)(nil)
	_ VersionedReader = (*apiserver.Cluster)(nil)
	_ Watcher         = (*apiserver.Cluster)(nil)
	_ EventLister     = (*apiserver.Cluster)(nil)
)

// ForNode is the Backend of one node: reads from the node's API
// (Node.API), and pods created, deleted and resized through the node
// (Node.AddPod, Node.DeletePod, Node.Resize), which runs until it is
// quiet; it serves the node itself (Node.V1) as a NodeLister.
func ForNode(node *resize.Node) Backend {
	return &nodeBackend{node: node}
}

type nodeBackend struct {
	node *resize.Node
}

// API is the node's API, which reads and watches go to.
func (b *nodeBackend) API() resize.API { return b.node.API() }

// V1Nodes is the node, as the API server shows it.
func (b *nodeBackend) V1Nodes() []*v1.Node {
	if n := b.node.V1(); n != nil {
		return []*v1.Node{n}
	}
	return nil
}

// check refuses a write the backend cannot make: without a node (ForNode
// given nil, or one NewNode did not make) or with a nil context, which
// the node would use.
func (b *nodeBackend) check(ctx context.Context, what string) error {
	if b.node.API() == nil {
		return ErrNoBackend
	}
	if ctx == nil {
		return errNilContext(what)
	}
	return nil
}

// CreatePod adds the pod to the node.
func (b *nodeBackend) CreatePod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error) {
	if err := b.check(ctx, "create pod"); err != nil {
		return nil, err
	}
	return b.node.AddPod(ctx, pod)
}

// DeletePod deletes the pod through the node.
func (b *nodeBackend) DeletePod(ctx context.Context, namespace, name string) error {
	if err := b.check(ctx, "delete pod"); err != nil {
		return err
	}
	return b.node.DeletePod(ctx, namespace, name)
}

// Resize resizes the pod through the node.
func (b *nodeBackend) Resize(ctx context.Context, op resize.ResizeOp) (*v1.Pod, error) {
	if err := b.check(ctx, "resize pod"); err != nil {
		return nil, err
	}
	return b.node.Resize(ctx, op)
}

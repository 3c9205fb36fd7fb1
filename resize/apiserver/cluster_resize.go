package apiserver

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ResizePod applies a resize through the resize subresource. On success
// the stored pod has the new spec (and generation, if the spec changed)
// and a new resourceVersion; on error nothing changes. A missing pod is a
// 404 (ErrPodNotFound); the patch's own errors are ApplyResize's. The pod
// returned is the stored one, never changed in place, shared: read it, or
// DeepCopy it before changing it. It has no resourceVersion.
func (c *Cluster) ResizePod(_ context.Context, namespace, name string, patch []byte) (*v1.Pod, error) {
	return c.resizePatch(namespace, name, StrategicMergePatch, patch, true)
}

// ResizePodRequest applies a typed resize (ApplyResizeRequest) as
// ResizePod applies its patch.
func (c *Cluster) ResizePodRequest(_ context.Context, namespace, name string, req ResizeRequest) (*v1.Pod, error) {
	return c.resize(namespace, name, true, func(old *v1.Pod, o ResizeOptions) (*v1.Pod, error) {
		return ApplyResizeRequest(old, req, o)
	})
}

// DryRunResizePod applies a resize as ResizePod does and returns the pod
// it would store, shared in the same way, without storing it (the API
// server's dry run).
func (c *Cluster) DryRunResizePod(_ context.Context, namespace, name string, patch []byte) (*v1.Pod, error) {
	return c.resizePatch(namespace, name, StrategicMergePatch, patch, false)
}

// RegisterNode records a node, as a kubelet registers its Node object, for
// the admission plugins that check a resize against the node the pod is
// bound to (AdmitResize). Registering a name again replaces that node (a
// restarted kubelet registers anew). Those plugins let every resize of an
// unbound pod through (see Cluster), and refuse one of a pod bound to a
// node never registered ("node %q not found").
func (c *Cluster) RegisterNode(_ context.Context, node NodeInfo) {
	if !c.lock() {
		return
	}
	defer c.mu.Unlock()
	node.Allocatable = node.Allocatable.DeepCopy()
	if c.nodes == nil {
		c.nodes = map[string]*NodeInfo{}
	}
	c.nodes[node.Name] = &node
}

// Node returns the registered node of that name.
func (c *Cluster) Node(name string) (NodeInfo, bool) {
	if !c.lock() {
		return NodeInfo{}, false
	}
	defer c.mu.Unlock()
	n, ok := c.nodes[name]
	if !ok {
		return NodeInfo{}, false
	}
	out := *n
	out.Allocatable = n.Allocatable.DeepCopy()
	return out, true
}

// boundNode returns the name of the node p is bound to ("" when unbound)
// and that node as registered (nil when none is). The caller holds c.mu.
func (c *Cluster) boundNode(p *v1.Pod) (string, *NodeInfo) {
	if name := p.Spec.NodeName; name != "" {
		return name, c.nodes[name]
	}
	if len(c.nodes) == 1 {
		for name, n := range c.nodes {
			return name, n
		}
	}
	return "", nil
}

// resize runs apply on the stored pod under the lock, then the admission
// plugins (AdmitResize), and with store stores the result.
func (c *Cluster) resize(namespace, name string, store bool, apply func(old *v1.Pod, o ResizeOptions) (*v1.Pod, error)) (*v1.Pod, error) {
	if !c.lock() {
		return nil, ErrNilCluster
	}
	defer c.mu.Unlock()
	key := podRef{namespace, name}
	old, sp, ok := c.get(key)
	if !ok {
		return nil, podNotFound(name)
	}
	opts := c.resizeOptions()
	opts.resourceVersion = sp.rv
	updated, err := apply(old, opts)
	if err != nil {
		return nil, err
	}
	// The resize strategy keeps spec.nodeName.
	bound, node := c.boundNode(updated)
	if err := admitResize(old, updated, bound, node, opts); err != nil {
		return nil, err
	}
	if store {
		c.put(key, updated)
	}
	return updated, nil
}

// ResizePodPatch is ResizePod for a patch of type pt (ApplyResizePatch),
// checked before the pod is looked up, as the API server does. The pod
// returned is the stored one, shared, as ResizePod's.
func (c *Cluster) ResizePodPatch(_ context.Context, namespace, name string, pt types.PatchType, patch []byte) (*v1.Pod, error) {
	return c.resizePatch(namespace, name, pt, patch, true)
}

// DryRunResizePodPatch is DryRunResizePod for a patch of type pt.
func (c *Cluster) DryRunResizePodPatch(_ context.Context, namespace, name string, pt types.PatchType, patch []byte) (*v1.Pod, error) {
	return c.resizePatch(namespace, name, pt, patch, false)
}

// resizePatch is resize for a patch of type pt, which is checked first.
func (c *Cluster) resizePatch(namespace, name string, pt types.PatchType, patch []byte, store bool) (*v1.Pod, error) {
	if err := ValidPatchType(pt); err != nil {
		return nil, err
	}
	return c.resize(namespace, name, store, func(old *v1.Pod, o ResizeOptions) (*v1.Pod, error) {
		return ApplyResizePatch(old, pt, patch, o)
	})
}

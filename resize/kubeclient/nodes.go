package kubeclient

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"

	applycorev1 "k8s.io/client-go/applyconfigurations/core/v1"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/resizelet/resizelet/resize/profile"
)

// nodes is the backend's nodes (NodeLister), read only: they change when
// the simulation adds or restarts a node, not through the API.
type nodes struct {
	corev1client.NodeInterface
	b Backend
}

// v1Nodes is the backend's nodes, none for a backend that serves none.
func v1Nodes(b Backend) []*v1.Node {
	if l, ok := b.(NodeLister); ok {
		return l.V1Nodes()
	}
	return nil
}

// Get returns the node of that name, or the API server's 404.
func (n *nodes) Get(ctx context.Context, name string, opts metav1.GetOptions) (*v1.Node, error) {
	for _, node := range v1Nodes(n.b) {
		if node.Name == name {
			return node, nil
		}
	}
	return nil, notFound(nodesResource, name)
}

// List lists the nodes with the label and field selectors of opts (the
// API server's node field labels: metadata.name, spec.unschedulable).
func (n *nodes) List(ctx context.Context, opts metav1.ListOptions) (*v1.NodeList, error) {
	sel, err := parseSelector(opts, nodeFieldLabel)
	if err != nil {
		return nil, err
	}
	list := &v1.NodeList{}
	for _, node := range v1Nodes(n.b) {
		if sel.matches(node.Labels, nodeFields(node)) {
			list.Items = append(list.Items, *node)
		}
	}
	return list, nil
}

// Watch is not served: the nodes have no resourceVersions to watch from.
func (n *nodes) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return nil, notSupported(nodesResource, "watch")
}

// Create and every other write are refused with the API server's 405: a
// node is the simulation's, not the API's, to change.
func (n *nodes) Create(context.Context, *v1.Node, metav1.CreateOptions) (*v1.Node, error) {
	return nil, notSupported(nodesResource, "create")
}

// Update is refused, as Create.
func (n *nodes) Update(context.Context, *v1.Node, metav1.UpdateOptions) (*v1.Node, error) {
	return nil, notSupported(nodesResource, "update")
}

// UpdateStatus is refused, as Create.
func (n *nodes) UpdateStatus(context.Context, *v1.Node, metav1.UpdateOptions) (*v1.Node, error) {
	return nil, notSupported(nodesResource, "update status")
}

// Delete is refused, as Create.
func (n *nodes) Delete(context.Context, string, metav1.DeleteOptions) error {
	return notSupported(nodesResource, "delete")
}

// DeleteCollection is refused, as Create.
func (n *nodes) DeleteCollection(context.Context, metav1.DeleteOptions, metav1.ListOptions) error {
	return notSupported(nodesResource, "delete collection")
}

// Patch is refused, as Create.
func (n *nodes) Patch(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (*v1.Node, error) {
	return nil, notSupported(nodesResource, "patch")
}

// PatchStatus is refused, as Create.
func (n *nodes) PatchStatus(context.Context, string, []byte) (*v1.Node, error) {
	return nil, notSupported(nodesResource, "patch status")
}

// Apply is refused, as Create.
func (n *nodes) Apply(context.Context, *applycorev1.NodeApplyConfiguration, metav1.ApplyOptions) (*v1.Node, error) {
	return nil, notSupported(nodesResource, "apply")
}

// ApplyStatus is refused, as Create.
func (n *nodes) ApplyStatus(context.Context, *applycorev1.NodeApplyConfiguration, metav1.ApplyOptions) (*v1.Node, error) {
	return nil, notSupported(nodesResource, "apply status")
}

// nodeFields are the fields a node is selected by (pkg/registry/core/
// node/strategy.go, NodeToSelectableFields).
func nodeFields(node *v1.Node) fields.Set {
	return fields.Set{"metadata.name": node.Name, "spec.unschedulable": strconv.FormatBool(node.Spec.Unschedulable)}
}

// nodeFieldLabel is the field label conversion of v1 Nodes
// (pkg/apis/core/v1/conversion.go, AddFieldLabelConversionsForNode).
func nodeFieldLabel(label, value string) (string, string, error) {
	switch label {
	case "metadata.name", "spec.unschedulable":
		return label, value, nil
	}
	return "", "", fmt.Errorf("field label not supported: %s", label)
}

// serverDiscovery is the fake's discovery with the server version of the
// backend: the release its first node's kubelet reports, or that of the
// version of record when it serves no node.
type serverDiscovery struct {
	discovery.DiscoveryInterface
	b Backend
}

// ServerVersion is the release of the backend's kubelets, as the API
// server of a cluster of that release reports it.
func (d *serverDiscovery) ServerVersion() (*version.Info, error) {
	release := profile.Default.Release()
	if ns := v1Nodes(d.b); len(ns) > 0 && ns[0].Status.NodeInfo.KubeletVersion != "" {
		release = ns[0].Status.NodeInfo.KubeletVersion
	}
	major, rest, _ := strings.Cut(strings.TrimPrefix(release, "v"), ".")
	minor, _, _ := strings.Cut(rest, ".")
	return &version.Info{Major: major, Minor: minor, GitVersion: release, Platform: "linux/" + runtime.GOARCH}, nil
}

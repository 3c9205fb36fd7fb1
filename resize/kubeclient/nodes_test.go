package kubeclient_test

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/kubeclient"
)

// TestServesNodes: the clientset serves the node as the API server shows
// it (capacity, allocatable, Ready, the kubelet version of its profile),
// by name and by field selector; writes and watches are 405; the server
// version is the node's release.
func TestServesNodes(t *testing.T) {
	w := newWorld(t)
	nodes := w.client.CoreV1().Nodes()
	n, err := nodes.Get(w.ctx, "node-7", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := w.node.Config()
	if !n.Status.Allocatable.Cpu().Equal(*cfg.Allocatable.Cpu()) || !n.Status.Capacity.Memory().Equal(*cfg.Capacity.Memory()) {
		t.Errorf("node resources %v / %v, want the config's %v / %v", n.Status.Capacity, n.Status.Allocatable, cfg.Capacity, cfg.Allocatable)
	}
	if len(n.Status.Conditions) != 1 || n.Status.Conditions[0].Type != v1.NodeReady || n.Status.Conditions[0].Status != v1.ConditionTrue {
		t.Errorf("conditions %+v, want Ready True", n.Status.Conditions)
	}
	if got := n.Status.NodeInfo.KubeletVersion; got != "v1.35.4" {
		t.Errorf("kubeletVersion %q, want v1.35.4", got)
	}
	if n.Labels[v1.LabelOSStable] != "linux" || n.Labels[v1.LabelHostname] != "node-7" {
		t.Errorf("labels %v", n.Labels)
	}
	if _, err := nodes.Get(w.ctx, "node-8", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Get of another node: %v, want 404", err)
	}
	for sel, want := range map[string]int{"metadata.name=node-7": 1, "metadata.name=node-8": 0, "spec.unschedulable=false": 1} {
		list, err := nodes.List(w.ctx, metav1.ListOptions{FieldSelector: sel})
		if err != nil || len(list.Items) != want {
			t.Errorf("List %s: %v, %v; want %d nodes", sel, list, err, want)
		}
	}
	if _, err := nodes.List(w.ctx, metav1.ListOptions{FieldSelector: "status.phase=Running"}); !apierrors.IsBadRequest(err) {
		t.Errorf("List by a field nodes have no label for: %v, want 400", err)
	}
	if _, err := nodes.Create(w.ctx, n, metav1.CreateOptions{}); !apierrors.IsMethodNotSupported(err) {
		t.Errorf("Create: %v, want 405", err)
	}
	if _, err := nodes.Watch(w.ctx, metav1.ListOptions{}); !apierrors.IsMethodNotSupported(err) {
		t.Errorf("Watch: %v, want 405", err)
	}
	v, err := w.client.Discovery().ServerVersion()
	if err != nil || v.GitVersion != "v1.35.4" || v.Major != "1" || v.Minor != "35" {
		t.Errorf("server version %+v, %v; want v1.35.4", v, err)
	}
	w.node.Close()
	n, err = nodes.Get(w.ctx, "node-7", metav1.GetOptions{})
	if err != nil || n.Status.Conditions[0].Status != v1.ConditionUnknown {
		t.Errorf("the closed node: %v, %v; want Ready Unknown", n, err)
	}
}

// TestServerVersionIsTheProfiles: a fleet's clientset reports the release
// of its nodes' profile.
func TestServerVersionIsTheProfiles(t *testing.T) {
	f := resize.NewFleet(resize.FleetOptions{})
	defer f.Close()
	if _, err := f.AddNode(context.Background(), resize.NodeConfig{Name: "a", Profile: resize.Profile136}, resize.Deps{}); err != nil {
		t.Fatal(err)
	}
	v, err := kubeclient.New(f).Discovery().ServerVersion()
	if err != nil || v.GitVersion != "v1.36.3" || v.Minor != "36" {
		t.Errorf("server version %+v, %v; want v1.36.3", v, err)
	}
	list, err := kubeclient.New(f).CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].Status.NodeInfo.KubeletVersion != "v1.36.3" {
		t.Errorf("the fleet's nodes: %v, %v", list, err)
	}
}

// plainAPI is a resize.API with none of the optional interfaces: an
// embedder's own API.
type plainAPI struct{ resize.API }

// plainBackend serves a plainAPI, writing through the node.
type plainBackend struct {
	kubeclient.Backend
	api plainAPI
}

func (b plainBackend) API() resize.API { return b.api }

// TestServesAnyAPI: a Backend whose API is only a resize.API serves its
// pods without resourceVersions, refuses watches with 405 and has no
// events, while writes still go through the node.
func TestServesAnyAPI(t *testing.T) {
	w := newWorld(t)
	client := kubeclient.New(plainBackend{Backend: kubeclient.ForNode(w.node), api: plainAPI{w.cluster}})
	pods := client.CoreV1().Pods("default")
	if _, err := pods.Create(w.ctx, webPod("web"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := pods.Get(w.ctx, "web", metav1.GetOptions{})
	if err != nil || got.Name != "web" || got.ResourceVersion != "" {
		t.Errorf("Get: %v, %v; want the pod without a resourceVersion", got, err)
	}
	list, err := pods.List(w.ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.ResourceVersion != "" {
		t.Errorf("List: %v, %v", list, err)
	}
	if _, err := pods.Watch(w.ctx, metav1.ListOptions{}); !apierrors.IsMethodNotSupported(err) {
		t.Errorf("Watch: %v, want 405", err)
	}
	events, err := client.CoreV1().Events("").List(w.ctx, metav1.ListOptions{})
	if err != nil || len(events.Items) != 0 {
		t.Errorf("events of an API without them: %v, %v", events, err)
	}
	if len(w.cluster.Events()) == 0 {
		t.Error("the node recorded no event: the write did not reach it")
	}
}

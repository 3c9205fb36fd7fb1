package realhost_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/resizelet/resizelet/resize/kubeapi"
)

// apiserverHow says how to get the real API server the tests in this file
// and its users need.
const apiserverHow = "run: eval $(examples/realhost/apiserver.sh start /tmp/rl-api | sed 's/^/export RESIZELET_/')"

// settleWithin is how long a check on the real API server polls before it
// gives up. It is generous: the nodes run on the wall clock beside the
// other packages' tests, and nothing here is a timing assertion, only a
// bound on how long a broken run takes to fail.
const settleWithin = 45 * time.Second

// kubeEnv returns the kubeconfig of the real API server and the kubectl of
// its release, or skips (fails in CI) without them.
func kubeEnv(t *testing.T) (kubeconfig, kubectl string) {
	t.Helper()
	kubeconfig = env(t, "RESIZELET_KUBECONFIG", apiserverHow)
	kubectl = env(t, "RESIZELET_KUBECTL", apiserverHow)
	return kubeconfig, kubectl
}

// kubeClient returns a client of the API server in kubeconfig.
func kubeClient(t *testing.T, kubeconfig string) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatalf("kubeconfig %s: %v", kubeconfig, err)
	}
	// The tests poll; the default 5 queries per second would make the
	// polls, not the nodes, what the tests wait for.
	cfg.QPS, cfg.Burst = 100, 200
	cfg.UserAgent = "resizelet-realhost-test"
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// uniqueName is prefix followed by a suffix no other run of the tests on
// the same API server has (the process and the time), so that tests and
// runs that share the API server never meet, and what a killed run left
// does not get in the way.
func uniqueName(prefix string) string {
	return fmt.Sprintf("%s-%d-%x", prefix, os.Getpid(), time.Now().UnixNano()&0xffffffff)
}

// newNamespace creates the namespace and its "default" ServiceAccount
// (which the ServiceAccount admission plugin needs before it admits a pod,
// and which no controller manager makes here), and removes both, with
// everything the test left in the namespace, when the test ends.
func newNamespace(t *testing.T, client kubernetes.Interface, name string) {
	t.Helper()
	ctx := t.Context()
	if _, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	t.Cleanup(func() { deleteNamespace(t, client, name) })
	sa := &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: name}}
	if _, err := client.CoreV1().ServiceAccounts(name).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create the ServiceAccount of namespace %s: %v", name, err)
	}
}

// deleteNamespace removes the namespace and what is in it. With no
// controller manager, nobody empties a namespace marked for deletion nor
// removes its "kubernetes" finalizer, so this does both, as the namespace
// controller would: it deletes the pods (at once: their node may be gone),
// events and ServiceAccounts, deletes the namespace, and finalizes it.
func deleteNamespace(t *testing.T, client kubernetes.Interface, name string) {
	// The test's context is done by now.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	now := metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))}
	all := metav1.ListOptions{}
	core := client.CoreV1()
	for what, err := range map[string]error{
		"pods":            core.Pods(name).DeleteCollection(ctx, now, all),
		"events":          core.Events(name).DeleteCollection(ctx, now, all),
		"serviceaccounts": core.ServiceAccounts(name).DeleteCollection(ctx, now, all),
	} {
		if err != nil {
			t.Errorf("cleanup: delete the %s of namespace %s: %v", what, name, err)
		}
	}
	if err := core.Namespaces().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("cleanup: delete namespace %s: %v", name, err)
		return
	}
	ns, err := core.Namespaces().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return
	}
	if err != nil {
		t.Errorf("cleanup: namespace %s: %v", name, err)
		return
	}
	ns.Spec.Finalizers = nil
	if _, err := core.Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("cleanup: finalize namespace %s: %v", name, err)
	}
}

// deleteNodes removes the Node objects and the Leases of the nodes the
// test registered. The Lease names its Node as its owner, but no garbage
// collector runs here to follow that.
func deleteNodes(t *testing.T, client kubernetes.Interface, names ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, name := range names {
		if err := client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("cleanup: delete node %s: %v", name, err)
		}
		if err := client.CoordinationV1().Leases(kubeapi.NodeLeaseNamespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("cleanup: delete the lease of node %s: %v", name, err)
		}
	}
}

// poll calls check until it returns nil, and fails the test with its last
// error if that does not happen within settleWithin.
func poll(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(settleWithin)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) || t.Context().Err() != nil {
			t.Fatalf("%s: not so after %v: %v", what, settleWithin, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// indent indents every line of s, for output within a failure message.
func indent(s string) string {
	return "\t" + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n\t")
}

package kubeapi

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// The tests run the API on client-go's fake clientset. The fake stores
// what it is sent and answers from its object tracker; it does not filter
// lists and watches by field selector, assign UIDs, creation timestamps
// or generations, nor check delete preconditions. The tests set what the
// API server would set themselves, and check what the fake does not
// enforce on the actions it recorded.

// testNode is the node name the tests' APIs serve.
const testNode = "n"

// newAPI returns the API of node on c, closed when the test ends.
func newAPI(t *testing.T, c *fake.Clientset, node string) *API {
	t.Helper()
	a, err := New(t.Context(), c, node, Options{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(a.Close)
	return a
}

// servePodFieldSelectors makes c's pod lists and watches honour their
// field selector on spec.nodeName, metadata.name and metadata.namespace,
// as the API server does, so that a test sees which pods the informer's
// selector lets through.
func servePodFieldSelectors(c *fake.Clientset) {
	match := func(sel fields.Selector, p *v1.Pod) bool {
		return sel == nil || sel.Matches(fields.Set{
			"spec.nodeName": p.Spec.NodeName, "metadata.name": p.Name, "metadata.namespace": p.Namespace,
		})
	}
	c.PrependReactor("list", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		la := action.(k8stesting.ListActionImpl)
		obj, err := c.Tracker().List(la.GetResource(), la.GetKind(), la.GetNamespace(), la.ListOptions)
		if err != nil {
			return true, nil, err
		}
		list := obj.(*v1.PodList)
		kept := list.Items[:0]
		for i := range list.Items {
			if match(la.GetListRestrictions().Fields, &list.Items[i]) {
				kept = append(kept, list.Items[i])
			}
		}
		list.Items = kept
		return true, list, nil
	})
	c.PrependWatchReactor("pods", func(action k8stesting.Action) (bool, watch.Interface, error) {
		wa := action.(k8stesting.WatchActionImpl)
		w, err := c.Tracker().Watch(wa.GetResource(), wa.GetNamespace(), wa.ListOptions)
		if err != nil {
			return true, nil, err
		}
		sel := wa.GetWatchRestrictions().Fields
		return true, watch.Filter(w, func(e watch.Event) (watch.Event, bool) {
			p, ok := e.Object.(*v1.Pod)
			return e, !ok || match(sel, p)
		}), nil
	})
}

// pod is a pod as the API server stores it once created: with a UID, a
// creation time and generation 1, which the fake does not set.
func pod(namespace, name, node string, uid types.UID, created time.Time) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, Name: name, UID: uid, Generation: 1,
			CreationTimestamp: metav1.NewTime(created),
		},
		Spec: v1.PodSpec{NodeName: node, Containers: []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
	}
}

// actions returns c's recorded actions of that verb on that resource
// (and subresource, when not "*").
func actions(c *fake.Clientset, verb, resource, subresource string) []k8stesting.Action {
	var out []k8stesting.Action
	for _, a := range c.Actions() {
		if a.Matches(verb, resource) && (subresource == "*" || a.GetSubresource() == subresource) {
			out = append(out, a)
		}
	}
	return out
}

// eventually polls cond until it holds, failing the test with what after
// a deadline generous enough for a loaded machine: the informer and the
// event broadcaster deliver asynchronously.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

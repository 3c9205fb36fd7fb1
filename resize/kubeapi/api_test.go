package kubeapi

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/resizelet/resizelet/resize"
)

// TestDeletePodUID: the status manager's final delete: grace period 0
// with the pod's UID as a precondition (the fake does not check it, so
// the action is checked); a pod already gone (404) or of another UID (the
// API server's 409 for a failed precondition) is success, since the pod
// the call was for is gone.
func TestDeletePodUID(t *testing.T) {
	p := pod("default", "p", testNode, "uid-1", time.Now())
	c := fake.NewClientset(p)
	a := newAPI(t, c, testNode)
	ctx := t.Context()

	c.ClearActions()
	if err := a.DeletePodUID(ctx, "default", "p", p.UID); err != nil {
		t.Fatal(err)
	}
	deletes := actions(c, "delete", "pods", "")
	if len(deletes) != 1 {
		t.Fatalf("%d deletes, want 1", len(deletes))
	}
	if n := len(actions(c, "get", "pods", "")); n != 0 {
		t.Errorf("%d GETs: the UID comes from the caller, not from a read", n)
	}
	opts := deletes[0].(k8stesting.DeleteActionImpl).GetDeleteOptions()
	if opts.GracePeriodSeconds == nil || *opts.GracePeriodSeconds != 0 {
		t.Errorf("gracePeriodSeconds = %v, want 0", opts.GracePeriodSeconds)
	}
	if opts.Preconditions == nil || opts.Preconditions.UID == nil || *opts.Preconditions.UID != p.UID {
		t.Errorf("preconditions = %+v, want uid %s", opts.Preconditions, p.UID)
	}
	if _, err := c.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the pod is still there: %v", err)
	}
	if err := a.DeletePodUID(ctx, "default", "p", p.UID); err != nil {
		t.Errorf("deleting a pod already gone: %v, want nil", err)
	}

	if _, err := c.CoreV1().Pods("default").Create(ctx, pod("default", "p", testNode, "uid-2", time.Now()), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.PrependReactor("delete", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(v1.Resource("pods"), "p", errors.New("Precondition failed: UID in precondition: uid-1, UID in object meta: uid-2"))
	})
	if err := a.DeletePodUID(ctx, "default", "p", "uid-1"); err != nil {
		t.Errorf("deleting uid-1 when the name is uid-2's: %v, want nil (the pod asked for is gone)", err)
	}
}

// TestDeletePod: a delete by name alone, grace period 0 and no
// precondition; a pod already gone is success, any other refusal is
// returned, matching the resize package's errors.
func TestDeletePod(t *testing.T) {
	c := fake.NewClientset(pod("default", "p", testNode, "uid-1", time.Now()))
	a := newAPI(t, c, testNode)
	ctx := t.Context()
	c.ClearActions()
	if err := a.DeletePod(ctx, "default", "p"); err != nil {
		t.Fatal(err)
	}
	deletes := actions(c, "delete", "pods", "")
	if len(deletes) != 1 {
		t.Fatalf("%d deletes, want 1", len(deletes))
	}
	opts := deletes[0].(k8stesting.DeleteActionImpl).GetDeleteOptions()
	if opts.GracePeriodSeconds == nil || *opts.GracePeriodSeconds != 0 || opts.Preconditions != nil {
		t.Errorf("delete options %+v, want grace period 0 and no precondition", opts)
	}
	if err := a.DeletePod(ctx, "default", "p"); err != nil {
		t.Errorf("deleting a pod already gone: %v, want nil", err)
	}
	c.PrependReactor("delete", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(v1.Resource("pods"), "p", errors.New("the object has been modified"))
	})
	if err := a.DeletePod(ctx, "default", "p"); !errors.Is(err, resize.ErrConflict) || !apierrors.IsConflict(err) {
		t.Errorf("DeletePod answered 409: %v, want ErrConflict and a 409", err)
	}
}

// TestErrors: the API server's errors match the resize package's
// sentinels as the in-memory cluster's do, and are still the client's
// *apierrors.StatusError.
func TestErrors(t *testing.T) {
	c := fake.NewClientset(pod("default", "p", testNode, "uid-1", time.Now()))
	a := newAPI(t, c, testNode)
	ctx := t.Context()

	_, err := a.GetPod(ctx, "default", "missing")
	var status *apierrors.StatusError
	if !errors.Is(err, resize.ErrPodNotFound) || !errors.As(err, &status) || !apierrors.IsNotFound(err) {
		t.Errorf("GetPod of a missing pod: %v (%T), want ErrPodNotFound, a *StatusError and a 404", err, err)
	}
	if errors.Is(err, resize.ErrConflict) {
		t.Errorf("a 404 matches ErrConflict: %v", err)
	}

	c.PrependReactor("patch", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "resize" {
			return false, nil, nil
		}
		return true, nil, apierrors.NewConflict(v1.Resource("pods"), "p", errors.New("the object has been modified"))
	})
	_, err = a.ResizePod(ctx, "default", "p", []byte(`{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]}}`))
	status = nil
	if !errors.Is(err, resize.ErrConflict) || !errors.As(err, &status) || !apierrors.IsConflict(err) {
		t.Errorf("a refused resize: %v (%T), want ErrConflict, a *StatusError and a 409", err, err)
	}
	if errors.Is(err, resize.ErrPodNotFound) {
		t.Errorf("a 409 matches ErrPodNotFound: %v", err)
	}
}

// TestResizePodSubresource: a resize is a patch of pods/resize of the
// type given, and a dry run carries dryRun=All.
func TestResizePodSubresource(t *testing.T) {
	c := fake.NewClientset(pod("default", "p", testNode, "uid-1", time.Now()))
	a := newAPI(t, c, testNode)
	ctx := t.Context()
	patch := []byte(`{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]}}`)
	c.ClearActions()
	if _, err := a.ResizePod(ctx, "default", "p", patch); err != nil {
		t.Fatal(err)
	}
	if _, err := a.DryRunResizePod(ctx, "default", "p", patch); err != nil {
		t.Fatal(err)
	}
	got := actions(c, "patch", "pods", "resize")
	if len(got) != 2 {
		t.Fatalf("%d patches of pods/resize, want 2", len(got))
	}
	for i, dry := range []bool{false, true} {
		pa := got[i].(k8stesting.PatchActionImpl)
		isDry := len(pa.PatchOptions.DryRun) == 1 && pa.PatchOptions.DryRun[0] == metav1.DryRunAll
		if pa.GetPatchType() != types.StrategicMergePatchType || isDry != dry || string(pa.GetPatch()) != string(patch) {
			t.Errorf("resize %d: type %s, dryRun %v, patch %s; want a strategic merge patch, dry run %v", i, pa.GetPatchType(), pa.PatchOptions.DryRun, pa.GetPatch(), dry)
		}
	}
}

// TestListPods: the informer asks for the pods bound to the node
// (spec.nodeName) and ListPods returns them oldest first, ties by
// namespace and name. The fake ignores field selectors; with the test's
// reactors it filters as the API server does, and the selector the
// informer sent is checked too.
func TestListPods(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := fake.NewClientset(
		pod("b", "x", testNode, "1", t0.Add(time.Minute)),
		pod("a", "y", testNode, "2", t0.Add(time.Minute)),
		pod("a", "x", testNode, "3", t0.Add(time.Minute)),
		pod("z", "old", testNode, "4", t0),
		pod("a", "elsewhere", "m", "5", t0),
		pod("a", "unbound", "", "6", t0),
	)
	servePodFieldSelectors(c)
	a := newAPI(t, c, testNode)
	names := func() string {
		var out []string
		for _, p := range a.ListPods(t.Context()) {
			out = append(out, p.Namespace+"/"+p.Name)
		}
		return strings.Join(out, " ")
	}
	if got, want := names(), "z/old a/x a/y b/x"; got != want {
		t.Errorf("ListPods = %s, want %s", got, want)
	}

	// Pods created later arrive through the watch; the one bound to
	// another node, created first, has been filtered out once the later
	// one is there.
	ctx := t.Context()
	for _, p := range []*v1.Pod{pod("a", "later-elsewhere", "m", "7", t0), pod("a", "later", testNode, "8", t0.Add(time.Hour))} {
		if _, err := c.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "the later pod in ListPods", func() bool { return strings.HasSuffix(names(), " a/later") })
	if got, want := names(), "z/old a/x a/y b/x a/later"; got != want {
		t.Errorf("ListPods = %s, want %s", got, want)
	}

	// The informer has listed and is watching (the later pod came through
	// the watch): both asked for the node's pods alone.
	for _, verb := range []string{"list", "watch"} {
		acts := actions(c, verb, "pods", "")
		if len(acts) == 0 {
			t.Errorf("no %s of pods recorded", verb)
		}
		for _, act := range acts {
			var sel string
			switch act := act.(type) {
			case k8stesting.ListActionImpl:
				sel = act.ListOptions.FieldSelector
			case k8stesting.WatchActionImpl:
				sel = act.ListOptions.FieldSelector
			}
			if sel != "spec.nodeName="+testNode {
				t.Errorf("%s of pods with field selector %q, want spec.nodeName=%s", verb, sel, testNode)
			}
		}
	}

	// ListPods returns copies: changing one leaves the informer's alone.
	first := a.ListPods(ctx)[0]
	first.Labels = map[string]string{"changed": "yes"}
	if a.ListPods(ctx)[0].Labels != nil {
		t.Error("ListPods returned the informer's own pod")
	}
}

// eventsOf returns the events c stores in namespace.
func eventsOf(t *testing.T, c *fake.Clientset, namespace string) []v1.Event {
	t.Helper()
	l, err := c.CoreV1().Events(namespace).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// lazyMessage is a resize event's message rendered when read.
type lazyMessage struct{ n int }

func (m lazyMessage) String() string { return fmt.Sprintf("Pod resize completed: generation %d", m.n) }

// TestRecordEvent: an event reaches the events API as the kubelet's
// recorder sends it: from component kubelet on this host, about the pod
// (kind Pod, its UID) with the event's type, reason and message; a lazy
// message is rendered; an event about a pod the informer no longer has,
// or has under another UID, is about the event's UID.
func TestRecordEvent(t *testing.T) {
	p := pod("default", "p", testNode, "uid-1", time.Now())
	c := fake.NewClientset(p)
	a := newAPI(t, c, testNode)
	ctx := t.Context()
	a.RecordEvent(ctx, resize.Event{Namespace: "default", Pod: "p", UID: p.UID, Type: v1.EventTypeNormal, Reason: "ResizeStarted", Message: "Pod resize started"})
	a.RecordEvent(ctx, resize.Event{Namespace: "default", Pod: "p", UID: p.UID, Type: v1.EventTypeNormal, Reason: "ResizeCompleted", Lazy: lazyMessage{2}})
	a.RecordEvent(ctx, resize.Event{Namespace: "default", Pod: "gone", UID: "uid-gone", Type: v1.EventTypeWarning, Reason: "FailedKillPod", Message: "teardown failed"})
	a.RecordEvent(ctx, resize.Event{Namespace: "default", Pod: "p", UID: "uid-earlier", Type: v1.EventTypeNormal, Reason: "Killing", Message: "Stopping container c"})
	eventually(t, "four events", func() bool { return len(eventsOf(t, c, "default")) == 4 })

	byReason := map[string]v1.Event{}
	for _, e := range eventsOf(t, c, "default") {
		byReason[e.Reason] = e
	}
	for _, want := range []struct {
		reason, typ, msg, pod string
		uid                   string
	}{
		{"ResizeStarted", v1.EventTypeNormal, "Pod resize started", "p", "uid-1"},
		{"ResizeCompleted", v1.EventTypeNormal, "Pod resize completed: generation 2", "p", "uid-1"},
		{"FailedKillPod", v1.EventTypeWarning, "teardown failed", "gone", "uid-gone"},
		{"Killing", v1.EventTypeNormal, "Stopping container c", "p", "uid-earlier"},
	} {
		e, ok := byReason[want.reason]
		if !ok {
			t.Errorf("no %s event", want.reason)
			continue
		}
		if e.Source.Component != "kubelet" || e.Source.Host != testNode {
			t.Errorf("%s: source %+v, want component kubelet on host %s", want.reason, e.Source, testNode)
		}
		o := e.InvolvedObject
		if o.Kind != "Pod" || o.Namespace != "default" || o.Name != want.pod || string(o.UID) != want.uid {
			t.Errorf("%s: involvedObject %+v, want Pod default/%s uid %s", want.reason, o, want.pod, want.uid)
		}
		if e.Type != want.typ || e.Message != want.msg {
			t.Errorf("%s: type %s, message %q; want %s, %q", want.reason, e.Type, e.Message, want.typ, want.msg)
		}
	}
}

// TestRecordEventOfAContainer: a container's event is about the
// container, as the kubelet's GenerateContainerRef makes it (the pod's
// reference with fieldPath spec.containers{NAME} or
// spec.initContainers{NAME}), so that the recorder keeps the events of a
// pod's containers apart: two containers' "Container created" are two
// Events, not one counted twice.
func TestRecordEventOfAContainer(t *testing.T) {
	p := pod("default", "p", testNode, "uid-1", time.Now())
	p.Spec.InitContainers = []v1.Container{{Name: "sidecar", Image: "i"}}
	p.Spec.Containers = []v1.Container{{Name: "app", Image: "i"}, {Name: "log", Image: "i"}}
	c := fake.NewClientset(p)
	a := newAPI(t, c, testNode)
	eventually(t, "the pod in the informer", func() bool { return a.cached("default", "p") != nil })
	ctx := t.Context()
	for _, name := range []string{"sidecar", "app", "log"} {
		a.RecordEvent(ctx, resize.Event{Namespace: "default", Pod: "p", UID: p.UID, Container: name, Type: v1.EventTypeNormal, Reason: "Created", Message: "Container created"})
	}
	a.RecordEvent(ctx, resize.Event{Namespace: "default", Pod: "p", UID: p.UID, Type: v1.EventTypeNormal, Reason: "ResizeStarted", Message: "Pod resize started"})
	eventually(t, "four events", func() bool { return len(eventsOf(t, c, "default")) == 4 })
	paths := map[string]int32{}
	for _, e := range eventsOf(t, c, "default") {
		if e.InvolvedObject.Kind != "Pod" || e.InvolvedObject.UID != p.UID {
			t.Errorf("%s: involvedObject %+v, want the pod", e.Reason, e.InvolvedObject)
		}
		paths[e.Reason+" "+e.InvolvedObject.FieldPath] = e.Count
	}
	want := map[string]int32{
		"Created spec.initContainers{sidecar}": 1,
		"Created spec.containers{app}":         1,
		"Created spec.containers{log}":         1,
		"ResizeStarted ":                       1,
	}
	if !maps.Equal(paths, want) {
		t.Errorf("events (reason fieldPath: count) %v, want %v", paths, want)
	}
}

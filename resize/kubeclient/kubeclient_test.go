package kubeclient_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/apiserver"
	"github.com/resizelet/resizelet/resize/kubeclient"
)

// world is a simulated node and a client-go clientset serving it.
type world struct {
	ctx     context.Context
	cluster *resize.Cluster
	node    *resize.Node
	client  kubernetes.Interface
}

func newWorld(t *testing.T) *world {
	t.Helper()
	ctx := context.Background()
	cg := cgroup.NewSimKernel(cgroup.V2)
	cluster := resize.NewCluster(resize.ClusterOptions{})
	node, err := resize.NewNode(ctx, resize.NodeConfig{Name: "node-7"}, resize.Deps{
		Cluster: cluster, Cgroups: cg, Runtime: cri.NewSimContainerd(cg),
	})
	if err != nil {
		t.Fatal(err)
	}
	return &world{ctx: ctx, cluster: cluster, node: node, client: kubeclient.New(kubeclient.ForNode(node))}
}

func list(cpu, mem string) v1.ResourceList {
	return v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse(mem)}
}

// webPod is a Burstable pod of two containers, labelled app=web.
func webPod(name string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "web"}},
		Spec: v1.PodSpec{Containers: []v1.Container{
			{Name: "app", Image: "app:1", Resources: v1.ResourceRequirements{Requests: list("200m", "64Mi"), Limits: list("400m", "128Mi")}},
			{Name: "log", Image: "log:1", Resources: v1.ResourceRequirements{Requests: list("100m", "32Mi"), Limits: list("100m", "32Mi")}},
		}},
	}
}

func (w *world) create(t *testing.T, pods ...*v1.Pod) {
	t.Helper()
	for _, p := range pods {
		if _, err := w.client.CoreV1().Pods("default").Create(w.ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// resizeDone reports what a VPA updater waits for: no resize condition,
// and the status showing the cpu request asked for.
func resizeDone(p *v1.Pod, cpu string) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodResizePending || c.Type == v1.PodResizeInProgress {
			return false
		}
	}
	for _, s := range p.Status.ContainerStatuses {
		if s.Name == "app" {
			return s.Resources != nil && s.Resources.Requests.Cpu().Cmp(resource.MustParse(cpu)) == 0
		}
	}
	return false
}

// TestVPAUpdaterFlow drives the node the way a VPA updater's client-go
// code does: list the pods by label, watch them from the list's
// resourceVersion, send a JSON patch of the resize subresource, wait on
// the watch until the status shows the resize done, then read the events.
func TestVPAUpdaterFlow(t *testing.T) {
	w := newWorld(t)
	w.create(t, webPod("web-1"), webPod("web-2"))
	other := webPod("db")
	other.Labels = map[string]string{"app": "db"}
	w.create(t, other)

	pods := w.client.CoreV1().Pods("default")
	listed, err := pods.List(w.ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	if len(listed.Items) != 2 || listed.Items[0].Name != "web-1" || listed.Items[1].Name != "web-2" {
		t.Fatalf("listed %d pods, want web-1 and web-2", len(listed.Items))
	}
	if listed.ResourceVersion == "" || listed.Items[0].ResourceVersion == "" {
		t.Fatalf("the list and its pods carry no resourceVersion")
	}
	if listed.Items[0].Kind != "" {
		t.Errorf("a typed client's pod has kind %q, want it empty", listed.Items[0].Kind)
	}
	watcher, err := pods.Watch(w.ctx, metav1.ListOptions{LabelSelector: "app=web", ResourceVersion: listed.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Stop()

	patch := `[{"op":"replace","path":"/spec/containers/0/resources/requests/cpu","value":"300m"},` +
		`{"op":"replace","path":"/spec/containers/0/resources/limits/cpu","value":"600m"}]`
	patched, err := pods.Patch(w.ctx, "web-1", types.JSONPatchType, []byte(patch), metav1.PatchOptions{}, "resize")
	if err != nil {
		t.Fatal(err)
	}
	if got := patched.Spec.Containers[0].Resources.Requests.Cpu(); got.Cmp(resource.MustParse("300m")) != 0 || patched.Generation != 2 {
		t.Fatalf("the patch answered spec cpu %s generation %d, want 300m and 2", got, patched.Generation)
	}

	var last *v1.Pod
	timeout := time.After(10 * time.Second)
	for last == nil || !resizeDone(last, "300m") {
		select {
		case ev, ok := <-watcher.ResultChan():
			if !ok {
				t.Fatal("the watch closed before the resize was done")
			}
			if ev.Type != watch.Modified {
				t.Fatalf("watch event %s, want MODIFIED", ev.Type)
			}
			last = ev.Object.(*v1.Pod)
			if last.Name != "web-1" {
				t.Fatalf("watch event for %s, want web-1 only", last.Name)
			}
		case <-timeout:
			t.Fatal("the watch never showed the resize done")
		}
	}
	if last.ResourceVersion != patched.ResourceVersion {
		t.Errorf("the last watch event has resourceVersion %s, the patch answer %s", last.ResourceVersion, patched.ResourceVersion)
	}

	events, err := w.client.CoreV1().Events("default").List(w.ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=web-1"})
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, e := range events.Items {
		reasons = append(reasons, e.Reason)
		if e.InvolvedObject.Name != "web-1" || e.InvolvedObject.Kind != "Pod" || e.InvolvedObject.UID != patched.UID {
			t.Errorf("event %s is about %+v, want pod web-1 %s", e.Name, e.InvolvedObject, patched.UID)
		}
		if e.Source.Component != "kubelet" || e.Source.Host != "node-7" || e.ReportingController != "kubelet" || e.ReportingInstance != "node-7" || e.Count != 1 {
			t.Errorf("event %s: source %+v reporting %s/%s count %d, want the kubelet on node-7, counted once", e.Name, e.Source, e.ReportingController, e.ReportingInstance, e.Count)
		}
	}
	joined := strings.Join(reasons, " ")
	if !strings.Contains(joined, "ResizeStarted ResizeCompleted") {
		t.Errorf("events of web-1: %s, want ResizeStarted then ResizeCompleted", joined)
	}
	k8sio, err := w.client.EventsV1().Events("default").List(w.ctx, metav1.ListOptions{FieldSelector: "regarding.name=web-1,reason=ResizeCompleted"})
	if err != nil {
		t.Fatal(err)
	}
	if len(k8sio.Items) != 1 || k8sio.Items[0].Regarding.UID != patched.UID || !strings.HasPrefix(k8sio.Items[0].Note, "Pod resize completed") {
		t.Errorf("events.k8s.io/v1 ResizeCompleted of web-1: %+v", k8sio.Items)
	}
	found, err := w.client.CoreV1().Events("default").SearchWithContext(context.Background(), scheme.Scheme, patched)
	if err != nil || len(found.Items) != len(events.Items) {
		t.Errorf("Search found %d events (%v), want the %d of web-1", len(found.Items), err, len(events.Items))
	}
}

// TestInformerSeesResize runs a client-go shared informer against the
// node: it lists and watches through the adapter, and its store follows
// the resize.
func TestInformerSeesResize(t *testing.T) {
	w := newWorld(t)
	w.create(t, webPod("web-1"))
	factory := informers.NewSharedInformerFactoryWithOptions(w.client, 0, informers.WithNamespace("default"))
	informer := factory.Core().V1().Pods().Informer()
	done := make(chan struct{})
	updated := make(chan *v1.Pod, 100)
	_, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { updated <- obj.(*v1.Pod) },
	})
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(done)
	defer func() { close(done); factory.Shutdown() }()
	if !cache.WaitForCacheSync(done, informer.HasSynced) {
		t.Fatal("the informer did not sync")
	}
	patch := `{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"250m"}}}]}}`
	if _, err := w.client.CoreV1().Pods("default").Patch(w.ctx, "web-1", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "resize"); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(10 * time.Second)
	for {
		select {
		case p := <-updated:
			if resizeDone(p, "250m") {
				obj, ok, err := informer.GetStore().GetByKey("default/web-1")
				if err != nil || !ok || !resizeDone(obj.(*v1.Pod), "250m") {
					t.Errorf("the store holds %v (%v, %v), want the resized pod", obj, ok, err)
				}
				return
			}
		case <-timeout:
			t.Fatal("the informer never saw the resize done")
		}
	}
}

// TestEventInformerSyncs runs client-go informers of the events, core v1
// and events.k8s.io/v1, on ListWatches of their own (as a controller
// that builds one does, so that client-go cannot ask the clientset whether
// it serves watch-lists): each syncs, since the adapter refuses the
// watch-list client-go asks for first, so that it lists and watches
// rather than wait for a bookmark, and then sees the ResizeCompleted
// event of a resize made after.
func TestEventInformerSyncs(t *testing.T) {
	w := newWorld(t)
	w.create(t, webPod("web-1"))
	core, k8sio := w.client.CoreV1().Events("default"), w.client.EventsV1().Events("default")
	completed := make(chan string, 100)
	var informers []cache.SharedIndexInformer
	for _, h := range []struct {
		api    string
		lw     *cache.ListWatch
		obj    runtime.Object
		reason func(any) string
	}{
		{"v1", &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return core.List(ctx, o)
			},
			WatchFuncWithContext: core.Watch,
		}, &v1.Event{}, func(obj any) string { return obj.(*v1.Event).Reason }},
		{"events.k8s.io/v1", &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return k8sio.List(ctx, o)
			},
			WatchFuncWithContext: k8sio.Watch,
		}, &eventsv1.Event{}, func(obj any) string { return obj.(*eventsv1.Event).Reason }},
	} {
		informer := cache.NewSharedIndexInformer(h.lw, h.obj, 0, cache.Indexers{})
		_, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
			if h.reason(obj) == "ResizeCompleted" {
				completed <- h.api
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		go informer.RunWithContext(t.Context())
		informers = append(informers, informer)
	}
	synced := make(chan bool, 1)
	go func() {
		synced <- cache.WaitForCacheSync(t.Context().Done(), informers[0].HasSynced, informers[1].HasSynced)
	}()
	select {
	case ok := <-synced:
		if !ok {
			t.Fatal("the event informers did not sync")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the event informers did not sync within 5s")
	}
	patch := `{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"250m"}}}]}}`
	if _, err := w.client.CoreV1().Pods("default").Patch(w.ctx, "web-1", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "resize"); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	timeout := time.After(10 * time.Second)
	for len(seen) < 2 {
		select {
		case api := <-completed:
			seen[api] = true
		case <-timeout:
			t.Fatalf("ResizeCompleted seen by %v, want both informers", seen)
		}
	}
}

// TestWatchHoldsABurst: a reader that does not read while a burst of
// changes is made, far beyond the cluster's default watch buffer, still
// gets every change afterwards, in order: the adapter's watches ask for
// WatchBuffer, so that a client-go reflector that falls behind for a
// while is not closed and made to list everything again.
func TestWatchHoldsABurst(t *testing.T) {
	w := newWorld(t)
	w.create(t, webPod("web-1"))
	pods := w.client.CoreV1().Pods("default")
	current, err := pods.Get(w.ctx, "web-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	watcher, err := pods.Watch(w.ctx, metav1.ListOptions{ResourceVersion: current.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Stop()
	const burst = 4 * apiserver.DefaultWatchBuffer
	for i := range burst {
		status := current.Status
		status.Message = fmt.Sprintf("write %d", i)
		if err := w.cluster.UpdatePodStatus(w.ctx, "default", "web-1", current.UID, status); err != nil {
			t.Fatal(err)
		}
	}
	timeout := time.After(10 * time.Second)
	for i := range burst {
		select {
		case ev, ok := <-watcher.ResultChan():
			if !ok {
				t.Fatalf("the watch closed after %d of the %d changes", i, burst)
			}
			if got, want := ev.Object.(*v1.Pod).Status.Message, fmt.Sprintf("write %d", i); ev.Type != watch.Modified || got != want {
				t.Fatalf("change %d: %s %q, want MODIFIED %q", i, ev.Type, got, want)
			}
		case <-timeout:
			t.Fatalf("%d of the %d changes came within 10s", i, burst)
		}
	}
}

// TestErrorsAreTheAPIServers: what comes back through client-go is the
// *apierrors.StatusError an API server sends, with its code and reason.
func TestErrorsAreTheAPIServers(t *testing.T) {
	w := newWorld(t)
	w.create(t, webPod("web-1"))
	pods := w.client.CoreV1().Pods("default")
	current, err := pods.Get(w.ctx, "web-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	resizePatch := func(pt types.PatchType, patch string) error {
		_, err := pods.Patch(w.ctx, "web-1", pt, []byte(patch), metav1.PatchOptions{}, "resize")
		return err
	}
	tests := []struct {
		name   string
		err    error
		is     func(error) bool
		code   int32
		reason metav1.StatusReason
		msg    string
	}{
		{"get of a pod that is not there", func() error { _, err := pods.Get(w.ctx, "nope", metav1.GetOptions{}); return err }(),
			apierrors.IsNotFound, http.StatusNotFound, metav1.StatusReasonNotFound, `pods "nope" not found`},
		{"resize of a pod that is not there", func() error {
			_, err := pods.Patch(w.ctx, "nope", types.JSONPatchType, []byte(`[]`), metav1.PatchOptions{}, "resize")
			return err
		}(), apierrors.IsNotFound, http.StatusNotFound, metav1.StatusReasonNotFound, `pods "nope" not found`},
		{"delete of a pod that is not there", pods.Delete(w.ctx, "nope", metav1.DeleteOptions{}),
			apierrors.IsNotFound, http.StatusNotFound, metav1.StatusReasonNotFound, `pods "nope" not found`},
		{"a resize validation refuses", resizePatch(types.JSONPatchType, `[{"op":"remove","path":"/spec/containers/0/resources/limits"}]`),
			apierrors.IsInvalid, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, `Pod "web-1" is invalid: spec.containers[0].resources.limits: Forbidden: resource limits cannot be removed`},
		{"a stale resourceVersion", resizePatch(types.MergePatchType, `{"metadata":{"resourceVersion":"1"},"spec":{"containers":[{"name":"app"},{"name":"log"}]}}`),
			apierrors.IsConflict, http.StatusConflict, metav1.StatusReasonConflict,
			`Operation cannot be fulfilled on pods "web-1": the object has been modified; please apply your changes to the latest version and try again`},
		{"a delete whose UID precondition fails", pods.Delete(w.ctx, "web-1", *metav1.NewPreconditionDeleteOptions("not-the-uid")),
			apierrors.IsConflict, http.StatusConflict, metav1.StatusReasonConflict, "Precondition failed: UID in precondition: not-the-uid, UID in object meta: " + string(current.UID)},
		{"a JSON patch that is not one", resizePatch(types.JSONPatchType, `{"op":"add"}`),
			apierrors.IsBadRequest, http.StatusBadRequest, metav1.StatusReasonBadRequest, "error decoding patch: json: cannot unmarshal object"},
		{"a JSON patch test that fails", resizePatch(types.JSONPatchType, `[{"op":"test","path":"/spec/containers/0/name","value":"other"}]`),
			apierrors.IsInvalid, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "the server rejected our request due to an error in our request"},
		{"a patch type the API server does not know", resizePatch("application/xml", `<x/>`),
			apierrors.IsUnsupportedMediaType, http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType, "415: Unsupported Media Type"},
		{"a patch of the pod itself", func() error {
			_, err := pods.Patch(w.ctx, "web-1", types.MergePatchType, []byte(`{}`), metav1.PatchOptions{})
			return err
		}(), apierrors.IsMethodNotSupported, http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed, `patch is not supported on resources of kind "pods"`},
		{"a field selector pods do not have", func() error {
			_, err := pods.List(w.ctx, metav1.ListOptions{FieldSelector: "spec.containers=x"})
			return err
		}(), apierrors.IsBadRequest, http.StatusBadRequest, metav1.StatusReasonBadRequest, "field label not supported: spec.containers"},
		{"a create under a name taken", func() error {
			_, err := pods.Create(w.ctx, webPod("web-1"), metav1.CreateOptions{})
			return err
		}(), apierrors.IsAlreadyExists, http.StatusConflict, metav1.StatusReasonAlreadyExists, `pods "web-1" already exists`},
		{"a watch from a resourceVersion the cluster has passed", func() error {
			_, err := pods.Watch(w.ctx, metav1.ListOptions{ResourceVersion: "1"})
			return err
		}(), apierrors.IsResourceExpired, http.StatusGone, metav1.StatusReasonExpired, "too old resource version: 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.is(tc.err) {
				t.Fatalf("error %v (%T) is not the one wanted", tc.err, tc.err)
			}
			se, ok := tc.err.(*apierrors.StatusError)
			if !ok {
				t.Fatalf("error is a %T, want *apierrors.StatusError as client-go returns", tc.err)
			}
			if st := se.Status(); st.Code != tc.code || st.Reason != tc.reason || !strings.Contains(st.Message, tc.msg) {
				t.Errorf("status %d %s %q, want %d %s containing %q", st.Code, st.Reason, st.Message, tc.code, tc.reason, tc.msg)
			}
		})
	}
	// Nothing of the refused writes changed the pod.
	after, err := pods.Get(w.ctx, "web-1", metav1.GetOptions{})
	if err != nil || after.ResourceVersion != current.ResourceVersion {
		t.Errorf("the refused writes changed the pod: resourceVersion %s -> %s (%v)", current.ResourceVersion, after.ResourceVersion, err)
	}
}

// TestConflictOnConcurrentResize is the optimistic concurrency a careful
// updater relies on: a resize that carries the resourceVersion it read
// fails once another resize came between, and goes through when read
// again.
func TestConflictOnConcurrentResize(t *testing.T) {
	w := newWorld(t)
	w.create(t, webPod("web-1"))
	pods := w.client.CoreV1().Pods("default")
	read, err := pods.Get(w.ctx, "web-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	withVersion := func(rv, cpu string) []byte {
		return []byte(`[{"op":"replace","path":"/metadata/resourceVersion","value":"` + rv + `"},` +
			`{"op":"replace","path":"/spec/containers/0/resources/requests/cpu","value":"` + cpu + `"}]`)
	}
	if _, err := pods.Patch(w.ctx, "web-1", types.JSONPatchType, withVersion(read.ResourceVersion, "300m"), metav1.PatchOptions{}, "resize"); err != nil {
		t.Fatalf("a resize at the current resourceVersion: %v", err)
	}
	_, err = pods.Patch(w.ctx, "web-1", types.JSONPatchType, withVersion(read.ResourceVersion, "350m"), metav1.PatchOptions{}, "resize")
	if !apierrors.IsConflict(err) {
		t.Fatalf("a resize at a stale resourceVersion: %v, want a Conflict", err)
	}
	again, err := pods.Get(w.ctx, "web-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Patch(w.ctx, "web-1", types.JSONPatchType, withVersion(again.ResourceVersion, "350m"), metav1.PatchOptions{}, "resize"); err != nil {
		t.Fatalf("the resize read again: %v", err)
	}
}

// TestCreateDeleteAndEventsWatch: pods created and deleted through the
// client go through the node, and an events watch from a list's
// resourceVersion delivers what the kubelet records after it.
func TestCreateDeleteAndEventsWatch(t *testing.T) {
	w := newWorld(t)
	events := w.client.CoreV1().Events("default")
	before, err := events.List(w.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ew, err := events.Watch(w.ctx, metav1.ListOptions{ResourceVersion: before.ResourceVersion, FieldSelector: "involvedObject.name=web-1"})
	if err != nil {
		t.Fatal(err)
	}
	defer ew.Stop()
	w.create(t, webPod("web-1"))
	info, err := w.node.Pod("default", "web-1")
	if err != nil || !info.Admitted {
		t.Fatalf("the node does not run the pod created through the client: %+v, %v", info, err)
	}
	got, err := w.client.CoreV1().Pods("default").Get(w.ctx, "web-1", metav1.GetOptions{})
	if err != nil || got.Status.Phase != v1.PodRunning {
		t.Fatalf("created pod: %v, %v; want it Running", got.Status.Phase, err)
	}
	if err := w.client.CoreV1().Pods("default").Delete(w.ctx, "web-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.node.Pod("default", "web-1"); !errors.Is(err, resize.ErrPodNotFound) {
		t.Errorf("the node still has the deleted pod: %v", err)
	}
	var reasons []string
	timeout := time.After(10 * time.Second)
	for len(reasons) < 6 { // Created and Started for each container, Killing for each
		select {
		case ev := <-ew.ResultChan():
			e := ev.Object.(*v1.Event)
			if ev.Type != watch.Added || e.InvolvedObject.Name != "web-1" {
				t.Fatalf("events watch: %s %s about %s", ev.Type, e.Reason, e.InvolvedObject.Name)
			}
			reasons = append(reasons, e.Reason)
		case <-timeout:
			t.Fatalf("events watch delivered only %v", reasons)
		}
	}
	if got, want := strings.Join(reasons, " "), "Created Started Created Started Killing Killing"; got != want {
		t.Errorf("events %s, want %s", got, want)
	}
}

// TestWatchSelectorsFollowTheObject: a watch with a field selector sees a
// pod leave its selection as DELETED, as the API server's watch cache
// reports it.
func TestWatchSelectorsFollowTheObject(t *testing.T) {
	w := newWorld(t)
	pods := w.client.CoreV1().Pods("default")
	pw, err := pods.Watch(w.ctx, metav1.ListOptions{FieldSelector: "status.phase=Pending"})
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Stop()
	w.create(t, webPod("web-1"))
	var types []watch.EventType
	timeout := time.After(10 * time.Second)
	for len(types) < 2 {
		select {
		case ev := <-pw.ResultChan():
			types = append(types, ev.Type)
		case <-timeout:
			t.Fatalf("watch delivered only %v", types)
		}
	}
	if types[0] != watch.Added || types[1] != watch.Deleted {
		t.Errorf("a pod created Pending and then Running: %v, want ADDED then DELETED", types)
	}
}

// TestDryRunResizeChangesNothing: a dry-run resize answers the pod it
// would store and leaves the pod and the node as they were.
func TestDryRunResizeChangesNothing(t *testing.T) {
	w := newWorld(t)
	w.create(t, webPod("web-1"))
	pods := w.client.CoreV1().Pods("default")
	before, _ := pods.Get(w.ctx, "web-1", metav1.GetOptions{})
	patch := `{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"333m"}}}]}}`
	dry, err := pods.Patch(w.ctx, "web-1", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}}, "resize")
	if err != nil {
		t.Fatal(err)
	}
	if dry.Spec.Containers[0].Resources.Requests.Cpu().String() != "333m" || dry.Generation != before.Generation+1 {
		t.Errorf("dry run answered cpu %s generation %d", dry.Spec.Containers[0].Resources.Requests.Cpu(), dry.Generation)
	}
	after, _ := pods.Get(w.ctx, "web-1", metav1.GetOptions{})
	if after.ResourceVersion != before.ResourceVersion || after.Generation != before.Generation {
		t.Errorf("the dry run changed the pod")
	}
}

// TestUpdateResize: a PUT of the resize subresource with the pod read
// back and changed is the resize, checked against its resourceVersion.
func TestUpdateResize(t *testing.T) {
	w := newWorld(t)
	w.create(t, webPod("web-1"))
	pods := w.client.CoreV1().Pods("default")
	p, _ := pods.Get(w.ctx, "web-1", metav1.GetOptions{})
	p.Spec.Containers[1].Resources = v1.ResourceRequirements{Requests: list("150m", "32Mi"), Limits: list("150m", "32Mi")}
	got, err := pods.UpdateResize(w.ctx, "web-1", p, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Spec.Containers[1].Resources.Limits.Cpu().Equal(resource.MustParse("150m")) {
		t.Errorf("log's cpu limit %s, want 150m", got.Spec.Containers[1].Resources.Limits.Cpu())
	}
	if _, err := pods.UpdateResize(w.ctx, "web-1", p, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("the same update again, at a stale resourceVersion: %v, want a Conflict", err)
	}
}

// TestBackendIsAnInterface: a Backend of one's own (here one that counts
// the resizes) serves the same client.
func TestBackendIsAnInterface(t *testing.T) {
	w := newWorld(t)
	counting := &countingBackend{Backend: kubeclient.ForNode(w.node)}
	client := kubeclient.New(counting)
	if _, err := client.CoreV1().Pods("default").Create(w.ctx, webPod("web-1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	patch := `{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"210m"}}}]}}`
	if _, err := client.CoreV1().Pods("default").Patch(w.ctx, "web-1", types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "resize"); err == nil {
		t.Fatal("a merge patch naming one of two containers was accepted: merge patches replace lists")
	}
	if counting.resizes != 1 {
		t.Errorf("%d resizes reached the backend, want 1", counting.resizes)
	}
}

type countingBackend struct {
	kubeclient.Backend
	resizes int
}

func (b *countingBackend) Resize(ctx context.Context, op resize.ResizeOp) (*v1.Pod, error) {
	b.resizes++
	return b.Backend.Resize(ctx, op)
}

// TestWatchEndsWithItsContext: a watch whose context ends is closed, as a
// client-go watch whose request is canceled, and the cluster forgets it.
func TestWatchEndsWithItsContext(t *testing.T) {
	w := newWorld(t)
	ctx, cancel := context.WithCancel(w.ctx)
	pw, err := w.client.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case _, ok := <-pw.ResultChan():
		if ok {
			t.Fatal("an event on a canceled watch of an empty cluster")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watch stayed open after its context ended")
	}
	w.create(t, webPod("web-1")) // no watcher left to block or to tell
}

// TestWatchOverflowEndsTheClientWatch: a client that does not read is cut
// off once the buffer its watch asked the cluster for (WatchBuffer) is
// full; it gets what was buffered, then the closed channel on which
// client-go's reflector lists again.
func TestWatchOverflowEndsTheClientWatch(t *testing.T) {
	w := newWorld(t)
	w.create(t, webPod("web-1"))
	pw, err := w.client.CoreV1().Events("default").Watch(w.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Stop()
	const events = 3 * kubeclient.WatchBuffer
	for i := range events {
		w.cluster.RecordEvent(w.ctx, apiserver.Event{Time: time.Unix(int64(i), 0), Namespace: "default", Pod: "web-1",
			Type: v1.EventTypeNormal, Reason: "Test", Message: fmt.Sprintf("event %d", i), Source: "test"})
	}
	n := 0
	timeout := time.After(20 * time.Second)
	for {
		select {
		case _, ok := <-pw.ResultChan():
			if !ok {
				if n < kubeclient.WatchBuffer || n >= events {
					t.Errorf("%d events before the watch closed, want the buffer's worth (%d) and not all", n, kubeclient.WatchBuffer)
				}
				return
			}
			n++
		case <-timeout:
			t.Fatalf("the watch delivered %d events and did not close", n)
		}
	}
}

// A Fleet is a Backend: a fleet of nodes is served through client-go as
// one node is.
var _ kubeclient.Backend = (*resize.Fleet)(nil)

// TestFleetThroughClientGo serves a fleet of two nodes through client-go:
// pods created with spec.nodeName run on their node, a JSON patch of the
// resize subresource reaches the kubelet of the pod's node, and a field
// selector on spec.nodeName lists one node's pods.
func TestFleetThroughClientGo(t *testing.T) {
	ctx := context.Background()
	fleet := resize.NewFleet(resize.FleetOptions{})
	defer fleet.Close()
	for _, name := range []string{"n1", "n2"} {
		if _, err := fleet.AddNode(ctx, resize.NodeConfig{Name: name}, resize.Deps{}); err != nil {
			t.Fatal(err)
		}
	}
	client := kubeclient.New(fleet)
	pods := client.CoreV1().Pods("default")
	for i, node := range []string{"n1", "n2"} {
		p := webPod(fmt.Sprintf("web-%d", i+1))
		p.Spec.NodeName = node
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	patch := []byte(`[{"op":"replace","path":"/spec/containers/0/resources/requests/cpu","value":"300m"}]`)
	answer, err := pods.Patch(ctx, "web-2", types.JSONPatchType, patch, metav1.PatchOptions{}, "resize")
	if err != nil {
		t.Fatal(err)
	}
	// The answer is the pod as stored once the kubelet reacted, with its
	// resourceVersion, as for a single node's backend.
	if answer.ResourceVersion == "" || !resizeDone(answer, "300m") {
		t.Errorf("the patch's answer: resourceVersion %q, conditions %v", answer.ResourceVersion, answer.Status.Conditions)
	}
	got, err := pods.Get(ctx, "web-2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !resizeDone(got, "300m") {
		t.Errorf("web-2 after the resize: conditions %v, statuses %v", got.Status.Conditions, got.Status.ContainerStatuses)
	}
	n2, _ := fleet.Node("n2")
	if info, err := n2.Pod("default", "web-2"); err != nil || !info.Admitted {
		t.Errorf("web-2 on n2: %+v, %v", info, err)
	}
	if n1, _ := fleet.Node("n1"); n1 != nil {
		if _, err := n1.Pod("default", "web-2"); err == nil {
			t.Error("n1 knows web-2, which runs on n2")
		}
	}
	listed, err := pods.List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=n1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(listed.Items) != 1 || listed.Items[0].Name != "web-1" {
		t.Errorf("pods on n1: %d, want web-1 alone", len(listed.Items))
	}
}

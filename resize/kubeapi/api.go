package kubeapi

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/tools/reference"

	"github.com/resizelet/resizelet/resize"
)

// API is resize.API on a real API server, for one node: the pods bound to
// the node as its informer has them, the resize subresource, pod status as
// the kubelet's status manager writes it, and events as the kubelet's
// recorder sends them. New makes one; Run drives a node on it. It is safe
// for concurrent use.
type API struct {
	client kubernetes.Interface
	node   string
	log    *slog.Logger

	factory  informers.SharedInformerFactory
	informer cache.SharedIndexInformer
	stop     chan struct{}

	broadcaster record.EventBroadcaster
	recorder    record.EventRecorder

	closeOnce sync.Once
}

var (
	_ resize.API                = (*API)(nil)
	_ resize.PatchResizer       = (*API)(nil)
	_ resize.DryRunResizer      = (*API)(nil)
	_ resize.DryRunPatchResizer = (*API)(nil)
	_ resize.UIDDeleter         = (*API)(nil)
)

// Options configure an API.
type Options struct {
	// Logger gets what Run does not return as an error (a pod it could
	// not hand to the node, a failed tick, lease renewal or node status
	// post); nil discards it. Events the API server refuses are logged by
	// client-go's recorder, through klog, as the kubelet's are.
	Logger *slog.Logger
}

// New returns the API of node nodeName on the API server client talks to.
// It starts the node's pod informer (a watch of the pods whose
// spec.nodeName is nodeName, as the kubelet's pod source is) and the event
// recorder, and returns once the informer has listed the pods, so that a
// node made on it (resize.NewNode) finds the pods it had before a
// restart. Close stops both.
func New(ctx context.Context, client kubernetes.Interface, nodeName string, opts Options) (*API, error) {
	if ctx == nil || client == nil || nodeName == "" {
		return nil, errors.New("kubeapi: New needs a context, a client and a node name")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &API{client: client, node: nodeName, log: log, stop: make(chan struct{})}
	a.factory = informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = "spec.nodeName=" + nodeName
		}))
	a.informer = a.factory.Core().V1().Pods().Informer()
	a.factory.Start(a.stop)
	synced := make(chan bool, 1)
	go func() { synced <- cache.WaitForCacheSync(a.stop, a.informer.HasSynced) }()
	select {
	case ok := <-synced:
		if !ok {
			a.Close()
			return nil, fmt.Errorf("kubeapi: node %s: the pod informer did not sync", nodeName)
		}
	case <-ctx.Done():
		a.Close()
		return nil, fmt.Errorf("kubeapi: node %s: waiting for the pod informer: %w", nodeName, ctx.Err())
	}
	// The kubelet's recorder: events sent to the core v1 events API, with
	// client-go's aggregation and spam filter, from component "kubelet" on
	// this host.
	a.broadcaster = record.NewBroadcaster(record.WithContext(context.WithoutCancel(ctx)))
	a.broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	a.recorder = a.broadcaster.NewRecorder(scheme.Scheme, v1.EventSource{Component: "kubelet", Host: nodeName})
	return a, nil
}

// errNotMade is the error of every method of an API that New did not make.
var errNotMade = errors.New("kubeapi: the API was not made by New")

// made reports whether New made a.
func (a *API) made() bool { return a != nil && a.informer != nil }

// ready is the error of a call on an API New did not make, or with no
// context.
func (a *API) ready(ctx context.Context) error {
	if !a.made() {
		return errNotMade
	}
	if ctx == nil {
		return errors.New("kubeapi: nil context.Context")
	}
	return nil
}

// Close stops the informer and the event recorder. Events not yet sent
// may be lost, as they are when a kubelet stops.
func (a *API) Close() {
	if !a.made() {
		return
	}
	a.closeOnce.Do(func() {
		close(a.stop)
		a.factory.Shutdown()
		if a.broadcaster != nil {
			a.broadcaster.Shutdown()
		}
	})
}

// Client returns the client the API talks through.
func (a *API) Client() kubernetes.Interface {
	if !a.made() {
		return nil
	}
	return a.client
}

// NodeName returns the name of the node whose pods the API has.
func (a *API) NodeName() string {
	if !a.made() {
		return ""
	}
	return a.node
}

// apiError is an API server's refusal that also matches the resize
// package's sentinel errors (errors.Is), while errors.As still finds the
// *apierrors.StatusError the client returned.
type apiError struct {
	err error
	is  error
}

func (e *apiError) Error() string   { return e.err.Error() }
func (e *apiError) Unwrap() []error { return []error{e.err, e.is} }

// wrap makes a client error match resize.ErrPodNotFound (404) or
// resize.ErrConflict (409), as the in-memory cluster's errors do.
func wrap(err error) error {
	switch {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err):
		return &apiError{err: err, is: resize.ErrPodNotFound}
	case apierrors.IsConflict(err):
		return &apiError{err: err, is: resize.ErrConflict}
	}
	return err
}

// CreatePod creates the pod.
func (a *API) CreatePod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error) {
	if err := a.ready(ctx); err != nil {
		return nil, err
	}
	if pod == nil {
		return nil, errors.New("kubeapi: create pod: nil pod")
	}
	p, err := a.client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	return p, wrap(err)
}

// GetPod reads the pod from the API server, as the kubelet's status
// manager does before each status write: not from the informer, which
// may not have the API server's latest yet.
func (a *API) GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	if err := a.ready(ctx); err != nil {
		return nil, err
	}
	p, err := a.client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	return p, wrap(err)
}

// ListPods returns the pods bound to the node as the informer has them,
// oldest first (the order in which a restarted kubelet admits them), ties
// by namespace and name.
func (a *API) ListPods(ctx context.Context) []*v1.Pod {
	if !a.made() {
		return nil
	}
	objs := a.informer.GetStore().List()
	pods := make([]*v1.Pod, 0, len(objs))
	for _, o := range objs {
		if p, ok := o.(*v1.Pod); ok {
			pods = append(pods, p.DeepCopy())
		}
	}
	slices.SortFunc(pods, func(x, y *v1.Pod) int {
		return cmp.Or(x.CreationTimestamp.Compare(y.CreationTimestamp.Time),
			cmp.Compare(x.Namespace, y.Namespace), cmp.Compare(x.Name, y.Name))
	})
	return pods
}

// cached returns the informer's pod of that name, or nil.
func (a *API) cached(namespace, name string) *v1.Pod {
	o, ok, err := a.informer.GetStore().GetByKey(namespace + "/" + name)
	if err != nil || !ok {
		return nil
	}
	p, _ := o.(*v1.Pod)
	return p
}

// ResizePod sends a strategic merge patch through the resize subresource.
func (a *API) ResizePod(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error) {
	return a.ResizePodPatch(ctx, namespace, name, types.StrategicMergePatchType, patch)
}

// ResizePodPatch sends a patch of type pt through the resize subresource,
// as kubectl patch --subresource resize does.
func (a *API) ResizePodPatch(ctx context.Context, namespace, name string, pt types.PatchType, patch []byte) (*v1.Pod, error) {
	if err := a.ready(ctx); err != nil {
		return nil, err
	}
	p, err := a.client.CoreV1().Pods(namespace).Patch(ctx, name, pt, patch, metav1.PatchOptions{}, "resize")
	return p, wrap(err)
}

// DryRunResizePod is ResizePod with dryRun=All: validated and admitted by
// the API server, not stored.
func (a *API) DryRunResizePod(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error) {
	return a.DryRunResizePodPatch(ctx, namespace, name, types.StrategicMergePatchType, patch)
}

// DryRunResizePodPatch is ResizePodPatch with dryRun=All.
func (a *API) DryRunResizePodPatch(ctx context.Context, namespace, name string, pt types.PatchType, patch []byte) (*v1.Pod, error) {
	if err := a.ready(ctx); err != nil {
		return nil, err
	}
	p, err := a.client.CoreV1().Pods(namespace).Patch(ctx, name, pt, patch, metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}}, "resize")
	return p, wrap(err)
}

// DeletePod deletes the pod at once (grace period 0), whatever its UID:
// the node deletes through DeletePodUID, which the kubelet's status
// manager's delete is; this is for callers that name a pod only. A pod
// already gone is not an error.
func (a *API) DeletePod(ctx context.Context, namespace, name string) error {
	if err := a.ready(ctx); err != nil {
		return err
	}
	err := a.client.CoreV1().Pods(namespace).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return wrap(err)
}

// DeletePodUID deletes the pod as the kubelet's status manager deletes
// one it has torn down: grace period 0, with uid as a precondition, so
// that a pod created anew under the name is never deleted. A pod already
// gone, or of another UID (the API server's 409 for the precondition), is
// not an error: the pod the call was for is gone.
func (a *API) DeletePodUID(ctx context.Context, namespace, name string, uid types.UID) error {
	if err := a.ready(ctx); err != nil {
		return err
	}
	err := a.client.CoreV1().Pods(namespace).Delete(ctx, name, metav1.DeleteOptions{
		GracePeriodSeconds: new(int64(0)),
		Preconditions:      metav1.NewUIDPreconditions(string(uid)),
	})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return wrap(err)
}

// RecordEvent sends the event through the kubelet's recorder: about the
// pod as the informer has it (its reference carries the resourceVersion
// the kubelet saw), or, for a pod already gone from it, about its name
// and UID. The recorder sends it in the background.
func (a *API) RecordEvent(ctx context.Context, e resize.Event) {
	if !a.made() || e.Pod == "" || e.Reason == "" {
		return
	}
	msg := e.Message
	if msg == "" && e.Lazy != nil {
		msg = e.Lazy.String()
	}
	pod := a.cached(e.Namespace, e.Pod)
	if pod == nil || (e.UID != "" && pod.UID != e.UID) {
		pod = &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: e.Pod, UID: e.UID}}
	}
	var obj runtime.Object = pod
	if e.Container != "" {
		// A container's event is about the container, as the kubelet's
		// GenerateContainerRef makes it: the pod's reference with the
		// container's fieldPath, so that the recorder keeps the events of
		// a pod's containers apart instead of counting them as repeats.
		if ref, err := reference.GetReference(scheme.Scheme, pod); err == nil {
			ref.FieldPath = containerFieldPath(pod, e.Container)
			obj = ref
		}
	}
	a.recorder.Event(obj, e.Type, e.Reason, msg)
}

// containerFieldPath is the fieldPath of a container of pod in an object
// reference (pkg/kubelet/container/ref.go fieldPath): spec.initContainers
// for an init container (sidecars included), spec.containers otherwise.
func containerFieldPath(pod *v1.Pod, name string) string {
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			return "spec.initContainers{" + name + "}"
		}
	}
	return "spec.containers{" + name + "}"
}

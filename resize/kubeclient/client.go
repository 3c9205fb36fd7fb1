package kubeclient

import (
	"context"
	"errors"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	eventsv1client "k8s.io/client-go/kubernetes/typed/events/v1"

	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/apiserver"
)

// New returns a client-go clientset that serves b: pods and events
// through b (package documentation), everything else from client-go's
// empty fake clientset. It is safe for concurrent use, as b is.
//
// A nil b serves no pods: gets and writes answer ErrNoBackend (as a 500),
// lists are empty.
func New(b Backend) kubernetes.Interface {
	if b == nil {
		b = noBackend{}
	}
	return &clientset{Clientset: fake.NewClientset(), b: b}
}

// ErrNoBackend is what the clients of New(nil), and a ForNode backend
// without a node, answer writes with.
var ErrNoBackend = errors.New("kubeclient: no backend to serve the call (New was given a nil Backend, or ForNode a nil Node)")

// errNilContext answers a call given a nil context, which a client-go
// call never is: it is the caller's mistake, so a 400.
func errNilContext(what string) error {
	return apierrors.NewBadRequest("kubeclient: " + what + ": nil context.Context")
}

// noBackend is the Backend of New(nil).
type noBackend struct{}

func (noBackend) API() resize.API { return nil }
func (noBackend) CreatePod(context.Context, *v1.Pod) (*v1.Pod, error) {
	return nil, ErrNoBackend
}
func (noBackend) DeletePod(context.Context, string, string) error { return ErrNoBackend }
func (noBackend) Resize(context.Context, resize.ResizeOp) (*v1.Pod, error) {
	return nil, ErrNoBackend
}

// clientset is client-go's fake clientset with the core v1 and
// events.k8s.io/v1 pods and events served by the backend. The fake keeps
// the rest, and tells reflectors that it does not do watch-list
// (IsWatchListSemanticsUnSupported), which holds for what it serves too.
type clientset struct {
	*fake.Clientset
	b Backend
}

var _ kubernetes.Interface = (*clientset)(nil)

// CoreV1 is the fake's, with pods and events served by the backend.
func (c *clientset) CoreV1() corev1client.CoreV1Interface {
	return &coreV1{CoreV1Interface: c.Clientset.CoreV1(), b: c.b}
}

// Discovery is the fake's, with the backend's server version.
func (c *clientset) Discovery() discovery.DiscoveryInterface {
	return &serverDiscovery{DiscoveryInterface: c.Clientset.Discovery(), b: c.b}
}

// EventsV1 is the fake's, with events served by the backend.
func (c *clientset) EventsV1() eventsv1client.EventsV1Interface {
	return &eventsV1{EventsV1Interface: c.Clientset.EventsV1(), b: c.b}
}

type coreV1 struct {
	corev1client.CoreV1Interface
	b Backend
}

// Nodes are the backend's nodes (NodeLister), read only.
func (c *coreV1) Nodes() corev1client.NodeInterface {
	return &nodes{NodeInterface: c.CoreV1Interface.Nodes(), b: c.b}
}

// Pods are the backend's pods of a namespace (all with "").
func (c *coreV1) Pods(namespace string) corev1client.PodInterface {
	return &pods{PodInterface: c.CoreV1Interface.Pods(namespace), b: c.b, ns: namespace}
}

// Events are the cluster's events of a namespace (all with "").
func (c *coreV1) Events(namespace string) corev1client.EventInterface {
	return &coreEvents{EventInterface: c.CoreV1Interface.Events(namespace), b: c.b, ns: namespace}
}

type eventsV1 struct {
	eventsv1client.EventsV1Interface
	b Backend
}

// Events are the cluster's events of a namespace, in events.k8s.io/v1.
func (c *eventsV1) Events(namespace string) eventsv1client.EventInterface {
	return &k8sioEvents{EventInterface: c.EventsV1Interface.Events(namespace), b: c.b, ns: namespace}
}

// The group and resources the adapter's errors name.
var (
	podsResource        = v1.Resource("pods")
	eventsResource      = v1.Resource("events")
	eventsGroupResource = schema.GroupResource{Group: "events.k8s.io", Resource: "events"}
	nodesResource       = v1.Resource("nodes")
)

// statusError returns err as the *apierrors.StatusError a client-go call
// returns: the one the cluster's error wraps, or the API server's answer
// to resizelet's own errors (a pod the node does not know is 404, an
// argument no pod can have 400, a canceled call 504), or a 500.
func statusError(err error, name string) error {
	if err == nil {
		return nil
	}
	var se *apierrors.StatusError
	if errors.As(err, &se) {
		return se
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return &apierrors.StatusError{ErrStatus: st.Status()}
	}
	switch {
	case errors.Is(err, apiserver.ErrPodNotFound):
		return apierrors.NewNotFound(podsResource, name)
	case errors.Is(err, resize.ErrInvalidArgument):
		return apierrors.NewBadRequest(err.Error())
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return apierrors.NewTimeoutError(err.Error(), 0)
	}
	return apierrors.NewInternalError(err)
}

// notSupported is the API server's 405 for a verb the adapter does not
// serve on a resource.
func notSupported(gr schema.GroupResource, verb string) error {
	return apierrors.NewMethodNotSupported(gr, verb)
}

// notFound is the API server's 404 for an object of gr.
func notFound(gr schema.GroupResource, name string) error {
	return apierrors.NewNotFound(gr, name)
}

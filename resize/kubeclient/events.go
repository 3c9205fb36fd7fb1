package kubeclient

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	applycorev1 "k8s.io/client-go/applyconfigurations/core/v1"
	applyeventsv1 "k8s.io/client-go/applyconfigurations/events/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	eventsv1client "k8s.io/client-go/kubernetes/typed/events/v1"
	"k8s.io/client-go/tools/reference"

	"github.com/resizelet/resizelet/resize/apiserver"
)

// listEvents is the cluster's events of namespace ns (all with "") that
// the selector takes, as core v1 events, and the list's resourceVersion.
func listEvents(b Backend, ns string, sel selector) ([]v1.Event, string) {
	lister, ok := b.API().(EventLister)
	if !ok {
		// An API without events (or none, New(nil)) keeps none.
		return nil, ""
	}
	all := lister.EventList(ns)
	if all == nil {
		// A nil cluster keeps no events.
		return nil, ""
	}
	var out []v1.Event
	for i := range all.Items {
		e := &all.Items[i]
		if sel.matches(e.Labels, eventFields(e)) {
			e.TypeMeta = metav1.TypeMeta{}
			out = append(out, *e)
		}
	}
	return out, all.ResourceVersion
}

// watchEvents watches the cluster's events, each converted by conv.
func watchEvents(ctx context.Context, b Backend, ns string, opts metav1.ListOptions, sel selector, conv func(*v1.Event) runtime.Object) (watch.Interface, error) {
	if ctx == nil {
		return nil, errNilContext("watch events")
	}
	if err := noWatchList(opts); err != nil {
		return nil, err
	}
	watcher, ok := b.API().(Watcher)
	if !ok {
		return nil, notSupported(eventsResource, "watch")
	}
	w, err := watcher.Watch(apiserver.WatchOptions{Events: true, Namespace: ns, ResourceVersion: opts.ResourceVersion, Buffer: WatchBuffer})
	if err != nil {
		return nil, statusError(err, "")
	}
	return newWatcher(ctx, w, sel, func(ev apiserver.WatchEvent) (change, bool) {
		e := ev.EventV1()
		if e == nil {
			return change{}, false
		}
		e.TypeMeta = metav1.TypeMeta{}
		return change{cur: &item{obj: conv(e), labels: e.Labels, fields: eventFields(e)}}, true
	}), nil
}

// coreEvents is the core v1 events of a namespace (all with ""), read
// from the cluster.
type coreEvents struct {
	corev1client.EventInterface
	b  Backend
	ns string
}

// Get returns the event of that name the cluster keeps, or a 404.
func (c *coreEvents) Get(ctx context.Context, name string, opts metav1.GetOptions) (*v1.Event, error) {
	items, _ := listEvents(c.b, c.ns, selector{labels: everythingLabels(), fields: everythingFields()})
	for i := range items {
		if items[i].Name == name {
			return &items[i], nil
		}
	}
	return nil, notFound(eventsResource, name)
}

// List lists the events the cluster keeps (the latest, up to its event
// limit), oldest first, with the selectors of opts (the API server's event
// field labels: involvedObject.name, reason, type, ...).
func (c *coreEvents) List(ctx context.Context, opts metav1.ListOptions) (*v1.EventList, error) {
	sel, err := parseSelector(opts, eventFieldLabel)
	if err != nil {
		return nil, err
	}
	items, rv := listEvents(c.b, c.ns, sel)
	return &v1.EventList{ListMeta: metav1.ListMeta{ResourceVersion: rv}, Items: items}, nil
}

// Watch watches the events recorded: from resourceVersion "" or "0" with
// those kept first, or from a list's resourceVersion.
func (c *coreEvents) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	sel, err := parseSelector(opts, eventFieldLabel)
	if err != nil {
		return nil, err
	}
	return watchEvents(ctx, c.b, c.ns, opts, sel, func(e *v1.Event) runtime.Object { return e })
}

// Search lists the events about an object, as client-go's Search does:
// by the involved object's name, namespace, kind and UID.
func (c *coreEvents) Search(scheme *runtime.Scheme, objOrRef runtime.Object) (*v1.EventList, error) {
	return c.SearchWithContext(context.Background(), scheme, objOrRef)
}

func (c *coreEvents) SearchWithContext(ctx context.Context, scheme *runtime.Scheme, objOrRef runtime.Object) (*v1.EventList, error) {
	ref, err := reference.GetReference(scheme, objOrRef)
	if err != nil {
		return nil, err
	}
	if c.ns != "" && ref.Namespace != c.ns {
		return nil, fmt.Errorf("won't be able to find any events of namespace '%v' in namespace '%v'", ref.Namespace, c.ns)
	}
	var kind, uid *string
	if k := ref.Kind; k != "" {
		kind = &k
	}
	if u := string(ref.UID); u != "" {
		uid = &u
	}
	sel := c.GetFieldSelector(&ref.Name, &ref.Namespace, kind, uid)
	return c.List(ctx, metav1.ListOptions{FieldSelector: sel.String()})
}

// GetFieldSelector is client-go's (kubernetes/typed/core/v1/
// event_expansion.go): the involved object's name, namespace, kind and
// UID, those given.
func (c *coreEvents) GetFieldSelector(involvedObjectName, involvedObjectNamespace, involvedObjectKind, involvedObjectUID *string) fields.Selector {
	set := fields.Set{}
	for label, v := range map[string]*string{
		"involvedObject.name": involvedObjectName, "involvedObject.namespace": involvedObjectNamespace,
		"involvedObject.kind": involvedObjectKind, "involvedObject.uid": involvedObjectUID,
	} {
		if v != nil {
			set[label] = *v
		}
	}
	return set.AsSelector()
}

// The kubelet records events; clients only read them.

func (c *coreEvents) Create(context.Context, *v1.Event, metav1.CreateOptions) (*v1.Event, error) {
	return nil, notSupported(eventsResource, "create")
}

func (c *coreEvents) Update(context.Context, *v1.Event, metav1.UpdateOptions) (*v1.Event, error) {
	return nil, notSupported(eventsResource, "update")
}

func (c *coreEvents) Delete(context.Context, string, metav1.DeleteOptions) error {
	return notSupported(eventsResource, "delete")
}

func (c *coreEvents) DeleteCollection(context.Context, metav1.DeleteOptions, metav1.ListOptions) error {
	return notSupported(eventsResource, "deletecollection")
}

func (c *coreEvents) Patch(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (*v1.Event, error) {
	return nil, notSupported(eventsResource, "patch")
}

func (c *coreEvents) Apply(context.Context, *applycorev1.EventApplyConfiguration, metav1.ApplyOptions) (*v1.Event, error) {
	return nil, notSupported(eventsResource, "apply")
}

func (c *coreEvents) CreateWithEventNamespace(*v1.Event) (*v1.Event, error) {
	return nil, notSupported(eventsResource, "create")
}

func (c *coreEvents) CreateWithEventNamespaceWithContext(context.Context, *v1.Event) (*v1.Event, error) {
	return nil, notSupported(eventsResource, "create")
}

func (c *coreEvents) UpdateWithEventNamespace(*v1.Event) (*v1.Event, error) {
	return nil, notSupported(eventsResource, "update")
}

func (c *coreEvents) UpdateWithEventNamespaceWithContext(context.Context, *v1.Event) (*v1.Event, error) {
	return nil, notSupported(eventsResource, "update")
}

func (c *coreEvents) PatchWithEventNamespace(*v1.Event, []byte) (*v1.Event, error) {
	return nil, notSupported(eventsResource, "patch")
}

func (c *coreEvents) PatchWithEventNamespaceWithContext(context.Context, *v1.Event, []byte) (*v1.Event, error) {
	return nil, notSupported(eventsResource, "patch")
}

// k8sioEvents is the events.k8s.io/v1 events of a namespace (all with ""):
// the core events as the API server converts them (apiserver.ToEventsV1).
type k8sioEvents struct {
	eventsv1client.EventInterface
	b  Backend
	ns string
}

// Get returns the event of that name the cluster keeps, or a 404.
func (c *k8sioEvents) Get(ctx context.Context, name string, opts metav1.GetOptions) (*eventsv1.Event, error) {
	items, _ := listEvents(c.b, c.ns, selector{labels: everythingLabels(), fields: everythingFields()})
	for i := range items {
		if items[i].Name == name {
			return served1(&items[i]), nil
		}
	}
	return nil, notFound(eventsGroupResource, name)
}

// served1 is a core event as events.k8s.io/v1 serves it to a typed client.
func served1(e *v1.Event) *eventsv1.Event {
	out := apiserver.ToEventsV1(e)
	out.TypeMeta = metav1.TypeMeta{}
	return out
}

// List lists the events with the selectors of opts, in the
// events.k8s.io/v1 field labels (regarding.name, reportingController, ...).
func (c *k8sioEvents) List(ctx context.Context, opts metav1.ListOptions) (*eventsv1.EventList, error) {
	sel, err := parseSelector(opts, eventsV1FieldLabel)
	if err != nil {
		return nil, err
	}
	items, rv := listEvents(c.b, c.ns, sel)
	list := &eventsv1.EventList{ListMeta: metav1.ListMeta{ResourceVersion: rv}}
	for i := range items {
		list.Items = append(list.Items, *served1(&items[i]))
	}
	return list, nil
}

// Watch watches the events recorded, as coreEvents.Watch does.
func (c *k8sioEvents) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	sel, err := parseSelector(opts, eventsV1FieldLabel)
	if err != nil {
		return nil, err
	}
	return watchEvents(ctx, c.b, c.ns, opts, sel, func(e *v1.Event) runtime.Object { return served1(e) })
}

func (c *k8sioEvents) Create(context.Context, *eventsv1.Event, metav1.CreateOptions) (*eventsv1.Event, error) {
	return nil, notSupported(eventsGroupResource, "create")
}

func (c *k8sioEvents) Update(context.Context, *eventsv1.Event, metav1.UpdateOptions) (*eventsv1.Event, error) {
	return nil, notSupported(eventsGroupResource, "update")
}

func (c *k8sioEvents) Delete(context.Context, string, metav1.DeleteOptions) error {
	return notSupported(eventsGroupResource, "delete")
}

func (c *k8sioEvents) DeleteCollection(context.Context, metav1.DeleteOptions, metav1.ListOptions) error {
	return notSupported(eventsGroupResource, "deletecollection")
}

func (c *k8sioEvents) Patch(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (*eventsv1.Event, error) {
	return nil, notSupported(eventsGroupResource, "patch")
}

func (c *k8sioEvents) Apply(context.Context, *applyeventsv1.EventApplyConfiguration, metav1.ApplyOptions) (*eventsv1.Event, error) {
	return nil, notSupported(eventsGroupResource, "apply")
}

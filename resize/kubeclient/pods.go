package kubeclient

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	applycorev1 "k8s.io/client-go/applyconfigurations/core/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/apiserver"
)

// pods is the pods of a namespace (all with "") served by the backend.
// The fake's PodInterface answers what is not overridden here: GetLogs and
// ProxyGet, which read no pod.
type pods struct {
	corev1client.PodInterface
	b  Backend
	ns string
}

// served is a pod as a typed client returns it: the caller's own copy,
// without kind and apiVersion (client-go's typed clients decode into the
// Go type and leave TypeMeta empty).
func served(p *v1.Pod) *v1.Pod {
	p.TypeMeta = metav1.TypeMeta{}
	return p
}

// Get returns the pod with its resourceVersion, or the API server's 404.
func (p *pods) Get(ctx context.Context, name string, opts metav1.GetOptions) (*v1.Pod, error) {
	pod, err := getPod(ctx, p.b.API(), p.ns, name)
	if err != nil {
		return nil, statusError(err, name)
	}
	return served(pod), nil
}

// List lists the pods, in creation order, with the label and field
// selectors of opts; the list's resourceVersion is the cluster's, from
// which a Watch continues. Pagination (limit, continue) is not done: every
// pod comes in one list.
func (p *pods) List(ctx context.Context, opts metav1.ListOptions) (*v1.PodList, error) {
	sel, err := parseSelector(opts, podFieldLabel)
	if err != nil {
		return nil, err
	}
	all, rv := listPods(ctx, p.b.API())
	list := &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: rv}}
	for _, pod := range all {
		if (p.ns == "" || pod.Namespace == p.ns) && sel.matches(pod.Labels, podFields(pod)) {
			list.Items = append(list.Items, *served(pod))
		}
	}
	return list, nil
}

// Watch watches the pods (apiserver.Cluster.Watch): from resourceVersion
// "" or "0" with an ADDED per pod first, or from a list's resourceVersion.
func (p *pods) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	if ctx == nil {
		return nil, errNilContext("watch pods")
	}
	sel, err := parseSelector(opts, podFieldLabel)
	if err != nil {
		return nil, err
	}
	if err := noWatchList(opts); err != nil {
		return nil, err
	}
	watcher, ok := p.b.API().(Watcher)
	if !ok {
		return nil, notSupported(podsResource, "watch")
	}
	w, err := watcher.Watch(apiserver.WatchOptions{Pods: true, Namespace: p.ns, ResourceVersion: opts.ResourceVersion, Buffer: WatchBuffer, NoOld: sel.everything()})
	if err != nil {
		return nil, statusError(err, "")
	}
	return newWatcher(ctx, w, sel, func(ev apiserver.WatchEvent) (change, bool) {
		if ev.Pod == nil {
			return change{}, false
		}
		podItem := func(p *v1.Pod) *item {
			p = served(p.DeepCopy())
			// A pod that leaves the selection is sent as it was, at the
			// change's resourceVersion.
			p.ResourceVersion = strconv.FormatUint(ev.ResourceVersion, 10)
			return &item{obj: p, labels: p.Labels, fields: podFields(p)}
		}
		ch := change{cur: podItem(ev.Pod)}
		switch {
		case ev.Type == watch.Deleted:
			ch.old = ch.cur
		case ev.Old != nil:
			ch.old = podItem(ev.Old)
		}
		return ch, true
	}), nil
}

// Create creates the pod through the backend (the node admits and starts
// it before the call returns). A pod with generateName and no name gets
// one from the cluster, as from the API server.
func (p *pods) Create(ctx context.Context, pod *v1.Pod, opts metav1.CreateOptions) (*v1.Pod, error) {
	if pod == nil {
		return nil, apierrors.NewBadRequest("create pod: no pod given")
	}
	if len(opts.DryRun) > 0 {
		return nil, notSupported(podsResource, "dry-run create")
	}
	in := pod.DeepCopy()
	switch {
	case in.Namespace == "":
		in.Namespace = p.ns
	case p.ns != "" && in.Namespace != p.ns:
		return nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	created, err := p.b.CreatePod(ctx, in)
	if err != nil {
		return nil, statusError(err, in.Name)
	}
	return served(p.stored(ctx, created)), nil
}

// stored is the pod a write answers with: the cluster's copy once the
// backend's call returned (so after the kubelet reacted, whatever the
// backend returned), with its resourceVersion; pod itself if the cluster
// no longer has it (a copy: a backend may return the cluster's shared
// pod).
func (p *pods) stored(ctx context.Context, pod *v1.Pod) *v1.Pod {
	if cur, err := getPod(ctx, p.b.API(), pod.Namespace, pod.Name); err == nil && cur.UID == pod.UID {
		return cur
	}
	return pod.DeepCopy()
}

// Delete deletes the pod through the backend (the node stops and removes
// it before the call returns), after checking the options' UID and
// resourceVersion preconditions as the API server's storage does (409
// Conflict when they do not hold).
func (p *pods) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	if len(opts.DryRun) > 0 {
		return notSupported(podsResource, "dry-run delete")
	}
	if pre := opts.Preconditions; pre != nil && (pre.UID != nil || pre.ResourceVersion != nil) {
		pod, err := getPod(ctx, p.b.API(), p.ns, name)
		if err != nil {
			return statusError(err, name)
		}
		// k8s.io/apiserver pkg/storage/interfaces.go, Preconditions.Check,
		// and the Conflict InterpretDeleteError makes of it.
		var cause string
		switch {
		case pre.UID != nil && *pre.UID != pod.UID:
			cause = fmt.Sprintf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *pre.UID, pod.UID)
		case pre.ResourceVersion != nil && *pre.ResourceVersion != pod.ResourceVersion:
			cause = fmt.Sprintf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *pre.ResourceVersion, pod.ResourceVersion)
		}
		if cause != "" {
			return apierrors.NewConflict(podsResource, name, fmt.Errorf("StorageError: invalid object, Code: 4, Key: /registry/pods/%s/%s, ResourceVersion: 0, AdditionalErrorMsg: %s", p.ns, name, cause))
		}
	}
	return statusError(p.b.DeletePod(ctx, p.ns, name), name)
}

// Patch patches the resize subresource (the only patch served): any of the
// three patch types, through the backend, which hands the resize to the
// node; the pod returned is read back after the node has handled it. With
// dryRun the cluster applies the patch without storing it, and the node
// sees nothing. A patch of the pod itself or of another subresource is
// 405. The patch is decoded strictly, as under fieldValidation=Strict
// (apiserver.ApplyResize says what that refuses), whatever
// opts.FieldValidation says.
func (p *pods) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*v1.Pod, error) {
	if len(subresources) != 1 || subresources[0] != "resize" {
		what := "patch"
		if len(subresources) > 0 {
			what = "patch of " + subresources[0]
		}
		return nil, notSupported(podsResource, what)
	}
	if err := apiserver.ValidPatchType(pt); err != nil {
		return nil, statusError(err, name)
	}
	if len(opts.DryRun) > 0 {
		pod, err := p.b.Resize(ctx, resize.ResizeOp{Namespace: p.ns, Name: name, PatchType: pt, Patch: data, DryRun: true})
		if err != nil {
			return nil, statusError(err, name)
		}
		out := pod.DeepCopy()
		// Nothing was stored: the pod keeps its version.
		if stored, err := getPod(ctx, p.b.API(), p.ns, name); err == nil {
			out.ResourceVersion = stored.ResourceVersion
		}
		return served(out), nil
	}
	pod, err := p.b.Resize(ctx, resize.ResizeOp{Namespace: p.ns, Name: name, PatchType: pt, Patch: data})
	if err != nil {
		return nil, statusError(err, name)
	}
	return served(p.stored(ctx, pod)), nil
}

// UpdateResize is a PUT of the resize subresource: what the resize
// strategy keeps of the pod given (each container's and init container's
// resources and resizePolicy, and spec.resources) is sent as the JSON
// merge patch it amounts to, with the pod's resourceVersion, which must
// then be the stored one.
func (p *pods) UpdateResize(ctx context.Context, podName string, pod *v1.Pod, opts metav1.UpdateOptions) (*v1.Pod, error) {
	if pod == nil {
		return nil, apierrors.NewBadRequest("update resize: no pod given")
	}
	if pod.Name != podName {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", pod.Name, podName))
	}
	type resizeFields struct {
		Name         string                     `json:"name"`
		Resources    v1.ResourceRequirements    `json:"resources"`
		ResizePolicy []v1.ContainerResizePolicy `json:"resizePolicy"`
	}
	list := func(cs []v1.Container) []resizeFields {
		out := make([]resizeFields, len(cs))
		for i, c := range cs {
			out[i] = resizeFields{Name: c.Name, Resources: c.Resources, ResizePolicy: c.ResizePolicy}
		}
		return out
	}
	spec := map[string]any{"containers": list(pod.Spec.Containers)}
	if len(pod.Spec.InitContainers) > 0 {
		spec["initContainers"] = list(pod.Spec.InitContainers)
	}
	if pod.Spec.Resources != nil {
		spec["resources"] = pod.Spec.Resources
	}
	patch := map[string]any{"spec": spec}
	if pod.ResourceVersion != "" {
		patch["metadata"] = map[string]any{"resourceVersion": pod.ResourceVersion}
	}
	data, err := json.Marshal(patch)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return p.Patch(ctx, podName, types.MergePatchType, data, metav1.PatchOptions{DryRun: opts.DryRun}, "resize")
}

// The writes the kubelet would not see: refused.

func (p *pods) Update(context.Context, *v1.Pod, metav1.UpdateOptions) (*v1.Pod, error) {
	return nil, notSupported(podsResource, "update")
}

func (p *pods) UpdateStatus(context.Context, *v1.Pod, metav1.UpdateOptions) (*v1.Pod, error) {
	return nil, notSupported(podsResource, "update of status")
}

func (p *pods) DeleteCollection(context.Context, metav1.DeleteOptions, metav1.ListOptions) error {
	return notSupported(podsResource, "deletecollection")
}

func (p *pods) Apply(context.Context, *applycorev1.PodApplyConfiguration, metav1.ApplyOptions) (*v1.Pod, error) {
	return nil, notSupported(podsResource, "apply")
}

func (p *pods) ApplyStatus(context.Context, *applycorev1.PodApplyConfiguration, metav1.ApplyOptions) (*v1.Pod, error) {
	return nil, notSupported(podsResource, "apply of status")
}

func (p *pods) UpdateEphemeralContainers(context.Context, string, *v1.Pod, metav1.UpdateOptions) (*v1.Pod, error) {
	return nil, notSupported(podsResource, "update of ephemeralcontainers")
}

func (p *pods) Bind(context.Context, *v1.Binding, metav1.CreateOptions) error {
	return notSupported(podsResource, "create of binding")
}

func (p *pods) Evict(context.Context, *policyv1beta1.Eviction) error {
	return notSupported(podsResource, "create of eviction")
}

func (p *pods) EvictV1(context.Context, *policyv1.Eviction) error {
	return notSupported(podsResource, "create of eviction")
}

func (p *pods) EvictV1beta1(context.Context, *policyv1beta1.Eviction) error {
	return notSupported(podsResource, "create of eviction")
}

// Package kubeclient serves a simulated cluster as a client-go
// kubernetes.Interface, so that code written against client-go (a VPA
// updater, a controller, a test of one) runs unchanged against simulated
// nodes.
//
// Start with New and ForNode:
//
//	client := kubeclient.New(kubeclient.ForNode(node))
//	pods, err := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
//	pod, err := client.CoreV1().Pods("default").Patch(ctx, "web", types.JSONPatchType, patch, metav1.PatchOptions{}, "resize")
//
// What is served, read from the Backend's API (any resize.API; an
// *apiserver.Cluster gives resourceVersions, watches and events, see
// Backend) and written through the Backend:
//
//   - pods: get, list and watch (label and field selectors, the API
//     server's pod field labels), create and delete (through the node: the
//     kubelet admits and starts, or stops and removes, the pod before the
//     call returns), and patch of the resize subresource with any of the
//     three patch types, which the node then handles until it is quiet;
//     updateResize (PUT of the resize subresource) as the JSON merge patch
//     of the containers' resources it amounts to;
//   - events, core v1 and events.k8s.io/v1: get, list and watch (the API
//     server's event field labels, such as involvedObject.name), and
//     Search;
//   - nodes, of a Backend that is a NodeLister (ForNode's, a
//     resize.Fleet): get and list (field selectors metadata.name and
//     spec.unschedulable) of each node as resize.Node.V1 shows it, with
//     its capacity, allocatable, Ready condition and kubelet version;
//   - the server version (Discovery().ServerVersion()): the release the
//     nodes' profile reproduces, v1.35.4 by default.
//
// Every other write to pods, events or nodes (update, status, patch of
// the pod itself, apply, eviction, binding), and a watch of nodes, is
// refused with the API server's 405
// MethodNotAllowed rather than done behind the kubelet's back; every other
// resource is client-go's fake clientset (kubernetes/fake), empty. Errors
// are the *apierrors.StatusError a real API server answers with, so
// apierrors.IsNotFound, IsInvalid, IsConflict, IsBadRequest and type
// assertions work as they do against a cluster.
//
// Watches follow the cluster's (apiserver.Cluster.Watch): a watch from
// resourceVersion "" or "0" starts with an ADDED per object, a watch from
// a list's resourceVersion continues it, and a watch from an older
// resourceVersion of pods is 410 Gone (the cluster keeps no history of pod
// changes), after which client-go's reflectors list again. A watcher that
// falls more than WatchBuffer changes behind is closed, and a reflector
// lists again. The clientset declares that it does not do watch-list, so
// informers list and then watch; a watch that asks for it anyway (a
// reflector on a ListWatch of its own) is refused, and the reflector
// falls back to a list and a watch.
//
// What a pod write answers: the stored pod read back after the node has
// handled the write (so a resize's answer already shows what the kubelet
// did with it), not the pod right after the API server stored it.
package kubeclient

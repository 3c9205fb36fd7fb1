// Package kubeapi puts resizelet nodes on a real Kubernetes API server:
// API is resize.API over client-go, and API.Run drives a node on it as a
// kubelet runs, so that kubectl, a VPA updater, an operator under test or
// the scheduler see resizelet nodes as they see kubelets.
//
// Start with New and Run:
//
//	api, err := kubeapi.New(ctx, client, "node-1", kubeapi.Options{})
//	backend, err := resize.Simulated(resize.NodeConfig{Name: "node-1"})
//	node, err := resize.NewNode(ctx, backend.Config(), backend.Deps(resize.Deps{
//		Cluster: api, Clock: resize.WallClock{}, BoundPodsOnly: true}))
//	err = api.Run(ctx, node, kubeapi.RunOptions{}) // until ctx ends
//	node.Close(); api.Close()
//
// What each side of the API does, as the kubelet v1.35.4 does it:
//
//   - pods: the node's pods are those whose spec.nodeName is its name,
//     read and watched through an informer (the kubelet's pod source);
//     GetPod reads the API server itself, as the status manager does
//     before every status write;
//   - resize: through the pods/resize subresource, with any of the three
//     patch types (and dryRun=All for Plan and dry-run resizes);
//   - status: the status manager's write (status_manager.go syncPod): a
//     GET, the UID checked, the conditions the kubelet does not own kept,
//     and a two-way strategic merge patch of pods/status carrying the UID
//     as a precondition, not sent when it changes nothing; a status write
//     that fails is made again at the node's next Tick;
//   - deletion: once a pod marked for deletion is torn down, a delete
//     with grace period 0 and the pod's UID as a precondition;
//   - events: client-go's event recorder (component "kubelet", the node's
//     name as host) to the core v1 events API, with its aggregation and
//     spam filter, as the kubelet's recorder sends them;
//   - the node: Register creates its v1.Node (resize.Node.V1, with the
//     pressure conditions a healthy kubelet reports), or posts its status
//     over the one there after a restart, keeping what other components
//     set in it; Run renews its Lease in kube-node-lease every 10s, reads
//     the Node as often and posts its status when the Node differs from
//     it (Ready again after the node lifecycle controller marked it
//     Unknown), and every 5 minutes regardless (Heartbeat).
//
// Run hands the node every pod the informer sees added, changed or
// removed (resize.Node.HandlePod, HandlePodRemoved), from a work queue
// that never hands one pod to two workers at once, and fires the node's
// timers every second (resize.Node.Tick): a node on a real API server runs
// on the wall clock (resize.WallClock), since the API server's own
// timestamps do.
//
// Errors from the API server are client-go's *apierrors.StatusError, and
// also match resize.ErrPodNotFound (404) and resize.ErrConflict (409) with
// errors.Is, as the in-memory cluster's do.
//
// examples/resizesim's agent command runs N such nodes from the command
// line; examples/realhost/apiserver.sh starts a real API server to run
// them on.
package kubeapi

// Command vpa is a Vertical Pod Autoscaler in the InPlaceOrRecreate mode
// over a simulated fleet: by default 10 nodes with 100 pods each for an
// hour of simulated time, in a few seconds.
//
//	go run ./examples/vpa                          # 10 nodes x 100 pods, one hour
//	go run ./examples/vpa -nodes 5 -pods 20 -duration 30m -seed 7 -quiet
//
// Start with updater.go: the VPA updater, which reaches the cluster only
// through a client-go kubernetes.Interface, here kubeclient.New over the
// simulated fleet (resize/kubeclient), so that the same code would run
// against a real cluster. sim.go is the simulation around it: the fleet
// and its clock, the pods' usage and the recommender it feeds, and the
// ReplicaSets and the scheduler that replace an evicted pod.
//
// The pods belong to Deployment-like workloads (web, api, worker, cache,
// train), each pod one container whose usage follows its workload's shape
// over the hour, times a factor of its own, plus seeded noise
// (world.go). Every minute of simulated time the example
//
//  1. samples every pod's usage into its workload's recommender, a
//     decaying histogram per resource as the VPA recommender keeps one,
//     whose 90th percentile plus a 15% margin is the target
//     (recommender.go); the workload's VPA object carries it to the
//     updater;
//  2. has the updater look at the in-place resizes it sent before: it
//     reads the kubelet's ResizeCompleted events from its event cache to
//     time the ones done, and gets each pod still in flight to read its
//     status.conditions: a Deferred resize waits (and falls back to
//     recreation after five minutes), an Infeasible one or one that ended
//     in error falls back to recreation at once, as the VPA updater's
//     InPlaceOrRecreate does;
//  3. has the updater pick each workload's pods from its pod cache (the
//     label selector app=<workload>) and resize in place every running
//     pod whose requests are more than 10% off its workload's target
//     (limits keep their proportion to the requests): it gets the pod and
//     sends a patch
//     of the resize subresource (Pods(ns).Patch(ctx, name,
//     types.JSONPatchType, ops, metav1.PatchOptions{}, "resize")), then
//     get the pod to read the kubelet's answer from its PodResizePending
//     and PodResizeInProgress conditions and its containerStatuses'
//     resources;
//  4. recreates a pod: the updater deletes it (Pods(ns).Delete with its
//     UID as a precondition; the VPA updater evicts through the eviction
//     subresource, which the client-go adapter does not serve), and its
//     ReplicaSet creates a replacement with the target requests
//     (Pods(ns).Create) on the first node it fits; choosing that node is
//     the simulation's (resize.Fleet's Schedule, the scheduler's resource
//     fit, sets spec.nodeName), and a replacement no node has room for
//     waits for one;
//  5. advances the fleet by a minute (Fleet.Advance, the simulation's
//     clock): every node fires its retry timers and pod resyncs, which
//     admit Deferred resizes when room comes back.
//
// The updater's caches are what the VPA updater's informer cache is: a
// client-go reflector each (watchcache.go) lists the namespace's pods, and
// every event, once through the client (CoreV1().Pods(ns).List,
// CoreV1().Events("").List) and then watches them, keeping only what the
// updater reads; the updater never lists in its loop, so a minute costs it
// the pods that changed, not every pod. In the simulation each cache,
// before it is read, waits for the changes the cluster has made (its
// resourceVersion), so that a run is the same however the watch's
// goroutines are scheduled; on a real API server it reads what has
// arrived, as the VPA updater does.
//
// The updater records its events (InPlaceResizedByVPA, EvictedByVPA)
// through a client-go record.EventRecorder, as the VPA updater does; the
// client-go adapter serves events for reading only, so the simulation's
// recorder writes them into the cluster's event log. The pods there at
// the start are placed on their nodes in bulk (Node.AddPods), as the
// Deployments create them, with the updater's pod cache already watching
// (its list finds none): a list of every pod once built would hold them
// all decoded at the same time, at 5,000 nodes more memory than the rest
// of the run.
//
// It prints one line per action (resize, done, recreate, placed), on
// standard error a progress line at most every ten seconds of a long run
// (nodes built, simulated time, resizes requested), and a summary: resizes done at once, deferred (done later, recreated, still
// pending), infeasible, completed and their time to complete (from the
// request to the kubelet's ResizeCompleted event), recreations and the
// pod count. The exit status is 0 when the summary holds together (every
// resize accounted for, every infeasible one recreated, as many pods at
// the end as at the start), 1 when it does not, and 2 for bad flags or a
// failed run.
//
// Nodes are standard (18 CPUs, 64Gi) but for every fifth, large (48 CPUs,
// 192Gi), all with room for 110 pods; their sizes scale with -pods (those
// are for 100), so that a smaller run is as full. The workloads are shaped
// so that the hour takes every path: api's surge at minute 15 asks for
// more than the full standard nodes have left (Deferred; admitted when a
// pod leaves the node, or recreated after five minutes), train's jump to
// 21 CPUs at minute 20 asks for more than a standard node has at all
// (Infeasible, recreated on a large node). With fewer than five nodes
// there is no large node, and train's replacement waits for one.
//
// -patch chooses the patch the updater sends: json (the default, the VPA
// updater's JSON patch of "add" operations) or strategic (kubectl's
// strategic merge patch); the two make the same resizes.
// -kubelet runs the nodes and the API server as 1.35, 1.36 or 1.37: from
// 1.36 the API server itself refuses a resize beyond the node's
// allocatable (Forbidden), which the updater also answers by recreating
// the pod.
//
// # On a real API server
//
// -kubeconfig FILE runs the same updater with a client-go clientset of a
// real API server (clientcmd), on nodes that resizesim agent processes
// run there (resize/kubeapi), on the wall clock (real.go; how to run it,
// and what many agents take, is in REAL-API-SERVER.md):
//
//	resizesim agent --kubeconfig FILE --name-prefix vpa- --nodes 2 --cpu 3600m --memory 12Gi &
//	resizesim agent --kubeconfig FILE --name-prefix vpa- --first 2 --nodes 2 --cpu 9600m --memory 38Gi &
//	go run ./examples/vpa -kubeconfig FILE -node-prefix vpa- -nodes 4 -pods 20 -interval 1s -duration 30s
//
// It uses the nodes whose names have the prefix that are Ready with a
// fresh Lease (-nodes N waits for N of them); the ones with the least
// allocatable CPU are its standard nodes, the others large, and train's
// jump is sized to the standard node. It creates a namespace of its own
// (vpa-<random>, with its default ServiceAccount) and the pods in it,
// bound to their nodes (spec.nodeName) by a resource fit of its own, as
// there may be no scheduler, as are the replacements, each after the pod
// it replaces is gone; the pods have no owner, since no ReplicaSet object
// stands behind them. -interval and -duration are of the wall clock, and
// round k plays minute k of the workloads' hour, so that a short run
// (30 rounds of a second) still has api's surge and train's jump; the
// updater's own times (the five-minute deferral timeout, the times to
// complete, read from the kubelets' events in whole seconds) are of the
// wall clock. After each resize the updater waits (up to 5s) for the
// kubelet's answer. Its events go to the events API through a client-go
// record.EventBroadcaster. The summary adds the resizes each node
// completed (the kubelets' ResizeCompleted events, by the node that sent
// them), the updater's events the API server has (every one it recorded,
// or the exit status is 1) and the rounds that started late. At the end
// it deletes the namespace (-keep keeps it), and without a controller
// manager does its namespace controller's part: deletes the pods at once,
// the events and the ServiceAccount, and finalizes the namespace.
// -kubelet is the agents' to choose there.
//
// The usage is the example's model only: it is not pushed into the
// simulated runtime, so the kubelet's memory checks see none. The VPA
// parts are simplified where noted: one recommendation per workload, no
// lower and upper bounds, no eviction budget, a ten-minute half-life
// instead of 24 hours, the pods of a loop taken in the order of their
// names rather than by priority, no annotation patch of the pod after an
// in-place resize (the client-go adapter serves patches of the resize
// subresource only), and no fallback for a resize in progress for more
// than an hour (InProgressResizeUpdateTimeout).
package main

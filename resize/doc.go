// Package resize is the kubelet's in-place pod resize path (Kubernetes
// 1.35, where In-Place Pod Resize went GA), from the resize request to the
// pod status, as a library.
//
// Start with Node, the driver users call. NewNode builds it on Deps: an API
// server (API; Cluster is the in-memory one from package apiserver), a
// cgroup.Manager, a cri.Runtime and the two checkpoints. AddPod, Resize and
// DeletePod are the events a kubelet reacts to (Resize takes a ResizeOp: a
// typed ResizeRequest or a patch of any type, and a dry-run flag, and
// returns the pod as the API server answered); Advance moves a FakeClock
// and fires the retry timer (30 s, then 3 min) and pod resyncs; Plan is a
// dry run of a resize on the node; every API call carries the context of
// the node's call that makes it; a kubelet restart is NewNode again on the same Deps,
// once Close has stopped the node before it (Close lets the batch in flight
// finish and does no I/O after it returns; an open node holds its
// checkpoints, so that no second node runs on them: ErrCheckpointsHeld).
//
// The cgroup manager and the runtime come from a Backend (backend.go; its
// Close in backend_cleanup.go):
// Simulated (an in-memory kernel and containerd), or, in package
// resize/host, host.Cgroups (the host's real cgroups with the in-memory
// containerd) or host.Remote (a real CRI runtime and the host's cgroups),
// each coherent with the NodeConfig it
// returns, and each with a Close that removes what the nodes created.
// NewNode refuses parts that disagree on the cgroup version or driver
// (ErrIncoherent).
//
// Fleet is many nodes under one API server and one virtual clock: AddNode
// starts a Node per node (simulated parts by default), CreatePod, Resize
// and DeletePod go to the kubelet of the node a pod is bound to by
// spec.nodeName, and Advance moves the clock once for every node. A node
// takes the pods bound to it, and, when it is alone on its API server, the
// pods without a nodeName too (Deps.BoundPodsOnly says which).
//
// Every decision is made by the pure core in package resize/core: Node
// feeds it inputs, performs the batches of actions it returns (cgroup
// reads and writes, CRI calls, checkpoint writes, events, status writes)
// in order, and reports the results back. Node holds its lock only around
// the core's Step, never across a runtime call, a cgroup write or a
// checkpoint write. NodeConfig.Profile selects the kubelet version to
// behave as (Profile133 to Profile137; package profile says how they
// differ).
//
// Node's methods sit in files named for what they do: node.go builds it
// (NewNode), pods.go adds and deletes pods, resize.go takes resize
// requests, advance.go moves time (Sync, Advance, Tick), step.go feeds the
// core and drains its batches, perform.go carries a batch out and
// lifecycle.go stops the node (Close).
//
// # Metrics
//
// Deps.Metrics records the kubelet's resize metrics on a Prometheus
// registry (package resize/metrics; the core reports what to record,
// metrics.go here records it).
//
// # Logging
//
// Deps.Logger, when set, gets the lines the kubelet v1.35.4 logs on the
// resize path, with the kubelet's messages and key/value pairs (a pod as
// klog.KObj prints it, "namespace/name", or as format.Pod does,
// "name_namespace(uid)", where the kubelet uses that; a container ID as
// "containerd://<id>" where the kubelet logs its String, as a
// core.KubeContainerID value where it logs the kubecontainer.ContainerID
// itself). Levels follow klog's verbosity as go-logr's bridge to slog maps
// it: klog.ErrorS and logger.Error are slog.LevelError, klog.InfoS is
// slog.LevelInfo, and klog.V(n).InfoS is slog.Level(-n): V(2) DEBUG+2,
// V(3) DEBUG+1, V(4) slog.LevelDebug, V(5) DEBUG-1. So a handler at slog.LevelInfo shows what
// a kubelet at -v=0 shows, one at slog.LevelDebug what -v=4 shows, and one
// at slog.Level(-5) every line. Records carry the node's clock as their
// time. A nil Logger logs nothing and costs nothing: the core then builds
// no line. The lines, by where the kubelet logs them:
//
//   - pkg/kubelet/allocation/allocation_manager.go: "Pod admission denied"
//     (Info; podUID, pod, reason, message) when the admit handlers refuse
//     a new pod or defer a resize; "Resize cannot be accommodated" (V3;
//     pod, reason, message) for a Deferred resize; the capacity message
//     "Node didn't have enough capacity: ..." (V3; pod) and the static CPU
//     and memory manager messages (V3; pod as format.Pod) for an Infeasible
//     one; per pending resize retried, "Pod resize successfully allocated",
//     "Pod resize is deferred; will reevaluate later" or "Pod resize is
//     infeasible" (V4; pod), "Failed to handle pod resources resize"
//     (Error; err, pod) when its allocation could not be checkpointed and
//     "Pod not found; removing from pending resizes" (V4; podUID); after a
//     periodic retry, "Successfully retried resize after timeout" (Info;
//     pod) per resize it allocated; "SetPodAllocation failed" (Error; err,
//     pod) for a new pod's allocation.
//   - pkg/kubelet/kuberuntime/kuberuntime_manager.go and
//     kuberuntime_container.go, for a restart the resize policy asks for:
//     "Killing unwanted container for pod" (V3; containerName,
//     containerID, pod), "Killing container with a grace period" (V2; pod,
//     podUID, containerName, containerID, gracePeriod), then "Container
//     exited normally" (V3) or "Container termination failed with
//     gracePeriod" and "killContainer for pod failed" (Error).
//   - the same files, doPodResizeAction: "Unable to get pod cgroup memory
//     config" (Error; err, pod), "Allocated pod resize is not currently
//     feasible" (Error; err, pod) when the memory usage check refuses,
//     "Failed to set cgroup config" (Error; err, resource, pod),
//     "updatePodSandboxResources failed: unimplemented; this call is
//     best-effort: proceeding with resize" (V3; sandboxID), "Failed to
//     notify runtime for UpdatePodSandboxResources" (Error; err, resource,
//     pod), "Updating container resources" (V5; pod) before each
//     resource's container updates, "updateContainerResources failed"
//     (Error; err, container, cID, pod, resourceName) and
//     "updatePodContainerResources failed" (Error; err, pod, resource).
//   - pkg/kubelet/pod_workers.go: "Error syncing pod, skipping" (Error;
//     err, pod, podUID) after a sync whose one failure was the resize, with
//     the error the kubelet's sync result gives it.
//
// The lines of every sync that are not about the resize ("computePodActions
// got for pod", the status manager's, the sandbox and container starts)
// are not logged, nor those of the 1.36 and 1.37 kubelets where they
// differ: every profile logs the 1.35.4 lines. With a Logger, Advance
// does not skip over the periodic retries of pending resizes, which each
// log their decision.
package resize

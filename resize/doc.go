// Package resize is the kubelet's in-place pod resize path (Kubernetes
// 1.35, where In-Place Pod Resize went GA), from the resize request to the
// pod status, as a library.
//
// Start with Node, the driver users call. NewNode builds it on Deps: an API
// server (API; Cluster is the in-memory one from package apiserver), a
// cgroup.Manager, a cri.Runtime and the two checkpoints. AddPod, Resize and
// DeletePod are the events a kubelet reacts to; Advance moves a FakeClock
// and fires the retry timer (30 s, then 3 min) and pod resyncs; Plan is a
// dry run of a resize; a kubelet restart is NewNode again on the same Deps.
//
// Fleet is many nodes under one API server and one virtual clock: AddNode
// starts a Node per node (simulated parts by default), CreatePod, ResizePod
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
package resize

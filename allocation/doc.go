// Package allocation holds the kubelet's allocation decisions for in-place
// pod resize as pure functions and plain values that the resize core
// (package resize/core) owns: nothing here does I/O, reads a clock or
// takes a lock.
//
// Start with AdmitResize (admit.go): given the pod as the API shows it, the
// same pod with its allocated resources overlaid, and every other admitted
// pod, it returns the kubelet's Decision (Admitted, Deferred or
// Infeasible, with the exact message) in the kubelet's order of checks.
// AdmitPod decides a new pod the same way the predicate admission handler
// does, and ResourcesFit (fit.go) is that handler's resource check, shared
// by both.
//
// The rest supports the core around those decisions:
//   - PodResources is what a checkpoint holds for a pod; the checkpoints
//     themselves (file-backed and in-memory) are in package
//     allocation/state.
//   - Queue (queue.go) is the pending-resize queue in the kubelet's retry
//     order (Less), and IsResizeIncreasing is the first ordering key.
//   - RetryTimer (timer.go) is the periodic retry: 30 s after start, then
//     3 min after every retry of any trigger.
//   - NodeLoads (nodeload.go) is the scheduler's side: what it counts as
//     taken on each node, kept from pod writes (the API server keeps one
//     for a fleet's scheduling).
package allocation

// Package allocation holds the kubelet's allocation decisions for in-place
// pod resize, as pure functions and small state holders that the node driver
// (package resize) calls: it does no I/O except through the checkpoint Store.
//
// Start with AdmitResize (admit.go): given the pod as the API shows it, the
// same pod with its allocated resources overlaid, and every other admitted
// pod, it returns the v1.35 kubelet's Decision (Admitted, Deferred or
// Infeasible, with the exact message) in the kubelet's order of checks.
// AdmitPod decides a new pod the same way the predicate admission handler
// does, and ResourcesFit is that handler's resource check, shared by both.
//
// The rest supports the driver around those decisions:
//   - Store (state.go, checkpoint.go) is one checkpoint file,
//     allocated_pods_state or actuated_pods_state, in the kubelet's V1 format
//     with its checksum, written atomically.
//   - Queue (queue.go) is the pending-resize queue in the kubelet's retry
//     order (Less), and IsResizeIncreasing is the first ordering key.
//   - RetryTimer (timer.go) is the periodic retry: 30 s after start, then
//     3 min after every retry of any trigger.
package allocation

// Package explore is the crash and fault explorer: for every I/O call the
// kubelet makes while a scenario step runs, it replays the scenario and
// crashes the kubelet just before or just after that call (the old node
// can do nothing more; a new one starts with resize.NewNode on the same
// checkpoint files, runtime and cgroups), or makes that one call fail
// once; then it lets the node settle (a sync, then virtual time: resyncs,
// back-offs, pending-resize retries) and judges how it ended against the
// same step without a fault:
//
//   - converged: the status, the conditions, the allocated and actuated
//     checkpoints (the node's records and the files a restart would load),
//     the pod and container cgroups and the runtime's container resources
//     all agree with the final allocation (resize.Node.Audit finds no
//     difference the run without the fault does not have);
//   - drifted: the conditions are those of the run without the fault (the
//     resize reports done) but some real state disagrees, or, after a
//     crash, a PodResizePending stays that the restarted kubelet took
//     over although nothing is left to allocate. A drift with the
//     signature of one of the kubelet v1.35.4's own gaps (Gaps) is labelled
//     the kubelet's, with the cause in its source; any other is
//     resizelet's own, a bug;
//   - stuck: a resize the run without the fault finished is still in
//     progress after the settling time;
//   - broken: a panic, a kubelet that does not start again, a replay that
//     did not reach the call, a pod or an allocation lost or different
//     from the run without the fault.
//
// The calls are found by putting a gate in front of every part a kubelet
// drives (scenario.Options.Deps and RuntimeCgroups): its cgroup manager,
// its runtime, its two checkpoints (opened from the run's checkpoint
// directory for each kubelet, so that a restart loads the files) and its
// writes to the API server; and the in-memory runtime's own container
// cgroup writes, which can fail once but not be crashed around. Events are
// not points: the kubelet's recorder buffers and drops them anyway. Every
// point is run; with Options.ShareCrashStates, a crash before a call and
// a crash after the last call before it that changed anything, which
// leave the same state, are run once and share the outcome.
//
// The kubelet v1.35.4's gaps show as the kubelet's drifts by default. The
// opt-in resize.NodeConfig.ReconcilePodCgroups and FlushCheckpoints close
// two of them (Options.ReconcilePodCgroups, FlushCheckpoints): with both,
// every point converges but those of GapStalePending, and any other drift
// is resizelet's. GapStalePending is a PodResizePending the run without
// the fault does not have, on a pod with nothing left to allocate, after a
// crash: the restarted kubelet took it over from the API server's pod and
// nothing queues the pod to clear it. No opt-in fix closes it.
//
// Scenario is the entry point; resizesim explore prints its Report as a
// table per scenario and a summary.
package explore

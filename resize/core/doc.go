// Package core is the kubelet's in-place resize path as a pure state
// machine, in the shape of etcd-io/raft's RawNode: a Core takes inputs
// (Step: a pod added, a resize, a deletion, a timer, the results of the
// last batch) and returns Ready batches of Actions (cgroup reads and
// writes, CRI calls, checkpoint writes, events, status writes) in exactly
// the kubelet's order. It does no I/O, reads no clock, takes no lock and
// starts no goroutine; package resize's Node is the driver that performs
// the batches on real or simulated parts and reports back.
//
// Start with Core (core.go) and Step (step.go, which schedules the
// operations), then the operations themselves: pod admission (admit.go),
// resizes and the pending-resize queue (admission.go), the pod sync
// (sync.go), the teardown (delete.go) and the kubelet restart (start.go);
// the rules they apply: the resize write order (resize.go), the container
// plan (plan.go), the status (status.go), the conditions (conditions.go),
// the CRI messages (package cri/kubeletcri), the event messages
// (messages.go) and the metrics the kubelet records, which Step reports
// while they are on (metrics.go, RecordMetrics). Files depend one way:
// step.go on the operations, the operations on the rules and on the
// core's own state (pods.go, schedule.go, ops.go), which stands on
// core.go; core.go names only the types below it (pod.go, heaps.go,
// config.go, metrictypes.go, logrecord.go, actions.go), never an
// operation's (its pools hold them as ops). Every rule that decides
// something has a table test of its own next to it, and flow_test.go,
// sync_test.go and step_test.go drive the operations through a small
// scripted world.
//
// With SetLogging on, each Ready also carries the lines the kubelet logs
// for what the Step decided and the results it took (LogRecord in
// logrecord.go; logs.go has one function per place the kubelet logs);
// off, the default, nothing is built.
//
// Version behaviour comes from package profile; pod cgroup arithmetic from
// package cgroup/cgconfig; admission arithmetic from package allocation.
package core

// Package core is the kubelet's in-place resize path as a pure state
// machine, in the shape of etcd-io/raft's RawNode: a Core takes inputs
// (Step: a pod added, a resize, a deletion, a timer, the results of the
// last batch) and returns Ready batches of Actions (cgroup reads and
// writes, CRI calls, checkpoint writes, events, status writes) in exactly
// the kubelet's order. It does no I/O, reads no clock, takes no lock and
// starts no goroutine; package resize's Node is the driver that performs
// the batches on real or simulated parts and reports back.
//
// Start with Core and Step (core.go), then the operations: admission and
// the pending-resize queue (admission.go), the pod sync (sync.go), the
// resize write order (resize.go), the container plan (plan.go), the status
// (status.go) and the kubelet restart (start.go). Every rule that decides
// something has a table test of its own next to it.
//
// Version behaviour comes from package profile; pod cgroup arithmetic from
// package cgroup/cgconfig; admission arithmetic from package allocation.
package core

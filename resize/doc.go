// Package resize is the kubelet's in-place pod resize path (Kubernetes
// 1.35, where In-Place Pod Resize went GA), from the resize request to the
// pod status.
//
// Start with Node and Cluster. Cluster is the API server side: pods with
// their generation and status, events, and the resize subresource
// (ApplyResize: strategic merge patch, defaulting and ValidateResize with
// the API server's messages). Node is the kubelet: NewNode builds it on a
// cgroup.Manager, a cri.Runtime and a checkpoint directory (Deps); AddPod,
// Resize and DeletePod are the events a kubelet reacts to; Advance moves a
// FakeClock and fires the retry timer (30 s, then 3 min) and pod resyncs;
// a kubelet restart is NewNode again on the same Deps.
//
// The decisions are pure functions of state, as in etcd-io/raft: admission
// (allocation.AdmitResize, allocation.AdmitPod), the plan of a pod sync
// (planPod: which containers restart, which update, decreases first), the
// status a container reports (statusResources) and the pod cgroup values
// (cgconfig.PodConfig). Node is the thin driver that carries them out through
// the interfaces in the kubelet's order (sync.go, doPodResizeAction), and
// that never holds a node-wide lock across a runtime call or a cgroup
// write. NodeConfig.Profile selects the kubelet version to behave as
// (Profile133 to Profile136).
package resize

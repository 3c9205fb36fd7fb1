// Package kubeletcri builds the CRI messages a kubelet sends for a pod: the
// RunPodSandbox config, a container's CreateContainer config, the
// LinuxContainerResources of UpdateContainerResources with its OOM score
// adjustment, and the UpdatePodSandboxResources request; and it judges the
// usage check the kubelet makes before it lowers a memory limit
// (MemoryCheck). It stands below both of its users: the resize core
// (package resize/core), which sends these messages while running a node,
// and the runtime checks (package cri/conform), which send exactly what a
// kubelet would without running one.
//
// Start at New, which takes the few node settings the messages depend on
// (Settings), and at Messages' methods, one a message.
package kubeletcri

// Package conform checks that a CRI runtime handles in-place pod resize
// the way a Kubernetes 1.35 kubelet expects, against the runtime's own
// socket. The CRI conformance suite most runtimes use has no resize test;
// this package sends what the kubelet sends (built by package
// cri/kubeletcri, the code the resize path itself uses) and reads back
// what the kubelet relies on.
//
// Dial connects to an endpoint and refuses, with ErrNotCRI and the reason,
// one that is not a CRI runtime. Run creates one sandbox and one container
// of its own (named and labelled with a unique prefix, under a private
// cgroup parent), runs the checks, and removes everything it created
// whatever happens, also when its context ends. It returns a Report: per
// check PASS, FAIL, NOT SUPPORTED or NOT RUN, with the values sent and
// read back and what a kubelet would do with that behaviour. The checks:
//
//  1. CPU increase and decrease through UpdateContainerResources: accepted,
//     same process, the container's cgroup files hold the values (on v2,
//     which cpu.weight formula the runtime uses);
//  2. memory limit increase and decrease above usage, in place;
//  3. memory limit below usage: what the runtime does (runc refuses on v1;
//     on v2 the kernel OOM-kills), compared with the kubelet's usage check;
//  4. ContainerStatus reports the applied resources;
//  5. UpdatePodSandboxResources: implemented, or Unimplemented (allowed);
//  6. zero values leave resources unchanged; an unknown unified key is
//     refused or ignored without spoiling later updates;
//  7. the restart path: stop, remove, create with new resources, start;
//  8. the latency of every call;
//  9. nothing is left behind.
//
// The command resizesim conform (examples/resizesim) is a thin wrapper
// that adds signal handling and, with --scenarios, runs scenario files on
// the same runtime. A run on the in-memory runtime (cri.SimContainerd on
// cgroup.SimKernel) needs no root and is how the package's tests check the
// report logic.
package conform

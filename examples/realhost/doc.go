// Package realhost holds the scripts and tests that run resizelet on real
// Linux parts instead of the simulation: a private containerd with runc
// (containerd.sh), real cgroup v1 on the host, and real cgroup v2 in a small
// qemu VM (vm.sh). The tests read what the scripts set up from environment
// variables and skip with a reason when it is missing, except under CI=true,
// where a missing real part is a failure:
//
//	RESIZELET_CRI_ENDPOINT  unix:///PATH of a CRI runtime (containerd.sh start prints it)
//	RESIZELET_IMAGE         an image the runtime has whose sleep keeps running
//	RESIZELET_EXTRA_CRI_ENDPOINTS
//	                        more runtimes (space separated, each with that
//	                        image) to share the scenario suite and the
//	                        explorer runs on containerd out to, one
//	                        resizesim on each at once
//	RESIZELET_VM_KERNEL     a vmlinuz for vm.sh (vm.sh kernel DIR prints it)
//	RESIZELET_KUBECONFIG    the kubeconfig of a real kube-apiserver v1.35.4
//	                        (apiserver.sh start prints it), for the tests
//	                        on a real API server
//	RESIZELET_KUBECTL       its release's kubectl (apiserver.sh start
//	                        prints both, as KUBECONFIG= and KUBECTL=)
//	RESIZELET_LONG          1 runs the real-host runs that take minutes: the
//	                        crash explorer on real parts, the scenario suite
//	                        on containerd, and everything in the VM
//
// conform_test.go runs resizesim conform (package cri/conform) against the
// private containerd, interrupts one run and kills another to check that
// nothing is left behind, and runs it on cgroup v2 against a containerd
// started inside the VM from the host's binaries (containerd.sh image
// builds the image it imports there).
//
// article_test.go runs the blog post's kubectl commands against the real
// API server, on a node resizesim agent runs; kubeapi_test.go runs the
// same pods and resizes through a node on the in-memory cluster and one on
// the real API server (package resize/kubeapi) and compares what each
// shows; apiserver_diff_test.go (TestResizeMatchesRealAPIServer) sends
// the same generated resizes to the real API server and to an
// apiserver.Cluster and requires the same answers.
//
// README.md in this directory explains how to run them and what each real
// part does; .ci/run runs them in CI.
package realhost

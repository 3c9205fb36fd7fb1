// Package remote is the CRI client of a real container runtime
// (containerd, CRI-O) over its gRPC socket: Client, a cri.Runtime with
// k8s.io/cri-api v1, as the kubelet's CRI client talks to a runtime.
//
// Start with Dial, which connects to an endpoint ("unix:///PATH") and
// checks that the runtime answers; WithCallTimeout and WithDialOptions
// configure it (options.go). The RuntimeService calls the resize path
// needs are in runtime.go, RuntimeConfig and the image calls in
// images.go. A runtime's errors come back as cri.RemoteError, which keeps
// the runtime's own message and maps the gRPC codes to cri's errors.
//
// The package is apart from package cri so that a program that only
// simulates (cri.SimContainerd) does not link the gRPC client's dialing
// code; the tests serve a cri.SimContainerd over a real gRPC socket.
package remote

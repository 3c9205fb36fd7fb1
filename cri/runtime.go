// Package cri is resizelet's view of a container runtime: the part of the
// CRI RuntimeService (k8s.io/cri-api) that the kubelet needs to run pods and
// resize them in place, in cri-api's own message types.
//
// Start with Runtime. SimContainerd (simcontainerd.go) simulates containerd
// with runc in memory: it writes container cgroups through a
// cgroup.Manager, treats 0 in an update as "leave unchanged", reports
// ContainerStatus.resources from the last accepted values, and rejects a
// memory limit below usage on cgroup v1 with runc's message. Its old names
// Memory and NewMemory remain as deprecated aliases (deprecated.go). Two
// decorators work on any Runtime: FaultInjector (fault.go) makes chosen
// calls fail, and Recorder (recorder.go) keeps the calls that change
// something, for transcripts. SetMemoryUsage (usage.go) makes a container
// use memory on any of them. The client of a real runtime over its gRPC
// socket is remote.Client, in package cri/remote, so that a program that
// only simulates does not link gRPC's dialing code; its errors
// (RemoteError, IsUnimplemented: remoteerror.go) are here, since the
// resize path reads them.
package cri

import (
	"context"
	"errors"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Runtime is the subset of k8s.io/cri-api/pkg/apis.RuntimeService the
// kubelet's resize path uses. The method signatures are cri-api's own, so a
// full RuntimeService implementation satisfies Runtime as it is.
//
// Implementations must be safe for concurrent use. Responses are for
// reading: an in-process implementation such as SimContainerd may hand
// the same message to several callers.
type Runtime interface {
	RunPodSandbox(ctx context.Context, config *runtimeapi.PodSandboxConfig, runtimeHandler string) (string, error)
	StopPodSandbox(ctx context.Context, podSandboxID string) error
	RemovePodSandbox(ctx context.Context, podSandboxID string) error
	ListPodSandbox(ctx context.Context, filter *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error)
	UpdatePodSandboxResources(ctx context.Context, request *runtimeapi.UpdatePodSandboxResourcesRequest) (*runtimeapi.UpdatePodSandboxResourcesResponse, error)

	CreateContainer(ctx context.Context, podSandboxID string, config *runtimeapi.ContainerConfig, sandboxConfig *runtimeapi.PodSandboxConfig) (string, error)
	StartContainer(ctx context.Context, containerID string) error
	StopContainer(ctx context.Context, containerID string, timeout int64) error
	RemoveContainer(ctx context.Context, containerID string) error
	ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error)
	ContainerStatus(ctx context.Context, containerID string, verbose bool) (*runtimeapi.ContainerStatusResponse, error)
	UpdateContainerResources(ctx context.Context, containerID string, resources *runtimeapi.ContainerResources) error
	ContainerStats(ctx context.Context, containerID string) (*runtimeapi.ContainerStats, error)
	ExecSync(ctx context.Context, containerID string, cmd []string, timeout time.Duration) (stdout []byte, stderr []byte, err error)
}

// Errors of a Runtime, for errors.Is. Implementations wrap them and keep the
// runtime's own message in the error text.
var (
	// ErrNotFound means the sandbox or container does not exist.
	ErrNotFound = errors.New("not found")
	// ErrUnavailable means the runtime could not be reached.
	ErrUnavailable = errors.New("runtime unavailable")
	// ErrUnimplemented means the runtime does not implement the call
	// (gRPC code Unimplemented), as containerd before 2.2 answers
	// UpdatePodSandboxResources.
	ErrUnimplemented = errors.New("not implemented by the runtime")
	// ErrNoRuntime means there is no runtime to call: a FaultInjector or
	// Recorder that wraps none (given nil, or not made by its
	// constructor), a remote.Client that remote.Dial did not make, or a nil
	// Runtime given to a function of this package.
	ErrNoRuntime = errors.New("no runtime")
	// ErrNilContext means a call was given a nil context.Context, which a
	// runtime call needs (a Remote derives the call's deadline from it).
	ErrNilContext = errors.New("nil context.Context")
)

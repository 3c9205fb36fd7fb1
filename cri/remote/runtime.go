package remote

import (
	"context"
	"fmt"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cri"
)

// call returns a context for one call that waits at most extra beyond the
// per-call timeout.
func (r *Client) call(ctx context.Context, extra time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, r.timeout+extra)
}

// Version returns the runtime's name, version and CRI API version.
func (r *Client) Version(ctx context.Context) (*runtimeapi.VersionResponse, error) {
	if r.ready(ctx) != nil {
		return nil, fmt.Errorf("Version: %w", r.ready(ctx))
	}
	ctx, cancel := r.call(ctx, 0)
	defer cancel()
	resp, err := r.client.Version(ctx, &runtimeapi.VersionRequest{})
	return resp, wrapErr("Version", err)
}

// RunPodSandbox creates and starts a pod sandbox.
func (r *Client) RunPodSandbox(ctx context.Context, config *runtimeapi.PodSandboxConfig, runtimeHandler string) (string, error) {
	if r.ready(ctx) != nil {
		return "", fmt.Errorf("RunPodSandbox: %w", r.ready(ctx))
	}
	ctx, cancel := r.call(ctx, 0)
	defer cancel()
	resp, err := r.client.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: config, RuntimeHandler: runtimeHandler})
	if err != nil {
		return "", wrapErr("RunPodSandbox", err)
	}
	return resp.GetPodSandboxId(), nil
}

// StopPodSandbox stops a sandbox and its containers.
func (r *Client) StopPodSandbox(ctx context.Context, podSandboxID string) error {
	if r.ready(ctx) != nil {
		return fmt.Errorf("StopPodSandbox: %w", r.ready(ctx))
	}
	ctx, cancel := r.call(ctx, 0)
	defer cancel()
	_, err := r.client.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: podSandboxID})
	return wrapErr("StopPodSandbox", err)
}

// RemovePodSandbox removes a sandbox and its containers.
func (r *Client) RemovePodSandbox(ctx context.Context, podSandboxID string) error {
	if r.ready(ctx) != nil {
		return fmt.Errorf("RemovePodSandbox: %w", r.ready(ctx))
	}
	ctx, cancel := r.call(ctx, 0)
	defer cancel()
	_, err := r.client.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: podSandboxID})
	return wrapErr("RemovePodSandbox", err)
}

// ListPodSandbox lists the sandboxes that match filter.
func (r *Client) ListPodSandbox(ctx context.Context, filter *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	if r.ready(ctx) != nil {
		return nil, fmt.Errorf("ListPodSandbox: %w", r.ready(ctx))
	}
	ctx, cancel := r.call(ctx, 0)
	defer cancel()
	resp, err := r.client.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: filter})
	if err != nil {
		return nil, wrapErr("ListPodSandbox", err)
	}
	return resp.GetItems(), nil
}

// UpdatePodSandboxResources tells the runtime the pod's new resources.
func (r *Client) UpdatePodSandboxResources(ctx context.Context, request *runtimeapi.UpdatePodSandboxResourcesRequest) (*runtimeapi.UpdatePodSandboxResourcesResponse, error) {
	if r.ready(ctx) != nil {
		return nil, fmt.Errorf("UpdatePodSandboxResources: %w", r.ready(ctx))
	}
	ctx, cancel := r.call(ctx, 0)
	defer cancel()
	resp, err := r.client.UpdatePodSandboxResources(ctx, request)
	return resp, wrapErr("UpdatePodSandboxResources", err)
}

// CreateContainer creates a container in a sandbox.
func (r *Client) CreateContainer(ctx context.Context, podSandboxID string, config *runtimeapi.ContainerConfig, sandboxConfig *runtimeapi.PodSandboxConfig) (string, error) {
	if r.ready(ctx) != nil {
		return "", fmt.Errorf("CreateContainer: %w", r.ready(ctx))
	}
	ctx, cancel := r.call(ctx, 0)
	defer cancel()
	resp, err := r.client.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
		PodSandboxId: podSandboxID, Config: config, SandboxConfig: sandboxConfig,
	})
	if err != nil {
		return "", wrapErr("CreateContainer", err)
	}
	return resp.GetContainerId(), nil
}

// StartContainer starts a created container.
func (r *Client) StartContainer(ctx context.Context, containerID string) error {
	if r.ready(ctx) != nil {
		return fmt.Errorf("StartContainer: %w", r.ready(ctx))
	}
	ctx, cancel := r.call(ctx, 0)
	defer cancel()
	_, err := r.client.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: containerID})
	return wrapErr("StartContainer", err)
}

// StopContainer stops a container, giving it timeout seconds before it is
// killed; the call may take that long on top of the per-call timeout.
func (r *Client) StopContainer(ctx context.Context, containerID string, timeout int64) error {
	if r.ready(ctx) != nil {
		return fmt.Errorf("StopContainer: %w", r.ready(ctx))
	}
	ctx, cancel := r.call(ctx, time.Duration(max(timeout, 0))*time.Second)
	defer cancel()
	_, err := r.client.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: containerID, Timeout: timeout})
	return wrapErr("StopContainer", err)
}

// RemoveContainer removes a container.
func (r *Client) RemoveContainer(ctx context.Context, containerID string) error {
	if r.ready(ctx) != nil {
		return fmt.Errorf("RemoveContainer: %w", r.ready(ctx))
	}
	ctx, cancel := r.call(ctx, 0)
	defer cancel()
	_, err := r.client.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: containerID})
	return wrapErr("RemoveContainer", err)
}

// ListContainers lists the containers that match filter.
func (r *Client) ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	if r.ready(ctx) != nil {
		return nil, fmt.Errorf("ListContainers: %w", r.ready(ctx))
	}
	ctx, cancel := r.call(ctx, 0)
	defer cancel()
	resp, err := r.client.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: filter})
	if err != nil {
		return nil, wrapErr("ListContainers", err)
	}
	return resp.GetContainers(), nil
}

// ContainerStatus returns a container's status, with its resources as the
// runtime reports them.
func (r *Client) ContainerStatus(ctx context.Context, containerID string, verbose bool) (*runtimeapi.ContainerStatusResponse, error) {
	if r.ready(ctx) != nil {
		return nil, fmt.Errorf("ContainerStatus: %w", r.ready(ctx))
	}
	ctx, cancel := r.call(ctx, 0)
	defer cancel()
	resp, err := r.client.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: containerID, Verbose: verbose})
	return resp, wrapErr("ContainerStatus", err)
}

// UpdateContainerResources sends the container's new resources. The
// runtime treats zero fields as "leave unchanged", so send them all.
func (r *Client) UpdateContainerResources(ctx context.Context, containerID string, resources *runtimeapi.ContainerResources) error {
	if r.ready(ctx) != nil {
		return fmt.Errorf("UpdateContainerResources: %w", r.ready(ctx))
	}
	ctx, cancel := r.call(ctx, 0)
	defer cancel()
	_, err := r.client.UpdateContainerResources(ctx, &runtimeapi.UpdateContainerResourcesRequest{
		ContainerId: containerID,
		Linux:       resources.GetLinux(),
		Windows:     resources.GetWindows(),
	})
	return wrapErr("UpdateContainerResources", err)
}

// ContainerStats returns a container's resource usage.
func (r *Client) ContainerStats(ctx context.Context, containerID string) (*runtimeapi.ContainerStats, error) {
	if r.ready(ctx) != nil {
		return nil, fmt.Errorf("ContainerStats: %w", r.ready(ctx))
	}
	ctx, cancel := r.call(ctx, 0)
	defer cancel()
	resp, err := r.client.ContainerStats(ctx, &runtimeapi.ContainerStatsRequest{ContainerId: containerID})
	if err != nil {
		return nil, wrapErr("ContainerStats", err)
	}
	return resp.GetStats(), nil
}

// ExecSync runs cmd in the container and waits up to timeout (0: no limit
// but the per-call timeout) for it. A command that exits non-zero gives its
// output and an *cri.ExitError.
func (r *Client) ExecSync(ctx context.Context, containerID string, cmd []string, timeout time.Duration) ([]byte, []byte, error) {
	if r.ready(ctx) != nil {
		return nil, nil, fmt.Errorf("ExecSync: %w", r.ready(ctx))
	}
	ctx, cancel := r.call(ctx, timeout)
	defer cancel()
	secs := int64(timeout / time.Second)
	if timeout > 0 && secs == 0 {
		secs = 1 // the CRI counts whole seconds; 0 would mean no timeout
	}
	resp, err := r.client.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: containerID, Cmd: cmd, Timeout: secs})
	if err != nil {
		return nil, nil, wrapErr("ExecSync", err)
	}
	if resp.GetExitCode() != 0 {
		return resp.GetStdout(), resp.GetStderr(), &cri.ExitError{ExitCode: resp.GetExitCode()}
	}
	return resp.GetStdout(), resp.GetStderr(), nil
}

var _ cri.Runtime = (*Client)(nil)

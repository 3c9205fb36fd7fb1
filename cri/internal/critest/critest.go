// Package critest holds what the tests of package cri and of its gRPC
// client, package remote, share: the sandbox and container configs a
// kubelet sends, and calls that fail the test on error, so that both
// packages' tests drive a runtime the same way.
package critest

import (
	"context"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cri/crilabels"
)

const (
	// MiB is a mebibyte, for memory amounts.
	MiB = int64(1) << 20
	// PodParent is the pod cgroup the kubelet would name for a Burstable
	// pod with UID uid-a.
	PodParent = "kubepods/burstable/poduid-a"
)

// Runtime is the part of cri.Runtime the helpers call; package cri's own
// tests cannot import cri.Runtime from here.
type Runtime interface {
	RunPodSandbox(ctx context.Context, config *runtimeapi.PodSandboxConfig, runtimeHandler string) (string, error)
	CreateContainer(ctx context.Context, podSandboxID string, config *runtimeapi.ContainerConfig, sandboxConfig *runtimeapi.PodSandboxConfig) (string, error)
	StartContainer(ctx context.Context, containerID string) error
}

// SandboxConfig is a sandbox config as the kubelet sends it: metadata,
// the three pod labels and the pod cgroup as parent.
func SandboxConfig(name, namespace, uid, parent string) *runtimeapi.PodSandboxConfig {
	return &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: name, Namespace: namespace, Uid: uid},
		Labels: map[string]string{
			crilabels.PodName:      name,
			crilabels.PodNamespace: namespace,
			crilabels.PodUID:       uid,
		},
		Linux: &runtimeapi.LinuxPodSandboxConfig{CgroupParent: parent},
	}
}

// ContainerConfig is a container config as the kubelet sends it for a
// container of the sandbox.
func ContainerConfig(sb *runtimeapi.PodSandboxConfig, name string, attempt uint32, res *runtimeapi.LinuxContainerResources) *runtimeapi.ContainerConfig {
	return &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: name, Attempt: attempt},
		Image:    &runtimeapi.ImageSpec{Image: "busybox"},
		Command:  []string{"sleep", "86400"},
		Labels: map[string]string{
			crilabels.PodName:       sb.Labels[crilabels.PodName],
			crilabels.PodNamespace:  sb.Labels[crilabels.PodNamespace],
			crilabels.PodUID:        sb.Labels[crilabels.PodUID],
			crilabels.ContainerName: name,
		},
		Linux: &runtimeapi.LinuxContainerConfig{Resources: res},
	}
}

// MustRun runs a sandbox and fails the test on error.
func MustRun(t testing.TB, rt Runtime, cfg *runtimeapi.PodSandboxConfig) string {
	t.Helper()
	id, err := rt.RunPodSandbox(context.Background(), cfg, "")
	if err != nil {
		t.Fatalf("RunPodSandbox(%s): %v", cfg.Metadata.Name, err)
	}
	return id
}

// MustCreate creates a container and fails the test on error.
func MustCreate(t testing.TB, rt Runtime, sbID string, sb *runtimeapi.PodSandboxConfig, cfg *runtimeapi.ContainerConfig) string {
	t.Helper()
	id, err := rt.CreateContainer(context.Background(), sbID, cfg, sb)
	if err != nil {
		t.Fatalf("CreateContainer(%s): %v", cfg.Metadata.Name, err)
	}
	return id
}

// MustStart creates and starts a container and fails the test on error.
func MustStart(t testing.TB, rt Runtime, sbID string, sb *runtimeapi.PodSandboxConfig, cfg *runtimeapi.ContainerConfig) string {
	t.Helper()
	id := MustCreate(t, rt, sbID, sb, cfg)
	if err := rt.StartContainer(context.Background(), id); err != nil {
		t.Fatalf("StartContainer(%s): %v", id, err)
	}
	return id
}

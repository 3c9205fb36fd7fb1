package cri

import (
	"context"
	"strconv"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup"
)

const (
	mi = int64(1) << 20
	// podParent is the pod cgroup the kubelet would name for a Burstable
	// pod with UID uid-a.
	podParent = "kubepods/burstable/poduid-a"
)

// newSimContainerd returns a simulated runtime over a fresh simulated
// cgroup hierarchy of the version.
func newSimContainerd(t *testing.T, version cgroup.Version, opts ...SimContainerdOption) (*SimContainerd, *cgroup.SimKernel) {
	t.Helper()
	cg := cgroup.NewSimKernel(version)
	return NewSimContainerd(cg, opts...), cg
}

// sandboxConfig is a sandbox config as the kubelet sends it: metadata,
// the three pod labels and the pod cgroup as parent.
func sandboxConfig(name, namespace, uid, parent string) *runtimeapi.PodSandboxConfig {
	return &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: name, Namespace: namespace, Uid: uid},
		Labels: map[string]string{
			LabelPodName:      name,
			LabelPodNamespace: namespace,
			LabelPodUID:       uid,
		},
		Linux: &runtimeapi.LinuxPodSandboxConfig{CgroupParent: parent},
	}
}

// containerConfig is a container config as the kubelet sends it for a
// container of the sandbox.
func containerConfig(sb *runtimeapi.PodSandboxConfig, name string, attempt uint32, res *runtimeapi.LinuxContainerResources) *runtimeapi.ContainerConfig {
	return &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: name, Attempt: attempt},
		Image:    &runtimeapi.ImageSpec{Image: "busybox"},
		Command:  []string{"sleep", "86400"},
		Labels: map[string]string{
			LabelPodName:       sb.Labels[LabelPodName],
			LabelPodNamespace:  sb.Labels[LabelPodNamespace],
			LabelPodUID:        sb.Labels[LabelPodUID],
			LabelContainerName: name,
		},
		Linux: &runtimeapi.LinuxContainerConfig{Resources: res},
	}
}

// mustRun runs a sandbox and fails the test on error.
func mustRun(t *testing.T, rt Runtime, cfg *runtimeapi.PodSandboxConfig) string {
	t.Helper()
	id, err := rt.RunPodSandbox(context.Background(), cfg, "")
	if err != nil {
		t.Fatalf("RunPodSandbox(%s): %v", cfg.Metadata.Name, err)
	}
	return id
}

// mustCreate creates a container and fails the test on error.
func mustCreate(t *testing.T, rt Runtime, sbID string, sb *runtimeapi.PodSandboxConfig, cfg *runtimeapi.ContainerConfig) string {
	t.Helper()
	id, err := rt.CreateContainer(context.Background(), sbID, cfg, sb)
	if err != nil {
		t.Fatalf("CreateContainer(%s): %v", cfg.Metadata.Name, err)
	}
	return id
}

// mustStart creates and starts a container and fails the test on error.
func mustStart(t *testing.T, rt Runtime, sbID string, sb *runtimeapi.PodSandboxConfig, cfg *runtimeapi.ContainerConfig) string {
	t.Helper()
	id := mustCreate(t, rt, sbID, sb, cfg)
	if err := rt.StartContainer(context.Background(), id); err != nil {
		t.Fatalf("StartContainer(%s): %v", id, err)
	}
	return id
}

// status returns the container's status and fails the test on error.
func status(t *testing.T, rt Runtime, id string) *runtimeapi.ContainerStatus {
	t.Helper()
	resp, err := rt.ContainerStatus(context.Background(), id, false)
	if err != nil {
		t.Fatalf("ContainerStatus(%s): %v", id, err)
	}
	return resp.Status
}

// linuxFields is the comparable part of LinuxContainerResources (the
// message itself holds protobuf internals that must not be compared).
type linuxFields struct {
	CpuPeriod, CpuQuota, CpuShares, MemoryLimitInBytes, OomScoreAdj, MemorySwapLimitInBytes int64
	CpusetCpus, CpusetMems                                                                  string
	Hugepages                                                                               []string
	Unified                                                                                 map[string]string
}

func fieldsOf(r *runtimeapi.LinuxContainerResources) linuxFields {
	f := linuxFields{
		CpuPeriod: r.GetCpuPeriod(), CpuQuota: r.GetCpuQuota(), CpuShares: r.GetCpuShares(),
		MemoryLimitInBytes: r.GetMemoryLimitInBytes(), OomScoreAdj: r.GetOomScoreAdj(),
		MemorySwapLimitInBytes: r.GetMemorySwapLimitInBytes(),
		CpusetCpus:             r.GetCpusetCpus(), CpusetMems: r.GetCpusetMems(),
		Unified: r.GetUnified(),
	}
	for _, h := range r.GetHugepageLimits() {
		f.Hugepages = append(f.Hugepages, h.PageSize+"="+strconv.FormatUint(h.Limit, 10))
	}
	return f
}

package cri

import (
	"context"
	"strconv"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri/internal/critest"
)

const (
	mi        = critest.MiB
	podParent = critest.PodParent
)

// newSimContainerd returns a simulated runtime over a fresh simulated
// cgroup hierarchy of the version.
func newSimContainerd(t *testing.T, version cgroup.Version, opts ...SimContainerdOption) (*SimContainerd, *cgroup.SimKernel) {
	t.Helper()
	cg := cgroup.NewSimKernel(version)
	return NewSimContainerd(cg, opts...), cg
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

package cri_test

import (
	"context"
	"fmt"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
)

// SimContainerd answers the CRI as containerd's CRI plugin does: an
// update of a container's resources is written to its cgroup (through
// runc's formulas: cpu.weight from cpu shares by the quadratic formula of
// runc 1.3.2 and later, by default) and reported back by ContainerStatus.
func ExampleSimContainerd() {
	ctx := context.Background()
	cg := cgroup.NewSimKernel(cgroup.V2)
	rt := cri.NewSimContainerd(cg)
	sandboxConfig := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "demo", Namespace: "default", Uid: "uid-demo"},
		Linux:    &runtimeapi.LinuxPodSandboxConfig{CgroupParent: "kubepods/pod-uid-demo"},
	}
	if err := cg.Create("kubepods/pod-uid-demo"); err != nil {
		panic(err)
	}
	sandbox, err := rt.RunPodSandbox(ctx, sandboxConfig, "")
	if err != nil {
		panic(err)
	}
	id, err := rt.CreateContainer(ctx, sandbox, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "app"},
		Image:    &runtimeapi.ImageSpec{Image: "registry.k8s.io/pause:3.10"},
		Linux:    &runtimeapi.LinuxContainerConfig{Resources: &runtimeapi.LinuxContainerResources{CpuPeriod: 100000, CpuQuota: 50000, CpuShares: 512}},
	}, sandboxConfig)
	if err != nil {
		panic(err)
	}
	if err := rt.StartContainer(ctx, id); err != nil {
		panic(err)
	}
	if err := rt.UpdateContainerResources(ctx, id, &runtimeapi.ContainerResources{
		Linux: &runtimeapi.LinuxContainerResources{CpuPeriod: 100000, CpuQuota: 100000, CpuShares: 1024},
	}); err != nil {
		panic(err)
	}
	st, err := rt.ContainerStatus(ctx, id, false)
	if err != nil {
		panic(err)
	}
	r := st.GetStatus().GetResources().GetLinux()
	fmt.Println("status quota:", r.GetCpuQuota(), "shares:", r.GetCpuShares())
	for _, path := range cg.Paths() {
		if f := cg.Files(path); strings.HasPrefix(path, "kubepods/pod-uid-demo/") {
			fmt.Println(path, "cpu.max:", f["cpu.max"], "cpu.weight:", f["cpu.weight"])
		}
	}
	// Output:
	// status quota: 100000 shares: 1024
	// kubepods/pod-uid-demo/ctr-1 cpu.max: 100000 100000 cpu.weight: 100
}

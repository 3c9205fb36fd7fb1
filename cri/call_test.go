package cri

import (
	"errors"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestCallString(t *testing.T) {
	for _, tc := range []struct {
		call Call
		want string
	}{
		{Call{Method: "RunPodSandbox", Pod: "default/web", ID: "sb-1"}, "RunPodSandbox default/web (sb-1) -> ok"},
		{Call{Method: "UpdateContainerResources", Pod: "default/web", Container: "app", ID: "ctr-1",
			Linux: &runtimeapi.LinuxContainerResources{CpuPeriod: 100000, CpuQuota: 50000, CpuShares: 512, MemoryLimitInBytes: 1 << 28,
				Unified: map[string]string{"memory.oom.group": "1", "cpu.idle": "0"}}},
			"UpdateContainerResources default/web app (ctr-1) {cpu_period=100000 cpu_quota=50000 cpu_shares=512 memory_limit_in_bytes=268435456 unified[cpu.idle]=0 unified[memory.oom.group]=1} -> ok"},
		{Call{Method: "UpdatePodSandboxResources", Pod: "default/web", ID: "sb-1",
			Sandbox: &runtimeapi.UpdatePodSandboxResourcesRequest{Resources: &runtimeapi.LinuxContainerResources{CpuQuota: 100000}}},
			"UpdatePodSandboxResources default/web (sb-1) resources={cpu_quota=100000} -> ok"},
		{Call{Method: "CreateContainer", Pod: "default/web", Container: "app", Linux: &runtimeapi.LinuxContainerResources{}, Err: errors.New("no image")},
			"CreateContainer default/web app {} -> error: no image"},
	} {
		if got := tc.call.String(); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}

package cri

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// String is the call as a resize transcript shows it: the method, the pod
// and container with the ID, the resource fields sent, and the result,
// as in
//
//	UpdateContainerResources default/web app (ctr-1) {cpu_period=100000 cpu_quota=50000} -> ok
func (c Call) String() string {
	var b strings.Builder
	b.WriteString(c.Method)
	b.WriteByte(' ')
	b.WriteString(c.Pod)
	if c.Container != "" {
		b.WriteByte(' ')
		b.WriteString(c.Container)
	}
	if c.ID != "" {
		b.WriteString(" (" + c.ID + ")")
	}
	switch {
	case c.Linux != nil:
		b.WriteString(" " + LinuxFields(c.Linux))
	case c.Sandbox != nil:
		b.WriteString(" " + SandboxFields(c.Sandbox))
	}
	if c.Err != nil {
		b.WriteString(" -> error: " + c.Err.Error())
	} else {
		b.WriteString(" -> ok")
	}
	return b.String()
}

// LinuxFields lists the resource fields of a CRI message that are set, in
// the order of the message's definition, as {name=value ...}; "{}" when
// none is.
func LinuxFields(r *runtimeapi.LinuxContainerResources) string {
	if r == nil {
		return ""
	}
	var parts []string
	num := func(name string, v int64) {
		if v != 0 {
			parts = append(parts, name+"="+strconv.FormatInt(v, 10))
		}
	}
	num("cpu_period", r.CpuPeriod)
	num("cpu_quota", r.CpuQuota)
	num("cpu_shares", r.CpuShares)
	num("memory_limit_in_bytes", r.MemoryLimitInBytes)
	num("oom_score_adj", r.OomScoreAdj)
	if r.CpusetCpus != "" {
		parts = append(parts, "cpuset_cpus="+r.CpusetCpus)
	}
	if r.CpusetMems != "" {
		parts = append(parts, "cpuset_mems="+r.CpusetMems)
	}
	keys := make([]string, 0, len(r.Unified))
	for k := range r.Unified {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("unified[%s]=%s", k, r.Unified[k]))
	}
	num("memory_swap_limit_in_bytes", r.MemorySwapLimitInBytes)
	if len(parts) == 0 {
		return "{}"
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// SandboxFields is LinuxFields for an UpdatePodSandboxResources request:
// overhead={...} resources={...}, each when present.
func SandboxFields(r *runtimeapi.UpdatePodSandboxResourcesRequest) string {
	if r == nil {
		return ""
	}
	var parts []string
	if r.Overhead != nil {
		parts = append(parts, "overhead="+LinuxFields(r.Overhead))
	}
	if r.Resources != nil {
		parts = append(parts, "resources="+LinuxFields(r.Resources))
	}
	return strings.Join(parts, " ")
}

package cgroup

import (
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// TestDoPodResizeActionPodWrites pins the pod-cgroup side of the
// TestDoPodResizeAction rows D1-D7 of resize/kubelet-resize.md §4.3: the pod
// cgroup is created with the current pod's config, then given the desired
// pod's config; which kinds of write that makes (cpu req, cpu lim, mem lim)
// is the table's "pod cgroup writes" column, on both cgroup versions.
func TestDoPodResizeActionPodWrites(t *testing.T) {
	withLimits := pcContainer("other", "100m", "200m", "100Mi", "200Mi")
	noLimits := pcContainer("other", "100m", "", "100Mi", "")
	tests := []struct {
		name             string
		current, desired v1.Container
		other            v1.Container
		want             []string
	}{
		{"D1 increase cpu+mem req & lim, computed pod limits",
			pcContainer("c", "100m", "100m", "100Mi", "100Mi"), pcContainer("c", "200m", "200m", "200Mi", "200Mi"),
			withLimits, []string{"cpu lim", "cpu req", "mem lim"}},
		{"D2 same, pod has no limits",
			pcContainer("c", "100m", "100m", "100Mi", "100Mi"), pcContainer("c", "200m", "200m", "200Mi", "200Mi"),
			noLimits, []string{"cpu req"}},
		{"D3 increase requests only",
			pcContainer("c", "100m", "200m", "100Mi", "200Mi"), pcContainer("c", "150m", "200m", "150Mi", "200Mi"),
			noLimits, []string{"cpu req"}},
		{"D4 memory request, no limits",
			pcContainer("c", "100m", "", "100Mi", ""), pcContainer("c", "100m", "", "200Mi", ""),
			noLimits, nil},
		{"D5 cpu request, no limits",
			pcContainer("c", "100m", "", "100Mi", ""), pcContainer("c", "200m", "", "100Mi", ""),
			noLimits, []string{"cpu req"}},
		{"D6 add limits",
			pcContainer("c", "100m", "", "100Mi", ""), pcContainer("c", "100m", "100m", "100Mi", "100Mi"),
			noLimits, nil},
		{"D7 add limits and pod limits",
			pcContainer("c", "100m", "", "100Mi", ""), pcContainer("c", "100m", "100m", "100Mi", "100Mi"),
			withLimits, []string{"cpu lim", "mem lim"}},
	}
	kind := map[string]string{
		"cpu.weight": "cpu req", "cpu.shares": "cpu req",
		"cpu.max": "cpu lim", "cpu.cfs_quota_us": "cpu lim", "cpu.cfs_period_us": "cpu lim",
		"memory.max": "mem lim", "memory.limit_in_bytes": "mem lim",
	}
	opts := cgconfig.PodConfigOptions{EnforceCPULimits: true}
	for _, tt := range tests {
		for _, version := range []Version{V1, V2} {
			t.Run(tt.name+" "+version.String(), func(t *testing.T) {
				m := NewSimKernel(version)
				path := "kubepods/burstable/pod1"
				mtCreate(t, m, path)
				cur := cgconfig.PodConfig(pcPod([]v1.Container{tt.current, tt.other}), opts)
				mtSet(t, m, path, cur.Values(version, cgconfig.LinearWeight))
				des := cgconfig.PodConfig(pcPod([]v1.Container{tt.desired, tt.other}), opts)
				ws := mtSet(t, m, path, des.Values(version, cgconfig.LinearWeight))
				var got []string
				for _, w := range ws {
					got = append(got, kind[w.File])
				}
				sort.Strings(got)
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("pod cgroup writes (-want +got):\n%s\nwrites: %v", diff, mtFiles(ws))
				}
			})
		}
	}
}

// pcContainer builds a container; an empty quantity is not set.
func pcContainer(name, cpuReq, cpuLim, memReq, memLim string) v1.Container {
	c := v1.Container{Name: name}
	set := func(list *v1.ResourceList, r v1.ResourceName, q string) {
		if q == "" {
			return
		}
		if *list == nil {
			*list = v1.ResourceList{}
		}
		(*list)[r] = resource.MustParse(q)
	}
	set(&c.Resources.Requests, v1.ResourceCPU, cpuReq)
	set(&c.Resources.Limits, v1.ResourceCPU, cpuLim)
	set(&c.Resources.Requests, v1.ResourceMemory, memReq)
	set(&c.Resources.Limits, v1.ResourceMemory, memLim)
	return c
}

func pcPod(containers []v1.Container) *v1.Pod {
	return &v1.Pod{Spec: v1.PodSpec{Containers: containers}}
}

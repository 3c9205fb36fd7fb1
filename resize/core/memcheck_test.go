package core

import (
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/resize/profile"
)

// TestMemoryCheck pins validateMemoryResizeAction (kuberuntime_manager.go):
// when the usage check runs, what it reads, and its messages, including
// the pod's usage printed in a container's message and the 1.33 pod-only
// form.
func TestMemoryCheck(t *testing.T) {
	const mi = 1 << 20
	stats := func(bytes uint64) *runtimeapi.ContainerStats {
		return &runtimeapi.ContainerStats{Memory: &runtimeapi.MemoryUsage{UsageBytes: &runtimeapi.UInt64Value{Value: bytes}}}
	}
	pod := func(limits ...string) *v1.Pod {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "default", UID: "u"}}
		for i, l := range limits {
			p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: string(rune('a' + i)), Resources: resources("100m", l, "100m", l)})
		}
		p.Status.QOSClass = v1.PodQOSGuaranteed
		return p
	}
	update := func(name string, from, to int64) ContainerUpdate {
		return ContainerUpdate{Name: name, ID: "id-" + name,
			Desired: ContainerValues{MemoryLimit: to, MemoryRequest: to}, Current: ContainerValues{MemoryLimit: from, MemoryRequest: from}}
	}
	ids := containerRecords{{"a", containerRecord{id: "id-a"}}, {"b", containerRecord{id: "id-b"}}}
	for _, tc := range []struct {
		name      string
		version   profile.Version
		pod       *v1.Pod
		current   int64 // the pod cgroup's memory limit
		updates   []ContainerUpdate
		podUsage  int64
		podErr    error
		stats     map[string]*runtimeapi.ContainerStats
		wantReads int    // actions read; 0 means no check
		want      string // "" means it passes
	}{
		{name: "increase: no check", pod: pod("200Mi"), current: 100 * mi, updates: []ContainerUpdate{update("a", 100*mi, 200*mi)}},
		{name: "decrease above usage", pod: pod("100Mi"), current: 200 * mi, updates: []ContainerUpdate{update("a", 200*mi, 100*mi)},
			podUsage: 50 * mi, stats: map[string]*runtimeapi.ContainerStats{"a": stats(40 * mi)}, wantReads: 2},
		{name: "pod and container below usage", pod: pod("100Mi"), current: 200 * mi, updates: []ContainerUpdate{update("a", 200*mi, 100*mi)},
			podUsage: 150 * mi, stats: map[string]*runtimeapi.ContainerStats{"a": stats(120 * mi)}, wantReads: 2,
			want: `cannot decrease memory limits: [attempting to set pod memory limit (104857600) below current usage (157286400), attempting to set container "a" memory limit (104857600) below current usage (157286400)]`},
		{name: "missing container usage", pod: pod("100Mi"), current: 200 * mi, updates: []ContainerUpdate{update("a", 200*mi, 100*mi)},
			podUsage: 50 * mi, stats: map[string]*runtimeapi.ContainerStats{}, wantReads: 2,
			want: `cannot decrease memory limits: missing container "a" memory usage`},
		{name: "pod usage unreadable", pod: pod("100Mi"), current: 200 * mi, updates: []ContainerUpdate{update("a", 200*mi, 100*mi)},
			podErr: errors.New("gone"), wantReads: 2, want: `unable to read memory usage for pod "m_default(u)"`},
		{name: "adding a container limit counts as a decrease", pod: pod("100Mi"), current: 100 * mi, updates: []ContainerUpdate{update("a", 0, 100*mi)},
			podUsage: 10 * mi, stats: map[string]*runtimeapi.ContainerStats{"a": stats(10 * mi)}, wantReads: 2},
		{name: "1.33 checks the pod whenever it has a limit", version: profile.V133, pod: pod("200Mi"), current: 100 * mi,
			updates: []ContainerUpdate{update("a", 100*mi, 200*mi)}, podUsage: 250 * mi, wantReads: 1,
			want: "aborting attempt to set pod memory limit less than current memory usage for pod m"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSettings(NodeConfig{Profile: tc.version}.WithDefaults())
			cur := PodCgroupReading{Memory: tc.current, Quota: -1, Period: 100000}
			mc, ok := s.planMemoryCheck(tc.pod, cgconfig.PodConfig(tc.pod, s.cri.PodConfigOptions()), cur, PodActions{UpdateMemory: tc.updates}, ids)
			if !ok {
				if tc.wantReads != 0 {
					t.Fatalf("no check planned, want %d reads", tc.wantReads)
				}
				return
			}
			reads := mc.appendReads(nil, "pod")
			if len(reads) != tc.wantReads {
				t.Fatalf("reads = %v, want %d", reads, tc.wantReads)
			}
			var done []Action
			var res []Result
			for _, a := range reads {
				done = append(done, a)
				switch a := a.(type) {
				case ReadMemoryUsage:
					res = append(res, Result{Usage: tc.podUsage, Err: tc.podErr})
				case ReadContainerStats:
					if st, ok := tc.stats[a.Name]; ok {
						res = append(res, Result{Stats: st})
					} else {
						res = append(res, Result{Err: errors.New("no stats")})
					}
				}
				if tc.podErr != nil {
					break // the driver stops at the failed usage read
				}
			}
			err := mc.verdict(tc.pod, done, res)
			if got := errString(err); got != tc.want {
				t.Errorf("verdict = %q, want %q", got, tc.want)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

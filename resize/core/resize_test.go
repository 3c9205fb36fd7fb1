package core

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resizelet/resizelet/allocation"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// writeOrderCase is one resize of running containers: the pod as it was
// actuated (its cgroup holds that pod's configuration) and as it is now
// allocated.
type writeOrderCase struct {
	name     string
	version  cgconfig.Version
	qos      v1.PodQOSClass
	old, new []v1.Container
	want     []string
}

// plannedWrites plans the resize of tc on a settled pod (actuated = old,
// pod cgroup = old's configuration) and returns its write order.
func plannedWrites(t *testing.T, tc writeOrderCase) []string {
	t.Helper()
	cfg := NodeConfig{CgroupVersion: tc.version}.WithDefaults()
	s := newSettings(cfg)
	pod := func(cs []v1.Container) *v1.Pod {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "u1"}, Spec: v1.PodSpec{Containers: cs}}
		p.Status.QOSClass = tc.qos
		return p
	}
	old, alloc := pod(tc.old), pod(tc.new)
	actuated := allocationFromPod(allocation.As(old), false, nil)
	states := map[string]ContainerState{}
	for _, c := range tc.old {
		states[c.Name] = ContainerState{Name: c.Name, ID: "id-" + c.Name, Running: true}
	}
	current := readingOf(cgconfig.PodConfig(old, s.podConfigOptions()).Values(tc.version, cgconfig.LinearWeight), tc.version)
	actions := planPod(alloc, states, actuated, true, false)
	var got []string
	for _, a := range s.resizeWrites(ResizeTarget{UID: "u1", Pod: alloc, PodCgroup: "kubepods/podu1", SandboxID: "sb",
		Actions: actions, Current: current, Actuated: actuated}) {
		got = append(got, a.String())
	}
	return got
}

// TestResizeWriteOrder pins doPodResizeAction's order (kuberuntime_manager.go
// resizeContainers) as data: per resource, memory then cpu; the pod cgroup
// grows before the containers and shrinks after them; limits go up before
// requests and come down after them; a container update sends the resource
// being changed at its new value and the other at its current one; each
// pod cgroup write is followed by UpdatePodSandboxResources with the pod's
// totals as the cgroup now holds them (on v2 the shares read back from
// cpu.weight, lossily), and each container update by its actuated record.
func TestResizeWriteOrder(t *testing.T) {
	const overhead = " overhead {shares=0 quota=0 period=0 memory=0}"
	for _, tc := range []writeOrderCase{
		{
			name: "increase", version: cgconfig.V2, qos: v1.PodQOSGuaranteed,
			old: []v1.Container{{Name: "c1", Resources: resources("100m", "100Mi", "100m", "100Mi")}},
			new: []v1.Container{{Name: "c1", Resources: resources("200m", "200Mi", "200m", "200Mi")}},
			want: []string{
				"cgroup set kubepods/podu1 memory=209715200",
				"UpdatePodSandboxResources {shares=80 quota=10000 period=100000 memory=209715200}" + overhead,
				"UpdateContainerResources c1 {shares=102 quota=10000 period=100000 memory=209715200}",
				"checkpoint actuated u1 c1 requests{cpu=100m,memory=200Mi} limits{cpu=100m,memory=200Mi}",
				"cgroup set kubepods/podu1 period=100000 quota=20000",
				"UpdatePodSandboxResources {shares=80 quota=20000 period=100000 memory=209715200}" + overhead,
				"cgroup set kubepods/podu1 weight=8",
				"UpdatePodSandboxResources {shares=204 quota=20000 period=100000 memory=209715200}" + overhead,
				"UpdateContainerResources c1 {shares=204 quota=20000 period=100000 memory=209715200}",
				"checkpoint actuated u1 c1 requests{cpu=200m,memory=200Mi} limits{cpu=200m,memory=200Mi}",
			},
		},
		{
			name: "decrease", version: cgconfig.V2, qos: v1.PodQOSGuaranteed,
			old: []v1.Container{{Name: "c1", Resources: resources("200m", "200Mi", "200m", "200Mi")}},
			new: []v1.Container{{Name: "c1", Resources: resources("100m", "100Mi", "100m", "100Mi")}},
			want: []string{
				"UpdateContainerResources c1 {shares=204 quota=20000 period=100000 memory=104857600}",
				"checkpoint actuated u1 c1 requests{cpu=200m,memory=100Mi} limits{cpu=200m,memory=100Mi}",
				"cgroup set kubepods/podu1 memory=104857600",
				"UpdatePodSandboxResources {shares=185 quota=20000 period=100000 memory=104857600}" + overhead,
				"UpdateContainerResources c1 {shares=102 quota=10000 period=100000 memory=104857600}",
				"checkpoint actuated u1 c1 requests{cpu=100m,memory=100Mi} limits{cpu=100m,memory=100Mi}",
				"cgroup set kubepods/podu1 weight=4",
				"UpdatePodSandboxResources {shares=102 quota=20000 period=100000 memory=104857600}" + overhead,
				"cgroup set kubepods/podu1 period=100000 quota=10000",
				"UpdatePodSandboxResources {shares=102 quota=10000 period=100000 memory=104857600}" + overhead,
			},
		},
		{
			// Pod memory goes up (800Mi to 900Mi) and pod cpu down (800m to
			// 700m): a's memory goes down and b's up, so a is updated first
			// in the memory pass; a's cpu goes up and b's down, so b is
			// first in the cpu pass, already carrying its new memory.
			name: "mixed, two containers, cgroup v1", version: cgconfig.V1, qos: v1.PodQOSGuaranteed,
			old: []v1.Container{
				{Name: "a", Resources: resources("300m", "300Mi", "300m", "300Mi")},
				{Name: "b", Resources: resources("500m", "500Mi", "500m", "500Mi")},
			},
			new: []v1.Container{
				{Name: "a", Resources: resources("600m", "200Mi", "600m", "200Mi")},
				{Name: "b", Resources: resources("100m", "700Mi", "100m", "700Mi")},
			},
			want: []string{
				"cgroup set kubepods/podu1 memory=943718400",
				"UpdatePodSandboxResources {shares=819 quota=80000 period=100000 memory=943718400}" + overhead,
				"UpdateContainerResources a {shares=307 quota=30000 period=100000 memory=209715200}",
				"checkpoint actuated u1 a requests{cpu=300m,memory=200Mi} limits{cpu=300m,memory=200Mi}",
				"UpdateContainerResources b {shares=512 quota=50000 period=100000 memory=734003200}",
				"checkpoint actuated u1 b requests{cpu=500m,memory=700Mi} limits{cpu=500m,memory=700Mi}",
				"UpdateContainerResources b {shares=102 quota=10000 period=100000 memory=734003200}",
				"checkpoint actuated u1 b requests{cpu=100m,memory=700Mi} limits{cpu=100m,memory=700Mi}",
				"UpdateContainerResources a {shares=614 quota=60000 period=100000 memory=209715200}",
				"checkpoint actuated u1 a requests{cpu=600m,memory=200Mi} limits{cpu=600m,memory=200Mi}",
				"cgroup set kubepods/podu1 shares=716",
				"UpdatePodSandboxResources {shares=716 quota=80000 period=100000 memory=943718400}" + overhead,
				"cgroup set kubepods/podu1 period=100000 quota=70000",
				"UpdatePodSandboxResources {shares=716 quota=70000 period=100000 memory=943718400}" + overhead,
			},
		},
		{
			// TestDoPodResizeAction D5: a cpu request change of a pod
			// without limits writes the pod's shares only.
			name: "D5 cpu request, no limits", version: cgconfig.V2, qos: v1.PodQOSBurstable,
			old: []v1.Container{{Name: "c1", Resources: resources("100m", "100Mi", "", "")}},
			new: []v1.Container{{Name: "c1", Resources: resources("200m", "100Mi", "", "")}},
			want: []string{
				"cgroup set kubepods/podu1 weight=8",
				"UpdatePodSandboxResources {shares=204 quota=-1 period=100000 memory=-1}" + overhead,
				"UpdateContainerResources c1 {shares=204 quota=0 period=100000 memory=0}",
				"checkpoint actuated u1 c1 requests{cpu=200m,memory=100Mi} limits{cpu=0,memory=0}",
			},
		},
		{
			// D4: a memory request change reaches the runtime and writes
			// no cgroup: memory requests are not written to cgroups.
			name: "D4 memory request, no limits", version: cgconfig.V2, qos: v1.PodQOSBurstable,
			old: []v1.Container{{Name: "c1", Resources: resources("100m", "100Mi", "", "")}},
			new: []v1.Container{{Name: "c1", Resources: resources("100m", "200Mi", "", "")}},
			want: []string{
				"UpdateContainerResources c1 {shares=102 quota=0 period=100000 memory=0}",
				"checkpoint actuated u1 c1 requests{cpu=100m,memory=200Mi} limits{cpu=0,memory=0}",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, plannedWrites(t, tc)); diff != "" {
				t.Errorf("write order (-want +got):\n%s", diff)
			}
		})
	}
}

// TestResizeWritesRestart: a container restarted for its resize updates no
// container in place, but the pod cgroup is brought to the allocation
// (UpdatePodResources), memory before cpu.
func TestResizeWritesRestart(t *testing.T) {
	s := newSettings(NodeConfig{}.WithDefaults())
	c := v1.Container{Name: "c1", Resources: resources("200m", "300Mi", "200m", "300Mi"),
		ResizePolicy: []v1.ContainerResizePolicy{{ResourceName: v1.ResourceMemory, RestartPolicy: v1.RestartContainer}}}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "u1"}, Spec: v1.PodSpec{Containers: []v1.Container{c}}}
	pod.Status.QOSClass = v1.PodQOSGuaranteed
	actuated := allocation.PodResources{ContainerResources: map[string]v1.ResourceRequirements{"c1": resources("200m", "200Mi", "200m", "200Mi")}}
	actions := planPod(pod, map[string]ContainerState{"c1": {Name: "c1", ID: "id1", Running: true}}, actuated, true, false)
	if len(actions.Kill) != 1 || !actions.UpdatePodResources || len(actions.UpdateMemory)+len(actions.UpdateCPU) != 0 {
		t.Fatalf("plan = %+v, want one kill, UpdatePodResources and no in-place update", actions)
	}
	cur := PodCgroupReading{Memory: 200 << 20, Quota: 20000, Period: 100000, Shares: cgconfig.WeightToShares(cgconfig.LinearWeight(204))}
	var got []string
	for _, a := range s.resizeWrites(ResizeTarget{UID: "u1", Pod: pod, PodCgroup: "pod", Actions: actions, Current: cur, Actuated: actuated}) {
		got = append(got, strings.SplitN(a.String(), " {", 2)[0])
	}
	want := []string{"cgroup set pod memory=314572800", "UpdatePodSandboxResources", "cgroup set pod weight=8", "UpdatePodSandboxResources"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
}

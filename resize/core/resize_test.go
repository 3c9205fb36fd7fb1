package core

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resizelet/resizelet/allocation"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/resize/profile"
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
	current := readingOf(cgconfig.PodConfig(old, s.cri.PodConfigOptions()).Values(tc.version, cgconfig.LinearWeight), tc.version)
	actions := planPod(PodActions{}, alloc, states, actuated, true, false)
	var got []string
	for _, a := range s.appendResizeWrites(nil, ResizeTarget{UID: "u1", Pod: alloc, PodCgroup: "kubepods/podu1", SandboxID: "sb",
		Actions: actions, Current: current, Actuated: actuated}, cgconfig.PodConfig(alloc, s.cri.PodConfigOptions()), nil) {
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
	actions := planPod(PodActions{}, pod, map[string]ContainerState{"c1": {Name: "c1", ID: "id1", Running: true}}, actuated, true, false)
	if len(actions.Kill) != 1 || !actions.UpdatePodResources || len(actions.UpdateMemory)+len(actions.UpdateCPU) != 0 {
		t.Fatalf("plan = %+v, want one kill, UpdatePodResources and no in-place update", actions)
	}
	cur := PodCgroupReading{Memory: 200 << 20, Quota: 20000, Period: 100000, Shares: cgconfig.WeightToShares(cgconfig.LinearWeight(204))}
	var got []string
	for _, a := range s.appendResizeWrites(nil, ResizeTarget{UID: "u1", Pod: pod, PodCgroup: "pod", Actions: actions, Current: cur, Actuated: actuated},
		cgconfig.PodConfig(pod, s.cri.PodConfigOptions()), nil) {
		got = append(got, strings.SplitN(a.String(), " {", 2)[0])
	}
	want := []string{"cgroup set pod memory=314572800", "UpdatePodSandboxResources", "cgroup set pod weight=8", "UpdatePodSandboxResources"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
}

// TestResizeWriteOrderSandboxFirst pins the 1.36 setPodCgroupConfig
// (pkg/kubelet/kuberuntime/kuberuntime_manager.go, doPodResizeAction): the
// runtime is told the pod's new totals before each pod cgroup write, a
// refusal rejecting the resize, and each write carries a rollback that
// tells the runtime the totals before it, sent only if the write fails. The
// containers' updates and their order are 1.35's.
func TestResizeWriteOrderSandboxFirst(t *testing.T) {
	const overhead = " overhead {shares=0 quota=0 period=0 memory=0}"
	for _, v := range []profile.Version{profile.V136, profile.V137} {
		cfg := NodeConfig{Profile: v}.WithDefaults()
		s := newSettings(cfg)
		pod := func(r v1.ResourceRequirements) *v1.Pod {
			p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "u1"},
				Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c1", Resources: r}}}}
			p.Status.QOSClass = v1.PodQOSGuaranteed
			return p
		}
		old, alloc := pod(resources("100m", "100Mi", "100m", "100Mi")), pod(resources("200m", "200Mi", "200m", "200Mi"))
		actuated := allocationFromPod(allocation.As(old), false, nil)
		states := map[string]ContainerState{"c1": {Name: "c1", ID: "id-c1", Running: true}}
		current := readingOf(cgconfig.PodConfig(old, s.cri.PodConfigOptions()).Values(cgconfig.V2, cgconfig.LinearWeight), cgconfig.V2)
		var rollbacks []sandboxRollback
		writes := s.appendResizeWrites(nil, ResizeTarget{UID: "u1", Pod: alloc, PodCgroup: "kubepods/podu1", SandboxID: "sb",
			Actions: planPod(PodActions{}, alloc, states, actuated, true, false), Current: current, Actuated: actuated},
			cgconfig.PodConfig(alloc, s.cri.PodConfigOptions()), &rollbacks)
		var got []string
		for _, a := range writes {
			got = append(got, a.String())
		}
		want := []string{
			"UpdatePodSandboxResources {shares=80 quota=10000 period=100000 memory=209715200}" + overhead,
			"cgroup set kubepods/podu1 memory=209715200",
			"UpdateContainerResources c1 {shares=102 quota=10000 period=100000 memory=209715200}",
			"checkpoint actuated u1 c1 requests{cpu=100m,memory=200Mi} limits{cpu=100m,memory=200Mi}",
			"UpdatePodSandboxResources {shares=80 quota=20000 period=100000 memory=209715200}" + overhead,
			"cgroup set kubepods/podu1 period=100000 quota=20000",
			"UpdatePodSandboxResources {shares=204 quota=20000 period=100000 memory=209715200}" + overhead,
			"cgroup set kubepods/podu1 weight=8",
			"UpdateContainerResources c1 {shares=204 quota=20000 period=100000 memory=209715200}",
			"checkpoint actuated u1 c1 requests{cpu=200m,memory=200Mi} limits{cpu=200m,memory=200Mi}",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s writes (-want +got):\n%s", v, diff)
		}
		for i, a := range writes {
			if u, ok := a.(UpdatePodSandboxResources); ok && (!u.RejectsResize || !StopsOnFailure(u)) {
				t.Errorf("%s: writes[%d] %s does not reject the resize on failure", v, i, a)
			}
		}
		// Each pod cgroup write has a rollback to the totals before it.
		wantRollbacks := map[int]string{
			1: "UpdatePodSandboxResources {shares=80 quota=10000 period=100000 memory=104857600}" + overhead,
			5: "UpdatePodSandboxResources {shares=80 quota=10000 period=100000 memory=209715200}" + overhead,
			7: "UpdatePodSandboxResources {shares=80 quota=20000 period=100000 memory=209715200}" + overhead,
		}
		if len(rollbacks) != len(wantRollbacks) {
			t.Fatalf("%s: %d rollbacks, want %d", v, len(rollbacks), len(wantRollbacks))
		}
		for _, rb := range rollbacks {
			if got, want := rb.action.String(), wantRollbacks[rb.index]; got != want {
				t.Errorf("%s: rollback of writes[%d] = %s, want %s", v, rb.index, got, want)
			}
			if StopsOnFailure(rb.action) {
				t.Errorf("%s: the rollback of writes[%d] stops on failure; the kubelet only logs it", v, rb.index)
			}
		}
	}
}

// TestActuatedPodLevelPerResource: from 1.36 the actuated pod-level record
// takes one resource at a time from the allocation, for each list the
// allocation has (updateActuatedPodLevelResources in doPodResizeAction).
func TestActuatedPodLevelPerResource(t *testing.T) {
	actuated := &v1.ResourceRequirements{Requests: v1.ResourceList{
		v1.ResourceCPU: resource.MustParse("500m"), v1.ResourceMemory: resource.MustParse("128Mi"),
	}}
	allocated := &v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("256Mi")},
		Limits:   v1.ResourceList{v1.ResourceMemory: resource.MustParse("256Mi")},
	}
	mem := actuatedPodLevel(actuated, allocated, v1.ResourceMemory)
	if q := mem.Requests[v1.ResourceCPU]; q.String() != "500m" {
		t.Errorf("memory step changed the cpu request to %s", q.String())
	}
	if q := mem.Requests[v1.ResourceMemory]; q.String() != "256Mi" {
		t.Errorf("memory request = %s, want 256Mi", q.String())
	}
	if q := mem.Limits[v1.ResourceMemory]; q.String() != "256Mi" {
		t.Errorf("memory limit = %s, want 256Mi", q.String())
	}
	cpu := actuatedPodLevel(mem, allocated, v1.ResourceCPU)
	if q := cpu.Requests[v1.ResourceCPU]; q.String() != "1" {
		t.Errorf("cpu request = %s, want 1", q.String())
	}
	// The allocation has limits without cpu: the kubelet's lookup writes a
	// zero cpu limit.
	if q, ok := cpu.Limits[v1.ResourceCPU]; !ok || !q.IsZero() {
		t.Errorf("cpu limit = %v (present %v), want a zero amount", q, ok)
	}
	if q := actuated.Requests[v1.ResourceMemory]; q.String() != "128Mi" {
		t.Errorf("the record given was changed: memory request %s", q.String())
	}
}

// TestReadingOf pins how the pod cgroup's values read back: v2 shares come
// through the lossy inverse of the weight, v1 keeps the huge unlimited
// memory value, and missing files read as unlimited at the default period.
func TestReadingOf(t *testing.T) {
	w, quota, mem := uint64(28), int64(70000), cgconfig.Unlimited
	for _, tc := range []struct {
		name    string
		version cgconfig.Version
		values  cgconfig.Values
		want    PodCgroupReading
	}{
		{"v2", cgconfig.V2, cgconfig.Values{CPUWeight: &w, CPUQuota: &quota, MemoryLimit: &mem},
			PodCgroupReading{Memory: -1, Quota: 70000, Period: 100000, Shares: 709}}, // 27*262142/9999 + 2
		{"v1 unlimited memory", cgconfig.V1, cgconfig.Values{MemoryLimit: &mem},
			PodCgroupReading{Memory: cgconfig.V1UnlimitedMemory, Quota: -1, Period: 100000}},
		{"nothing", cgconfig.V2, cgconfig.Values{}, PodCgroupReading{Memory: -1, Quota: -1, Period: 100000}},
	} {
		if got := readingOf(tc.values, tc.version); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

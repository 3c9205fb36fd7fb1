package core

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/resizelet/resizelet/allocation"
)

func withPolicy(c v1.Container, cpu, memory v1.ResourceResizeRestartPolicy) v1.Container {
	c.ResizePolicy = []v1.ContainerResizePolicy{{ResourceName: v1.ResourceCPU, RestartPolicy: cpu}, {ResourceName: v1.ResourceMemory, RestartPolicy: memory}}
	return c
}

// TestPlanPod pins computePodActions and computePodResizeAction: which
// containers start, which restart for their resize and which are updated
// in place, in which order.
func TestPlanPod(t *testing.T) {
	always := v1.ContainerRestartPolicyAlways
	running := func(names ...string) map[string]ContainerState {
		m := map[string]ContainerState{}
		for _, n := range names {
			m[n] = ContainerState{Name: n, ID: "id-" + n, Running: true}
		}
		return m
	}
	actuatedAs := func(pairs ...any) allocation.PodResources {
		r := allocation.PodResources{ContainerResources: map[string]v1.ResourceRequirements{}}
		for i := 0; i < len(pairs); i += 2 {
			r.ContainerResources[pairs[i].(string)] = pairs[i+1].(v1.ResourceRequirements)
		}
		return r
	}
	small := resources("100m", "100Mi", "100m", "100Mi")
	big := resources("200m", "200Mi", "200m", "200Mi")
	type plan struct {
		Kill, Start, Memory, CPU []string
		PodResources             bool
	}
	summary := func(a PodActions) plan {
		var p plan
		for _, k := range a.Kill {
			p.Kill = append(p.Kill, k.Name+": "+k.Message+" ("+k.Reason+")")
		}
		p.Start = a.Start
		for _, u := range a.UpdateMemory {
			p.Memory = append(p.Memory, u.Name)
		}
		for _, u := range a.UpdateCPU {
			p.CPU = append(p.CPU, u.Name)
		}
		p.PodResources = a.UpdatePodResources
		return p
	}
	for _, tc := range []struct {
		name       string
		containers []v1.Container
		inits      []v1.Container
		states     map[string]ContainerState
		actuated   allocation.PodResources
		restart    v1.RestartPolicy
		allowed    bool
		want       plan
	}{
		{
			name:       "a new pod starts its sidecars, then its containers",
			containers: []v1.Container{{Name: "a"}, {Name: "b"}},
			inits:      []v1.Container{{Name: "init"}, {Name: "side", RestartPolicy: &always}},
			states:     map[string]ContainerState{}, allowed: true,
			want: plan{Start: []string{"side", "a", "b"}},
		},
		{
			name:       "settled: nothing to do",
			containers: []v1.Container{{Name: "a", Resources: small}},
			states:     running("a"), actuated: actuatedAs("a", small), allowed: true,
		},
		{
			name:       "cpu and memory up in place",
			containers: []v1.Container{{Name: "a", Resources: big}},
			states:     running("a"), actuated: actuatedAs("a", small), allowed: true,
			want: plan{Memory: []string{"a"}, CPU: []string{"a"}},
		},
		{
			name:       "decreases are prepended, increases appended",
			containers: []v1.Container{{Name: "a", Resources: big}, {Name: "b", Resources: small}, {Name: "c", Resources: big}},
			states:     running("a", "b", "c"), actuated: actuatedAs("a", small, "b", big, "c", small), allowed: true,
			want: plan{Memory: []string{"b", "a", "c"}, CPU: []string{"b", "a", "c"}},
		},
		{
			name:       "a memory-request-only change is still an update",
			containers: []v1.Container{{Name: "a", Resources: resources("100m", "150Mi", "100m", "200Mi")}},
			states:     running("a"), actuated: actuatedAs("a", resources("100m", "100Mi", "100m", "200Mi")), allowed: true,
			want: plan{Memory: []string{"a"}},
		},
		{
			name:       "RestartContainer on a changed resource restarts",
			containers: []v1.Container{withPolicy(v1.Container{Name: "a", Resources: resources("100m", "200Mi", "100m", "200Mi")}, v1.NotRequired, v1.RestartContainer)},
			states:     running("a"), actuated: actuatedAs("a", small), allowed: true,
			want: plan{Kill: []string{"a: Container a resize requires restart (memory limit 104857600 -> 209715200, memory resizePolicy RestartContainer)"},
				Start: []string{"a"}, PodResources: true},
		},
		{
			name:       "RestartContainer on an unchanged resource does nothing",
			containers: []v1.Container{withPolicy(v1.Container{Name: "a", Resources: resources("200m", "100Mi", "200m", "100Mi")}, v1.NotRequired, v1.RestartContainer)},
			states:     running("a"), actuated: actuatedAs("a", small), allowed: true,
			want: plan{CPU: []string{"a"}},
		},
		{
			name:       "a missing actuated record reads as zeros: one extra update",
			containers: []v1.Container{{Name: "a", Resources: small}},
			states:     running("a"), actuated: allocation.PodResources{}, allowed: true,
			want: plan{Memory: []string{"a"}, CPU: []string{"a"}},
		},
		{
			name:       "resize not allowed: no update",
			containers: []v1.Container{{Name: "a", Resources: big}},
			states:     running("a"), actuated: actuatedAs("a", small), allowed: false,
		},
		{
			name:       "an exited container stays down under Never",
			containers: []v1.Container{{Name: "a"}},
			states:     map[string]ContainerState{"a": {Name: "a", ID: "id-a", Exited: true, ExitCode: 1}},
			restart:    v1.RestartPolicyNever, allowed: true,
		},
		{
			name:       "an exited container with a failure restarts under OnFailure",
			containers: []v1.Container{{Name: "a"}},
			states:     map[string]ContainerState{"a": {Name: "a", ID: "id-a", Exited: true, ExitCode: 1}},
			restart:    v1.RestartPolicyOnFailure, allowed: true,
			want: plan{Start: []string{"a"}},
		},
		{
			name:       "a container that succeeded stays down under OnFailure",
			containers: []v1.Container{{Name: "a"}},
			states:     map[string]ContainerState{"a": {Name: "a", ID: "id-a", Exited: true}},
			restart:    v1.RestartPolicyOnFailure, allowed: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{Spec: v1.PodSpec{Containers: tc.containers, InitContainers: tc.inits, RestartPolicy: tc.restart}}
			got := summary(planPod(PodActions{}, pod, tc.states, tc.actuated, tc.allowed, false))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPlanPodLevel: with pod-level resize on, a pod-level allocation that
// differs from the actuated record updates the pod cgroup, and counts as a
// resize in progress until it is recorded.
func TestPlanPodLevel(t *testing.T) {
	podLevel := resources("1", "1Gi", "2", "2Gi")
	pod := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "a"}}, Resources: &podLevel}}
	states := map[string]ContainerState{"a": {Name: "a", ID: "id-a", Running: true}}
	stale := allocation.PodResources{ContainerResources: map[string]v1.ResourceRequirements{"a": {}}}
	fresh := stale.DeepCopy()
	fresh.PodLevelResources = podLevel.DeepCopy()
	for _, tc := range []struct {
		name     string
		actuated allocation.PodResources
		gate     bool
		want     bool
	}{
		{"not actuated, gate on", stale, true, true},
		{"actuated, gate on", fresh, true, false},
		{"not actuated, gate off", stale, false, false},
	} {
		if got := planPod(PodActions{}, pod, states, tc.actuated, true, tc.gate).UpdatePodResources; got != tc.want {
			t.Errorf("%s: UpdatePodResources = %v, want %v", tc.name, got, tc.want)
		}
		if got := resizeInProgress(pod, states, tc.actuated, tc.gate); got != tc.want {
			t.Errorf("%s: resizeInProgress = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestResizeInProgress: only running containers count, and only cpu and
// memory values compared by quantity.
func TestResizeInProgress(t *testing.T) {
	pod := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "a", Resources: resources("1000m", "1Gi", "", "")}}}}
	same := allocation.PodResources{ContainerResources: map[string]v1.ResourceRequirements{"a": resources("1", "1024Mi", "", "")}}
	other := allocation.PodResources{ContainerResources: map[string]v1.ResourceRequirements{"a": resources("2", "1Gi", "", "")}}
	run := map[string]ContainerState{"a": {Name: "a", Running: true}}
	stopped := map[string]ContainerState{"a": {Name: "a", Exited: true}}
	for _, tc := range []struct {
		name     string
		states   map[string]ContainerState
		actuated allocation.PodResources
		want     bool
	}{
		{"equal quantities", run, same, false},
		{"differing cpu", run, other, true},
		{"differing but not running", stopped, other, false},
	} {
		if got := resizeInProgress(pod, tc.states, tc.actuated, false); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestStartingResized pins the 1.37 startingResizedContainer
// (pkg/kubelet/kuberuntime/kuberuntime_manager.go): a regular container
// about to start whose allocation differs from its actuated record (none
// counts as zeros) makes the sync resize the pod cgroup; one that starts
// as it was actuated, or a container not starting, does not.
func TestStartingResized(t *testing.T) {
	alloc := testPod("p", resources("800m", "128Mi", "800m", "128Mi"), resources("100m", "64Mi", "", ""))
	actuated := allocation.PodResources{ContainerResources: map[string]v1.ResourceRequirements{
		"c1": resources("500m", "128Mi", "500m", "128Mi"),
		"c2": resources("100m", "64Mi", "", ""),
	}}
	for _, tc := range []struct {
		name  string
		start []string
		want  bool
	}{
		{"resized container starts", []string{"c1"}, true},
		{"unchanged container starts", []string{"c2"}, false},
		{"nothing starts", nil, false},
		{"no record", []string{"c2"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := actuated
			if tc.name == "no record" {
				rec = allocation.PodResources{}
			}
			if got := startingResizedContainer(alloc, tc.start, rec, false); got != tc.want {
				t.Errorf("startingResizedContainer(%v) = %v, want %v", tc.start, got, tc.want)
			}
		})
	}
}

// TestSharedRecordShortcut holds the shortcut for a record that shares the
// spec's lists to the comparison of values it skips: the plan and the
// in-progress test answer the same for the shared record and for an equal
// copy of it, with and without pod-level resources and the gate.
func TestSharedRecordShortcut(t *testing.T) {
	states := map[string]ContainerState{"a": {Name: "a", ID: "id-a", Running: true}}
	podLevel := resources("", "", "1", "1Gi")
	for _, r := range []v1.ResourceRequirements{
		resources("100m", "100Mi", "200m", "200Mi"),
		resources("100m", "100Mi", "", ""),
		resources("100m", "", "", "200Mi"),
		{},
	} {
		// The pod's pod-level resources and the record's, which may
		// differ: then the lists alone do not decide.
		for _, pl := range [][2]*v1.ResourceRequirements{{nil, nil}, {&podLevel, &podLevel}, {&podLevel, nil}, {nil, &podLevel}} {
			for _, gate := range []bool{false, true} {
				pod := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "a", Resources: r}}, Resources: pl[0]}}
				shared := allocation.PodResources{ContainerResources: map[string]v1.ResourceRequirements{"a": r}, PodLevelResources: pl[1]}
				copied := allocation.PodResources{ContainerResources: map[string]v1.ResourceRequirements{"a": *r.DeepCopy()}}
				if pl[1] != nil {
					copied.PodLevelResources = pl[1].DeepCopy()
				}
				if got, want := planPod(PodActions{}, pod, states, shared, true, gate), planPod(PodActions{}, pod, states, copied, true, gate); !cmp.Equal(got, want) {
					t.Errorf("%v pod-level %v gate %v: plan %+v with the shared record, %+v with a copy", r, pl, gate, got, want)
				}
				if got, want := resizeInProgress(pod, states, shared, gate), resizeInProgress(pod, states, copied, gate); got != want {
					t.Errorf("%v pod-level %v gate %v: in progress %v with the shared record, %v with a copy", r, pl, gate, got, want)
				}
			}
		}
	}
}

package core

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// failOn returns a fail func that fails the first n actions whose String
// starts with prefix.
func failOn(prefix string, n int, err error) func(Action) error {
	return func(a Action) error {
		if n > 0 && strings.HasPrefix(a.String(), prefix) {
			n--
			return err
		}
		return nil
	}
}

// TestSyncStopsWhereTheKubeletStops pins where SyncPod returns early and
// what it has written by then, one failure point at a time, on a new pod
// with two containers.
func TestSyncStopsWhereTheKubeletStops(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		fail string // prefix of the action that fails once
		// want are the actions performed, reads left out, by their first
		// words; the status write is the sync's last word when there is one.
		want []string
		// events are the events emitted, "Type Reason".
		events []string
	}{
		{
			name:   "pod cgroup cannot be created: Failed event, status, nothing else",
			fail:   "cgroup create",
			want:   []string{"checkpoint allocated", "cgroup create", "event Warning Failed", "status default/p"},
			events: []string{"Warning Failed"},
		},
		{
			name: "sandbox cannot be created: FailedCreatePodSandBox, status",
			fail: "RunPodSandbox",
			want: []string{"checkpoint allocated", "cgroup create", "cgroup set", "RunPodSandbox default/p",
				"event Warning FailedCreatePodSandBox", "status default/p"},
			events: []string{"Warning FailedCreatePodSandBox"},
		},
		{
			name: "a container cannot be created: Failed event, the next is still started",
			fail: "CreateContainer c1",
			want: []string{"checkpoint allocated", "cgroup create", "cgroup set", "RunPodSandbox default/p",
				"CreateContainer c1", "event Warning Failed", "CreateContainer c2", "checkpoint actuated",
				"event Normal Created", "StartContainer c2", "event Normal Started", "status default/p"},
			events: []string{"Warning Failed", "Normal Created", "Normal Started"},
		},
		{
			name: "a container cannot be started: Failed event instead of Started",
			fail: "StartContainer c1",
			want: []string{"checkpoint allocated", "cgroup create", "cgroup set", "RunPodSandbox default/p",
				"CreateContainer c1", "checkpoint actuated", "event Normal Created", "StartContainer c1",
				"event Warning Failed", "CreateContainer c2", "checkpoint actuated", "event Normal Created",
				"StartContainer c2", "event Normal Started", "status default/p"},
			events: []string{"Normal Created", "Warning Failed", "Normal Created", "Normal Started"},
		},
		{
			name: "a container's actuated record cannot be written: it is not started",
			fail: "checkpoint actuated uid-p c1",
			want: []string{"checkpoint allocated", "cgroup create", "cgroup set", "RunPodSandbox default/p",
				"CreateContainer c1", "checkpoint actuated", "CreateContainer c2", "checkpoint actuated",
				"event Normal Created", "StartContainer c2", "event Normal Started", "status default/p"},
			events: []string{"Normal Created", "Normal Started"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, NodeConfig{})
			w.fail = failOn(tc.fail, 1, boom)
			w.add(testPod("p", resources("100m", "100Mi", "", ""), resources("100m", "100Mi", "", "")))
			if diff := cmp.Diff(tc.want, firstWords(w.logSince(0), tc.want)); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.events, prefixes(w.eventLines(0), 2)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			// A failed sync is retried after the backoff, a good one after
			// the resync interval.
			if got, want := w.c.pods["uid-p"].resyncAt.Sub(w.now), BackOffPeriod; got != want {
				t.Errorf("next sync in %s, want %s", got, want)
			}
		})
	}
}

// firstWords cuts each line to as many words as the matching want line
// has, so that tables can name actions without their values.
func firstWords(lines, want []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		n := 2
		if i < len(want) {
			n = len(strings.Fields(want[i]))
		}
		f := strings.Fields(l)
		if len(f) > n {
			f = f[:n]
		}
		out[i] = strings.Join(f, " ")
	}
	return out
}

// TestSyncContainerStatusFailureWritesNoStatus: when the runtime cannot say
// how a container is, the sync ends there without writing a status.
func TestSyncContainerStatusFailureWritesNoStatus(t *testing.T) {
	w := newWorld(t, NodeConfig{})
	w.add(testPod("p", resources("100m", "100Mi", "", "")))
	lg := len(w.log)
	w.fail = failOn("ContainerStatus c1", 1, errors.New("runtime down"))
	w.run(SyncRequested{Now: w.now})
	if got := w.log[lg:]; !cmp.Equal(got, []string{"cgroup exists? kubepods/burstable/poduid-p", "ContainerStatus c1 -> runtime down"}) {
		t.Errorf("actions = %q", got)
	}
	if got := w.c.pods["uid-p"].resyncAt.Sub(w.now); got != BackOffPeriod {
		t.Errorf("next sync in %s, want the backoff", got)
	}
}

// TestKillFailureStopsTheSync: a container that must restart for its
// resize and cannot be stopped ends the sync: nothing is resized or
// started, the status is written, the next sync tries again.
func TestKillFailureStopsTheSync(t *testing.T) {
	w := newWorld(t, NodeConfig{})
	p := testPod("p", resources("100m", "100Mi", "100m", "100Mi"))
	p.Spec.Containers[0].ResizePolicy = []v1.ContainerResizePolicy{{ResourceName: v1.ResourceMemory, RestartPolicy: v1.RestartContainer}}
	w.add(p)
	w.fail = failOn("StopContainer c1", 1, errors.New("stuck"))
	lg := len(w.log)
	w.resize("p", resources("100m", "200Mi", "100m", "200Mi"))
	want := []string{"checkpoint allocated", "event Normal ResizeStarted", "event Normal Killing", "StopContainer c1", "status default/p"}
	if diff := cmp.Diff(want, firstWords(w.logSince(lg), want)); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	lg = len(w.log)
	w.now = w.now.Add(BackOffPeriod)
	w.run(Tick{Now: w.now})
	if got := strings.Join(w.logSince(lg), "\n"); !strings.Contains(got, "StopContainer c1") || !strings.Contains(got, "CreateContainer c1 attempt 1") {
		t.Errorf("the retry did not restart c1:\n%s", got)
	}
}

// TestResizeErrorOnce: a failed in-place update sets PodResizeInProgress
// to Error with the error's text and emits ResizeError once; the next
// sync that succeeds completes the resize.
func TestResizeErrorOnce(t *testing.T) {
	w := newWorld(t, NodeConfig{})
	w.add(testPod("p", resources("100m", "100Mi", "100m", "100Mi")))
	w.fail = failOn("UpdateContainerResources", 2, errors.New("runtime is down"))
	ev := len(w.events)
	w.resize("p", resources("200m", "100Mi", "200m", "100Mi"))
	c := w.condition("p", v1.PodResizeInProgress)
	if c == nil || c.Reason != v1.PodReasonError || c.Message != "runtime is down" {
		t.Fatalf("in-progress condition = %+v", c)
	}
	w.now = w.now.Add(BackOffPeriod)
	w.run(Tick{Now: w.now})
	w.now = w.now.Add(BackOffPeriod)
	w.run(Tick{Now: w.now})
	got := prefixes(w.eventLines(ev), 2)
	if diff := cmp.Diff([]string{"Normal ResizeStarted", "Warning ResizeError", "Normal ResizeCompleted"}, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if c := w.condition("p", v1.PodResizeInProgress); c != nil {
		t.Errorf("in progress after the retry: %+v", c)
	}
}

// TestMemoryBelowUsageAbortsBeforeAnyWrite: the usage check runs after the
// pod cgroup is read and before anything is written; its error aborts the
// resize (ResizeError), and nothing was written.
func TestMemoryBelowUsageAbortsBeforeAnyWrite(t *testing.T) {
	w := newWorld(t, NodeConfig{})
	w.add(testPod("m", resources("100m", "200Mi", "100m", "200Mi")))
	w.usage["kubepods/poduid-m"] = 150 << 20
	for id := range w.ctrs {
		w.usage[id] = 150 << 20
	}
	lg := len(w.log)
	w.resize("m", resources("100m", "100Mi", "100m", "100Mi"))
	want := []string{"checkpoint allocated", "event Normal ResizeStarted", "cgroup read", "cgroup memory usage", "ContainerStats c1",
		"event Warning ResizeError", "status default/m"}
	if diff := cmp.Diff(want, firstWords(w.logSince(lg), want)); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	if c := w.condition("m", v1.PodResizeInProgress); c == nil || !strings.Contains(c.Message, "below current usage") {
		t.Errorf("in-progress condition = %+v", c)
	}
}

// TestRestartRecovery: after a kubelet restart the core rebuilds the
// pods' containers from the runtime's listing, readmits the pods with
// their checkpointed allocation, sets InProgress again for a resize the
// runtime has not finished (CheckPodResizeInProgress), and completes it
// with ResizeCompleted without restarting anything.
func TestRestartRecovery(t *testing.T) {
	w := newWorld(t, NodeConfig{})
	w.add(testPod("p", resources("100m", "100Mi", "100m", "100Mi")))
	// The kubelet dies right after the allocation: the resize is admitted
	// and checkpointed, and no update reached the runtime.
	w.fail = failOn("UpdateContainerResources", 1, errors.New("kubelet killed"))
	w.resize("p", resources("200m", "100Mi", "200m", "100Mi"))
	w.fail = nil
	ev, lg := len(w.events), len(w.log)
	w.restart()
	got := prefixes(w.eventLines(ev), 2)
	if diff := cmp.Diff([]string{"Normal ResizeCompleted"}, got); diff != "" {
		t.Errorf("events after the restart (-want +got):\n%s", diff)
	}
	for _, l := range w.log[lg:] {
		if strings.HasPrefix(l, "CreateContainer") || strings.HasPrefix(l, "StopContainer") || strings.HasPrefix(l, "RunPodSandbox") {
			t.Errorf("the restart recreated something: %s", l)
		}
	}
	if c := w.condition("p", v1.PodResizeInProgress); c != nil {
		t.Errorf("still in progress: %+v", c)
	}
}

// TestRestartKeepsTheHighestAttempt: of several containers of one name in
// the sandbox, the one with the highest attempt is current.
func TestRestartKeepsTheHighestAttempt(t *testing.T) {
	c, err := New(NodeConfig{})
	if err != nil {
		t.Fatal(err)
	}
	pod := testPod("p", resources("100m", "100Mi", "", ""))
	meta := func(attempt uint32) *runtimeapi.ContainerMetadata {
		return &runtimeapi.ContainerMetadata{Name: "c1", Attempt: attempt}
	}
	if _, err := c.Step(Start{
		Pods:      []*v1.Pod{pod},
		Sandboxes: []*runtimeapi.PodSandbox{{Id: "sb", Metadata: &runtimeapi.PodSandboxMetadata{Uid: string(pod.UID)}, State: runtimeapi.PodSandboxState_SANDBOX_READY}},
		Containers: []*runtimeapi.Container{
			{Id: "one", PodSandboxId: "sb", Metadata: meta(1)},
			{Id: "two", PodSandboxId: "sb", Metadata: meta(2)},
			{Id: "zero", PodSandboxId: "sb", Metadata: meta(0)},
			{Id: "elsewhere", PodSandboxId: "other", Metadata: meta(5)},
		},
	}); err != nil {
		t.Fatal(err)
	}
	ps := c.pods[pod.UID]
	if rec, _ := ps.containers.lookup("c1"); rec.id != "two" || rec.attempt != 2 {
		t.Errorf("current container = %+v, want two at attempt 2", rec)
	}
	if diff := cmp.Diff([]string{"one", "zero"}, ps.dead); diff != "" {
		t.Errorf("dead (-want +got):\n%s", diff)
	}
}

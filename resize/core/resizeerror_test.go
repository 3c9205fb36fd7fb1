package core

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
)

// failInTurn fails the calls whose action starts with prefix, the i-th
// with errs[i], and lets the calls after the last one through.
func failInTurn(prefix string, errs ...error) func(Action) error {
	return func(a Action) error {
		if len(errs) > 0 && strings.HasPrefix(a.String(), prefix) {
			err := errs[0]
			errs = errs[1:]
			return err
		}
		return nil
	}
}

// TestResizeErrorOnNewMessage: the kubelet emits ResizeError whenever
// SetPodResizeInProgressCondition reports an update (SyncPod in
// pkg/kubelet/kubelet.go; pkg/kubelet/status/status_manager.go), and a
// new message is one while the reason stays Error: each sync that fails
// with another error emits another ResizeError and puts its message in
// the condition; a sync that fails with the same error again emits
// nothing. The condition keeps its generation and its transition time
// throughout; ResizeCompleted ends it.
func TestResizeErrorOnNewMessage(t *testing.T) {
	w := newWorld(t, NodeConfig{})
	w.add(testPod("p", resources("100m", "100Mi", "100m", "100Mi")))
	w.fail = failInTurn("UpdateContainerResources",
		errors.New("runtime is down"), errors.New("runtime is busy"), errors.New("runtime is busy"))
	ev := len(w.events)
	w.resize("p", resources("200m", "100Mi", "200m", "100Mi"))
	first := w.condition("p", v1.PodResizeInProgress)
	if first == nil || first.Reason != v1.PodReasonError || first.Message != "runtime is down" || first.ObservedGeneration != 2 {
		t.Fatalf("InProgress after the first failure: %+v", first)
	}
	var messages []string
	for i := 0; i < 3; i++ {
		w.now = w.now.Add(BackOffPeriod)
		w.run(Tick{Now: w.now})
		if c := w.condition("p", v1.PodResizeInProgress); c != nil {
			messages = append(messages, c.Message)
			if !c.LastTransitionTime.Equal(&first.LastTransitionTime) || c.ObservedGeneration != 2 {
				t.Errorf("InProgress after sync %d: %+v; want the first one's transition time and generation", i+1, c)
			}
		}
	}
	if diff := cmp.Diff([]string{"runtime is busy", "runtime is busy"}, messages); diff != "" {
		t.Errorf("InProgress messages of the later syncs (-want +got):\n%s", diff)
	}
	var got []string
	for _, e := range w.events[ev:] {
		line := e.Type + " " + e.Reason
		if e.Reason == ReasonResizeError {
			line += " " + e.Resize.Error
		}
		got = append(got, line)
	}
	want := []string{"Normal ResizeStarted", "Warning ResizeError runtime is down", "Warning ResizeError runtime is busy", "Normal ResizeCompleted"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestPodCgroupReadErrorMessage: a pod cgroup that cannot be read fails
// the resize with the kubelet's message, which does not carry the read's
// error (doPodResizeAction, pkg/kubelet/kuberuntime/kuberuntime_manager.go:
// "unable to get pod cgroup memory config for pod %q"). So reads that keep
// failing with other errors leave the condition as it is and emit one
// ResizeError.
func TestPodCgroupReadErrorMessage(t *testing.T) {
	w := newWorld(t, NodeConfig{})
	w.add(testPod("p", resources("100m", "100Mi", "100m", "100Mi")))
	w.fail = failInTurn("cgroup read ", errors.New("EIO"), errors.New("EBUSY"))
	ev := len(w.events)
	w.resize("p", resources("200m", "100Mi", "200m", "100Mi"))
	w.now = w.now.Add(BackOffPeriod)
	w.run(Tick{Now: w.now})
	const msg = `unable to get pod cgroup memory config for pod "p_default(uid-p)"`
	if c := w.condition("p", v1.PodResizeInProgress); c == nil || c.Reason != v1.PodReasonError || c.Message != msg {
		t.Errorf("InProgress after two failed reads: %+v, want Error %q", c, msg)
	}
	if got, want := prefixes(w.eventLines(ev), 2), []string{"Normal ResizeStarted", "Warning ResizeError"}; !cmp.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
	w.now = w.now.Add(time.Minute)
	w.run(Tick{Now: w.now})
	if c := w.condition("p", v1.PodResizeInProgress); c != nil {
		t.Errorf("InProgress once the read works: %+v", c)
	}
}

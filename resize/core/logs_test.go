package core

import (
	"errors"
	"log/slog"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resizelet/resizelet/allocation"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// TestLogLevel holds LogRecord.Level to the documented mapping: errors at
// Error, klog.InfoS at Info, V(n) at slog.Level(-n), so V(4) is Debug.
func TestLogLevel(t *testing.T) {
	for _, tc := range []struct {
		r    LogRecord
		want slog.Level
	}{
		{LogRecord{Error: true}, slog.LevelError},
		{LogRecord{V: 0}, slog.LevelInfo},
		{LogRecord{V: 2}, slog.Level(-2)},
		{LogRecord{V: 4}, slog.LevelDebug},
		{LogRecord{V: 5}, slog.LevelDebug - 1},
	} {
		if got := tc.r.Level(); got != tc.want {
			t.Errorf("%+v: level %v, want %v", tc.r, got, tc.want)
		}
	}
	r := LogRecord{V: 3, Msg: "Resize cannot be accommodated", Attrs: []slog.Attr{slog.String("pod", "default/p")}}
	if got, want := r.String(), `DEBUG+1 "Resize cannot be accommodated" pod=default/p`; got != want {
		t.Errorf("String() = %s, want %s", got, want)
	}
}

// TestLogHooksOffCostNothing: with logging off (the default) every place
// the core logs builds nothing and allocates nothing; on, the same calls
// build their lines.
func TestLogHooksOffCostNothing(t *testing.T) {
	c, err := New(NodeConfig{})
	if err != nil {
		t.Fatal(err)
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p", UID: "u"}}
	deferred := allocation.Decision{Outcome: allocation.Deferred, Reason: "OutOfcpu", Message: "no room"}
	infeasible := allocation.Decision{Outcome: allocation.Infeasible, Reason: "insufficient_node_allocatable", Message: "too big"}
	quota := int64(1000)
	done := []Action{
		StopContainer{Name: "c", ID: "1", Timeout: 30},
		SetCgroup{Path: "kubepods/podu", Values: cgconfig.Values{CPUQuota: &quota}},
		UpdatePodSandboxResources{},
		UpdateContainerResources{Name: "c", ID: "1"},
		WriteActuatedContainer{UID: "u", Name: "c"},
	}
	failed := errors.New("failed")
	res := []Result{{Err: failed}, {Err: failed}, {Unimplemented: true}, {Err: failed}, {Err: failed}}
	hooks := func() {
		c.logAdmissionDenied(pod, deferred.Reason, deferred.Message)
		c.podError(pod, failed, "SetPodAllocation failed")
		c.logResizeDecision(pod, deferred)
		c.logResizeDecision(pod, infeasible)
		c.logRetryOutcome(pod, allocation.Deferred, nil)
		c.logRetryOutcome(pod, allocation.Admitted, failed)
		c.logPendingPodGone("u")
		c.logKills(pod, done, res)
		c.podError(pod, failed, "Unable to get pod cgroup memory config")
		c.podError(pod, failed, "Allocated pod resize is not currently feasible")
		c.logResizeWrites(pod, pod, nil, done, res)
		c.logSyncError(pod, failed)
	}
	if n := testing.AllocsPerRun(100, hooks); n != 0 {
		t.Errorf("with logging off the hooks allocate %v times", n)
	}
	if logs := c.takeLogs(); logs != nil {
		t.Fatalf("with logging off the hooks logged %v", logs)
	}
	c.SetLogging(true)
	hooks()
	logs := c.takeLogs()
	if len(logs) < 12 {
		t.Errorf("with logging on the hooks logged %d lines: %v", len(logs), logs)
	}
	last := logs[len(logs)-1]
	if err, ok := last.Attrs[0].Value.Any().(error); last.Msg != "Error syncing pod, skipping" || !ok || !errors.Is(err, ErrResizePodInPlace) {
		t.Errorf("the failed sync's line %v does not wrap ErrResizePodInPlace", last)
	}
	if logs := c.takeLogs(); logs != nil {
		t.Errorf("taken lines are handed out again: %v", logs)
	}
}

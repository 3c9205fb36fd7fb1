package resize

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/resize/core"
)

// logRecorder is a slog.Handler that keeps the records it takes, each
// rendered as "LEVEL message key=value ..." (values as slog's text handler
// prints them, %+v), and their times.
type logRecorder struct {
	min   slog.Level
	mu    sync.Mutex
	lines []string
	times []time.Time
}

func (h *logRecorder) Enabled(_ context.Context, l slog.Level) bool { return l >= h.min }

func (h *logRecorder) Handle(_ context.Context, r slog.Record) error {
	line := r.Level.String() + " " + r.Message
	r.Attrs(func(a slog.Attr) bool {
		line += " " + a.Key + "=" + fmt.Sprintf("%+v", a.Value.Any())
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lines = append(h.lines, line)
	h.times = append(h.times, r.Time)
	return nil
}

func (h *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *logRecorder) WithGroup(string) slog.Handler      { return h }

// take returns the lines logged since the last take.
func (h *logRecorder) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.lines
	h.lines, h.times = nil, nil
	return out
}

// loggingNode is a test node with a logger at min and fault injectors
// under its runtime and (the node's only) cgroups.
type loggingNode struct {
	*testNode
	log      *logRecorder
	faults   *cri.FaultInjector
	cgFaults *cgroup.FaultInjector
}

func newLoggingNode(t *testing.T, cfg NodeConfig, min slog.Level) *loggingNode {
	t.Helper()
	tn := newTestNode(t, cfg)
	ln := &loggingNode{testNode: tn, log: &logRecorder{min: min}}
	ln.faults = cri.NewFaultInjector(tn.calls)
	ln.cgFaults = cgroup.NewFaultInjector(tn.cg)
	tn.deps.Runtime, tn.deps.Cgroups = ln.faults, ln.cgFaults
	tn.deps.Logger = slog.New(ln.log)
	tn.restart()
	return ln
}

// neverRestarts is a pod of cpuPod's whose containers are not restarted
// when they exit.
func neverRestarts(p *v1.Pod) *v1.Pod {
	p.Spec.RestartPolicy = v1.RestartPolicyNever
	return p
}

// TestLogsOfTheResizePath drives resizes to each of their outcomes on a
// node with a logger and checks the lines logged against the kubelet
// v1.35.4's for the same story: its messages, key/value pairs (pods as
// klog.KObj's namespace/name or format.Pod's name_namespace(uid)) and
// levels (V(n) as slog.Level(-n): DEBUG+1 is V(3), DEBUG is V(4), DEBUG-1
// is V(5)).
func TestLogsOfTheResizePath(t *testing.T) {
	const capacity = "Node didn't have enough resource: cpu, requested: 3000, used: 2000, capacity: 4000"
	// Each story runs on a 4-CPU node with a (2 CPUs, never restarted)
	// and b (1 CPU), and logs from the mark on; want gets b's UID, b's
	// container ID and sandbox ID.
	for _, tc := range []struct {
		name  string
		story func(t *testing.T, ln *loggingNode)
		want  func(uid, ctr, sandbox string) []string
	}{
		{
			name:  "admitted",
			story: func(t *testing.T, ln *loggingNode) { mustResize(t, ln.testNode, "b", cpuPatch("1500m")) },
			want: func(uid, ctr, sandbox string) []string {
				return []string{
					"DEBUG Pod resize successfully allocated pod=default/b",
					"DEBUG-1 Updating container resources pod=default/b",
				}
			},
		},
		{
			name:  "deferred",
			story: func(t *testing.T, ln *loggingNode) { mustResize(t, ln.testNode, "b", cpuPatch("3")) },
			want: func(uid, ctr, sandbox string) []string {
				return []string{
					"INFO Pod admission denied podUID=" + uid + " pod=default/b reason=OutOfcpu message=" + capacity,
					"DEBUG+1 Resize cannot be accommodated pod=default/b reason=OutOfcpu message=" + capacity,
					"DEBUG Pod resize is deferred; will reevaluate later pod=default/b",
				}
			},
		},
		{
			name:  "infeasible",
			story: func(t *testing.T, ln *loggingNode) { mustResize(t, ln.testNode, "b", cpuPatch("30")) },
			want: func(uid, ctr, sandbox string) []string {
				return []string{
					"DEBUG+1 Node didn't have enough capacity: cpu, requested: 30000, capacity: 4000 pod=default/b",
					"DEBUG Pod resize is infeasible pod=default/b",
				}
			},
		},
		{
			name: "actuation error",
			story: func(t *testing.T, ln *loggingNode) {
				ln.faults.Inject(cri.Fault{Method: "UpdateContainerResources", PodName: "b", Err: errors.New("runtime is down")})
				mustResize(t, ln.testNode, "b", cpuPatch("1500m"))
			},
			want: func(uid, ctr, sandbox string) []string {
				return []string{
					"DEBUG Pod resize successfully allocated pod=default/b",
					"DEBUG-1 Updating container resources pod=default/b",
					// cID is a kubecontainer.ContainerID value, which klog
					// prints field by field.
					"ERROR updateContainerResources failed err=runtime is down container=c cID={Type:containerd ID:" + ctr + "} pod=b_default(" + uid + ") resourceName=cpu",
					"ERROR updatePodContainerResources failed err=runtime is down pod=b_default(" + uid + ") resource=cpu",
					`ERROR Error syncing pod, skipping err=failed to "ResizePodInPlace" for "b_default(` + uid + `)" with ResizePodInPlaceError: "runtime is down" pod=default/b podUID=` + uid,
				}
			},
		},
		{
			name: "pod cgroup write fails",
			story: func(t *testing.T, ln *loggingNode) {
				ln.cgFaults.Inject(func(path string) bool { return path == ln.info("b").PodCgroup }, errors.New("device busy"), 1)
				mustResize(t, ln.testNode, "b", cpuPatch("1500m"))
			},
			want: func(uid, ctr, sandbox string) []string {
				// b is Guaranteed: its pod cgroup is kubepods/pod<uid>, and
				// the CPU limit goes up first (cgroup v2: cpu.max).
				err := "write kubepods/pod" + uid + "/cpu.max: device busy"
				return []string{
					"DEBUG Pod resize successfully allocated pod=default/b",
					"ERROR Failed to set cgroup config err=" + err + " resource=cpu pod=default/b",
					`ERROR Error syncing pod, skipping err=failed to "ResizePodInPlace" for "b_default(` + uid + `)" with ResizePodInPlaceError: "` + err + `" pod=default/b podUID=` + uid,
				}
			},
		},
		{
			name: "runtime without UpdatePodSandboxResources",
			story: func(t *testing.T, ln *loggingNode) {
				ln.faults.Inject(cri.Fault{Method: "UpdatePodSandboxResources", PodName: "b", Err: cri.ErrUnimplemented, Times: 2})
				mustResize(t, ln.testNode, "b", cpuPatch("1500m"))
			},
			want: func(uid, ctr, sandbox string) []string {
				unimplemented := "DEBUG+1 updatePodSandboxResources failed: unimplemented; this call is best-effort: proceeding with resize sandboxID=" + sandbox
				return []string{
					"DEBUG Pod resize successfully allocated pod=default/b",
					unimplemented, // after the quota write
					unimplemented, // after the shares write
					"DEBUG-1 Updating container resources pod=default/b",
				}
			},
		},
		{
			name: "runtime refuses UpdatePodSandboxResources",
			story: func(t *testing.T, ln *loggingNode) {
				ln.faults.Inject(cri.Fault{Method: "UpdatePodSandboxResources", PodName: "b", Err: errors.New("busy")})
				mustResize(t, ln.testNode, "b", cpuPatch("1500m"))
			},
			want: func(uid, ctr, sandbox string) []string {
				return []string{
					"DEBUG Pod resize successfully allocated pod=default/b",
					`ERROR Failed to notify runtime for UpdatePodSandboxResources err=updatePodSandboxResources failed for sanboxID "` + sandbox + `": busy resource=cpu pod=default/b`,
					"DEBUG-1 Updating container resources pod=default/b",
				}
			},
		},
		{
			name: "deferred, then allocated by the periodic retry",
			story: func(t *testing.T, ln *loggingNode) {
				mustResize(t, ln.testNode, "b", cpuPatch("3"))
				if err := ln.rt.Exit(ln.info("a").ContainerIDs["c"], 0, "Completed"); err != nil {
					t.Fatal(err)
				}
				if err := ln.node.Sync(ln.ctx); err != nil {
					t.Fatal(err)
				}
				if err := ln.node.Advance(ln.ctx, 3*time.Minute); err != nil {
					t.Fatal(err)
				}
			},
			want: func(uid, ctr, sandbox string) []string {
				return []string{
					"INFO Pod admission denied podUID=" + uid + " pod=default/b reason=OutOfcpu message=" + capacity,
					"DEBUG+1 Resize cannot be accommodated pod=default/b reason=OutOfcpu message=" + capacity,
					"DEBUG Pod resize is deferred; will reevaluate later pod=default/b",
					// a has exited; three minutes later the periodic retry
					// allocates b's resize.
					"DEBUG Pod resize successfully allocated pod=default/b",
					"INFO Successfully retried resize after timeout pod=default/b",
					"DEBUG-1 Updating container resources pod=default/b",
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln := newLoggingNode(t, smallNode(), slog.Level(-8))
			for _, p := range []*v1.Pod{neverRestarts(cpuPod("a", "2")), cpuPod("b", "1")} {
				if _, err := ln.node.AddPod(ln.ctx, p); err != nil {
					t.Fatal(err)
				}
			}
			if got := ln.log.take(); len(got) != 0 {
				t.Fatalf("adding the pods logged:\n%s", strings.Join(got, "\n"))
			}
			info := ln.info("b")
			tc.story(t, ln)
			got, want := ln.log.take(), tc.want(string(info.UID), info.ContainerIDs["c"], info.SandboxID)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("logged:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// TestLogsOfARestartAndAMemoryCheck: a resize under the RestartContainer
// policy logs SyncPod's and killContainer's lines for the restart; a
// memory limit lowered below the container's usage logs the usage
// check's refusal and the failed sync.
func TestLogsOfARestartAndAMemoryCheck(t *testing.T) {
	ln := newLoggingNode(t, NodeConfig{}, slog.Level(-8))
	if _, err := ln.node.AddPod(ln.ctx, demoPod()); err != nil {
		t.Fatal(err)
	}
	info := ln.info("resize-demo")
	uid, id := string(info.UID), "containerd://"+info.ContainerIDs["pause"]
	key := "{Type:containerd ID:" + info.ContainerIDs["pause"] + "}" // SyncPod logs the ContainerID value
	ln.log.take()
	mustResize(t, ln.testNode, "resize-demo", `{"spec":{"containers":[{"name":"pause","resources":{"requests":{"memory":"300Mi"},"limits":{"memory":"300Mi"}}}]}}`)
	want := []string{
		"DEBUG Pod resize successfully allocated pod=default/resize-demo",
		"DEBUG+1 Killing unwanted container for pod containerName=pause containerID=" + key + " pod=default/resize-demo",
		"DEBUG+2 Killing container with a grace period pod=default/resize-demo podUID=" + uid + " containerName=pause containerID=" + id + " gracePeriod=30",
		"DEBUG+1 Container exited normally pod=default/resize-demo podUID=" + uid + " containerName=pause containerID=" + id,
	}
	if got := ln.log.take(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("restart logged:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// The CPU goes in place; memory under the policy RestartContainer
	// would restart, so lower it on a pod whose memory is NotRequired.
	p := cpuPod("m", "500m")
	p.Spec.Containers[0].Resources = resources("500m", "100Mi", "500m", "200Mi")
	if _, err := ln.node.AddPod(ln.ctx, p); err != nil {
		t.Fatal(err)
	}
	m := ln.info("m")
	if err := ln.rt.SetMemoryUsage(m.ContainerIDs["c"], 150<<20); err != nil {
		t.Fatal(err)
	}
	ln.log.take()
	mustResize(t, ln.testNode, "m", `{"spec":{"containers":[{"name":"c","resources":{"limits":{"memory":"120Mi"}}}]}}`)
	got := ln.log.take()
	if len(got) != 3 || got[0] != "DEBUG Pod resize successfully allocated pod=default/m" ||
		!strings.HasPrefix(got[1], "ERROR Allocated pod resize is not currently feasible err=cannot decrease memory limits: ") ||
		!strings.HasSuffix(got[1], " pod=default/m") ||
		!strings.HasPrefix(got[2], `ERROR Error syncing pod, skipping err=failed to "ResizePodInPlace" for "m_default(`+string(m.UID)+`)" with ResizePodInPlaceError: "cannot decrease memory limits: `) {
		t.Errorf("memory check logged:\n%s", strings.Join(got, "\n"))
	}
}

// TestLogLevels: the handler's level decides which lines it gets: Info
// takes klog's -v=0 lines and the errors, Debug those up to V(4), and
// every record carries the node's clock.
func TestLogLevels(t *testing.T) {
	for _, tc := range []struct {
		min  slog.Level
		want []string // message prefixes
	}{
		{slog.LevelInfo, []string{"INFO Pod admission denied"}},
		{slog.LevelDebug, []string{"INFO Pod admission denied", "DEBUG+1 Resize cannot be accommodated", "DEBUG Pod resize is deferred"}},
	} {
		t.Run(tc.min.String(), func(t *testing.T) {
			ln := newLoggingNode(t, smallNode(), tc.min)
			for _, p := range []*v1.Pod{cpuPod("a", "2"), cpuPod("b", "1")} {
				if _, err := ln.node.AddPod(ln.ctx, p); err != nil {
					t.Fatal(err)
				}
			}
			ln.clock.Set(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
			mustResize(t, ln.testNode, "b", cpuPatch("3"))
			ln.log.mu.Lock()
			lines, times := ln.log.lines, ln.log.times
			ln.log.mu.Unlock()
			if len(lines) != len(tc.want) {
				t.Fatalf("logged:\n%s\nwant lines starting %q", strings.Join(lines, "\n"), tc.want)
			}
			for i, want := range tc.want {
				if !strings.HasPrefix(lines[i], want) {
					t.Errorf("line %d = %q, want it to start with %q", i, lines[i], want)
				}
				if !times[i].Equal(ln.clock.Now()) {
					t.Errorf("line %d at %s, want the node's clock %s", i, times[i], ln.clock.Now())
				}
			}
		})
	}
}

// TestPeriodicRetriesLogWhenAdvanceWouldSkip: with a logger, Advance does
// not skip over the periodic retries of a pending resize (each logs its
// decision, as the kubelet's does every three minutes), while a node
// without resizes pending still skips.
func TestPeriodicRetriesLogWhenAdvanceWouldSkip(t *testing.T) {
	ln := newLoggingNode(t, smallNode(), slog.LevelInfo)
	for _, p := range []*v1.Pod{cpuPod("a", "2"), cpuPod("b", "1")} {
		if _, err := ln.node.AddPod(ln.ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	mustResize(t, ln.testNode, "b", cpuPatch("3"))
	ln.log.take()
	if err := ln.node.Advance(ln.ctx, time.Hour); err != nil {
		t.Fatal(err)
	}
	got := ln.log.take()
	if len(got) != 20 {
		t.Fatalf("an hour of retries every 3 minutes logged %d lines, want 20:\n%s", len(got), strings.Join(got, "\n"))
	}
	for _, l := range got {
		if !strings.HasPrefix(l, "INFO Pod admission denied ") {
			t.Fatalf("unexpected line %q", l)
		}
	}
	before := ln.node.watch.skipped.Load()
	mustResize(t, ln.testNode, "b", cpuPatch("1"))
	if err := ln.node.Advance(ln.ctx, time.Hour); err != nil {
		t.Fatal(err)
	}
	if ln.node.watch.skipped.Load() == before {
		t.Error("a node with nothing pending did not skip a settled hour")
	}
}

// TestNodeWithoutLoggerBuildsNoLogs: without Deps.Logger the core builds
// no log lines at all.
func TestNodeWithoutLoggerBuildsNoLogs(t *testing.T) {
	tn := newTestNode(t, smallNode())
	for _, p := range []*v1.Pod{cpuPod("a", "2"), cpuPod("b", "1")} {
		if _, err := tn.node.AddPod(tn.ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	pod, err := tn.cluster.ResizePod(t.Context(), "default", "b", []byte(cpuPatch("3")))
	if err != nil {
		t.Fatal(err)
	}
	own := *pod
	rd, err := tn.node.step(&core.ResizeRequested{Pod: &own, Now: tn.clock.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if rd.Logs != nil {
		t.Fatalf("a deferred resize without a logger built log lines: %v", rd.Logs)
	}
	if err := tn.node.drain(tn.ctx, rd); err != nil {
		t.Fatal(err)
	}
	if c := pendingOf(t, tn.pod("b")); c == nil || c.Reason != "Deferred" {
		t.Fatalf("the resize was not deferred: %+v", c)
	}
}

// TestLogsOfARejectedPod: a new pod the admit handlers refuse logs
// canAdmitPod's line, as a resize the handlers defer does.
func TestLogsOfARejectedPod(t *testing.T) {
	ln := newLoggingNode(t, smallNode(), slog.LevelInfo)
	if _, err := ln.node.AddPod(ln.ctx, cpuPod("a", "2")); err != nil {
		t.Fatal(err)
	}
	big, err := ln.node.AddPod(ln.ctx, cpuPod("big", "3"))
	if err != nil {
		t.Fatal(err)
	}
	if big.Status.Phase != v1.PodFailed {
		t.Fatalf("big was not rejected: %s", big.Status.Phase)
	}
	want := "INFO Pod admission denied podUID=" + string(big.UID) + " pod=default/big reason=OutOfcpu message=Node didn't have enough resource: cpu, requested: 3000, used: 2000, capacity: 4000"
	if got := ln.log.take(); len(got) != 1 || got[0] != want {
		t.Errorf("logged:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
}

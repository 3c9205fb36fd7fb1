package conform

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
)

// quirky is a runtime that behaves like SimContainerd except where a
// test makes it misbehave, the way a real runtime might.
type quirky struct {
	*cri.SimContainerd
	kernel *cgroup.SimKernel // the kernel the runtime writes
	mu     sync.Mutex
	// status rewrites ContainerStatus answers.
	status func(resp *runtimeapi.ContainerStatusResponse) *runtimeapi.ContainerStatusResponse
	// update replaces UpdateContainerResources; inner is the simulator's.
	update func(ctx context.Context, id string, r *runtimeapi.ContainerResources, inner func() error) error
	// sandbox replaces UpdatePodSandboxResources' answer.
	sandbox error
	// create, when set, runs after a successful CreateContainer and may
	// turn it into an error (a lost answer).
	create func(id string) error
	// removeSandbox, when set, fails every RemovePodSandbox.
	removeSandbox error
}

func (q *quirky) Unwrap() cri.Runtime { return q.SimContainerd }

func (q *quirky) ContainerStatus(ctx context.Context, id string, verbose bool) (*runtimeapi.ContainerStatusResponse, error) {
	resp, err := q.SimContainerd.ContainerStatus(ctx, id, verbose)
	if err != nil || q.status == nil {
		return resp, err
	}
	return q.status(resp), nil
}

func (q *quirky) UpdateContainerResources(ctx context.Context, id string, r *runtimeapi.ContainerResources) error {
	inner := func() error { return q.SimContainerd.UpdateContainerResources(ctx, id, r) }
	if q.update == nil {
		return inner()
	}
	return q.update(ctx, id, r, inner)
}

func (q *quirky) UpdatePodSandboxResources(ctx context.Context, req *runtimeapi.UpdatePodSandboxResourcesRequest) (*runtimeapi.UpdatePodSandboxResourcesResponse, error) {
	if q.sandbox != nil {
		return nil, q.sandbox
	}
	return q.SimContainerd.UpdatePodSandboxResources(ctx, req)
}

func (q *quirky) CreateContainer(ctx context.Context, sb string, cfg *runtimeapi.ContainerConfig, sbc *runtimeapi.PodSandboxConfig) (string, error) {
	id, err := q.SimContainerd.CreateContainer(ctx, sb, cfg, sbc)
	if err == nil && q.create != nil {
		return "", q.create(id)
	}
	return id, err
}

func (q *quirky) RemovePodSandbox(ctx context.Context, id string) error {
	if q.removeSandbox != nil {
		return q.removeSandbox
	}
	return q.SimContainerd.RemovePodSandbox(ctx, id)
}

// copyStatus returns a copy of a status answer whose resources can be
// replaced (the simulator's answers are shared).
func copyStatus(resp *runtimeapi.ContainerStatusResponse, res *runtimeapi.ContainerResources) *runtimeapi.ContainerStatusResponse {
	st := proto.Clone(resp.Status).(*runtimeapi.ContainerStatus)
	st.Resources = res
	return &runtimeapi.ContainerStatusResponse{Status: st, Info: resp.Info}
}

// newQuirky returns a well-behaved runtime on a fresh in-memory kernel.
func newQuirky(version cgroup.Version) (*quirky, *cgroup.SimKernel) {
	k := cgroup.NewSimKernel(version)
	return &quirky{SimContainerd: cri.NewSimContainerd(k), kernel: k}, k
}

// run runs conform on rt over k and checks that nothing is left behind
// in the runtime or the kernel, whatever the outcome.
func runOn(t *testing.T, ctx context.Context, rt cri.Runtime, k *cgroup.SimKernel, sim *cri.SimContainerd) *Report {
	t.Helper()
	// The in-memory kernel OOM-kills at once: no need to wait long.
	rep, err := Run(ctx, Options{Runtime: rt, Cgroups: k, Image: "busybox", OOMWait: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	var text bytes.Buffer
	rep.WriteText(&text)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("report:\n%s", text.String())
		}
	})
	assertNothingLeft(t, sim, k, rep.Prefix)
	return rep
}

// assertNothingLeft fails the test if a sandbox, a container or a cgroup
// of the run is left.
func assertNothingLeft(t *testing.T, sim *cri.SimContainerd, k *cgroup.SimKernel, prefix string) {
	t.Helper()
	sbs, _ := sim.ListPodSandbox(context.Background(), nil)
	for _, sb := range sbs {
		if sb.GetLabels()[LabelRun] == prefix || strings.HasPrefix(sb.GetMetadata().GetName(), prefix) {
			t.Errorf("sandbox %s (%s) left behind", sb.Id, sb.GetMetadata().GetName())
		}
	}
	cs, _ := sim.ListContainers(context.Background(), nil)
	for _, c := range cs {
		if c.GetLabels()[LabelRun] == prefix {
			t.Errorf("container %s left behind", c.Id)
		}
	}
	for _, p := range k.Paths() {
		if strings.HasPrefix(p, prefix) {
			t.Errorf("cgroup %s left behind", p)
		}
	}
}

// statuses returns the checks' statuses by ID.
func statuses(rep *Report) map[int]Status {
	out := map[int]Status{}
	for _, c := range rep.Checks {
		out[c.ID] = c.Status
	}
	return out
}

// TestConformingRuntimePasses: the in-memory containerd passes every
// check on both cgroup versions, with the outcomes a runc-based runtime
// has there (v1 refuses a limit below usage with runc's message, v2
// accepts it and the kernel OOM-kills), and names runc's weight formula.
func TestConformingRuntimePasses(t *testing.T) {
	for _, tc := range []struct {
		version    cgroup.Version
		belowUsage string
		formula    string
	}{
		{cgroup.V1, "refused, nothing changed", "cpu.shares written as sent"},
		{cgroup.V2, "accepted, then the kernel OOM-killed the container", "quadratic formula of runc >= 1.3.2"},
	} {
		t.Run(tc.version.String(), func(t *testing.T) {
			rt, k := newQuirky(tc.version)
			rep := runOn(t, context.Background(), rt, k, rt.SimContainerd)
			if !rep.Passed() {
				t.Errorf("a conforming runtime did not pass: %v", statuses(rep))
			}
			for id, s := range statuses(rep) {
				if s != Pass {
					t.Errorf("check %d: %s, want PASS", id, s)
				}
			}
			if got := rep.Check(checkBelowUsage).Summary; !strings.HasPrefix(got, tc.belowUsage) {
				t.Errorf("below usage: %q, want %q...", got, tc.belowUsage)
			}
			if !strings.Contains(rep.WeightFormula, tc.formula) {
				t.Errorf("weight formula %q, want %q", rep.WeightFormula, tc.formula)
			}
			if len(rep.Checks) != 9 || rep.Runtime != "*conform.quirky" || rep.Prefix == "" || len(rep.Calls) == 0 {
				t.Errorf("report: %d checks, runtime %q, prefix %q, %d calls", len(rep.Checks), rep.Runtime, rep.Prefix, len(rep.Calls))
			}
			// The values sent are the kubelet's: a Burstable pod's 500m
			// request and 1 CPU limit.
			if ev := strings.Join(rep.Check(checkCPU).Evidence, "\n"); !strings.Contains(ev, "sent cpu_shares=512 cpu_quota=100000 cpu_period=100000 memory_limit_in_bytes=134217728 oom_score_adj=999") {
				t.Errorf("check 1 evidence lacks the kubelet's message:\n%s", ev)
			}
			var text bytes.Buffer
			rep.WriteText(&text)
			if !strings.Contains(text.String(), "PASS: 9 passed, 0 failed, 0 not supported, 0 not run") {
				t.Errorf("text report lacks the verdict:\n%s", text.String())
			}
			b, err := json.Marshal(rep)
			if err != nil || !bytes.Contains(b, []byte(`"status":"PASS"`)) {
				t.Errorf("JSON report: %v\n%s", err, b)
			}
		})
	}
}

// TestMisbehavingRuntimes: each way a runtime can let the kubelet down
// shows as the check that catches it, and the run still cleans up.
func TestMisbehavingRuntimes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		version cgroup.Version
		quirk   func(q *quirky)
		check   int
		want    Status
		summary string // a part of the check's summary
		passed  bool
	}{
		{
			name: "status without resources", version: cgroup.V2,
			quirk: func(q *quirky) {
				q.status = func(r *runtimeapi.ContainerStatusResponse) *runtimeapi.ContainerStatusResponse {
					return copyStatus(r, nil)
				}
			},
			check: checkStatus, want: NotSupported, summary: "carries no resources",
		},
		{
			// runc with the systemd driver on v2: systemd applies the
			// limit first, the kernel kills the container, and runc's own
			// write fails on the scope that went with it.
			// The scope goes with the process, and the runtime's status
			// says running a moment longer.
			name: "refused after the limit killed the container", version: cgroup.V2,
			quirk: func(q *quirky) {
				lag := 0
				q.update = func(ctx context.Context, id string, r *runtimeapi.ContainerResources, inner func() error) error {
					err := inner()
					if r.GetLinux().GetMemoryLimitInBytes() == resBelowUsage.memLim<<20 {
						for _, p := range q.kernel.Paths() {
							if strings.HasSuffix(p, "/"+id) {
								q.kernel.Delete(p)
							}
						}
						lag = 2
						return errors.New("openat2 .../cri-containerd-x.scope/cgroup.controllers: no such file or directory")
					}
					return err
				}
				q.status = func(r *runtimeapi.ContainerStatusResponse) *runtimeapi.ContainerStatusResponse {
					if lag == 0 || r.GetStatus().GetState() != runtimeapi.ContainerState_CONTAINER_EXITED {
						return r
					}
					lag--
					st := proto.Clone(r.Status).(*runtimeapi.ContainerStatus)
					st.State = runtimeapi.ContainerState_CONTAINER_RUNNING
					return &runtimeapi.ContainerStatusResponse{Status: st, Info: r.Info}
				}
			},
			check: checkBelowUsage, want: Fail, summary: "refused with an error, but the container ended",
		},
		{
			name: "stale status", version: cgroup.V1,
			quirk: func(q *quirky) {
				stale := &runtimeapi.ContainerResources{Linux: &runtimeapi.LinuxContainerResources{CpuShares: 256, CpuQuota: 50000, CpuPeriod: 100000, MemoryLimitInBytes: 128 << 20}}
				q.status = func(r *runtimeapi.ContainerStatusResponse) *runtimeapi.ContainerStatusResponse {
					return copyStatus(r, stale)
				}
			},
			check: checkStatus, want: Fail, summary: "differ from what the container holds",
		},
		{
			name: "zero taken as no limit", version: cgroup.V2,
			quirk: func(q *quirky) {
				q.update = func(ctx context.Context, id string, r *runtimeapi.ContainerResources, inner func() error) error {
					l := *r.GetLinux()
					if l.CpuQuota == 0 {
						l.CpuQuota = -1
					}
					if l.MemoryLimitInBytes == 0 {
						l.MemoryLimitInBytes = -1
					}
					return q.SimContainerd.UpdateContainerResources(ctx, id, &runtimeapi.ContainerResources{Linux: &l})
				}
			},
			check: checkZeroUnified, want: Fail, summary: "cpu.max",
		},
		{
			name: "sandbox update unimplemented", version: cgroup.V1,
			quirk: func(q *quirky) {
				q.sandbox = grpcstatus.Error(codes.Unimplemented, "unknown method UpdatePodSandboxResources")
			},
			check: checkSandbox, want: NotSupported, summary: "Unimplemented", passed: true,
		},
		{
			name: "sandbox update fails", version: cgroup.V1,
			quirk: func(q *quirky) { q.sandbox = errors.New("sandbox is broken") },
			check: checkSandbox, want: Fail, summary: "sandbox is broken",
		},
		{
			name: "update restarts the process", version: cgroup.V1,
			quirk: func(q *quirky) {
				updates := 0
				q.update = func(ctx context.Context, id string, r *runtimeapi.ContainerResources, inner func() error) error {
					q.mu.Lock()
					updates++
					q.mu.Unlock()
					return inner()
				}
				q.status = func(r *runtimeapi.ContainerStatusResponse) *runtimeapi.ContainerStatusResponse {
					q.mu.Lock()
					defer q.mu.Unlock()
					st := proto.Clone(r.Status).(*runtimeapi.ContainerStatus)
					st.StartedAt += int64(updates)
					return &runtimeapi.ContainerStatusResponse{Status: st, Info: r.Info}
				}
			},
			check: checkCPU, want: Fail, summary: "the process changed",
		},
		{
			name: "unknown unified key spoils later updates", version: cgroup.V2,
			quirk: func(q *quirky) {
				poisoned := false
				q.update = func(ctx context.Context, id string, r *runtimeapi.ContainerResources, inner func() error) error {
					q.mu.Lock()
					defer q.mu.Unlock()
					if poisoned {
						return fmt.Errorf("unable to set unified resource %q: no such file", unknownUnifiedKey)
					}
					if _, ok := r.GetLinux().GetUnified()[unknownUnifiedKey]; ok {
						poisoned = true
					}
					return inner()
				}
			},
			check: checkZeroUnified, want: Fail, summary: "refuses the kubelet's next update",
		},
		{
			name: "limit below usage swallowed", version: cgroup.V1,
			quirk: func(q *quirky) {
				q.update = func(ctx context.Context, id string, r *runtimeapi.ContainerResources, inner func() error) error {
					if err := inner(); err != nil && !strings.Contains(err.Error(), "unable to set memory limit") {
						return err
					}
					return nil
				}
			},
			check: checkBelowUsage, want: Fail, summary: "does not hold it",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt, k := newQuirky(tc.version)
			tc.quirk(rt)
			rep := runOn(t, context.Background(), rt, k, rt.SimContainerd)
			c := rep.Check(tc.check)
			if c.Status != tc.want || !strings.Contains(c.Summary, tc.summary) {
				t.Errorf("check %d: %s %q, want %s with %q", tc.check, c.Status, c.Summary, tc.want, tc.summary)
			}
			if rep.Passed() != tc.passed {
				t.Errorf("Passed() = %v, want %v (checks %v)", rep.Passed(), tc.passed, statuses(rep))
			}
			if s := rep.Check(checkCleanup).Status; s != Pass {
				t.Errorf("cleanup: %s", s)
			}
		})
	}
}

// cancelling cancels a context at the nth UpdateContainerResources, as a
// signal in the middle of a run does.
type cancelling struct {
	*quirky
	cancel func()
	n      int
}

func (c *cancelling) UpdateContainerResources(ctx context.Context, id string, r *runtimeapi.ContainerResources) error {
	c.n--
	if c.n == 0 {
		c.cancel()
		return ctx.Err()
	}
	return c.quirky.UpdateContainerResources(ctx, id, r)
}

// TestInterruptedRunCleansUp: a run whose context ends mid-check stops,
// says so, marks what did not run, and still removes everything.
func TestInterruptedRunCleansUp(t *testing.T) {
	for _, n := range []int{1, 3, 6} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			q, k := newQuirky(cgroup.V1)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			rt := &cancelling{quirky: q, cancel: cancel, n: n}
			rep := runOn(t, ctx, rt, k, q.SimContainerd)
			if !rep.Interrupted || rep.Passed() {
				t.Errorf("interrupted %v, passed %v", rep.Interrupted, rep.Passed())
			}
			notRun := 0
			for _, c := range rep.Checks {
				if c.Status == Fail {
					t.Errorf("check %d failed on an interrupt: %s", c.ID, c.Summary)
				}
				if c.Status == NotRun {
					notRun++
				}
			}
			if notRun == 0 {
				t.Error("no check is marked as not run")
			}
			if s := rep.Check(checkCleanup); s.Status != Pass || len(rep.Removed) == 0 {
				t.Errorf("cleanup %s, removed %v", s.Status, rep.Removed)
			}
		})
	}
}

// TestFailedSetupCleansUp: a runtime that cannot create the container
// fails the setup, no check runs, and what was made is removed, also a
// container whose create answer was lost (found by the run's label).
func TestFailedSetupCleansUp(t *testing.T) {
	for _, tc := range []struct {
		name  string
		quirk func(q *quirky)
	}{
		{"create refused", func(q *quirky) {
			q.create = func(id string) error { return errors.New("no such image") }
		}},
		{"create answer lost", func(q *quirky) {
			q.create = func(id string) error { return context.DeadlineExceeded }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt, k := newQuirky(cgroup.V2)
			tc.quirk(rt)
			rep := runOn(t, context.Background(), rt, k, rt.SimContainerd)
			if rep.SetupError == "" || rep.Passed() {
				t.Errorf("setup error %q, passed %v", rep.SetupError, rep.Passed())
			}
			for _, c := range rep.Checks {
				if c.ID != checkCleanup && c.Status != NotRun {
					t.Errorf("check %d: %s after a failed setup", c.ID, c.Status)
				}
			}
			if !strings.Contains(strings.Join(rep.Removed, " "), "sandbox ") {
				t.Errorf("the sandbox was not removed: %v", rep.Removed)
			}
		})
	}
}

// TestLeftoversFail: when the cleanup cannot remove the sandbox, the
// report names it and the run fails.
func TestLeftoversFail(t *testing.T) {
	rt, k := newQuirky(cgroup.V1)
	rt.removeSandbox = errors.New("device busy")
	rep, err := Run(context.Background(), Options{Runtime: rt, Cgroups: k, Image: "busybox"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed() || len(rep.Left) == 0 || rep.Check(checkCleanup).Status != Fail {
		t.Errorf("left %v, cleanup %s, passed %v", rep.Left, rep.Check(checkCleanup).Status, rep.Passed())
	}
	var text bytes.Buffer
	rep.WriteText(&text)
	if !strings.Contains(text.String(), "LEFT") {
		t.Errorf("the text report does not say what was left:\n%s", text.String())
	}
}

// TestSweepRemovesDeadRuns: a sandbox an earlier run left when its
// process died is removed before the run; a live run's is not.
func TestSweepRemovesDeadRuns(t *testing.T) {
	rt, k := newQuirky(cgroup.V1)
	ctx := context.Background()
	mk := func(prefix string) string {
		id, err := rt.RunPodSandbox(ctx, &runtimeapi.PodSandboxConfig{
			Metadata: &runtimeapi.PodSandboxMetadata{Name: prefix, Namespace: Namespace, Uid: prefix},
			Labels:   map[string]string{LabelRun: prefix},
		}, "")
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	dead := mk(PrefixBase + "-2147483646-deadbeef") // no such process
	live := mk(fmt.Sprintf("%s-%d-cafe", PrefixBase, 1))
	rep := runOn(t, ctx, rt, k, rt.SimContainerd)
	if len(rep.Swept) != 1 || !strings.Contains(rep.Swept[0], dead) {
		t.Errorf("swept %v, want the dead run's sandbox %s", rep.Swept, dead)
	}
	sbs, _ := rt.ListPodSandbox(ctx, nil)
	if len(sbs) != 1 || sbs[0].Id != live {
		t.Errorf("sandboxes after the run: %v, want only the live run's %s", sbs, live)
	}
}

// TestRunNeedsOptions: the options a run cannot do without are named, and
// a prefix no cgroup manager would take is refused.
func TestRunNeedsOptions(t *testing.T) {
	rt, k := newQuirky(cgroup.V1)
	for _, opts := range []Options{{Cgroups: k, Image: "x"}, {Runtime: rt, Image: "x"}, {Runtime: rt, Cgroups: k}, {Runtime: rt, Cgroups: k, Image: "x", Prefix: "a/../b"}} {
		if _, err := Run(context.Background(), opts); err == nil {
			t.Errorf("Run(%+v) gave no error", opts)
		}
	}
}

// TestConformWithTheSystemdDriver: on a runtime with the systemd cgroup
// driver the run's pod cgroup is the kubelet's chain of slices below the
// prefix's slice, the container's cgroup is its scope there, the checks
// pass (the in-memory runtime rounds the quota as runc 1.3 does, which the
// checks accept with this driver), and the cleanup leaves nothing of the
// slice.
func TestConformWithTheSystemdDriver(t *testing.T) {
	k := cgroup.NewSimKernel(cgroup.V2)
	sim := cri.NewSimContainerd(k, cri.WithDriver(cgroup.DriverSystemd))
	var progress strings.Builder
	rep, err := Run(context.Background(), Options{Runtime: sim, Cgroups: k, Image: "busybox", OOMWait: 200 * time.Millisecond, CgroupDriver: cgroup.DriverSystemd,
		Progress: func(line string) { progress.WriteString(line + "\n") }})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	rep.WriteText(&text)
	if !rep.Passed() || rep.CgroupDriver != cgroup.DriverSystemd {
		t.Errorf("with the systemd driver: passed %v, driver %q; want a pass with systemd\n%s", rep.Passed(), rep.CgroupDriver, text.String())
	}
	top := strings.ReplaceAll(rep.Prefix, "-", "_") + ".slice"
	if p := progress.String(); !strings.Contains(p, "in cgroup "+top+"/") || !strings.Contains(p, "-kubepods-burstable-pod") || !strings.Contains(p, "/cri-containerd-") {
		t.Errorf("the container's cgroup is not the scope in the kubelet's slices below %s:\n%s", top, p)
	}
	if !strings.Contains(text.String(), "cgroup v2 (systemd driver)") {
		t.Errorf("the report does not name the driver:\n%s", text.String())
	}
	for _, p := range k.Paths() {
		if strings.HasPrefix(p, top) {
			t.Errorf("cgroup %s left behind", p)
		}
	}
	// The quota a systemd driver's runtime may write is accepted, the
	// exact one too; another is not.
	r := &run{opts: Options{CgroupDriver: cgroup.DriverSystemd}, cg: k, weights: map[uint64]uint64{}}
	want := &runtimeapi.LinuxContainerResources{CpuQuota: 41700, CpuPeriod: 100000, MemoryLimitInBytes: 1 << 20}
	for got, ok := range map[string]bool{"41700 100000": true, "42000 100000": true, "43000 100000": false} {
		if bad := r.fileMismatches(want, map[string]string{"cpu.max": got, "memory.max": "1048576"}); (len(bad) == 0) != ok {
			t.Errorf("cpu.max %q for quota 41700 with the systemd driver: mismatches %v, want accepted %v", got, bad, ok)
		}
	}
	r.opts.CgroupDriver = cgroup.DriverCgroupfs
	if bad := r.fileMismatches(want, map[string]string{"cpu.max": "42000 100000", "memory.max": "1048576"}); len(bad) == 0 {
		t.Error("the rounded quota passes with the cgroupfs driver")
	}
}

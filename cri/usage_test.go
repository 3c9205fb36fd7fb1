package cri

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri/internal/critest"
)

// execOnly hides every method of the runtime but those of Runtime, as a
// remote runtime would offer them, and records the commands it runs.
type execOnly struct {
	Runtime
	cmds   [][]string
	stderr string
	err    error
}

func (e *execOnly) ExecSync(tctx context.Context, id string, cmd []string, timeout time.Duration) ([]byte, []byte, error) {
	e.cmds = append(e.cmds, cmd)
	if e.err != nil {
		return nil, []byte(e.stderr), e.err
	}
	return e.Runtime.ExecSync(tctx, id, cmd, timeout)
}

func TestSetMemoryUsageThroughDecoratorsIsDirect(t *testing.T) {
	mem, cg := newSimContainerd(t, cgroup.V2)
	faults := NewFaultInjector(mem)
	rec := NewRecorder(faults)
	sb := critest.SandboxConfig("web", "default", "uid-a", podParent)
	id := critest.MustStart(t, rec, critest.MustRun(t, rec, sb), sb, critest.ContainerConfig(sb, "app", 0, nil))
	rec.Reset()
	// An ExecSync fault would show if the usage went through ExecSync.
	faults.Inject(Fault{Method: "ExecSync"})

	if err := SetMemoryUsage(tctx, rec, id, 5*mi); err != nil {
		t.Fatal(err)
	}
	if u, _ := cg.MemoryUsage(podParent + "/" + id); u != 5*mi {
		t.Errorf("usage = %d, want %d", u, 5*mi)
	}
	if n := len(faults.Pending()); n != 1 {
		t.Errorf("%d faults pending, want the ExecSync fault untouched", n)
	}
	if calls := rec.Calls(); len(calls) != 0 {
		t.Errorf("setting usage recorded calls: %v", callLines(calls))
	}
}

func TestSetMemoryUsageThroughExecSync(t *testing.T) {
	mem, cg := newSimContainerd(t, cgroup.V1)
	sb := critest.SandboxConfig("web", "default", "uid-a", podParent)
	id := critest.MustStart(t, mem, critest.MustRun(t, mem, sb), sb, critest.ContainerConfig(sb, "app", 0, nil))
	rt := &execOnly{Runtime: mem}

	if err := SetMemoryUsage(tctx, rt, id, 3*mi); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"sh", "-c", "rm -f /dev/shm/resizelet-usage-ctr-1; head -c 3145728 /dev/zero > /dev/shm/resizelet-usage-ctr-1"}}
	if diff := cmp.Diff(want, rt.cmds); diff != "" {
		t.Errorf("commands run (-want +got):\n%s", diff)
	}
	if u, _ := cg.MemoryUsage(podParent + "/" + id); u != 3*mi {
		t.Errorf("usage after the command = %d, want %d", u, 3*mi)
	}
}

func TestSetMemoryUsageReportsExecFailure(t *testing.T) {
	mem, _ := newSimContainerd(t, cgroup.V1)
	execErr := errors.New("command terminated with exit code 1")
	rt := &execOnly{Runtime: mem, err: execErr, stderr: "head: write error: No space left on device\n"}
	err := SetMemoryUsage(tctx, rt, "abc123", 100*mi)
	if !errors.Is(err, execErr) || !strings.Contains(err.Error(), "No space left on device") || !strings.Contains(err.Error(), "abc123") {
		t.Errorf("err = %v, want the exec error with its stderr and the container ID", err)
	}
	if err := SetMemoryUsage(tctx, rt, "abc123", -1); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("negative usage: err = %v, want ErrInvalidArgument", err)
	}
	if len(rt.cmds) != 1 {
		t.Errorf("%d commands run, want 1 (a negative usage must not reach the runtime)", len(rt.cmds))
	}
}

func TestUsageFileNeedsNoQuoting(t *testing.T) {
	tests := map[string]string{
		"0123abcdef":  "/dev/shm/resizelet-usage-0123abcdef",
		"ctr-1":       "/dev/shm/resizelet-usage-ctr-1",
		"a b;c$(x)/y": "/dev/shm/resizelet-usage-a_b_c__x__y",
	}
	for id, want := range tests {
		if got := usageFile(id); got != want {
			t.Errorf("usageFile(%q) = %q, want %q", id, got, want)
		}
		if n, ok := parseUsageCommand(id, usageCommand(id, 42)); !ok || n != 42 {
			t.Errorf("parseUsageCommand(usageCommand(%q, 42)) = %d, %v; want 42, true", id, n, ok)
		}
	}
}

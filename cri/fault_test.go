package cri

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri/internal/critest"
)

// twoPods sets up pods default/web (containers app and side) and prod/db
// (container pg), all running.
type twoPods struct {
	mem                 *SimContainerd
	webSB, dbSB         string
	app, side, pg       string
	webConfig, dbConfig *runtimeapi.PodSandboxConfig
	containerByName     map[string]string
}

func newTwoPods(t *testing.T) *twoPods {
	t.Helper()
	mem, _ := newSimContainerd(t, cgroup.V2)
	p := &twoPods{mem: mem}
	p.webConfig = critest.SandboxConfig("web", "default", "uid-a", podParent)
	p.dbConfig = critest.SandboxConfig("db", "prod", "uid-b", "kubepods/poduid-b")
	p.webSB, p.dbSB = critest.MustRun(t, mem, p.webConfig), critest.MustRun(t, mem, p.dbConfig)
	p.app = critest.MustStart(t, mem, p.webSB, p.webConfig, critest.ContainerConfig(p.webConfig, "app", 0, nil))
	p.side = critest.MustStart(t, mem, p.webSB, p.webConfig, critest.ContainerConfig(p.webConfig, "side", 0, nil))
	p.pg = critest.MustStart(t, mem, p.dbSB, p.dbConfig, critest.ContainerConfig(p.dbConfig, "pg", 0, nil))
	p.containerByName = map[string]string{"web/app": p.app, "web/side": p.side, "db/pg": p.pg}
	return p
}

func quotaUpdate(q int64) *runtimeapi.ContainerResources {
	return &runtimeapi.ContainerResources{Linux: &runtimeapi.LinuxContainerResources{CpuQuota: q, CpuPeriod: 100000}}
}

func TestFaultByMethodFailsTimesCallsWithoutReachingTheRuntime(t *testing.T) {
	p := newTwoPods(t)
	f := NewFaultInjector(p.mem)
	boom := errors.New("boom")
	f.Inject(Fault{Method: "UpdateContainerResources", Err: boom, Times: 2})

	for i, q := range []int64{20000, 30000} {
		if err := f.UpdateContainerResources(tctx, p.app, quotaUpdate(q)); !errors.Is(err, boom) {
			t.Fatalf("call %d: err = %v, want boom", i+1, err)
		}
		if got := status(t, p.mem, p.app).Resources.GetLinux().GetCpuQuota(); got != 0 {
			t.Errorf("call %d reached the runtime: stored quota %d", i+1, got)
		}
	}
	if err := f.UpdateContainerResources(tctx, p.app, quotaUpdate(40000)); err != nil {
		t.Fatalf("third call: %v, want success", err)
	}
	if got := status(t, p.mem, p.app).Resources.GetLinux().GetCpuQuota(); got != 40000 {
		t.Errorf("stored quota after the third call = %d, want 40000", got)
	}
	if pending := f.Pending(); len(pending) != 0 {
		t.Errorf("Pending = %v, want none", pending)
	}
	// Other methods were never affected.
	if _, err := f.ContainerStatus(tctx, p.app, false); err != nil {
		t.Errorf("ContainerStatus: %v", err)
	}
}

func TestFaultMatchesPodAndContainer(t *testing.T) {
	tests := []struct {
		name       string
		fault      Fault
		wantFailed map[string]bool // container (pod/name) or sandbox (pod) that fail
	}{
		{"pod name", Fault{Method: "UpdateContainerResources", PodName: "db"}, map[string]bool{"db/pg": true}},
		{"pod namespace", Fault{Method: "UpdateContainerResources", PodNamespace: "prod"}, map[string]bool{"db/pg": true}},
		{"pod and container", Fault{Method: "UpdateContainerResources", PodName: "web", ContainerName: "side"}, map[string]bool{"web/side": true}},
		{"container in any pod", Fault{Method: "UpdateContainerResources", ContainerName: "app"}, map[string]bool{"web/app": true}},
		{"namespace mismatch", Fault{Method: "UpdateContainerResources", PodName: "web", PodNamespace: "prod"}, map[string]bool{}},
		{"sandbox by pod", Fault{Method: "UpdatePodSandboxResources", PodName: "db"}, map[string]bool{"db": true}},
		{"container name never matches a sandbox call", Fault{Method: "UpdatePodSandboxResources", ContainerName: "pg"}, map[string]bool{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newTwoPods(t)
			f := NewFaultInjector(p.mem)
			tt.fault.Times = 10
			f.Inject(tt.fault)
			got := map[string]bool{}
			for _, key := range []string{"web/app", "web/side", "db/pg"} {
				if err := f.UpdateContainerResources(tctx, p.containerByName[key], quotaUpdate(50000)); err != nil {
					if !errors.Is(err, ErrInjected) {
						t.Fatalf("%s: unexpected error %v", key, err)
					}
					got[key] = true
				}
			}
			for pod, sb := range map[string]string{"web": p.webSB, "db": p.dbSB} {
				if _, err := f.UpdatePodSandboxResources(tctx, &runtimeapi.UpdatePodSandboxResourcesRequest{PodSandboxId: sb}); err != nil {
					if !errors.Is(err, ErrInjected) {
						t.Fatalf("%s: unexpected error %v", pod, err)
					}
					got[pod] = true
				}
			}
			for key := range map[string]bool{"web/app": true, "web/side": true, "db/pg": true, "web": true, "db": true} {
				if got[key] != tt.wantFailed[key] {
					t.Errorf("%s failed = %v, want %v", key, got[key], tt.wantFailed[key])
				}
			}
		})
	}
}

func TestFaultsAreUsedInInjectionOrder(t *testing.T) {
	p := newTwoPods(t)
	f := NewFaultInjector(p.mem)
	errDB, errFirst, errSecond := errors.New("db only"), errors.New("first"), errors.New("second")
	f.Inject(Fault{Method: "StopContainer", PodName: "db", Err: errDB})
	f.Inject(Fault{Method: "StopContainer", Err: errFirst})
	f.Inject(Fault{Method: "StopContainer", Err: errSecond})

	// A web call skips the db fault and uses the first general one.
	if err := f.StopContainer(tctx, p.app, 0); !errors.Is(err, errFirst) {
		t.Errorf("first web stop: err = %v, want %v", err, errFirst)
	}
	// A db call uses the db fault, injected before the remaining general one.
	if err := f.StopContainer(tctx, p.pg, 0); !errors.Is(err, errDB) {
		t.Errorf("db stop: err = %v, want %v", err, errDB)
	}
	if err := f.StopContainer(tctx, p.pg, 0); !errors.Is(err, errSecond) {
		t.Errorf("second db stop: err = %v, want %v", err, errSecond)
	}
	if err := f.StopContainer(tctx, p.pg, 0); err != nil {
		t.Errorf("stop after every fault is used: %v", err)
	}
}

func TestFaultPendingCountsDown(t *testing.T) {
	p := newTwoPods(t)
	f := NewFaultInjector(p.mem)
	f.Inject(Fault{Method: "ContainerStatus", PodName: "web", Times: 3})
	f.Inject(Fault{Method: "StartContainer"})
	if _, err := f.ContainerStatus(tctx, p.app, false); !errors.Is(err, ErrInjected) {
		t.Fatalf("err = %v, want ErrInjected", err)
	}
	pending := f.Pending()
	if len(pending) != 2 || pending[0].Times != 2 || pending[1].Times != 1 || pending[1].Err != ErrInjected {
		t.Errorf("Pending = %+v, want ContainerStatus x2 then StartContainer x1 with ErrInjected", pending)
	}
}

func TestFaultOnCreateAndRun(t *testing.T) {
	mem, _ := newSimContainerd(t, cgroup.V2)
	f := NewFaultInjector(mem)
	f.Inject(Fault{Method: "RunPodSandbox", PodName: "db"})
	f.Inject(Fault{Method: "CreateContainer", PodName: "web", ContainerName: "side"})

	web := critest.SandboxConfig("web", "default", "uid-a", podParent)
	db := critest.SandboxConfig("db", "prod", "uid-b", "kubepods/poduid-b")
	if _, err := f.RunPodSandbox(tctx, db, ""); !errors.Is(err, ErrInjected) {
		t.Errorf("RunPodSandbox db: err = %v, want ErrInjected", err)
	}
	webID := critest.MustRun(t, f, web)
	critest.MustCreate(t, f, webID, web, critest.ContainerConfig(web, "app", 0, nil))
	if _, err := f.CreateContainer(tctx, webID, critest.ContainerConfig(web, "side", 0, nil), web); !errors.Is(err, ErrInjected) {
		t.Errorf("CreateContainer side: err = %v, want ErrInjected", err)
	}
	sbs, _ := mem.ListPodSandbox(tctx, nil)
	cs, _ := mem.ListContainers(tctx, nil)
	if len(sbs) != 1 || len(cs) != 1 || cs[0].Metadata.Name != "app" {
		t.Errorf("runtime holds %d sandboxes and %v; want only web and app (failed calls must not reach it)", len(sbs), cs)
	}
}

func TestFaultNamesFromMetadataWithoutLabels(t *testing.T) {
	mem, _ := newSimContainerd(t, cgroup.V2)
	sb := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "web", Namespace: "default", Uid: "uid-a"},
		Linux:    &runtimeapi.LinuxPodSandboxConfig{CgroupParent: podParent},
	}
	sbID := critest.MustRun(t, mem, sb)
	app := critest.MustStart(t, mem, sbID, sb, &runtimeapi.ContainerConfig{Metadata: &runtimeapi.ContainerMetadata{Name: "app"}})
	other := critest.MustStart(t, mem, sbID, sb, &runtimeapi.ContainerConfig{Metadata: &runtimeapi.ContainerMetadata{Name: "other"}})

	f := NewFaultInjector(mem)
	f.Inject(Fault{Method: "StopContainer", PodName: "web", PodNamespace: "default", ContainerName: "app", Times: 5})
	if err := f.StopContainer(tctx, other, 0); err != nil {
		t.Errorf("stop other: %v, want success", err)
	}
	if err := f.StopContainer(tctx, app, 0); !errors.Is(err, ErrInjected) {
		t.Errorf("stop app: err = %v, want ErrInjected (names from metadata)", err)
	}
}

func TestFaultInjectorConcurrentUse(t *testing.T) {
	p := newTwoPods(t)
	f := NewFaultInjector(p.mem)
	const faults = 50
	f.Inject(Fault{Method: "ContainerStatus", PodName: "web", Times: faults})

	var failed atomic.Int64
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids := []string{p.app, p.side, p.pg}
			for i := range 30 {
				id := ids[(i+w)%len(ids)]
				_, err := f.ContainerStatus(tctx, id, false)
				switch {
				case errors.Is(err, ErrInjected):
					if id == p.pg {
						t.Errorf("a db container matched a web fault")
					}
					failed.Add(1)
				case err != nil:
					t.Errorf("ContainerStatus(%s): %v", id, err)
				}
			}
		}()
	}
	wg.Wait()
	// 8 workers x 30 calls make 160 web calls, more than the fault's times.
	if got := failed.Load(); got != faults {
		t.Errorf("%d calls failed, want exactly %d", got, faults)
	}
}

package core

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/allocation"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/qos"
)

// world is what the core's flow tests perform batches against: a few
// maps that answer the core's actions plausibly (cgroups hold what was
// written, containers run with what they were given), a log of every
// action performed, and failures to inject by action. It is deliberately
// small: the simulators in packages cgroup and cri answer like the kernel
// and containerd, and the driver's tests run the core on them.
type world struct {
	t       *testing.T
	c       *Core
	now     time.Time
	cgroups map[string]cgconfig.Values
	usage   map[string]int64
	ctrs    map[string]*runtimeapi.ContainerStatus
	nextID  int
	// fail, when it returns an error for an action, makes that action fail.
	fail func(a Action) error
	log  []string
	// events and statuses are what reached the API server.
	events   []Event
	statuses map[string]*v1.PodStatus
	// What survives a kubelet restart: the checkpoints and the runtime's
	// sandboxes and containers.
	cfg        NodeConfig
	allocated  map[k8stypes.UID]allocation.PodResources
	actuated   map[k8stypes.UID]allocation.PodResources
	sandboxes  []*runtimeapi.PodSandbox
	containers map[string]*runtimeapi.Container
}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// newWorld starts a core on cfg with nothing on the node.
func newWorld(t *testing.T, cfg NodeConfig) *world {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, c: c, now: epoch, cgroups: map[string]cgconfig.Values{}, usage: map[string]int64{},
		ctrs: map[string]*runtimeapi.ContainerStatus{}, statuses: map[string]*v1.PodStatus{}, cfg: cfg,
		allocated: map[k8stypes.UID]allocation.PodResources{}, actuated: map[k8stypes.UID]allocation.PodResources{},
		containers: map[string]*runtimeapi.Container{}}
	w.run(Start{Now: w.now})
	return w
}

// run feeds in and performs batches until the core is quiet.
func (w *world) run(in Input) {
	w.t.Helper()
	rd, err := w.c.Step(in)
	if err != nil {
		w.t.Fatalf("step %T: %v", in, err)
	}
	for i := 0; rd.Batch != nil; i++ {
		if i > 10000 {
			w.t.Fatal("the core does not become quiet")
		}
		res := w.perform(rd.Batch)
		if rd, err = w.c.Step(BatchDone{ID: rd.Batch.ID, Results: res, Now: w.now}); err != nil {
			w.t.Fatalf("batch done: %v", err)
		}
	}
	if !w.c.Quiet() {
		w.t.Fatal("no batch returned but the core is not quiet")
	}
}

func (w *world) perform(b *Batch) []Result {
	var out []Result
	for _, a := range b.Actions {
		w.log = append(w.log, a.String())
		var r Result
		if w.fail != nil {
			if err := w.fail(a); err != nil {
				// A failed action has no effect.
				r = Result{Err: err}
				w.log[len(w.log)-1] += " -> " + err.Error()
			}
		}
		if r.Err == nil {
			r = w.do(a)
		}
		out = append(out, r)
		if r.Err != nil && !b.KeepGoing && StopsOnFailure(a) {
			break
		}
	}
	return out
}

func (w *world) do(a Action) Result {
	switch a := a.(type) {
	case ReadCgroupExists:
		_, ok := w.cgroups[a.Path]
		return Result{Exists: ok}
	case CreateCgroup:
		if _, ok := w.cgroups[a.Path]; !ok {
			w.cgroups[a.Path] = cgconfig.Values{}
		}
	case SetCgroup:
		v := w.cgroups[a.Path]
		for _, f := range []struct{ dst, src **int64 }{{&v.CPUQuota, &a.Values.CPUQuota}, {&v.MemoryLimit, &a.Values.MemoryLimit}} {
			if *f.src != nil {
				*f.dst = *f.src
			}
		}
		for _, f := range []struct{ dst, src **uint64 }{{&v.CPUShares, &a.Values.CPUShares}, {&v.CPUWeight, &a.Values.CPUWeight}, {&v.CPUPeriod, &a.Values.CPUPeriod}} {
			if *f.src != nil {
				*f.dst = *f.src
			}
		}
		w.cgroups[a.Path] = v
	case ReadCgroup:
		return Result{Values: w.cgroups[a.Path]}
	case ReadMemoryUsage:
		return Result{Usage: w.usage[a.Path]}
	case DeleteCgroup:
		delete(w.cgroups, a.Path)
	case RunPodSandbox:
		w.nextID++
		id := fmt.Sprintf("sb-%d", w.nextID)
		w.sandboxes = append(w.sandboxes, &runtimeapi.PodSandbox{Id: id, Metadata: a.Config.GetMetadata(), State: runtimeapi.PodSandboxState_SANDBOX_READY})
		return Result{ID: id}
	case CreateContainer:
		w.nextID++
		id := fmt.Sprintf("ctr-%d", w.nextID)
		w.containers[id] = &runtimeapi.Container{Id: id, PodSandboxId: a.SandboxID, Metadata: a.Config.GetMetadata()}
		w.ctrs[id] = &runtimeapi.ContainerStatus{Id: id, State: runtimeapi.ContainerState_CONTAINER_CREATED,
			Resources: &runtimeapi.ContainerResources{Linux: a.Config.GetLinux().GetResources()}}
		return Result{ID: id}
	case StartContainer:
		w.ctrs[a.ID].State = runtimeapi.ContainerState_CONTAINER_RUNNING
	case StopContainer:
		c, ok := w.ctrs[a.ID]
		if !ok {
			return Result{Err: errors.New("not found"), NotFound: true}
		}
		c.State = runtimeapi.ContainerState_CONTAINER_EXITED
	case RemoveContainer:
		if _, ok := w.ctrs[a.ID]; !ok {
			return Result{Err: errors.New("not found"), NotFound: true}
		}
		delete(w.ctrs, a.ID)
		delete(w.containers, a.ID)
	case ReadContainerStatus:
		return Result{Status: w.ctrs[a.ID]}
	case ReadContainerStats:
		return Result{Stats: &runtimeapi.ContainerStats{Memory: &runtimeapi.MemoryUsage{UsageBytes: &runtimeapi.UInt64Value{Value: uint64(w.usage[a.ID])}}}}
	case UpdateContainerResources:
		w.ctrs[a.ID].Resources = a.Resources
	case WriteAllocated:
		w.allocated[a.UID] = a.Resources.DeepCopy()
	case WriteActuatedContainer:
		r := w.actuated[a.UID].DeepCopy()
		if r.ContainerResources == nil {
			r.ContainerResources = map[string]v1.ResourceRequirements{}
		}
		r.ContainerResources[a.Name] = a.Resources
		w.actuated[a.UID] = r
	case WriteActuated:
		w.actuated[a.UID] = a.Resources.DeepCopy()
	case RecordEvent:
		w.events = append(w.events, *a.Event)
	case WriteStatus:
		w.statuses[a.Name] = a.Status
	}
	return Result{}
}

// restart is a kubelet restart: a new core on what survives, the API
// server's pods (spec from the old core, status as last written), the
// checkpoints and the runtime's listing.
func (w *world) restart() {
	w.t.Helper()
	var pods []*v1.Pod
	for _, uid := range w.c.order {
		ps := w.c.pods[uid]
		p := ps.pod().DeepCopy()
		if st, ok := w.statuses[p.Name]; ok {
			p.Status = *st.DeepCopy()
		}
		pods = append(pods, p)
	}
	var containers []*runtimeapi.Container
	for _, id := range slices.Sorted(maps.Keys(w.containers)) {
		containers = append(containers, w.containers[id])
	}
	c, err := New(w.cfg)
	if err != nil {
		w.t.Fatal(err)
	}
	w.c = c
	w.run(Start{Pods: pods, Allocated: w.allocated, Actuated: w.actuated, Sandboxes: w.sandboxes, Containers: containers, Now: w.now})
}

// add adds a pod and runs until quiet.
func (w *world) add(pod *v1.Pod) {
	w.t.Helper()
	w.run(PodAdded{Pod: pod, Now: w.now})
}

// resize gives pod new container resources (a new generation) and runs
// until quiet.
func (w *world) resize(name string, containers ...v1.ResourceRequirements) {
	w.t.Helper()
	p, ok := w.c.APIPod("default", name)
	if !ok {
		w.t.Fatalf("no pod %s", name)
	}
	for i, r := range containers {
		p.Spec.Containers[i].Resources = r
	}
	p.Generation++
	w.run(ResizeRequested{Pod: p, Now: w.now})
}

// eventLines returns the events from index from as "Type Reason Message".
func (w *world) eventLines(from int) []string {
	var out []string
	for _, e := range w.events[from:] {
		out = append(out, e.Type+" "+e.Reason+" "+e.Message)
	}
	return out
}

// logSince returns the actions performed since index from, without the
// reads that every sync makes.
func (w *world) logSince(from int) []string {
	var out []string
	for _, l := range w.log[from:] {
		if strings.HasPrefix(l, "cgroup exists? ") || strings.HasPrefix(l, "ContainerStatus ") {
			continue
		}
		out = append(out, l)
	}
	return out
}

// condition returns the pod's resize condition of type t, or nil.
func (w *world) condition(name string, t v1.PodConditionType) *v1.PodCondition {
	for _, c := range w.statuses[name].Conditions {
		if c.Type == t {
			return &c
		}
	}
	return nil
}

// testPod is a pod with one container per requirements, named c1, c2, ...
func testPod(name string, containers ...v1.ResourceRequirements) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: k8stypes.UID("uid-" + name), Generation: 1}}
	for i, r := range containers {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: fmt.Sprintf("c%d", i+1), Image: "img", Resources: r})
	}
	p.Status.QOSClass = qos.PodQOSClass(p)
	p.Status.Phase = v1.PodPending
	return p
}

package resize

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/allocation"
	"github.com/resizelet/resizelet/allocation/state"
	"github.com/resizelet/resizelet/cri"
)

// gatedRuntime holds StopContainer, once armed, until gate is closed.
type gatedRuntime struct {
	cri.Runtime
	armed   atomic.Bool
	gate    chan struct{}
	stopped chan struct{}
}

func (r *gatedRuntime) StopContainer(ctx context.Context, id string, timeout int64) error {
	if r.armed.CompareAndSwap(true, false) {
		close(r.stopped)
		<-r.gate
	}
	return r.Runtime.StopContainer(ctx, id, timeout)
}

// gatedState holds the write of one pod's record, once armed, until gate
// is closed.
type gatedState struct {
	state.State
	armed   atomic.Pointer[types.UID]
	gate    chan struct{}
	writing chan struct{}
}

func (s *gatedState) Set(uid types.UID, r allocation.PodResources) error {
	if u := s.armed.Load(); u != nil && *u == uid && s.armed.CompareAndSwap(u, nil) {
		close(s.writing)
		<-s.gate
	}
	return s.State.Set(uid, r)
}

// TestRetryWhileItsPodIsTornDown: a pending resize is admitted by a retry
// while the pod's teardown, started before, is under way, and the
// teardown ends while the admitted allocation is being checkpointed. The
// core must not touch the gone pod (it used to panic) and must not leave
// the allocation record of a pod that no longer exists.
func TestRetryWhileItsPodIsTornDown(t *testing.T) {
	tn := newTestNode(t, smallNode())
	rt := &gatedRuntime{Runtime: tn.calls, gate: make(chan struct{}), stopped: make(chan struct{})}
	allocated := &gatedState{State: state.NewMemory(), gate: make(chan struct{}), writing: make(chan struct{})}
	tn.deps.Runtime, tn.deps.CheckpointDir, tn.deps.Allocated, tn.deps.Actuated = rt, "", allocated, state.NewMemory()
	tn.restart()
	for _, p := range []*v1.Pod{cpuPod("a", "3"), cpuPod("b", "1")} {
		if _, err := tn.node.AddPod(tn.ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	mustResize(t, tn, "b", cpuPatch("2")) // Deferred: a holds 3 of 4
	if c := pendingOf(t, tn.pod("b")); c == nil || c.Reason != "Deferred" {
		t.Fatalf("b: %+v, want Deferred", c)
	}
	uid := tn.info("b").UID
	rt.armed.Store(true)
	allocated.armed.Store(&uid)

	deleted := make(chan error, 1)
	go func() { deleted <- tn.node.DeletePod(tn.ctx, "default", "b") }()
	<-rt.stopped // b's teardown has started and waits in StopContainer

	resized := make(chan error, 1)
	go func() {
		resized <- errOf(tn.node.Resize(tn.ctx, ResizeOp{Namespace: "default", Name: "a", Patch: []byte(cpuPatch("1"))}))
	}()
	<-allocated.writing // the retry admitted b's resize and checkpoints it

	close(rt.gate) // the teardown goes on and ends: b is forgotten
	for {
		if _, err := tn.node.Pod("default", "b"); errors.Is(err, ErrPodNotFound) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(allocated.gate) // now the checkpoint write returns
	if err := <-deleted; err != nil {
		t.Fatalf("delete b: %v", err)
	}
	if err := <-resized; err != nil {
		t.Fatalf("resize a: %v", err)
	}
	if _, ok := allocated.Get(uid); ok {
		t.Fatalf("the allocated checkpoint still has a record for b, which is gone")
	}
	if info := tn.info("a"); qty(info.Allocated["c"].Requests, v1.ResourceCPU) != "1" {
		t.Fatalf("a's allocation: %+v", info.Allocated)
	}
}

package core

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
)

// TestStepRefusesWhatItCannotTake: inputs out of order or about unknown
// things are errors that change nothing.
func TestStepRefusesWhatItCannotTake(t *testing.T) {
	c, err := New(NodeConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Step(Tick{Now: epoch}); !errors.Is(err, ErrNotStarted) {
		t.Errorf("Tick before Start: %v, want ErrNotStarted", err)
	}
	if _, err := c.Step(Start{Now: epoch}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Step(Start{Now: epoch}); !errors.Is(err, ErrStarted) {
		t.Errorf("second Start: %v, want ErrStarted", err)
	}
	if _, err := c.Step(BatchDone{ID: 42}); !errors.Is(err, ErrUnknownBatch) {
		t.Errorf("unknown batch: %v, want ErrUnknownBatch", err)
	}
	if _, err := c.Step(DeleteRequested{UID: "nope"}); !errors.Is(err, ErrUnknownPod) {
		t.Errorf("delete of an unknown pod: %v, want ErrUnknownPod", err)
	}
	if _, err := c.Step(ResizeRequested{Pod: testPod("nope")}); !errors.Is(err, ErrUnknownPod) {
		t.Errorf("resize of an unknown pod: %v, want ErrUnknownPod", err)
	}
	rd, err := c.Step(PodAdded{Pod: testPod("p", resources("100m", "", "", "")), Now: epoch})
	if err != nil || rd.Batch == nil {
		t.Fatalf("PodAdded: %v, %v", rd, err)
	}
	if _, err := c.Step(PodAdded{Pod: testPod("p"), Now: epoch}); err == nil {
		t.Error("a second PodAdded of the same pod was taken")
	}
	too := make([]Result, len(rd.Batch.Actions)+1)
	if _, err := c.Step(BatchDone{ID: rd.Batch.ID, Results: too}); !errors.Is(err, ErrTooManyResults) {
		t.Errorf("too many results: %v, want ErrTooManyResults", err)
	}
	// The batch is still in flight after the refused report.
	if c.InFlight() != 1 {
		t.Errorf("in flight = %d, want 1", c.InFlight())
	}
}

// TestAllocationTasksRunAlone: while an allocation task waits for its
// checkpoint write, no pod sync starts; once it is done, syncs do. Syncs of
// different pods may be in flight together, one per pod.
func TestAllocationTasksRunAlone(t *testing.T) {
	c, err := New(NodeConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Step(Start{Now: epoch}); err != nil {
		t.Fatal(err)
	}
	rd, err := c.Step(PodAdded{Pod: testPod("a", resources("100m", "", "", "")), Now: epoch})
	if err != nil {
		t.Fatal(err)
	}
	admitA := rd.Batch
	if _, ok := admitA.Actions[0].(WriteAllocated); !ok {
		t.Fatalf("first batch = %v, want the allocation checkpoint", admitA.Actions)
	}
	if rd, _ := c.Step(Poll{}); rd.Batch != nil {
		t.Fatalf("work started beside an allocation task: %v", rd.Batch.Actions)
	}
	// Admitting a: the retry runs (no I/O), then a's sync starts.
	rd, _ = c.Step(BatchDone{ID: admitA.ID, Results: []Result{{}}, Now: epoch})
	if rd.Batch == nil || !strings.HasPrefix(rd.Batch.Actions[0].String(), "cgroup exists?") {
		t.Fatalf("after the admission: %v, want a's sync", rd.Batch)
	}
	syncA := rd.Batch
	if rd, _ := c.Step(Poll{}); rd.Batch != nil {
		t.Fatalf("a second batch for a while its sync is in flight: %v", rd.Batch.Actions)
	}
	rd, _ = c.Step(PodAdded{Pod: testPod("b", resources("100m", "", "", "")), Now: epoch})
	if rd.Batch == nil {
		t.Fatal("b's admission did not start beside a's sync")
	}
	rd, _ = c.Step(BatchDone{ID: rd.Batch.ID, Results: []Result{{}}, Now: epoch})
	if rd.Batch == nil || !strings.Contains(rd.Batch.Actions[0].String(), "uid-b") {
		t.Fatalf("b's sync did not start beside a's: %v", rd.Batch)
	}
	if c.InFlight() != 2 {
		t.Errorf("in flight = %d, want a's and b's syncs", c.InFlight())
	}
	_ = syncA
}

// TestDeletePod: a teardown stops and removes the containers, the sandbox
// and the cgroup, whatever fails on the way; a failure keeps the pod (and
// says why) so that another delete can finish; success forgets the pod,
// its checkpoints and its API object, and retries the pending resizes.
func TestDeletePod(t *testing.T) {
	w := newWorld(t, NodeConfig{})
	w.add(testPod("p", resources("100m", "100Mi", "", ""), resources("100m", "100Mi", "", "")))
	w.fail = failOn("StopContainer c1", 1, errors.New("stuck"))
	lg := len(w.log)
	w.run(DeleteRequested{UID: "uid-p", Now: w.now})
	want := []string{
		"event Normal Killing", "StopContainer c1", "event Normal Killing", "StopContainer c2",
		"RemoveContainer", "RemoveContainer", "StopPodSandbox", "RemovePodSandbox", "cgroup delete",
	}
	if diff := cmp.Diff(want, firstWords(w.logSince(lg), want)); diff != "" {
		t.Errorf("teardown (-want +got):\n%s", diff)
	}
	err := w.c.DeleteError("uid-p")
	if err == nil || !strings.Contains(err.Error(), "stop container c1: stuck") {
		t.Fatalf("DeleteError = %v", err)
	}
	if _, ok := w.c.Pod("default", "p"); !ok {
		t.Fatal("the pod was forgotten after a failed teardown")
	}
	lg = len(w.log)
	w.run(DeleteRequested{UID: "uid-p", Now: w.now})
	if err := w.c.DeleteError("uid-p"); err != nil {
		t.Fatalf("second delete: %v", err)
	}
	if _, ok := w.c.Pod("default", "p"); ok {
		t.Error("the pod is still known after its teardown")
	}
	got := w.logSince(lg)
	if n := len(got); n < 2 || got[n-2] != "checkpoint delete uid-p" || got[n-1] != "delete pod default/p" {
		t.Errorf("teardown did not end with the checkpoints and the API object: %q", got)
	}
}

// TestPodRejected: a pod that does not fit is rejected with the predicate's
// reason and message, phase Failed, and is never synced.
func TestPodRejected(t *testing.T) {
	w := newWorld(t, smallNode(""))
	w.add(testPod("big", resources("3", "", "", "")))
	st := w.statuses["big"]
	if st == nil || st.Phase != v1.PodFailed || st.Reason != "OutOfcpu" ||
		st.Message != "Pod was rejected: Node didn't have enough resource: cpu, requested: 3000, used: 0, capacity: 2000" {
		t.Fatalf("status = %+v", st)
	}
	if got := prefixes(w.eventLines(0), 2); !cmp.Equal(got, []string{"Warning OutOfcpu"}) {
		t.Errorf("events = %v", w.eventLines(0))
	}
	for _, l := range w.log {
		if strings.HasPrefix(l, "cgroup") || strings.HasPrefix(l, "RunPodSandbox") {
			t.Errorf("a rejected pod was synced: %s", l)
		}
	}
}

// TestUpdateDuringAllocationWrite: a pod update that comes while the
// allocation of an earlier resize of the pod waits for its checkpoint
// write is compared with the allocation once written, as the kubelet's
// allocation manager, which holds its lock across a decision and its
// checkpoint, would compare it. A resize back to the allocation before
// the write used to be taken for a revert: the pod was left with the
// written allocation against its spec and nothing pending.
func TestUpdateDuringAllocationWrite(t *testing.T) {
	w := newWorld(t, NodeConfig{})
	w.add(testPod("p", resources("100m", "", "100m", "")))
	resized := func(cpu string, gen int64) *v1.Pod {
		p, _ := w.c.APIPod("default", "p")
		p.Spec.Containers[0].Resources = resources(cpu, "", cpu, "")
		p.Generation = gen
		return p
	}
	rd, err := w.c.Step(ResizeRequested{Pod: resized("250m", 2), Now: w.now})
	if err != nil {
		t.Fatal(err)
	}
	var write *Batch
	for rd.Batch != nil && write == nil {
		if _, ok := rd.Batch.Actions[0].(WriteAllocated); ok {
			write = rd.Batch
			break
		}
		if rd, err = w.c.Step(BatchDone{ID: rd.Batch.ID, Results: w.perform(rd.Batch), Now: w.now}); err != nil {
			t.Fatal(err)
		}
	}
	if write == nil {
		t.Fatal("the resize to 250m allocated nothing")
	}
	// Back to 100m while 250m is being written.
	back, err := w.c.Step(ResizeRequested{Pod: resized("100m", 3), Now: w.now})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []*Batch{write, back.Batch} {
		for b != nil {
			rd, err := w.c.Step(BatchDone{ID: b.ID, Results: w.perform(b), Now: w.now})
			if err != nil {
				t.Fatal(err)
			}
			b = rd.Batch
		}
	}
	w.run(Poll{})
	info, _ := w.c.Pod("default", "p")
	if got := info.Allocated["c1"].Limits[v1.ResourceCPU]; got.String() != "100m" {
		t.Fatalf("allocated cpu limit %s, want the spec's 100m", got.String())
	}
}

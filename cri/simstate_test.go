package cri

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
	"unsafe"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri/internal/critest"
)

// TestSimRecordsStayCompact pins the size of the records SimContainerd
// keeps for every sandbox and container: a field more moves them to the
// next allocation size.
func TestSimRecordsStayCompact(t *testing.T) {
	if got := unsafe.Sizeof(simContainer{}); got > 208 {
		t.Errorf("simContainer is %d bytes, want at most 208", got)
	}
	if got := unsafe.Sizeof(simSandbox{}); got > 144 {
		t.Errorf("simSandbox is %d bytes, want at most 144", got)
	}
}

// nopCgroups is a cgroup.Manager that keeps nothing, so that a heap
// measurement sees only what the runtime keeps.
type nopCgroups struct{}

func (nopCgroups) Version() cgroup.Version                           { return cgroup.V2 }
func (nopCgroups) Create(string) error                               { return nil }
func (nopCgroups) Delete(string) error                               { return nil }
func (nopCgroups) Exists(string) bool                                { return true }
func (nopCgroups) Get(string) (cgroup.Values, error)                 { return cgroup.Values{}, nil }
func (nopCgroups) Set(string, cgroup.Values) ([]cgroup.Write, error) { return nil, nil }
func (nopCgroups) ReadFile(string, string) (string, error)           { return "0", nil }
func (nopCgroups) MemoryUsage(string) (int64, error)                 { return 0, nil }

// TestSimContainerdHeap runs 110 pods with 232 containers the way the
// kubelet does, reads every status, and measures the heap the runtime
// keeps: it must keep neither the configs it was given nor a status for
// every container. The configs and all they hold (about 190 KiB) and a
// status per container (about 90 KiB) would each break the bound. It
// measures three runtimes and takes the least, since what other
// goroutines allocate meanwhile can only add to a measurement.
func TestSimContainerdHeap(t *testing.T) {
	var kept [3]int64
	for round := range kept {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&before)
		rt := NewSimContainerd(nopCgroups{})
		for i := range 110 {
			uid := fmt.Sprintf("0b5e6c1a-2d3f-4a5b-%04d-%012d", round, i)
			sb := kubeletSandbox(fmt.Sprintf("pod-%04d", i), "default", uid, "kubepods/burstable/pod"+uid)
			sbID := critest.MustRun(t, rt, sb)
			n := 2
			if i < 12 {
				n = 3 // 232 containers in all, as in the anchor world
			}
			for j := range n {
				cfg := kubeletContainer(sb, fmt.Sprintf("c%d", j+1), 0, kubeletResources(102, 20000, 128*mi, 900, true))
				id := critest.MustStart(t, rt, sbID, sb, cfg)
				if _, err := rt.ContainerStatus(tctx, id, false); err != nil {
					t.Fatal(err)
				}
			}
		}
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(rt)
		kept[round] = int64(after.HeapAlloc) - int64(before.HeapAlloc)
	}
	got := min(kept[0], kept[1], kept[2])
	t.Logf("a runtime keeps %d bytes for 110 pods with 232 containers (%v)", got, kept)
	// What the runtime keeps, about 120 KiB, with the container cgroup
	// paths (18 KiB) that a cgroup manager would share, and room for the
	// race detector's build, which keeps a little more.
	const limit = 144 << 10
	if got > limit {
		t.Errorf("a runtime keeps %d bytes for 110 pods with 232 containers, want at most %d", got, limit)
	}
}

// TestContainerStatusOfARecentContainerAllocatesNothing guards the resize
// path, which reads the status of the containers of the pod it resizes
// before and after: an unchanged container's status is the one kept.
func TestContainerStatusOfARecentContainerAllocatesNothing(t *testing.T) {
	rt := NewSimContainerd(nopCgroups{})
	sb := kubeletSandbox("web", "default", "uid-a", podParent)
	sbID := critest.MustRun(t, rt, sb)
	var ids []string
	for j := range recentStatuses {
		ids = append(ids, critest.MustStart(t, rt, sbID, sb, kubeletContainer(sb, fmt.Sprintf("c%d", j), 0, kubeletResources(102, 20000, 128*mi, 900, true))))
	}
	update := &runtimeapi.ContainerResources{Linux: kubeletResources(204, 40000, 256*mi, 900, true)}
	if err := rt.UpdateContainerResources(tctx, ids[0], update); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(20, func() {
		for _, id := range ids {
			if _, err := rt.ContainerStatus(tctx, id, false); err != nil {
				t.Fatal(err)
			}
		}
	})
	if allocs != 0 {
		t.Errorf("statuses of %d unchanged recent containers allocate %v times, want 0", len(ids), allocs)
	}
}

// TestLookupByID finds records by their IDs after removals, which move
// them from the place their number gives, and finds nothing for IDs the
// runtime does not make.
func TestLookupByID(t *testing.T) {
	rt, _ := newSimContainerd(t, cgroup.V2)
	sb := kubeletSandbox("web", "default", "uid-a", podParent)
	sbID := critest.MustRun(t, rt, sb)
	var ids []string
	for j := range 12 {
		ids = append(ids, critest.MustCreate(t, rt, sbID, sb, kubeletContainer(sb, fmt.Sprintf("c%d", j), 0, nil)))
	}
	for _, id := range []string{ids[0], ids[3], ids[4]} {
		if err := rt.RemoveContainer(tctx, id); err != nil {
			t.Fatal(err)
		}
	}
	for j, id := range ids {
		_, err := rt.ContainerStatus(tctx, id, false)
		if removed := j == 0 || j == 3 || j == 4; removed != errors.Is(err, ErrNotFound) {
			t.Errorf("ContainerStatus(%s) after removals: err = %v", id, err)
		}
	}
	for _, id := range []string{"ctr-0", "ctr-01", "ctr-", "ctr-2x", "ctr--2", "ctr-99", "ctr-99999999999999999999", "sb-1", "2", ""} {
		if _, err := rt.ContainerStatus(tctx, id, false); !errors.Is(err, ErrNotFound) {
			t.Errorf("ContainerStatus(%q): err = %v, want ErrNotFound", id, err)
		}
	}
	if _, err := rt.UpdatePodSandboxResources(tctx, &runtimeapi.UpdatePodSandboxResourcesRequest{PodSandboxId: "sb-01"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("UpdatePodSandboxResources(sb-01): err = %v, want ErrNotFound", err)
	}
}

package resize

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup"
)

func auditStrings(t *testing.T, tn *testNode) []string {
	t.Helper()
	ds, err := tn.node.Audit(tn.ctx)
	if err != nil {
		t.Fatalf("Audit: %v", err)
	}
	SortDifferences(ds)
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.String()
	}
	return out
}

func sameStrings(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

// TestAuditFindsEachPart: a settled node has no differences on either
// cgroup version; each part changed under the node shows as a difference
// of that part, with the value the allocation wants and the one found.
func TestAuditFindsEachPart(t *testing.T) {
	for _, version := range []cgroup.Version{cgroup.V2, cgroup.V1} {
		t.Run(version.String(), func(t *testing.T) {
			tn := newTestNode(t, NodeConfig{CgroupVersion: version})
			if _, err := tn.node.AddPod(tn.ctx, demoPod()); err != nil {
				t.Fatal(err)
			}
			mustResize(t, tn, "resize-demo", `{"spec":{"containers":[{"name":"pause","resources":{"requests":{"cpu":"800m"},"limits":{"cpu":"800m"}}}]}}`)
			if got := auditStrings(t, tn); len(got) != 0 {
				t.Fatalf("a settled node has differences:\n%s", strings.Join(got, "\n"))
			}
			info := tn.info("resize-demo")

			// The pod cgroup's cpu limit changed behind the kubelet's back
			// (up: on v1 a parent may not have less than its child).
			quota, period := int64(90000), uint64(100000)
			if _, err := tn.cg.Set(info.PodCgroup, cgroup.Values{CPUQuota: &quota, CPUPeriod: &period}); err != nil {
				t.Fatal(err)
			}
			want := map[cgroup.Version]string{
				cgroup.V2: "default/resize-demo: podCgroup cpu.max: want 80000 100000, got 90000 100000",
				cgroup.V1: "default/resize-demo: podCgroup cpu.cfs_quota_us: want 80000, got 90000",
			}[version]
			if got := auditStrings(t, tn); !sameStrings(got, []string{want}) {
				t.Errorf("pod cgroup changed: audit\n%s\nwant\n%s", strings.Join(got, "\n"), want)
			}
			if _, err := tn.cg.Set(info.PodCgroup, cgroup.Values{CPUQuota: ptr(int64(80000))}); err != nil {
				t.Fatal(err)
			}

			// The container updated behind the kubelet's back: the
			// runtime's resources and the container cgroup disagree.
			id := info.ContainerIDs["pause"]
			if err := tn.rt.UpdateContainerResources(tn.ctx, id, &runtimeapi.ContainerResources{Linux: &runtimeapi.LinuxContainerResources{CpuQuota: 60000, CpuPeriod: 100000}}); err != nil {
				t.Fatal(err)
			}
			got := auditStrings(t, tn)
			wantCgroup := map[cgroup.Version]string{
				cgroup.V2: "default/resize-demo container pause: containerCgroup cpu.max: want 80000 100000, got 60000 100000",
				cgroup.V1: "default/resize-demo container pause: containerCgroup cpu.cfs_quota_us: want 80000, got 60000",
			}[version]
			wantAll := []string{
				wantCgroup,
				"default/resize-demo container pause: runtime cpu_quota: want 80000, got 60000",
				// The status reports what the runtime holds at the next
				// sync only: it still shows the allocation.
			}
			if !sameStrings(got, wantAll) {
				t.Errorf("container changed: audit\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantAll, "\n"))
			}
			if err := tn.node.Sync(tn.ctx); err != nil {
				t.Fatal(err)
			}
			if got := auditStrings(t, tn); len(got) < 3 || !strings.Contains(strings.Join(got, "\n"), "status limits.cpu: want 800m, got 600m") {
				t.Errorf("after a sync the status shows the runtime's value: audit\n%s", strings.Join(got, "\n"))
			}
		})
	}
}

// TestAuditComparesRecords: a container's actuated record that is not its
// allocation, and a checkpoint that parted from the node's records, are
// differences.
func TestAuditComparesRecords(t *testing.T) {
	tn := newTestNode(t, NodeConfig{})
	if _, err := tn.node.AddPod(tn.ctx, demoPod()); err != nil {
		t.Fatal(err)
	}
	info := tn.info("resize-demo")
	// Behind the node's back: the actuated checkpoint says 600m. The node
	// decides with its own copy, so the record and the checkpoint part.
	if err := tn.node.actuated.SetContainer(info.UID, "pause", resources("600m", "200Mi", "600m", "200Mi")); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"default/resize-demo container pause: actuated limits.cpu: want the node's record 700m, got checkpoint 600m",
		"default/resize-demo container pause: actuated requests.cpu: want the node's record 700m, got checkpoint 600m",
	}
	if got := auditStrings(t, tn); !sameStrings(got, want) {
		t.Errorf("audit\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A restart takes the checkpoint's record: now the record is not the
	// allocation, and the restarted kubelet sets it right at once (an
	// extra, idempotent update), so nothing is left.
	tn.restart()
	if got := auditStrings(t, tn); len(got) != 0 {
		t.Errorf("after a restart: audit\n%s", strings.Join(got, "\n"))
	}
}

func ptr[T any](v T) *T { return &v }

// downsize is the decrease the kubelet's gap shows on: memory and cpu down
// for a Guaranteed pod, so the pod cgroup is written after the container.
const downsize = `{"spec":{"containers":[{"name":"pause","resources":{"requests":{"cpu":"500m"},"limits":{"cpu":"500m"}}}]}}`

// failingPodCgroupWrites fails every pod cgroup Set while armed.
type failingPodCgroupWrites struct {
	cgroup.Manager
	path  string
	armed bool
}

func (f *failingPodCgroupWrites) Set(path string, v cgroup.Values) ([]cgroup.Write, error) {
	if f.armed && path == f.path {
		return nil, fmt.Errorf("write %s: %w", path, cgroup.ErrInjected)
	}
	return f.Manager.Set(path, v)
}

func (f *failingPodCgroupWrites) Unwrap() cgroup.Manager { return f.Manager }

// TestReconcilePodCgroups: a pod cgroup write that fails after the
// container was updated leaves the pod cgroup at its old value for good on
// the 1.35 default, with the resize reported complete (ResizeStarted,
// ResizeError, ResizeCompleted), and Audit shows it; with
// ReconcilePodCgroups the next sync writes it.
func TestReconcilePodCgroups(t *testing.T) {
	for _, reconcile := range []bool{false, true} {
		t.Run(fmt.Sprintf("reconcile=%t", reconcile), func(t *testing.T) {
			tn := newTestNode(t, NodeConfig{ReconcilePodCgroups: reconcile})
			if _, err := tn.node.AddPod(tn.ctx, demoPod()); err != nil {
				t.Fatal(err)
			}
			info := tn.info("resize-demo")
			failing := &failingPodCgroupWrites{Manager: tn.cg, path: info.PodCgroup}
			tn.deps.Cgroups = failing
			tn.restart()
			failing.armed = true
			from := len(tn.cluster.Events())
			mustResize(t, tn, "resize-demo", downsize)
			failing.armed = false
			if err := tn.node.Advance(tn.ctx, 2*time.Minute); err != nil {
				t.Fatal(err)
			}
			var reasons []string
			for _, e := range tn.cluster.Events()[from:] {
				reasons = append(reasons, e.Reason)
			}
			if want := "ResizeStarted ResizeError ResizeCompleted"; strings.Join(reasons, " ") != want {
				t.Errorf("events %v, want %s", reasons, want)
			}
			got := auditStrings(t, tn)
			if reconcile {
				if len(got) != 0 {
					t.Errorf("with the reconcile the pod cgroup is written: audit\n%s", strings.Join(got, "\n"))
				}
				if q := tn.file(info.PodCgroup, "cpu.max"); q != "50000 100000" {
					t.Errorf("pod cpu.max %q, want 50000 100000", q)
				}
				return
			}
			want := []string{
				"default/resize-demo: podCgroup cpu.max: want 50000 100000, got 70000 100000",
				"default/resize-demo: podCgroup cpu.weight: want 20, got 28",
			}
			if !sameStrings(got, want) {
				t.Errorf("1.35 leaves the pod cgroup: audit\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if c := pendingOf(t, tn.pod("resize-demo")); c != nil {
				t.Errorf("the resize still shows %s", c.Type)
			}
		})
	}
}

// TestReconcileWritesNothingWhenInPlace: with the option on, a sync whose
// pod cgroup holds the allocation writes no cgroup file.
func TestReconcileWritesNothingWhenInPlace(t *testing.T) {
	tn := newTestNode(t, NodeConfig{ReconcilePodCgroups: true})
	if _, err := tn.node.AddPod(tn.ctx, demoPod()); err != nil {
		t.Fatal(err)
	}
	mustResize(t, tn, "resize-demo", downsize)
	before := len(tn.cg.Writes())
	if err := tn.node.Advance(tn.ctx, 5*time.Minute); err != nil {
		t.Fatal(err)
	}
	if w := tn.cg.Writes()[before:]; len(w) != 0 {
		t.Errorf("resyncs wrote %v", w)
	}
}

// flakyAPI fails the next status write and pod deletion.
type flakyAPI struct {
	API
	failStatus, failDelete int
}

func (a *flakyAPI) UpdatePodStatus(ctx context.Context, namespace, name string, uid types.UID, status v1.PodStatus) error {
	if a.failStatus > 0 {
		a.failStatus--
		return errors.New("apiserver unavailable")
	}
	return a.API.UpdatePodStatus(context.Background(), namespace, name, uid, status)
}

func (a *flakyAPI) DeletePod(ctx context.Context, namespace, name string) error {
	if a.failDelete > 0 {
		a.failDelete--
		return errors.New("apiserver unavailable")
	}
	return a.API.DeletePod(context.Background(), namespace, name)
}

// TestFailedStatusWritesAreRetried: a rejected pod's status and a pod's
// final deletion that the API server refused once are made again at the
// next tick, as the kubelet's status manager does.
func TestFailedStatusWritesAreRetried(t *testing.T) {
	tn := newTestNode(t, NodeConfig{Capacity: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("1Gi")}})
	api := &flakyAPI{API: tn.cluster}
	tn.deps.Cluster = api
	tn.restart()
	api.failStatus = 1
	big := demoPod()
	big.Spec.Containers[0].Resources = resources("2", "200Mi", "2", "200Mi")
	if _, err := tn.node.AddPod(tn.ctx, big); err != nil {
		t.Fatal(err)
	}
	if p := tn.pod("resize-demo"); p.Status.Phase == v1.PodFailed {
		t.Fatal("the failed write reached the API server")
	}
	if err := tn.node.Advance(tn.ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	if p := tn.pod("resize-demo"); p.Status.Phase != v1.PodFailed {
		t.Errorf("after a tick the rejected pod is %s, want Failed", p.Status.Phase)
	}

	small := demoPod()
	small.Name = "small"
	small.Spec.Containers[0].Resources = resources("100m", "100Mi", "100m", "100Mi")
	if _, err := tn.node.AddPod(tn.ctx, small); err != nil {
		t.Fatal(err)
	}
	api.failDelete = 1
	if err := tn.node.DeletePod(tn.ctx, "default", "small"); err != nil {
		t.Fatalf("DeletePod: %v", err)
	}
	if _, err := tn.cluster.GetPod(t.Context(), "default", "small"); err != nil {
		t.Fatal("the failed deletion reached the API server")
	}
	if err := tn.node.Tick(tn.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := tn.cluster.GetPod(t.Context(), "default", "small"); !errors.Is(err, ErrPodNotFound) {
		t.Errorf("after a tick the pod is still there (%v)", err)
	}
}

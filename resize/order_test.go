package resize

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/cri"
)

// journal records cgroup writes and CRI calls in one order, so a test can
// pin how the two interleave (§4.3).
type journal struct {
	mu    sync.Mutex
	lines []string
}

func (j *journal) add(s string) {
	j.mu.Lock()
	j.lines = append(j.lines, s)
	j.mu.Unlock()
}

func (j *journal) take() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := j.lines
	j.lines = nil
	return out
}

// journalCgroups logs every write a Set makes.
type journalCgroups struct {
	*cgroup.SimKernel
	j *journal
}

func (c journalCgroups) Set(path string, v cgroup.Values) ([]cgroup.Write, error) {
	ws, err := c.SimKernel.Set(path, v)
	for _, w := range ws {
		c.j.add(fmt.Sprintf("W %s %s %s -> %s", path, w.File, w.Old, w.New))
	}
	return ws, err
}

// journalRuntime logs the calls that change something, before making them.
type journalRuntime struct {
	cri.Runtime
	j *journal
}

func (r journalRuntime) UpdateContainerResources(ctx context.Context, id string, res *runtimeapi.ContainerResources) error {
	r.j.add("C UpdateContainerResources " + id)
	return r.Runtime.UpdateContainerResources(ctx, id, res)
}

func (r journalRuntime) UpdatePodSandboxResources(ctx context.Context, req *runtimeapi.UpdatePodSandboxResourcesRequest) (*runtimeapi.UpdatePodSandboxResourcesResponse, error) {
	r.j.add("C UpdatePodSandboxResources")
	return r.Runtime.UpdatePodSandboxResources(ctx, req)
}

func (r journalRuntime) StopContainer(ctx context.Context, id string, timeout int64) error {
	r.j.add("C StopContainer " + id)
	return r.Runtime.StopContainer(ctx, id, timeout)
}

func (r journalRuntime) CreateContainer(ctx context.Context, sb string, cfg *runtimeapi.ContainerConfig, sbc *runtimeapi.PodSandboxConfig) (string, error) {
	r.j.add("C CreateContainer " + cfg.GetMetadata().GetName())
	return r.Runtime.CreateContainer(ctx, sb, cfg, sbc)
}

func newJournalNode(t *testing.T, version cgroup.Version) (*testNode, *journal) {
	t.Helper()
	j := &journal{}
	tn := &testNode{t: t, ctx: context.Background(), cfg: NodeConfig{CgroupVersion: version}.WithDefaults()}
	tn.cg = cgroup.NewSimKernel(version)
	jc := journalCgroups{SimKernel: tn.cg, j: j}
	tn.rt = cri.NewSimContainerd(jc, cri.WithContainerWeight(cgconfig.QuadraticWeight), cri.WithCgroupModel(tn.cg))
	tn.clock = NewFakeClock(metav1.Now().Time)
	tn.cluster = NewCluster(ClusterOptions{})
	tn.deps = Deps{Cluster: tn.cluster, Cgroups: jc, Runtime: journalRuntime{Runtime: tn.rt, j: j}, Clock: tn.clock, CheckpointDir: t.TempDir()}
	n, err := NewNode(tn.ctx, tn.cfg, tn.deps)
	if err != nil {
		t.Fatal(err)
	}
	tn.node = n
	return tn, j
}

func twoContainerPod() *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}, Spec: v1.PodSpec{Containers: []v1.Container{
		{Name: "a", Image: "x", Resources: resources("100m", "100Mi", "100m", "100Mi")},
		{Name: "b", Image: "x", Resources: resources("200m", "200Mi", "200m", "200Mi")},
	}}}
}

// TestResizeOrder pins the order of pod cgroup writes, container updates
// and UpdatePodSandboxResources calls for an increase, a decrease and a
// mixed resize of a two-container Guaranteed pod on cgroup v2 (§4.3): per
// resource, memory before cpu; pod limit raised before the containers and
// lowered after them; shares likewise, requests lowered before limits;
// decreases first among the containers.
func TestResizeOrder(t *testing.T) {
	q := func(milli int64) uint64 { return cgconfig.QuadraticWeight(cgconfig.MilliCPUToShares(milli)) }
	for _, tc := range []struct {
		name  string
		patch string
		want  func(pod, a, b, ida, idb string) []string
	}{
		{
			name:  "increase",
			patch: `{"spec":{"containers":[{"name":"a","resources":{"requests":{"cpu":"150m","memory":"150Mi"},"limits":{"cpu":"150m","memory":"150Mi"}}}]}}`,
			want: func(pod, a, b, ida, idb string) []string {
				return []string{
					"W " + pod + " memory.max 314572800 -> 367001600",
					"C UpdatePodSandboxResources",
					"C UpdateContainerResources " + ida,
					"W " + a + " memory.max 104857600 -> 157286400",
					"W " + pod + " cpu.max 30000 100000 -> 35000 100000",
					"C UpdatePodSandboxResources",
					"W " + pod + " cpu.weight 12 -> 14",
					"C UpdatePodSandboxResources",
					"C UpdateContainerResources " + ida,
					fmt.Sprintf("W %s cpu.weight %d -> %d", a, q(100), q(150)),
					"W " + a + " cpu.max 10000 100000 -> 15000 100000",
				}
			},
		},
		{
			name:  "decrease",
			patch: `{"spec":{"containers":[{"name":"a","resources":{"requests":{"cpu":"50m","memory":"50Mi"},"limits":{"cpu":"50m","memory":"50Mi"}}}]}}`,
			want: func(pod, a, b, ida, idb string) []string {
				return []string{
					"C UpdateContainerResources " + ida,
					"W " + a + " memory.max 104857600 -> 52428800",
					"W " + pod + " memory.max 314572800 -> 262144000",
					"C UpdatePodSandboxResources",
					"C UpdateContainerResources " + ida,
					fmt.Sprintf("W %s cpu.weight %d -> %d", a, q(100), q(50)),
					"W " + a + " cpu.max 10000 100000 -> 5000 100000",
					"W " + pod + " cpu.weight 12 -> 10",
					"C UpdatePodSandboxResources",
					"W " + pod + " cpu.max 30000 100000 -> 25000 100000",
					"C UpdatePodSandboxResources",
				}
			},
		},
		{
			name:  "mixed",
			patch: `{"spec":{"containers":[{"name":"a","resources":{"requests":{"cpu":"150m","memory":"50Mi"},"limits":{"cpu":"150m","memory":"50Mi"}}},{"name":"b","resources":{"requests":{"cpu":"100m","memory":"300Mi"},"limits":{"cpu":"100m","memory":"300Mi"}}}]}}`,
			want: func(pod, a, b, ida, idb string) []string {
				return []string{
					// memory: pod 300Mi -> 350Mi grows first; a shrinks before b grows.
					"W " + pod + " memory.max 314572800 -> 367001600",
					"C UpdatePodSandboxResources",
					"C UpdateContainerResources " + ida,
					"W " + a + " memory.max 104857600 -> 52428800",
					"C UpdateContainerResources " + idb,
					"W " + b + " memory.max 209715200 -> 314572800",
					// cpu: pod 300m -> 250m shrinks last; b shrinks before a grows.
					"C UpdateContainerResources " + idb,
					fmt.Sprintf("W %s cpu.weight %d -> %d", b, q(200), q(100)),
					"W " + b + " cpu.max 20000 100000 -> 10000 100000",
					"C UpdateContainerResources " + ida,
					fmt.Sprintf("W %s cpu.weight %d -> %d", a, q(100), q(150)),
					"W " + a + " cpu.max 10000 100000 -> 15000 100000",
					"W " + pod + " cpu.weight 12 -> 10",
					"C UpdatePodSandboxResources",
					"W " + pod + " cpu.max 30000 100000 -> 25000 100000",
					"C UpdatePodSandboxResources",
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tn, j := newJournalNode(t, cgroup.V2)
			if _, err := tn.node.AddPod(tn.ctx, twoContainerPod()); err != nil {
				t.Fatal(err)
			}
			info := tn.info("p")
			j.take()
			mustResize(t, tn, "p", tc.patch)
			got := j.take()
			want := tc.want(info.PodCgroup, info.ContainerCgroups["a"], info.ContainerCgroups["b"], info.ContainerIDs["a"], info.ContainerIDs["b"])
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("order:\n%s\n\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if c := tn.pod("p").Status.Conditions; len(c) != 0 {
				t.Fatalf("conditions after the resize: %v", c)
			}
		})
	}
}

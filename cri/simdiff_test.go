package cri

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// The differential test drives SimContainerd and the oracle, a copy of it
// as it was before its records were made compact (simoracle_test.go),
// through the same calls and requires every answer to be the same: the
// responses field by field (nil and empty maps and slices told apart, as
// reflect.DeepEqual tells them apart), the errors by message, errors.Is
// and MemoryLimitError, and the cgroup files and writes each leaves behind.

// simExtras is what SimContainerd offers beyond Runtime.
type simExtras interface {
	Exit(containerID string, exitCode int32, reason string) error
	SetMemoryUsage(containerID string, bytes int64) error
	PID(containerID string) (int, bool)
	SandboxResources(podSandboxID string) *runtimeapi.UpdatePodSandboxResourcesRequest
}

// diffSide is one runtime under test with its cgroups and fault injectors.
type diffSide struct {
	kernel *cgroup.SimKernel
	cgf    *cgroup.FaultInjector
	sim    simExtras
	rt     *FaultInjector // wraps sim
}

// diffConfig is the runtime configuration a differential run uses.
type diffConfig struct {
	version cgroup.Version
	driver  cgroup.Driver
	swap    bool
	linear  bool
	// bare gives each runtime its SimKernel itself rather than the cgroup
	// fault injector over it (whose faults then reach neither side), so
	// that the runtime's direct calls of the kernel are compared too.
	bare bool
}

func (c diffConfig) String() string {
	s := fmt.Sprintf("v%d/%s/swap=%t/linear=%t", c.version, c.driver, c.swap, c.linear)
	if c.bare {
		s += "/bare"
	}
	return s
}

// diffPair is the runtime under test and the oracle, driven together.
type diffPair struct {
	t        *testing.T
	now, old diffSide
	step     int
	where    string // what the step did, for failure messages
}

func newDiffPair(t *testing.T, cfg diffConfig) *diffPair {
	t.Helper()
	p := &diffPair{t: t}
	weight := cgconfig.QuadraticWeight
	if cfg.linear {
		weight = cgconfig.LinearWeight
	}
	p.now.kernel = cgroup.NewSimKernel(cfg.version)
	p.now.cgf = cgroup.NewFaultInjector(p.now.kernel)
	var nowCg, oldCg cgroup.Manager = p.now.cgf, nil
	if cfg.bare {
		nowCg = p.now.kernel
	}
	sim := NewSimContainerd(nowCg, WithDriver(cfg.driver), WithSwapController(cfg.swap), WithContainerWeight(weight))
	p.now.sim, p.now.rt = sim, NewFaultInjector(sim)

	p.old.kernel = cgroup.NewSimKernel(cfg.version)
	p.old.cgf = cgroup.NewFaultInjector(p.old.kernel)
	oldCg = p.old.cgf
	if cfg.bare {
		oldCg = p.old.kernel
	}
	orc := orcNewSimContainerd(oldCg, orcWithDriver(cfg.driver), orcWithSwapController(cfg.swap), orcWithContainerWeight(weight))
	p.old.sim, p.old.rt = orc, NewFaultInjector(orc)
	return p
}

// sides runs f on both runtimes, the oracle first.
func (p *diffPair) sides(f func(s *diffSide)) {
	f(&p.old)
	f(&p.now)
}

// check compares what the two sides answered and the cgroups they left.
func (p *diffPair) check(what string, got, want any, gotErr, wantErr error) {
	p.t.Helper()
	p.step++
	p.where = what
	if g, w := dumpOf(got), dumpOf(want); g != w {
		p.t.Fatalf("step %d, %s: answer differs from the oracle\n got: %s\nwant: %s", p.step, what, g, w)
	}
	if g, w := errorDump(gotErr), errorDump(wantErr); g != w {
		p.t.Fatalf("step %d, %s: error differs from the oracle\n got: %s\nwant: %s", p.step, what, g, w)
	}
	// proto.Equal as well, for the messages among the answers.
	if gm, ok := got.(proto.Message); ok && !reflect.ValueOf(gm).IsNil() {
		if !proto.Equal(gm, want.(proto.Message)) {
			p.t.Fatalf("step %d, %s: proto.Equal fails", p.step, what)
		}
	}
	// The latest writes every step, the whole hierarchy now and then
	// (rendering it every step would make the test slow).
	if g, w := writesDump(p.now.kernel, 4), writesDump(p.old.kernel, 4); g != w {
		p.t.Fatalf("step %d, %s: cgroup writes differ from the oracle's\n got: %s\nwant: %s", p.step, what, g, w)
	}
	if p.step%16 == 0 {
		p.checkKernel()
	}
}

// checkKernel compares the two cgroup hierarchies whole.
func (p *diffPair) checkKernel() {
	p.t.Helper()
	if g, w := kernelDump(p.now.kernel), kernelDump(p.old.kernel); g != w {
		p.t.Fatalf("step %d, %s: cgroups differ from the oracle's\n got: %s\nwant: %s", p.step, p.where, g, w)
	}
}

// The calls, each made on both sides and compared.

func (p *diffPair) runPodSandbox(config *runtimeapi.PodSandboxConfig, handler string) string {
	p.t.Helper()
	var ids [2]string
	var errs [2]error
	i := 0
	p.sides(func(s *diffSide) { ids[i], errs[i] = s.rt.RunPodSandbox(tctx, config, handler); i++ })
	p.check("RunPodSandbox "+dumpOf(config), ids[1], ids[0], errs[1], errs[0])
	return ids[1]
}

func (p *diffPair) stopPodSandbox(id string) {
	p.t.Helper()
	p.errorsOnly("StopPodSandbox "+id, func(s *diffSide) error { return s.rt.StopPodSandbox(tctx, id) })
}

func (p *diffPair) removePodSandbox(id string) {
	p.t.Helper()
	p.errorsOnly("RemovePodSandbox "+id, func(s *diffSide) error { return s.rt.RemovePodSandbox(tctx, id) })
}

func (p *diffPair) listPodSandbox(filter *runtimeapi.PodSandboxFilter) []*runtimeapi.PodSandbox {
	p.t.Helper()
	var out [2][]*runtimeapi.PodSandbox
	var errs [2]error
	i := 0
	p.sides(func(s *diffSide) { out[i], errs[i] = s.rt.ListPodSandbox(tctx, filter); i++ })
	p.check("ListPodSandbox "+dumpOf(filter), out[1], out[0], errs[1], errs[0])
	for j := range out[1] {
		if !proto.Equal(out[1][j], out[0][j]) {
			p.t.Fatalf("step %d: ListPodSandbox entry %d: proto.Equal fails", p.step, j)
		}
	}
	return out[1]
}

func (p *diffPair) updatePodSandboxResources(req *runtimeapi.UpdatePodSandboxResourcesRequest) {
	p.t.Helper()
	var out [2]*runtimeapi.UpdatePodSandboxResourcesResponse
	var errs [2]error
	i := 0
	p.sides(func(s *diffSide) { out[i], errs[i] = s.rt.UpdatePodSandboxResources(tctx, req); i++ })
	p.check("UpdatePodSandboxResources "+dumpOf(req), out[1], out[0], errs[1], errs[0])
}

func (p *diffPair) sandboxResources(id string) {
	p.t.Helper()
	var out [2]*runtimeapi.UpdatePodSandboxResourcesRequest
	i := 0
	p.sides(func(s *diffSide) { out[i] = s.sim.SandboxResources(id); i++ })
	p.check("SandboxResources "+id, out[1], out[0], nil, nil)
}

func (p *diffPair) createContainer(sandboxID string, config *runtimeapi.ContainerConfig, sandboxConfig *runtimeapi.PodSandboxConfig) string {
	p.t.Helper()
	var ids [2]string
	var errs [2]error
	i := 0
	p.sides(func(s *diffSide) { ids[i], errs[i] = s.rt.CreateContainer(tctx, sandboxID, config, sandboxConfig); i++ })
	p.check("CreateContainer "+sandboxID+" "+dumpOf(config), ids[1], ids[0], errs[1], errs[0])
	return ids[1]
}

func (p *diffPair) startContainer(id string) {
	p.t.Helper()
	p.errorsOnly("StartContainer "+id, func(s *diffSide) error { return s.rt.StartContainer(tctx, id) })
}

func (p *diffPair) stopContainer(id string) {
	p.t.Helper()
	p.errorsOnly("StopContainer "+id, func(s *diffSide) error { return s.rt.StopContainer(tctx, id, 30) })
}

func (p *diffPair) removeContainer(id string) {
	p.t.Helper()
	p.errorsOnly("RemoveContainer "+id, func(s *diffSide) error { return s.rt.RemoveContainer(tctx, id) })
}

func (p *diffPair) exit(id string, code int32, reason string) {
	p.t.Helper()
	p.errorsOnly(fmt.Sprintf("Exit %s %d %q", id, code, reason), func(s *diffSide) error { return s.sim.Exit(id, code, reason) })
}

func (p *diffPair) setMemoryUsage(id string, bytes int64) {
	p.t.Helper()
	p.errorsOnly(fmt.Sprintf("SetMemoryUsage %s %d", id, bytes), func(s *diffSide) error { return s.sim.SetMemoryUsage(id, bytes) })
}

func (p *diffPair) pid(id string) {
	p.t.Helper()
	var out [2][2]any
	i := 0
	p.sides(func(s *diffSide) { pid, ok := s.sim.PID(id); out[i] = [2]any{pid, ok}; i++ })
	p.check("PID "+id, out[1], out[0], nil, nil)
}

func (p *diffPair) updateContainerResources(id string, res *runtimeapi.ContainerResources) {
	p.t.Helper()
	p.errorsOnly("UpdateContainerResources "+id+" "+dumpOf(res), func(s *diffSide) error { return s.rt.UpdateContainerResources(tctx, id, res) })
}

func (p *diffPair) listContainers(filter *runtimeapi.ContainerFilter) []*runtimeapi.Container {
	p.t.Helper()
	var out [2][]*runtimeapi.Container
	var errs [2]error
	i := 0
	p.sides(func(s *diffSide) { out[i], errs[i] = s.rt.ListContainers(tctx, filter); i++ })
	p.check("ListContainers "+dumpOf(filter), out[1], out[0], errs[1], errs[0])
	for j := range out[1] {
		if !proto.Equal(out[1][j], out[0][j]) {
			p.t.Fatalf("step %d: ListContainers entry %d: proto.Equal fails", p.step, j)
		}
	}
	return out[1]
}

func (p *diffPair) containerStatus(id string, verbose bool) *runtimeapi.ContainerStatusResponse {
	p.t.Helper()
	var out [2]*runtimeapi.ContainerStatusResponse
	var errs [2]error
	i := 0
	p.sides(func(s *diffSide) { out[i], errs[i] = s.rt.ContainerStatus(tctx, id, verbose); i++ })
	p.check(fmt.Sprintf("ContainerStatus %s verbose=%t", id, verbose), out[1], out[0], errs[1], errs[0])
	return out[1]
}

func (p *diffPair) containerStats(id string) {
	p.t.Helper()
	var out [2]*runtimeapi.ContainerStats
	var errs [2]error
	i := 0
	p.sides(func(s *diffSide) { out[i], errs[i] = s.rt.ContainerStats(tctx, id); i++ })
	p.check("ContainerStats "+id, out[1], out[0], errs[1], errs[0])
}

func (p *diffPair) execSync(id string, cmd []string) {
	p.t.Helper()
	var out [2][2][]byte
	var errs [2]error
	i := 0
	p.sides(func(s *diffSide) {
		stdout, stderr, err := s.rt.ExecSync(tctx, id, cmd, time.Second)
		out[i], errs[i] = [2][]byte{stdout, stderr}, err
		i++
	})
	p.check(fmt.Sprintf("ExecSync %s %q", id, cmd), out[1], out[0], errs[1], errs[0])
}

func (p *diffPair) errorsOnly(what string, f func(s *diffSide) error) {
	p.t.Helper()
	var errs [2]error
	i := 0
	p.sides(func(s *diffSide) { errs[i] = f(s); i++ })
	p.check(what, nil, nil, errs[1], errs[0])
}

// injectRuntimeFault and injectCgroupFault inject the same fault on both
// sides.
func (p *diffPair) injectRuntimeFault(f Fault) {
	p.sides(func(s *diffSide) { s.rt.Inject(f) })
}

func (p *diffPair) injectCgroupFault(substr string, err error, times int) {
	p.sides(func(s *diffSide) {
		s.cgf.Inject(func(path string) bool { return strings.Contains(path, substr) }, err, times)
	})
}

// allStatuses reads the status (plain and verbose) and stats of every
// container the list reports, and both lists unfiltered.
func (p *diffPair) allStatuses() {
	p.t.Helper()
	p.listPodSandbox(nil)
	for _, c := range p.listContainers(nil) {
		p.containerStatus(c.Id, false)
		p.containerStatus(c.Id, true)
		p.containerStats(c.Id)
		p.pid(c.Id)
	}
}

// kubeletSandbox and kubeletContainer are configs shaped as the resize core
// builds them (package core's sandboxConfig and containerConfig).
func kubeletSandbox(name, namespace, uid, parent string) *runtimeapi.PodSandboxConfig {
	return &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: name, Namespace: namespace, Uid: uid},
		Labels: map[string]string{
			LabelPodName:      name,
			LabelPodNamespace: namespace,
			LabelPodUID:       uid,
		},
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			CgroupParent: "/" + parent,
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
				NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE},
			},
			Overhead:  &runtimeapi.LinuxContainerResources{},
			Resources: &runtimeapi.LinuxContainerResources{CpuShares: 102, MemoryLimitInBytes: 256 * mi},
		},
	}
}

// diffOOMGroup is the unified map the core shares between all containers
// on cgroup v2.
var diffOOMGroup = map[string]string{"memory.oom.group": "1"}

func kubeletContainer(sb *runtimeapi.PodSandboxConfig, name string, attempt uint32, res *runtimeapi.LinuxContainerResources) *runtimeapi.ContainerConfig {
	return &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: name, Attempt: attempt},
		Image:    &runtimeapi.ImageSpec{Image: "registry.k8s.io/pause:3.10"},
		Labels: map[string]string{
			LabelPodName:       sb.Metadata.Name,
			LabelPodNamespace:  sb.Metadata.Namespace,
			LabelPodUID:        sb.Metadata.Uid,
			LabelContainerName: name,
		},
		Annotations: map[string]string{"io.kubernetes.container.restartCount": fmt.Sprint(attempt)},
		Linux:       &runtimeapi.LinuxContainerConfig{Resources: res},
	}
}

func kubeletResources(shares, quota, memory, oom int64, v2 bool) *runtimeapi.LinuxContainerResources {
	r := &runtimeapi.LinuxContainerResources{CpuShares: shares, CpuQuota: quota, CpuPeriod: 100000, MemoryLimitInBytes: memory, OomScoreAdj: oom}
	if v2 {
		r.Unified = diffOOMGroup
	}
	return r
}

var diffConfigs = []diffConfig{
	{version: cgroup.V1, driver: cgroup.DriverCgroupfs},
	{version: cgroup.V2, driver: cgroup.DriverCgroupfs},
	{version: cgroup.V2, driver: cgroup.DriverSystemd, swap: true},
	{version: cgroup.V1, driver: cgroup.DriverSystemd, swap: true, linear: true},
	{version: cgroup.V2, driver: cgroup.DriverCgroupfs, linear: true},
}

// TestSimContainerdMatchesOracleKubeletLife runs pods the way the kubelet
// does: sandboxes and containers with the kubelet's labels, annotations
// and resources, resizes up and down, a restart with a higher attempt, an
// OOM kill, a refused limit, stops and removals, reading every status and
// list along the way.
func TestSimContainerdMatchesOracleKubeletLife(t *testing.T) {
	for _, cfg := range diffConfigs {
		t.Run(cfg.String(), func(t *testing.T) {
			p := newDiffPair(t, cfg)
			v2 := cfg.version == cgroup.V2
			parent := func(i int) string {
				if cfg.driver == cgroup.DriverSystemd {
					return fmt.Sprintf("kubepods-burstable-poduid_%d.slice", i)
				}
				return fmt.Sprintf("kubepods/burstable/poduid-%d", i)
			}
			type pod struct {
				cfg  *runtimeapi.PodSandboxConfig
				id   string
				ctrs []string
			}
			var pods []pod
			for i := range 4 {
				sb := kubeletSandbox(fmt.Sprintf("pod-%d", i), "default", fmt.Sprintf("uid-%d", i), parent(i))
				pd := pod{cfg: sb, id: p.runPodSandbox(sb, "")}
				for j := range 1 + i%3 {
					cc := kubeletContainer(sb, fmt.Sprintf("c%d", j), 0, kubeletResources(int64(102*(j+1)), int64(20000*(j+1)), int64(j+1)*128*mi, 900, v2))
					id := p.createContainer(pd.id, cc, sb)
					p.containerStatus(id, false)
					p.startContainer(id)
					p.containerStatus(id, false)
					pd.ctrs = append(pd.ctrs, id)
				}
				pods = append(pods, pd)
			}
			p.allStatuses()

			// Resizes of pod-1's first container, read as the core reads.
			target := pods[1].ctrs[0]
			for k := range 6 {
				p.containerStatus(target, false)
				p.setMemoryUsage(target, int64(k)*32*mi)
				p.containerStats(target)
				p.updateContainerResources(target, &runtimeapi.ContainerResources{Linux: kubeletResources(int64(204+k%2*102), int64(40000+k%2*20000), int64(256+k%2*128)*mi, 900, v2)})
				p.updatePodSandboxResources(&runtimeapi.UpdatePodSandboxResourcesRequest{
					PodSandboxId: pods[1].id, Overhead: &runtimeapi.LinuxContainerResources{},
					Resources: &runtimeapi.LinuxContainerResources{CpuShares: int64(306 + k), MemoryLimitInBytes: int64(512+k) * mi},
				})
				p.sandboxResources(pods[1].id)
				p.containerStatus(target, false)
				p.containerStatus(target, false)
			}
			// A limit below usage: refused on v1, an OOM kill on v2.
			p.setMemoryUsage(target, 300*mi)
			p.updateContainerResources(target, &runtimeapi.ContainerResources{Linux: &runtimeapi.LinuxContainerResources{MemoryLimitInBytes: 100 * mi}})
			p.containerStatus(target, true)
			p.pid(target)
			// The kubelet's restart: a new container with the next attempt.
			p.stopContainer(target)
			cc := kubeletContainer(pods[1].cfg, "c0", 1, kubeletResources(204, 40000, 256*mi, 900, v2))
			restarted := p.createContainer(pods[1].id, cc, pods[1].cfg)
			p.createContainer(pods[1].id, cc, pods[1].cfg) // the name is reserved
			p.startContainer(restarted)
			p.removeContainer(target)
			p.containerStatus(target, false)
			p.allStatuses()

			// Exits, lists by filter, a pod stopped and one removed.
			p.exit(pods[2].ctrs[1], 0, "")
			p.exit(pods[2].ctrs[0], 2, "")
			p.setMemoryUsage(pods[3].ctrs[0], 1<<40) // above the limit: OOM kill
			p.listContainers(&runtimeapi.ContainerFilter{State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_EXITED}})
			p.listContainers(&runtimeapi.ContainerFilter{PodSandboxId: pods[2].id})
			p.listContainers(&runtimeapi.ContainerFilter{LabelSelector: map[string]string{LabelPodName: "pod-2", LabelContainerName: "c1"}})
			p.listContainers(&runtimeapi.ContainerFilter{Id: pods[0].ctrs[0]})
			p.listPodSandbox(&runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{LabelPodUID: "uid-3"}})
			p.stopPodSandbox(pods[2].id)
			p.createContainer(pods[2].id, kubeletContainer(pods[2].cfg, "c9", 0, nil), pods[2].cfg)
			p.listPodSandbox(&runtimeapi.PodSandboxFilter{State: &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_NOTREADY}})
			p.allStatuses()
			p.removePodSandbox(pods[0].id)
			p.removePodSandbox(pods[0].id)
			p.runPodSandbox(pods[0].cfg, "")
			p.allStatuses()
			p.checkKernel()
		})
	}
}

// TestSimContainerdMatchesOracleRandom drives both runtimes through random
// calls with configs of every shape, the kubelet's and others, and faults
// of both kinds.
func TestSimContainerdMatchesOracleRandom(t *testing.T) {
	steps := 1000
	if testing.Short() {
		steps = 300
	}
	for i, cfg := range diffConfigs {
		for seed := range uint64(3) {
			t.Run(fmt.Sprintf("%s/seed=%d", cfg, seed), func(t *testing.T) {
				g := &diffGen{p: newDiffPair(t, cfg), r: rand.New(rand.NewPCG(seed, uint64(i))), cfg: cfg}
				for range steps {
					g.step()
				}
				g.p.allStatuses()
				g.p.checkKernel()
			})
		}
	}
}

// TestSimContainerdMatchesOracleBareKernel is
// TestSimContainerdMatchesOracleRandom with each runtime writing to its
// SimKernel directly, as a simulated node's does: the runtime then calls
// the kernel's SetValues itself, not through an interface.
func TestSimContainerdMatchesOracleBareKernel(t *testing.T) {
	steps := 1000
	if testing.Short() {
		steps = 300
	}
	for i, cfg := range []diffConfig{
		{version: cgroup.V1, driver: cgroup.DriverCgroupfs, bare: true},
		{version: cgroup.V2, driver: cgroup.DriverSystemd, swap: true, bare: true},
	} {
		for seed := range uint64(3) {
			t.Run(fmt.Sprintf("%s/seed=%d", cfg, seed), func(t *testing.T) {
				g := &diffGen{p: newDiffPair(t, cfg), r: rand.New(rand.NewPCG(seed, uint64(i))), cfg: cfg}
				for range steps {
					g.step()
				}
				g.p.allStatuses()
				g.p.checkKernel()
			})
		}
	}
}

// diffGen makes random calls on a diffPair.
type diffGen struct {
	p   *diffPair
	r   *rand.Rand
	cfg diffConfig

	sandboxes []diffSandbox // every sandbox ever run, removed or not
	ctrs      []string      // every container ever created
}

type diffSandbox struct {
	id  string
	cfg *runtimeapi.PodSandboxConfig
}

// The pools the generator picks names from: small, so that names collide.
var (
	diffPodNames   = []string{"web", "db", "a_b", "a", "b_c"}
	diffNamespaces = []string{"default", "kube-system", "c"}
	diffUIDs       = []string{"uid-1", "uid-2", "u_3"}
	diffCtrNames   = []string{"app", "sidecar", "POD", "a", "b_c", "c"}
	diffLabelKeys  = []string{LabelPodName, LabelPodNamespace, LabelPodUID, LabelContainerName, "app", "tier"}
)

func (g *diffGen) pick(pool []string) string { return pool[g.r.IntN(len(pool))] }

func (g *diffGen) chance(n int) bool { return g.r.IntN(n) == 0 }

// sandboxID returns a sandbox's ID, now and then one that never existed.
func (g *diffGen) sandbox() (string, *runtimeapi.PodSandboxConfig) {
	if len(g.sandboxes) == 0 || g.chance(15) {
		return "sb-" + strconv.Itoa(g.r.IntN(50)+1), nil
	}
	sb := g.sandboxes[g.r.IntN(len(g.sandboxes))]
	return sb.id, sb.cfg
}

func (g *diffGen) container() string {
	if len(g.ctrs) == 0 || g.chance(15) {
		return "ctr-" + strconv.Itoa(g.r.IntN(80)+1)
	}
	// Recent containers more often than old ones.
	n := len(g.ctrs)
	if g.chance(2) && n > 6 {
		return g.ctrs[n-1-g.r.IntN(6)]
	}
	return g.ctrs[g.r.IntN(n)]
}

// labels returns labels of one of several shapes: the kubelet's for a
// sandbox or container (with matching or differing values), with a key
// more or less, empty, or nil.
func (g *diffGen) labels(md *runtimeapi.PodSandboxMetadata, ctr string) map[string]string {
	switch g.r.IntN(10) {
	case 0:
		return nil
	case 1:
		return map[string]string{}
	case 2:
		m := map[string]string{}
		for range g.r.IntN(4) {
			m[g.pick(diffLabelKeys)] = g.pick(diffPodNames)
		}
		return m
	}
	m := map[string]string{LabelPodName: md.GetName(), LabelPodNamespace: md.GetNamespace(), LabelPodUID: md.GetUid()}
	if ctr != "" {
		m[LabelContainerName] = ctr
	}
	switch g.r.IntN(8) {
	case 0:
		m[g.pick(diffLabelKeys)] = g.pick(diffPodNames) // a value that may differ
	case 1:
		delete(m, g.pick(diffLabelKeys))
	case 2:
		m["extra"] = "x"
	case 3:
		m[LabelPodName] = md.GetName() + "-other"
	}
	return m
}

// annotations returns the kubelet's restart count annotation (right or
// wrong), other annotations, empty or nil.
func (g *diffGen) annotations(attempt uint32) map[string]string {
	switch g.r.IntN(7) {
	case 0:
		return nil
	case 1:
		return map[string]string{}
	case 2:
		return map[string]string{"io.kubernetes.container.restartCount": strconv.Itoa(int(attempt) + 1)}
	case 3:
		return map[string]string{"io.kubernetes.container.restartCount": fmt.Sprint(attempt), "io.kubernetes.container.hash": "abc"}
	case 4:
		return map[string]string{"other": "1"}
	}
	return map[string]string{"io.kubernetes.container.restartCount": fmt.Sprint(attempt)}
}

// resources returns random container resources, nil now and then.
func (g *diffGen) resources() *runtimeapi.LinuxContainerResources {
	if g.chance(8) {
		return nil
	}
	r := &runtimeapi.LinuxContainerResources{}
	vals := []int64{0, 0, -1, 2, 1024, 20000, 100000, 64 * mi, 256 * mi}
	if g.chance(2) {
		r.CpuShares = vals[g.r.IntN(len(vals))]
	}
	if g.chance(2) {
		r.CpuQuota = vals[g.r.IntN(len(vals))]
	}
	if g.chance(2) {
		r.CpuPeriod = []int64{0, 50000, 100000}[g.r.IntN(3)]
	}
	if g.chance(2) {
		r.MemoryLimitInBytes = []int64{0, -1, 32 * mi, 128 * mi, 512 * mi}[g.r.IntN(5)]
	}
	if g.chance(3) {
		r.OomScoreAdj = []int64{-997, 0, 900, 1000}[g.r.IntN(4)]
	}
	if g.chance(4) {
		r.MemorySwapLimitInBytes = []int64{-1, 64 * mi, 1 << 30}[g.r.IntN(3)]
	}
	if g.chance(5) {
		r.CpusetCpus = g.pick([]string{"0", "0-1", ""})
	}
	if g.chance(6) {
		r.CpusetMems = g.pick([]string{"0", ""})
	}
	switch g.r.IntN(6) {
	case 0:
		r.Unified = diffOOMGroup
	case 1:
		r.Unified = map[string]string{}
	case 2:
		r.Unified = map[string]string{"memory.high": g.pick([]string{"max", "1000"})}
	case 3:
		r.Unified = map[string]string{"memory.oom.group": "1", "memory.high": "max"}
	}
	switch g.r.IntN(6) {
	case 0:
		r.HugepageLimits = []*runtimeapi.HugepageLimit{}
	case 1:
		r.HugepageLimits = []*runtimeapi.HugepageLimit{{PageSize: "2MB", Limit: uint64(g.r.IntN(3)) * 2 << 20}}
	case 2:
		r.HugepageLimits = []*runtimeapi.HugepageLimit{nil, {PageSize: "1GB"}}
	}
	return r
}

func (g *diffGen) runSandbox() {
	md := &runtimeapi.PodSandboxMetadata{Name: g.pick(diffPodNames), Namespace: g.pick(diffNamespaces), Uid: g.pick(diffUIDs), Attempt: uint32(g.r.IntN(2))}
	parents := []string{"", "kubepods/pod" + md.Uid, "/kubepods/burstable/pod" + md.Uid + "/", "kubepods-burstable-pod" + md.Uid + ".slice", "kubepods--x.slice", "-.slice"}
	cfg := &runtimeapi.PodSandboxConfig{Metadata: md, Labels: g.labels(md, ""), Annotations: g.annotations(0)}
	if g.chance(3) {
		cfg.Annotations = nil
	}
	if !g.chance(6) {
		cfg.Linux = &runtimeapi.LinuxPodSandboxConfig{CgroupParent: g.pick(parents)}
	}
	if g.chance(20) {
		cfg.Metadata = nil
	}
	if g.chance(3) {
		// The kubelet's shape exactly.
		cfg = kubeletSandbox(md.Name, md.Namespace, md.Uid, "kubepods/pod"+md.Uid)
		cfg.Metadata.Attempt = md.Attempt
	}
	handler := ""
	if g.chance(5) {
		handler = "runc"
	}
	if id := g.p.runPodSandbox(cfg, handler); id != "" {
		g.sandboxes = append(g.sandboxes, diffSandbox{id: id, cfg: cfg})
	}
}

func (g *diffGen) createContainer() {
	sbID, sbCfg := g.sandbox()
	var md *runtimeapi.PodSandboxMetadata
	if sbCfg != nil {
		md = sbCfg.Metadata
	}
	name := g.pick(diffCtrNames)
	attempt := uint32(g.r.IntN(3))
	var cfg *runtimeapi.ContainerConfig
	if g.chance(2) && md != nil {
		cfg = kubeletContainer(sbCfg, name, attempt, g.resources())
	} else {
		cfg = &runtimeapi.ContainerConfig{
			Metadata:    &runtimeapi.ContainerMetadata{Name: name, Attempt: attempt},
			Labels:      g.labels(md, g.pick([]string{name, name, "other"})),
			Annotations: g.annotations(attempt),
		}
		switch g.r.IntN(4) {
		case 0:
		case 1:
			cfg.Image = &runtimeapi.ImageSpec{}
		default:
			cfg.Image = &runtimeapi.ImageSpec{Image: g.pick([]string{"busybox", "registry.k8s.io/pause:3.10"})}
		}
		if g.chance(2) {
			cfg.Command = []string{"sleep"}
		}
		if g.chance(2) {
			cfg.Args = []string{"86400"}
		}
		switch g.r.IntN(4) {
		case 0:
		case 1:
			cfg.Linux = &runtimeapi.LinuxContainerConfig{}
		default:
			cfg.Linux = &runtimeapi.LinuxContainerConfig{Resources: g.resources()}
		}
		if g.chance(25) {
			cfg.Metadata = nil
		}
	}
	if id := g.p.createContainer(sbID, cfg, sbCfg); id != "" {
		g.ctrs = append(g.ctrs, id)
	}
}

// step makes one random call, or injects a fault.
func (g *diffGen) step() {
	p := g.p
	switch n := g.r.IntN(100); {
	case n < 7:
		g.runSandbox()
	case n < 20:
		g.createContainer()
	case n < 30:
		p.startContainer(g.container())
	case n < 33:
		p.stopContainer(g.container())
	case n < 36:
		p.removeContainer(g.container())
	case n < 38:
		p.exit(g.container(), []int32{0, 1, 137}[g.r.IntN(3)], g.pick([]string{"", "Completed", "Error", "Custom"}))
	case n < 43:
		p.setMemoryUsage(g.container(), []int64{-1, 0, 16 * mi, 100 * mi, 300 * mi, 1 << 40}[g.r.IntN(6)])
	case n < 55:
		res := &runtimeapi.ContainerResources{Linux: g.resources()}
		if g.chance(10) {
			res = nil
		}
		p.updateContainerResources(g.container(), res)
	case n < 70:
		p.containerStatus(g.container(), g.chance(4))
	case n < 73:
		p.containerStats(g.container())
	case n < 75:
		p.pid(g.container())
	case n < 79:
		f := &runtimeapi.ContainerFilter{}
		switch g.r.IntN(6) {
		case 0:
			f = nil
		case 1:
			f.Id = g.container()
		case 2:
			f.PodSandboxId, _ = g.sandbox()
		case 3:
			f.State = &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState(g.r.IntN(4))}
		case 4:
			f.LabelSelector = map[string]string{g.pick(diffLabelKeys): g.pick(append(diffCtrNames, diffPodNames...))}
		case 5:
			f.LabelSelector = map[string]string{}
		}
		p.listContainers(f)
	case n < 82:
		f := &runtimeapi.PodSandboxFilter{}
		switch g.r.IntN(5) {
		case 0:
			f = nil
		case 1:
			f.Id, _ = g.sandbox()
		case 2:
			f.State = &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState(g.r.IntN(2))}
		case 3:
			f.LabelSelector = map[string]string{g.pick(diffLabelKeys): g.pick(append(diffUIDs, diffPodNames...))}
		}
		p.listPodSandbox(f)
	case n < 85:
		id, _ := g.sandbox()
		req := &runtimeapi.UpdatePodSandboxResourcesRequest{PodSandboxId: id, Overhead: g.resources(), Resources: g.resources()}
		if g.chance(10) {
			req = nil
		}
		p.updatePodSandboxResources(req)
	case n < 87:
		id, _ := g.sandbox()
		p.sandboxResources(id)
	case n < 89:
		id := g.container()
		cmd := usageCommand(id, int64(g.r.IntN(4))*8*mi)
		if g.chance(3) {
			cmd = []string{"ls", "/"}
		}
		p.execSync(id, cmd)
	case n < 91:
		id, _ := g.sandbox()
		p.stopPodSandbox(id)
	case n < 93:
		id, _ := g.sandbox()
		p.removePodSandbox(id)
	case n < 96:
		errs := []error{nil, syscall.EIO, syscall.EBUSY}
		p.injectCgroupFault(g.container(), errs[g.r.IntN(len(errs))], 1+g.r.IntN(2))
	case n < 98:
		methods := []string{"UpdateContainerResources", "ContainerStatus", "StopContainer", "StartContainer", "CreateContainer", "RunPodSandbox", "ListContainers"}
		f := Fault{Method: g.pick(methods), Times: 1 + g.r.IntN(2)}
		switch g.r.IntN(4) {
		case 0:
			f.PodName = g.pick(diffPodNames)
		case 1:
			f.ContainerName = g.pick(diffCtrNames)
		case 2:
			f.PodNamespace = g.pick(diffNamespaces)
		}
		p.injectRuntimeFault(f)
	default:
		g.p.allStatuses()
	}
}

// dumpOf renders v for comparison: every exported field, nil told apart
// from empty for pointers, maps and slices, map keys in order. The
// protobuf messages' internal state (unexported fields) is left out.
func dumpOf(v any) string {
	var b strings.Builder
	dumpValue(&b, reflect.ValueOf(v))
	return b.String()
}

func dumpValue(b *strings.Builder, v reflect.Value) {
	if !v.IsValid() {
		b.WriteString("<invalid>")
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			b.WriteString("nil")
			return
		}
		if v.Kind() == reflect.Pointer {
			b.WriteString("&")
		}
		dumpValue(b, v.Elem())
	case reflect.Struct:
		b.WriteString(v.Type().Name() + "{")
		for i := range v.NumField() {
			if !v.Type().Field(i).IsExported() {
				continue
			}
			b.WriteString(v.Type().Field(i).Name + ":")
			dumpValue(b, v.Field(i))
			b.WriteString(" ")
		}
		b.WriteString("}")
	case reflect.Map:
		if v.IsNil() {
			b.WriteString("nilmap")
			return
		}
		var entries []string
		for _, k := range v.MapKeys() {
			entries = append(entries, dumpOf(k.Interface())+":"+dumpOf(v.MapIndex(k).Interface()))
		}
		slices.Sort(entries)
		b.WriteString("map[" + strings.Join(entries, " ") + "]")
	case reflect.Slice:
		if v.IsNil() {
			b.WriteString("nilslice")
			return
		}
		b.WriteString("[")
		for i := range v.Len() {
			dumpValue(b, v.Index(i))
			b.WriteString(" ")
		}
		b.WriteString("]")
	case reflect.Array:
		b.WriteString("[")
		for i := range v.Len() {
			dumpValue(b, v.Index(i))
			b.WriteString(" ")
		}
		b.WriteString("]")
	case reflect.String:
		b.WriteString(strconv.Quote(v.String()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		b.WriteString(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		b.WriteString(strconv.FormatUint(v.Uint(), 10))
	case reflect.Bool:
		b.WriteString(strconv.FormatBool(v.Bool()))
	default:
		fmt.Fprintf(b, "%#v", v.Interface())
	}
}

// diffSentinels are the errors the differential test checks errors.Is for.
var diffSentinels = []error{
	ErrNotFound, ErrUnavailable, ErrNotRunning, ErrNotCreated, ErrSandboxNotReady, ErrNameReserved, ErrInvalidArgument,
	ErrInjected, cgroup.ErrInjected, cgroup.ErrNotExist, cgroup.ErrInvalidPath, errors.ErrUnsupported, syscall.EBUSY, syscall.EIO,
}

// errorDump renders an error for comparison: its message, the sentinels it
// is, and a MemoryLimitError's fields.
func errorDump(err error) string {
	if err == nil {
		return "<nil>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%q is", err.Error())
	for i, s := range diffSentinels {
		if errors.Is(err, s) {
			fmt.Fprintf(&b, " %d", i)
		}
	}
	var mle *MemoryLimitError
	if errors.As(err, &mle) {
		fmt.Fprintf(&b, " memory limit %d usage %d peak %d: %v", mle.Limit, mle.Usage, mle.Peak, mle.Err)
	}
	return b.String()
}

// writesDump renders the latest n writes of a cgroup hierarchy and how
// many it keeps.
func writesDump(k *cgroup.SimKernel, n int) string {
	w := k.Writes()
	return strconv.Itoa(len(w)) + dumpOf(w[max(0, len(w)-n):])
}

// kernelDump renders a cgroup hierarchy: every cgroup's files and the
// writes made.
func kernelDump(k *cgroup.SimKernel) string {
	var b strings.Builder
	for _, path := range k.Paths() {
		b.WriteString(path + dumpOf(k.Files(path)) + "\n")
	}
	b.WriteString(dumpOf(k.Writes()))
	return b.String()
}

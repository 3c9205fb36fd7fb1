// Package benchworld builds the world resizelet's benchmarks run in, the
// one the performance reference measured the kubelet v1.35.4 in, and times
// a resize in it from outside the module: the node's decision alone, or a
// whole cycle.
//
// Start with New, which builds a simulated node (World) with the world's
// first n pods settled on it, and with World.BenchmarkDecision and
// World.BenchmarkCycle, which run a benchmark's loop:
//
//	func BenchmarkDecision(b *testing.B) {
//		w, err := benchworld.New(context.Background(), benchworld.Options{Pods: 110})
//		if err != nil {
//			b.Fatal(err)
//		}
//		defer w.Close()
//		w.BenchmarkDecision(b, benchworld.Admitted(), resize.ReasonResizeStarted)
//	}
//
// The world: a node big enough that nothing is rejected (Config: 16000
// CPUs, 64Ti of memory, 10000 pods, the kubelet's defaults otherwise); the
// Burstable pod "target" (c1 200m/128Mi limits 400m/256Mi, c2 100m/64Mi
// limits 200m/128Mi) and n-1 pods drawn from math/rand seeded 20260101
// (Pods); resizes of target/c1 that alternate between two sizes, admitted
// (Admitted) or deferred every time (Deferred); the three-container pod
// that new-pod admission adds (NewPod); a fleet of such nodes (NewFleet).
// The reference's sizes are Sizes.
//
// A decision, as the reference times it, is the node's handling of a
// resize from the updated pod (the API server has applied the patch and
// bumped the generation) to the allocation decision, the condition and the
// event; the API server's part before it and the actuation and status
// write after it are left out (World.UpdatedPod, World.Decide,
// World.Settle, for a loop of one's own). A cycle is a whole resize through
// the node: API server, decision, actuation on the in-memory kernel and
// containerd, and the status write.
//
// PERFORMANCE.md beside this package lists the project's benchmarks, the
// commands that run them and their figures against the kubelet's.
package benchworld

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/core"
	"github.com/resizelet/resizelet/resize/internal/benchhook"
)

// Sizes are the numbers of pods on the node the reference measures at.
var Sizes = []int{10, 110, 1000, 5000}

// Start is when the world's clocks start: resize.DefaultStart, as every
// simulated clock.
var Start = resize.DefaultStart

// Config is the world's node: capacity (and allocatable) 16000 CPUs, 64Ti
// of memory and 10000 pods, so that no pod of the world is rejected; the
// kubelet's defaults otherwise (CPU manager none, memory manager None,
// CFS quota on, period 100ms, cgroup v2).
func Config() resize.NodeConfig {
	return resize.NodeConfig{Capacity: v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse("16000"),
		v1.ResourceMemory: resource.MustParse("64Ti"),
		v1.ResourcePods:   resource.MustParse("10000"),
	}}
}

// Container is a container of the world: cpu in millicores, memory in MiB.
func Container(name string, cpuReq, memReqMi, cpuLim, memLimMi int64) v1.Container {
	return v1.Container{Name: name, Image: "registry.k8s.io/pause:3.10", Resources: v1.ResourceRequirements{
		Requests: v1.ResourceList{
			v1.ResourceCPU:    *resource.NewMilliQuantity(cpuReq, resource.DecimalSI),
			v1.ResourceMemory: *resource.NewQuantity(memReqMi<<20, resource.BinarySI),
		},
		Limits: v1.ResourceList{
			v1.ResourceCPU:    *resource.NewMilliQuantity(cpuLim, resource.DecimalSI),
			v1.ResourceMemory: *resource.NewQuantity(memLimMi<<20, resource.BinarySI),
		},
	}}
}

// Pods returns the world's first n pods in namespace "default", in the
// order they are added: "target" (Burstable; c1 200m/128Mi limits
// 400m/256Mi, c2 100m/64Mi limits 200m/128Mi), then pod-0000, pod-0001,
// ... drawn from math/rand seeded 20260101: per pod f (1: limits =
// requests, 2: limits twice the requests), then k containers c1..ck, then
// per container cpu 100+50*Intn(9) millicores and memory 64+32*Intn(7) Mi,
// in that order. 10, 110, 1000 and 5000 pods have 23, 232, 1963 and 9878
// containers.
func Pods(n int) []*v1.Pod {
	if n <= 0 {
		return nil
	}
	pod := func(name string, cs ...v1.Container) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: v1.PodSpec{Containers: cs}}
	}
	pods := []*v1.Pod{pod("target", Container("c1", 200, 128, 400, 256), Container("c2", 100, 64, 200, 128))}
	r := rand.New(rand.NewSource(20260101))
	for i := 0; i < n-1; i++ {
		f := int64(1 + r.Intn(2))
		k := 1 + r.Intn(3)
		var cs []v1.Container
		for c := 1; c <= k; c++ {
			cpu := int64(100 + 50*r.Intn(9))
			mem := int64(64 + 32*r.Intn(7))
			cs = append(cs, Container(fmt.Sprintf("c%d", c), cpu, mem, f*cpu, f*mem))
		}
		pods = append(pods, pod(fmt.Sprintf("pod-%04d", i), cs...))
	}
	return pods
}

// NewPod is the pod that the new-pod admission benchmark adds beside the
// world's pods: "new", Burstable, c1 250m/256Mi limits 500m/512Mi, c2
// 100m/128Mi limits 200m/256Mi, c3 50m/64Mi limits 100m/128Mi.
func NewPod() *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "new", Namespace: "default"}, Spec: v1.PodSpec{Containers: []v1.Container{
		Container("c1", 250, 256, 500, 512), Container("c2", 100, 128, 200, 256), Container("c3", 50, 64, 100, 128),
	}}}
}

// A Resize is a resize of target/c1, as the strategic merge patch kubectl
// sends and as the typed request that gives the same pod.
type Resize struct {
	Patch   []byte
	Request resize.ResizeRequest
}

// Admitted are the two sizes of target/c1 that the admitted benchmarks
// alternate between, each a real change that the node admits: 300m/192Mi
// limits 600m/384Mi, and back to 200m/128Mi limits 400m/256Mi.
func Admitted() [2]Resize {
	return [2]Resize{c1Resize(300, 192, 600, 384), c1Resize(200, 128, 400, 256)}
}

// Deferred are two sizes of target/c1 that the node defers every time:
// the node's whole cpu but c2's 100m, requests = limits, with memory
// 192Mi/384Mi, and 1m less with 160Mi/320Mi (a new generation each time).
func Deferred() [2]Resize {
	return [2]Resize{c1Resize(15999900, 192, 15999900, 384), c1Resize(15999899, 160, 15999899, 320)}
}

func c1Resize(cpuReq, memReqMi, cpuLim, memLimMi int64) Resize {
	req := resize.ResizeRequest{Containers: []resize.ContainerResize{{Name: "c1",
		Requests: resize.CPUMemory(cpuReq, memReqMi<<20), Limits: resize.CPUMemory(cpuLim, memLimMi<<20)}}}
	return Resize{Patch: req.Patch(), Request: req}
}

// Options are the world New builds.
type Options struct {
	// Pods is how many of the world's pods (Pods) are settled on the node.
	Pods int
	// Namespace, when set, is the namespace of the pods instead of
	// "default": worlds built one after the other in one process share
	// nothing frozen then (package allocation/frozen interns equal pods).
	Namespace string
	// Config, when set, changes the node's configuration (Config) before
	// the node starts.
	Config func(*resize.NodeConfig)
}

// World is a simulated node of the world with its pods settled on it: the
// node, its API server, its clock, and the in-memory kernel and containerd
// it runs on. Close it when done.
type World struct {
	Node    *resize.Node
	Cluster *resize.Cluster
	Clock   *resize.FakeClock
	Kernel  *cgroup.SimKernel
	Runtime *cri.SimContainerd
	// Namespace is the namespace of the world's pods.
	Namespace string
	// Resizes counts the resizes BenchmarkDecision and BenchmarkCycle
	// made; the next is of the size Resizes%2, so that a benchmark run
	// again on the same world goes on alternating, every op a change.
	Resizes int

	// What Decide keeps for Settle, and its buffers, reused so that a
	// decision allocates nothing of the kit's own.
	steps   benchhook.Node
	pending core.Ready
	results []core.Result
	resize  core.ResizeRequested
	done    core.BatchDone
}

// New builds a world: a simulated node of Config (changed by
// opts.Config), with in-memory checkpoints, and opts.Pods pods of the
// world added with Node.AddPods and settled.
func New(ctx context.Context, opts Options) (*World, error) {
	if opts.Pods < 0 {
		return nil, fmt.Errorf("benchworld: %d pods: want 0 or more", opts.Pods)
	}
	cfg := Config()
	if opts.Config != nil {
		opts.Config(&cfg)
	}
	cfg = cfg.WithDefaults()
	w := &World{Namespace: opts.Namespace}
	if w.Namespace == "" {
		w.Namespace = "default"
	}
	w.Kernel = cgroup.NewSimKernel(cfg.CgroupVersion)
	w.Runtime = cri.NewSimContainerd(w.Kernel)
	w.Clock = resize.NewFakeClock(Start)
	w.Cluster = resize.NewCluster(resize.ClusterOptions{Profile: cfg.Profile, FeatureGates: cfg.FeatureGates, HotPods: cfg.HotPods})
	node, err := resize.NewNode(ctx, cfg, resize.Deps{Cluster: w.Cluster, Cgroups: w.Kernel, Runtime: w.Runtime, Clock: w.Clock})
	if err != nil {
		return nil, fmt.Errorf("benchworld: %w", err)
	}
	w.Node = node
	w.steps = benchhook.Of(node)
	pods := Pods(opts.Pods)
	for _, p := range pods {
		p.Namespace = w.Namespace
	}
	if _, err := node.AddPods(ctx, pods); err != nil {
		node.Close()
		return nil, fmt.Errorf("benchworld: add the world's pods: %w", err)
	}
	return w, nil
}

// Close stops the node.
func (w *World) Close() error {
	if err := w.check(); err != nil {
		return err
	}
	return w.Node.Close()
}

// check refuses a World that New did not build.
func (w *World) check() error {
	if w == nil || w.Node == nil || w.steps == nil {
		return errNoWorld
	}
	return nil
}

// errNoWorld is the error of a World that New did not build.
var errNoWorld = errors.New("benchworld: a World is built by New")

// NewFleet builds a fleet of nodes world nodes (Config, named node-1,
// node-2, ...), each with the world's first n pods settled on it in a
// namespace of its own (prefix-1, prefix-2, ...), so that every node's
// pods have the same names and nothing frozen is shared between nodes.
func NewFleet(ctx context.Context, nodes, n int, prefix string) (*resize.Fleet, error) {
	f := resize.NewFleet(resize.FleetOptions{Start: Start})
	for i := 1; i <= nodes; i++ {
		cfg := Config()
		cfg.Name = fmt.Sprintf("node-%d", i)
		node, err := f.AddNode(ctx, cfg, resize.Deps{})
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("benchworld: %w", err)
		}
		pods := Pods(n)
		for _, p := range pods {
			p.Namespace = fmt.Sprintf("%s-%d", prefix, i)
			p.Spec.NodeName = cfg.Name
		}
		if _, err := node.AddPods(ctx, pods); err != nil {
			f.Close()
			return nil, fmt.Errorf("benchworld: add the world's pods to %s: %w", cfg.Name, err)
		}
	}
	return f, nil
}

// UpdatedPod is the API server's part of a resize, which a decision
// benchmark leaves out: it applies r's patch to the target pod and returns
// the pod as the API server hands it to the node.
func (w *World) UpdatedPod(r Resize) (*v1.Pod, error) {
	if err := w.check(); err != nil {
		return nil, err
	}
	pod, err := w.Cluster.ResizePod(context.Background(), w.Namespace, "target", r.Patch)
	if err != nil {
		return nil, err
	}
	own := *pod // as the node's driver takes it: the top level the kubelet's own
	return &own, nil
}

// Decide is the decision: it hands the node the updated pod and steps the
// node's core, performing the batches before it, until a batch records an
// event with reason (resize.ReasonResizeStarted for an admitted resize,
// resize.ReasonResizeDeferred for a deferred one). What follows is left
// for Settle, which must come before the next Decide.
func (w *World) Decide(pod *v1.Pod, reason string) error {
	if err := w.check(); err != nil {
		return err
	}
	ctx := context.Background()
	w.resize = core.ResizeRequested{Pod: pod, Now: w.Clock.Now()}
	rd, err := w.steps.Step(&w.resize)
	for err == nil && rd.Batch != nil && !emits(rd.Batch, reason) {
		w.results = w.steps.Perform(ctx, rd.Batch, w.results)
		w.done = core.BatchDone{ID: rd.Batch.ID, Results: w.results, Now: w.Clock.Now()}
		rd, err = w.steps.Step(&w.done)
	}
	w.pending = rd
	switch {
	case err != nil:
		return err
	case rd.Batch == nil:
		return fmt.Errorf("benchworld: the node decided without a %s event", reason)
	}
	return nil
}

// Settle performs what the decision left (the actuation, the status
// write) until the node is quiet.
func (w *World) Settle(ctx context.Context) error {
	if err := w.check(); err != nil {
		return err
	}
	if ctx == nil {
		return errors.New("benchworld: nil context.Context")
	}
	rd := w.pending
	w.pending = core.Ready{}
	return w.steps.Drain(ctx, rd)
}

// emits reports whether a batch records an event with the reason.
func emits(batch *core.Batch, reason string) bool {
	for _, a := range batch.Actions {
		if e, ok := a.(core.RecordEvent); ok && e.Event.Reason == reason {
			return true
		}
	}
	return false
}

// BenchmarkDecision runs b's loop of decisions: each op resizes the
// target to the next of rs (World.Resizes) and times the node's decision alone (Decide with reason),
// the API server's part and what follows the decision untimed.
func (w *World) BenchmarkDecision(b *testing.B, rs [2]Resize, reason string) {
	if b == nil {
		return
	}
	if err := w.check(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		pod, err := w.UpdatedPod(rs[w.Resizes%2])
		w.Resizes++
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		err = w.Decide(pod, reason)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if err := w.Settle(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkCycle runs b's loop of whole resizes: each op resizes the
// target to the next of rs (World.Resizes) through Node.Resize, with its
// patch or, with typed, its typed request (no JSON on the way).
func (w *World) BenchmarkCycle(b *testing.B, rs [2]Resize, typed bool) {
	if b == nil {
		return
	}
	if err := w.check(); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var err error
		r := &rs[w.Resizes%2]
		w.Resizes++
		if typed {
			_, err = w.Node.Resize(ctx, resize.ResizeOp{Namespace: w.Namespace, Name: "target", Request: r.Request})
		} else {
			_, err = w.Node.Resize(ctx, resize.ResizeOp{Namespace: w.Namespace, Name: "target", Patch: r.Patch})
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

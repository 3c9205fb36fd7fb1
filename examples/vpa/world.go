package main

import (
	"fmt"
	"math"
	"math/rand/v2"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/resize"
)

// amounts are a container's cpu (millicores) and memory (bytes).
type amounts struct{ cpu, memory int64 }

func (a amounts) String() string {
	return fmt.Sprintf("cpu %s mem %s", formatCPU(a.cpu), formatMemory(a.memory))
}

// formatCPU prints millicores as Kubernetes does: whole CPUs without a
// unit, the rest in m.
func formatCPU(m int64) string { return resource.NewMilliQuantity(m, resource.DecimalSI).String() }

// formatMemory prints bytes as Kubernetes does (Mi, Gi, ...).
func formatMemory(b int64) string { return resource.NewQuantity(b, resource.BinarySI).String() }

// workload is a Deployment-like set of pods: one container, app, whose
// usage follows a shape over the simulated hour, and the requests and
// limits its pod template starts with. Every pod of a workload has the
// same usage shape times a factor of its own, plus noise.
type workload struct {
	name string
	// share is the part of each node's pods the workload has; the last
	// workload with a share takes what is left.
	share float64
	// perNodes, when set instead of share, gives the workload one pod on
	// each of the first standard nodes, one per perNodes nodes.
	perNodes int
	requests amounts
	// limitRatio is limits / requests, which the updater keeps (the VPA
	// scales limits in proportion to requests by default).
	limitRatio float64
	// cpu and memory are the usage (millicores, bytes) of an average pod
	// at minute m of the simulation.
	cpu, memory func(m float64) float64
	// maxAllowed caps the recommendation, as a VPA object's
	// resourcePolicy maxAllowed does.
	maxAllowed amounts
}

const mib = 1 << 20

// world is the example's cluster: its node kinds and its workloads,
// sized for podsPerNode pods on each node. Node sizes scale with the pods
// (18 CPUs for 100 pods on a standard node), so that a smaller run is as
// full and tells the same story.
type world struct {
	standard, large nodeKind
	workloads       []*workload
}

// newWorld builds the world for podsPerNode pods on each node.
//
// The workloads' usage changes in steps (a traffic surge, a queue that
// drains, a cache that grows, a training job that starts), so that each
// change makes a wave of resizes of the workload's pods, and together
// they take every path of a resize: api's surge at minute 15 asks for
// more than the full standard nodes have left (Deferred, admitted once a
// pod leaves the node, or recreated after five minutes), and train's jump
// at minute 20 to 7/6 of a standard node's CPUs asks for more than a
// standard node has at all (Infeasible, recreated on a large node).
func newWorld(podsPerNode int) *world {
	scale := float64(podsPerNode) / 100
	cpus := func(c float64) resource.Quantity {
		return *resource.NewMilliQuantity(int64(c*1000*scale), resource.DecimalSI)
	}
	gib := func(g float64) resource.Quantity {
		return *resource.NewQuantity(int64(g*scale)<<30, resource.BinarySI)
	}
	return worldOf(podsPerNode,
		nodeKind{"standard", v1.ResourceList{v1.ResourceCPU: cpus(18), v1.ResourceMemory: gib(64), v1.ResourcePods: resource.MustParse("110")}},
		nodeKind{"large", v1.ResourceList{v1.ResourceCPU: cpus(48), v1.ResourceMemory: gib(192), v1.ResourcePods: resource.MustParse("110")}})
}

// worldOf builds the workloads for podsPerNode pods on nodes of the two
// kinds given: newWorld's, or on a real API server the sizes the agents
// registered (real.go). train's jump is sized to the standard node's
// CPUs, so that it is Infeasible there whatever that size is.
func worldOf(podsPerNode int, standard, large nodeKind) *world {
	scale := float64(podsPerNode) / 100
	w := &world{standard: standard, large: large}
	standardCPU := float64(w.standard.capacity.Cpu().MilliValue())
	w.workloads = []*workload{
		{name: "web", share: 0.4, requests: amounts{110, 256 * mib}, limitRatio: 2,
			cpu:        func(m float64) float64 { return 80 },
			memory:     func(m float64) float64 { return 180 * mib },
			maxAllowed: amounts{2000, 2048 * mib}},
		{name: "api", share: 0.3, requests: amounts{165, 280 * mib}, limitRatio: 2,
			cpu:        func(m float64) float64 { return 120 * steps(m, step{15, 2}, step{40, 1}) },
			memory:     func(m float64) float64 { return 200 * mib },
			maxAllowed: amounts{2000, 2048 * mib}},
		{name: "worker", share: 0.2, requests: amounts{165, 256 * mib}, limitRatio: 1,
			cpu:        func(m float64) float64 { return 120 * steps(m, step{18, 0.4}) },
			memory:     func(m float64) float64 { return 180 * mib },
			maxAllowed: amounts{2000, 2048 * mib}},
		{name: "cache", share: 1, requests: amounts{110, 512 * mib}, limitRatio: 1,
			cpu:        func(m float64) float64 { return 80 },
			memory:     func(m float64) float64 { return 380 * mib * steps(m, step{30, 1.5}) },
			maxAllowed: amounts{1000, 4096 * mib}},
		{name: "train", perNodes: 5, requests: amounts{int64(1150 * scale), 1100 * mib}, limitRatio: 1,
			cpu:        func(m float64) float64 { return 850 * scale * steps(m, step{20, standardCPU * 7 / 6 / (850 * scale)}) },
			memory:     func(m float64) float64 { return 800 * mib },
			maxAllowed: amounts{int64(standardCPU * 4 / 3), 8192 * mib}},
	}
	return w
}

// step is a change of usage: from minute at, the usage is factor times
// the base.
type step struct{ at, factor float64 }

// steps is the factor of the last step reached by minute m, 1 before the
// first.
func steps(m float64, s ...step) float64 {
	f := 1.0
	for _, st := range s {
		if m >= st.at {
			f = st.factor
		}
	}
	return f
}

// nodeKind is a size of node.
type nodeKind struct {
	name     string
	capacity v1.ResourceList
}

func (k nodeKind) String() string {
	return fmt.Sprintf("%s %s CPU/%s", k.name, k.capacity.Cpu(), k.capacity.Memory())
}

// kindOf is node i's kind (i from 1): every fifth node is large.
func (w *world) kindOf(i int) nodeKind {
	if i%5 == 0 {
		return w.large
	}
	return w.standard
}

// nodeConfig is node i's configuration for kubelet version v. The nodes
// keep the default few pods decoded: the updater reads its caches, a
// settled pod's resync is skipped (quiet), and freezing a pod is cheap.
func (w *world) nodeConfig(i int, v resize.Profile) resize.NodeConfig {
	return resize.NodeConfig{
		Name:     fmt.Sprintf("node-%d", i),
		Capacity: w.kindOf(i).capacity.DeepCopy(),
		Profile:  v,
	}
}

// replica is one pod of a workload as the updater knows it.
type replica struct {
	name   string
	wl     *workload
	factor float64 // the pod's usage relative to the workload's shape
}

// namer makes pod names as a Deployment's ReplicaSet does:
// <deployment>-<pod-template-hash>-<5 random characters>, drawn from the
// seeded source so that runs repeat.
type namer struct {
	rng   *rand.Rand
	hash  map[string]string
	taken map[string]bool
}

// The alphabet of generated names (k8s.io/apimachinery/pkg/util/rand,
// String): no vowels, no confusable characters.
const nameAlphabet = "bcdfghjklmnpqrstvwxz2456789"

func newNamer(rng *rand.Rand) *namer {
	return &namer{rng: rng, hash: map[string]string{}, taken: map[string]bool{}}
}

func (n *namer) random(k int) string {
	b := make([]byte, k)
	for i := range b {
		b[i] = nameAlphabet[n.rng.IntN(len(nameAlphabet))]
	}
	return string(b)
}

// replicaSet is the workload's ReplicaSet name.
func (n *namer) replicaSet(wl *workload) string {
	h, ok := n.hash[wl.name]
	if !ok {
		h = n.random(10)
		n.hash[wl.name] = h
	}
	return wl.name + "-" + h
}

// pod returns a new pod name of the workload.
func (n *namer) pod(wl *workload) string {
	for {
		name := n.replicaSet(wl) + "-" + n.random(5)
		if !n.taken[name] {
			n.taken[name] = true
			return name
		}
	}
}

// namespace holds every pod of the example.
const namespace = "default"

// Every pod of the example has one container, appContainer, and the label
// appLabel with its workload's name, which the workload's VPA object
// selects its pods by.
const (
	appContainer = "app"
	appLabel     = "app"
)

// podFor builds a pod of the workload named name with the requests given
// (limits in the workload's ratio), owned by its ReplicaSet and bound to
// node ("" leaves it for the scheduler).
func podFor(wl *workload, rs, name, node string, req amounts) *v1.Pod {
	controller := true
	lim := amounts{cpu: int64(float64(req.cpu) * wl.limitRatio), memory: int64(float64(req.memory) * wl.limitRatio)}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: namespace,
			Labels: map[string]string{appLabel: wl.name},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs,
				UID: types.UID("rs-" + rs), Controller: &controller,
			}},
		},
		Spec: v1.PodSpec{
			NodeName: node,
			Containers: []v1.Container{{
				Name: appContainer, Image: "registry.k8s.io/pause:3.10",
				Resources: v1.ResourceRequirements{Requests: req.list(), Limits: lim.list()},
			}},
		},
	}
}

func (a amounts) list() v1.ResourceList {
	return v1.ResourceList{
		v1.ResourceCPU:    *resource.NewMilliQuantity(a.cpu, resource.DecimalSI),
		v1.ResourceMemory: *resource.NewQuantity(a.memory, resource.BinarySI),
	}
}

// placement lists, for each node (from 1), the workloads of its pods: the
// shares of each node's pods, the per-node workloads on the first standard
// nodes, and the rest to the last share workload.
func (w *world) placement(nodes, podsPerNode int) [][]*workload {
	standard := make([]bool, nodes)
	for i := range standard {
		standard[i] = w.kindOf(i+1).name == w.standard.name
	}
	return append([][]*workload{nil}, w.placementOn(standard, podsPerNode)...)
}

// placementOn lists, for each node (from 0), the workloads of its pods,
// as placement does, for nodes whose kinds are given: standard[i] tells
// whether node i is a standard node.
func (w *world) placementOn(standard []bool, podsPerNode int) [][]*workload {
	nodes := len(standard)
	out := make([][]*workload, nodes)
	perNode := map[*workload]int{}
	for _, wl := range w.workloads {
		if wl.perNodes > 0 {
			perNode[wl] = max(1, nodes/wl.perNodes)
		}
	}
	for i := range nodes {
		var extra []*workload
		if standard[i] {
			for _, wl := range w.workloads {
				if perNode[wl] > 0 {
					perNode[wl]--
					extra = append(extra, wl)
				}
			}
		}
		left := podsPerNode - len(extra)
		var pods []*workload
		for _, wl := range w.workloads {
			if wl.perNodes > 0 {
				continue
			}
			k := int(math.Round(wl.share * float64(podsPerNode)))
			if wl.share >= 1 || k > left-len(pods) {
				k = left - len(pods)
			}
			for range k {
				pods = append(pods, wl)
			}
		}
		out[i] = append(pods, extra...)
	}
	return out
}

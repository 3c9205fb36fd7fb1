package allocation

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/qos"
	"github.com/resizelet/resizelet/resize/profile"
)

// burstablePod is a one-container Burstable pod: requests cpu/mem, limits
// twice as much.
func burstablePod(uid, cpu, mem, cpuLim, memLim string) *v1.Pod {
	return withQOS(mkPod(uid, ctr("c1", rl("cpu="+cpu, "memory="+mem), rl("cpu="+cpuLim, "memory="+memLim))), v1.PodQOSBurstable)
}

// guaranteedPod is a one-container Guaranteed pod.
func guaranteedPod(uid, cpu, mem string) *v1.Pod {
	r := rl("cpu="+cpu, "memory="+mem)
	return withQOS(mkPod(uid, ctr("c1", r, r.DeepCopy())), v1.PodQOSGuaranteed)
}

func withPolicy(p *v1.Pod, memory v1.ResourceResizeRestartPolicy) *v1.Pod {
	p.Spec.Containers[0].ResizePolicy = []v1.ContainerResizePolicy{
		{ResourceName: v1.ResourceCPU, RestartPolicy: v1.NotRequired},
		{ResourceName: v1.ResourceMemory, RestartPolicy: memory},
	}
	return p
}

func withPodLevel(p *v1.Pod, requests v1.ResourceList) *v1.Pod {
	p.Spec.Resources = &v1.ResourceRequirements{Requests: requests}
	return p
}

func int32Ptr(v int32) *int32 { return &v }

var bigNode = rl("cpu=16", "memory=64Gi", "pods=110")

func TestAdmitResizeMessages(t *testing.T) {
	alloc := burstablePod("p", "1", "1Gi", "2", "2Gi")
	cpuUp := resized(alloc, 0, rl("cpu=2", "memory=1Gi"), rl("cpu=2", "memory=2Gi"))
	memReqUp := resized(alloc, 0, rl("cpu=1", "memory=1536Mi"), rl("cpu=2", "memory=2Gi"))
	memLimUp := resized(alloc, 0, rl("cpu=1", "memory=1Gi"), rl("cpu=2", "memory=3Gi"))
	gAlloc := guaranteedPod("g", "1", "1Gi")
	gCPUUp := resized(gAlloc, 0, rl("cpu=2", "memory=1Gi"), rl("cpu=2", "memory=1Gi"))
	gMemUp := resized(gAlloc, 0, rl("cpu=1", "memory=2Gi"), rl("cpu=1", "memory=2Gi"))

	swapNode := linuxNode(bigNode)
	swapNode.SwapBehavior = "LimitedSwap"
	cpuStatic := linuxNode(bigNode)
	cpuStatic.CPUManagerPolicy = "static"
	memStatic := linuxNode(bigNode)
	memStatic.MemoryManagerPolicy = "Static"
	with := func(n NodeConfig, f func(*NodeConfig)) NodeConfig { f(&n); return n }

	const swapMsg = "In-place resize of containers with swap is not supported."
	const cpuMgrMsg = `Resize is infeasible for Guaranteed Pods alongside CPU Manager policy "static"`
	const memMgrMsg = `Resize is infeasible for Guaranteed Pods alongside Memory Manager policy "Static"`

	tests := []struct {
		name               string
		desired, allocated *v1.Pod
		others             []*v1.Pod
		node               NodeConfig
		static             bool
		want               Decision
	}{
		{
			name: "fits", desired: cpuUp, allocated: alloc, node: linuxNode(bigNode),
			want: Decision{Outcome: Admitted},
		},
		{
			name: "unchanged pod is admitted before any check", desired: alloc.DeepCopy(), allocated: alloc,
			node: with(linuxNode(bigNode), func(n *NodeConfig) { n.OS = "windows" }), static: true,
			want: Decision{Outcome: Admitted, Reason: ReasonUnchanged},
		},
		{
			name:      "semantically equal quantities are unchanged",
			desired:   resized(alloc, 0, rl("cpu=1000m", "memory=1024Mi"), rl("cpu=2000m", "memory=2048Mi")),
			allocated: alloc, node: linuxNode(bigNode), static: true,
			want: Decision{Outcome: Admitted, Reason: ReasonUnchanged},
		},
		{
			name: "windows", desired: cpuUp, allocated: alloc,
			node: with(linuxNode(bigNode), func(n *NodeConfig) { n.OS = "windows" }),
			want: Decision{Outcome: Infeasible, Reason: "windows", Message: "In-place pod resize is not supported on Windows", Silent: true},
		},
		{
			name: "other OS", desired: cpuUp, allocated: alloc,
			node: with(linuxNode(bigNode), func(n *NodeConfig) { n.OS = "freebsd" }),
			want: Decision{Outcome: Infeasible, Reason: "unsupported_platform", Message: "In-place pod resize is not supported on this node", Silent: true},
		},
		{
			name: "feature gate off", desired: cpuUp, allocated: alloc,
			node: with(linuxNode(bigNode), func(n *NodeConfig) {
				n.Profile = profile.New(profile.V134, map[string]bool{"InPlacePodVerticalScaling": false})
			}),
			want: Decision{Outcome: Infeasible, Reason: "feature_gate_off", Message: "InPlacePodVerticalScaling is disabled", Silent: true},
		},
		{
			name: "static pod", desired: cpuUp, allocated: alloc, node: linuxNode(bigNode), static: true,
			want: Decision{Outcome: Infeasible, Reason: "static_pod", Message: "In-place resize of static-pods is not supported", Silent: true},
		},
		{
			// 1.36 dropped the static pod check from
			// IsInPlacePodVerticalScalingAllowed
			// (pkg/kubelet/allocation/features_linux.go).
			name: "static pod on 1.36 is resized like any other", desired: cpuUp, allocated: alloc,
			node: with(linuxNode(bigNode), func(n *NodeConfig) { n.Profile = profile.New(profile.V136, nil) }), static: true,
			want: Decision{Outcome: Admitted},
		},
		{
			name: "swap: burstable memory request change", desired: memReqUp, allocated: alloc, node: swapNode,
			want: Decision{Outcome: Infeasible, Reason: "swap_limitation", Message: swapMsg, Silent: true},
		},
		{
			name:    "swap: memory policy is read from the allocated container",
			desired: withPolicy(memReqUp.DeepCopy(), v1.RestartContainer), allocated: withPolicy(alloc.DeepCopy(), v1.NotRequired),
			node: swapNode,
			want: Decision{Outcome: Infeasible, Reason: "swap_limitation", Message: swapMsg, Silent: true},
		},
		{
			name:    "swap: RestartContainer memory policy on the allocated container allows it",
			desired: withPolicy(memReqUp.DeepCopy(), v1.NotRequired), allocated: withPolicy(alloc.DeepCopy(), v1.RestartContainer),
			node: swapNode, want: Decision{Outcome: Admitted},
		},
		{
			name: "swap: a memory limit change alone is allowed", desired: memLimUp, allocated: alloc, node: swapNode,
			want: Decision{Outcome: Admitted},
		},
		{
			name: "swap: NoSwap node", desired: memReqUp, allocated: alloc, node: linuxNode(bigNode),
			want: Decision{Outcome: Admitted},
		},
		{
			name: "swap: cgroup v1 gives no swap", desired: memReqUp, allocated: alloc,
			node: with(swapNode, func(n *NodeConfig) { n.CgroupVersion = cgroup.V1 }),
			want: Decision{Outcome: Admitted},
		},
		{
			name: "swap: Guaranteed pods get no swap", desired: gMemUp, allocated: gAlloc, node: swapNode,
			want: Decision{Outcome: Admitted},
		},
		{
			name:      "swap: critical pods get no swap",
			desired:   func() *v1.Pod { p := memReqUp.DeepCopy(); p.Spec.Priority = int32Ptr(2000000000); return p }(),
			allocated: func() *v1.Pod { p := alloc.DeepCopy(); p.Spec.Priority = int32Ptr(2000000000); return p }(),
			node:      swapNode, want: Decision{Outcome: Admitted},
		},
		{
			name:      "swap: a container with request equal to limit gets no swap",
			desired:   withQOS(mkPod("p", ctr("c1", rl("memory=2Gi"), rl("memory=2Gi")), ctr("c2", rl("cpu=1"), nil)), v1.PodQOSBurstable),
			allocated: withQOS(mkPod("p", ctr("c1", rl("memory=1Gi"), rl("memory=1Gi")), ctr("c2", rl("cpu=1"), nil)), v1.PodQOSBurstable),
			node:      swapNode, want: Decision{Outcome: Admitted},
		},
		{
			name:      "swap: swap in the desired form alone blocks",
			desired:   withQOS(mkPod("p", ctr("c1", rl("memory=1Gi"), rl("memory=2Gi")), ctr("c2", rl("cpu=1"), nil)), v1.PodQOSBurstable),
			allocated: withQOS(mkPod("p", ctr("c1", rl("memory=2Gi"), rl("memory=2Gi")), ctr("c2", rl("cpu=1"), nil)), v1.PodQOSBurstable),
			node:      swapNode, want: Decision{Outcome: Infeasible, Reason: "swap_limitation", Message: swapMsg, Silent: true},
		},
		{
			name:    "pod-level resources changed with the gate off",
			desired: withPodLevel(cpuUp.DeepCopy(), rl("cpu=3")), allocated: withPodLevel(alloc.DeepCopy(), rl("cpu=2")),
			node: linuxNode(bigNode),
			want: Decision{Outcome: Infeasible, Reason: "feature_gate_off", Message: "InPlacePodLevelResourcesVerticalScaling is disabled", Silent: true},
		},
		{
			name:    "pod-level-only change with the gate off is no resize (the overlay ignores it)",
			desired: withPodLevel(alloc.DeepCopy(), rl("cpu=3")), allocated: withPodLevel(alloc.DeepCopy(), rl("cpu=2")),
			node: linuxNode(bigNode), want: Decision{Outcome: Admitted, Reason: ReasonUnchanged},
		},
		{
			name:    "pod-level change with the gate on",
			desired: withPodLevel(alloc.DeepCopy(), rl("cpu=3")), allocated: withPodLevel(alloc.DeepCopy(), rl("cpu=2")),
			node: with(linuxNode(bigNode), func(n *NodeConfig) {
				n.Profile = profile.New(profile.V135, map[string]bool{"InPlacePodLevelResourcesVerticalScaling": true})
			}),
			want: Decision{Outcome: Admitted},
		},
		{
			name: "static CPU manager, Guaranteed cpu change", desired: gCPUUp, allocated: gAlloc, node: cpuStatic,
			want: Decision{Outcome: Infeasible, Reason: "guaranteed_pod_cpu_manager_static_policy", Message: cpuMgrMsg},
		},
		{
			name: "static CPU manager, Guaranteed memory-only change", desired: gMemUp, allocated: gAlloc, node: cpuStatic,
			want: Decision{Outcome: Admitted},
		},
		{
			name: "static CPU manager, Burstable cpu change", desired: cpuUp, allocated: alloc, node: cpuStatic,
			want: Decision{Outcome: Admitted},
		},
		{
			name: "static CPU manager with InPlacePodVerticalScalingExclusiveCPUs", desired: gCPUUp, allocated: gAlloc,
			node: with(cpuStatic, func(n *NodeConfig) {
				n.Profile = profile.New(profile.V135, map[string]bool{"InPlacePodVerticalScalingExclusiveCPUs": true})
			}),
			want: Decision{Outcome: Admitted},
		},
		{
			name: "static memory manager, Guaranteed memory change", desired: gMemUp, allocated: gAlloc, node: memStatic,
			want: Decision{Outcome: Infeasible, Reason: "guaranteed_pod_memory_manager_static_policy", Message: memMgrMsg},
		},
		{
			name: "static memory manager, Guaranteed cpu-only change", desired: gCPUUp, allocated: gAlloc, node: memStatic,
			want: Decision{Outcome: Admitted},
		},
		{
			name: "static memory manager, MemoryManager gate off on 1.35", desired: gMemUp, allocated: gAlloc,
			node: with(memStatic, func(n *NodeConfig) { n.Profile = profile.New(profile.V135, map[string]bool{"MemoryManager": false}) }),
			want: Decision{Outcome: Admitted},
		},
		{
			name: "static memory manager, MemoryManager gate off on 1.36", desired: gMemUp, allocated: gAlloc,
			node: with(memStatic, func(n *NodeConfig) {
				n.Profile = profile.New(profile.V136, map[string]bool{"MemoryManager": false})
			}),
			want: Decision{Outcome: Infeasible, Reason: "guaranteed_pod_memory_manager_static_policy", Message: memMgrMsg},
		},
		{
			name: "static memory manager with InPlacePodVerticalScalingExclusiveMemory", desired: gMemUp, allocated: gAlloc,
			node: with(memStatic, func(n *NodeConfig) {
				n.Profile = profile.New(profile.V135, map[string]bool{"InPlacePodVerticalScalingExclusiveMemory": true})
			}),
			want: Decision{Outcome: Admitted},
		},
		{
			name:    "walkthrough: 1000 CPUs on a 16-CPU node",
			desired: resized(alloc, 0, rl("cpu=1000", "memory=1Gi"), rl("cpu=1000", "memory=2Gi")), allocated: alloc,
			node: linuxNode(bigNode),
			want: Decision{Outcome: Infeasible, Reason: "insufficient_node_allocatable",
				Message: "Node didn't have enough capacity: cpu, requested: 1000000, capacity: 16000"},
		},
		{
			name:    "capacity: memory is reported before cpu",
			desired: resized(alloc, 0, rl("cpu=1000", "memory=1000Gi"), rl("cpu=1000", "memory=1000Gi")), allocated: alloc,
			node: linuxNode(bigNode),
			want: Decision{Outcome: Infeasible, Reason: "insufficient_node_allocatable",
				Message: "Node didn't have enough capacity: memory, requested: 1073741824000, capacity: 68719476736"},
		},
		{
			name: "capacity counts the whole pod with overhead",
			desired: func() *v1.Pod {
				p := mkPod("p", ctr("c1", rl("cpu=8"), nil), ctr("c2", rl("cpu=7900m"), nil))
				p.Spec.Overhead = rl("cpu=200m")
				return p
			}(),
			allocated: func() *v1.Pod {
				p := mkPod("p", ctr("c1", rl("cpu=1"), nil), ctr("c2", rl("cpu=1"), nil))
				p.Spec.Overhead = rl("cpu=200m")
				return p
			}(),
			node: linuxNode(bigNode),
			want: Decision{Outcome: Infeasible, Reason: "insufficient_node_allocatable",
				Message: "Node didn't have enough capacity: cpu, requested: 16100, capacity: 16000"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := AdmitResize(tc.desired, tc.allocated, tc.others, tc.node, tc.static)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("AdmitResize() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAdmitResizeFirstFailingCheckWins gives pods that fail two checks and
// expects the earlier check's decision.
func TestAdmitResizeFirstFailingCheckWins(t *testing.T) {
	gAlloc := guaranteedPod("g", "1", "1Gi")
	gBoth := resized(gAlloc, 0, rl("cpu=2", "memory=2Gi"), rl("cpu=2", "memory=2Gi"))
	gHuge := resized(gAlloc, 0, rl("cpu=100", "memory=1Gi"), rl("cpu=100", "memory=1Gi"))
	bAlloc := burstablePod("b", "1", "1Gi", "2", "2Gi")
	bMemReqHuge := resized(bAlloc, 0, rl("cpu=1", "memory=100Gi"), rl("cpu=2", "memory=200Gi"))
	bPodLevel := withPodLevel(bMemReqHuge.DeepCopy(), rl("memory=100Gi"))
	bPodLevelAlloc := withPodLevel(bAlloc.DeepCopy(), rl("memory=1Gi"))
	node := func(f func(*NodeConfig)) NodeConfig {
		n := linuxNode(bigNode)
		n.SwapBehavior = "LimitedSwap"
		n.CPUManagerPolicy = "static"
		n.MemoryManagerPolicy = "Static"
		f(&n)
		return n
	}
	tests := []struct {
		name               string
		desired, allocated *v1.Pod
		others             []*v1.Pod
		node               NodeConfig
		static             bool
		wantReason         string
	}{
		{"windows before gate and static", gBoth, gAlloc, nil, node(func(n *NodeConfig) {
			n.OS = "windows"
			n.Profile = profile.New(profile.V134, map[string]bool{"InPlacePodVerticalScaling": false})
		}), true, "windows"},
		{"gate before static", gBoth, gAlloc, nil, node(func(n *NodeConfig) {
			n.Profile = profile.New(profile.V134, map[string]bool{"InPlacePodVerticalScaling": false})
		}), true, "feature_gate_off"},
		{"static before swap", bMemReqHuge, bAlloc, nil, node(func(*NodeConfig) {}), true, "static_pod"},
		{"swap before pod-level gate", bPodLevel, bPodLevelAlloc, nil, node(func(*NodeConfig) {}), false, "swap_limitation"},
		{"pod-level gate before capacity", bPodLevel, bPodLevelAlloc, nil, node(func(n *NodeConfig) { n.SwapBehavior = "NoSwap" }), false, "feature_gate_off"},
		{"cpu manager before memory manager", gBoth, gAlloc, nil, node(func(*NodeConfig) {}), false, "guaranteed_pod_cpu_manager_static_policy"},
		{"memory manager before capacity", resized(gAlloc, 0, rl("cpu=1", "memory=100Gi"), rl("cpu=1", "memory=100Gi")), gAlloc, nil,
			node(func(*NodeConfig) {}), false, "guaranteed_pod_memory_manager_static_policy"},
		{"cpu manager before capacity", gHuge, gAlloc, nil, node(func(*NodeConfig) {}), false, "guaranteed_pod_cpu_manager_static_policy"},
		{"capacity before fit", gHuge, gAlloc, []*v1.Pod{guaranteedPod("o", "15", "1Gi")},
			node(func(n *NodeConfig) { n.CPUManagerPolicy = "none" }), false, "insufficient_node_allocatable"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := AdmitResize(tc.desired, tc.allocated, tc.others, tc.node, tc.static)
			if got.Reason != tc.wantReason {
				t.Errorf("AdmitResize() = %+v, want reason %q", got, tc.wantReason)
			}
		})
	}
}

// TestAdmitResizeDeferredCountsOthersAtMax pins the fit check: other pods
// count at max(spec, status resources, allocated) per container, and a
// shortfall defers the resize with the predicate handler's message.
func TestAdmitResizeDeferredCountsOthersAtMax(t *testing.T) {
	node := linuxNode(rl("cpu=4", "memory=16Gi", "pods=110"))
	alloc := burstablePod("p", "1", "1Gi", "4", "2Gi")
	desired := resized(alloc, 0, rl("cpu=2500m", "memory=1Gi"), rl("cpu=4", "memory=2Gi"))
	other := func(spec, status, allocated string) *v1.Pod {
		p := burstablePod("o", spec, "1Gi", "4", "2Gi")
		if status != "" {
			withStatus(p, "c1", rl("cpu="+status, "memory=1Gi"), rl("cpu="+allocated, "memory=1Gi"))
		}
		return p
	}
	tests := []struct {
		name  string
		other *v1.Pod
		want  Decision
	}{
		{"spec only: fits", other("1", "", ""), Decision{Outcome: Admitted}},
		{"status above spec (shrink not yet actuated)", other("1", "2", "1"), Decision{Outcome: Deferred, Reason: "OutOfcpu",
			Message: "Node didn't have enough resource: cpu, requested: 2500, used: 2000, capacity: 4000"}},
		{"allocated above spec and status", other("1", "1", "1700m"), Decision{Outcome: Deferred, Reason: "OutOfcpu",
			Message: "Node didn't have enough resource: cpu, requested: 2500, used: 1700, capacity: 4000"}},
		{"spec above status (growth not yet actuated)", other("1600m", "1", "1"), Decision{Outcome: Deferred, Reason: "OutOfcpu",
			Message: "Node didn't have enough resource: cpu, requested: 2500, used: 1600, capacity: 4000"}},
		{"all equal: fits", other("1500m", "1500m", "1500m"), Decision{Outcome: Admitted}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := AdmitResize(desired, alloc, []*v1.Pod{tc.other}, node, false)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("AdmitResize() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResourcesFit(t *testing.T) {
	pod := func(uid string, requests v1.ResourceList) *v1.Pod { return mkPod(uid, ctr("c", requests, nil)) }
	tests := []struct {
		name        string
		pod         *v1.Pod
		others      []*v1.Pod
		allocatable v1.ResourceList
		wantOK      bool
		wantReason  string
		wantMessage string
	}{
		{
			name: "pod count is checked first", pod: pod("p", rl("cpu=100")),
			others:      []*v1.Pod{pod("a", nil), pod("b", nil)},
			allocatable: rl("cpu=1", "pods=2"),
			wantReason:  "OutOfpods", wantMessage: "Node didn't have enough resource: pods, requested: 1, used: 2, capacity: 2",
		},
		{
			name: "a missing pods entry means 110 pods", pod: pod("p", rl("cpu=100m")),
			others:      []*v1.Pod{pod("a", nil), pod("b", nil)},
			allocatable: rl("cpu=1"), wantOK: true,
		},
		{
			name: "cpu before memory", pod: pod("p", rl("cpu=2", "memory=2Gi")),
			others:      []*v1.Pod{pod("a", rl("cpu=500m", "memory=512Mi"))},
			allocatable: rl("cpu=2", "memory=2Gi", "pods=10"),
			wantReason:  "OutOfcpu", wantMessage: "Node didn't have enough resource: cpu, requested: 2000, used: 500, capacity: 2000",
		},
		{
			name: "memory in bytes", pod: pod("p", rl("cpu=1", "memory=2Gi")),
			others:      []*v1.Pod{pod("a", rl("cpu=500m", "memory=512Mi"))},
			allocatable: rl("cpu=2", "memory=2Gi", "pods=10"),
			wantReason:  "OutOfmemory", wantMessage: "Node didn't have enough resource: memory, requested: 2147483648, used: 536870912, capacity: 2147483648",
		},
		{
			name: "ephemeral storage after memory", pod: pod("p", rl("ephemeral-storage=2Gi")),
			others:      []*v1.Pod{pod("a", rl("ephemeral-storage=1Gi"))},
			allocatable: rl("cpu=2", "memory=2Gi", "ephemeral-storage=2Gi", "pods=10"),
			wantReason:  "OutOfephemeral-storage", wantMessage: "Node didn't have enough resource: ephemeral-storage, requested: 2147483648, used: 1073741824, capacity: 2147483648",
		},
		{
			name: "extended resources, first by name", pod: pod("p", rl("z.example.com/gpu=2", "a.example.com/fpga=2")),
			others:      []*v1.Pod{pod("a", rl("a.example.com/fpga=1", "z.example.com/gpu=1"))},
			allocatable: rl("cpu=2", "a.example.com/fpga=2", "z.example.com/gpu=2", "pods=10"),
			wantReason:  "OutOfa.example.com/fpga", wantMessage: "Node didn't have enough resource: a.example.com/fpga, requested: 2, used: 1, capacity: 2",
		},
		{
			name: "extended resources the node does not report are ignored", pod: pod("p", rl("cpu=1", "example.com/dongle=5")),
			allocatable: rl("cpu=2", "pods=10"), wantOK: true,
		},
		{
			name: "hugepages the node does not report are not ignored", pod: pod("p", rl("hugepages-2Mi=4Mi")),
			allocatable: rl("cpu=2", "pods=10"),
			wantReason:  "OutOfhugepages-2Mi", wantMessage: "Node didn't have enough resource: hugepages-2Mi, requested: 4194304, used: 0, capacity: 0",
		},
		{
			name: "a request of zero never fails", pod: pod("p", rl("cpu=0", "memory=0")),
			others:      []*v1.Pod{pod("a", rl("cpu=3", "memory=3Gi"))},
			allocatable: rl("cpu=2", "memory=2Gi", "pods=10"), wantOK: true,
		},
		{
			name: "the pod itself among the others is skipped", pod: pod("p", rl("cpu=2")),
			others:      []*v1.Pod{pod("p", rl("cpu=2"))},
			allocatable: rl("cpu=2", "pods=1"), wantOK: true,
		},
		{
			name: "others count with overhead", pod: pod("p", rl("cpu=1")),
			others: []*v1.Pod{func() *v1.Pod {
				p := pod("a", rl("cpu=900m"))
				p.Spec.Overhead = rl("cpu=200m")
				return p
			}()},
			allocatable: rl("cpu=2", "pods=10"),
			wantReason:  "OutOfcpu", wantMessage: "Node didn't have enough resource: cpu, requested: 1000, used: 1100, capacity: 2000",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ok, reason, msg := ResourcesFit(tc.pod, tc.others, linuxNode(tc.allocatable))
			if ok != tc.wantOK || reason != tc.wantReason || msg != tc.wantMessage {
				t.Errorf("ResourcesFit() = %v, %q, %q; want %v, %q, %q", ok, reason, msg, tc.wantOK, tc.wantReason, tc.wantMessage)
			}
		})
	}
}

func TestAdmitPod(t *testing.T) {
	node := linuxNode(rl("cpu=2", "memory=4Gi", "pods=110"))
	others := []*v1.Pod{burstablePod("a", "1500m", "1Gi", "2", "2Gi")}
	tests := []struct {
		name string
		pod  *v1.Pod
		want Decision
	}{
		{"fits", burstablePod("p", "500m", "1Gi", "1", "2Gi"), Decision{Outcome: Admitted}},
		{"out of cpu", burstablePod("p", "600m", "1Gi", "1", "2Gi"), Decision{Outcome: Infeasible, Reason: "OutOfcpu",
			Message: "Node didn't have enough resource: cpu, requested: 600, used: 1500, capacity: 2000"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, AdmitPod(tc.pod, others, node)); diff != "" {
				t.Errorf("AdmitPod() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRequestChangedSidecars pins which init containers the static CPU
// manager check looks at: sidecars always, other init containers only with
// the InPlacePodVerticalScalingInitContainers gate.
func TestRequestChangedSidecars(t *testing.T) {
	always := v1.ContainerRestartPolicyAlways
	build := func(initCPU string, sidecar bool) *v1.Pod {
		r := rl("cpu="+initCPU, "memory=1Gi")
		init := ctr("init", r, r.DeepCopy())
		if sidecar {
			init.RestartPolicy = &always
		}
		p := guaranteedPod("g", "1", "1Gi")
		p.Spec.InitContainers = []v1.Container{init}
		return p
	}
	node := linuxNode(bigNode)
	node.CPUManagerPolicy = "static"
	gated := node
	gated.Profile = profile.New(profile.V135, map[string]bool{"InPlacePodVerticalScalingInitContainers": true})
	tests := []struct {
		name    string
		sidecar bool
		node    NodeConfig
		want    Outcome
	}{
		{"sidecar cpu change", true, node, Infeasible},
		{"init container cpu change without the gate", false, node, Admitted},
		{"init container cpu change with the gate", false, gated, Infeasible},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := AdmitResize(build("2", tc.sidecar), build("1", tc.sidecar), nil, tc.node, false)
			if got.Outcome != tc.want {
				t.Errorf("AdmitResize() = %+v, want %s", got, tc.want)
			}
		})
	}
}

// TestPodRequestsMatchesQOS checks the allocation-free aggregation against
// qos.PodRequests for pods without status: both must apply the same sidecar,
// init container, overhead and pod-level rules.
func TestPodRequestsMatchesQOS(t *testing.T) {
	always := v1.ContainerRestartPolicyAlways
	sidecar := func(name string, r v1.ResourceList) v1.Container {
		c := ctr(name, r, nil)
		c.RestartPolicy = &always
		return c
	}
	pods := map[string]*v1.Pod{
		"plain": mkPod("a", ctr("c1", rl("cpu=250m", "memory=100Mi"), nil), ctr("c2", rl("cpu=1", "memory=1Gi", "example.com/x=2"), nil)),
		"big init": func() *v1.Pod {
			p := mkPod("b", ctr("c1", rl("cpu=250m", "memory=100Mi"), nil))
			p.Spec.InitContainers = []v1.Container{ctr("i1", rl("cpu=2", "memory=50Mi"), nil)}
			return p
		}(),
		"sidecars before init": func() *v1.Pod {
			p := mkPod("c", ctr("c1", rl("cpu=100m", "memory=100Mi"), nil))
			p.Spec.InitContainers = []v1.Container{
				sidecar("s1", rl("cpu=300m", "memory=10Mi")),
				ctr("i1", rl("cpu=500m", "memory=300Mi"), nil),
				sidecar("s2", rl("cpu=200m", "example.com/x=1")),
			}
			p.Spec.Overhead = rl("cpu=50m", "memory=10Mi")
			return p
		}(),
		"pod-level": func() *v1.Pod {
			p := mkPod("d", ctr("c1", rl("cpu=100m", "memory=100Mi"), nil))
			p.Spec.Resources = &v1.ResourceRequirements{Requests: rl("cpu=3")}
			p.Spec.Overhead = rl("cpu=50m")
			return p
		}(),
	}
	for name, p := range pods {
		for _, podLevel := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/podLevel=%v", name, podLevel), func(t *testing.T) {
				want := qos.PodRequests(p, qos.Options{SkipPodLevelResources: !podLevel})
				got := podRequests(As(p), requestOptions{podLevel: podLevel})
				if got.milliCPU != want.Cpu().MilliValue() || got.memory != want.Memory().Value() {
					t.Errorf("podRequests() = %dm, %d bytes; qos.PodRequests = %dm, %d bytes",
						got.milliCPU, got.memory, want.Cpu().MilliValue(), want.Memory().Value())
				}
				x := want[v1.ResourceName("example.com/x")]
				if got.scalar("example.com/x") != x.Value() {
					t.Errorf("podRequests() example.com/x = %d, qos.PodRequests = %d", got.scalar("example.com/x"), x.Value())
				}
			})
		}
	}
}

// TestPodRequestsStatus pins the status rules for pods on the node: the
// per-container max(spec, status, allocated), the Infeasible case that
// ignores spec, containers without status resources, and non-sidecar init
// containers that never use status.
func TestPodRequestsStatus(t *testing.T) {
	infeasible := func(p *v1.Pod) *v1.Pod {
		p.Status.Conditions = []v1.PodCondition{{Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: v1.PodReasonInfeasible}}
		return p
	}
	tests := []struct {
		name string
		pod  *v1.Pod
		want int64 // millicores
	}{
		{"max per container, summed", withStatus(withStatus(
			mkPod("a", ctr("c1", rl("cpu=1"), nil), ctr("c2", rl("cpu=1"), nil)),
			"c1", rl("cpu=2"), rl("cpu=1")), "c2", rl("cpu=500m"), rl("cpu=3")), 5000},
		{"infeasible resize ignores spec", infeasible(withStatus(mkPod("b", ctr("c1", rl("cpu=8"), nil)), "c1", rl("cpu=1"), rl("cpu=2"))), 2000},
		{"status without resources uses spec", func() *v1.Pod {
			p := mkPod("c", ctr("c1", rl("cpu=1"), nil))
			p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c1", AllocatedResources: rl("cpu=4")}}
			return p
		}(), 1000},
		{"non-sidecar init containers use spec", func() *v1.Pod {
			p := mkPod("d", ctr("c1", rl("cpu=1"), nil))
			p.Spec.InitContainers = []v1.Container{ctr("i1", rl("cpu=2"), nil)}
			p.Status.InitContainerStatuses = []v1.ContainerStatus{{Name: "i1", Resources: &v1.ResourceRequirements{Requests: rl("cpu=5")}}}
			return p
		}(), 2000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := podRequests(As(tc.pod), requestOptions{useStatus: true})
			if got.milliCPU != tc.want {
				t.Errorf("podRequests() cpu = %dm, want %dm", got.milliCPU, tc.want)
			}
		})
	}
}

func TestResizeRequested(t *testing.T) {
	alloc := withPodLevel(burstablePod("p", "1", "1Gi", "2", "2Gi"), rl("cpu=2"))
	on := linuxNode(bigNode)
	on.Profile = profile.New(profile.V135, map[string]bool{"InPlacePodLevelResourcesVerticalScaling": true})
	tests := []struct {
		name    string
		desired *v1.Pod
		node    NodeConfig
		want    bool
	}{
		{"same", alloc.DeepCopy(), linuxNode(bigNode), false},
		{"container request", resized(alloc, 0, rl("cpu=2", "memory=1Gi"), rl("cpu=2", "memory=2Gi")), linuxNode(bigNode), true},
		{"container limit added", resized(alloc, 0, rl("cpu=1", "memory=1Gi"), rl("cpu=2", "memory=2Gi", "ephemeral-storage=1Gi")), linuxNode(bigNode), true},
		{"pod-level with the gate off", withPodLevel(alloc.DeepCopy(), rl("cpu=3")), linuxNode(bigNode), false},
		{"pod-level with the gate on", withPodLevel(alloc.DeepCopy(), rl("cpu=3")), on, true},
		{"a container the allocation lacks", func() *v1.Pod {
			p := alloc.DeepCopy()
			p.Spec.Containers = append(p.Spec.Containers, ctr("new", rl("cpu=5"), nil))
			return p
		}(), linuxNode(bigNode), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ResizeRequested(tc.desired, alloc, tc.node); got != tc.want {
				t.Errorf("ResizeRequested() = %v, want %v", got, tc.want)
			}
		})
	}
}

// BenchmarkAdmitResize measures a resize that passes every check beside 100
// other pods, each with container status resources.
func BenchmarkAdmitResize(b *testing.B) {
	node := linuxNode(rl("cpu=64", "memory=256Gi", "pods=250"))
	alloc := burstablePod("p", "1", "1Gi", "2", "2Gi")
	desired := resized(alloc, 0, rl("cpu=2", "memory=2Gi"), rl("cpu=4", "memory=4Gi"))
	others := make([]*v1.Pod, 100)
	for i := range others {
		p := burstablePod(fmt.Sprintf("o%d", i), "100m", "128Mi", "200m", "256Mi")
		others[i] = withStatus(p, "c1", rl("cpu=100m", "memory=128Mi"), rl("cpu=100m", "memory=128Mi"))
	}
	if d := AdmitResize(desired, alloc, others, node, false); d.Outcome != Admitted {
		b.Fatalf("AdmitResize() = %+v, want Admitted", d)
	}
	b.ReportAllocs()
	for b.Loop() {
		AdmitResize(desired, alloc, others, node, false)
	}
}

// TestExplainResize: the numbers ExplainResize reports are the ones the
// decisions compare, in the kubelet's order, and a resize is admitted by
// the fit exactly when every fit check fits.
func TestExplainResize(t *testing.T) {
	node := linuxNode(rl("cpu=4", "memory=8Gi", "pods=3"))
	others := []*v1.Pod{
		withStatus(mkPod("o1", ctr("c1", rl("cpu=1", "memory=1Gi"), nil)), "c1", rl("cpu=1500m", "memory=1Gi"), nil),
		mkPod("o2", ctr("c1", rl("cpu=500m", "memory=512Mi"), nil)),
	}
	desired := mkPod("p", ctr("c1", rl("cpu=2500m", "memory=2Gi"), nil))
	used := UsageOf(others, desired.UID, node)
	got := ExplainResize(desired, &used, node)
	want := []Check{
		{Kind: "capacity", Resource: v1.ResourceMemory, Requested: 2 << 30, Capacity: 8 << 30},
		{Kind: "capacity", Resource: v1.ResourceCPU, Requested: 2500, Capacity: 4000},
		{Kind: "fit", Resource: v1.ResourcePods, Requested: 1, Used: 2, Capacity: 3},
		// o1 counts at max(spec 1, status 1500m): the scheduler's rule.
		{Kind: "fit", Resource: v1.ResourceCPU, Requested: 2500, Used: 2000, Capacity: 4000},
		{Kind: "fit", Resource: v1.ResourceMemory, Requested: 2 << 30, Used: 1536 << 20, Capacity: 8 << 30},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("checks (-want +got):\n%s", diff)
	}
	var fits = true
	for _, c := range got {
		if c.Kind == "fit" && !c.Fits() {
			fits = false
		}
	}
	ok, _, msg := ResourcesFit(desired, others, node)
	if ok != fits || ok {
		t.Errorf("ResourcesFit = %v (%s), checks say %v; want both false (cpu 2500 > 4000 - 2000)", ok, msg, fits)
	}
}

// TestMessageCache: a cached message is the one built fresh, a repeated
// shortfall reuses it without allocating, and the cache keeps the latest.
func TestMessageCache(t *testing.T) {
	var c MessageCache
	for i := int64(0); i < 20; i++ {
		if got, want := c.insufficient(v1.ResourceCPU, 1000+i, 5, 2000), insufficient(v1.ResourceCPU, 1000+i, 5, 2000); got != want {
			t.Fatalf("cached %q, fresh %q", got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { c.insufficient(v1.ResourceCPU, 1019, 5, 2000) }); n != 0 {
		t.Errorf("a repeated shortfall allocated %v times", n)
	}
	if got := c.insufficient(v1.ResourceMemory, 1019, 5, 2000); got != insufficient(v1.ResourceMemory, 1019, 5, 2000) {
		t.Errorf("another resource with the same numbers gave %q", got)
	}
	var none *MessageCache
	if got := none.insufficient(v1.ResourcePods, 1, 110, 110); got != "Node didn't have enough resource: pods, requested: 1, used: 110, capacity: 110" {
		t.Errorf("nil cache gave %q", got)
	}
}

// TestAdmitResizeCapacityByVersion: up to 1.35 the kubelet refuses a
// resize above the node's allocatable as Infeasible (canResizePod); from
// 1.36 that check is the API server's PodResizeValidator and the kubelet's
// admit handlers only fit the pod beside the others, so the same resize is
// Deferred with the predicate handler's reason and message
// (pkg/kubelet/allocation/allocation_manager.go, handlePodResourcesResize
// and canAdmitPod).
func TestAdmitResizeCapacityByVersion(t *testing.T) {
	alloc := guaranteedPod("g", "1", "1Gi")
	huge := resized(alloc, 0, rl("cpu=1000", "memory=1Gi"), rl("cpu=1000", "memory=1Gi"))
	for _, tc := range []struct {
		v    profile.Version
		want Decision
	}{
		{profile.V135, Decision{Outcome: Infeasible, Reason: "insufficient_node_allocatable",
			Message: "Node didn't have enough capacity: cpu, requested: 1000000, capacity: 16000"}},
		{profile.V136, Decision{Outcome: Deferred, Reason: "OutOfcpu",
			Message: "Node didn't have enough resource: cpu, requested: 1000000, used: 0, capacity: 16000"}},
		{profile.V137, Decision{Outcome: Deferred, Reason: "OutOfcpu",
			Message: "Node didn't have enough resource: cpu, requested: 1000000, used: 0, capacity: 16000"}},
	} {
		t.Run(string(tc.v), func(t *testing.T) {
			node := linuxNode(bigNode)
			node.Profile = profile.New(tc.v, nil)
			got := AdmitResize(huge, alloc, nil, node, false)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("AdmitResize() mismatch (-want +got):\n%s", diff)
			}
			checks := ExplainResize(huge, &Usage{}, node)
			hasCapacity := false
			for _, c := range checks {
				hasCapacity = hasCapacity || c.Kind == "capacity"
			}
			if hasCapacity != node.Profile.KubeletCapacityCheck() {
				t.Errorf("ExplainResize lists capacity checks: %v, want %v", hasCapacity, node.Profile.KubeletCapacityCheck())
			}
		})
	}
}

// TestAdmitResizeEarlyInfeasibleSilent: the early Infeasible checks are
// silent (condition, no event) in 1.35, where handlePodResourcesResize
// returns before its event, and report an event from 1.36, where they run
// in the resize admit handler (pkg/kubelet/allocation/handlers.go,
// podResizesAdmitHandler.Admit).
func TestAdmitResizeEarlyInfeasibleSilent(t *testing.T) {
	alloc := guaranteedPod("g", "1", "1Gi")
	up := resized(alloc, 0, rl("cpu=2", "memory=1Gi"), rl("cpu=2", "memory=1Gi"))
	for _, v := range []profile.Version{profile.V135, profile.V136, profile.V137} {
		node := linuxNode(bigNode)
		node.OS = "windows"
		node.Profile = profile.New(v, nil)
		got := AdmitResize(up, alloc, nil, node, false)
		if got.Outcome != Infeasible || got.Reason != "windows" || got.Message != msgWindows {
			t.Fatalf("%s: AdmitResize() = %+v, want windows Infeasible", v, got)
		}
		if want := v == profile.V135; got.Silent != want {
			t.Errorf("%s: Silent = %v, want %v", v, got.Silent, want)
		}
	}
}

// TestAdmitResizeHandlerOrder136 pins the 1.36 and 1.37 order: the resize
// admit handler runs first among the admit handlers
// (pkg/kubelet/kubelet.go, NewMainKubelet) and checks platform and gate
// (no longer static pods), swap, the pod-level gate, then the CPU and
// memory managers
// (pkg/kubelet/allocation/handlers.go, podResizesAdmitHandler.Admit); the
// predicate handler's fit comes after all of them.
func TestAdmitResizeHandlerOrder136(t *testing.T) {
	gAlloc := guaranteedPod("g", "1", "1Gi")
	gHuge := resized(gAlloc, 0, rl("cpu=100", "memory=100Gi"), rl("cpu=100", "memory=100Gi"))
	bAlloc := burstablePod("b", "1", "1Gi", "2", "2Gi")
	bMemReqHuge := resized(bAlloc, 0, rl("cpu=1", "memory=100Gi"), rl("cpu=2", "memory=200Gi"))
	for _, v := range []profile.Version{profile.V136, profile.V137} {
		node := func(f func(*NodeConfig)) NodeConfig {
			n := linuxNode(bigNode)
			n.Profile = profile.New(v, nil)
			f(&n)
			return n
		}
		for _, tc := range []struct {
			name               string
			desired, allocated *v1.Pod
			node               NodeConfig
			static             bool
			wantReason         string
		}{
			{"windows first", gHuge, gAlloc, node(func(n *NodeConfig) { n.OS = "windows"; n.CPUManagerPolicy = "static" }), true, "windows"},
			// A static pod is not refused from 1.36; it is critical, so it
			// gets no swap either, and the fit decides.
			{"a static pod is not refused", bMemReqHuge, bAlloc, node(func(n *NodeConfig) { n.SwapBehavior = "LimitedSwap" }), true, "OutOfmemory"},
			{"swap before the fit", bMemReqHuge, bAlloc, node(func(n *NodeConfig) { n.SwapBehavior = "LimitedSwap" }), false, "swap_limitation"},
			{"cpu manager before the fit", gHuge, gAlloc, node(func(n *NodeConfig) { n.CPUManagerPolicy = "static" }), false, "guaranteed_pod_cpu_manager_static_policy"},
			{"memory manager before the fit", gHuge, gAlloc, node(func(n *NodeConfig) { n.MemoryManagerPolicy = "Static" }), false, "guaranteed_pod_memory_manager_static_policy"},
			{"the fit last, no capacity check", gHuge, gAlloc, node(func(*NodeConfig) {}), false, "OutOfcpu"},
		} {
			t.Run(string(v)+"/"+tc.name, func(t *testing.T) {
				got := AdmitResize(tc.desired, tc.allocated, nil, tc.node, tc.static)
				if got.Reason != tc.wantReason {
					t.Errorf("AdmitResize() = %+v, want reason %q", got, tc.wantReason)
				}
			})
		}
	}
}

// TestPodRequestsStatusAggregated137 pins the 1.37 rule
// (staging/src/k8s.io/component-helpers/resource/helpers.go,
// AggregateContainerRequests): the spec, allocated and actuated requests
// are summed over the pod first and the largest sum counts; an Infeasible
// resize leaves the spec out; every init container's status counts.
func TestPodRequestsStatusAggregated137(t *testing.T) {
	infeasible := func(p *v1.Pod) *v1.Pod {
		p.Status.Conditions = []v1.PodCondition{{Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: v1.PodReasonInfeasible}}
		return p
	}
	tests := []struct {
		name      string
		pod       *v1.Pod
		want, old int64 // millicores on 1.37 and up to 1.36
	}{
		// spec 2, actuated 3, allocated 4: 1.36 took max(1,2,1) + max(1,0.5,3) = 5.
		{"largest sum", withStatus(withStatus(
			mkPod("a", ctr("c1", rl("cpu=1"), nil), ctr("c2", rl("cpu=1"), nil)),
			"c1", rl("cpu=2"), rl("cpu=1")), "c2", rl("cpu=500m"), rl("cpu=3")), 4000, 5000},
		// One container growing, one shrinking, not yet actuated.
		{"growing and shrinking", withStatus(withStatus(
			mkPod("g", ctr("c1", rl("cpu=2"), nil), ctr("c2", rl("cpu=500m"), nil)),
			"c1", rl("cpu=1"), nil), "c2", rl("cpu=1500m"), nil), 2500, 3500},
		{"infeasible resize leaves the spec out", infeasible(withStatus(mkPod("b", ctr("c1", rl("cpu=8"), nil)), "c1", rl("cpu=1"), rl("cpu=2"))), 2000, 2000},
		{"a non-sidecar init container's status counts", func() *v1.Pod {
			p := mkPod("d", ctr("c1", rl("cpu=1"), nil))
			p.Spec.InitContainers = []v1.Container{ctr("i1", rl("cpu=2"), nil)}
			p.Status.InitContainerStatuses = []v1.ContainerStatus{{Name: "i1", Resources: &v1.ResourceRequirements{Requests: rl("cpu=5")}}}
			return p
		}(), 5000, 2000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range []struct {
				version profile.Version
				want    int64
			}{{profile.V136, tc.old}, {profile.V137, tc.want}} {
				node := linuxNode(bigNode)
				node.Profile = profile.New(v.version, nil)
				if got := StatusRequests(As(tc.pod), node); got.MilliCPU != v.want {
					t.Errorf("%s: StatusRequests() cpu = %dm, want %dm", v.version, got.MilliCPU, v.want)
				}
				u := PodUsage(As(tc.pod), node)
				if got := u.MilliCPU(); got != v.want {
					t.Errorf("%s: PodUsage() cpu = %dm, want %dm", v.version, got, v.want)
				}
			}
		})
	}
}

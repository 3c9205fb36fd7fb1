package resize

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/resizelet/resizelet/allocation"
)

// ErrUnschedulable is wrapped (errors.Is) by Fleet.Schedule's error when
// no node of the fleet fits the pod.
var ErrUnschedulable = errors.New("no node of the fleet fits the pod")

// FitError is Fleet.Schedule's answer when no node fits the pod: how many
// nodes there are and, for each reason a node gave ("Too many pods",
// "Insufficient cpu", "Insufficient memory"), how many gave it. Its text
// is the scheduler's (pkg/scheduler/framework/types.go, FitError.Error):
// "0/3 nodes are available: 1 Insufficient memory, 3 Insufficient cpu."
// (the reasons sorted as strings), without the preemption plugin's
// message, since the fleet does not preempt. It matches ErrUnschedulable.
type FitError struct {
	Namespace, Name string
	NumAllNodes     int
	Reasons         map[string]int
}

// Error returns the scheduler's message.
func (e *FitError) Error() string {
	if e == nil {
		return "<nil>"
	}
	if e.NumAllNodes == 0 {
		// pkg/scheduler/scheduler.go, ErrNoNodesAvailable.
		return "no nodes available to schedule pods"
	}
	reasons := make([]string, 0, len(e.Reasons))
	for r, n := range e.Reasons {
		reasons = append(reasons, fmt.Sprintf("%d %s", n, r))
	}
	slices.Sort(reasons)
	return fmt.Sprintf("0/%d nodes are available: %s.", e.NumAllNodes, strings.Join(reasons, ", "))
}

// Is reports ErrUnschedulable.
func (e *FitError) Is(target error) bool { return target == ErrUnschedulable }

// defaultMaxPods is the pods a node without a pods allocatable may run:
// the kubelet's --max-pods default (pkg/kubelet/apis/config/v1beta1/defaults.go).
const defaultMaxPods = 110

// Schedule returns the name of the first node, in the order they were
// added, that the pod fits, as the scheduler's NodeResourcesFit filter
// decides it (pkg/scheduler/framework/plugins/noderesources/fit.go,
// fitsRequest): one more pod within the node's pods allocatable, and the
// pod's cpu and memory requests within the node's allocatable minus the
// requests of the pods bound to it. A pod's requests count as the
// scheduler counts them with InPlacePodVerticalScaling on
// (pkg/scheduler/framework/types.go, CalculateResource): per container
// the larger of the spec's requests and what the status says is allocated
// or actuated, so that a resize in progress or pending takes its room;
// pods that have succeeded or failed are not counted (the scheduler's
// informer leaves them out, pkg/scheduler/scheduler.go). When no node
// fits, the error is a *FitError. Schedule places nothing: CreatePod with
// FleetOptions.ScheduleUnbound uses it, as may a caller that creates the
// pod itself.
//
// It weighs the nodes in order and stops at the first that fits, each by
// the load the API server keeps for it (apiserver.Cluster.NodeLoad, kept
// from every pod write as the scheduler's cache is), so that placing a
// pod does not read the pods of every node it weighs; the nodes' other
// filters (taints, affinity, ports, volumes) and scores are not modelled.
func (f *Fleet) Schedule(ctx context.Context, pod *v1.Pod) (string, error) {
	if !f.made() {
		return "", notMade("schedule")
	}
	if pod == nil {
		return "", &argumentError{op: "schedule", msg: "nil pod"}
	}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return "", ErrFleetClosed
	}
	// The nodes that have started, restarting ones included: a kubelet
	// restart does not take a node out of the scheduler's view.
	var nodes []fleetAt
	for _, fn := range f.order {
		if fn.started {
			nodes = append(nodes, fleetAt{fn: fn, cfg: fn.config})
		}
	}
	f.mu.Unlock()
	want := allocation.PodLoad(pod)
	fe := &FitError{Namespace: pod.Namespace, Name: pod.Name, NumAllNodes: len(nodes), Reasons: map[string]int{}}
	for _, fa := range nodes {
		alloc := fa.cfg.Allocatable
		allowedPods := int64(defaultMaxPods)
		if q, ok := alloc[v1.ResourcePods]; ok {
			allowedPods = q.Value()
		}
		l := f.cluster.NodeLoad(fa.fn.name)
		fits := true
		if l.Pods+1 > allowedPods {
			fe.Reasons["Too many pods"]++
			fits = false
		}
		if want.MilliCPU > 0 && want.MilliCPU > alloc.Cpu().MilliValue()-l.MilliCPU {
			fe.Reasons["Insufficient cpu"]++
			fits = false
		}
		if want.Memory > 0 && want.Memory > alloc.Memory().Value()-l.Memory {
			fe.Reasons["Insufficient memory"]++
			fits = false
		}
		if fits {
			return fa.fn.name, nil
		}
	}
	return "", fe
}

// fleetAt is a started node of the fleet and its defaulted configuration.
type fleetAt struct {
	fn  *fleetNode
	cfg NodeConfig
}

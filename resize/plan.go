package resize

import (
	"context"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/resize/core"
)

// Plan is what a resize would do on a node, computed without doing it:
// the pod as the API server would store it, the admission arithmetic, the
// outcome, and every action the kubelet would take, in order.
type Plan struct {
	Pod       *v1.Pod
	Admission core.AdmissionPlan
	// Outcome is what the node would decide; Message is the Pending
	// condition's message for the two refusals.
	Outcome Outcome
	Message string
	// Actions are the batches' actions in order: reads, writes, CRI calls,
	// checkpoint writes, events and status writes.
	Actions []core.Action
}

// Outcome is what a plan says the node would decide of a resize.
type Outcome string

// The outcomes of a plan: the reasons of the PodResizePending condition
// for the two refusals.
const (
	OutcomeAdmitted   Outcome = "Admitted"   // the allocation changes
	OutcomeDeferred   Outcome = "Deferred"   // it fits the node, not beside the other pods now
	OutcomeInfeasible Outcome = "Infeasible" // it can never fit the node
	OutcomeUnchanged  Outcome = "Unchanged"  // the desired resources equal the allocation
)

// DryRunResizer is implemented by an API that can apply a resize without
// storing it (*Cluster does). Plan and a DryRun ResizeOp use it when the
// API has it, and this package's copy of the resize subresource
// otherwise.
type DryRunResizer interface {
	DryRunResizePod(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error)
}

// DryRunPatchResizer is a DryRunResizer that takes every patch type
// (*Cluster is one), for a patch that is not a strategic merge patch.
type DryRunPatchResizer interface {
	DryRunResizePodPatch(ctx context.Context, namespace, name string, pt types.PatchType, patch []byte) (*v1.Pod, error)
}

// Plan returns what Resize(ctx, op) would do, changing nothing: the API
// server's validation runs as for Resize (and its error is returned as
// is), as a dry run (DryRunResizer, DryRunPatchResizer; for an API
// without one, the resize subresource's rules applied to its pod); then a
// copy of the kubelet's state takes the resize and runs until quiet, its
// reads answered by the real cgroups and runtime and its writes only
// recorded. Plan waits for the node to be quiet first. op.DryRun changes
// nothing: a plan is a dry run.
func (n *Node) Plan(ctx context.Context, op ResizeOp) (*Plan, error) {
	if err := n.enter(ctx, "plan resize"); err != nil {
		return nil, err
	}
	defer n.exit()
	if err := op.check("plan resize"); err != nil {
		return nil, err
	}
	namespace, name := op.Namespace, op.Name
	pod, err := op.send(ctx, n.cluster, true, n)
	if err != nil {
		return nil, err
	}
	n.mu.Lock()
	for !n.core.Quiet() {
		if n.closing() {
			n.mu.Unlock()
			return nil, &closedError{op: "plan resize", why: whyCut}
		}
		n.cond.Wait()
	}
	clone, err := n.core.Clone()
	before, _ := n.core.Pod(namespace, name)
	var admission core.AdmissionPlan
	if err == nil {
		admission, err = n.core.PlanAdmission(pod)
	}
	n.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("plan resize of %s/%s: %w", namespace, name, err)
	}
	plan := &Plan{Pod: pod, Admission: admission}
	dry := dryRun{n: n, created: map[string]*core.CreateContainer{}}
	own := *pod // the core takes the top level as its own
	rd, err := clone.Step(core.ResizeRequested{Pod: &own, Now: n.clock.Now()})
	for i := 0; err == nil && rd.Batch != nil; i++ {
		if i >= maxBatches {
			return nil, fmt.Errorf("plan resize of %s/%s: the dry run does not become quiet", namespace, name)
		}
		results := dry.perform(ctx, rd.Batch)
		for _, a := range rd.Batch.Actions[:len(results)] {
			plan.Actions = append(plan.Actions, core.Retain(a))
		}
		rd, err = clone.Step(core.BatchDone{ID: rd.Batch.ID, Results: results, Now: n.clock.Now()})
	}
	if err != nil {
		return nil, fmt.Errorf("plan resize of %s/%s: %w", namespace, name, err)
	}
	plan.Outcome, plan.Message = outcome(before, clone, pod)
	return plan, nil
}

// outcome reads the dry run's decision: a Pending condition for the new
// generation is a refusal; otherwise the resize was admitted when the
// allocation changed, and there was nothing to resize when it did not.
func outcome(before core.PodInfo, clone *core.Core, pod *v1.Pod) (Outcome, string) {
	if p, ok := clone.APIPod(pod.Namespace, pod.Name); ok {
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodResizePending && c.ObservedGeneration == pod.Generation {
				return Outcome(c.Reason), c.Message
			}
		}
	}
	after, _ := clone.Pod(pod.Namespace, pod.Name)
	if !apiequality.Semantic.DeepEqual(before.Allocated, after.Allocated) {
		return OutcomeAdmitted, ""
	}
	return OutcomeUnchanged, ""
}

// dryRun performs a dry run's batches: reads go to the node's real parts
// (a container the dry run created answers as running with what it was
// given), everything else is only recorded and succeeds.
type dryRun struct {
	n       *Node
	created map[string]*core.CreateContainer
	seq     int
}

func (d *dryRun) perform(ctx context.Context, b *core.Batch) []core.Result {
	results := make([]core.Result, 0, len(b.Actions))
	for _, a := range b.Actions {
		var r core.Result
		switch a := a.(type) {
		case core.ReadContainerStatus:
			if c, ok := d.created[a.ID]; ok {
				r.Status = &runtimeapi.ContainerStatus{Id: a.ID, State: runtimeapi.ContainerState_CONTAINER_RUNNING,
					Resources: &runtimeapi.ContainerResources{Linux: c.Config.GetLinux().GetResources()}}
				break
			}
			r = d.n.do(ctx, a)
		case core.ReadCgroupExists, core.ReadCgroup, core.ReadMemoryUsage, core.ReadContainerStats:
			r = d.n.do(ctx, a)
		case core.RunPodSandbox:
			d.seq++
			r.ID = fmt.Sprintf("dry-run-sandbox-%d", d.seq)
		case core.CreateContainer:
			d.seq++
			r.ID = fmt.Sprintf("dry-run-container-%d", d.seq)
			d.created[r.ID] = &a
		}
		results = append(results, r)
		if r.Err != nil && !b.KeepGoing && core.StopsOnFailure(a) {
			break
		}
	}
	return results
}

// String renders the plan for people: the outcome, the admission
// arithmetic, the restarts and why, and the actions in order.
func (p *Plan) String() string {
	if p == nil || p.Pod == nil {
		return "<no plan>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "resize %s/%s generation %d: %s", p.Pod.Namespace, p.Pod.Name, p.Pod.Generation, p.Outcome)
	if p.Message != "" {
		fmt.Fprintf(&b, ": %s", p.Message)
	}
	b.WriteString("\n")
	if p.Admission.QueuePosition >= 0 {
		fmt.Fprintf(&b, "admission: queue position %d of %d\n", p.Admission.QueuePosition+1, p.Admission.QueueLength)
		for _, c := range p.Admission.Checks {
			verdict := "fits"
			if !c.Fits() {
				verdict = "does not fit"
			}
			if c.Kind == "capacity" {
				fmt.Fprintf(&b, "  capacity %s: requested %d, allocatable %d: %s\n", c.Resource, c.Requested, c.Capacity, verdict)
			} else {
				fmt.Fprintf(&b, "  fit %s: requested %d, used by other pods %d, allocatable %d: %s\n", c.Resource, c.Requested, c.Used, c.Capacity, verdict)
			}
		}
	}
	var restarts []string
	for _, a := range p.Actions {
		if s, ok := a.(core.StopContainer); ok && s.Reason != "" {
			restarts = append(restarts, fmt.Sprintf("  %s: %s", s.Name, s.Reason))
		}
	}
	if len(restarts) > 0 {
		b.WriteString("restarts:\n" + strings.Join(restarts, "\n") + "\n")
	}
	b.WriteString("actions:\n")
	for i, a := range p.Actions {
		fmt.Fprintf(&b, "  %2d. %s\n", i+1, a)
	}
	return b.String()
}

var (
	_ DryRunResizer      = (*Cluster)(nil)
	_ DryRunPatchResizer = (*Cluster)(nil)
)

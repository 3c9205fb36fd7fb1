package scenario

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/yaml"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/profile"
)

// transcript accumulates the text of a run. Everything it prints comes from
// the virtual clock and deterministic IDs, so a scenario gives the same
// bytes on every run.
type transcript struct {
	buf bytes.Buffer
}

func newTranscript() *transcript { return &transcript{} }

func (t *transcript) bytes() []byte { return t.buf.Bytes() }

func (t *transcript) section(title string) {
	fmt.Fprintf(&t.buf, "\n== %s\n", title)
}

func (t *transcript) line(format string, args ...any) {
	t.buf.WriteString("  ")
	fmt.Fprintf(&t.buf, format, args...)
	t.buf.WriteByte('\n')
}

func (t *transcript) header(s *Scenario, cfg resize.NodeConfig) {
	fmt.Fprintf(&t.buf, "Scenario: %s (%s)\n", s.Name, s.File)
	if s.Description != "" {
		for _, l := range strings.Split(strings.TrimSpace(s.Description), "\n") {
			fmt.Fprintf(&t.buf, "  %s\n", strings.TrimRight(l, " "))
		}
	}
	quota := "on"
	if cfg.CPUCFSQuota != nil && !*cfg.CPUCFSQuota {
		quota = "off"
	}
	fmt.Fprintf(&t.buf, "Kubelet %s on node %s (%s): capacity %s, allocatable %s\n", cfg.Profile, cfg.Name, cfg.OS,
		formatList(cfg.Capacity), formatList(cfg.Allocatable))
	fmt.Fprintf(&t.buf, "  cgroup %s (%s driver), container cpu.weight %s, CPU manager %s, memory manager %s, swap %s, CFS quota %s (period %s)\n",
		cfg.CgroupVersion, cfg.CgroupDriver, s.ContainerWeight, cfg.CPUManagerPolicy, cfg.MemoryManagerPolicy,
		cfg.SwapBehavior, quota, cfg.CPUCFSQuotaPeriod)
	if strings.Trim(s.Node.CgroupRoot, "/") != "" {
		fmt.Fprintf(&t.buf, "  cgroup root %s (the kubelet's --cgroup-root)\n", s.Node.CgroupRoot)
	}
	if cfg.ReconcilePodCgroups {
		fmt.Fprintf(&t.buf, "  reconcilePodCgroups: on (resizelet's opt-in fix, not a kubelet setting)\n")
	}
	if cfg.FlushCheckpoints {
		fmt.Fprintf(&t.buf, "  flushCheckpoints: on (resizelet's opt-in fix, not a kubelet setting)\n")
	}
	if len(cfg.FeatureGates) > 0 {
		var gates []string
		unreproduced := profile.NotReproduced(cfg.Profile)
		for _, k := range slices.Sorted(maps.Keys(cfg.FeatureGates)) {
			gate := fmt.Sprintf("%s=%t", k, cfg.FeatureGates[k])
			if slices.Contains(unreproduced, k) {
				gate += " (not reproduced by resizelet: the kubelet's default behaviour)"
			}
			gates = append(gates, gate)
		}
		fmt.Fprintf(&t.buf, "  feature gates: %s\n", strings.Join(gates, ", "))
	}
}

func (t *transcript) conditionChanges(ref PodRef, before, after []v1.PodCondition) {
	find := func(list []v1.PodCondition, typ v1.PodConditionType) *v1.PodCondition {
		for i := range list {
			if list[i].Type == typ {
				return &list[i]
			}
		}
		return nil
	}
	for _, typ := range []v1.PodConditionType{v1.PodResizePending, v1.PodResizeInProgress} {
		b, a := find(before, typ), find(after, typ)
		switch {
		case b == nil && a == nil:
		case a == nil:
			t.line("condition %s %s: cleared", ref, typ)
		case b == nil || b.Status != a.Status || b.Reason != a.Reason || b.Message != a.Message || b.ObservedGeneration != a.ObservedGeneration:
			verb := "set"
			if b != nil {
				verb = "changed"
			}
			t.line("condition %s %s %s: status %s, reason %q, message %q, observedGeneration %d",
				ref, typ, verb, a.Status, a.Reason, a.Message, a.ObservedGeneration)
		}
	}
}

// events prints events as kubectl describe does, one table per pod in the
// order the pods first appear.
func (t *transcript) events(evs []resize.Event, now time.Time) {
	var order []string
	byPod := map[string][]resize.Event{}
	for _, ev := range evs {
		k := ev.Namespace + "/" + ev.Pod
		if _, ok := byPod[k]; !ok {
			order = append(order, k)
		}
		byPod[k] = append(byPod[k], ev)
	}
	for _, k := range order {
		t.line("events of %s:", k)
		tw := tabwriter.NewWriter(&t.buf, 0, 8, 2, ' ', 0)
		fmt.Fprintf(tw, "    Type\tReason\tAge\tFrom\tMessage\n")
		fmt.Fprintf(tw, "    ----\t------\t----\t----\t-------\n")
		for _, ev := range byPod[k] {
			fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\t%s\n", ev.Type, ev.Reason, age(now, ev.Time), ev.Source, ev.Message)
		}
		tw.Flush()
	}
}

// age is how kubectl shows the time since t.
func age(now, t time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t))
}

func (t *transcript) writes(ws []cgroup.Write) {
	if len(ws) == 0 {
		return
	}
	t.line("cgroup writes:")
	for _, w := range ws {
		res := ""
		if w.Err != nil {
			res = "  FAILED: " + w.Err.Error()
		}
		t.line("  %s %s: %s -> %s%s", w.Path, w.File, w.Old, w.New, res)
	}
}

func (t *transcript) calls(cs []cri.Call) {
	if len(cs) == 0 {
		return
	}
	t.line("CRI calls:")
	for _, c := range cs {
		t.line("  %s", c)
	}
}

func (t *transcript) expectResult(checks int, ms []Mismatch) {
	if len(ms) == 0 {
		t.line("expect: ok (%d checks)", checks)
		return
	}
	t.line("expect: %d of %d checks failed", len(ms), checks)
	for _, m := range ms {
		t.line("  MISMATCH expect.%s: want %s, got %s", m.Path, m.Want, m.Got)
	}
}

// final prints the pods as kubectl get pods does, then each pod's
// resources as kubectl get pod -o yaml shows them under spec and status.
func (t *transcript) final(r *runner) {
	now := r.clock.Now()
	t.section(fmt.Sprintf("end: clock at +%s", sinceStart(now)))
	pods := r.cluster.ListPods(context.Background())
	if len(pods) == 0 {
		t.line("No resources found in default namespace.")
		return
	}
	tw := tabwriter.NewWriter(&t.buf, 0, 8, 3, ' ', 0)
	fmt.Fprintf(tw, "NAME\tREADY\tSTATUS\tRESTARTS\tAGE\n")
	for _, p := range pods {
		name := p.Name
		if p.Namespace != "default" {
			name = p.Namespace + "/" + p.Name
		}
		ready, total, restarts := 0, 0, int32(0)
		count := func(specs []v1.Container, statuses []v1.ContainerStatus, onlySidecars bool) {
			for _, c := range specs {
				if onlySidecars && (c.RestartPolicy == nil || *c.RestartPolicy != v1.ContainerRestartPolicyAlways) {
					continue
				}
				total++
				for _, cs := range statuses {
					if cs.Name == c.Name && (cs.Ready || cs.State.Running != nil) {
						ready++
					}
				}
			}
			for _, cs := range statuses {
				restarts += cs.RestartCount
			}
		}
		count(p.Spec.InitContainers, p.Status.InitContainerStatuses, true)
		count(p.Spec.Containers, p.Status.ContainerStatuses, false)
		created := p.CreationTimestamp.Time
		if created.IsZero() {
			created = r.created[PodRef{Namespace: p.Namespace, Name: p.Name}]
		}
		fmt.Fprintf(tw, "%s\t%d/%d\t%s\t%d\t%s\n", name, ready, total, podStatus(p), restarts, age(now, created))
	}
	tw.Flush()
	for _, p := range pods {
		fmt.Fprintf(&t.buf, "\n--- pod %s/%s\n", p.Namespace, p.Name)
		out, err := yaml.Marshal(podView(p))
		if err != nil {
			fmt.Fprintf(&t.buf, "error: %v\n", err)
			continue
		}
		t.buf.Write(out)
	}
}

// podStatus is the STATUS column of kubectl get pods, simplified to what a
// simulated node shows.
func podStatus(p *v1.Pod) string {
	if p.Status.Reason != "" {
		return p.Status.Reason
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			return w.Reason
		}
		if tm := cs.State.Terminated; tm != nil && tm.Reason != "" {
			return tm.Reason
		}
	}
	if p.Status.Phase == "" {
		return "Pending"
	}
	return string(p.Status.Phase)
}

// The view types pick from a pod what a resize story needs, in the field
// names and nesting of the Pod API.
type (
	viewPod struct {
		Metadata viewMeta   `json:"metadata"`
		Spec     viewSpec   `json:"spec"`
		Status   viewStatus `json:"status"`
	}
	viewMeta struct {
		Name       string `json:"name"`
		Namespace  string `json:"namespace"`
		Generation int64  `json:"generation"`
	}
	viewSpec struct {
		InitContainers []viewContainer          `json:"initContainers,omitempty"`
		Containers     []viewContainer          `json:"containers"`
		Resources      *v1.ResourceRequirements `json:"resources,omitempty"`
		Overhead       v1.ResourceList          `json:"overhead,omitempty"`
	}
	viewContainer struct {
		Name          string                     `json:"name"`
		ResizePolicy  []v1.ContainerResizePolicy `json:"resizePolicy,omitempty"`
		Resources     v1.ResourceRequirements    `json:"resources"`
		RestartPolicy *v1.ContainerRestartPolicy `json:"restartPolicy,omitempty"`
	}
	viewStatus struct {
		Phase                 v1.PodPhase              `json:"phase,omitempty"`
		Reason                string                   `json:"reason,omitempty"`
		Message               string                   `json:"message,omitempty"`
		QOSClass              v1.PodQOSClass           `json:"qosClass,omitempty"`
		Conditions            []v1.PodCondition        `json:"conditions,omitempty"`
		InitContainerStatuses []viewContainerStatus    `json:"initContainerStatuses,omitempty"`
		ContainerStatuses     []viewContainerStatus    `json:"containerStatuses,omitempty"`
		Resources             *v1.ResourceRequirements `json:"resources,omitempty"`
	}
	viewContainerStatus struct {
		Name               string                   `json:"name"`
		AllocatedResources v1.ResourceList          `json:"allocatedResources,omitempty"`
		Resources          *v1.ResourceRequirements `json:"resources,omitempty"`
		RestartCount       int32                    `json:"restartCount"`
		State              string                   `json:"state"`
	}
)

func podView(p *v1.Pod) viewPod {
	v := viewPod{
		Metadata: viewMeta{Name: p.Name, Namespace: p.Namespace, Generation: p.Generation},
		Spec:     viewSpec{Resources: p.Spec.Resources, Overhead: p.Spec.Overhead},
		Status: viewStatus{
			Phase: p.Status.Phase, Reason: p.Status.Reason, Message: p.Status.Message,
			QOSClass: p.Status.QOSClass, Conditions: resizeConditions(p), Resources: p.Status.Resources,
		},
	}
	containers := func(cs []v1.Container) []viewContainer {
		var out []viewContainer
		for _, c := range cs {
			out = append(out, viewContainer{Name: c.Name, ResizePolicy: c.ResizePolicy, Resources: c.Resources, RestartPolicy: c.RestartPolicy})
		}
		return out
	}
	statuses := func(cs []v1.ContainerStatus) []viewContainerStatus {
		var out []viewContainerStatus
		for _, s := range cs {
			state := "waiting"
			switch {
			case s.State.Running != nil:
				state = "running"
			case s.State.Terminated != nil:
				state = fmt.Sprintf("terminated (%s, exit code %d)", s.State.Terminated.Reason, s.State.Terminated.ExitCode)
			case s.State.Waiting != nil && s.State.Waiting.Reason != "":
				state = "waiting (" + s.State.Waiting.Reason + ")"
			}
			out = append(out, viewContainerStatus{Name: s.Name, AllocatedResources: s.AllocatedResources,
				Resources: s.Resources, RestartCount: s.RestartCount, State: state})
		}
		return out
	}
	v.Spec.InitContainers = containers(p.Spec.InitContainers)
	v.Spec.Containers = containers(p.Spec.Containers)
	v.Status.InitContainerStatuses = statuses(p.Status.InitContainerStatuses)
	v.Status.ContainerStatuses = statuses(p.Status.ContainerStatuses)
	return v
}

// sinceStart is how far the clock has moved, as a Duration prints it.
// Two of the longest advances take the clock further than a Duration
// reaches (292 years), where Time.Sub saturates; the span is then counted
// in whole seconds.
func sinceStart(now time.Time) string {
	if d := now.Sub(Start); d < math.MaxInt64 {
		return d.String()
	}
	secs := now.Unix() - Start.Unix()
	return fmt.Sprintf("%dh%dm%ds", secs/3600, secs%3600/60, secs%60)
}

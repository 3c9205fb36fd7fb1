package kubeletcri

import (
	"errors"
	"fmt"
	"iter"
	"strings"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/qos"
)

// MemoryCheck is the usage check the kubelet makes before a memory limit
// goes down (validateMemoryResizeAction, kuberuntime_manager.go): what it
// checks. Its reads are the pod cgroup's memory usage and ContainerStats
// of each checked container with a runtime ID; Verdict judges them.
type MemoryCheck struct {
	// PodLimit is the desired pod limit when the pod's is checked.
	PodLimit *int64
	// Containers are the containers whose limit is added or lowered, in
	// the pod's order.
	Containers []CheckedContainer
	// PodOnly is the 1.33 form: the pod only, with its own message.
	PodOnly bool
}

// CheckedContainer is a container whose memory limit the check compares
// with its usage: its name, runtime ID ("" when it has none) and new
// limit.
type CheckedContainer struct {
	Name, ID string
	Limit    int64
}

// PlanMemoryCheck decides the check for a resize of pod whose pod cgroup
// memory limit goes from current to desired (nil: none), and in which the
// containers named in lowered get a limit they lacked or a lower one; id
// gives a container's runtime ID (none: ""). From 1.34 the check looks at the pod
// when its limit goes down and at each such container; 1.33 looks at the
// pod whenever it has a limit. ok is false when nothing needs checking,
// and for a nil Messages or pod.
func (m *Messages) PlanMemoryCheck(pod *v1.Pod, desired *int64, current int64, lowered map[string]int64, id func(name string) string) (mc MemoryCheck, ok bool) {
	if m == nil || pod == nil {
		return MemoryCheck{}, false
	}
	if m.s.PodOnlyMemoryCheck {
		if desired == nil {
			return MemoryCheck{}, false
		}
		return MemoryCheck{PodLimit: desired, PodOnly: true}, true
	}
	if desired != nil && *desired < current {
		mc.PodLimit = desired
	}
	if len(lowered) > 0 {
		for c := range containers(pod) {
			if limit, ok := lowered[c.Name]; ok {
				cc := CheckedContainer{Name: c.Name, Limit: limit}
				if id != nil {
					cc.ID = id(c.Name)
				}
				mc.Containers = append(mc.Containers, cc)
			}
		}
	}
	return mc, mc.PodLimit != nil || len(mc.Containers) > 0
}

// ResizeMemoryCheck is PlanMemoryCheck for a resize from old to pod, with
// the pod cgroup as the kubelet set it for old and every container whose
// memory limit pod adds or lowers; id gives a container's runtime ID.
func (m *Messages) ResizeMemoryCheck(old, pod *v1.Pod, id func(name string) string) (MemoryCheck, bool) {
	if m == nil || old == nil || pod == nil {
		return MemoryCheck{}, false
	}
	opts := m.PodConfigOptions()
	// Without a limit the pod cgroup reads back as unlimited, in the
	// version's own terms.
	current := cgconfig.Unlimited
	if m.s.CgroupVersion == cgconfig.V1 {
		current = cgconfig.V1UnlimitedMemory
	}
	if rc := cgconfig.PodConfig(old, opts); rc.Memory != nil && *rc.Memory != 0 {
		current = *rc.Memory
	}
	was := map[string]int64{}
	for c := range containers(old) {
		was[c.Name] = c.Resources.Limits.Memory().Value()
	}
	lowered := map[string]int64{}
	for c := range containers(pod) {
		limit, before := c.Resources.Limits.Memory().Value(), was[c.Name]
		if limit != 0 && (before == 0 || limit < before) {
			lowered[c.Name] = limit
		}
	}
	return m.PlanMemoryCheck(pod, cgconfig.PodConfig(pod, opts).Memory, current, lowered, id)
}

// Verdict judges the reads and returns the kubelet's error, or nil: usage
// is the pod cgroup's memory usage (nil when it could not be read) and
// stats the ContainerStats answers by container name (a failed read is
// absent). The container message prints the pod's usage, not the
// container's, as the kubelet does. A nil pod is an error.
func (mc MemoryCheck) Verdict(pod *v1.Pod, usage *int64, stats map[string]*runtimeapi.ContainerStats) error {
	if pod == nil {
		return errors.New("memory check: nil pod")
	}
	if usage == nil {
		return fmt.Errorf("unable to read memory usage for pod %q", fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID))
	}
	podUsage := *usage
	if mc.PodOnly {
		if podUsage >= *mc.PodLimit {
			return fmt.Errorf("aborting attempt to set pod memory limit less than current memory usage for pod %s", pod.Name)
		}
		return nil
	}
	var errs []string
	if mc.PodLimit != nil && podUsage >= *mc.PodLimit {
		errs = append(errs, fmt.Sprintf("attempting to set pod memory limit (%d) below current usage (%d)", *mc.PodLimit, podUsage))
	}
	for _, c := range mc.Containers {
		used := stats[c.Name].GetMemory().GetUsageBytes()
		if used == nil {
			errs = append(errs, fmt.Sprintf("missing container %q memory usage", c.Name))
			continue
		}
		if int64(used.GetValue()) >= c.Limit {
			errs = append(errs, fmt.Sprintf("attempting to set container %q memory limit (%d) below current usage (%d)", c.Name, c.Limit, podUsage))
		}
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		// apimachinery's utilerrors.NewAggregate prints one error as
		// itself, several as "[a, b]".
		return fmt.Errorf("cannot decrease memory limits: %s", errs[0])
	}
	return fmt.Errorf("cannot decrease memory limits: [%s]", strings.Join(errs, ", "))
}

// containers lists a pod's sidecars and regular containers in start
// order: the containers whose limits a resize changes.
func containers(pod *v1.Pod) iter.Seq[*v1.Container] {
	return func(yield func(*v1.Container) bool) {
		for i := range pod.Spec.InitContainers {
			if qos.IsSidecar(&pod.Spec.InitContainers[i]) && !yield(&pod.Spec.InitContainers[i]) {
				return
			}
		}
		for i := range pod.Spec.Containers {
			if !yield(&pod.Spec.Containers[i]) {
				return
			}
		}
	}
}

package scenario

import (
	"fmt"
	"regexp"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/apiserver"
)

// Scenario is one parsed and validated scenario file.
type Scenario struct {
	// File names the scenario in errors and transcripts: the path given to
	// Load or the name given to Parse.
	File        string
	Name        string
	Description string
	// Node is the node's configuration, with the format's defaults filled
	// in (capacity cpu 16, memory 64Gi, pods 110; allocatable = capacity;
	// name node-1; profile from the file's kubelet key).
	Node resize.NodeConfig
	// ContainerWeight is "quadratic" (runc >= 1.3.2) or "linear": how the
	// simulated runtime turns cpu shares into a container's cpu.weight.
	ContainerWeight string
	// Pods are the pods running at the start, defaulted (namespace, uid,
	// generation, image), in the file's order.
	Pods  []*v1.Pod
	Steps []Step
}

// Action is the kind of a step.
type Action string

// The step kinds of the format.
const (
	ActionResize         Action = "resize"
	ActionAdd            Action = "add"
	ActionDelete         Action = "delete"
	ActionUsage          Action = "usage"
	ActionExit           Action = "exit"
	ActionFault          Action = "fault"
	ActionAdvance        Action = "advance"
	ActionRestartKubelet Action = "restartKubelet"
	ActionExpect         Action = "expect"
)

// actions lists the step keys in the order the format's table gives them;
// error messages list them in this order.
var actions = []Action{ActionResize, ActionAdd, ActionDelete, ActionUsage, ActionExit, ActionFault,
	ActionAdvance, ActionRestartKubelet, ActionExpect}

// PodRef names a pod by namespace and name.
type PodRef struct {
	Namespace string
	Name      string
}

// String returns "namespace/name".
func (r PodRef) String() string { return r.Namespace + "/" + r.Name }

// Fault calls a fault step may name. CgroupWrite is a cgroup Manager's Set;
// the others are CRI methods.
const (
	CallCgroupWrite               = "CgroupWrite"
	CallUpdateContainerResources  = "UpdateContainerResources"
	CallUpdatePodSandboxResources = "UpdatePodSandboxResources"
	CallContainerStatus           = "ContainerStatus"
	CallStopContainer             = "StopContainer"
	CallStartContainer            = "StartContainer"
)

// faultCalls are the fault calls of the format, plus the CRI calls the
// runner also accepts as an extension (CreateContainer, RunPodSandbox).
var faultCalls = []string{CallUpdateContainerResources, CallUpdatePodSandboxResources, CallContainerStatus,
	CallStopContainer, CallStartContainer, CallCgroupWrite, "CreateContainer", "RunPodSandbox"}

// Step is one step of a scenario. Action says which of the other fields
// are set.
type Step struct {
	Action Action
	// Line is the line of the step in the file (counting from 1), or 0
	// when it is not known (a Step made in Go).
	Line int
	// Pod is the pod of resize, delete, usage, exit and (optional) fault.
	Pod PodRef
	// HasPod says whether a fault step names a pod.
	HasPod bool
	// Container is the container of usage, exit and (optional) fault.
	Container string
	// Patch is the resize patch as JSON, of type PatchType.
	Patch []byte
	// PatchType is the resize patch's type: "" for a strategic merge
	// patch (patchType strategic, the default), apiserver.MergePatch or
	// apiserver.JSONPatch.
	PatchType types.PatchType
	// Manifest is the pod of an add step, defaulted like the file's pods.
	Manifest *v1.Pod
	// Memory is the memory usage of a usage step.
	Memory resource.Quantity
	// ExitCode is the exit code of an exit step.
	ExitCode int32
	// Call, Error and Times describe a fault step.
	Call  string
	Error string
	Times int
	// Duration is how far an advance step moves the clock.
	Duration time.Duration
	// Allocatable holds the amounts a restartKubelet step gives the
	// restarted kubelet's allocatable, in place of those of the same
	// resources (nil: the allocatable stays as it is).
	Allocatable v1.ResourceList
	// Expect holds the checks of an expect step.
	Expect *Expect
}

// String returns a short description of the step for transcripts.
func (s Step) String() string {
	switch s.Action {
	case ActionResize:
		switch s.PatchType {
		case apiserver.MergePatch:
			return fmt.Sprintf("resize %s merge patch %s", s.Pod, s.Patch)
		case apiserver.JSONPatch:
			return fmt.Sprintf("resize %s JSON patch %s", s.Pod, s.Patch)
		}
		return fmt.Sprintf("resize %s %s", s.Pod, s.Patch)
	case ActionAdd:
		return fmt.Sprintf("add %s/%s", s.Manifest.Namespace, s.Manifest.Name)
	case ActionDelete:
		return fmt.Sprintf("delete %s", s.Pod)
	case ActionUsage:
		return fmt.Sprintf("usage %s container %s memory %s (%d bytes)", s.Pod, s.Container, s.Memory.String(), s.Memory.Value())
	case ActionExit:
		return fmt.Sprintf("exit %s container %s exitCode %d", s.Pod, s.Container, s.ExitCode)
	case ActionFault:
		target := "any pod"
		if s.HasPod {
			target = s.Pod.String()
			if s.Container != "" {
				target += " container " + s.Container
			}
		}
		return fmt.Sprintf("fault %s on %s: %q x%d", s.Call, target, s.Error, s.Times)
	case ActionAdvance:
		return fmt.Sprintf("advance %s", s.Duration)
	case ActionRestartKubelet:
		if s.Allocatable != nil {
			return "restartKubelet allocatable " + formatList(s.Allocatable)
		}
		return "restartKubelet"
	case ActionExpect:
		if s.Expect.Pod != nil {
			return "expect " + s.Expect.Pod.String()
		}
		return "expect"
	}
	return string(s.Action)
}

// Expect holds the checks of one expect step. A nil field is not checked.
type Expect struct {
	// Error is a substring of the previous action step's error.
	Error *string
	// Pod is the pod the pod-level keys refer to.
	Pod        *PodRef
	Admitted   *bool
	QOSClass   *v1.PodQOSClass
	Generation *int64
	// Conditions, when HasConditions, lists every resize condition the pod
	// must have (an empty list means none).
	HasConditions bool
	Conditions    []ConditionExpect
	// Containers are checked in the order of ContainerOrder.
	Containers     map[string]ContainerExpect
	ContainerOrder []string
	Cgroups        *CgroupsExpect
	Events         []EventExpect
	NoEvents       []string
	// NodeAllocated is the expected sum of the admitted pods' requests.
	NodeAllocated v1.ResourceList
	// Audit, when HasAudit, lists every difference Node.Audit must find:
	// the pod's, or with no Pod the whole node's (an empty list: none).
	HasAudit bool
	Audit    []AuditExpect
	// Metrics, when HasMetrics, are values of the kubelet's resize
	// metrics (package resize/metrics), in the order of their series.
	HasMetrics bool
	Metrics    []MetricExpect
}

// ConditionExpect is one expected resize condition. Nil fields are not
// checked.
type ConditionExpect struct {
	Type               v1.PodConditionType
	Status             *string
	Reason             *string
	Message            *string
	MessageRegexp      *regexp.Regexp
	ObservedGeneration *int64
}

// ContainerExpect holds the checks of one container.
type ContainerExpect struct {
	RestartCount *int32
	Resources    *ResourcesExpect // status.containerStatuses[].resources
	Allocated    *ResourcesExpect // what the kubelet admitted
	Spec         *ResourcesExpect // spec.containers[].resources
}

// ResourcesExpect is an expected v1.ResourceRequirements. A nil list is not
// checked; an empty one must be empty; otherwise every listed resource must
// have an equal quantity (others may be present).
type ResourcesExpect struct {
	Requests *v1.ResourceList
	Limits   *v1.ResourceList
}

// CgroupsExpect maps cgroup file names to their expected content, for the
// pod's cgroup and for containers' cgroups by container name.
type CgroupsExpect struct {
	Pod            map[string]string
	Containers     map[string]map[string]string
	ContainerOrder []string
}

// EventExpect is one expected event. Empty fields are not checked.
type EventExpect struct {
	Type          string
	Reason        string
	Message       *string
	MessageRegexp *regexp.Regexp
}

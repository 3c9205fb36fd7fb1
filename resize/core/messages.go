package core

import (
	"encoding/json"
	"fmt"
	"regexp"

	v1 "k8s.io/api/core/v1"
)

// Event reasons the kubelet uses on the resize path (pkg/kubelet/events).
const (
	ReasonResizeStarted          = "ResizeStarted"
	ReasonResizeCompleted        = "ResizeCompleted"
	ReasonResizeDeferred         = "ResizeDeferred"
	ReasonResizeInfeasible       = "ResizeInfeasible"
	ReasonResizeError            = "ResizeError"
	ReasonKilling                = "Killing"
	ReasonCreated                = "Created"
	ReasonStarted                = "Started"
	ReasonPulled                 = "Pulled"
	ReasonFailed                 = "Failed"
	ReasonFailedCreatePodSandBox = "FailedCreatePodSandBox"
)

// resizeSummaryContainer and resizeSummary give the JSON payload of the
// resize events, field for field as pkg/kubelet/events/resize.go builds it:
// every init and regular container with its full resources, empty lists
// left out, the generation, and an error for Pending and Error events.
type resizeSummaryContainer struct {
	Name      string                  `json:"name"`
	Resources v1.ResourceRequirements `json:"resources,omitempty"`
}

type resizeSummary struct {
	InitContainers []resizeSummaryContainer `json:"initContainers,omitempty"`
	Containers     []resizeSummaryContainer `json:"containers,omitempty"`
	Generation     int64                    `json:"generation"`
	Error          string                   `json:"error,omitempty"`
}

// resizeMessage is "<prefix>: <JSON summary of pod's resources>".
func resizeMessage(pod *v1.Pod, generation int64, errorMsg, prefix string) string {
	return messageOf(prefix, pod, generation, errorMsg).String()
}

// renderResizeMessage is resizeMessage for the pod's container lists.
func renderResizeMessage(inits, containers []v1.Container, generation int64, errorMsg, prefix string) string {
	summary := func(list []v1.Container) (out []resizeSummaryContainer) {
		for i := range list {
			out = append(out, resizeSummaryContainer{Name: list[i].Name, Resources: list[i].Resources})
		}
		return out
	}
	s := resizeSummary{Generation: generation, Error: errorMsg, InitContainers: summary(inits), Containers: summary(containers)}
	b, err := json.Marshal(s)
	if err != nil {
		return prefix
	}
	return prefix + ": " + string(b)
}

// The prefixes of the resize event messages (pkg/kubelet/events/resize.go).
const (
	prefixStarted   = "Pod resize started"
	prefixCompleted = "Pod resize completed"
	prefixError     = "Pod resize error"
	// The Pending events name the condition's reason.
	prefixDeferred   = "Pod resize " + string(v1.PodReasonDeferred)
	prefixInfeasible = "Pod resize " + string(v1.PodReasonInfeasible)
)

// pendingPrefix is the prefix of a ResizeDeferred event that names the
// refusing admit handler's reason, as events.PodResizePendingMsg formats
// it ("Pod resize %s"). The predicate's reasons are few, so theirs are
// kept rather than built for every retry.
func pendingPrefix(reason string) string {
	switch reason {
	case "OutOfcpu":
		return "Pod resize OutOfcpu"
	case "OutOfmemory":
		return "Pod resize OutOfmemory"
	case "OutOfpods":
		return "Pod resize OutOfpods"
	}
	return "Pod resize " + reason
}

// ResizeMessage is a resize event's message, kept unformatted: the
// containers and init containers it lists, the generation, the error for
// Pending and Error events, and the prefix. The lists are a pod's spec's,
// shared (pods are never changed in place), and not the pod: an event log
// keeps many messages, and each would keep its whole pod. Listed says the
// message is of a pod (messageOf); NoGeneration leaves the generation out,
// as the 1.34 ResizeCompleted did.
type ResizeMessage struct {
	Prefix                     string
	Containers, InitContainers []v1.Container
	Listed                     bool
	Generation                 int64
	Error                      string
	NoGeneration               bool
}

// messageOf is the message listing pod's containers (none for no pod).
func messageOf(prefix string, pod *v1.Pod, generation int64, errorMsg string) ResizeMessage {
	m := ResizeMessage{Prefix: prefix, Listed: pod != nil, Generation: generation, Error: errorMsg}
	if pod != nil {
		m.Containers, m.InitContainers = pod.Spec.Containers, pod.Spec.InitContainers
	}
	return m
}

// String renders the message as pkg/kubelet/events/resize.go does.
func (m ResizeMessage) String() string {
	msg := renderResizeMessage(m.InitContainers, m.Containers, m.Generation, m.Error, m.Prefix)
	if m.NoGeneration {
		msg = dropGeneration(msg)
	}
	return msg
}

// ResizeStartedMessage is the message of a ResizeStarted event for the
// newly allocated pod.
func ResizeStartedMessage(allocated *v1.Pod, generation int64) string {
	return resizeMessage(allocated, generation, "", prefixStarted)
}

// ResizeCompletedMessage is the message of a ResizeCompleted event.
func ResizeCompletedMessage(allocated *v1.Pod, generation int64) string {
	return resizeMessage(allocated, generation, "", prefixCompleted)
}

// ResizeErrorMessage is the message of a ResizeError event.
func ResizeErrorMessage(allocated *v1.Pod, generation int64, errorMsg string) string {
	return resizeMessage(allocated, generation, errorMsg, prefixError)
}

// ResizePendingMessage is the message of a ResizeDeferred or
// ResizeInfeasible event for the desired pod: "Pod resize <reason>: ...".
func ResizePendingMessage(desired *v1.Pod, reason, message string, generation int64) string {
	return resizeMessage(desired, generation, message, fmt.Sprintf("Pod resize %s", reason))
}

// dropGeneration removes the generation from a resize message, for the
// 1.34 ResizeCompleted event that did not carry one.
func dropGeneration(msg string) string {
	return generationField.ReplaceAllString(msg, "")
}

var generationField = regexp.MustCompile(`,"generation":-?[0-9]+`)

package apiserver

import (
	"cmp"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/resizelet/resizelet/qos"
	"github.com/resizelet/resizelet/resize/profile"
)

// NodeInfo is what the API server's admission plugins read of a node: the
// Node object's name, kubernetes.io/os label and status.allocatable, as a
// kubelet registers it (Cluster.RegisterNode).
type NodeInfo struct {
	Name        string
	OS          string // the kubernetes.io/os label; empty when none
	Allocatable v1.ResourceList
}

// The causes the PodResizeValidator admission plugin adds to its
// refusals (plugin/pkg/admission/podresize/admission.go).
const (
	CauseNodeCapacity        metav1.CauseType = "NodeCapacity"
	CauseUnsupportedPlatform metav1.CauseType = "UnsupportedPlatform"
)

// podsResource is the resource the errors name, as admission.NewForbidden
// takes it from the request (without the resize subresource).
var podsResource = schema.GroupResource{Resource: "pods"}

// ForbiddenError is an admission plugin's refusal: the API server's 403,
// `pods "resize-demo" is forbidden: <Err>` (admission's NewForbidden). It
// wraps the apimachinery StatusError, with Cause among its details' causes
// when set, so apierrors.IsForbidden and errors.As work on it.
type ForbiddenError struct {
	Name  string
	Err   error
	Cause metav1.CauseType
}

// Error returns the StatusError's message.
func (e *ForbiddenError) Error() string {
	if e == nil {
		return "<nil>"
	}
	return e.status().Error()
}

// Unwrap returns the StatusError the API server would send.
func (e *ForbiddenError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.status()
}

// status is the StatusError, built from the fields as InvalidError's.
func (e *ForbiddenError) status() *apierrors.StatusError {
	st := apierrors.NewForbidden(podsResource, e.Name, e.Err)
	if e.Cause != "" {
		st.ErrStatus.Details.Causes = append(st.ErrStatus.Details.Causes, metav1.StatusCause{Type: e.Cause})
	}
	return st
}

// AdmitResize is the PodResizeValidator admission plugin, default-on from
// 1.36 (profile.Profile.ResizeAdmissionPlugin), on a resize that passed
// the resize subresource (ApplyResize gave updated from old), for a pod on
// node (nil means unbound; a pod without spec.nodeName counts as bound to
// node, and one bound to another node is refused as bound to a node the
// plugin does not find). It runs only while InPlacePodVerticalScaling is
// on, for a bound pod, when the resize changed the generation. Then, in
// the plugin's order (validatePodResize):
//
//  1. a node that is not registered is refused: "node %q not found";
//  2. a node whose kubernetes.io/os label is set and not linux is refused:
//     "pod resize is only supported on linux nodes, node %q is %q";
//  3. the pod's new cpu and memory requests (PodRequests with default
//     options: pod-level requests where set, overhead included) must not
//     exceed the node's allocatable: "node didn't have enough allocatable
//     resources: cpu, requested: N, allocatable: M" (millicores), with
//     "; memory, requested: N, allocatable: M" (bytes) after it or alone.
//
// A refusal is a *ForbiddenError. Validating admission runs after the
// strategy's validation, so an invalid resize never reaches this.
func AdmitResize(old, updated *v1.Pod, node *NodeInfo, opts ResizeOptions) error {
	bound := ""
	if node != nil {
		if bound = cmp.Or(updated.Spec.NodeName, node.Name); bound != node.Name {
			node = nil
		}
	}
	return admitResize(old, updated, bound, node, opts)
}

// admitResize is AdmitResize for a pod bound to the node named bound (""
// when unbound), registered as node (nil when not found).
func admitResize(old, updated *v1.Pod, bound string, node *NodeInfo, opts ResizeOptions) error {
	p := opts.profile()
	if !p.ResizeAdmissionPlugin() || !p.Gate(profile.GateInPlacePodVerticalScaling) {
		return nil
	}
	if bound == "" || old.Generation == updated.Generation {
		return nil
	}
	if node == nil {
		return &ForbiddenError{Name: updated.Name, Err: fmt.Errorf("node %q not found", bound)}
	}
	if node.OS != "" && node.OS != "linux" {
		return &ForbiddenError{Name: updated.Name, Cause: CauseUnsupportedPlatform,
			Err: fmt.Errorf("pod resize is only supported on linux nodes, node %q is %q", node.Name, node.OS)}
	}
	if err := requestsWithinAllocatable(updated, node.Allocatable); err != nil {
		return &ForbiddenError{Name: updated.Name, Cause: CauseNodeCapacity, Err: err}
	}
	return nil
}

// requestsWithinAllocatable is the plugin's
// validateRequestsWithinAllocatable.
func requestsWithinAllocatable(pod *v1.Pod, allocatable v1.ResourceList) error {
	requests := qos.PodRequests(pod, qos.Options{})
	cpuRequests, memRequests := requests[v1.ResourceCPU], requests[v1.ResourceMemory]
	cpuAllocatable, memAllocatable := allocatable.Cpu(), allocatable.Memory()
	var msg []string
	if cpuRequests.Cmp(*cpuAllocatable) > 0 {
		msg = append(msg, fmt.Sprintf("cpu, requested: %d, allocatable: %d", cpuRequests.MilliValue(), cpuAllocatable.MilliValue()))
	}
	if memRequests.Cmp(*memAllocatable) > 0 {
		msg = append(msg, fmt.Sprintf("memory, requested: %d, allocatable: %d", memRequests.Value(), memAllocatable.Value()))
	}
	if len(msg) > 0 {
		return fmt.Errorf("node didn't have enough allocatable resources: %s", strings.Join(msg, "; "))
	}
	return nil
}

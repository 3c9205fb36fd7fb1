package kubeclient

import (
	"fmt"
	"strconv"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// selector is a list or watch's label and field selectors, parsed and
// checked as the API server checks them.
type selector struct {
	labels labels.Selector
	fields fields.Selector
}

// matches reports whether an object with these labels and fields is
// selected.
func (s selector) matches(l map[string]string, f fields.Set) bool {
	return s.labels.Matches(labels.Set(l)) && s.fields.Matches(f)
}

// everything reports whether the selectors select every object: a watch
// with them sends each change as it is, with no need of the object before
// it.
func (s selector) everything() bool { return s.labels.Empty() && s.fields.Empty() }

// parseSelector parses the options' selectors; convert is the kind's field
// label conversion (the API server refuses a field label the kind does not
// have, with 400 Bad Request: pkg/endpoints/handlers/get.go).
func parseSelector(opts metav1.ListOptions, convert func(label, value string) (string, string, error)) (selector, error) {
	s := selector{labels: labels.Everything(), fields: fields.Everything()}
	var err error
	if opts.LabelSelector != "" {
		if s.labels, err = labels.Parse(opts.LabelSelector); err != nil {
			return s, apierrors.NewBadRequest(err.Error())
		}
	}
	if opts.FieldSelector != "" {
		if s.fields, err = fields.ParseSelector(opts.FieldSelector); err != nil {
			return s, apierrors.NewBadRequest(err.Error())
		}
		if s.fields, err = s.fields.Transform(convert); err != nil {
			return s, apierrors.NewBadRequest(err.Error())
		}
	}
	return s, nil
}

// podFieldLabel is the field label conversion of v1 Pods
// (pkg/apis/core/v1/conversion.go, AddFieldLabelConversionsForPod).
func podFieldLabel(label, value string) (string, string, error) {
	switch label {
	case "metadata.name", "metadata.namespace", "spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
		"spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP", "status.podIPs",
		"status.nominatedNodeName":
		return label, value, nil
	case "spec.host":
		// For old v1 clients.
		return "spec.nodeName", value, nil
	}
	return "", "", fmt.Errorf("field label not supported: %s", label)
}

// podFields are the fields a pod is selected by (pkg/registry/core/pod/
// strategy.go, ToSelectableFields, on the internal pod, whose
// securityContext holds hostNetwork: the v1 pod's spec.hostNetwork).
func podFields(p *v1.Pod) fields.Set {
	hostNetwork := p.Spec.HostNetwork
	podIP := ""
	if len(p.Status.PodIPs) > 0 {
		podIP = p.Status.PodIPs[0].IP
	}
	return fields.Set{
		"metadata.name":            p.Name,
		"metadata.namespace":       p.Namespace,
		"spec.nodeName":            p.Spec.NodeName,
		"spec.restartPolicy":       string(p.Spec.RestartPolicy),
		"spec.schedulerName":       p.Spec.SchedulerName,
		"spec.serviceAccountName":  p.Spec.ServiceAccountName,
		"spec.hostNetwork":         strconv.FormatBool(hostNetwork),
		"status.phase":             string(p.Status.Phase),
		"status.podIP":             podIP,
		"status.nominatedNodeName": p.Status.NominatedNodeName,
	}
}

// eventFieldLabel is the field label conversion of v1 Events
// (pkg/apis/core/v1/conversion.go, AddFieldLabelConversionsForEvent).
func eventFieldLabel(label, value string) (string, string, error) {
	switch label {
	case "involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
		"involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
		"reason", "reportingComponent", "source", "type", "metadata.namespace", "metadata.name":
		return label, value, nil
	}
	return "", "", fmt.Errorf("field label not supported: %s", label)
}

// eventsV1FieldLabel is the field label conversion of events.k8s.io/v1
// Events onto the core fields (pkg/apis/events/v1/conversion.go,
// AddFieldLabelConversionsForEvent).
func eventsV1FieldLabel(label, value string) (string, string, error) {
	mapped, ok := map[string]string{
		"reason":                    "reason",
		"regarding.kind":            "involvedObject.kind",
		"regarding.namespace":       "involvedObject.namespace",
		"regarding.name":            "involvedObject.name",
		"regarding.uid":             "involvedObject.uid",
		"regarding.apiVersion":      "involvedObject.apiVersion",
		"regarding.resourceVersion": "involvedObject.resourceVersion",
		"regarding.fieldPath":       "involvedObject.fieldPath",
		"reportingController":       "reportingComponent",
		"type":                      "type",
		"metadata.namespace":        "metadata.namespace",
		"metadata.name":             "metadata.name",
	}[label]
	if !ok {
		return "", "", fmt.Errorf("field label not supported: %s", label)
	}
	return mapped, value, nil
}

// eventFields are the fields a core v1 event is selected by
// (pkg/registry/core/event/strategy.go, ToSelectableFields).
func eventFields(e *v1.Event) fields.Set {
	source := e.Source.Component
	if source == "" {
		source = e.ReportingController
	}
	return fields.Set{
		"metadata.name":                  e.Name,
		"metadata.namespace":             e.Namespace,
		"involvedObject.kind":            e.InvolvedObject.Kind,
		"involvedObject.namespace":       e.InvolvedObject.Namespace,
		"involvedObject.name":            e.InvolvedObject.Name,
		"involvedObject.uid":             string(e.InvolvedObject.UID),
		"involvedObject.apiVersion":      e.InvolvedObject.APIVersion,
		"involvedObject.resourceVersion": e.InvolvedObject.ResourceVersion,
		"involvedObject.fieldPath":       e.InvolvedObject.FieldPath,
		"reason":                         e.Reason,
		"reportingComponent":             e.ReportingController,
		"source":                         source,
		"type":                           e.Type,
	}
}

func everythingLabels() labels.Selector { return labels.Everything() }

func everythingFields() fields.Selector { return fields.Everything() }

package apiserver

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/resizelet/resizelet/allocation/reslist"
	"github.com/resizelet/resizelet/qos"
	"github.com/resizelet/resizelet/resize/profile"
)

// The API server's messages for a rejected resize
// (pkg/apis/core/validation/validation.go, ValidatePodResize), exact.
const (
	msgPodLevelResources   = "pods with pod-level resources cannot be resized"
	msgPodLevelGateOff     = "resize of pods with pod-level resources is forbidden when InPlacePodLevelResourcesVerticalScalingEnabled feature gate is disabled"
	msgStaticPod           = "static pods cannot be resized"
	msgWindowsPod          = "windows pods cannot be resized"
	msgQOSChange           = "Pod QOS Class may not change as a result of resizing"
	msgNoResizeSupport     = "Pod running on node without support for resize"
	msgRequestsRemoved     = "resource requests cannot be removed"
	msgLimitsRemoved       = "resource limits cannot be removed"
	msgOnlyCPUMemory       = "only cpu and memory resources are mutable"
	msgOnlyCPUMemorySide   = "only cpu and memory resources for sidecar containers are mutable"
	msgOnlyCPUMemoryInit   = "only cpu and memory resources for init or sidecar containers are mutable"
	msgInitImmutable       = "resources for non-sidecar init containers are immutable"
	msgMemLimitDecrease    = "memory limits cannot be decreased unless resizePolicy is RestartContainer"
	msgMemLimitAdd         = "memory limits cannot be added unless resizePolicy is RestartContainer"
	msgContainersReordered = "containers may not be renamed or reordered on resize"
	msgContainersAdded     = "containers may not be added or removed on resize"
	msgInitReordered       = "initContainers may not be renamed or reordered on resize"
	msgInitAdded           = "initContainers may not be added or removed on resize"
	msgPodLevelRemoved     = "pod-level resources cannot be removed"
	msgPodLevelReqRemoved  = "pod-level resource requests cannot be removed"
	msgPodLevelLimRemoved  = "pod-level resource limits cannot be removed"
	msgPodLevelOnlyCPUMem  = "only cpu and memory resources are mutable at pod-level"
	msgEphemeralField      = "cannot be set for an Ephemeral Container"
	msgInitResizePolicy    = "must not be set for init containers"
	msgResizePolicyNever   = "must be 'NotRequired' when `restartPolicy` is 'Never'"
	msgNegativeQuantity    = "must be greater than or equal to 0"
	msgNotInteger          = "must be an integer"
	msgNotStandardResource = "must be a standard resource for containers"
	msgNotExtendedResource = "doesn't follow extended resource name standard"
	msgLimitRequired       = "Limit must be set for non overcommitable resources"
	// The 1.36 rules on RestartContainer for non-sidecar init containers.
	msgInitRestartContainer       = "must not be set to 'RestartContainer' for non-sidecar initContainers"
	msgInitRestartContainerResize = "non-sidecar init containers with a resize policy of RestartContainer cannot be resized"
)

// ValidateResize returns the errors the API server's ValidatePodResize
// gives for newPod replacing oldPod through the resize subresource, in its
// order, per version:
//
//   - 1.33 and 1.34: pod-level resources (alone), static pod (alone),
//     windows pod (alone), then the pod spec errors of newPod (ValidatePod),
//     QoS class, node support, container order (stopping there), removals,
//     then what else changed.
//   - 1.35 and later: static pod (alone), windows pod (alone), then the pod
//     spec errors, QoS class, node support, pod-level resources (stopping
//     there when their resize is off), container order (stopping there),
//     removals, then what else changed.
//
// So the QoS class check comes before the removal checks (reference
// detail 6). An error "alone" replaces every other, as in the API server.
// A nil pod is an error on the argument's name ("newPod: Required value").
func ValidateResize(newPod, oldPod *v1.Pod, opts ResizeOptions) field.ErrorList {
	return validateResize(newPod, oldPod, opts, false)
}

// validateResize is ValidateResize, told with edited that applyEdit built
// newPod from oldPod: the comparisons outside resources and resizePolicy
// then have their answer by construction (equalOutsideResources).
func validateResize(newPod, oldPod *v1.Pod, opts ResizeOptions, edited bool) field.ErrorList {
	if newPod == nil || oldPod == nil {
		var errs field.ErrorList
		if newPod == nil {
			errs = append(errs, nilPod("newPod"))
		}
		if oldPod == nil {
			errs = append(errs, nilPod("oldPod"))
		}
		return errs
	}
	p := opts.profile()
	podLevel := hasPodLevelResources(oldPod) || hasPodLevelResources(newPod)

	if p.PodLevelResizeForbidden() && podLevel {
		return field.ErrorList{field.Forbidden(field.NewPath(""), msgPodLevelResources)}
	}
	if _, ok := oldPod.Annotations[v1.MirrorPodAnnotationKey]; ok {
		return field.ErrorList{field.Forbidden(field.NewPath(""), msgStaticPod)}
	}
	if oldPod.Spec.OS != nil && oldPod.Spec.OS.Name == v1.Windows {
		return field.ErrorList{field.Forbidden(field.NewPath(""), msgWindowsPod)}
	}

	// Amounts beyond the bounds are refused alone, before anything reads them.
	if errs := ValidateAmounts(newPod); len(errs) > 0 {
		return errs
	}
	// A pod that already has a RestartContainer policy on a non-sidecar
	// init container may keep it (AllowExistingRestartContainerFor-
	// NonSidecarInitContainer in pkg/api/pod/util.go).
	specOpts := opts
	specOpts.allowInitRestartContainer = initRestartContainer(oldPod)
	specOpts.stored = oldPod
	allErrs := validatePod(newPod, specOpts)
	if oldQOSClass(oldPod) != computeQOS(newPod, p) {
		// The API server reports the pod's current (status) class as the
		// bad value, as an Invalid error rather than a Forbidden one.
		allErrs = append(allErrs, field.Invalid(field.NewPath("spec"), newPod.Status.QOSClass, msgQOSChange))
	}
	if !resizeSupported(oldPod) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec"), msgNoResizeSupport))
	}

	// The API server undoes every allowed change in a copy of the new spec
	// and compares it with the old; the comparisons below give the same
	// without the copy (equalAfterUndo).
	podLevelChecked := false
	if !p.PodLevelResizeForbidden() && podLevel {
		if !p.PodLevelResize() {
			return append(allErrs, field.Forbidden(field.NewPath(""), msgPodLevelGateOff))
		}
		allErrs = append(allErrs, validatePodLevelResize(newPod, oldPod, p)...)
		podLevelChecked = true
	}

	// The rest compares containers index by index.
	if orderErrs := validateContainerOrder(newPod, oldPod); len(orderErrs) > 0 {
		return append(allErrs, orderErrs...)
	}

	initResizable := p.InitContainersResizable()
	for i := range oldPod.Spec.InitContainers {
		if !initResizable && !qos.IsSidecar(&oldPod.Spec.InitContainers[i]) {
			continue
		}
		allErrs = append(allErrs, validateContainerResize(&newPod.Spec.InitContainers[i], &oldPod.Spec.InitContainers[i], "initContainers", i, p)...)
	}
	for i := range oldPod.Spec.Containers {
		allErrs = append(allErrs, validateContainerResize(&newPod.Spec.Containers[i], &oldPod.Spec.Containers[i], "containers", i, p)...)
	}

	for i := range newPod.Spec.Containers {
		if !equalAfterUndo(&newPod.Spec.Containers[i], &oldPod.Spec.Containers[i], p, edited) {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("spec"), msgOnlyCPUMemory))
		}
	}
	for i := range newPod.Spec.InitContainers {
		c, o := &newPod.Spec.InitContainers[i], &oldPod.Spec.InitContainers[i]
		if qos.IsSidecar(c) || initResizable {
			if !equalAfterUndo(c, o, p, edited) {
				if p.InitResizeErrorPerContainer() {
					allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "initContainers").Index(i), msgOnlyCPUMemoryInit))
				} else {
					allErrs = append(allErrs, field.Forbidden(field.NewPath("spec"), msgOnlyCPUMemorySide))
				}
			}
			if p.InitRestartContainerPolicyForbidden() && !qos.IsSidecar(c) && !containersEqual(c, o, edited) {
				// One error per RestartContainer policy, as
				// ValidatePodResize (1.36) gives them.
				for _, rp := range c.ResizePolicy {
					if rp.RestartPolicy == v1.RestartContainer {
						allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "initContainers").Index(i), msgInitRestartContainerResize))
					}
				}
			}
		} else if !containersEqual(c, o, edited) {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("spec"), msgInitImmutable))
		}
	}
	if len(allErrs) > 0 {
		return allErrs
	}
	// Every container compared equal after its undo, as did the pod-level
	// resources if checked: what is left of the API server's final
	// comparison is the rest of the spec.
	if !specEqualOutsideContainers(&newPod.Spec, &oldPod.Spec, podLevelChecked, edited) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec"), msgOnlyCPUMemory))
	}
	return allErrs
}

// hasPodLevelResources reports whether the pod sets pod-level resources.
func hasPodLevelResources(pod *v1.Pod) bool {
	r := pod.Spec.Resources
	return r != nil && len(r.Requests)+len(r.Limits) > 0
}

// oldQOSClass is the class the API server holds for the stored pod: its
// status.qosClass, or the computed class when status has none.
func oldQOSClass(pod *v1.Pod) v1.PodQOSClass {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	return qos.PodQOSClass(pod)
}

// computeQOS is the API server's ComputePodQOS in the version p: from 1.37
// empty pod-level resources leave the class to the containers
// (profile.Profile.PodLevelQOSOnlyWhenSet).
func computeQOS(pod *v1.Pod, p profile.Profile) v1.PodQOSClass {
	if p.PodLevelQOSOnlyWhenSet() {
		return qos.PodQOSClassWhenSet(pod)
	}
	return qos.PodQOSClass(pod)
}

// resizeSupported is the version-skew check: a running container whose
// status has no resources means the node's kubelet predates resize. The
// first running container decides; with none, resize is allowed.
func resizeSupported(pod *v1.Pod) bool {
	for i := range pod.Status.ContainerStatuses {
		if s := &pod.Status.ContainerStatuses[i]; s.State.Running != nil {
			return s.Resources != nil
		}
	}
	return true
}

// validateContainerOrder refuses added, removed, renamed or reordered
// containers.
func validateContainerOrder(newPod, oldPod *v1.Pod) field.ErrorList {
	var errs field.ErrorList
	check := func(newList, oldList []v1.Container, name, msgAdded, msgReordered string) {
		if len(newList) != len(oldList) {
			errs = append(errs, field.Forbidden(field.NewPath("spec", name), msgAdded))
			return
		}
		for i := range oldList {
			if newList[i].Name != oldList[i].Name {
				errs = append(errs, field.Forbidden(field.NewPath("spec", name).Index(i).Child("name"), msgReordered))
			}
		}
	}
	check(newPod.Spec.Containers, oldPod.Spec.Containers, "containers", msgContainersAdded, msgContainersReordered)
	check(newPod.Spec.InitContainers, oldPod.Spec.InitContainers, "initContainers", msgInitAdded, msgInitReordered)
	return errs
}

// validateContainerResize checks the resources of the container at
// spec.<list>[index] against its old ones: requests and limits may be
// added or changed but not removed, and (1.33 only) a memory limit may not
// be lowered or added unless the memory resizePolicy is RestartContainer.
func validateContainerResize(newC, oldC *v1.Container, list string, index int, p profile.Profile) field.ErrorList {
	var errs field.ErrorList
	path := func() *field.Path { return field.NewPath("spec", list).Index(index).Child("resources") }
	if resourcesRemoved(newC.Resources.Requests, oldC.Resources.Requests) {
		errs = append(errs, field.Forbidden(path().Child("requests"), msgRequestsRemoved))
	}
	if resourcesRemoved(newC.Resources.Limits, oldC.Resources.Limits) {
		errs = append(errs, field.Forbidden(path().Child("limits"), msgLimitsRemoved))
	}
	if !p.MemoryLimitNeedsRestartPolicy() || memoryResizePolicy(newC) == v1.RestartContainer {
		return errs
	}
	newLimit, hasNew := newC.Resources.Limits[v1.ResourceMemory]
	oldLimit, hasOld := oldC.Resources.Limits[v1.ResourceMemory]
	switch {
	case hasNew && hasOld && newLimit.Cmp(oldLimit) < 0:
		errs = append(errs, field.Forbidden(path().Child("limits").Key(string(v1.ResourceMemory)), msgMemLimitDecrease))
	case hasNew && !hasOld:
		// Adding a limit lowers it from unlimited.
		errs = append(errs, field.Forbidden(path().Child("limits").Key(string(v1.ResourceMemory)), msgMemLimitAdd))
	}
	return errs
}

// memoryResizePolicy is the container's memory resize policy (unset is
// NotRequired).
func memoryResizePolicy(c *v1.Container) v1.ResourceResizeRestartPolicy {
	for _, p := range c.ResizePolicy {
		if p.ResourceName == v1.ResourceMemory {
			return p.RestartPolicy
		}
	}
	return v1.NotRequired
}

// resourcesRemoved reports whether newList lacks a resource of oldList.
func resourcesRemoved(newList, oldList v1.ResourceList) bool {
	if len(oldList) > len(newList) {
		return true
	}
	for name := range resources(oldList) {
		if _, ok := newList[name]; !ok {
			return true
		}
	}
	return false
}

// equalAfterUndo reports whether c, with its cpu and memory changes undone
// as the API server undoes them, equals o, without building the undone
// copy. The API server's undo rebuilds a container's Resources from
// limits and requests only (so claims are dropped), each list as the new
// list's other resources plus the old list's cpu and memory. Up to 1.34 a
// list the old container does not have is dropped whole, so adding a list
// of other resources to a container that had none goes unnoticed; from
// 1.35 (the helper rewritten for pod-level resize) it is kept and compared.
func equalAfterUndo(c, o *v1.Container, p profile.Profile, edited bool) bool {
	return len(o.Resources.Claims) == 0 &&
		listEqualAfterUndo(c.Resources.Limits, o.Resources.Limits, p) &&
		listEqualAfterUndo(c.Resources.Requests, o.Resources.Requests, p) &&
		equalOutsideResources(c, o, edited)
}

// listEqualAfterUndo reports whether list with cpu and memory taken from
// old (the undo) equals old.
func listEqualAfterUndo(list, old v1.ResourceList, p profile.Profile) bool {
	if old == nil && (!p.ComparesAddedResourceLists() || list == nil) {
		// The undo gives no list, as old has none.
		return true
	}
	return otherResourcesEqual(list, old)
}

// undoneLen is the length of the undo of list when the old one is absent.
func undoneLen(list v1.ResourceList, p profile.Profile) int {
	if !p.ComparesAddedResourceLists() {
		return 0
	}
	return others(list)
}

// others is how many resources of list are neither cpu nor memory.
func others(list v1.ResourceList) int {
	n := 0
	for name := range list {
		if !isCPUOrMemory(name) {
			n++
		}
	}
	return n
}

func isCPUOrMemory(name v1.ResourceName) bool {
	return name == v1.ResourceCPU || name == v1.ResourceMemory
}

// otherResourcesEqual reports whether a and b are equal but for cpu and
// memory.
func otherResourcesEqual(a, b v1.ResourceList) bool {
	if onlyCPUMemory(a) && onlyCPUMemory(b) {
		return true
	}
	for name, q := range a {
		if bq, ok := b[name]; !isCPUOrMemory(name) && (!ok || q.Cmp(bq) != 0) {
			return false
		}
	}
	return others(a) == others(b)
}

// claimsEqual is semantic equality of resource claims.
func claimsEqual(a, b []v1.ResourceClaim) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	return apiequality.Semantic.DeepEqual(a, b)
}

// requirementsEqual is semantic equality of resource requirements.
func requirementsEqual(a, b *v1.ResourceRequirements) bool {
	return reslist.Equal(a.Limits, b.Limits) && reslist.Equal(a.Requests, b.Requests) && claimsEqual(a.Claims, b.Claims)
}

// containersEqual is semantic equality of containers.
func containersEqual(c, o *v1.Container, edited bool) bool {
	return requirementsEqual(&c.Resources, &o.Resources) && equalOutsideResources(c, o, edited)
}

// validatePodLevelResize checks a change of spec.resources: nothing may be
// removed and only cpu and memory may change.
func validatePodLevelResize(newPod, oldPod *v1.Pod, p profile.Profile) field.ErrorList {
	oldR, newR := oldPod.Spec.Resources, newPod.Spec.Resources
	if oldR != nil && newR == nil {
		return field.ErrorList{field.Forbidden(field.NewPath("spec", "resources"), msgPodLevelRemoved)}
	}
	var errs field.ErrorList
	if oldR != nil {
		if resourcesRemoved(newR.Requests, oldR.Requests) {
			errs = append(errs, field.Forbidden(field.NewPath("spec", "resources", "requests"), msgPodLevelReqRemoved))
		}
		if resourcesRemoved(newR.Limits, oldR.Limits) {
			errs = append(errs, field.Forbidden(field.NewPath("spec", "resources", "limits"), msgPodLevelLimRemoved))
		}
	}
	// The API server undoes the cpu and memory changes of spec.resources
	// (keeping its claims) and drops a result that is empty where the old
	// pod had none, then compares.
	equal := true
	switch {
	case newR == nil:
		// Both absent.
	case oldR == nil:
		equal = undoneLen(newR.Requests, p) == 0 && undoneLen(newR.Limits, p) == 0 && len(newR.Claims) == 0
	default:
		equal = listEqualAfterUndo(newR.Requests, oldR.Requests, p) &&
			listEqualAfterUndo(newR.Limits, oldR.Limits, p) &&
			claimsEqual(newR.Claims, oldR.Claims)
	}
	if !equal {
		errs = append(errs, field.Forbidden(field.NewPath("spec"), msgPodLevelOnlyCPUMem))
	}
	return errs
}

// equalOutsideResources reports whether two containers are semantically
// equal but for their resources. With edited, c is o with resources and
// resizePolicy set by applyEdit, so only resizePolicy can differ
// (slices.Equal is its semantic equality: nil equals empty).
func equalOutsideResources(c, o *v1.Container, edited bool) bool {
	if edited {
		return slices.Equal(c.ResizePolicy, o.ResizePolicy)
	}
	cc, oc := *c, *o
	cc.Resources, oc.Resources = v1.ResourceRequirements{}, v1.ResourceRequirements{}
	return apiequality.Semantic.DeepEqual(cc, oc)
}

// specEqualOutsideContainers reports whether two pod specs are
// semantically equal but for their containers and init containers (and
// spec.resources with skipResources). With edited, a is b with its
// containers and resources set by applyEdit, the rest shared.
func specEqualOutsideContainers(a, b *v1.PodSpec, skipResources, edited bool) bool {
	if !skipResources && !podResourcesEqual(a.Resources, b.Resources) {
		return false
	}
	if edited {
		return true
	}
	ac, bc := *a, *b
	ac.Containers, bc.Containers = nil, nil
	ac.InitContainers, bc.InitContainers = nil, nil
	ac.Resources, bc.Resources = nil, nil
	return apiequality.Semantic.DeepEqual(ac, bc)
}

// podResourcesEqual is semantic equality of spec.resources (absent equals
// only absent).
func podResourcesEqual(a, b *v1.ResourceRequirements) bool {
	if a == nil || b == nil {
		return a == b
	}
	return requirementsEqual(a, b)
}

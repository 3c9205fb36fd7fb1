package apiserver

// The resize validation as first written: a deep copy of the new spec with
// the allowed changes undone, compared with the old spec by
// apiequality.Semantic.DeepEqual; eager field paths, sorted key copies and
// maps. It is kept here, unchanged but for its names and the checks
// the real API server showed it lacked (oracleImage, oracleConsistency,
// oraclePodResourceName), as
// the oracle that TestValidateResizeMatchesOracle holds the faster
// ValidateResize to.

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/resizelet/resizelet/qos"
	"github.com/resizelet/resizelet/resize/profile"
)

// oracleValidateResize returns the errors the API server's ValidatePodResize
// gives for newPod replacing oldPod through the resize subresource, in its
// order. The order per version, as read in the validation source:
//
//   - 1.33 and 1.34: pod-level resources (alone), static pod (alone),
//     windows pod (alone), then the pod spec errors of newPod (oracleValidatePod),
//     QoS class, node support, container order (stopping there), removals,
//     then what else changed.
//   - 1.35 and later: static pod (alone), windows pod (alone), then the pod
//     spec errors, QoS class, node support, pod-level resources (stopping
//     there when their resize is off), container order (stopping there),
//     removals, then what else changed.
//
// The QoS class check therefore comes before the removal checks (reference
// detail 6). Messages that are "alone" replace every other error, as they
// do in the API server.
func oracleValidateResize(newPod, oldPod *v1.Pod, opts ResizeOptions) field.ErrorList {
	p := opts.profile()
	root := field.NewPath("")
	specPath := field.NewPath("spec")
	podLevel := hasPodLevelResources(oldPod) || hasPodLevelResources(newPod)

	if p.PodLevelResizeForbidden() && podLevel {
		return field.ErrorList{field.Forbidden(root, msgPodLevelResources)}
	}
	if _, ok := oldPod.Annotations[v1.MirrorPodAnnotationKey]; ok {
		return field.ErrorList{field.Forbidden(root, msgStaticPod)}
	}
	if oldPod.Spec.OS != nil && oldPod.Spec.OS.Name == v1.Windows {
		return field.ErrorList{field.Forbidden(root, msgWindowsPod)}
	}

	specOpts := opts
	specOpts.allowInitRestartContainer = oracleInitRestartContainer(oldPod)
	allErrs := oracleValidatePod(newPod, specOpts)
	newQOS := qos.PodQOSClass(newPod)
	if p.PodLevelQOSOnlyWhenSet() && !resourcehelper.IsPodLevelResourcesSet(newPod) {
		// 1.37: empty pod-level resources leave the class to the
		// containers.
		newQOS = qos.PodQOSClass(&v1.Pod{Spec: v1.PodSpec{Containers: newPod.Spec.Containers, InitContainers: newPod.Spec.InitContainers}})
	}
	if oldQOSClass(oldPod) != newQOS {
		// The API server reports the pod's current (status) class as the
		// bad value, as an Invalid error rather than a Forbidden one.
		allErrs = append(allErrs, field.Invalid(specPath, newPod.Status.QOSClass, msgQOSChange))
	}
	if !resizeSupported(oldPod) {
		allErrs = append(allErrs, field.Forbidden(specPath, msgNoResizeSupport))
	}

	// newSpec is newPod's spec with every allowed change undone, so that
	// comparing it with oldPod's spec finds the changes that are not.
	newSpec := newPod.Spec.DeepCopy()
	if !p.PodLevelResizeForbidden() && podLevel {
		if !p.PodLevelResize() {
			return append(allErrs, field.Forbidden(root, msgPodLevelGateOff))
		}
		allErrs = append(allErrs, oraclePodLevelResize(newPod, oldPod, newSpec, specPath, p)...)
	}

	// The rest compares containers index by index, so it needs the same
	// containers in the same order.
	if orderErrs := oracleContainerOrder(newPod, oldPod, specPath); len(orderErrs) > 0 {
		return append(allErrs, orderErrs...)
	}

	initResizable := p.InitContainersResizable()
	for i := range oldPod.Spec.InitContainers {
		if !initResizable && !qos.IsSidecar(&oldPod.Spec.InitContainers[i]) {
			continue
		}
		allErrs = append(allErrs, oracleContainerResize(&newPod.Spec.InitContainers[i], &oldPod.Spec.InitContainers[i],
			specPath.Child("initContainers").Index(i).Child("resources"), p)...)
	}
	for i := range oldPod.Spec.Containers {
		allErrs = append(allErrs, oracleContainerResize(&newPod.Spec.Containers[i], &oldPod.Spec.Containers[i],
			specPath.Child("containers").Index(i).Child("resources"), p)...)
	}

	for i := range newSpec.Containers {
		c, o := &newSpec.Containers[i], &oldPod.Spec.Containers[i]
		oracleUndoChanges(c, o, p)
		if !apiequality.Semantic.DeepEqual(*c, *o) {
			allErrs = append(allErrs, field.Forbidden(specPath, msgOnlyCPUMemory))
		}
	}
	for i := range newSpec.InitContainers {
		c, o := &newSpec.InitContainers[i], &oldPod.Spec.InitContainers[i]
		modified := !apiequality.Semantic.DeepEqual(*c, *o)
		if qos.IsSidecar(c) || initResizable {
			sidecar := qos.IsSidecar(c)
			oracleUndoChanges(c, o, p)
			if !apiequality.Semantic.DeepEqual(*c, *o) {
				if p.InitResizeErrorPerContainer() {
					allErrs = append(allErrs, field.Forbidden(specPath.Child("initContainers").Index(i), msgOnlyCPUMemoryInit))
				} else {
					allErrs = append(allErrs, field.Forbidden(specPath, msgOnlyCPUMemorySide))
				}
			}
			if p.InitRestartContainerPolicyForbidden() && modified && !sidecar {
				for _, rp := range c.ResizePolicy {
					if rp.RestartPolicy == v1.RestartContainer {
						allErrs = append(allErrs, field.Forbidden(specPath.Child("initContainers").Index(i), msgInitRestartContainerResize))
					}
				}
			}
		} else if modified {
			allErrs = append(allErrs, field.Forbidden(specPath, msgInitImmutable))
		}
	}
	if len(allErrs) > 0 {
		return allErrs
	}
	if !apiequality.Semantic.DeepEqual(*newSpec, oldPod.Spec) {
		allErrs = append(allErrs, field.Forbidden(specPath, msgOnlyCPUMemory))
	}
	return allErrs
}

// oracleContainerOrder rejects a resize that adds, removes, renames or
// reorders containers or init containers.
func oracleContainerOrder(newPod, oldPod *v1.Pod, specPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	check := func(newList, oldList []v1.Container, name, msgAdded, msgReordered string) {
		path := specPath.Child(name)
		if len(newList) != len(oldList) {
			errs = append(errs, field.Forbidden(path, msgAdded))
			return
		}
		for i := range oldList {
			if newList[i].Name != oldList[i].Name {
				errs = append(errs, field.Forbidden(path.Index(i).Child("name"), msgReordered))
			}
		}
	}
	check(newPod.Spec.Containers, oldPod.Spec.Containers, "containers", msgContainersAdded, msgContainersReordered)
	check(newPod.Spec.InitContainers, oldPod.Spec.InitContainers, "initContainers", msgInitAdded, msgInitReordered)
	return errs
}

// oracleContainerResize checks one container's resources against its old
// ones: requests and limits may be added or changed but not removed, and
// (1.33 only) a memory limit may not be lowered or added unless the memory
// resizePolicy is RestartContainer.
func oracleContainerResize(newC, oldC *v1.Container, path *field.Path, p profile.Profile) field.ErrorList {
	var errs field.ErrorList
	if resourcesRemoved(newC.Resources.Requests, oldC.Resources.Requests) {
		errs = append(errs, field.Forbidden(path.Child("requests"), msgRequestsRemoved))
	}
	if resourcesRemoved(newC.Resources.Limits, oldC.Resources.Limits) {
		errs = append(errs, field.Forbidden(path.Child("limits"), msgLimitsRemoved))
	}
	if !p.MemoryLimitNeedsRestartPolicy() || memoryResizePolicy(newC) == v1.RestartContainer {
		return errs
	}
	newLimit, hasNew := newC.Resources.Limits[v1.ResourceMemory]
	oldLimit, hasOld := oldC.Resources.Limits[v1.ResourceMemory]
	memPath := path.Child("limits").Key(string(v1.ResourceMemory))
	switch {
	case hasNew && hasOld && newLimit.Cmp(oldLimit) < 0:
		errs = append(errs, field.Forbidden(memPath, msgMemLimitDecrease))
	case hasNew && !hasOld:
		// Adding a limit lowers it from unlimited.
		errs = append(errs, field.Forbidden(memPath, msgMemLimitAdd))
	}
	return errs
}

// oracleUndoChanges sets c's cpu and memory requests and limits back to
// o's, so that what remains different is a change the resize may not make.
// Like the API server it rebuilds Resources from limits and requests only.
// Up to 1.34 a list o does not have is dropped whole, so adding a list of
// other resources to a container that had none goes unnoticed there; from
// 1.35 (where the API server's helper was rewritten for pod-level resize)
// such a list is kept and compared.
func oracleUndoChanges(c, o *v1.Container, p profile.Profile) {
	c.Resources = v1.ResourceRequirements{
		Limits:   oracleUndoList(c.Resources.Limits, o.Resources.Limits, p),
		Requests: oracleUndoList(c.Resources.Requests, o.Resources.Requests, p),
	}
}

// oracleUndoList returns a copy of list with cpu and memory taken from
// old (or absent when old lacks them).
func oracleUndoList(list, old v1.ResourceList, p profile.Profile) v1.ResourceList {
	if old == nil && (!p.ComparesAddedResourceLists() || list == nil) {
		return nil
	}
	out := make(v1.ResourceList, len(list)+2)
	for name, q := range list {
		if name != v1.ResourceCPU && name != v1.ResourceMemory {
			out[name] = q
		}
	}
	if q, ok := old[v1.ResourceCPU]; ok {
		out[v1.ResourceCPU] = q
	}
	if q, ok := old[v1.ResourceMemory]; ok {
		out[v1.ResourceMemory] = q
	}
	return out
}

// oraclePodLevelResize checks a change of spec.resources when pod-level
// resize is on: nothing may be removed and only cpu and memory may change.
// It undoes the allowed changes in newSpec.Resources.
func oraclePodLevelResize(newPod, oldPod *v1.Pod, newSpec *v1.PodSpec, specPath *field.Path, p profile.Profile) field.ErrorList {
	oldR, newR := oldPod.Spec.Resources, newPod.Spec.Resources
	if oldR != nil && newR == nil {
		return field.ErrorList{field.Forbidden(specPath.Child("resources"), msgPodLevelRemoved)}
	}
	var errs field.ErrorList
	if oldR != nil {
		if resourcesRemoved(newR.Requests, oldR.Requests) {
			errs = append(errs, field.Forbidden(specPath.Child("resources").Child("requests"), msgPodLevelReqRemoved))
		}
		if resourcesRemoved(newR.Limits, oldR.Limits) {
			errs = append(errs, field.Forbidden(specPath.Child("resources").Child("limits"), msgPodLevelLimRemoved))
		}
	}
	if r := newSpec.Resources; r != nil {
		var oldReqs, oldLims v1.ResourceList
		if oldR != nil {
			oldReqs, oldLims = oldR.Requests, oldR.Limits
		}
		r.Requests = oracleUndoList(r.Requests, oldReqs, p)
		r.Limits = oracleUndoList(r.Limits, oldLims, p)
		if oldR == nil && len(r.Requests) == 0 && len(r.Limits) == 0 && len(r.Claims) == 0 {
			newSpec.Resources = nil
		}
	}
	if !apiequality.Semantic.DeepEqual(newSpec.Resources, oldR) {
		errs = append(errs, field.Forbidden(specPath, msgPodLevelOnlyCPUMem))
	}
	return errs
}

// oracleValidatePod is the part of the API server's pod validation this library
// needs, with its messages and field paths: metadata.name set; containers
// present, named (DNS-1123 labels) and unique across regular, init and
// ephemeral containers; resources well formed (known names, non-negative,
// integer extended resources, requests at most limits, requests equal to
// limits where overcommit is not allowed); resizePolicy valid (cpu or
// memory, no duplicates, NotRequired or RestartContainer, NotRequired only
// when the pod's restartPolicy is Never); init containers may set
// resizePolicy only while InPlacePodVerticalScaling is on (the API server's
// AllowSidecarResizePolicy, which despite its name admits any init
// container); ephemeral containers may set neither resources nor
// resizePolicy. Resource names are checked in sorted order, so the errors
// come in a stable order (the API server walks maps at random).
// oracleInitRestartContainer is hasRestartContainerForNonSidecarInitContainer
// (pkg/api/pod/util.go), written out again.
func oracleInitRestartContainer(pod *v1.Pod) bool {
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			continue
		}
		for _, rp := range c.ResizePolicy {
			if rp.RestartPolicy == v1.RestartContainer {
				return true
			}
		}
	}
	return false
}

func oracleValidatePod(pod *v1.Pod, opts ResizeOptions) field.ErrorList {
	var errs field.ErrorList
	if pod.Name == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "name"), "name or generateName is required"))
	}
	spec := field.NewPath("spec")
	never := pod.Spec.RestartPolicy == v1.RestartPolicyNever

	names := make(map[string]bool, len(pod.Spec.Containers)+len(pod.Spec.InitContainers))
	path := spec.Child("containers")
	if len(pod.Spec.Containers) == 0 {
		errs = append(errs, field.Required(path, ""))
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		idx := path.Index(i)
		errs = append(errs, oracleImage(c, opts.stored, false, idx)...)
		errs = append(errs, oracleContainerCommon(c, idx, never)...)
		if names[c.Name] {
			errs = append(errs, field.Duplicate(idx.Child("name"), c.Name))
		} else {
			names[c.Name] = true
		}
	}

	path = spec.Child("initContainers")
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		idx := path.Index(i)
		errs = append(errs, oracleImage(c, opts.stored, true, idx)...)
		errs = append(errs, oracleContainerCommon(c, idx, never)...)
		if names[c.Name] {
			errs = append(errs, field.Duplicate(idx.Child("name"), c.Name))
		} else if c.Name != "" {
			names[c.Name] = true
		}
		if !opts.profile().Gate(profile.GateInPlacePodVerticalScaling) && len(c.ResizePolicy) > 0 {
			errs = append(errs, field.Invalid(idx.Child("resizePolicy"), c.ResizePolicy, msgInitResizePolicy))
		}
		restartAlways := c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
		if opts.profile().InitRestartContainerPolicyForbidden() && !restartAlways && !opts.allowInitRestartContainer {
			for j, rp := range c.ResizePolicy {
				if rp.RestartPolicy == v1.RestartContainer {
					errs = append(errs, field.Invalid(idx.Child("resizePolicy").Index(j).Child("restartPolicy"), rp.RestartPolicy, msgInitRestartContainer))
				}
			}
		}
	}

	path = spec.Child("ephemeralContainers")
	for i := range pod.Spec.EphemeralContainers {
		c := (*v1.Container)(&pod.Spec.EphemeralContainers[i].EphemeralContainerCommon)
		idx := path.Index(i)
		errs = append(errs, oracleContainerCommon(c, idx, never)...)
		if names[c.Name] {
			errs = append(errs, field.Duplicate(idx.Child("name"), c.Name))
		} else {
			names[c.Name] = true
		}
		if r := c.Resources; r.Limits != nil || r.Requests != nil || r.Claims != nil {
			errs = append(errs, field.Forbidden(idx.Child("resources"), msgEphemeralField))
		}
		if c.ResizePolicy != nil {
			errs = append(errs, field.Forbidden(idx.Child("resizePolicy"), msgEphemeralField))
		}
	}

	if pod.Spec.Resources != nil {
		errs = append(errs, oracleResourceRequirements(pod.Spec.Resources, spec.Child("resources"), false)...)
		errs = append(errs, oracleConsistency(pod, spec.Child("resources"))...)
	}
	return errs
}

// oracleImage is the API server's image check (validateContainerCommon)
// for a container a resize adds: resizelet's pods may lack images.
func oracleImage(c *v1.Container, stored *v1.Pod, init bool, path *field.Path) field.ErrorList {
	if c.Image != "" || stored == nil {
		return nil
	}
	old := stored.Spec.Containers
	if init {
		old = stored.Spec.InitContainers
	}
	if slices.ContainsFunc(old, func(o v1.Container) bool { return o.Name == c.Name }) {
		return nil
	}
	return field.ErrorList{field.Required(path.Child("image"), "")}
}

// oracleConsistency is validatePodResourceConsistency
// (pkg/apis/core/validation/validation.go), names sorted.
func oracleConsistency(pod *v1.Pod, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	r := pod.Spec.Resources
	aggregate := resourcehelper.AggregateContainerRequests(pod, resourcehelper.PodResourcesOptions{})
	for _, name := range slices.Sorted(maps.Keys(aggregate)) {
		req, ok := r.Requests[name]
		if q := aggregate[name]; ok && q.Cmp(req) > 0 {
			errs = append(errs, field.Invalid(path.Child("requests").Key(string(name)), req.String(), fmt.Sprintf("must be greater than or equal to aggregate container requests of %s", q.String())))
		}
	}
	for i, c := range pod.Spec.Containers {
		for _, name := range slices.Sorted(maps.Keys(c.Resources.Limits)) {
			limit, ok := r.Limits[name]
			if q := c.Resources.Limits[name]; ok && q.Cmp(limit) > 0 {
				errs = append(errs, field.Invalid(path.Child("containers").Index(i).Key(string(name)).Child("limits"), q.String(), fmt.Sprintf("must be less than or equal to pod limits of %s", limit.String())))
			}
		}
	}
	return errs
}

// oracleContainerCommon checks what every kind of container shares: its
// name, resources and resizePolicy.
func oracleContainerCommon(c *v1.Container, path *field.Path, restartNever bool) field.ErrorList {
	var errs field.ErrorList
	namePath := path.Child("name")
	if c.Name == "" {
		errs = append(errs, field.Required(namePath, ""))
	} else {
		for _, msg := range validation.IsDNS1123Label(c.Name) {
			errs = append(errs, field.Invalid(namePath, c.Name, msg))
		}
	}
	errs = append(errs, oracleResourceRequirements(&c.Resources, path.Child("resources"), true)...)
	errs = append(errs, oracleResizePolicy(c.ResizePolicy, path.Child("resizePolicy"), restartNever)...)
	return errs
}

// oracleResizePolicy checks a container's resizePolicy list, with the
// API server's field paths (the list itself, not the entry, except for
// duplicates).
func oracleResizePolicy(list []v1.ContainerResizePolicy, path *field.Path, restartNever bool) field.ErrorList {
	var errs field.ErrorList
	seen := make(map[v1.ResourceName]bool, len(list))
	for i, p := range list {
		if seen[p.ResourceName] {
			errs = append(errs, field.Duplicate(path.Index(i), p.ResourceName))
		}
		seen[p.ResourceName] = true
		switch p.ResourceName {
		case v1.ResourceCPU, v1.ResourceMemory:
		case "":
			errs = append(errs, field.Required(path, ""))
		default:
			errs = append(errs, field.NotSupported(path, p.ResourceName, []string{string(v1.ResourceCPU), string(v1.ResourceMemory)}))
		}
		switch p.RestartPolicy {
		case v1.NotRequired, v1.RestartContainer:
		case "":
			errs = append(errs, field.Required(path, ""))
		default:
			errs = append(errs, field.NotSupported(path, p.RestartPolicy, []string{string(v1.NotRequired), string(v1.RestartContainer)}))
		}
		if restartNever && p.RestartPolicy != v1.NotRequired {
			errs = append(errs, field.Invalid(path, p.RestartPolicy, msgResizePolicyNever))
		}
	}
	return errs
}

// oracleResourceRequirements checks requests and limits. For a container
// (container true) resource names are checked too; for pod-level resources
// they are not.
func oracleResourceRequirements(r *v1.ResourceRequirements, path *field.Path, container bool) field.ErrorList {
	var errs field.ErrorList
	limPath, reqPath := path.Child("limits"), path.Child("requests")
	for _, name := range slices.Sorted(maps.Keys(r.Limits)) {
		q := r.Limits[name]
		p := limPath.Key(string(name))
		if container {
			errs = append(errs, oracleResourceName(name, p)...)
		} else {
			errs = append(errs, oraclePodResourceName(name, p)...)
		}
		errs = append(errs, oracleQuantityValue(name, q, p)...)
	}
	for _, name := range slices.Sorted(maps.Keys(r.Requests)) {
		q := r.Requests[name]
		p := reqPath.Key(string(name))
		if container {
			errs = append(errs, oracleResourceName(name, p)...)
		} else {
			errs = append(errs, oraclePodResourceName(name, p)...)
		}
		errs = append(errs, oracleQuantityValue(name, q, p)...)
		limit, ok := r.Limits[name]
		switch {
		case ok && q.Cmp(limit) != 0 && !overcommitAllowed(name):
			errs = append(errs, field.Invalid(reqPath, q.String(), fmt.Sprintf("must be equal to %s limit of %s", name, limit.String())))
		case ok && q.Cmp(limit) > 0:
			errs = append(errs, field.Invalid(reqPath, q.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
		case !ok && !overcommitAllowed(name):
			errs = append(errs, field.Required(limPath, msgLimitRequired))
		}
	}
	return errs
}

// oraclePodResourceName is validatePodResourceName
// (pkg/apis/core/validation/validation.go) less its standard-name check.
func oraclePodResourceName(name v1.ResourceName, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(name)) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	if len(errs) > 0 {
		return errs
	}
	if !resourcehelper.IsSupportedPodLevelResource(name) {
		return field.ErrorList{field.NotSupported(path, name, sets.List(resourcehelper.SupportedPodLevelResources()))}
	}
	return nil
}

// oracleResourceName checks that a container resource is a
// standard one (cpu, memory, ephemeral-storage, hugepages-*) or a
// well-formed extended resource.
func oracleResourceName(name v1.ResourceName, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(name)) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	if !strings.Contains(string(name), "/") {
		switch {
		case name == v1.ResourceCPU, name == v1.ResourceMemory, name == v1.ResourceEphemeralStorage, isHugePages(name):
		default:
			errs = append(errs, field.Invalid(path, name, msgNotStandardResource))
		}
	} else if !isNativeResource(name) && strings.HasPrefix(string(name), v1.DefaultResourceRequestsPrefix) {
		errs = append(errs, field.Invalid(path, name, msgNotExtendedResource))
	}
	return errs
}

// oracleQuantityValue checks that a quantity is not negative, and whole
// for extended resources (which count devices).
func oracleQuantityValue(name v1.ResourceName, q resource.Quantity, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if q.Sign() < 0 {
		errs = append(errs, field.Invalid(path, q.String(), msgNegativeQuantity))
	}
	if !isNativeResource(name) && q.MilliValue()%1000 != 0 {
		errs = append(errs, field.Invalid(path, q.String(), msgNotInteger))
	}
	return errs
}

package apiserver

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/resizelet/resizelet/qos"
	"github.com/resizelet/resizelet/resize/profile"
)

// ValidatePod is the part of the API server's pod validation this library
// needs, with its messages and field paths: metadata.name set; containers
// present, named (DNS-1123 labels) and unique across regular, init and
// ephemeral containers; resources well formed (known names, non-negative,
// integer extended resources, requests at most limits, or equal where
// overcommit is not allowed); resizePolicy valid (cpu or memory, no
// duplicates, NotRequired or RestartContainer, NotRequired only when the
// pod's restartPolicy is Never); init containers may set resizePolicy only
// while InPlacePodVerticalScaling is on (the API server's
// AllowSidecarResizePolicy, which despite its name admits any init
// container); ephemeral containers may set neither resources nor
// resizePolicy. Resource names are checked in sorted order, for a stable
// order of errors (the API server walks maps at random).
//
// Amounts beyond resizelet's bounds (ErrAmountTooLarge) are refused alone,
// before anything reads them: converted to int64 they are other numbers,
// and compared they can cost minutes.
func ValidatePod(pod *v1.Pod, opts ResizeOptions) field.ErrorList {
	if pod == nil {
		return field.ErrorList{nilPod("pod")}
	}
	if errs := ValidateAmounts(pod); len(errs) > 0 {
		return errs
	}
	return validatePod(pod, opts)
}

// validatePod is ValidatePod for a pod within the bounds.
func validatePod(pod *v1.Pod, opts ResizeOptions) field.ErrorList {
	var errs field.ErrorList
	if pod.Name == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "name"), "name or generateName is required"))
	}
	never := pod.Spec.RestartPolicy == v1.RestartPolicyNever

	// names are the names taken so far, as the API server's set (an init
	// container without a name takes none), on the stack.
	var buf [16]string
	names := buf[:0]
	// common checks what every kind of container shares: its name (unique
	// among all), resources and resizePolicy.
	common := func(c *v1.Container, list string, i int) {
		if c.Name == "" {
			errs = append(errs, field.Required(containerPath(list, i).Child("name"), ""))
		} else if !isDNS1123Label(c.Name) {
			for _, msg := range validation.IsDNS1123Label(c.Name) {
				errs = append(errs, field.Invalid(containerPath(list, i).Child("name"), c.Name, msg))
			}
		}
		// An image is required (validateContainerCommon); resizelet's
		// CreatePod takes a pod without one, so only a container a resize
		// adds is held to it.
		if c.Image == "" && opts.stored != nil && !slices.ContainsFunc(podContainers(opts.stored, list), func(o v1.Container) bool { return o.Name == c.Name }) {
			errs = append(errs, field.Required(containerPath(list, i).Child("image"), ""))
		}
		errs = append(errs, validateResourceRequirements(&c.Resources, list, i, true)...)
		errs = append(errs, validateResizePolicy(c.ResizePolicy, list, i, never)...)
		if slices.Contains(names, c.Name) {
			errs = append(errs, field.Duplicate(containerPath(list, i).Child("name"), c.Name))
		} else if c.Name != "" || list != "initContainers" {
			names = append(names, c.Name)
		}
	}

	if len(pod.Spec.Containers) == 0 {
		errs = append(errs, field.Required(field.NewPath("spec", "containers"), ""))
	}
	for i := range pod.Spec.Containers {
		common(&pod.Spec.Containers[i], "containers", i)
	}

	gateOn := opts.profile().Gate(profile.GateInPlacePodVerticalScaling)
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		common(c, "initContainers", i)
		if !gateOn && len(c.ResizePolicy) > 0 {
			errs = append(errs, field.Invalid(containerPath("initContainers", i).Child("resizePolicy"), c.ResizePolicy, msgInitResizePolicy))
		}
		if opts.profile().InitRestartContainerPolicyForbidden() && !opts.allowInitRestartContainer && !qos.IsSidecar(c) {
			for j, rp := range c.ResizePolicy {
				if rp.RestartPolicy == v1.RestartContainer {
					errs = append(errs, field.Invalid(containerPath("initContainers", i).Child("resizePolicy").Index(j).Child("restartPolicy"), rp.RestartPolicy, msgInitRestartContainer))
				}
			}
		}
	}

	for i := range pod.Spec.EphemeralContainers {
		c := (*v1.Container)(&pod.Spec.EphemeralContainers[i].EphemeralContainerCommon)
		common(c, "ephemeralContainers", i)
		if r := c.Resources; r.Limits != nil || r.Requests != nil || r.Claims != nil {
			errs = append(errs, field.Forbidden(containerPath("ephemeralContainers", i).Child("resources"), msgEphemeralField))
		}
		if c.ResizePolicy != nil {
			errs = append(errs, field.Forbidden(containerPath("ephemeralContainers", i).Child("resizePolicy"), msgEphemeralField))
		}
	}

	if pod.Spec.Resources != nil {
		errs = append(errs, validateResourceRequirements(pod.Spec.Resources, "", 0, false)...)
		errs = append(errs, validatePodResourceConsistency(pod)...)
	}
	return errs
}

// validatePodResourceConsistency is the API server's (pkg/apis/core/
// validation): each pod-level request at least the containers' aggregate,
// each container's limit at most the pod-level one; in name order.
func validatePodResourceConsistency(pod *v1.Pod) field.ErrorList {
	var errs field.ErrorList
	r, path := pod.Spec.Resources, field.NewPath("spec", "resources")
	aggregate := resourcehelper.AggregateContainerRequests(pod, resourcehelper.PodResourcesOptions{})
	for _, e := range sortedEntries(aggregate, nil) {
		if req, ok := r.Requests[e.name]; ok && e.q.Cmp(req) > 0 {
			errs = append(errs, field.Invalid(path.Child("requests").Key(string(e.name)), req.String(), "must be greater than or equal to aggregate container requests of "+e.q.String()))
		}
	}
	for i := range pod.Spec.Containers {
		for _, e := range sortedEntries(pod.Spec.Containers[i].Resources.Limits, nil) {
			if limit, ok := r.Limits[e.name]; ok && e.q.Cmp(limit) > 0 {
				errs = append(errs, field.Invalid(path.Child("containers").Index(i).Key(string(e.name)).Child("limits"), e.q.String(), "must be less than or equal to pod limits of "+limit.String()))
			}
		}
	}
	return errs
}

// podContainers is the pod's list "containers" or "initContainers".
func podContainers(pod *v1.Pod, list string) []v1.Container {
	if list == "initContainers" {
		return pod.Spec.InitContainers
	}
	return pod.Spec.Containers
}

// initRestartContainer is hasRestartContainerForNonSidecarInitContainer
// (pkg/api/pod/util.go): whether a non-sidecar init container of the pod
// has a RestartContainer resize policy.
func initRestartContainer(pod *v1.Pod) bool {
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if qos.IsSidecar(c) {
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

// containerPath is spec.<list>[index], built only for errors.
func containerPath(list string, index int) *field.Path {
	return field.NewPath("spec", list).Index(index)
}

// isDNS1123Label reports what validation.IsDNS1123Label finds no fault
// with (1 to 63 lower-case letters, digits and '-', starting and ending
// with a letter or digit), without its regular expression.
func isDNS1123Label(s string) bool {
	if len(s) == 0 || len(s) > validation.DNS1123LabelMaxLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-' && i > 0 && i < len(s)-1:
		default:
			return false
		}
	}
	return true
}

// validateResizePolicy checks a container's resizePolicy list, with the
// API server's field paths (the list, not the entry, but for duplicates).
func validateResizePolicy(list []v1.ContainerResizePolicy, ctrList string, index int, restartNever bool) field.ErrorList {
	var errs field.ErrorList
	path := func() *field.Path { return containerPath(ctrList, index).Child("resizePolicy") }
	for i, p := range list {
		for _, q := range list[:i] {
			if q.ResourceName == p.ResourceName {
				errs = append(errs, field.Duplicate(path().Index(i), p.ResourceName))
				break
			}
		}
		switch p.ResourceName {
		case v1.ResourceCPU, v1.ResourceMemory:
		case "":
			errs = append(errs, field.Required(path(), ""))
		default:
			errs = append(errs, field.NotSupported(path(), p.ResourceName, []string{string(v1.ResourceCPU), string(v1.ResourceMemory)}))
		}
		switch p.RestartPolicy {
		case v1.NotRequired, v1.RestartContainer:
		case "":
			errs = append(errs, field.Required(path(), ""))
		default:
			errs = append(errs, field.NotSupported(path(), p.RestartPolicy, []string{string(v1.NotRequired), string(v1.RestartContainer)}))
		}
		if restartNever && p.RestartPolicy != v1.NotRequired {
			errs = append(errs, field.Invalid(path(), p.RestartPolicy, msgResizePolicyNever))
		}
	}
	return errs
}

// resourceEntry is one resource of a list, with its amount.
type resourceEntry struct {
	name v1.ResourceName
	q    resource.Quantity
}

// sortedEntries returns the list's resources in name order, in buf.
func sortedEntries(list v1.ResourceList, buf []resourceEntry) []resourceEntry {
	out := buf[:0]
	for name, q := range resources(list) {
		out = append(out, resourceEntry{name, q})
	}
	// A list of nothing but cpu and memory comes sorted.
	if len(out) > 1 && (len(out) > 2 || out[0].name > out[1].name) {
		slices.SortFunc(out, func(a, b resourceEntry) int { return strings.Compare(string(a.name), string(b.name)) })
	}
	return out
}

// validateResourceRequirements checks requests and limits, and their
// names, of the container at spec.<list>[index] (container true) or of
// the pod level (list empty).
func validateResourceRequirements(r *v1.ResourceRequirements, list string, index int, container bool) field.ErrorList {
	var errs field.ErrorList
	path := func() *field.Path {
		if list == "" {
			return field.NewPath("spec", "resources")
		}
		return containerPath(list, index).Child("resources")
	}
	// Room as in ValidateAmounts.
	var buf [4]resourceEntry
	for _, kind := range [2]string{"limits", "requests"} {
		rl := r.Limits
		if kind == "requests" {
			rl = r.Requests
		}
		for _, e := range sortedEntries(rl, buf[:]) {
			name, q := e.name, e.q
			p := func() *field.Path { return path().Child(kind).Key(string(name)) }
			errs = append(errs, validateResourceName(name, p, container)...)
			errs = append(errs, validateQuantityValue(name, &q, p)...)
			if kind == "limits" {
				continue
			}
			limit, ok := r.Limits[name]
			switch {
			case ok && q.Cmp(limit) != 0 && !overcommitAllowed(name):
				errs = append(errs, field.Invalid(path().Child("requests"), q.String(), fmt.Sprintf("must be equal to %s limit of %s", name, limit.String())))
			case ok && q.Cmp(limit) > 0:
				errs = append(errs, field.Invalid(path().Child("requests"), q.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
			case !ok && !overcommitAllowed(name):
				errs = append(errs, field.Required(path().Child("limits"), msgLimitRequired))
			}
		}
	}
	return errs
}

// validateResourceName checks a resource name: of a container, a
// standard one (cpu, memory, ephemeral-storage, hugepages-*) or a
// well-formed extended resource; of the pod level, a qualified name of a
// resource pod-level resources support (validatePodResourceName, less its
// standard-name check).
func validateResourceName(name v1.ResourceName, path func() *field.Path, container bool) field.ErrorList {
	if container && (name == v1.ResourceCPU || name == v1.ResourceMemory || name == v1.ResourceEphemeralStorage) {
		// Standard, and qualified names.
		return nil
	}
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(name)) {
		errs = append(errs, field.Invalid(path(), name, msg))
	}
	switch {
	case !container:
		if len(errs) == 0 && !resourcehelper.IsSupportedPodLevelResource(name) {
			errs = append(errs, field.NotSupported(path(), name, sets.List(resourcehelper.SupportedPodLevelResources())))
		}
	case !strings.Contains(string(name), "/"):
		if !isHugePages(name) {
			errs = append(errs, field.Invalid(path(), name, msgNotStandardResource))
		}
	case !isNativeResource(name) && strings.HasPrefix(string(name), v1.DefaultResourceRequestsPrefix):
		errs = append(errs, field.Invalid(path(), name, msgNotExtendedResource))
	}
	return errs
}

// validateQuantityValue checks that a quantity is not negative, and whole
// for extended resources.
func validateQuantityValue(name v1.ResourceName, q *resource.Quantity, path func() *field.Path) field.ErrorList {
	var errs field.ErrorList
	if q.Sign() < 0 {
		errs = append(errs, field.Invalid(path(), q.String(), msgNegativeQuantity))
	}
	if !isNativeResource(name) && q.MilliValue()%1000 != 0 {
		errs = append(errs, field.Invalid(path(), q.String(), msgNotInteger))
	}
	return errs
}

// nilPod is a validation's error for a nil pod: Required, on the
// argument's name, since no field of a missing pod can be named.
func nilPod(arg string) *field.Error {
	return field.Required(field.NewPath(arg), "a nil *v1.Pod was given")
}

// ErrUIDTaken is wrapped by CreatePod's error for a UID another pod has.
var ErrUIDTaken = errors.New("UID already taken by another pod")

// msgUID is the rule for a UID the caller sets.
const msgUID = "must be 1 to 63 lower-case letters, digits and '-', starting and ending with a letter or digit (as the UUIDs the API server assigns are)"

// ValidatePodMeta is the API server's validation of a new pod's metadata,
// plus resizelet's rule for a UID the caller set.
//
// The metadata is validated by apimachinery's ValidateObjectMeta
// (k8s.io/apimachinery pkg/api/validation/objectmeta.go), pod names as DNS
// subdomains (pkg/apis/core/validation, ValidatePodName is
// NameIsDNSSubdomain) and namespaces as DNS labels (ValidateNamespaceName
// is NameIsDNSLabel), so no two pods' namespace and name read alike.
//
// The API server assigns every new object its UID and ignores one the
// client sends (k8s.io/apiserver pkg/registry/rest, BeforeCreate,
// FillObjectMetaSystemFields, uuid.NewUUID). resizelet keeps a caller's,
// because an embedder that mirrors a real cluster (or a kubelet's static
// pod, whose manifest UID the kubelet keeps: pkg/kubelet/config/common.go,
// applyDefaults) must be able to say which pod it means. The UID names the
// pod cgroup and keys both checkpoints, so it must be a DNS label, as an
// API server's UUID always is; CreatePod checks that no two pods share it.
func ValidatePodMeta(pod *v1.Pod) field.ErrorList {
	if pod == nil {
		return field.ErrorList{nilPod("pod")}
	}
	errs := apimachineryvalidation.ValidateObjectMeta(&pod.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	// An empty UID is assigned.
	if uid := string(pod.UID); uid != "" && !isDNS1123Label(uid) {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "uid"), uid, msgUID))
	}
	return errs
}

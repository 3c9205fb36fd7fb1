package apiserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/resizelet/resizelet/resize/profile"
)

// ResizeOptions is what the API server's behaviour depends on: the
// Kubernetes version and its feature gates.
type ResizeOptions struct {
	// Profile is the Kubernetes version ("1.33" to "1.37"); empty or
	// unknown means profile.Default.
	Profile profile.Version
	// Gate reports whether a feature gate (names in package profile) is
	// on. nil means the version's defaults. Gates locked on in the version
	// stay on whatever Gate says.
	Gate func(name string) bool

	// resolved, when set (a Cluster's options), is the profile the
	// options stand for, with its answers worked out once.
	resolved *profile.Profile
	// allowInitRestartContainer lets ValidatePod accept a RestartContainer
	// policy on a non-sidecar init container, as the 1.36 API server does
	// when the old pod already had one (ValidateResize sets it).
	allowInitRestartContainer bool
}

// profile is the version's behaviour with the options' gates.
func (o ResizeOptions) profile() profile.Profile {
	if o.resolved != nil {
		return *o.resolved
	}
	p := profile.New(o.Profile, nil)
	if o.Gate != nil {
		p = p.WithGateFunc(o.Gate)
	}
	return p
}

// podKind is the group and kind InvalidError reports, as the API server
// names core pods.
var podKind = schema.GroupKind{Kind: "Pod"}

// InvalidError is what the API server returns for an invalid object: the
// pod's name and the validation errors. Its text is the one kubectl prints,
// `Pod "resize-demo" is invalid: spec: ...` (several errors in brackets).
// It wraps the apimachinery StatusError (reason Invalid, code 422), so
// apierrors.IsInvalid and errors.As with *apierrors.StatusError work on it.
type InvalidError struct {
	Name string
	Errs field.ErrorList
}

// Error returns the StatusError's message.
func (e *InvalidError) Error() string { return e.status().Error() }

// Unwrap returns the StatusError the API server would send.
func (e *InvalidError) Unwrap() error { return e.status() }

// status builds the StatusError from the fields rather than storing it, so
// an InvalidError built by hand is as good as one from ApplyResize.
func (e *InvalidError) status() *apierrors.StatusError {
	return apierrors.NewInvalid(podKind, e.Name, e.Errs)
}

// PatchError is returned when the patch itself is malformed: not JSON or
// YAML, not an object, a list where a map belongs (or the reverse), a value
// of the wrong type, or a bad quantity. Err carries the decoder's own words
// (`json: cannot unmarshal ...`, `quantities must match the regular
// expression ...`), as the API server answers with them; Path, when known,
// says where in the patch the problem is.
type PatchError struct {
	// Path is where the bad value is, for example
	// "spec.containers[0].resources.limits[cpu]" (list indexes count in the
	// patch); empty when the patch as a whole is wrong or the place is
	// already in Err's text.
	Path string
	Err  error
}

// Error names the place, when known, and the cause.
func (e *PatchError) Error() string {
	if e.Path == "" {
		return "invalid resize patch: " + e.Err.Error()
	}
	return "invalid resize patch at " + e.Path + ": " + e.Err.Error()
}

// Unwrap returns the decoder's error.
func (e *PatchError) Unwrap() error { return e.Err }

// errEmptyPatch is the cause of a PatchError for a patch with no content.
var errEmptyPatch = errors.New("empty patch")

// ApplyResize is the pod resize subresource. It applies patch (a strategic
// merge patch for v1.Pod, as JSON or YAML) to old, keeps from the result only
// what /resize may change, applies v1 defaulting, validates the result
// against old (ValidateResize) and bumps metadata.generation when the spec
// changed. It returns the new pod, or a *PatchError for a malformed patch, or
// an *InvalidError when validation fails; old is never modified.
//
// What /resize keeps is what the API server's resize strategy keeps
// (pkg/registry/core/pod/strategy.go, dropNonResizeUpdates): the resources
// and resizePolicy of each container and init container, and spec.resources
// when InPlacePodLevelResourcesVerticalScaling is on. Every other change in
// the patch (metadata, status, other spec fields, ephemeral containers) is
// dropped silently, as the strategy does. A patch that adds, removes,
// renames or reorders containers is kept as is instead, so that validation
// reports it. A changed resizePolicy is kept by the strategy but refused by
// validation, which undoes only cpu and memory changes before comparing
// containers ("only cpu and memory resources are mutable").
//
// The patched object is decoded strictly: a field v1.Pod does not have
// ("resource" for "resources") is a PatchError, as under kubectl's strict
// field validation, rather than a change silently dropped.
//
// old is defaulted (a copy of it) before use: the API server only ever
// stores defaulted pods, so an undefaulted old would otherwise look changed
// by any patch.
//
// A patch that only sets requests and limits of containers the pod has
// (the common case, readResizePatch) is applied without the JSON round
// trip, with the same result. The pod returned then shares with old the
// parts the resize did not change, as the API server's objects are shared:
// read it, or DeepCopy it before changing anything in it.
func ApplyResize(old *v1.Pod, patch []byte, opts ResizeOptions) (*v1.Pod, error) {
	if old == nil {
		return nil, errors.New("apply resize: nil pod")
	}
	if e, ok := readResizePatch(patch); ok && inPlace(old.Spec.Containers, e.containers) && inPlace(old.Spec.InitContainers, e.initContainers) {
		return resizeInPlace(old, &e, opts)
	}
	return applyStrategicMerge(old, patch, opts)
}

// applyStrategicMerge is ApplyResize the general way, as the API server
// goes: the old pod and the patch as JSON maps, the strategic merge, the
// strict decoding of the result, then finishResize.
func applyStrategicMerge(old *v1.Pod, patch []byte, opts ResizeOptions) (*v1.Pod, error) {
	patchMap, err := decodePatch(patch)
	if err != nil {
		return nil, err
	}
	oldPod := old.DeepCopy()
	DefaultPod(oldPod)

	patched, err := mergePatch(oldPod, patchMap)
	if err != nil {
		return nil, err
	}
	return finishResize(oldPod, patched, opts)
}

// finishResize is what the resize subresource does with the patched pod:
// v1 defaulting, the resize strategy, the generation, validation against
// the (defaulted) old pod.
func finishResize(oldPod, patched *v1.Pod, opts ResizeOptions) (*v1.Pod, error) {
	DefaultPod(patched)

	newPod := resizeStrategy(patched, oldPod, opts)
	if opts.profile().DefaultsPodLevelResources() {
		// The 1.37 resize strategy's PrepareForUpdate: a patch that drops
		// spec.resources keeps the old ones, and pod-level resources are
		// defaulted again.
		if newPod.Spec.Resources == nil && oldPod.Spec.Resources != nil {
			newPod.Spec.Resources = oldPod.Spec.Resources
		}
		if newPod.Spec.Resources != nil {
			newPod.Spec.Resources = newPod.Spec.Resources.DeepCopy()
			defaultPodLevelResources(newPod)
		}
	}
	if !apiequality.Semantic.DeepEqual(newPod.Spec, oldPod.Spec) {
		newPod.Generation = oldPod.Generation + 1
	}
	if errs := ValidateResize(newPod, oldPod, opts); len(errs) > 0 {
		return nil, &InvalidError{Name: oldPod.Name, Errs: errs}
	}
	return newPod, nil
}

// decodePatch reads a patch given as JSON or YAML into a JSON object. JSON
// is taken as is; anything that is not valid JSON is read as YAML (which
// also covers YAML flow maps such as `{spec: {...}}`).
func decodePatch(patch []byte) (map[string]interface{}, error) {
	trimmed := bytes.TrimSpace(patch)
	if len(trimmed) == 0 {
		return nil, &PatchError{Err: errEmptyPatch}
	}
	data := trimmed
	if !json.Valid(trimmed) {
		converted, err := yaml.YAMLToJSON(trimmed)
		if err != nil {
			if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
				// It was meant as JSON: the JSON syntax error says more
				// than the YAML one.
				var v interface{}
				jsonErr := json.Unmarshal(trimmed, &v)
				return nil, &PatchError{Err: jsonErr}
			}
			return nil, &PatchError{Err: err}
		}
		data = converted
	}
	// Decoding into a map gives the API server's own message for a patch
	// that is not an object ("json: cannot unmarshal array into Go value of
	// type map[string]interface {}"). A null patch decodes to a nil map and,
	// as on the API server, changes nothing.
	var m map[string]interface{}
	if err := utiljson.Unmarshal(data, &m); err != nil {
		return nil, &PatchError{Err: err}
	}
	return m, nil
}

// mergePatch applies the strategic merge patch to the pod, as the API
// server does: both as JSON maps, with v1.Pod's patch strategies and merge
// keys, then decoded (case-sensitively, unknown fields refused) back into a
// v1.Pod.
func mergePatch(pod *v1.Pod, patch map[string]interface{}) (*v1.Pod, error) {
	data, err := json.Marshal(pod)
	if err != nil {
		return nil, fmt.Errorf("apply resize: encode pod %s: %w", pod.Name, err)
	}
	var original map[string]interface{}
	if err := utiljson.Unmarshal(data, &original); err != nil {
		return nil, fmt.Errorf("apply resize: decode pod %s: %w", pod.Name, err)
	}
	merged, err := strategicMerge(original, patch)
	if err != nil {
		return nil, &PatchError{Err: err}
	}
	out, err := json.Marshal(merged)
	if err != nil {
		return nil, &PatchError{Err: err}
	}
	result := &v1.Pod{}
	strictErrs, err := kjson.UnmarshalStrict(out, result, kjson.DisallowUnknownFields)
	if err != nil {
		// A quantity's own error does not say where it is; find it in the
		// patch so the caller learns which value was wrong.
		if path, qerr := findBadQuantity(patch); qerr != nil {
			return nil, &PatchError{Path: path, Err: qerr}
		}
		return nil, &PatchError{Err: err}
	}
	if len(strictErrs) > 0 {
		// A field the pod does not have is most likely a typo ("limit" for
		// "limits"); the API server rejects it under kubectl's strict field
		// validation rather than ignore it.
		msgs := make([]string, len(strictErrs))
		for i, e := range strictErrs {
			msgs[i] = e.Error()
		}
		return nil, &PatchError{Err: fmt.Errorf("strict decoding error: %s", strings.Join(msgs, ", "))}
	}
	return result, nil
}

// strategicMerge applies the patch with v1.Pod's merge strategies. The
// merge code panics on some malformed patches (a merge key whose value is
// an object, found by FuzzApplyResize); the API server turns such a panic
// into an error response, and so does this.
func strategicMerge(original, patch map[string]interface{}) (merged map[string]interface{}, err error) {
	defer func() {
		if r := recover(); r != nil {
			merged, err = nil, fmt.Errorf("strategic merge failed: %v", r)
		}
	}()
	return strategicpatch.StrategicMergeMapPatch(original, patch, &v1.Pod{})
}

// quantityMaps are the object keys whose values are resource lists, so their
// string values must parse as quantities.
var quantityMaps = map[string]bool{"requests": true, "limits": true, "overhead": true}

// findBadQuantity walks a patch for the first value in a resource list that
// is not a valid quantity, in a stable order (keys sorted), and returns its
// path in the field-path notation of validation errors. List indexes in the
// path are positions in the patch.
func findBadQuantity(patch map[string]interface{}) (string, error) {
	var walk func(v interface{}, path *field.Path, inList bool) (string, error)
	walk = func(v interface{}, path *field.Path, inList bool) (string, error) {
		switch t := v.(type) {
		case map[string]interface{}:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if inList {
					if err := checkQuantity(t[k]); err != nil {
						return path.Key(k).String(), err
					}
					continue
				}
				if p, err := walk(t[k], path.Child(k), quantityMaps[k]); err != nil {
					return p, err
				}
			}
		case []interface{}:
			for i := range t {
				if p, err := walk(t[i], path.Index(i), false); err != nil {
					return p, err
				}
			}
		}
		return "", nil
	}
	keys := make([]string, 0, len(patch))
	for k := range patch {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if p, err := walk(patch[k], field.NewPath(k), quantityMaps[k]); err != nil {
			return p, err
		}
	}
	return "", nil
}

// checkQuantity decodes a patch value as a quantity the way the pod's
// decoder does, and returns the decoder's error.
func checkQuantity(v interface{}) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var q resource.Quantity
	return q.UnmarshalJSON(data)
}

// resizeStrategy keeps from the patched pod only what the resize
// subresource may change, as the API server's resize strategy does: the
// result is old with each container's and init container's resources and
// resizePolicy taken from patched (and spec.resources when pod-level resize
// is on). When the patch added, removed, renamed or reordered containers the
// patched pod is returned whole, for validation to reject.
func resizeStrategy(patched, old *v1.Pod, opts ResizeOptions) *v1.Pod {
	containers, ok := mergeResizeFields(patched.Spec.Containers, old.Spec.Containers)
	if !ok {
		return patched
	}
	initContainers, ok := mergeResizeFields(patched.Spec.InitContainers, old.Spec.InitContainers)
	if !ok {
		return patched
	}
	out := old.DeepCopy()
	out.Spec.Containers = containers
	out.Spec.InitContainers = initContainers
	if opts.profile().PodLevelResize() {
		out.Spec.Resources = patched.Spec.Resources
	}
	return out
}

// mergeResizeFields returns a copy of old with resources and resizePolicy
// taken from the container at the same index in patched, or false when the
// lists do not hold the same names in the same order.
func mergeResizeFields(patched, old []v1.Container) ([]v1.Container, bool) {
	if len(patched) != len(old) {
		return nil, false
	}
	if len(old) == 0 {
		return nil, true
	}
	out := make([]v1.Container, len(old))
	for i := range old {
		if patched[i].Name != old[i].Name {
			return nil, false
		}
		out[i] = *old[i].DeepCopy()
		out[i].Resources = patched[i].Resources
		out[i].ResizePolicy = patched[i].ResizePolicy
	}
	return out, true
}

package apiserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/mergepatch"
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

	// resolved, when set (a Cluster's options), is the profile worked out
	// once.
	resolved *profile.Profile
	// allowInitRestartContainer lets ValidatePod accept a RestartContainer
	// policy on a non-sidecar init container, as the 1.36 API server does
	// when the old pod already had one (ValidateResize sets it).
	allowInitRestartContainer bool
	// stored, when set (ValidateResize sets it), is the pod a resize
	// changes: ValidatePod requires an image of the containers it lacks.
	stored *v1.Pod
	// resourceVersion, when not 0 (a Cluster's resize), is the stored
	// pod's, which a Cluster's stored pods do not carry: a patch may only
	// repeat it.
	resourceVersion uint64
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

// InvalidError is the API server's answer for an invalid pod, with the
// text kubectl prints, `Pod "resize-demo" is invalid: spec: ...`. It wraps
// the apimachinery StatusError (reason Invalid, code 422), so
// apierrors.IsInvalid and errors.As work on it.
type InvalidError struct {
	Name string
	Errs field.ErrorList
}

// Error returns the StatusError's message.
func (e *InvalidError) Error() string {
	if e == nil {
		return "<nil>"
	}
	return e.status().Error()
}

// Unwrap returns the StatusError the API server would send.
func (e *InvalidError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.status()
}

// Is reports ErrAmountTooLarge when one of the errors is an amount beyond
// resizelet's bounds, a refusal a real API server would not make.
func (e *InvalidError) Is(target error) bool {
	if e == nil {
		return false
	}
	return target == ErrAmountTooLarge && slices.ContainsFunc(e.Errs, isAmountBound)
}

// status builds the StatusError from the fields, so that an InvalidError
// built by hand is as good as one from ApplyResize.
func (e *InvalidError) status() *apierrors.StatusError {
	return apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, e.Name, e.Errs)
}

// PatchError is returned when the patch itself is malformed: not JSON or
// YAML, not an object, a list where a map belongs (or the reverse), a value
// of the wrong type, a bad quantity, or (a JSON patch) an operation that
// does not apply. Err carries the decoder's own words (`json: cannot
// unmarshal ...`), as the API server answers with them.
//
// It also wraps the *apierrors.StatusError the API server answers with
// (errors.As finds it): 400 for a patch it cannot read, 422 for one it
// cannot apply or whose result is not a pod (an invalid "patch" field, or
// for a failed JSON patch operation a bare 422 "the server rejected our
// request due to an error in our request"), 413 for one too large, and
// for a patched pod refused before the strategy runs, 400 (another name or
// namespace) or 409 Conflict (a stale metadata.resourceVersion, which also
// matches ErrConflict). Error returns resizelet's own, more precise text.
type PatchError struct {
	// Path is where the bad value is: in the patch
	// ("spec.containers[0].resources.limits[cpu]", list indexes counting
	// in the patch; for a JSON patch the operation "[1]" or its value
	// "[1].value"), or a field of the patched pod ("metadata.name");
	// empty when the patch as a whole is wrong or Err already says where.
	Path string
	Err  error

	// status is the API server's answer; nil stands for 400 Bad Request
	// with Err's text.
	status *apierrors.StatusError
}

// Error names the place, when known, and the cause.
func (e *PatchError) Error() string {
	if e == nil {
		return "<nil>"
	}
	if e.Path == "" {
		return "invalid resize patch: " + e.cause()
	}
	return "invalid resize patch at " + e.Path + ": " + e.cause()
}

func (e *PatchError) cause() string {
	if e.Err == nil {
		return "malformed patch"
	}
	return e.Err.Error()
}

// Unwrap returns the decoder's error and the API server's StatusError.
func (e *PatchError) Unwrap() []error {
	if e == nil {
		return nil
	}
	if e.Err == nil {
		return []error{e.apiStatus()}
	}
	return []error{e.Err, e.apiStatus()}
}

// apiStatus is the StatusError the API server answers the patch with.
func (e *PatchError) apiStatus() *apierrors.StatusError {
	if e.status != nil {
		return e.status
	}
	return apierrors.NewBadRequest(e.cause())
}

// errEmptyPatch is the cause of a PatchError for a patch with no content.
var errEmptyPatch = errors.New("empty patch")

// ApplyResize is the pod resize subresource. It applies patch (a strategic
// merge patch for v1.Pod, as JSON or YAML) to old (defaulted, as the API
// server stores only defaulted pods), keeps only what /resize may change,
// applies v1 defaulting, validates the result against old (ValidateResize)
// and bumps metadata.generation when the spec changed. It returns the new
// pod, a *PatchError or an *InvalidError; old is never modified. The pod
// returned shares with old the parts the resize did not change, as the API
// server's objects are shared: read it, or DeepCopy it before changing it.
//
// What /resize keeps is what the API server's resize strategy keeps
// (pkg/registry/core/pod/strategy.go, dropNonResizeUpdates): the resources
// and resizePolicy of each container and init container, and spec.resources
// when InPlacePodLevelResourcesVerticalScaling is on. Every other change is
// dropped silently, except what the API server checks before the strategy
// runs (checkPatchedMeta): another name or namespace (400), a stale
// metadata.resourceVersion (409, ErrConflict). A patch that adds, removes,
// renames or reorders containers is kept whole, for validation to refuse.
//
// The patch and the patched object are decoded strictly, as under
// fieldValidation=Strict (what kubectl apply, create, replace and edit
// send): an unknown field or a key given twice is a 422 PatchError rather
// than a change silently dropped. A YAML patch keeps the last of a key's
// values, as kubectl's conversion does. A patch larger than
// MaxRequestBodyBytes is refused (413).
func ApplyResize(old *v1.Pod, patch []byte, opts ResizeOptions) (*v1.Pod, error) {
	return ApplyResizePatch(old, StrategicMergePatch, patch, opts)
}

// strategicPatched applies a strategic merge patch to the stored pod, as
// the API server's strategicPatcher does (k8s.io/apiserver
// pkg/endpoints/handlers/patch.go, strategicPatchObject and
// applyPatchToObject): the pod and the patch as JSON maps, merged with
// v1.Pod's patch strategies and merge keys, and the result decoded
// strictly back into a v1.Pod (decodePatched). Unless whole, the pod's
// metadata and status are left out when the patch does not name them
// (podPart).
func strategicPatched(stored *v1.Pod, patch []byte, whole bool) (*v1.Pod, error) {
	patchMap, dupErrs, err := decodePatch(patch)
	if err != nil {
		return nil, err
	}
	var part podPart
	if !whole {
		part = partFor(maps.Keys(patchMap))
	}
	data, err := json.Marshal(part.of(stored))
	if err != nil {
		return nil, fmt.Errorf("apply resize: encode pod %s: %w", stored.Name, err)
	}
	var original map[string]interface{}
	if err := utiljson.Unmarshal(data, &original); err != nil {
		return nil, fmt.Errorf("apply resize: decode pod %s: %w", stored.Name, err)
	}
	merged, err := strategicMerge(original, patchMap)
	if err != nil {
		return nil, err
	}
	out, err := json.Marshal(merged)
	if err != nil {
		return nil, &PatchError{Err: err, status: internalStatus(err)}
	}
	// The API server's 422 on the field "patch" has the patch as value.
	patched, err := decodePatched(out, func() string { return fmt.Sprintf("%+v", patchMap) }, dupErrs,
		func() (string, error) { return findAmount(patchMap, nil, false, checkQuantity) })
	if err != nil {
		return nil, err
	}
	part.restore(patched, stored)
	return patched, nil
}

// decodePatch reads a patch given as JSON or YAML into a JSON object.
// JSON is decoded strictly, as the API server decodes a strategic merge
// patch (patch.go, strategicPatchObject): a key given twice is returned in
// dupErrs, for strategicPatched to report once nothing else failed, the
// map holding the last value. Anything else is read as YAML and converted
// with sigs.k8s.io/yaml, which keeps the last of a key's values, as kubectl
// patch does before it sends (k8s.io/kubectl pkg/cmd/patch/patch.go): the
// API server, which takes JSON only, never sees the duplicate.
func decodePatch(patch []byte) (m map[string]interface{}, dupErrs []error, err error) {
	trimmed := bytes.TrimSpace(patch)
	if len(trimmed) == 0 {
		return nil, nil, &PatchError{Err: errEmptyPatch}
	}
	data := trimmed
	if !json.Valid(trimmed) {
		converted, err := yaml.YAMLToJSON(trimmed)
		if err != nil {
			if trimmed[0] == '{' || trimmed[0] == '[' {
				// It was meant as JSON: the JSON syntax error says more
				// than the YAML one.
				var v interface{}
				return nil, nil, &PatchError{Err: json.Unmarshal(trimmed, &v)}
			}
			return nil, nil, &PatchError{Err: err}
		}
		data = converted
	}
	// A patch that is not an object gets the API server's own message; a
	// null patch decodes to a nil map and, as there, changes nothing.
	dupErrs, err = kjson.UnmarshalStrict(data, &m)
	if err != nil {
		return nil, nil, &PatchError{Err: err}
	}
	if where, err := findAmount(m, nil, false, hugeAmount); err != nil {
		return nil, nil, &PatchError{Path: where, Err: err}
	}
	return m, dupErrs, nil
}

// strategicMerge applies the patch with v1.Pod's merge strategies, and
// answers a failure as the API server does (k8s.io/apiserver
// pkg/endpoints/handlers/patch.go, interpretStrategicMergePatchError): 400
// for a patch of the wrong form, 422 for a list of lists or retainKeys that
// do not match, a 500 otherwise. The merge code panics on some malformed
// patches (a merge key whose value is an object, found by FuzzApplyResize),
// which the API server's panic recovery answers with a 500, as this does.
func strategicMerge(original, patch map[string]interface{}) (merged map[string]interface{}, err error) {
	defer func() {
		if r := recover(); r != nil {
			cause := fmt.Errorf("strategic merge failed: %v", r)
			merged, err = nil, &PatchError{Err: cause, status: apierrors.NewInternalError(cause)}
		}
	}()
	merged, err = strategicpatch.StrategicMergeMapPatch(original, patch, &v1.Pod{})
	if err == nil {
		return merged, nil
	}
	var status *apierrors.StatusError
	switch err {
	case mergepatch.ErrBadJSONDoc, mergepatch.ErrBadPatchFormatForPrimitiveList, mergepatch.ErrBadPatchFormatForRetainKeys,
		mergepatch.ErrBadPatchFormatForSetElementOrderList, mergepatch.ErrUnsupportedStrategicMergePatchFormat:
		status = apierrors.NewBadRequest(err.Error())
	case mergepatch.ErrNoListOfLists, mergepatch.ErrPatchContentNotMatchRetainKeys:
		status = apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
	default:
		status = internalStatus(err)
	}
	return nil, &PatchError{Err: err, status: status}
}

// quantityMaps are the object keys whose values are resource lists.
var quantityMaps = map[string]bool{"requests": true, "limits": true, "overhead": true}

// findAmount walks a patch value at path (nil for the whole patch), keys
// sorted, for the first value in a resource list (v itself when inList)
// that check refuses, and returns its path (list indexes are positions in
// the patch) with check's error. Only values in resource lists are
// amounts: a container named "1e1001" is a name, as the API server reads it.
func findAmount(v interface{}, path *field.Path, inList bool, check func(interface{}) error) (string, error) {
	switch t := v.(type) {
	case map[string]interface{}:
		for _, k := range slices.Sorted(maps.Keys(t)) {
			if inList {
				if err := check(t[k]); err != nil {
					return path.Key(k).String(), err
				}
				continue
			}
			if p, err := findAmount(t[k], path.Child(k), quantityMaps[k], check); err != nil {
				return p, err
			}
		}
	case []interface{}:
		for i := range t {
			if p, err := findAmount(t[i], path.Index(i), false, check); err != nil {
				return p, err
			}
		}
	}
	return "", nil
}

// hugeAmount is resizelet's own refusal of an amount whose exponent is
// beyond MaxExponent (CheckExponent), before anything parses it. Only
// strings can hold one: a patch's numbers are decoded as int64 or float64.
func hugeAmount(v interface{}) error {
	if s, ok := v.(string); ok {
		return CheckExponent(strings.TrimSpace(s))
	}
	return nil
}

// checkQuantity returns the pod decoder's error for a patch value.
func checkQuantity(v interface{}) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var q resource.Quantity
	return q.UnmarshalJSON(data)
}

// ErrConflict is matched (errors.Is) by the API server's Conflict (409) for
// a patch whose metadata.resourceVersion is not the stored pod's (a
// PatchError on that field).
var ErrConflict = errors.New("conflict")

// ErrResourceVersionTooOld is matched by Watch's error for a
// resourceVersion whose changes since are not kept, as an API server
// answers a watch from a compacted revision with 410 Gone.
var ErrResourceVersionTooOld = errors.New("resource version too old")

// statusError is one of the cluster's errors: the *apierrors.StatusError a
// real API server answers with, so that apierrors.IsNotFound, IsConflict
// and the rest work on it as on what client-go returns, plus the
// resizelet sentinel (ErrPodNotFound, ...) it also matches.
type statusError struct {
	*apierrors.StatusError
	sentinel error
}

// Unwrap returns the StatusError and the sentinel.
func (e *statusError) Unwrap() []error {
	if e.sentinel == nil {
		return []error{e.StatusError}
	}
	return []error{e.StatusError, e.sentinel}
}

// podNotFound is the API server's 404 for a pod (k8s.io/apiserver
// pkg/storage/errors/storage.go, InterpretGetError: apierrors.NewNotFound
// with the resource and name): `pods "web" not found`.
func podNotFound(name string) error {
	return &statusError{StatusError: apierrors.NewNotFound(podsResource, name), sentinel: ErrPodNotFound}
}

// podExists is the API server's 409 for a pod created under a name taken
// (InterpretCreateError: apierrors.NewAlreadyExists): `pods "web" already
// exists`.
func podExists(name string) error {
	return &statusError{StatusError: apierrors.NewAlreadyExists(podsResource, name)}
}

// OptimisticLockErrorMsg is the cause of the API server's Conflict for a
// resourceVersion that is not the stored one (k8s.io/apiserver
// pkg/registry/generic/registry/store.go).
const OptimisticLockErrorMsg = "the object has been modified; please apply your changes to the latest version and try again"

// resourceVersionConflict is the API server's 409 for an update whose
// metadata.resourceVersion is not the stored object's (store.go, Update:
// apierrors.NewConflict with OptimisticLockErrorMsg).
func resourceVersionConflict(name string) error {
	return &statusError{StatusError: apierrors.NewConflict(podsResource, name, errors.New(OptimisticLockErrorMsg)), sentinel: ErrConflict}
}

// uidConflict is the API server's 409 for an update whose precondition
// UID is not the stored object's (k8s.io/apiserver pkg/storage/interfaces.go,
// Preconditions.Check: a storage InvalidObjError that
// pkg/storage/errors/storage.go, InterpretUpdateError, turns into a
// Conflict), its cause as StorageError.Error prints it (code 4, the etcd
// key under the default /registry prefix). It also matches ErrPodNotFound:
// the pod the caller meant is gone (another of the same name took its
// place), as the kubelet's status manager treats it.
func uidConflict(namespace, name string, want, got string) error {
	cause := fmt.Errorf("StorageError: invalid object, Code: 4, Key: /registry/pods/%s/%s, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: %v, UID in object meta: %v",
		namespace, name, want, got)
	return &statusError{StatusError: apierrors.NewConflict(podsResource, name, cause), sentinel: ErrPodNotFound}
}

// internalStatus is the 500 the API server answers with for an error that
// is not an API status (k8s.io/apiserver
// pkg/endpoints/handlers/responsewriters/status.go, ErrorToAPIStatus): the
// error's text and no reason.
func internalStatus(err error) *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Message: err.Error(),
	}}
}

// unsupportedPatchType is the API server's 415 for a patch whose
// Content-Type is none the route consumes: go-restful's router refuses it
// before the patch handler (github.com/emicklei/go-restful/v3 jsr311.go),
// and the API server's service error handler makes that a Status
// (k8s.io/apiserver pkg/server/handler.go, serviceErrorHandler).
func unsupportedPatchType() error {
	return apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "", schema.GroupResource{}, "", "415: Unsupported Media Type", 0, false)
}

// ErrApplyNotSupported is matched by the error of a server-side apply
// patch, which the API server takes but resizelet does not implement.
var ErrApplyNotSupported = fmt.Errorf("server-side apply is not implemented by resizelet: %w", errors.ErrUnsupported)

// applyNotSupported is resizelet's refusal of a server-side apply patch:
// a 415, the closest answer a client knows to handle.
func applyNotSupported(pt string) error {
	return &statusError{
		StatusError: apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "", schema.GroupResource{}, "",
			fmt.Sprintf("resizelet does not implement server-side apply (%s)", pt), 0, false),
		sentinel: ErrApplyNotSupported,
	}
}

// resourceVersionTooOld is the API server's 410 for a watch from a
// resourceVersion it no longer has the changes after (k8s.io/apiserver
// pkg/storage/cacher/watch_cache.go: apierrors.NewResourceExpired with
// "too old resource version: %d (%d)").
func resourceVersionTooOld(asked, oldest uint64) error {
	return &statusError{
		StatusError: apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", asked, oldest)),
		sentinel:    ErrResourceVersionTooOld,
	}
}

package apiserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"
)

// The patch types the resize subresource takes, as the API server takes
// them (the request's Content-Type): a strategic merge patch (kubectl's
// default), a JSON merge patch (RFC 7386) and a JSON patch (RFC 6902, what
// the VPA updater sends).
const (
	StrategicMergePatch = types.StrategicMergePatchType
	MergePatch          = types.MergePatchType
	JSONPatch           = types.JSONPatchType
)

// MaxRequestBodyBytes is the largest patch the API server reads: 3 MiB,
// its default --max-request-body-bytes (k8s.io/apiserver
// pkg/server/config.go). A larger one is refused with 413.
const MaxRequestBodyBytes = 3 << 20

// MaxJSONPatchOperations is the most operations a JSON patch may hold
// (k8s.io/apiserver pkg/endpoints/handlers/patch.go,
// maxJSONPatchOperations); more are refused with 413.
const MaxJSONPatchOperations = 10000

// jsonPatchMaxCopyBytes bounds how much a JSON patch's copy operations may
// add to the document: the API server's default JSONPatchMaxCopyBytes
// (pkg/server/config.go), the json-patch library's AccumulatedCopySizeLimit.
const jsonPatchMaxCopyBytes = 3 << 20

// setJSONPatchCopyLimit sets the json-patch library's copy limit as the
// API server does when it starts (pkg/server/config.go, New): only when
// unset or larger, so that a lower limit set in the same process stays.
func setJSONPatchCopyLimit() {
	for {
		existing := atomic.LoadInt64(&jsonpatch.AccumulatedCopySizeLimit)
		if (existing > 0 && existing <= jsonPatchMaxCopyBytes) ||
			atomic.CompareAndSwapInt64(&jsonpatch.AccumulatedCopySizeLimit, existing, jsonPatchMaxCopyBytes) {
			return
		}
	}
}

// ValidPatchType returns nil when the resize subresource takes pt (""
// stands for a strategic merge patch), or the API server's 415 Unsupported
// Media Type, or resizelet's own 415 (matching ErrApplyNotSupported) for a
// server-side apply patch, which the API server takes but resizelet does
// not implement. The type is refused before the pod is read, so a bad type
// on a missing pod is a 415, not a 404.
func ValidPatchType(pt types.PatchType) error {
	switch pt {
	case "", StrategicMergePatch, MergePatch, JSONPatch:
		return nil
	case types.ApplyYAMLPatchType, types.ApplyCBORPatchType:
		return applyNotSupported(string(pt))
	}
	return unsupportedPatchType()
}

// ApplyResizePatch is ApplyResize for a patch of type pt: "" or
// StrategicMergePatch (ApplyResize), MergePatch or JSONPatch. A patch of
// the narrow form (readNarrowPatch, or readNarrowJSONPatch for a JSON
// patch) is decoded straight into the edit; any other is applied as the
// API server applies it and read back into the same edit.
//
// A JSON merge patch or a JSON patch is applied as the API server applies
// it (k8s.io/apiserver pkg/endpoints/handlers/patch.go, jsonPatcher): to
// the old pod's JSON (defaulted, with kind, apiVersion and
// metadata.resourceVersion), with the json-patch library, and the result
// decoded strictly into a v1.Pod. A merge patch replaces lists whole: one
// of spec.containers must name every container, in order, with its full
// resources and resizePolicy.
//
// Errors are as PatchError says (a JSON patch operation that does not
// apply is its Path, "[1]"; more than MaxJSONPatchOperations operations,
// 413), and a patch type it does not take a 415 (ValidPatchType).
func ApplyResizePatch(old *v1.Pod, pt types.PatchType, patch []byte, opts ResizeOptions) (*v1.Pod, error) {
	if err := ValidPatchType(pt); err != nil {
		return nil, err
	}
	if old == nil {
		return nil, errors.New("apply resize: nil pod")
	}
	if len(patch) > MaxRequestBodyBytes {
		return nil, bodyTooLarge(len(patch))
	}
	if pt == "" || pt == StrategicMergePatch {
		// Room for the sets and edits of a typical patch on the stack.
		var sets [4]containerSet
		var edits [4]containerEdit
		if cs, inits, pod, ok := readNarrowPatch(patch, sets[:0]); ok {
			if e, ok := editOfSets(old, cs, inits, pod, edits[:0]); ok {
				return applyEdit(old, &e, opts)
			}
		}
	}
	if pt == JSONPatch {
		var edits [4]containerEdit
		if e, ok := readNarrowJSONPatch(old, patch, edits[:0]); ok {
			return applyEdit(old, &e, opts)
		}
	}
	oldPod, patched, err := patchedPod(old, pt, patch, opts, false)
	if err != nil {
		return nil, err
	}
	return applyEdit(oldPod, new(editOfPatched(patched, oldPod)), opts)
}

// patchedPod applies a patch of type pt to old as the API server does:
// to old defaulted (returned as oldPod), with the stored resourceVersion,
// through JSON maps (strategicPatched) or the pod's JSON (jsonPatched);
// then the strict decoding of the result and the checks of its metadata
// (checkPatchedMeta).
//
// Unless whole, the patch is first applied without the metadata and
// status it does not name (podPart), most of a running pod's JSON: the
// patches change a top-level field only when they name it, so the fields
// the resize reads come out the same. When that fails, or gives containers
// other than the old ones (kept whole by the strategy), the patch is
// applied again to the whole pod, whose errors and pod are the API
// server's to the letter.
func patchedPod(old *v1.Pod, pt types.PatchType, patch []byte, opts ResizeOptions, whole bool) (oldPod, patched *v1.Pod, err error) {
	oldPod = defaulted(old)
	// The stored pod's resourceVersion: the cluster's, or else old's.
	current := old.ResourceVersion
	if opts.resourceVersion != 0 {
		current = strconv.FormatUint(opts.resourceVersion, 10)
	}
	stored := oldPod
	if current != oldPod.ResourceVersion {
		cp := *oldPod
		cp.ResourceVersion = current
		stored = &cp
	}
	apply := func(whole bool) (*v1.Pod, error) {
		if pt == MergePatch || pt == JSONPatch {
			return jsonPatched(stored, pt, patch, whole)
		}
		return strategicPatched(stored, patch, whole)
	}
	patched, err = apply(whole)
	if !whole && (err != nil || !sameNames(patched.Spec.Containers, oldPod.Spec.Containers) ||
		!sameNames(patched.Spec.InitContainers, oldPod.Spec.InitContainers)) {
		patched, err = apply(true)
	}
	if err != nil {
		return nil, nil, err
	}
	if err := checkPatchedMeta(patched, oldPod, current); err != nil {
		return nil, nil, err
	}
	return oldPod, patched, nil
}

// podPart is the part of the stored pod a patch is applied to: all of it,
// or without the metadata, the status or both, which restore puts back.
type podPart struct{ noMeta, noStatus bool }

// partFor is the part a patch with these top-level keys needs: all but the
// metadata and status it does not name. An empty key (a JSON patch path
// that is the whole document) or a strategic merge directive ("$patch",
// "$retainKeys", ...), which may act on every field, needs the whole pod.
func partFor(keys iter.Seq[string]) podPart {
	part := podPart{noMeta: true, noStatus: true}
	for k := range keys {
		switch {
		case k == "" || k[0] == '$':
			return podPart{}
		case k == "metadata":
			part.noMeta = false
		case k == "status":
			part.noStatus = false
		}
	}
	return part
}

// of is the stored pod without what the part leaves out.
func (part podPart) of(stored *v1.Pod) *v1.Pod {
	if part == (podPart{}) {
		return stored
	}
	p := *stored
	if part.noMeta {
		p.ObjectMeta = metav1.ObjectMeta{}
	}
	if part.noStatus {
		p.Status = v1.PodStatus{}
	}
	return &p
}

// restore gives the patched pod the stored pod's metadata and status
// where the part left them out.
func (part podPart) restore(patched, stored *v1.Pod) {
	if part.noMeta {
		patched.ObjectMeta = stored.ObjectMeta
	}
	if part.noStatus {
		patched.Status = stored.Status
	}
}

// jsonPatched applies a JSON merge patch or a JSON patch to the stored
// pod, as the API server's jsonPatcher does (patch.go, applyJSPatch, under
// fieldValidation=Strict): the strict decoding of the patch, the library's
// application of it to the pod's JSON, and the strict decoding of the
// result. Unless whole, the metadata and status are left out when the
// patch does not name them (podPart).
func jsonPatched(stored *v1.Pod, pt types.PatchType, patch []byte, whole bool) (*v1.Pod, error) {
	var (
		ops        []jsonPatchOp
		m          = map[string]interface{}{}
		strictErrs []error
		err        error
		keys       iter.Seq[string]
		// find finds the first amount check refuses, in the patch.
		find func(check func(interface{}) error) (string, error)
	)
	if pt == JSONPatch {
		strictErrs, err = kjson.UnmarshalStrict(patch, &ops)
		for i, e := range strictErrs {
			strictErrs[i] = fmt.Errorf("json patch %v", e)
		}
		keys = opKeys(ops)
		find = func(check func(interface{}) error) (string, error) { return findAmountInOps(ops, check) }
	} else {
		strictErrs, err = kjson.UnmarshalStrict(patch, &m)
		keys = maps.Keys(m)
		find = func(check func(interface{}) error) (string, error) { return findAmount(m, nil, false, check) }
	}
	if err != nil {
		return nil, &PatchError{Err: err, status: apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))}
	}
	if where, err := find(hugeAmount); err != nil {
		return nil, &PatchError{Path: where, Err: err}
	}
	var part podPart
	if !whole {
		part = partFor(keys)
	}
	// The stored pod as the API server encodes it for these patches
	// (jsonPatcher.applyPatchToCurrentObject: runtime.Encode with the v1
	// codec), with kind and apiVersion.
	enc := *part.of(stored)
	enc.Kind, enc.APIVersion = "Pod", "v1"
	doc, err := json.Marshal(&enc)
	if err != nil {
		return nil, fmt.Errorf("apply resize: encode pod %s: %w", enc.Name, err)
	}
	var out []byte
	if pt == JSONPatch {
		out, err = applyJSONPatch(doc, patch)
	} else {
		out, err = applyMergePatch(doc, patch)
	}
	if err != nil {
		return nil, err
	}
	patched, err := decodePatched(out, func() string { return string(out) }, strictErrs,
		func() (string, error) { return find(checkQuantity) })
	if err != nil {
		return nil, err
	}
	if (patched.Kind != "" && patched.Kind != "Pod") || (patched.APIVersion != "" && patched.APIVersion != "v1") {
		err := fmt.Errorf("the patched object is kind %q of apiVersion %q, not a v1 Pod", patched.Kind, patched.APIVersion)
		return nil, &PatchError{Err: err, status: invalidPatch(string(out), err.Error())}
	}
	part.restore(patched, stored)
	return patched, nil
}

// bodyTooLarge is the API server's 413 for a request body beyond
// MaxRequestBodyBytes (pkg/endpoints/handlers/rest.go, limitedReadBody).
func bodyTooLarge(size int) error {
	return &PatchError{
		Err:    fmt.Errorf("the patch has %d bytes, more than the %d the API server reads", size, MaxRequestBodyBytes),
		status: apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", MaxRequestBodyBytes)),
	}
}

// jsonPatchOp is a JSON patch operation, for the strict decoding the API
// server makes before applying it (patch.go, jsonPatchOp): a key an
// operation does not have ("valeu") is a strict decoding error.
type jsonPatchOp struct {
	Op    string      `json:"op"`
	Path  string      `json:"path"`
	From  string      `json:"from"`
	Value interface{} `json:"value"`
}

// applyJSONPatch applies a JSON patch, already decoded strictly, to doc
// as the API server does: the library's decoding, the bound on
// operations, then the operations.
func applyJSONPatch(doc, patch []byte) ([]byte, error) {
	decoded, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return nil, &PatchError{Err: err}
	}
	if len(decoded) > MaxJSONPatchOperations {
		msg := fmt.Sprintf("The allowed maximum operations in a JSON patch is %d, got %d", MaxJSONPatchOperations, len(decoded))
		return nil, &PatchError{Err: errors.New(msg), status: apierrors.NewRequestEntityTooLargeError(msg)}
	}
	setJSONPatchCopyLimit()
	patched, err := recovering(func() ([]byte, error) { return decoded.Apply(doc) })
	var pe *PatchError
	if errors.As(err, &pe) {
		// The library panicked: a 500, as the API server's panic
		// recovery answers.
		pe.Path = failedOperation(decoded, doc, err)
		return nil, pe
	}
	if err != nil {
		// The API server answers with a bare 422 whose message is the
		// generic one (NewGenericServerResponse keeps none for 422); the
		// PatchError keeps the operation and the library's words.
		return nil, &PatchError{
			Path:   failedOperation(decoded, doc, err),
			Err:    err,
			status: apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false),
		}
	}
	return patched, nil
}

// opKeys are the top-level keys of the pod that a JSON patch's
// operations name in their path or from, as the json-patch library reads
// a path: the segment after the first "/" (findObject ignores what comes
// before it); "" for a path without one, which may be the whole document.
// An empty from is passed over: only move and copy read it, and they
// refuse it.
func opKeys(ops []jsonPatchOp) iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, op := range ops {
			for i, path := range [2]string{op.Path, op.From} {
				if i == 1 && path == "" {
					continue
				}
				_, rest, _ := strings.Cut(path, "/")
				key, _, _ := strings.Cut(rest, "/")
				if !yield(key) {
					return
				}
			}
		}
	}
}

// failedOperation finds which operation of a failed patch failed with err,
// by applying them one at a time, and returns it as "[i]"; "" when that
// run does not fail the same way (the copy limit counts across
// operations).
func failedOperation(p jsonpatch.Patch, doc []byte, err error) string {
	for i := range p {
		next, opErr := recovering(func() ([]byte, error) { return p[i : i+1].Apply(doc) })
		if opErr != nil {
			if opErr.Error() == err.Error() {
				return fmt.Sprintf("[%d]", i)
			}
			return ""
		}
		doc = next
	}
	return ""
}

// applyMergePatch applies a JSON merge patch to doc as the API server does.
func applyMergePatch(doc, patch []byte) ([]byte, error) {
	patched, err := recovering(func() ([]byte, error) { return jsonpatch.MergePatch(doc, patch) })
	var pe *PatchError
	switch {
	case errors.As(err, &pe):
		return nil, pe
	case errors.Is(err, jsonpatch.ErrBadJSONPatch):
		// A null patch.
		return nil, &PatchError{Err: err}
	case err != nil:
		// The API server returns the library's other errors as they are:
		// a 500 with no reason.
		return nil, &PatchError{Err: err, status: internalStatus(err)}
	}
	return patched, nil
}

// recovering runs a json-patch library call and turns a panic into a
// PatchError with a 500: the library panics on some malformed patches (a
// "replace" of the whole document without a value, found by
// FuzzApplyResizePatch), which the API server's panic recovery answers
// with an internal error (k8s.io/apiserver pkg/endpoints/handlers/finisher,
// pkg/server/filters/wrap.go).
func recovering(call func() ([]byte, error)) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			cause := fmt.Errorf("json patch failed: %v", r)
			err = &PatchError{Err: cause, status: apierrors.NewInternalError(cause)}
		}
	}()
	return call()
}

// invalidPatch is the API server's 422 for a patched object it cannot
// decode (patch.go: apierrors.NewInvalid with no kind and no name, on the
// field "patch", the patched object as the value).
func invalidPatch(value, msg string) *apierrors.StatusError {
	return apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{field.Invalid(field.NewPath("patch"), value, msg)})
}

// decodePatched decodes the patched JSON into a pod, strictly, as the API
// server's codec does under fieldValidation=Strict (k8s.io/apimachinery
// pkg/runtime/serializer/json/json.go, Serializer.unmarshal).
// patchStrictErrs, the patch's own (a key given twice in a JSON patch's
// value is reported there and again in the pod, as the library copies
// values undecoded), come first, and are left out when the result does not
// decode at all, as the API server leaves them out. Its 422 on the field
// "patch" has value() as the value. A value the pod cannot hold is a
// PatchError at the place locate finds in the patch.
func decodePatched(patched []byte, value func() string, patchStrictErrs []error, locate func() (string, error)) (*v1.Pod, error) {
	pod := &v1.Pod{}
	strictErrs, err := kjson.UnmarshalStrict(patched, pod)
	if err != nil {
		status := invalidPatch(value(), err.Error())
		if path, qerr := locate(); qerr != nil {
			return nil, &PatchError{Path: path, Err: qerr, status: status}
		}
		return nil, &PatchError{Err: err, status: status}
	}
	if all := append(patchStrictErrs, strictErrs...); len(all) > 0 {
		// A key given twice, or a field the pod does not have (a typo,
		// "limit" for "limits"), refused rather than ignored.
		strict := runtime.NewStrictDecodingError(all)
		return nil, &PatchError{Err: strict, status: invalidPatch(value(), strict.Error())}
	}
	return pod, nil
}

// checkPatchedMeta checks what the API server checks of a patched object
// before its strategy runs: the name and namespace are the request's
// (patch.go, applyPatch: rest.EnsureObjectNamespaceMatchesRequestNamespace
// and checkName: 400), and a resourceVersion it carries is the stored one
// (pkg/registry/generic/registry/store.go, Update: 409, or a 500 when it
// is not a number; an update without one is unconditional for pods,
// AllowUnconditionalUpdate). Each refusal is a PatchError on that field of
// the patched pod, with the API server's status.
func checkPatchedMeta(patched, stored *v1.Pod, storedVersion string) error {
	bad := func(path, msg string) error {
		return &PatchError{Path: path, Err: errors.New(msg), status: apierrors.NewBadRequest(msg)}
	}
	switch {
	case patched.Namespace == "":
		patched.Namespace = stored.Namespace
	case patched.Namespace != stored.Namespace:
		return bad("metadata.namespace", "the namespace of the provided object does not match the namespace sent on the request")
	}
	switch {
	case patched.Name == "":
		return bad("metadata.name", fmt.Sprintf("the name of the object (%s based on URL) was undeterminable: name must be provided", stored.Name))
	case patched.Name != stored.Name:
		return bad("metadata.name", fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", patched.Name, stored.Name))
	}
	if patched.ResourceVersion == "" {
		return nil
	}
	want, err := strconv.ParseUint(patched.ResourceVersion, 10, 64)
	if err != nil {
		return &PatchError{Path: "metadata.resourceVersion", Err: err, status: internalStatus(err)}
	}
	if have, _ := strconv.ParseUint(storedVersion, 10, 64); want != have {
		conflict := resourceVersionConflict(stored.Name)
		return &PatchError{Path: "metadata.resourceVersion", Err: conflict, status: conflict.(*statusError).StatusError}
	}
	return nil
}

// findAmountInOps finds the first operation value that check refuses
// where the operation puts it in a resource list (its path ends in
// /requests/NAME, /limits/NAME or /overhead/NAME, or its value is an
// object holding such lists), and returns its place as "[i].value...".
func findAmountInOps(ops []jsonPatchOp, check func(interface{}) error) (string, error) {
	for i, op := range ops {
		segments := strings.Split(op.Path, "/")
		at := field.NewPath(fmt.Sprintf("[%d].value", i))
		n := len(segments)
		if n >= 2 && quantityMaps[segments[n-2]] {
			if err := check(op.Value); err != nil {
				return at.String(), err
			}
			continue
		}
		if p, err := findAmount(op.Value, at, quantityMaps[segments[n-1]], check); err != nil {
			return p, err
		}
	}
	return "", nil
}

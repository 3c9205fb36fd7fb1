package apiserver

import (
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

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

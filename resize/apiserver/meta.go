package apiserver

import (
	"errors"

	v1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ErrUIDTaken is wrapped by CreatePod's error for a pod whose UID another
// stored pod already has.
var ErrUIDTaken = errors.New("UID already taken by another pod")

// msgUID is the rule for a UID the caller sets.
const msgUID = "must be 1 to 63 lower-case letters, digits and '-', starting and ending with a letter or digit (as the UUIDs the API server assigns are)"

// ValidatePodMeta is the API server's validation of a new pod's metadata,
// plus resizelet's rule for a UID the caller set.
//
// The metadata is validated by apimachinery's own ValidateObjectMeta
// (k8s.io/apimachinery pkg/api/validation/objectmeta.go), with pod names
// as DNS subdomains (pkg/apis/core/validation, ValidatePodName is
// NameIsDNSSubdomain) and namespaces as DNS labels (ValidateNamespaceName
// is NameIsDNSLabel): so "a/b", "..", a NUL or a 5,000-character name is
// refused with the API server's messages, and no two pods' namespace and
// name can read alike in a key ("default/a b" is not a pod name).
//
// The API server assigns every new object its UID and ignores one the
// client sends (k8s.io/apiserver pkg/registry/rest, BeforeCreate fills
// the system fields with FillObjectMetaSystemFields, a fresh
// uuid.NewUUID). resizelet keeps a UID the caller sets instead, because
// an embedder that mirrors a real cluster (or a kubelet's static pod,
// whose manifest UID the kubelet keeps: pkg/kubelet/config/common.go,
// applyDefaults) must be able to say which pod it means; a pod without
// one gets a UID derived from its namespace and name. The UID names the
// pod cgroup and keys both checkpoints, so resizelet asks it to be what an
// API server's UID always is: lower-case letters, digits and '-', at most
// 63 characters (a DNS label; a UUID has 36). That two pods never share a
// UID is CreatePod's check (ErrUIDTaken), since it needs the other pods.
func ValidatePodMeta(pod *v1.Pod) field.ErrorList {
	if pod == nil {
		return nilPodErrors("pod")
	}
	errs := apimachineryvalidation.ValidateObjectMeta(&pod.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validateUID(pod.UID)...)
}

// validateUID checks a UID the caller set (an empty one is assigned).
func validateUID(uid types.UID) field.ErrorList {
	if uid == "" || isDNS1123Label(string(uid)) {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("metadata", "uid"), string(uid), msgUID)}
}

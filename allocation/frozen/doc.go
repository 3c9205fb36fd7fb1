// Package frozen keeps pods and allocation records at rest in a compact,
// immutable, shared form, so that a simulated node with many settled pods
// holds a few hundred bytes per pod instead of several kilobytes of Go
// objects (a decoded v1.Pod with two containers is about 6 KiB, most of it
// the maps of its resource lists).
//
// Start with FreezePod and Pod.Thaw. A frozen pod is the pod's protobuf
// encoding (the API server's storage encoding) plus the exact value of
// every time in it, which protobuf would cut to whole seconds in the local
// time zone, compressed with S2 (github.com/klauspost/compress/s2, a
// Snappy-compatible compressor fast enough to run at every freeze and
// thaw). Frozen values are interned (package unique): every holder of the
// same content, such as the API server's copy of a pod and the kubelet's,
// shares one copy of the bytes. Resources does the same for the
// checkpoints' records.
//
// Thawing decodes a new object each time. It equals what was frozen as
// equality.Semantic sees it and gives the same JSON, but it is not
// reflect.DeepEqual in every case: quantities come back in the form
// parsing their text gives, empty maps and slices come back nil, and
// times lose their monotonic clock reading. Callers keep hot objects
// thawed and freeze the ones they have not used for a while (Recent).
package frozen

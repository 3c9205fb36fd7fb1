package frozen

import (
	"encoding/binary"
	"fmt"
	"time"
	"unique"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Pod is a frozen pod. The zero Pod holds none.
type Pod struct{ h unique.Handle[string] }

// IsZero says whether f holds no pod.
func (f Pod) IsZero() bool { return f == Pod{} }

// Size is the number of bytes the frozen pod takes (compressed), shared by
// every holder.
func (f Pod) Size() int {
	if f.IsZero() {
		return 0
	}
	return len(f.h.Value())
}

// Time kinds a frozen time records: the zero time, or a time in UTC or
// local time. Times are UTC or local in practice, and any other location
// cannot be restored from a byte, so FreezePod refuses pods with such
// times.
const (
	timeZero  = 0
	timeUTC   = 1
	timeLocal = 2
)

// FreezePod freezes p. It returns false, and p stays as it is with the
// caller, when p holds something a frozen pod could not give back: a time
// in a location other than UTC and Local; and for a nil p, which holds
// nothing to freeze.
func FreezePod(p *v1.Pod) (Pod, bool) {
	if p == nil {
		return Pod{}, false
	}
	size := p.Size()
	buf := make([]byte, binary.MaxVarintLen64, binary.MaxVarintLen64+size+64)
	n := binary.PutUvarint(buf, uint64(size))
	buf = buf[:n+size]
	if _, err := p.MarshalToSizedBuffer(buf[n:]); err != nil {
		// Marshal fails only on an object that cannot be encoded at all
		// (a negative length): keep such a pod as it is.
		return Pod{}, false
	}
	ok := true
	eachPodTime(p, func(t *metav1.Time) {
		switch {
		case t.IsZero():
			buf = append(buf, timeZero)
			return
		case t.Location() == time.UTC:
			buf = append(buf, timeUTC)
		case t.Location() == time.Local:
			buf = append(buf, timeLocal)
		default:
			ok = false
		}
		buf = binary.AppendVarint(buf, t.Unix())
		buf = binary.AppendUvarint(buf, uint64(t.Nanosecond()))
	})
	if !ok {
		return Pod{}, false
	}
	// Interned compressed: about half the size (see compress), and the
	// conversion to a string is the one copy unique.Make needs.
	var packed [2048]byte
	return Pod{unique.Make(string(compressDict(packed[:0], podDict, buf)))}, true
}

// Thaw decodes the pod f holds into a new object, which the caller owns;
// the zero Pod holds none and thaws to nil. It panics if the bytes do not
// decode, which would be a bug in this package: they were encoded by
// FreezePod.
func (f Pod) Thaw() *v1.Pod {
	if f.IsZero() {
		return nil
	}
	data, err := decompressDict(nil, podDict, bytesOf(f.h.Value()))
	if err != nil {
		panic(fmt.Sprintf("frozen: corrupt pod: %v", err))
	}
	size, n := binary.Uvarint(data)
	if n <= 0 || uint64(len(data)-n) < size {
		panic("frozen: corrupt pod: bad length")
	}
	p := &v1.Pod{}
	if err := p.Unmarshal(data[n : n+int(size)]); err != nil {
		panic(fmt.Sprintf("frozen: corrupt pod: %v", err))
	}
	rest := data[n+int(size):]
	bad := false
	eachPodTime(p, func(t *metav1.Time) {
		if bad || len(rest) == 0 {
			bad = true
			return
		}
		kind := rest[0]
		rest = rest[1:]
		if kind == timeZero {
			t.Time = time.Time{}
			return
		}
		sec, k := binary.Varint(rest)
		if k <= 0 {
			bad = true
			return
		}
		nsec, l := binary.Uvarint(rest[k:])
		if l <= 0 {
			bad = true
			return
		}
		rest = rest[k+l:]
		t.Time = time.Unix(sec, int64(nsec))
		if kind == timeUTC {
			t.Time = t.Time.UTC()
		}
	})
	if bad {
		panic("frozen: corrupt pod: times do not match the pod")
	}
	if len(rest) != 0 {
		panic("frozen: corrupt pod: times do not match the pod")
	}
	return p
}

// eachPodTime calls fn with every time in p, in a fixed order that
// depends only on p's structure (which protobuf keeps): every
// metav1.Time a v1.Pod can hold (TestEachPodTimeVisitsEveryTime finds
// them by reflection).
func eachPodTime(p *v1.Pod, fn func(*metav1.Time)) {
	eachMetaTime(&p.ObjectMeta, fn)
	for i := range p.Spec.Volumes {
		if e := p.Spec.Volumes[i].Ephemeral; e != nil && e.VolumeClaimTemplate != nil {
			eachMetaTime(&e.VolumeClaimTemplate.ObjectMeta, fn)
		}
	}
	for i := range p.Status.Conditions {
		fn(&p.Status.Conditions[i].LastProbeTime)
		fn(&p.Status.Conditions[i].LastTransitionTime)
	}
	if p.Status.StartTime != nil {
		fn(p.Status.StartTime)
	}
	for _, list := range [...][]v1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses, p.Status.EphemeralContainerStatuses} {
		for i := range list {
			eachStateTime(&list[i].State, fn)
			eachStateTime(&list[i].LastTerminationState, fn)
		}
	}
}

func eachMetaTime(m *metav1.ObjectMeta, fn func(*metav1.Time)) {
	fn(&m.CreationTimestamp)
	if m.DeletionTimestamp != nil {
		fn(m.DeletionTimestamp)
	}
	for i := range m.ManagedFields {
		if m.ManagedFields[i].Time != nil {
			fn(m.ManagedFields[i].Time)
		}
	}
}

func eachStateTime(s *v1.ContainerState, fn func(*metav1.Time)) {
	if s.Running != nil {
		fn(&s.Running.StartedAt)
	}
	if s.Terminated != nil {
		fn(&s.Terminated.StartedAt)
		fn(&s.Terminated.FinishedAt)
	}
}

// bytesOf is a copy of s's bytes for the decoders. (A view without the
// copy would need package unsafe, which the resize core's dependencies
// may not import; thawing is the cold path.)
func bytesOf(s string) []byte { return []byte(s) }

package frozen

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"
	"unique"

	"github.com/klauspost/compress/s2"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resizelet/resizelet/allocation"
)

// Pod is a frozen pod. The zero Pod holds none.
type Pod struct{ h unique.Handle[string] }

// IsZero says whether f holds no pod.
func (f Pod) IsZero() bool { return f == Pod{} }

// Size is the frozen pod's size in bytes, shared by every holder.
func (f Pod) Size() int {
	if f.IsZero() {
		return 0
	}
	return len(f.h.Value())
}

// Time kinds a frozen time records: the zero time, or a time in UTC or
// local time. A byte cannot restore any other location, so FreezePod
// refuses pods with such times (they do not occur in practice).
const (
	timeZero  = 0
	timeUTC   = 1
	timeLocal = 2
)

// FreezePod freezes p. It returns false, and p stays with the caller, for
// a nil p and when p holds what a frozen pod could not give back: a time
// in a location other than UTC and Local.
func FreezePod(p *v1.Pod) (Pod, bool) { return Pod{}.Refreeze(p) }

// Refreeze is FreezePod(p) for a pod thawed from f: when p still encodes
// to what f holds (S2 packs equal data alike), as after a settled pod's
// resync, it returns f without interning again.
func (f Pod) Refreeze(p *v1.Pod) (Pod, bool) {
	if p == nil {
		return Pod{}, false
	}
	s := scratches.Get().(*scratch)
	defer scratches.Put(s)
	size := p.Size()
	buf := slices.Grow(s.plain[:0], size+64)[:size]
	if _, err := p.MarshalToSizedBuffer(buf); err != nil {
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
	s.plain = buf
	if !ok {
		return Pod{}, false
	}
	packed := s.pack(size, buf)
	if !f.IsZero() && f.h.Value() == string(packed) {
		return f, true
	}
	return Pod{unique.Make(string(packed))}, true
}

// Thaw decodes the pod f holds into a new object, which the caller owns;
// the zero Pod holds none and thaws to nil. It panics if the bytes do not
// decode, which would be a bug in this package: they were encoded by
// FreezePod.
func (f Pod) Thaw() *v1.Pod {
	if f.IsZero() {
		return nil
	}
	s := scratches.Get().(*scratch)
	defer scratches.Put(s)
	// The decoded pod copies what it takes from data, so the scratch
	// space serves.
	data, size, err := s.unpack(f.h.Value())
	if err != nil {
		panic(fmt.Sprintf("frozen: corrupt pod: %v", err))
	}
	p := &v1.Pod{}
	if err := p.Unmarshal(data[:size]); err != nil {
		panic(fmt.Sprintf("frozen: corrupt pod: %v", err))
	}
	rest := bytes.NewReader(data[size:])
	bad := false
	eachPodTime(p, func(t *metav1.Time) {
		kind, err := rest.ReadByte()
		t.Time = time.Time{}
		if err != nil || kind == timeZero {
			bad = bad || err != nil
			return
		}
		sec, err := binary.ReadVarint(rest)
		nsec, err2 := binary.ReadUvarint(rest)
		if err != nil || err2 != nil {
			bad = true
			return
		}
		t.Time = time.Unix(sec, int64(nsec))
		if kind == timeUTC {
			t.Time = t.Time.UTC()
		}
	})
	if bad || rest.Len() != 0 {
		panic("frozen: corrupt pod: times do not match the pod")
	}
	return p
}

// scratch is the room FreezePod and Thaw work in, kept between calls
// (scratches): a pod's encoding and times (plain), and their packed form.
type scratch struct{ plain, packed []byte }

// scratches are the process's scratch space. Package sync is otherwise
// kept out of the resize core and what it imports (they share no state
// between calls); a pool of scratch space changes no result.
var scratches = sync.Pool{New: func() any { return new(scratch) }}

// pack is data (a pod's encoding of size bytes, then its times) as a
// frozen pod holds it: size as a uvarint, then data compressed with S2
// (github.com/klauspost/compress/s2), which keeps a settled pod at about
// two thirds of its encoding (a pod repeats its resources and image
// names) in well under a microsecond; DEFLATE kept it a little smaller
// but took tens of microseconds for each pod frozen or thawed. The result
// lives in s until its next use.
func (s *scratch) pack(size int, data []byte) []byte {
	n := binary.MaxVarintLen64 + s2.MaxEncodedLen(len(data))
	if cap(s.packed) < n {
		s.packed = make([]byte, n)
	}
	out := s.packed[:n]
	head := binary.PutUvarint(out, uint64(size))
	return out[:head+len(s2.Encode(out[head:], data))]
}

// unpack undoes pack: it returns the data, in s, and the size of the
// pod's encoding at its start.
func (s *scratch) unpack(frozen string) ([]byte, int, error) {
	s.packed = append(s.packed[:0], frozen...)
	size, head := binary.Uvarint(s.packed)
	if head <= 0 {
		return nil, 0, errors.New("bad size")
	}
	n, err := s2.DecodedLen(s.packed[head:])
	if err != nil {
		return nil, 0, err
	}
	if size > uint64(n) {
		return nil, 0, fmt.Errorf("size %d of %d bytes", size, n)
	}
	s.plain = slices.Grow(s.plain[:0], n)[:n]
	data, err := s2.Decode(s.plain, s.packed[head:])
	return data, int(size), err
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

// Resources is a frozen allocation record (allocation.PodResources). The
// zero Resources holds none.
type Resources struct{ h unique.Handle[string] }

// IsZero says whether f holds no record.
func (f Resources) IsZero() bool { return f == Resources{} }

// Record flags: whether the container map and the pod-level resources are
// present (nil and empty maps differ in a record: a pod with no resizable
// container has an empty map, a record never set has none).
const (
	hasContainers = 1 << iota
	hasPodLevel
)

// FreezeResources freezes r: its containers in name order, each with the
// protobuf encoding of its requirements, then the pod-level requirements.
func FreezeResources(r allocation.PodResources) Resources {
	names := make([]string, 0, len(r.ContainerResources))
	for name := range r.ContainerResources {
		names = append(names, name)
	}
	slices.Sort(names)
	var flags byte
	if r.ContainerResources != nil {
		flags |= hasContainers
	}
	if r.PodLevelResources != nil {
		flags |= hasPodLevel
	}
	buf := make([]byte, 0, 64*len(names)+16)
	buf = append(buf, flags)
	buf = binary.AppendUvarint(buf, uint64(len(names)))
	for _, name := range names {
		rr := r.ContainerResources[name]
		buf = binary.AppendUvarint(buf, uint64(len(name)))
		buf = append(buf, name...)
		buf = appendRequirements(buf, &rr)
	}
	if r.PodLevelResources != nil {
		buf = appendRequirements(buf, r.PodLevelResources)
	}
	return Resources{unique.Make(string(buf))}
}

func appendRequirements(buf []byte, rr *v1.ResourceRequirements) []byte {
	size := rr.Size()
	buf = binary.AppendUvarint(buf, uint64(size))
	start := len(buf)
	buf = slices.Grow(buf, size)[:start+size]
	if _, err := rr.MarshalToSizedBuffer(buf[start:]); err != nil {
		// Requirements are maps of quantities and a list of claims:
		// nothing in them can fail to encode.
		panic(fmt.Sprintf("frozen: encode resource requirements: %v", err))
	}
	return buf
}

// Thaw decodes the record f holds into new maps, which the caller owns;
// the zero Resources holds none and thaws to the zero PodResources. It
// panics if the bytes do not decode, which would be a bug in this
// package.
func (f Resources) Thaw() allocation.PodResources {
	if f.IsZero() {
		return allocation.PodResources{}
	}
	data := []byte(f.h.Value())
	r := bytes.NewReader(data)
	uvarint := func() uint64 {
		v, err := binary.ReadUvarint(r)
		if err != nil {
			panic(fmt.Sprintf("frozen: corrupt resources: %v", err))
		}
		return v
	}
	// run is the next length-prefixed run of data, in place.
	run := func() []byte {
		n, start := uvarint(), len(data)-r.Len()
		if n > uint64(r.Len()) {
			panic("frozen: corrupt resources: truncated")
		}
		_, _ = r.Seek(int64(n), io.SeekCurrent)
		return data[start : start+int(n)]
	}
	requirements := func(rr *v1.ResourceRequirements) {
		if err := rr.Unmarshal(run()); err != nil {
			panic(fmt.Sprintf("frozen: corrupt resources: %v", err))
		}
	}
	flags, _ := r.ReadByte()
	n := uvarint()
	var out allocation.PodResources
	if flags&hasContainers != 0 {
		out.ContainerResources = make(map[string]v1.ResourceRequirements, n)
	}
	for range n {
		name := string(run())
		var rr v1.ResourceRequirements
		requirements(&rr)
		out.ContainerResources[name] = rr
	}
	if flags&hasPodLevel != 0 {
		out.PodLevelResources = &v1.ResourceRequirements{}
		requirements(out.PodLevelResources)
	}
	if r.Len() != 0 {
		panic("frozen: corrupt resources: bytes left over")
	}
	return out
}

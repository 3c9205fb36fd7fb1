package frozen

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"unique"

	v1 "k8s.io/api/core/v1"

	"github.com/resizelet/resizelet/allocation"
)

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

package frozen

import (
	"encoding/binary"
	"fmt"
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
	d := decoder{data: bytesOf(f.h.Value())}
	flags := d.byte()
	n := d.uvarint()
	var r allocation.PodResources
	if flags&hasContainers != 0 {
		r.ContainerResources = make(map[string]v1.ResourceRequirements, n)
	}
	for i := uint64(0); i < n && d.err == nil; i++ {
		name := string(d.bytes(d.uvarint()))
		var rr v1.ResourceRequirements
		d.requirements(&rr)
		r.ContainerResources[name] = rr
	}
	if flags&hasPodLevel != 0 {
		r.PodLevelResources = &v1.ResourceRequirements{}
		d.requirements(r.PodLevelResources)
	}
	if d.err != nil || len(d.data) != 0 {
		panic(fmt.Sprintf("frozen: corrupt resources: %v", d.err))
	}
	return r
}

// decoder reads a frozen record, remembering the first error.
type decoder struct {
	data []byte
	err  error
}

func (d *decoder) byte() byte {
	if d.err != nil || len(d.data) == 0 {
		d.fail("truncated")
		return 0
	}
	b := d.data[0]
	d.data = d.data[1:]
	return b
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.data)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.data = d.data[n:]
	return v
}

func (d *decoder) bytes(n uint64) []byte {
	if d.err != nil || uint64(len(d.data)) < n {
		d.fail("truncated")
		return nil
	}
	b := d.data[:n]
	d.data = d.data[n:]
	return b
}

func (d *decoder) requirements(rr *v1.ResourceRequirements) {
	b := d.bytes(d.uvarint())
	if d.err != nil {
		return
	}
	if err := rr.Unmarshal(b); err != nil {
		d.fail(err.Error())
	}
}

func (d *decoder) fail(msg string) {
	if d.err == nil {
		d.err = fmt.Errorf("%s", msg)
	}
}

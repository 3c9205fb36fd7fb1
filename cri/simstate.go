package cri

import (
	"hash/maphash"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cri/crilabels"
)

// The records SimContainerd keeps, and the indexes over them. A simulated
// node keeps hundreds of containers for as long as it lives, so the records
// are compact: they hold what the answers are made of (names, IDs, times,
// the resources as integers) rather than the configs and answers
// themselves. Labels and annotations of the shape the kubelet gives them
// are kept as a flag and made again when asked for; others are copied.

// simSandbox is what the runtime keeps of a sandbox. Its fields are
// ordered so that the record fits a 144-byte allocation.
type simSandbox struct {
	id             string
	metadata       podMetadata
	labels         map[string]string // a copy of the config's unless podLabels; never modified
	annotations    map[string]string // a copy of the config's; never modified
	runtimeHandler string
	cgroupParent   string
	createdAt      int64
	resources      *runtimeapi.UpdatePodSandboxResourcesRequest
	state          runtimeapi.PodSandboxState
	// podLabels says that the config's labels were the kubelet's: the three
	// pod labels with the metadata's values and nothing else. They are
	// made from the metadata when asked for, and labels is nil.
	podLabels bool
}

// podMetadata is a sandbox's metadata, which its answers and the names of
// its containers are made from.
type podMetadata struct {
	name, uid, namespace string
	attempt              uint32
}

// proto returns the metadata as a message of the caller's own.
func (p podMetadata) proto() *runtimeapi.PodSandboxMetadata {
	return &runtimeapi.PodSandboxMetadata{Name: p.name, Uid: p.uid, Namespace: p.namespace, Attempt: p.attempt}
}

// sandboxLabels returns how a sandbox keeps the labels of its config:
// true and no map when they are the kubelet's for the metadata, else a copy.
func sandboxLabels(labels map[string]string, md podMetadata) (bool, map[string]string) {
	if len(labels) == 3 && hasLabel(labels, crilabels.PodName, md.name) &&
		hasLabel(labels, crilabels.PodNamespace, md.namespace) && hasLabel(labels, crilabels.PodUID, md.uid) {
		return true, nil
	}
	return false, maps.Clone(labels)
}

// hasLabel reports whether labels hold key with the value.
func hasLabel(labels map[string]string, key, value string) bool {
	v, ok := labels[key]
	return ok && v == value
}

// label returns the value of one of the sandbox's labels.
func (sb *simSandbox) label(key string) (string, bool) {
	if !sb.podLabels {
		v, ok := sb.labels[key]
		return v, ok
	}
	switch key {
	case crilabels.PodName:
		return sb.metadata.name, true
	case crilabels.PodNamespace:
		return sb.metadata.namespace, true
	case crilabels.PodUID:
		return sb.metadata.uid, true
	}
	return "", false
}

// labelMap returns the sandbox's labels in a map of the caller's own.
func (sb *simSandbox) labelMap() map[string]string {
	if !sb.podLabels {
		return maps.Clone(sb.labels)
	}
	return map[string]string{
		crilabels.PodName:      sb.metadata.name,
		crilabels.PodNamespace: sb.metadata.namespace,
		crilabels.PodUID:       sb.metadata.uid,
	}
}

// reservedName is the name the sandbox reserves, as containerd makes it.
func (sb *simSandbox) reservedName() string {
	md := sb.metadata
	return strings.Join([]string{"k8s", "POD", md.name, md.namespace, md.uid, strconv.FormatUint(uint64(md.attempt), 10)}, "_")
}

// matches reports whether the sandbox has every label of selector.
func (sb *simSandbox) matches(selector map[string]string) bool {
	for k, v := range selector {
		if got, ok := sb.label(k); !ok || got != v {
			return false
		}
	}
	return true
}

// simContainer is what the runtime keeps of a container. Its fields are
// ordered so that the record fits a 208-byte allocation.
type simContainer struct {
	op sync.Mutex // serialises start, stop, update, remove and usage changes

	// Set at creation and never modified: createdAt before the container
	// is listed, the others before its name is reserved (the owner of a
	// name makes it again from id, sandbox, metaName and attempt).
	id        string
	sandbox   *simSandbox
	cgroup    string
	metaName  string
	image     string
	extra     *containerExtra // nil when the container has nothing extra
	createdAt int64

	// Guarded by SimContainerd.mu.
	startedAt  int64
	finishedAt int64
	pid        int
	exit       *exitText // nil until the container exits
	spec       simSpec

	// state, version and removed are guarded by SimContainerd.mu; version
	// counts the changes of what ContainerStatus reports, so that a status
	// made earlier can be told current. attempt and shape are set at
	// creation and never modified.
	state   runtimeapi.ContainerState
	version uint32
	attempt uint32
	removed bool
	shape   containerShape
}

// containerShape says which of a container's labels and annotations are
// the kubelet's, kept as a flag and made again when asked for.
type containerShape uint8

// The shapes a container's labels and annotations may have.
const (
	// kubeletLabels says the labels are the three pod labels with the
	// sandbox's metadata values and the container name label with the
	// container's name, and nothing else.
	kubeletLabels containerShape = 1 << iota
	// kubeletAnnotations says the annotations are the restart count
	// annotation with the attempt, and nothing else.
	kubeletAnnotations
)

// restartCountAnnotation is the annotation in which the kubelet gives a
// container its restart count, the attempt of its metadata.
const restartCountAnnotation = "io.kubernetes.container.restartCount"

// containerExtra holds what a container created by the kubelet has none
// of: a command line, and labels and annotations of another shape.
type containerExtra struct {
	args        []string          // the command and its arguments
	labels      map[string]string // a copy of the config's unless kubeletLabels
	annotations map[string]string // a copy of the config's unless kubeletAnnotations
}

// containerAttributes returns how a container keeps the labels,
// annotations and command line of its config: the shape flags, and what
// does not fit them in an extra, which is nil when nothing is left over.
func containerAttributes(config *runtimeapi.ContainerConfig, sb *simSandbox, attempt uint32) (containerShape, *containerExtra) {
	var shape containerShape
	var extra containerExtra
	labels, annotations := config.GetLabels(), config.GetAnnotations()
	md := sb.metadata
	if len(labels) == 4 && hasLabel(labels, crilabels.PodName, md.name) && hasLabel(labels, crilabels.PodNamespace, md.namespace) &&
		hasLabel(labels, crilabels.PodUID, md.uid) && hasLabel(labels, crilabels.ContainerName, config.GetMetadata().GetName()) {
		shape |= kubeletLabels
	} else {
		extra.labels = maps.Clone(labels)
	}
	if len(annotations) == 1 && hasLabel(annotations, restartCountAnnotation, strconv.FormatUint(uint64(attempt), 10)) {
		shape |= kubeletAnnotations
	} else {
		extra.annotations = maps.Clone(annotations)
	}
	extra.args = append(slices.Clone(config.GetCommand()), config.GetArgs()...)
	if extra.args == nil && extra.labels == nil && extra.annotations == nil {
		return shape, nil
	}
	kept := new(containerExtra) // not &extra, which would move extra to the heap on every call
	*kept = extra
	return shape, kept
}

// args returns the container's command and arguments.
func (c *simContainer) args() []string {
	if c.extra == nil {
		return nil
	}
	return c.extra.args
}

// label returns the value of one of the container's labels.
func (c *simContainer) label(key string) (string, bool) {
	if c.shape&kubeletLabels == 0 {
		if c.extra == nil {
			return "", false
		}
		v, ok := c.extra.labels[key]
		return v, ok
	}
	md := &c.sandbox.metadata
	switch key {
	case crilabels.PodName:
		return md.name, true
	case crilabels.PodNamespace:
		return md.namespace, true
	case crilabels.PodUID:
		return md.uid, true
	case crilabels.ContainerName:
		return c.metaName, true
	}
	return "", false
}

// labelMap returns the container's labels in a map of the caller's own.
func (c *simContainer) labelMap() map[string]string {
	if c.shape&kubeletLabels == 0 {
		if c.extra == nil {
			return nil
		}
		return maps.Clone(c.extra.labels)
	}
	md := &c.sandbox.metadata
	return map[string]string{
		crilabels.PodName:       md.name,
		crilabels.PodNamespace:  md.namespace,
		crilabels.PodUID:        md.uid,
		crilabels.ContainerName: c.metaName,
	}
}

// annotationMap returns the container's annotations in a map of the
// caller's own.
func (c *simContainer) annotationMap() map[string]string {
	if c.shape&kubeletAnnotations == 0 {
		if c.extra == nil {
			return nil
		}
		return maps.Clone(c.extra.annotations)
	}
	return map[string]string{restartCountAnnotation: strconv.FormatUint(uint64(c.attempt), 10)}
}

// matches reports whether the container has every label of selector.
func (c *simContainer) matches(selector map[string]string) bool {
	for k, v := range selector {
		if got, ok := c.label(k); !ok || got != v {
			return false
		}
	}
	return true
}

// reservedName is the name the container reserves, as containerd makes
// it from the container's and the sandbox's metadata.
func (c *simContainer) reservedName() string {
	md := c.sandbox.metadata
	return strings.Join([]string{"k8s", c.metaName, md.name, md.namespace, md.uid, strconv.FormatUint(uint64(c.attempt), 10)}, "_")
}

// exitText is how a container exited. The common exits are shared.
type exitText struct {
	code            int32
	reason, message string
}

// commonExits are the exits every container that exits on its own, is
// stopped or is OOM-killed shares.
var commonExits = []*exitText{
	{code: 0, reason: reasonCompleted},
	{code: exitCodeKilled, reason: reasonOOMKilled},
	{code: exitCodeKilled, reason: reasonError},
	{code: 1, reason: reasonError},
}

// exitTextOf returns the exit with the code, reason and message.
func exitTextOf(code int32, reason, message string) *exitText {
	if message == "" {
		for _, e := range commonExits {
			if e.code == code && e.reason == reason {
				return e
			}
		}
	}
	return &exitText{code: code, reason: reason, message: message}
}

// exitCode returns the exit code the status reports: 0 before the
// container exits.
func (e *exitText) exitCode() int32 {
	if e == nil {
		return 0
	}
	return e.code
}

// exitReason returns the reason the status reports: none before the
// container exits.
func (e *exitText) exitReason() string {
	if e == nil {
		return ""
	}
	return e.reason
}

// exitMessage returns the message the status reports, which only a start
// error has.
func (e *exitText) exitMessage() string {
	if e == nil {
		return ""
	}
	return e.message
}

// simSpec is a container's stored spec: the resources last accepted at
// create or update, as containerd keeps them in the container's OCI spec.
// The unified map and rare are replaced, never changed in place, so a copy
// of a simSpec may be read after the lock is released.
type simSpec struct {
	cpuPeriod, cpuQuota, cpuShares, memory, oomScoreAdj, swap int64
	unified                                                   map[string]string
	rare                                                      *rareSpec // nil when it would be empty
}

// rareSpec holds the fields of a spec the kubelet does not set.
type rareSpec struct {
	cpusetCpus, cpusetMems string
	hugepages              []*runtimeapi.HugepageLimit
}

// protoInto sets the fields of r, a new message, to the spec. It shares
// the spec's unified map and hugepage limits, which are never changed.
func (s *simSpec) protoInto(r *runtimeapi.LinuxContainerResources) {
	r.CpuPeriod = s.cpuPeriod
	r.CpuQuota = s.cpuQuota
	r.CpuShares = s.cpuShares
	r.MemoryLimitInBytes = s.memory
	r.OomScoreAdj = s.oomScoreAdj
	r.Unified = s.unified
	r.MemorySwapLimitInBytes = s.swap
	if s.rare != nil {
		r.CpusetCpus, r.CpusetMems, r.HugepageLimits = s.rare.cpusetCpus, s.rare.cpusetMems, s.rare.hugepages
	}
}

// nameOwner is the sandbox or the container that holds a reserved name.
type nameOwner struct {
	sb *simSandbox
	c  *simContainer
}

// id returns the owner's ID, which an error about the name reports.
func (o nameOwner) id() string {
	if o.c != nil {
		return o.c.id
	}
	return o.sb.id
}

// name makes the owner's reserved name again.
func (o nameOwner) name() string {
	if o.c != nil {
		return o.c.reservedName()
	}
	return o.sb.reservedName()
}

// nameIndex holds the reserved names by their hash, so that it keeps no
// name: the owner makes its name again when a hash is found. The rare
// name whose hash another name holds goes to clashes, by name.
type nameIndex struct {
	seed    maphash.Seed
	byHash  map[uint64]nameOwner
	clashes map[string]nameOwner
}

// newNameIndex returns an empty index with a seed of its own.
func newNameIndex() nameIndex {
	return nameIndex{seed: maphash.MakeSeed(), byHash: map[uint64]nameOwner{}}
}

// owner returns who holds the name.
func (x *nameIndex) owner(name string) (nameOwner, bool) {
	if o, ok := x.byHash[maphash.String(x.seed, name)]; ok && o.name() == name {
		return o, true
	}
	o, ok := x.clashes[name]
	return o, ok
}

// reserve gives the name, which nobody holds, to o.
func (x *nameIndex) reserve(name string, o nameOwner) {
	h := maphash.String(x.seed, name)
	if _, taken := x.byHash[h]; !taken {
		x.byHash[h] = o
		return
	}
	if x.clashes == nil {
		x.clashes = map[string]nameOwner{}
	}
	x.clashes[name] = o
}

// release frees the name if o holds it.
func (x *nameIndex) release(name string, o nameOwner) {
	h := maphash.String(x.seed, name)
	if x.byHash[h] == o {
		delete(x.byHash, h)
		return
	}
	if x.clashes[name] == o {
		delete(x.clashes, name)
	}
}

// sandboxIndex and containerIndex return where the record with the ID is,
// or would be, in a list in creation order, which is the order of the IDs
// (compareIDs), and whether it is there. The record "prefix-N" is at N-1
// unless records before it were removed, so that place is looked at first.
func sandboxIndex(list []*simSandbox, id string) (int, bool) {
	return indexByID(list, id, "sb-", func(sb *simSandbox) string { return sb.id })
}

// containerIndex is sandboxIndex for containers.
func containerIndex(list []*simContainer, id string) (int, bool) {
	return indexByID(list, id, "ctr-", func(c *simContainer) string { return c.id })
}

// indexByID is the search both do, on records whose IDs are prefix-N.
func indexByID[T any](list []T, id, prefix string, idOf func(T) string) (int, bool) {
	if i := guessIndex(id, prefix); i < len(list) && idOf(list[i]) == id {
		return i, true
	}
	lo, hi := 0, len(list)
	for lo < hi {
		if h := int(uint(lo+hi) >> 1); compareIDs(idOf(list[h]), id) < 0 {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return lo, lo < len(list) && idOf(list[lo]) == id
}

// guessIndex returns N-1 for an ID "prefix-N", where the record is when
// none before it was removed, and a number too large to be an index for
// any other ID.
func guessIndex(id, prefix string) int {
	const none = math.MaxInt
	digits, ok := strings.CutPrefix(id, prefix)
	if !ok || digits == "" || len(digits) > 18 {
		return none
	}
	n := 0
	for i := 0; i < len(digits); i++ {
		d := digits[i] - '0'
		if d > 9 {
			return none
		}
		n = n*10 + int(d)
	}
	if n == 0 {
		return none
	}
	return n - 1
}

// recentStatuses is how many containers the runtime keeps status answers
// for. The kubelet reads the status of each container of a pod before and
// after it changes the pod, so the answers are kept for a pod's worth of
// containers: enough that a resize makes only the new status of the
// container it changed. Keeping one for every container would cost more
// memory than the rest of the container's record.
const recentStatuses = 4

// recentStatus is the status answer and the parts of the answers that
// never change for one of the containers read most recently. Answers are
// for reading, so every answer shares the parts.
type recentStatus struct {
	c       *simContainer
	used    uint64 // when it was last used, in calls of recentLocked
	version uint32 // the container's version status was made from
	status  *runtimeapi.ContainerStatusResponse
	attrs   *runtimeapi.ContainerAttributes // made on the first ContainerStats

	meta        *runtimeapi.ContainerMetadata
	image       *runtimeapi.ImageSpec
	labels      map[string]string
	annotations map[string]string
}

// recentLocked returns the container's entry among the recent ones,
// making one in the place of the least recently used if it has none. The
// caller holds SimContainerd.mu.
func (m *SimContainerd) recentLocked(c *simContainer) *recentStatus {
	m.tick++
	var lru *recentStatus
	for i := range m.recent {
		e := &m.recent[i]
		if e.c == c {
			e.used = m.tick
			return e
		}
		if lru == nil || e.used < lru.used {
			lru = e
		}
	}
	*lru = recentStatus{
		c:           c,
		used:        m.tick,
		meta:        m.metadataLocked(c.metaName, c.attempt),
		image:       m.imageLocked(c.image),
		labels:      c.labelMap(),
		annotations: m.annotationsLocked(c),
	}
	return lru
}

// metadataLocked returns a metadata message for answers, one of the last
// few made if it has the same name and attempt: the pods of a node mostly
// name their containers alike. The caller holds SimContainerd.mu.
func (m *SimContainerd) metadataLocked(name string, attempt uint32) *runtimeapi.ContainerMetadata {
	for _, md := range m.metadata {
		if md != nil && md.Name == name && md.Attempt == attempt {
			return md
		}
	}
	md := &runtimeapi.ContainerMetadata{Name: name, Attempt: attempt}
	m.metadata[m.nextMetadata] = md
	m.nextMetadata = (m.nextMetadata + 1) % len(m.metadata)
	return md
}

// imageLocked returns an image message for answers, the last one made if
// it names the same image: the containers of a node mostly run one image.
// The caller holds SimContainerd.mu.
func (m *SimContainerd) imageLocked(image string) *runtimeapi.ImageSpec {
	if m.image == nil || m.image.Image != image {
		m.image = &runtimeapi.ImageSpec{Image: image}
	}
	return m.image
}

// annotationsLocked returns the container's annotations for answers. The
// kubelet's annotations of the first attempts are shared by every container
// with the attempt. The caller holds SimContainerd.mu.
func (m *SimContainerd) annotationsLocked(c *simContainer) map[string]string {
	if c.shape&kubeletAnnotations == 0 || int(c.attempt) >= len(m.restartCounts) {
		return c.annotationMap()
	}
	a := &m.restartCounts[c.attempt]
	if *a == nil {
		*a = c.annotationMap()
	}
	return *a
}

// changedLocked records that what ContainerStatus reports of the container
// changed. When the version wraps around, the entry goes, so that a status
// made 2^32 changes ago cannot pass for current. The caller holds
// SimContainerd.mu.
func (m *SimContainerd) changedLocked(c *simContainer) {
	c.version++
	if c.version == 0 {
		m.forgetLocked(c)
	}
}

// forgetLocked drops a container's recent entry, when it is removed or its
// version wraps around. The caller holds SimContainerd.mu.
func (m *SimContainerd) forgetLocked(c *simContainer) {
	for i := range m.recent {
		if m.recent[i].c == c {
			m.recent[i] = recentStatus{}
		}
	}
}

// statusLocked returns the container's status answer, made again only if
// the container changed since it was last made. The caller holds
// SimContainerd.mu.
func (m *SimContainerd) statusLocked(c *simContainer) *runtimeapi.ContainerStatusResponse {
	e := m.recentLocked(c)
	if e.status != nil && e.version == c.version {
		return e.status
	}
	// The answer's four messages are made in one allocation: they are
	// made, kept and dropped together.
	answer := &struct {
		resp      runtimeapi.ContainerStatusResponse
		status    runtimeapi.ContainerStatus
		resources runtimeapi.ContainerResources
		linux     runtimeapi.LinuxContainerResources
	}{}
	c.spec.protoInto(&answer.linux)
	answer.resources.Linux = &answer.linux
	answer.status = runtimeapi.ContainerStatus{
		Id:          c.id,
		Metadata:    e.meta,
		State:       c.state,
		CreatedAt:   c.createdAt,
		StartedAt:   c.startedAt,
		FinishedAt:  c.finishedAt,
		ExitCode:    c.exit.exitCode(),
		Image:       e.image,
		ImageRef:    c.image,
		Reason:      c.exit.exitReason(),
		Message:     c.exit.exitMessage(),
		Labels:      e.labels,
		Annotations: e.annotations,
		Resources:   &answer.resources,
	}
	answer.resp.Status = &answer.status
	e.status = &answer.resp
	e.version = c.version
	return e.status
}

// attributesLocked returns the container's ContainerStats attributes. The
// caller holds SimContainerd.mu.
func (m *SimContainerd) attributesLocked(c *simContainer) *runtimeapi.ContainerAttributes {
	if c.removed {
		// Removed while its usage was read: not worth an entry.
		return &runtimeapi.ContainerAttributes{Id: c.id, Metadata: &runtimeapi.ContainerMetadata{Name: c.metaName, Attempt: c.attempt},
			Labels: c.labelMap(), Annotations: c.annotationMap()}
	}
	e := m.recentLocked(c)
	if e.attrs == nil {
		e.attrs = &runtimeapi.ContainerAttributes{Id: c.id, Metadata: e.meta, Labels: e.labels, Annotations: e.annotations}
	}
	return e.attrs
}

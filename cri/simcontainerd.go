package cri

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// Errors of SimContainerd beyond those every Runtime shares, for
// errors.Is. Each is wrapped with the ID it concerns.
var (
	// ErrNotRunning means the call needs a running container: ExecSync,
	// Exit and SetMemoryUsage on a container that is created or exited.
	ErrNotRunning = errors.New("container is not running")
	// ErrNotCreated means StartContainer was called on a container that is
	// not in the CREATED state; like containerd, a container starts once.
	ErrNotCreated = errors.New("container is not in the created state")
	// ErrSandboxNotReady means CreateContainer was called in a stopped sandbox.
	ErrSandboxNotReady = errors.New("sandbox is not ready")
	// ErrNameReserved means a sandbox or container with the same metadata
	// (name, pod, namespace, uid, attempt) exists, as containerd's name
	// reservation reports it; the kubelet avoids it by raising the attempt.
	ErrNameReserved = errors.New("name is reserved")
	// ErrInvalidArgument means a request lacks a field the runtime needs,
	// such as the metadata of a config.
	ErrInvalidArgument = errors.New("invalid argument")
)

// MemoryLimitError is runc's answer when the cgroup v1 kernel refuses a
// memory limit below the cgroup's usage with EBUSY (opencontainers/cgroups
// fs/memory.go): its message is runc's, with the usage and peak usage read
// from memory.usage_in_bytes and memory.max_usage_in_bytes. It unwraps to the
// cgroup write's error, so errors.Is(err, syscall.EBUSY) holds.
type MemoryLimitError struct {
	Limit int64 // the limit that was refused, in bytes
	Usage int64 // memory.usage_in_bytes when it was refused
	Peak  int64 // memory.max_usage_in_bytes when it was refused
	Err   error // the cgroup write's error
}

// Error returns runc's message for the refused limit.
func (e *MemoryLimitError) Error() string {
	if e == nil {
		return "<nil>"
	}
	return fmt.Sprintf("unable to set memory limit to %d (current usage: %d, peak usage: %d)", e.Limit, e.Usage, e.Peak)
}

// Unwrap returns the cgroup write's error.
func (e *MemoryLimitError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// CgroupModel is the part of a simulated cgroup hierarchy
// (cgroup.SimKernel) that lets the runtime charge memory to a container's
// cgroup and hear about the OOM kills that follow. A real hierarchy has no
// such model: usage comes from real processes there (cgroupfs.FS provides
// one by starting them).
type CgroupModel interface {
	SetUsage(path string, bytes int64) error
	OnOOMKill(fn func(path string))
}

// SimContainerdOption configures a SimContainerd runtime.
type SimContainerdOption func(*SimContainerd)

// WithContainerWeight sets how the runtime turns cpu shares into a cgroup v2
// cpu.weight for container cgroups. The default is cgconfig.QuadraticWeight,
// the formula of runc >= 1.3.2; cgconfig.LinearWeight is older runc's.
func WithContainerWeight(f cgconfig.WeightFunc) SimContainerdOption {
	return func(m *SimContainerd) { m.weight = f }
}

// WithDriver sets the cgroup driver, which decides how container cgroups
// are named below the pod cgroup (cgconfig.ContainerCgroupName). The default
// is cgroup.DriverCgroupfs.
func WithDriver(d cgroup.Driver) SimContainerdOption {
	return func(m *SimContainerd) { m.driver = d }
}

// WithClock sets the source of the timestamps the runtime reports
// (createdAt, startedAt, finishedAt, stats). The default is a deterministic
// clock that starts at 2026-01-01T00:00:00Z and moves one second a reading,
// so that the same calls give the same statuses.
func WithClock(now func() time.Time) SimContainerdOption {
	return func(m *SimContainerd) { m.now = now }
}

// WithCgroupModel sets the cgroup model through which the runtime charges
// memory to containers and learns of OOM kills. By default
// NewSimContainerd finds it in the cgroup.Manager itself, or in the
// managers it wraps through an Unwrap() cgroup.Manager method; pass it here
// when the Manager is wrapped by a decorator without Unwrap.
func WithCgroupModel(model CgroupModel) SimContainerdOption {
	return func(m *SimContainerd) { m.model = model }
}

// WithSwapController tells the runtime that the host has a swap controller
// (memory.memsw.* on v1, memory.swap.max on v2). containerd then stores a
// swap limit equal to the memory limit when a request sets a memory limit
// and no swap limit, and reports it in ContainerStatus.resources; without a
// swap controller it stores no swap limit at all. The default is false. The
// runtime writes no swap file either way: cgroup.Values has none.
func WithSwapController(on bool) SimContainerdOption {
	return func(m *SimContainerd) { m.swap = on }
}

// SimContainerd is a simulated containerd: an in-memory Runtime that
// behaves like containerd's CRI plugin with runc for the calls the resize
// path makes, so that tests and simulations need no real runtime. It
// writes container cgroups through a cgroup.Manager at CreateContainer and
// UpdateContainerResources, keeps each container's resources as its stored
// "spec", and reports ContainerStatus.resources from that spec rather than
// from the cgroup files.
//
// IDs are deterministic: sandboxes "sb-1", "sb-2", ... and containers
// "ctr-1", "ctr-2", ... in creation order; process IDs are 1000, 1001, ... in
// start order.
//
// It keeps a compact record of each sandbox and container, not the configs
// it was given, and makes its answers from the records when asked: a
// simulated node holds hundreds of containers for as long as it lives.
//
// SimContainerd is safe for concurrent use. One mutex guards its lists and
// the containers' fields and is never held across a call to the cgroup
// manager. Each container also has an operation lock, held across its
// cgroup writes the way containerd holds the container's status lock
// across runc update, so that start, stop, update and remove of one
// container are serialised while calls on other containers proceed.
type SimContainerd struct {
	cg     cgroup.Manager
	model  CgroupModel
	weight cgconfig.WeightFunc
	driver cgroup.Driver
	now    func() time.Time
	swap   bool

	mu sync.Mutex
	// sandboxes and containers are in creation order, which is the order
	// of their IDs (compareIDs): an ID is found by binary search.
	sandboxes     []*simSandbox
	containers    []*simContainer
	names         nameIndex // who holds each reserved name
	nextSandbox   int
	nextContainer int
	nextPID       int

	// The answers kept (simstate.go), guarded by mu: the status of the
	// containers read most recently, and parts that answers for different
	// containers share.
	recent        [recentStatuses]recentStatus
	tick          uint64                           // counts the calls of recentLocked
	image         *runtimeapi.ImageSpec            // the image message made last
	metadata      [8]*runtimeapi.ContainerMetadata // the metadata messages made last
	nextMetadata  int                              // where the next metadata message made goes
	restartCounts [4]map[string]string             // the kubelet's annotations of the first attempts

	// changes counts the calls that may change the runtime (Changes).
	changes atomic.Uint64
}

// The exit codes and reasons the runtime reports, as containerd does.
const (
	exitCodeKilled    = 137 // 128 + SIGKILL: an OOM kill or a forced removal
	exitCodeStartErr  = 128
	reasonOOMKilled   = "OOMKilled"
	reasonCompleted   = "Completed"
	reasonError       = "Error"
	reasonStartError  = "StartError"
	firstPID          = 1000
	defaultClockStart = 1767225600 // 2026-01-01T00:00:00Z
)

// errSimNotMade is what a SimContainerd that NewSimContainerd did not make
// (nil, or the zero value, which has no cgroups and no clock) answers every
// call that has an error result with; the others answer a zero value.
var errSimNotMade = errors.New("cri: SimContainerd not made by NewSimContainerd")

// made reports whether NewSimContainerd made m: names.byHash is set there and
// never replaced.
func (m *SimContainerd) made() bool { return m != nil && m.names.byHash != nil }

// Changes counts the calls that may have changed the runtime since it was
// made (every sandbox and container call but the reads, SetMemoryUsage,
// Exit and the kernel's OOM kills), whoever made them and whether or not
// they changed anything. A driver that notes the count after its own
// calls can tell that nobody else changed the runtime since.
func (m *SimContainerd) Changes() uint64 {
	if m == nil {
		return 0
	}
	return m.changes.Load()
}

// NewSimContainerd returns a simulated runtime that writes container
// cgroups through cg. If cg is (or wraps) a cgroup model such as
// *cgroup.SimKernel, the runtime charges memory usage to it and turns its
// OOM kills into container exits with exit code 137 and reason "OOMKilled".
// A nil cg stands for a simulated hierarchy of the runtime's own
// (cgroup.NewSimKernel(cgroup.V2)).
func NewSimContainerd(cg cgroup.Manager, opts ...SimContainerdOption) *SimContainerd {
	if cg == nil {
		// Containers need cgroups to run in: a nil Manager gets a
		// simulated hierarchy of its own, of the default version.
		cg = cgroup.NewSimKernel(cgroup.V2)
	}
	m := &SimContainerd{
		cg:      cg,
		weight:  cgconfig.QuadraticWeight,
		driver:  cgroup.DriverCgroupfs,
		names:   newNameIndex(),
		nextPID: firstPID,
	}
	for _, o := range opts {
		if o != nil {
			o(m)
		}
	}
	if m.now == nil {
		var n atomic.Int64
		m.now = func() time.Time { return time.Unix(defaultClockStart+n.Add(1)-1, 0).UTC() }
	}
	if m.model == nil {
		m.model = findModel(cg)
	}
	if m.model != nil {
		m.model.OnOOMKill(m.oomKilled)
	}
	return m
}

// findModel looks for a CgroupModel in cg and in the managers it wraps.
func findModel(cg cgroup.Manager) CgroupModel {
	for range 16 { // decorator chains are short; the bound guards against a cycle
		if model, ok := cg.(CgroupModel); ok {
			return model
		}
		u, ok := cg.(interface{ Unwrap() cgroup.Manager })
		if !ok {
			return nil
		}
		cg = u.Unwrap()
	}
	return nil
}

// RunPodSandbox records the sandbox and creates its cgroup parent
// (config.Linux.CgroupParent, relative to the cgroup root; a leading "/" is
// ignored, and with the systemd driver a bare slice name such as
// "kubepods-burstable-pod1.slice" is expanded as runc does). The kubelet
// normally creates the pod cgroup first; creating it again is harmless.
func (m *SimContainerd) RunPodSandbox(ctx context.Context, config *runtimeapi.PodSandboxConfig, runtimeHandler string) (string, error) {
	if !m.made() {
		return "", errSimNotMade
	}
	m.changes.Add(1)
	md := config.GetMetadata()
	if md == nil {
		return "", fmt.Errorf("run pod sandbox: sandbox config must include metadata: %w", ErrInvalidArgument)
	}
	parent, err := cgroupParent(config.GetLinux().GetCgroupParent(), m.driver)
	if err != nil {
		return "", fmt.Errorf("run pod sandbox %s/%s: %w", md.Namespace, md.Name, err)
	}
	if parent != "" {
		if err := m.cg.Create(parent); err != nil {
			return "", fmt.Errorf("run pod sandbox %s/%s: create cgroup parent %s: %w", md.Namespace, md.Name, parent, err)
		}
	}
	name := strings.Join([]string{"k8s", "POD", md.Name, md.Namespace, md.Uid, strconv.FormatUint(uint64(md.Attempt), 10)}, "_")
	now := m.now().UnixNano()
	meta := podMetadata{name: md.Name, uid: md.Uid, namespace: md.Namespace, attempt: md.Attempt}
	podLabels, labels := sandboxLabels(config.GetLabels(), meta)
	annotations := maps.Clone(config.GetAnnotations())

	m.mu.Lock()
	defer m.mu.Unlock()
	if owner, ok := m.names.owner(name); ok {
		return "", fmt.Errorf("run pod sandbox: failed to reserve sandbox name %q: reserved for %q: %w", name, owner.id(), ErrNameReserved)
	}
	m.nextSandbox++
	sb := &simSandbox{
		id:             "sb-" + strconv.Itoa(m.nextSandbox),
		metadata:       meta,
		podLabels:      podLabels,
		labels:         labels,
		annotations:    annotations,
		runtimeHandler: runtimeHandler,
		cgroupParent:   parent,
		state:          runtimeapi.PodSandboxState_SANDBOX_READY,
		createdAt:      now,
	}
	// IDs grow with nextSandbox, so the list stays in creation order.
	m.sandboxes = append(m.sandboxes, sb)
	m.names.reserve(name, nameOwner{sb: sb})
	return sb.id, nil
}

// sandboxLocked returns the sandbox with the ID, or nil. The caller holds
// m.mu.
func (m *SimContainerd) sandboxLocked(id string) *simSandbox {
	if i, ok := sandboxIndex(m.sandboxes, id); ok {
		return m.sandboxes[i]
	}
	return nil
}

// containerLocked returns the container with the ID, or nil. The caller
// holds m.mu.
func (m *SimContainerd) containerLocked(id string) *simContainer {
	if i, ok := containerIndex(m.containers, id); ok {
		return m.containers[i]
	}
	return nil
}

// cgroupParent turns a sandbox's CgroupParent into a path relative to the
// cgroup root.
func cgroupParent(parent string, driver cgroup.Driver) (string, error) {
	parent = strings.Trim(parent, "/")
	if driver == cgroup.DriverSystemd && parent != "" && !strings.Contains(parent, "/") && strings.HasSuffix(parent, ".slice") {
		return expandSlice(parent)
	}
	return parent, nil
}

// expandSlice expands a systemd slice name into its path the way runc's
// systemd driver does (cgconfig.ExpandSlice): "a-b-c.slice" lives in
// "a.slice/a-b.slice/a-b-c.slice".
func expandSlice(slice string) (string, error) {
	path, err := cgconfig.ExpandSlice(slice)
	if err != nil {
		return "", fmt.Errorf("%w: %w", err, ErrInvalidArgument)
	}
	return path, nil
}

// StopPodSandbox stops every running container of the sandbox (as a
// kubelet-requested stop: exit code 0, reason "Completed") and marks the
// sandbox NOTREADY. Stopping a stopped sandbox is not an error.
func (m *SimContainerd) StopPodSandbox(ctx context.Context, podSandboxID string) error {
	if !m.made() {
		return errSimNotMade
	}
	m.changes.Add(1)
	m.mu.Lock()
	sb := m.sandboxLocked(podSandboxID)
	if sb == nil {
		m.mu.Unlock()
		return fmt.Errorf("stop pod sandbox %q: %w", podSandboxID, ErrNotFound)
	}
	ctrs := m.sandboxContainersLocked(sb)
	m.mu.Unlock()

	for _, c := range ctrs {
		if err := m.stopContainer(c); err != nil && !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("stop pod sandbox %q: %w", podSandboxID, err)
		}
	}
	m.mu.Lock()
	sb.state = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	m.mu.Unlock()
	return nil
}

// RemovePodSandbox removes the sandbox and, as containerd does, every
// container in it, stopping those that run and deleting their cgroups. It
// leaves the pod cgroup (CgroupParent) alone: the kubelet owns it. Removing
// a sandbox that does not exist is not an error (the CRI contract: the call
// is idempotent).
func (m *SimContainerd) RemovePodSandbox(ctx context.Context, podSandboxID string) error {
	if !m.made() {
		return errSimNotMade
	}
	m.changes.Add(1)
	m.mu.Lock()
	sb := m.sandboxLocked(podSandboxID)
	if sb == nil {
		m.mu.Unlock()
		return nil
	}
	// NOTREADY first, so that no container is created while it is removed.
	sb.state = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	ctrs := m.sandboxContainersLocked(sb)
	m.mu.Unlock()

	for _, c := range ctrs {
		if err := m.removeContainer(c); err != nil {
			return fmt.Errorf("remove pod sandbox %q: %w", podSandboxID, err)
		}
	}
	name := sb.reservedName()
	m.mu.Lock()
	defer m.mu.Unlock()
	if i, ok := sandboxIndex(m.sandboxes, podSandboxID); ok && m.sandboxes[i] == sb {
		m.sandboxes = slices.Delete(m.sandboxes, i, i+1)
		m.names.release(name, nameOwner{sb: sb})
	}
	return nil
}

// sandboxContainersLocked returns the sandbox's containers in creation order.
func (m *SimContainerd) sandboxContainersLocked(sb *simSandbox) []*simContainer {
	var out []*simContainer
	for _, c := range m.containers {
		if c.sandbox == sb {
			out = append(out, c)
		}
	}
	return out
}

// ListPodSandbox returns the sandboxes that match filter (Id, State,
// LabelSelector), in creation order.
func (m *SimContainerd) ListPodSandbox(ctx context.Context, filter *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	if !m.made() {
		return nil, errSimNotMade
	}
	m.mu.Lock()
	sbs := m.sandboxes
	if id := filter.GetId(); id != "" {
		i, ok := sandboxIndex(sbs, id)
		if !ok {
			i = len(sbs)
		}
		sbs = sbs[i:min(i+1, len(sbs))]
	}
	out := make([]*runtimeapi.PodSandbox, 0, len(sbs))
	for _, sb := range sbs {
		if st := filter.GetState(); st != nil && st.State != sb.state {
			continue
		}
		if !sb.matches(filter.GetLabelSelector()) {
			continue
		}
		out = append(out, &runtimeapi.PodSandbox{
			Id:             sb.id,
			Metadata:       sb.metadata.proto(),
			State:          sb.state,
			CreatedAt:      sb.createdAt,
			Labels:         sb.labelMap(),
			Annotations:    maps.Clone(sb.annotations),
			RuntimeHandler: sb.runtimeHandler,
		})
	}
	m.mu.Unlock()
	return out, nil
}

// compareIDs orders "prefix-N" IDs by N, which is their creation order.
func compareIDs(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

// UpdatePodSandboxResources records the request for the sandbox, as
// containerd (v2.3+) and CRI-O do; it writes no cgroup, since the kubelet
// owns the pod cgroup. SandboxResources returns (a copy of) what was
// recorded. The request is kept as given, as a message sent is never
// changed by the kubelet: the caller must not change it afterwards.
func (m *SimContainerd) UpdatePodSandboxResources(ctx context.Context, request *runtimeapi.UpdatePodSandboxResourcesRequest) (*runtimeapi.UpdatePodSandboxResourcesResponse, error) {
	if !m.made() {
		return nil, errSimNotMade
	}
	m.changes.Add(1)
	if request == nil {
		return nil, fmt.Errorf("update pod sandbox resources: empty request: %w", ErrInvalidArgument)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	sb := m.sandboxLocked(request.PodSandboxId)
	if sb == nil {
		return nil, fmt.Errorf("update pod sandbox resources %q: %w", request.PodSandboxId, ErrNotFound)
	}
	sb.resources = request
	return emptySandboxResponse, nil
}

// emptySandboxResponse is every UpdatePodSandboxResources answer: it has
// nothing in it to change.
var emptySandboxResponse = &runtimeapi.UpdatePodSandboxResourcesResponse{}

// SandboxResources returns a copy of the last UpdatePodSandboxResources
// request the runtime accepted for the sandbox, or nil if there was none.
func (m *SimContainerd) SandboxResources(podSandboxID string) *runtimeapi.UpdatePodSandboxResourcesRequest {
	if !m.made() {
		return nil
	}
	m.mu.Lock()
	var rec *runtimeapi.UpdatePodSandboxResourcesRequest
	if sb := m.sandboxLocked(podSandboxID); sb != nil {
		rec = sb.resources
	}
	m.mu.Unlock()
	if rec == nil {
		return nil
	}
	return cloneSandboxRequest(rec)
}

// CreateContainer creates the container in the sandbox: it creates the
// container cgroup (cgconfig.ContainerCgroupName below the sandbox's cgroup
// parent) and writes config.Linux.Resources to it the way runc does, then
// stores those resources as the container's spec. The container is CREATED,
// with the attempt of config.Metadata. The runtime keeps what it reports of
// the configs, not the configs: the resources as integers, and labels and
// annotations as the kubelet shapes them or else as copies. Only the
// resources' unified map is kept as given (the kubelet shares one between
// all containers): the caller must not change it afterwards, and the
// kubelet never does.
func (m *SimContainerd) CreateContainer(ctx context.Context, podSandboxID string, config *runtimeapi.ContainerConfig, sandboxConfig *runtimeapi.PodSandboxConfig) (string, error) {
	if !m.made() {
		return "", errSimNotMade
	}
	m.changes.Add(1)
	md := config.GetMetadata()
	if md == nil {
		return "", fmt.Errorf("create container in sandbox %q: container config must include metadata: %w", podSandboxID, ErrInvalidArgument)
	}
	spec := m.merge(simSpec{}, config.GetLinux().GetResources())
	spec.oomScoreAdj = config.GetLinux().GetResources().GetOomScoreAdj()

	m.mu.Lock()
	sb := m.sandboxLocked(podSandboxID)
	if sb == nil {
		m.mu.Unlock()
		return "", fmt.Errorf("create container in sandbox %q: %w", podSandboxID, ErrNotFound)
	}
	if sb.state != runtimeapi.PodSandboxState_SANDBOX_READY {
		m.mu.Unlock()
		return "", fmt.Errorf("create container in sandbox %q: %w", podSandboxID, ErrSandboxNotReady)
	}
	name := strings.Join([]string{"k8s", md.Name, sb.metadata.name, sb.metadata.namespace, sb.metadata.uid, strconv.FormatUint(uint64(md.Attempt), 10)}, "_")
	if owner, ok := m.names.owner(name); ok {
		m.mu.Unlock()
		return "", fmt.Errorf("create container in sandbox %q: failed to reserve container name %q: reserved for %q: %w", podSandboxID, name, owner.id(), ErrNameReserved)
	}
	m.nextContainer++
	id := "ctr-" + strconv.Itoa(m.nextContainer)
	// The record holds the name from here on: all but its creation time is
	// set now.
	c := &simContainer{
		id:       id,
		sandbox:  sb,
		cgroup:   strings.TrimPrefix(cgconfig.ContainerCgroupName(sb.cgroupParent, id, m.driver), "/"),
		metaName: md.Name,
		image:    config.GetImage().GetImage(),
		attempt:  md.Attempt,
		spec:     spec,
		state:    runtimeapi.ContainerState_CONTAINER_CREATED,
	}
	c.shape, c.extra = containerAttributes(config, sb, md.Attempt)
	owner := nameOwner{c: c}
	m.names.reserve(name, owner)
	m.mu.Unlock()

	release := func() {
		m.mu.Lock()
		m.names.release(name, owner)
		m.mu.Unlock()
	}
	path := c.cgroup
	if err := m.cg.Create(path); err != nil {
		release()
		return "", fmt.Errorf("create container %q: create cgroup: %w", id, err)
	}
	if _, err := m.setValues(path, spec); err != nil {
		_ = m.cg.Delete(path) // best effort: the create failed either way
		release()
		return "", fmt.Errorf("create container %q: %w", id, err)
	}

	// Nobody reads createdAt before the container is listed.
	c.createdAt = m.now().UnixNano()
	m.mu.Lock()
	if m.sandboxLocked(podSandboxID) != sb {
		// The sandbox was removed while the cgroup was written.
		m.names.release(name, owner)
		m.mu.Unlock()
		_ = m.cg.Delete(path)
		return "", fmt.Errorf("create container in sandbox %q: %w", podSandboxID, ErrNotFound)
	}
	// A container created concurrently with a higher ID may be listed
	// already: insert in ID order.
	i, _ := containerIndex(m.containers, id)
	m.containers = slices.Insert(m.containers, i, c)
	m.mu.Unlock()
	return id, nil
}

// lookup returns the container with the ID, or an error wrapping ErrNotFound.
func (m *SimContainerd) lookup(op, id string) (*simContainer, error) {
	m.mu.Lock()
	c := m.containerLocked(id)
	m.mu.Unlock()
	if c == nil {
		return nil, fmt.Errorf("%s %q: %w", op, id, ErrNotFound)
	}
	return c, nil
}

// StartContainer starts a CREATED container: it applies the stored spec to
// the container cgroup (an update while CREATED only stored it; containerd
// applies the spec when it creates the task at start), gives it a new
// process ID and makes it RUNNING. If the cgroup write fails the container
// exits with exit code 128 and reason "StartError", as in containerd.
func (m *SimContainerd) StartContainer(ctx context.Context, containerID string) error {
	if !m.made() {
		return errSimNotMade
	}
	m.changes.Add(1)
	c, err := m.lookup("start container", containerID)
	if err != nil {
		return err
	}
	c.op.Lock()
	defer c.op.Unlock()

	m.mu.Lock()
	if c.removed {
		m.mu.Unlock()
		return fmt.Errorf("start container %q: %w", containerID, ErrNotFound)
	}
	if c.state != runtimeapi.ContainerState_CONTAINER_CREATED {
		state := c.state
		m.mu.Unlock()
		return fmt.Errorf("start container %q in state %s: %w", containerID, state, ErrNotCreated)
	}
	spec := c.spec
	m.mu.Unlock()

	_, setErr := m.setValues(c.cgroup, spec)
	now := m.now().UnixNano()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.changedLocked(c)
	if setErr != nil {
		c.state = runtimeapi.ContainerState_CONTAINER_EXITED
		c.finishedAt = now
		c.exit = exitTextOf(exitCodeStartErr, reasonStartError, setErr.Error())
		return fmt.Errorf("start container %q: %w", containerID, setErr)
	}
	c.state = runtimeapi.ContainerState_CONTAINER_RUNNING
	c.startedAt = now
	c.pid = m.nextPID
	m.nextPID++
	return nil
}

// StopContainer stops a running container. A stop the kubelet requests ends
// with exit code 0 and reason "Completed": the model's processes exit
// cleanly on SIGTERM (a real one may report 143 or 137 instead). Its memory
// usage drops to 0. Stopping a container that is not running is not an
// error, and a CREATED container stays CREATED, as in containerd.
func (m *SimContainerd) StopContainer(ctx context.Context, containerID string, timeout int64) error {
	if !m.made() {
		return errSimNotMade
	}
	m.changes.Add(1)
	c, err := m.lookup("stop container", containerID)
	if err != nil {
		return err
	}
	return m.stopContainer(c)
}

func (m *SimContainerd) stopContainer(c *simContainer) error {
	c.op.Lock()
	defer c.op.Unlock()
	m.mu.Lock()
	removed, running := c.removed, c.state == runtimeapi.ContainerState_CONTAINER_RUNNING
	m.mu.Unlock()
	if removed {
		return fmt.Errorf("stop container %q: %w", c.id, ErrNotFound)
	}
	if !running {
		return nil
	}
	return m.exit(c, 0, reasonCompleted)
}

// exit ends a running container's process: its usage drops to 0 and it is
// EXITED with the code and reason. The caller holds c.op.
func (m *SimContainerd) exit(c *simContainer, code int32, reason string) error {
	if m.model != nil {
		if err := m.model.SetUsage(c.cgroup, 0); err != nil && !errors.Is(err, cgroup.ErrNotExist) {
			return fmt.Errorf("container %q exits: release memory: %w", c.id, err)
		}
	}
	now := m.now().UnixNano()
	m.mu.Lock()
	if c.state == runtimeapi.ContainerState_CONTAINER_RUNNING {
		m.exitedLocked(c, now, code, reason)
	}
	m.mu.Unlock()
	return nil
}

// exitedLocked makes a running container EXITED with the code and reason,
// keeping the message it has. The caller holds m.mu.
func (m *SimContainerd) exitedLocked(c *simContainer, now int64, code int32, reason string) {
	c.state = runtimeapi.ContainerState_CONTAINER_EXITED
	c.finishedAt = now
	c.exit = exitTextOf(code, reason, c.exit.exitMessage())
	c.pid = 0
	m.changedLocked(c)
}

// Exit makes a running container's process exit with the code and reason,
// as if it had ended on its own. An empty reason becomes "Completed" for
// exit code 0 and "Error" otherwise, as containerd reports them.
func (m *SimContainerd) Exit(containerID string, exitCode int32, reason string) error {
	if !m.made() {
		return errSimNotMade
	}
	m.changes.Add(1)
	c, err := m.lookup("exit container", containerID)
	if err != nil {
		return err
	}
	if reason == "" {
		reason = reasonError
		if exitCode == 0 {
			reason = reasonCompleted
		}
	}
	c.op.Lock()
	defer c.op.Unlock()
	m.mu.Lock()
	removed, running := c.removed, c.state == runtimeapi.ContainerState_CONTAINER_RUNNING
	m.mu.Unlock()
	switch {
	case removed:
		return fmt.Errorf("exit container %q: %w", containerID, ErrNotFound)
	case !running:
		return fmt.Errorf("exit container %q: %w", containerID, ErrNotRunning)
	}
	return m.exit(c, exitCode, reason)
}

// oomKilled is the cgroup model's OOM callback: the container whose cgroup
// was killed in exits with 137 and "OOMKilled". The model has already
// dropped the cgroup's usage. It takes only the runtime's mutex, never a
// container's operation lock, because the kill may happen inside a cgroup
// write that an update holds that lock across.
func (m *SimContainerd) oomKilled(path string) {
	m.changes.Add(1)
	now := m.now().UnixNano()
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.containerLocked(containerIDOf(path))
	if c == nil || c.cgroup != path || c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return
	}
	m.exitedLocked(c, now, exitCodeKilled, reasonOOMKilled)
}

// containerIDOf returns the ID in a container cgroup's path, the last
// element as cgconfig.ContainerCgroupName makes it for either driver. The
// container with that ID owns the path only if its cgroup is the path.
func containerIDOf(path string) string {
	base := path[strings.LastIndexByte(path, '/')+1:]
	return strings.TrimSuffix(strings.TrimPrefix(base, "cri-containerd-"), ".scope")
}

// PID returns the process ID of a running container; false if the
// container does not exist or has no process.
func (m *SimContainerd) PID(containerID string) (int, bool) {
	if !m.made() {
		return 0, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.containerLocked(containerID)
	if c == nil || c.pid == 0 {
		return 0, false
	}
	return c.pid, true
}

// SetMemoryUsage makes a running container's processes use this many bytes,
// charged to its cgroup through the cgroup model. On cgroup v2 (and on v1
// above the limit) the model may OOM-kill the container, which then exits
// with "OOMKilled".
func (m *SimContainerd) SetMemoryUsage(containerID string, bytes int64) error {
	if !m.made() {
		return errSimNotMade
	}
	m.changes.Add(1)
	if bytes < 0 {
		return fmt.Errorf("set memory usage of container %q to %d: negative usage: %w", containerID, bytes, ErrInvalidArgument)
	}
	if m.model == nil {
		return fmt.Errorf("set memory usage of container %q: the cgroup manager has no usage model: %w", containerID, errors.ErrUnsupported)
	}
	c, err := m.lookup("set memory usage of container", containerID)
	if err != nil {
		return err
	}
	c.op.Lock()
	defer c.op.Unlock()
	m.mu.Lock()
	removed, running := c.removed, c.state == runtimeapi.ContainerState_CONTAINER_RUNNING
	m.mu.Unlock()
	switch {
	case removed:
		return fmt.Errorf("set memory usage of container %q: %w", containerID, ErrNotFound)
	case !running:
		return fmt.Errorf("set memory usage of container %q: %w", containerID, ErrNotRunning)
	}
	if err := m.model.SetUsage(c.cgroup, bytes); err != nil {
		return fmt.Errorf("set memory usage of container %q: %w", containerID, err)
	}
	return nil
}

// RemoveContainer removes the container, stopping it first if it runs (as
// containerd does), and deletes its cgroup. Removing a container that does
// not exist is not an error (the CRI contract: the call is idempotent).
func (m *SimContainerd) RemoveContainer(ctx context.Context, containerID string) error {
	if !m.made() {
		return errSimNotMade
	}
	m.changes.Add(1)
	m.mu.Lock()
	c := m.containerLocked(containerID)
	m.mu.Unlock()
	if c == nil {
		return nil
	}
	return m.removeContainer(c)
}

func (m *SimContainerd) removeContainer(c *simContainer) error {
	c.op.Lock()
	defer c.op.Unlock()
	m.mu.Lock()
	removed, running := c.removed, c.state == runtimeapi.ContainerState_CONTAINER_RUNNING
	m.mu.Unlock()
	if removed {
		return nil
	}
	if running {
		// A forced removal kills the process.
		if err := m.exit(c, exitCodeKilled, reasonError); err != nil {
			return fmt.Errorf("remove container %q: %w", c.id, err)
		}
	}
	if err := m.cg.Delete(c.cgroup); err != nil {
		return fmt.Errorf("remove container %q: delete cgroup: %w", c.id, err)
	}
	name := c.reservedName()
	m.mu.Lock()
	c.removed = true
	if i, ok := containerIndex(m.containers, c.id); ok && m.containers[i] == c {
		m.containers = slices.Delete(m.containers, i, i+1)
	}
	m.names.release(name, nameOwner{c: c})
	m.forgetLocked(c)
	m.mu.Unlock()
	return nil
}

// ListContainers returns the containers that match filter (Id,
// PodSandboxId, State, LabelSelector), in creation order.
func (m *SimContainerd) ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	if !m.made() {
		return nil, errSimNotMade
	}
	m.mu.Lock()
	cs := m.containers
	if id := filter.GetId(); id != "" {
		i, ok := containerIndex(cs, id)
		if !ok {
			i = len(cs)
		}
		cs = cs[i:min(i+1, len(cs))]
	}
	out := make([]*runtimeapi.Container, 0, len(cs))
	for _, c := range cs {
		if sb := filter.GetPodSandboxId(); sb != "" && sb != c.sandbox.id {
			continue
		}
		if st := filter.GetState(); st != nil && st.State != c.state {
			continue
		}
		if !c.matches(filter.GetLabelSelector()) {
			continue
		}
		out = append(out, &runtimeapi.Container{
			Id:           c.id,
			PodSandboxId: c.sandbox.id,
			Metadata:     &runtimeapi.ContainerMetadata{Name: c.metaName, Attempt: c.attempt},
			Image:        &runtimeapi.ImageSpec{Image: c.image},
			ImageRef:     c.image,
			State:        c.state,
			CreatedAt:    c.createdAt,
			Labels:       c.labelMap(),
			Annotations:  c.annotationMap(),
		})
	}
	m.mu.Unlock()
	return out, nil
}

// ContainerStatus returns the container's status. Status.Resources comes
// from the stored spec, the resources last accepted at create or update,
// not from the cgroup files, as containerd and CRI-O report it. With
// verbose, Info["info"] holds a JSON object shaped like containerd's
// (sandboxID, pid, runtimeSpec.process.args).
//
// The status of the few containers read most recently is kept and shared
// by every call until the container changes: read it, do not change it (a
// gRPC client would hold its own copy; an in-process caller shares the
// simulator's).
func (m *SimContainerd) ContainerStatus(ctx context.Context, containerID string, verbose bool) (*runtimeapi.ContainerStatusResponse, error) {
	if !m.made() {
		return nil, errSimNotMade
	}
	m.mu.Lock()
	c := m.containerLocked(containerID)
	if c == nil {
		m.mu.Unlock()
		return nil, fmt.Errorf("container status %q: %w", containerID, ErrNotFound)
	}
	resp := m.statusLocked(c)
	pid := c.pid
	m.mu.Unlock()
	if !verbose {
		return resp, nil
	}
	info, err := json.Marshal(verboseInfo{SandboxID: c.sandbox.id, Pid: pid, RuntimeSpec: verboseSpec{Process: verboseProcess{Args: c.args()}}})
	if err != nil {
		return nil, fmt.Errorf("container status %q: verbose info: %w", containerID, err)
	}
	return &runtimeapi.ContainerStatusResponse{Status: resp.Status, Info: map[string]string{"info": string(info)}}, nil
}

// verboseInfo is the part of containerd's verbose ContainerStatus "info"
// JSON that the model can fill: the sandbox, the process ID and the
// process's command line from the OCI spec.
type verboseInfo struct {
	SandboxID   string      `json:"sandboxID"`
	Pid         int         `json:"pid"`
	RuntimeSpec verboseSpec `json:"runtimeSpec"`
}

type verboseSpec struct {
	Process verboseProcess `json:"process"`
}

type verboseProcess struct {
	Args []string `json:"args"`
}

// UpdateContainerResources merges the request into the container's stored
// spec as containerd's WithResources does (a 0 or empty field leaves the
// stored value; hugepage limits are appended; unified keys are merged; the
// OOM score is not applied) and, if the container runs, writes the merged
// resources to its cgroup, as runc update does. If the write fails, the
// stored spec keeps its old value and the error says why; cgroup files
// written before the failure keep their new values, as with runc. On cgroup
// v1 a memory limit below usage fails with runc's MemoryLimitError and,
// since memory is written first, changes nothing. On v2 the write succeeds
// and the cgroup model may OOM-kill the container.
//
// If the container is not running, the merged spec is only stored; it is
// applied at start.
func (m *SimContainerd) UpdateContainerResources(ctx context.Context, containerID string, resources *runtimeapi.ContainerResources) error {
	if !m.made() {
		return errSimNotMade
	}
	m.changes.Add(1)
	c, err := m.lookup("update container resources", containerID)
	if err != nil {
		return err
	}
	c.op.Lock()
	defer c.op.Unlock()

	m.mu.Lock()
	if c.removed {
		m.mu.Unlock()
		return fmt.Errorf("update container resources %q: %w", containerID, ErrNotFound)
	}
	old, running := c.spec, c.state == runtimeapi.ContainerState_CONTAINER_RUNNING
	m.mu.Unlock()

	merged := m.merge(old, resources.GetLinux())
	if running {
		if err := m.apply(c.cgroup, merged); err != nil {
			// The stored spec was never replaced: that is containerd's
			// rollback of the spec.
			return err
		}
	}
	m.mu.Lock()
	c.spec = merged
	m.changedLocked(c)
	m.mu.Unlock()
	return nil
}

// apply writes a container's resources to its cgroup for an update and
// wraps a failure as containerd reports runc's: containerd's CRI plugin
// wraps the task error in "failed to update resources" twice (once in the
// status transaction, once around task.Update) and go-runc adds the command
// and its exit status before runc's own message. A user should match on
// runc's part ("unable to set memory limit to ..."), as examples/realhost/README.md §2
// advises; the wrapping is this model's rendering of it.
func (m *SimContainerd) apply(path string, spec simSpec) error {
	failedFile, err := m.setValues(path, spec)
	if err == nil {
		return nil
	}
	if m.cg.Version() == cgroup.V1 && errors.Is(err, syscall.EBUSY) && failedFile == "memory.limit_in_bytes" {
		usage, uerr := m.readInt(path, "memory.usage_in_bytes")
		peak, perr := m.readInt(path, "memory.max_usage_in_bytes")
		if uerr == nil && perr == nil {
			err = &MemoryLimitError{Limit: spec.memory, Usage: usage, Peak: peak, Err: err}
		}
	}
	return fmt.Errorf("failed to update resources: failed to update resources: runc did not terminate successfully: exit status 1: %w", err)
}

func (m *SimContainerd) readInt(path, file string) (int64, error) {
	s, err := m.cg.ReadFile(path, file)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(s, 10, 64)
}

// setValues writes a container's resources to its cgroup at path as runc
// does (values) and returns what cgroup.SetValues returns: the writes Set
// would make, without the []Write, which no caller here keeps, and on
// failure the failed write's file.
func (m *SimContainerd) setValues(path string, spec simSpec) (failedFile string, err error) {
	if k, ok := m.cg.(*cgroup.SimKernel); ok {
		// The simulated kernel itself, the common case, is called
		// directly rather than through the interface, so that the
		// values and what they point at stay on the stack.
		var hold valuesHold
		return k.SetValues(path, m.values(spec, &hold))
	}
	return cgroup.SetValues(m.cg, path, m.values(spec, new(valuesHold)))
}

// valuesHold holds the numbers the Values of a spec point at.
type valuesHold struct {
	memory, quota          int64
	weight, period, shares uint64
}

// values turns a container spec into cgroup file values as runc does.
// v1: cpu.shares, cpu.cfs_period_us and cpu.cfs_quota_us each when non-zero
// (a negative quota is -1, unlimited). v2: cpu.weight from the shares through
// the runtime's WeightFunc; cpu.max when quota or period is non-zero, with a
// quota <= 0 written as "max" and a period of 0 as 100000. Both: the memory
// limit when non-zero, -1 (or any negative) meaning unlimited. With the
// systemd driver the quota is the one runc 1.3 and later write,
// cgconfig.SystemdQuota: rounded up to 10 ms per second, as systemd keeps
// it (runc 1.2 and before wrote the exact quota and left only systemd's
// copy rounded: runc issue #4622, opencontainers/cgroups pull request 4).
// The values point into hold, which the caller provides.
func (m *SimContainerd) values(r simSpec, hold *valuesHold) cgroup.Values {
	var v cgroup.Values
	if l := r.memory; l != 0 {
		if l < 0 {
			l = cgroup.Unlimited
		}
		hold.memory = l
		v.MemoryLimit = &hold.memory
	}
	shares, quota, period := r.cpuShares, r.cpuQuota, r.cpuPeriod
	if m.driver == cgroup.DriverSystemd {
		quota = cgconfig.SystemdQuota(quota, uint64(max(period, 0)))
	}
	if m.cg.Version() == cgroup.V2 {
		if shares > 0 {
			hold.weight = m.weight(uint64(shares))
			v.CPUWeight = &hold.weight
		}
		if quota != 0 || period != 0 {
			if quota <= 0 {
				quota = cgroup.Unlimited
			}
			hold.quota, hold.period = quota, uint64(cgconfig.QuotaPeriod)
			if period > 0 {
				hold.period = uint64(period)
			}
			v.CPUQuota, v.CPUPeriod = &hold.quota, &hold.period
		}
		return v
	}
	if shares > 0 {
		hold.shares = uint64(shares)
		v.CPUShares = &hold.shares
	}
	if period > 0 {
		hold.period = uint64(period)
		v.CPUPeriod = &hold.period
	}
	if quota != 0 {
		if quota < 0 {
			quota = cgroup.Unlimited
		}
		hold.quota = quota
		v.CPUQuota = &hold.quota
	}
	return v
}

// merge returns spec with an update applied, as containerd's WithResources
// does: a 0 or empty field leaves the value; hugepage limits are appended;
// unified keys are merged; OomScoreAdj is not applied (containerd sets it
// at create only). The result shares spec's hugepage limits and unified
// map when the update leaves them as they are, and the update's unified
// map when spec has none (stored specs and sent messages are never changed
// in place).
func (m *SimContainerd) merge(spec simSpec, upd *runtimeapi.LinuxContainerResources) simSpec {
	out := spec
	if upd == nil {
		return out
	}
	if upd.CpuPeriod != 0 {
		out.cpuPeriod = upd.CpuPeriod
	}
	if upd.CpuQuota != 0 {
		out.cpuQuota = upd.CpuQuota
	}
	if upd.CpuShares != 0 {
		out.cpuShares = upd.CpuShares
	}
	if upd.MemoryLimitInBytes != 0 {
		out.memory = upd.MemoryLimitInBytes
		if upd.MemorySwapLimitInBytes == 0 && m.swap {
			out.swap = upd.MemoryLimitInBytes
		}
	}
	if upd.MemorySwapLimitInBytes != 0 && m.swap {
		out.swap = upd.MemorySwapLimitInBytes
	}
	out.rare = mergeRare(spec.rare, upd)
	switch {
	case upd.Unified == nil || holdsAll(spec.unified, upd.Unified):
	case len(spec.unified) == 0:
		// Nothing to merge into: the update's map is the result, shared
		// as messages sent are never changed.
		out.unified = upd.Unified
	default:
		unified := make(map[string]string, len(spec.unified)+len(upd.Unified))
		maps.Copy(unified, spec.unified)
		maps.Copy(unified, upd.Unified)
		out.unified = unified
	}
	return out
}

// mergeRare returns the rare fields of a spec with an update applied: the
// cpusets the update sets, and the update's hugepage limits appended to a
// copy of the spec's. It returns rare itself when the update sets none of
// them, so that an update as the kubelet sends it allocates nothing.
func mergeRare(rare *rareSpec, upd *runtimeapi.LinuxContainerResources) *rareSpec {
	var out rareSpec
	if rare != nil {
		out = *rare
	}
	changed := false
	if upd.CpusetCpus != "" {
		out.cpusetCpus, changed = upd.CpusetCpus, true
	}
	if upd.CpusetMems != "" {
		out.cpusetMems, changed = upd.CpusetMems, true
	}
	copied := false
	for _, h := range upd.HugepageLimits {
		if h == nil {
			continue
		}
		if !copied {
			// The spec's limits are shared with its answers: append to a
			// copy.
			out.hugepages = append(make([]*runtimeapi.HugepageLimit, 0, len(out.hugepages)+len(upd.HugepageLimits)), out.hugepages...)
			copied = true
		}
		out.hugepages = append(out.hugepages, &runtimeapi.HugepageLimit{PageSize: h.PageSize, Limit: h.Limit})
		changed = true
	}
	if !changed {
		return rare
	}
	merged := new(rareSpec) // not &out, which would move out to the heap on every call
	*merged = out
	return merged
}

// holdsAll reports whether have is a map (not nil) that already holds
// every key of add with the same value: merging add changes nothing.
func holdsAll(have, add map[string]string) bool {
	if have == nil {
		return false
	}
	for k, v := range add {
		if cur, ok := have[k]; !ok || cur != v {
			return false
		}
	}
	return true
}

// ContainerStats reports the container's memory usage from its cgroup
// (working set and usage alike: the model has no reclaimable memory).
func (m *SimContainerd) ContainerStats(ctx context.Context, containerID string) (*runtimeapi.ContainerStats, error) {
	if !m.made() {
		return nil, errSimNotMade
	}
	m.mu.Lock()
	c := m.containerLocked(containerID)
	m.mu.Unlock()
	if c == nil {
		return nil, fmt.Errorf("container stats %q: %w", containerID, ErrNotFound)
	}
	usage, err := m.cg.MemoryUsage(c.cgroup)
	if err != nil {
		return nil, fmt.Errorf("container stats %q: %w", containerID, err)
	}
	if usage < 0 {
		usage = 0
	}
	now := m.now().UnixNano()
	// The attributes never change: the answers for a recent container
	// share them (answers are for reading, as the Runtime interface says).
	m.mu.Lock()
	attrs := m.attributesLocked(c)
	m.mu.Unlock()
	// The answer's four messages are made in one allocation.
	answer := &struct {
		stats  runtimeapi.ContainerStats
		cpu    runtimeapi.CpuUsage
		memory runtimeapi.MemoryUsage
		bytes  runtimeapi.UInt64Value
	}{}
	answer.bytes.Value = uint64(usage)
	answer.cpu.Timestamp, answer.cpu.UsageCoreNanoSeconds = now, zeroUsage
	answer.memory.Timestamp, answer.memory.WorkingSetBytes, answer.memory.UsageBytes = now, &answer.bytes, &answer.bytes
	answer.stats.Attributes, answer.stats.Cpu, answer.stats.Memory = attrs, &answer.cpu, &answer.memory
	return &answer.stats, nil
}

// zeroUsage is the cpu usage the model reports: none.
var zeroUsage = &runtimeapi.UInt64Value{}

// ExecSync runs only the command SetMemoryUsage (usage.go) sends to a
// runtime that is not simulated, so that memory usage can be set through any
// decorator; it sets the container's usage as SetMemoryUsage does. Any other
// command fails with an error wrapping errors.ErrUnsupported.
func (m *SimContainerd) ExecSync(ctx context.Context, containerID string, cmd []string, timeout time.Duration) ([]byte, []byte, error) {
	if !m.made() {
		return nil, nil, errSimNotMade
	}
	bytes, ok := parseUsageCommand(containerID, cmd)
	if !ok {
		if _, err := m.lookup("exec in container", containerID); err != nil {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("exec %q in container %q: the in-memory runtime runs no commands: %w", cmd, containerID, errors.ErrUnsupported)
	}
	if err := m.SetMemoryUsage(containerID, bytes); err != nil {
		return nil, nil, err
	}
	return nil, nil, nil
}

// cloneLinux returns a deep copy of r; nil gives an empty message.
func cloneLinux(r *runtimeapi.LinuxContainerResources) *runtimeapi.LinuxContainerResources {
	if r == nil {
		return &runtimeapi.LinuxContainerResources{}
	}
	out := &runtimeapi.LinuxContainerResources{
		CpuPeriod:              r.CpuPeriod,
		CpuQuota:               r.CpuQuota,
		CpuShares:              r.CpuShares,
		MemoryLimitInBytes:     r.MemoryLimitInBytes,
		OomScoreAdj:            r.OomScoreAdj,
		CpusetCpus:             r.CpusetCpus,
		CpusetMems:             r.CpusetMems,
		Unified:                maps.Clone(r.Unified),
		MemorySwapLimitInBytes: r.MemorySwapLimitInBytes,
	}
	if r.HugepageLimits != nil {
		out.HugepageLimits = make([]*runtimeapi.HugepageLimit, 0, len(r.HugepageLimits))
		for _, h := range r.HugepageLimits {
			if h != nil {
				out.HugepageLimits = append(out.HugepageLimits, &runtimeapi.HugepageLimit{PageSize: h.PageSize, Limit: h.Limit})
			}
		}
	}
	return out
}

// cloneLinuxOrNil is cloneLinux that keeps nil as nil.
func cloneLinuxOrNil(r *runtimeapi.LinuxContainerResources) *runtimeapi.LinuxContainerResources {
	if r == nil {
		return nil
	}
	return cloneLinux(r)
}

// cloneSandboxRequest returns a deep copy of an UpdatePodSandboxResources
// request.
func cloneSandboxRequest(r *runtimeapi.UpdatePodSandboxResourcesRequest) *runtimeapi.UpdatePodSandboxResourcesRequest {
	if r == nil {
		return nil
	}
	return &runtimeapi.UpdatePodSandboxResourcesRequest{
		PodSandboxId: r.PodSandboxId,
		Overhead:     cloneLinuxOrNil(r.Overhead),
		Resources:    cloneLinuxOrNil(r.Resources),
	}
}

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

// The oracle of the differential test (simdiff_test.go): SimContainerd as
// it was before its records were made compact, with every package-level
// name prefixed "orc". It shares the package's errors, MemoryLimitError and
// CgroupModel, so that errors compare with errors.Is and errors.As.

// orcSimContainerdOption configures an orcSimContainerd runtime.
type orcSimContainerdOption func(*orcSimContainerd)

// orcWithContainerWeight sets how the runtime turns cpu shares into a cgroup v2
// cpu.weight for container cgroups. The default is cgconfig.QuadraticWeight,
// the formula of runc >= 1.3.2; cgconfig.LinearWeight is older runc's.
func orcWithContainerWeight(f cgconfig.WeightFunc) orcSimContainerdOption {
	return func(m *orcSimContainerd) { m.weight = f }
}

// orcWithDriver sets the cgroup driver, which decides how container cgroups
// are named below the pod cgroup (cgconfig.ContainerCgroupName). The default
// is cgroup.DriverCgroupfs.
func orcWithDriver(d cgroup.Driver) orcSimContainerdOption {
	return func(m *orcSimContainerd) { m.driver = d }
}

// orcWithSwapController tells the runtime that the host has a swap controller
// (memory.memsw.* on v1, memory.swap.max on v2). containerd then stores a
// swap limit equal to the memory limit when a request sets a memory limit
// and no swap limit, and reports it in ContainerStatus.resources; without a
// swap controller it stores no swap limit at all. The default is false. The
// runtime writes no swap file either way: cgroup.Values has none.
func orcWithSwapController(on bool) orcSimContainerdOption {
	return func(m *orcSimContainerd) { m.swap = on }
}

// orcSimContainerd is a simulated containerd: an in-memory Runtime that
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
// orcSimContainerd is safe for concurrent use. One mutex guards its maps and the
// containers' fields and is never held across a call to the cgroup manager.
// Each container also has an operation lock, held across its cgroup writes
// the way containerd holds the container's status lock across runc update,
// so that start, stop, update and remove of one container are serialised
// while calls on other containers proceed.
type orcSimContainerd struct {
	cg     cgroup.Manager
	model  CgroupModel
	weight cgconfig.WeightFunc
	driver cgroup.Driver
	now    func() time.Time
	swap   bool

	mu            sync.Mutex
	sandboxes     map[string]*orcSimSandbox
	containers    map[string]*orcSimContainer
	byCgroup      map[string]*orcSimContainer // container cgroup path → container
	names         map[string]string           // reserved name → ID
	nextSandbox   int
	nextContainer int
	nextPID       int
}

type orcSimSandbox struct {
	id              string
	seq             int
	name            string // the reserved name
	metadata        orcPodMetadata
	labels          map[string]string // never modified after creation
	annotations     map[string]string // never modified after creation
	runtimeHandler  string
	orcCgroupParent string
	state           runtimeapi.PodSandboxState
	createdAt       int64
	resources       *runtimeapi.UpdatePodSandboxResourcesRequest
}

type orcPodMetadata struct {
	name, uid, namespace string
	attempt              uint32
}

type orcSimContainer struct {
	op sync.Mutex // serialises start, stop, update, remove and usage changes

	// Set at creation and never modified.
	id          string
	sandboxID   string
	seq         int
	name        string // the reserved name
	cgroup      string
	metaName    string
	attempt     uint32
	image       string
	args        []string // the command and its arguments
	labels      map[string]string
	annotations map[string]string
	createdAt   int64

	// Guarded by orcSimContainerd.mu. spec is replaced, never modified in
	// place, so a reader may clone it after unlocking.
	spec       *runtimeapi.LinuxContainerResources
	state      runtimeapi.ContainerState
	startedAt  int64
	finishedAt int64
	exitCode   int32
	reason     string
	message    string
	pid        int
	removed    bool

	// status is the last ContainerStatus snapshot and orcStatusKey what it
	// was built from (guarded by orcSimContainerd.mu): it is handed out
	// shared until the container changes.
	status       *runtimeapi.ContainerStatusResponse
	orcStatusKey orcStatusKey
	// meta, image and attributes are the parts of the answers that never
	// change, made once (guarded by orcSimContainerd.mu).
	meta       *runtimeapi.ContainerMetadata
	imageMsg   *runtimeapi.ImageSpec
	attributes *runtimeapi.ContainerAttributes
}

// metadata is the container's metadata message, made once. The caller
// holds orcSimContainerd.mu.
func (c *orcSimContainer) metadata() *runtimeapi.ContainerMetadata {
	if c.meta == nil {
		c.meta = &runtimeapi.ContainerMetadata{Name: c.metaName, Attempt: c.attempt}
	}
	return c.meta
}

// imageSpec is the container's image message, made once. The caller holds
// orcSimContainerd.mu.
func (c *orcSimContainer) imageSpec() *runtimeapi.ImageSpec {
	if c.imageMsg == nil {
		c.imageMsg = &runtimeapi.ImageSpec{Image: c.image}
	}
	return c.imageMsg
}

// The exit codes and reasons the runtime reports, as containerd does.
const (
	orcExitCodeKilled    = 137 // 128 + SIGKILL: an OOM kill or a forced removal
	orcExitCodeStartErr  = 128
	orcReasonOOMKilled   = "OOMKilled"
	orcReasonCompleted   = "Completed"
	orcReasonError       = "Error"
	orcReasonStartError  = "StartError"
	orcFirstPID          = 1000
	orcDefaultClockStart = 1767225600 // 2026-01-01T00:00:00Z
)

// orcNewSimContainerd returns a simulated runtime that writes container
// cgroups through cg. If cg is (or wraps) a cgroup model such as
// *cgroup.SimKernel, the runtime charges memory usage to it and turns its
// OOM kills into container exits with exit code 137 and reason "OOMKilled".
func orcNewSimContainerd(cg cgroup.Manager, opts ...orcSimContainerdOption) *orcSimContainerd {
	m := &orcSimContainerd{
		cg:         cg,
		weight:     cgconfig.QuadraticWeight,
		driver:     cgroup.DriverCgroupfs,
		sandboxes:  map[string]*orcSimSandbox{},
		containers: map[string]*orcSimContainer{},
		byCgroup:   map[string]*orcSimContainer{},
		names:      map[string]string{},
		nextPID:    orcFirstPID,
	}
	for _, o := range opts {
		o(m)
	}
	if m.now == nil {
		var n atomic.Int64
		m.now = func() time.Time { return time.Unix(orcDefaultClockStart+n.Add(1)-1, 0).UTC() }
	}
	if m.model == nil {
		m.model = orcFindModel(cg)
	}
	if m.model != nil {
		m.model.OnOOMKill(m.oomKilled)
	}
	return m
}

// orcFindModel looks for a CgroupModel in cg and in the managers it wraps.
func orcFindModel(cg cgroup.Manager) CgroupModel {
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
func (m *orcSimContainerd) RunPodSandbox(ctx context.Context, config *runtimeapi.PodSandboxConfig, runtimeHandler string) (string, error) {
	md := config.GetMetadata()
	if md == nil {
		return "", fmt.Errorf("run pod sandbox: sandbox config must include metadata: %w", ErrInvalidArgument)
	}
	parent, err := orcCgroupParent(config.GetLinux().GetCgroupParent(), m.driver)
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

	m.mu.Lock()
	defer m.mu.Unlock()
	if owner, ok := m.names[name]; ok {
		return "", fmt.Errorf("run pod sandbox: failed to reserve sandbox name %q: reserved for %q: %w", name, owner, ErrNameReserved)
	}
	m.nextSandbox++
	sb := &orcSimSandbox{
		id:       "sb-" + strconv.Itoa(m.nextSandbox),
		seq:      m.nextSandbox,
		name:     name,
		metadata: orcPodMetadata{name: md.Name, uid: md.Uid, namespace: md.Namespace, attempt: md.Attempt},
		// Kept as given: the kubelet never changes a message it sent.
		labels:          config.GetLabels(),
		annotations:     config.GetAnnotations(),
		runtimeHandler:  runtimeHandler,
		orcCgroupParent: parent,
		state:           runtimeapi.PodSandboxState_SANDBOX_READY,
		createdAt:       now,
	}
	m.sandboxes[sb.id] = sb
	m.names[name] = sb.id
	return sb.id, nil
}

// orcCgroupParent turns a sandbox's CgroupParent into a path relative to the
// cgroup root.
func orcCgroupParent(parent string, driver cgroup.Driver) (string, error) {
	parent = strings.Trim(parent, "/")
	if driver == cgroup.DriverSystemd && parent != "" && !strings.Contains(parent, "/") && strings.HasSuffix(parent, ".slice") {
		return orcExpandSlice(parent)
	}
	return parent, nil
}

// orcExpandSlice expands a systemd slice name into its path the way runc's
// systemd driver does: "a-b-c.slice" lives in "a.slice/a-b.slice/a-b-c.slice".
func orcExpandSlice(slice string) (string, error) {
	base := strings.TrimSuffix(slice, ".slice")
	if base == "-" {
		return "", nil
	}
	if base == "" || strings.HasPrefix(base, "-") || strings.HasSuffix(base, "-") || strings.Contains(base, "--") {
		return "", fmt.Errorf("invalid systemd slice name %q: %w", slice, ErrInvalidArgument)
	}
	var b strings.Builder
	for i := 0; i < len(base); i++ {
		if base[i] == '-' {
			b.WriteString(base[:i])
			b.WriteString(".slice/")
		}
	}
	b.WriteString(slice)
	return b.String(), nil
}

// StopPodSandbox stops every running container of the sandbox (as a
// kubelet-requested stop: exit code 0, reason "Completed") and marks the
// sandbox NOTREADY. Stopping a stopped sandbox is not an error.
func (m *orcSimContainerd) StopPodSandbox(ctx context.Context, podSandboxID string) error {
	m.mu.Lock()
	sb, ok := m.sandboxes[podSandboxID]
	if !ok {
		m.mu.Unlock()
		return fmt.Errorf("stop pod sandbox %q: %w", podSandboxID, ErrNotFound)
	}
	ctrs := m.sandboxContainersLocked(podSandboxID)
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
func (m *orcSimContainerd) RemovePodSandbox(ctx context.Context, podSandboxID string) error {
	m.mu.Lock()
	sb, ok := m.sandboxes[podSandboxID]
	if !ok {
		m.mu.Unlock()
		return nil
	}
	// NOTREADY first, so that no container is created while it is removed.
	sb.state = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	ctrs := m.sandboxContainersLocked(podSandboxID)
	m.mu.Unlock()

	for _, c := range ctrs {
		if err := m.removeContainer(c); err != nil {
			return fmt.Errorf("remove pod sandbox %q: %w", podSandboxID, err)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sandboxes[podSandboxID] == sb {
		delete(m.sandboxes, podSandboxID)
		delete(m.names, sb.name)
	}
	return nil
}

// sandboxContainersLocked returns the sandbox's containers in creation order.
func (m *orcSimContainerd) sandboxContainersLocked(podSandboxID string) []*orcSimContainer {
	var out []*orcSimContainer
	for _, c := range m.containers {
		if c.sandboxID == podSandboxID {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b *orcSimContainer) int { return a.seq - b.seq })
	return out
}

// ListPodSandbox returns the sandboxes that match filter (Id, State,
// LabelSelector), in creation order.
func (m *orcSimContainerd) ListPodSandbox(ctx context.Context, filter *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	m.mu.Lock()
	sbs := orcByIDOrAll(m.sandboxes, filter.GetId())
	out := make([]*runtimeapi.PodSandbox, 0, len(sbs))
	for _, sb := range sbs {
		if st := filter.GetState(); st != nil && st.State != sb.state {
			continue
		}
		if !orcMatchLabels(sb.labels, filter.GetLabelSelector()) {
			continue
		}
		out = append(out, &runtimeapi.PodSandbox{
			Id:             sb.id,
			Metadata:       sb.metadata.proto(),
			State:          sb.state,
			CreatedAt:      sb.createdAt,
			Labels:         maps.Clone(sb.labels),
			Annotations:    maps.Clone(sb.annotations),
			RuntimeHandler: sb.runtimeHandler,
		})
	}
	m.mu.Unlock()
	slices.SortFunc(out, func(a, b *runtimeapi.PodSandbox) int { return orcCompareIDs(a.Id, b.Id) })
	return out, nil
}

func (p orcPodMetadata) proto() *runtimeapi.PodSandboxMetadata {
	return &runtimeapi.PodSandboxMetadata{Name: p.name, Uid: p.uid, Namespace: p.namespace, Attempt: p.attempt}
}

// orcCompareIDs orders "prefix-N" IDs by N, which is their creation order.
func orcCompareIDs(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

// orcMatchLabels reports whether labels hold every key and value of selector.
func orcMatchLabels(labels, selector map[string]string) bool {
	for k, v := range selector {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// UpdatePodSandboxResources records the request for the sandbox, as
// containerd (v2.3+) and CRI-O do; it writes no cgroup, since the kubelet
// owns the pod cgroup. SandboxResources returns (a copy of) what was
// recorded. The request is kept as given, as a message sent is never
// changed by the kubelet: the caller must not change it afterwards.
func (m *orcSimContainerd) UpdatePodSandboxResources(ctx context.Context, request *runtimeapi.UpdatePodSandboxResourcesRequest) (*runtimeapi.UpdatePodSandboxResourcesResponse, error) {
	if request == nil {
		return nil, fmt.Errorf("update pod sandbox resources: empty request: %w", ErrInvalidArgument)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	sb, ok := m.sandboxes[request.PodSandboxId]
	if !ok {
		return nil, fmt.Errorf("update pod sandbox resources %q: %w", request.PodSandboxId, ErrNotFound)
	}
	sb.resources = request
	return orcEmptySandboxResponse, nil
}

// orcEmptySandboxResponse is every UpdatePodSandboxResources answer: it has
// nothing in it to change.
var orcEmptySandboxResponse = &runtimeapi.UpdatePodSandboxResourcesResponse{}

// SandboxResources returns a copy of the last UpdatePodSandboxResources
// request the runtime accepted for the sandbox, or nil if there was none.
func (m *orcSimContainerd) SandboxResources(podSandboxID string) *runtimeapi.UpdatePodSandboxResourcesRequest {
	m.mu.Lock()
	var rec *runtimeapi.UpdatePodSandboxResourcesRequest
	if sb, ok := m.sandboxes[podSandboxID]; ok {
		rec = sb.resources
	}
	m.mu.Unlock()
	if rec == nil {
		return nil
	}
	return orcCloneSandboxRequest(rec)
}

// CreateContainer creates the container in the sandbox: it creates the
// container cgroup (cgconfig.ContainerCgroupName below the sandbox's cgroup
// parent) and writes config.Linux.Resources to it the way runc does, then
// stores those resources as the container's spec. The container is CREATED,
// with the attempt of config.Metadata. The config's labels and annotations
// are kept as given (as RunPodSandbox keeps the sandbox's): the caller must
// not change them afterwards, and the kubelet never does.
func (m *orcSimContainerd) CreateContainer(ctx context.Context, podSandboxID string, config *runtimeapi.ContainerConfig, sandboxConfig *runtimeapi.PodSandboxConfig) (string, error) {
	md := config.GetMetadata()
	if md == nil {
		return "", fmt.Errorf("create container in sandbox %q: container config must include metadata: %w", podSandboxID, ErrInvalidArgument)
	}
	spec := m.merge(&runtimeapi.LinuxContainerResources{}, config.GetLinux().GetResources())
	spec.OomScoreAdj = config.GetLinux().GetResources().GetOomScoreAdj()

	m.mu.Lock()
	sb, ok := m.sandboxes[podSandboxID]
	if !ok {
		m.mu.Unlock()
		return "", fmt.Errorf("create container in sandbox %q: %w", podSandboxID, ErrNotFound)
	}
	if sb.state != runtimeapi.PodSandboxState_SANDBOX_READY {
		m.mu.Unlock()
		return "", fmt.Errorf("create container in sandbox %q: %w", podSandboxID, ErrSandboxNotReady)
	}
	name := strings.Join([]string{"k8s", md.Name, sb.metadata.name, sb.metadata.namespace, sb.metadata.uid, strconv.FormatUint(uint64(md.Attempt), 10)}, "_")
	if owner, ok := m.names[name]; ok {
		m.mu.Unlock()
		return "", fmt.Errorf("create container in sandbox %q: failed to reserve container name %q: reserved for %q: %w", podSandboxID, name, owner, ErrNameReserved)
	}
	m.nextContainer++
	seq := m.nextContainer
	id := "ctr-" + strconv.Itoa(seq)
	path := strings.TrimPrefix(cgconfig.ContainerCgroupName(sb.orcCgroupParent, id, m.driver), "/")
	m.names[name] = id
	m.mu.Unlock()

	release := func() {
		m.mu.Lock()
		delete(m.names, name)
		m.mu.Unlock()
	}
	if err := m.cg.Create(path); err != nil {
		release()
		return "", fmt.Errorf("create container %q: create cgroup: %w", id, err)
	}
	if _, err := m.cg.Set(path, m.values(spec)); err != nil {
		_ = m.cg.Delete(path) // best effort: the create failed either way
		release()
		return "", fmt.Errorf("create container %q: %w", id, err)
	}

	c := &orcSimContainer{
		id:        id,
		sandboxID: podSandboxID,
		seq:       seq,
		name:      name,
		cgroup:    path,
		metaName:  md.Name,
		attempt:   md.Attempt,
		image:     config.GetImage().GetImage(),
		args:      append(slices.Clone(config.GetCommand()), config.GetArgs()...),
		// Kept as given: the kubelet never changes a message it sent.
		labels:      config.GetLabels(),
		annotations: config.GetAnnotations(),
		createdAt:   m.now().UnixNano(),
		spec:        spec,
		state:       runtimeapi.ContainerState_CONTAINER_CREATED,
	}
	m.mu.Lock()
	if m.sandboxes[podSandboxID] != sb {
		// The sandbox was removed while the cgroup was written.
		delete(m.names, name)
		m.mu.Unlock()
		_ = m.cg.Delete(path)
		return "", fmt.Errorf("create container in sandbox %q: %w", podSandboxID, ErrNotFound)
	}
	m.containers[id] = c
	m.byCgroup[path] = c
	m.mu.Unlock()
	return id, nil
}

// lookup returns the container with the ID, or an error wrapping ErrNotFound.
func (m *orcSimContainerd) lookup(op, id string) (*orcSimContainer, error) {
	m.mu.Lock()
	c, ok := m.containers[id]
	m.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%s %q: %w", op, id, ErrNotFound)
	}
	return c, nil
}

// StartContainer starts a CREATED container: it applies the stored spec to
// the container cgroup (an update while CREATED only stored it; containerd
// applies the spec when it creates the task at start), gives it a new
// process ID and makes it RUNNING. If the cgroup write fails the container
// exits with exit code 128 and reason "StartError", as in containerd.
func (m *orcSimContainerd) StartContainer(ctx context.Context, containerID string) error {
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

	_, setErr := m.cg.Set(c.cgroup, m.values(spec))
	now := m.now().UnixNano()
	m.mu.Lock()
	defer m.mu.Unlock()
	if setErr != nil {
		c.state = runtimeapi.ContainerState_CONTAINER_EXITED
		c.finishedAt = now
		c.exitCode = orcExitCodeStartErr
		c.reason = orcReasonStartError
		c.message = setErr.Error()
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
func (m *orcSimContainerd) StopContainer(ctx context.Context, containerID string, timeout int64) error {
	c, err := m.lookup("stop container", containerID)
	if err != nil {
		return err
	}
	return m.stopContainer(c)
}

func (m *orcSimContainerd) stopContainer(c *orcSimContainer) error {
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
	return m.exit(c, 0, orcReasonCompleted)
}

// exit ends a running container's process: its usage drops to 0 and it is
// EXITED with the code and reason. The caller holds c.op.
func (m *orcSimContainerd) exit(c *orcSimContainer, code int32, reason string) error {
	if m.model != nil {
		if err := m.model.SetUsage(c.cgroup, 0); err != nil && !errors.Is(err, cgroup.ErrNotExist) {
			return fmt.Errorf("container %q exits: release memory: %w", c.id, err)
		}
	}
	now := m.now().UnixNano()
	m.mu.Lock()
	if c.state == runtimeapi.ContainerState_CONTAINER_RUNNING {
		c.exitedLocked(now, code, reason)
	}
	m.mu.Unlock()
	return nil
}

func (c *orcSimContainer) exitedLocked(now int64, code int32, reason string) {
	c.state = runtimeapi.ContainerState_CONTAINER_EXITED
	c.finishedAt = now
	c.exitCode = code
	c.reason = reason
	c.pid = 0
}

// Exit makes a running container's process exit with the code and reason,
// as if it had ended on its own. An empty reason becomes "Completed" for
// exit code 0 and "Error" otherwise, as containerd reports them.
func (m *orcSimContainerd) Exit(containerID string, exitCode int32, reason string) error {
	c, err := m.lookup("exit container", containerID)
	if err != nil {
		return err
	}
	if reason == "" {
		reason = orcReasonError
		if exitCode == 0 {
			reason = orcReasonCompleted
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
func (m *orcSimContainerd) oomKilled(path string) {
	now := m.now().UnixNano()
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.byCgroup[path]
	if !ok || c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return
	}
	c.exitedLocked(now, orcExitCodeKilled, orcReasonOOMKilled)
}

// PID returns the process ID of a running container; false if the
// container does not exist or has no process.
func (m *orcSimContainerd) PID(containerID string) (int, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.containers[containerID]
	if !ok || c.pid == 0 {
		return 0, false
	}
	return c.pid, true
}

// SetMemoryUsage makes a running container's processes use this many bytes,
// charged to its cgroup through the cgroup model. On cgroup v2 (and on v1
// above the limit) the model may OOM-kill the container, which then exits
// with "OOMKilled".
func (m *orcSimContainerd) SetMemoryUsage(containerID string, bytes int64) error {
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
func (m *orcSimContainerd) RemoveContainer(ctx context.Context, containerID string) error {
	m.mu.Lock()
	c, ok := m.containers[containerID]
	m.mu.Unlock()
	if !ok {
		return nil
	}
	return m.removeContainer(c)
}

func (m *orcSimContainerd) removeContainer(c *orcSimContainer) error {
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
		if err := m.exit(c, orcExitCodeKilled, orcReasonError); err != nil {
			return fmt.Errorf("remove container %q: %w", c.id, err)
		}
	}
	if err := m.cg.Delete(c.cgroup); err != nil {
		return fmt.Errorf("remove container %q: delete cgroup: %w", c.id, err)
	}
	m.mu.Lock()
	c.removed = true
	delete(m.containers, c.id)
	delete(m.names, c.name)
	if m.byCgroup[c.cgroup] == c {
		delete(m.byCgroup, c.cgroup)
	}
	m.mu.Unlock()
	return nil
}

// ListContainers returns the containers that match filter (Id,
// PodSandboxId, State, LabelSelector), in creation order.
func (m *orcSimContainerd) ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	m.mu.Lock()
	cs := orcByIDOrAll(m.containers, filter.GetId())
	out := make([]*runtimeapi.Container, 0, len(cs))
	for _, c := range cs {
		if sb := filter.GetPodSandboxId(); sb != "" && sb != c.sandboxID {
			continue
		}
		if st := filter.GetState(); st != nil && st.State != c.state {
			continue
		}
		if !orcMatchLabels(c.labels, filter.GetLabelSelector()) {
			continue
		}
		out = append(out, &runtimeapi.Container{
			Id:           c.id,
			PodSandboxId: c.sandboxID,
			Metadata:     &runtimeapi.ContainerMetadata{Name: c.metaName, Attempt: c.attempt},
			Image:        &runtimeapi.ImageSpec{Image: c.image},
			ImageRef:     c.image,
			State:        c.state,
			CreatedAt:    c.createdAt,
			Labels:       maps.Clone(c.labels),
			Annotations:  maps.Clone(c.annotations),
		})
	}
	m.mu.Unlock()
	slices.SortFunc(out, func(a, b *runtimeapi.Container) int { return orcCompareIDs(a.Id, b.Id) })
	return out, nil
}

// ContainerStatus returns the container's status. Status.Resources comes
// from the stored spec, the resources last accepted at create or update,
// not from the cgroup files, as containerd and CRI-O report it. With
// verbose, Info["info"] holds a JSON object shaped like containerd's
// (sandboxID, pid, runtimeSpec.process.args).
//
// The status is a snapshot shared by every call until the container
// changes: read it, do not change it (a gRPC client would hold its own
// copy; an in-process caller shares the simulator's).
func (m *orcSimContainerd) ContainerStatus(ctx context.Context, containerID string, verbose bool) (*runtimeapi.ContainerStatusResponse, error) {
	m.mu.Lock()
	c, ok := m.containers[containerID]
	if !ok {
		m.mu.Unlock()
		return nil, fmt.Errorf("container status %q: %w", containerID, ErrNotFound)
	}
	key := orcStatusKey{state: c.state, startedAt: c.startedAt, finishedAt: c.finishedAt, exitCode: c.exitCode,
		reason: c.reason, message: c.message, spec: c.spec}
	resp := c.status
	if resp == nil || c.orcStatusKey != key {
		// Labels, annotations and a stored spec are never modified, so the
		// snapshot shares them.
		resp = &runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{
			Id:          c.id,
			Metadata:    c.metadata(),
			State:       c.state,
			CreatedAt:   c.createdAt,
			StartedAt:   c.startedAt,
			FinishedAt:  c.finishedAt,
			ExitCode:    c.exitCode,
			Image:       c.imageSpec(),
			ImageRef:    c.image,
			Reason:      c.reason,
			Message:     c.message,
			Labels:      c.labels,
			Annotations: c.annotations,
			Resources:   &runtimeapi.ContainerResources{Linux: orcNonNilLinux(c.spec)},
		}}
		c.status, c.orcStatusKey = resp, key
	}
	pid := c.pid
	m.mu.Unlock()
	if !verbose {
		return resp, nil
	}
	info, err := json.Marshal(orcVerboseInfo{SandboxID: c.sandboxID, Pid: pid, RuntimeSpec: orcVerboseSpec{Process: orcVerboseProcess{Args: c.args}}})
	if err != nil {
		return nil, fmt.Errorf("container status %q: verbose info: %w", containerID, err)
	}
	return &runtimeapi.ContainerStatusResponse{Status: resp.Status, Info: map[string]string{"info": string(info)}}, nil
}

// orcStatusKey is what a container's status snapshot was built from: the
// fields that change over its life (the spec is replaced, never changed in
// place, so its pointer says whether it changed).
type orcStatusKey struct {
	state                 runtimeapi.ContainerState
	startedAt, finishedAt int64
	exitCode              int32
	reason, message       string
	spec                  *runtimeapi.LinuxContainerResources
}

// orcEmptyLinux is what a container without a stored spec reports.
var orcEmptyLinux = &runtimeapi.LinuxContainerResources{}

func orcNonNilLinux(r *runtimeapi.LinuxContainerResources) *runtimeapi.LinuxContainerResources {
	if r == nil {
		return orcEmptyLinux
	}
	return r
}

// orcVerboseInfo is the part of containerd's verbose ContainerStatus "info"
// JSON that the model can fill: the sandbox, the process ID and the
// process's command line from the OCI spec.
type orcVerboseInfo struct {
	SandboxID   string         `json:"sandboxID"`
	Pid         int            `json:"pid"`
	RuntimeSpec orcVerboseSpec `json:"runtimeSpec"`
}

type orcVerboseSpec struct {
	Process orcVerboseProcess `json:"process"`
}

type orcVerboseProcess struct {
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
func (m *orcSimContainerd) UpdateContainerResources(ctx context.Context, containerID string, resources *runtimeapi.ContainerResources) error {
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
	m.mu.Unlock()
	return nil
}

// apply writes a container's resources to its cgroup for an update and
// wraps a failure as containerd reports runc's: containerd's CRI plugin
// wraps the task error in "failed to update resources" twice (once in the
// status transaction, once around task.Update) and go-runc adds the command
// and its exit status before runc's own message. A user should match on
// runc's part ("unable to set memory limit to ..."); the wrapping is this
// model's rendering of it.
func (m *orcSimContainerd) apply(path string, spec *runtimeapi.LinuxContainerResources) error {
	writes, err := m.cg.Set(path, m.values(spec))
	if err == nil {
		return nil
	}
	if n := len(writes); m.cg.Version() == cgroup.V1 && errors.Is(err, syscall.EBUSY) && n > 0 && writes[n-1].File == "memory.limit_in_bytes" {
		usage, uerr := m.readInt(path, "memory.usage_in_bytes")
		peak, perr := m.readInt(path, "memory.max_usage_in_bytes")
		if uerr == nil && perr == nil {
			err = &MemoryLimitError{Limit: spec.MemoryLimitInBytes, Usage: usage, Peak: peak, Err: err}
		}
	}
	return fmt.Errorf("failed to update resources: failed to update resources: runc did not terminate successfully: exit status 1: %w", err)
}

func (m *orcSimContainerd) readInt(path, file string) (int64, error) {
	s, err := m.cg.ReadFile(path, file)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(s, 10, 64)
}

// values turns a container spec into cgroup file values as runc does.
// v1: cpu.shares, cpu.cfs_period_us and cpu.cfs_quota_us each when non-zero
// (a negative quota is -1, unlimited). v2: cpu.weight from the shares through
// the runtime's WeightFunc; cpu.max when quota or period is non-zero, with a
// quota <= 0 written as "max" and a period of 0 as 100000. Both: the memory
// limit when non-zero, -1 (or any negative) meaning unlimited.
func (m *orcSimContainerd) values(r *runtimeapi.LinuxContainerResources) cgroup.Values {
	var v cgroup.Values
	// One allocation holds the values v points at.
	hold := &struct {
		memory, quota          int64
		weight, period, shares uint64
	}{}
	if l := r.GetMemoryLimitInBytes(); l != 0 {
		if l < 0 {
			l = cgroup.Unlimited
		}
		hold.memory = l
		v.MemoryLimit = &hold.memory
	}
	shares, quota, period := r.GetCpuShares(), r.GetCpuQuota(), r.GetCpuPeriod()
	if m.driver == cgroup.DriverSystemd && quota > 0 {
		// systemd holds the quota in microseconds per second, in steps
		// of 10 ms rounded up; runc 1.3 writes the quota that gives back.
		p := period
		if p <= 0 {
			p = cgconfig.QuotaPeriod
		}
		if us := quota * 1_000_000 / p; us%10_000 != 0 {
			quota = (us + 10_000 - us%10_000) * p / 1_000_000
		}
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
// at create only). spec is not changed: the result is a new message that
// shares spec's hugepage limits and unified map when the update leaves
// them as they are, and the update's unified map when spec has none
// (stored specs and sent messages are never changed in place). A nil spec
// is an empty one.
func (m *orcSimContainerd) merge(spec, upd *runtimeapi.LinuxContainerResources) *runtimeapi.LinuxContainerResources {
	if spec == nil {
		spec = orcEmptyLinux
	}
	out := &runtimeapi.LinuxContainerResources{
		CpuPeriod:              spec.CpuPeriod,
		CpuQuota:               spec.CpuQuota,
		CpuShares:              spec.CpuShares,
		MemoryLimitInBytes:     spec.MemoryLimitInBytes,
		OomScoreAdj:            spec.OomScoreAdj,
		CpusetCpus:             spec.CpusetCpus,
		CpusetMems:             spec.CpusetMems,
		HugepageLimits:         spec.HugepageLimits,
		Unified:                spec.Unified,
		MemorySwapLimitInBytes: spec.MemorySwapLimitInBytes,
	}
	if upd == nil {
		return out
	}
	if upd.CpuPeriod != 0 {
		out.CpuPeriod = upd.CpuPeriod
	}
	if upd.CpuQuota != 0 {
		out.CpuQuota = upd.CpuQuota
	}
	if upd.CpuShares != 0 {
		out.CpuShares = upd.CpuShares
	}
	if upd.CpusetCpus != "" {
		out.CpusetCpus = upd.CpusetCpus
	}
	if upd.CpusetMems != "" {
		out.CpusetMems = upd.CpusetMems
	}
	if upd.MemoryLimitInBytes != 0 {
		out.MemoryLimitInBytes = upd.MemoryLimitInBytes
		if upd.MemorySwapLimitInBytes == 0 && m.swap {
			out.MemorySwapLimitInBytes = upd.MemoryLimitInBytes
		}
	}
	if upd.MemorySwapLimitInBytes != 0 && m.swap {
		out.MemorySwapLimitInBytes = upd.MemorySwapLimitInBytes
	}
	for _, h := range upd.HugepageLimits {
		if h == nil {
			continue
		}
		if len(out.HugepageLimits) == len(spec.HugepageLimits) {
			// The first one appended: the spec's limits are shared, so
			// append to a copy.
			out.HugepageLimits = append(make([]*runtimeapi.HugepageLimit, 0, len(spec.HugepageLimits)+len(upd.HugepageLimits)), spec.HugepageLimits...)
		}
		out.HugepageLimits = append(out.HugepageLimits, &runtimeapi.HugepageLimit{PageSize: h.PageSize, Limit: h.Limit})
	}
	switch {
	case upd.Unified == nil || orcHoldsAll(spec.Unified, upd.Unified):
	case len(spec.Unified) == 0:
		// Nothing to merge into: the update's map is the result, shared
		// as messages sent are never changed.
		out.Unified = upd.Unified
	default:
		unified := make(map[string]string, len(spec.Unified)+len(upd.Unified))
		maps.Copy(unified, spec.Unified)
		maps.Copy(unified, upd.Unified)
		out.Unified = unified
	}
	return out
}

// orcHoldsAll reports whether have is a map (not nil) that already holds
// every key of add with the same value: merging add changes nothing.
func orcHoldsAll(have, add map[string]string) bool {
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
func (m *orcSimContainerd) ContainerStats(ctx context.Context, containerID string) (*runtimeapi.ContainerStats, error) {
	m.mu.Lock()
	c, ok := m.containers[containerID]
	m.mu.Unlock()
	if !ok {
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
	// The attributes never change: every answer shares them (answers are
	// for reading, as the Runtime interface says).
	m.mu.Lock()
	if c.attributes == nil {
		c.attributes = &runtimeapi.ContainerAttributes{Id: c.id, Metadata: c.metadata(), Labels: c.labels, Annotations: c.annotations}
	}
	attrs := c.attributes
	m.mu.Unlock()
	bytes := &runtimeapi.UInt64Value{Value: uint64(usage)}
	return &runtimeapi.ContainerStats{
		Attributes: attrs,
		Cpu:        &runtimeapi.CpuUsage{Timestamp: now, UsageCoreNanoSeconds: orcZeroUsage},
		Memory:     &runtimeapi.MemoryUsage{Timestamp: now, WorkingSetBytes: bytes, UsageBytes: bytes},
	}, nil
}

// orcZeroUsage is the cpu usage the model reports: none.
var orcZeroUsage = &runtimeapi.UInt64Value{}

// ExecSync runs only the command SetMemoryUsage (usage.go) sends to a
// runtime that is not simulated, so that memory usage can be set through any
// decorator; it sets the container's usage as SetMemoryUsage does. Any other
// command fails with an error wrapping errors.ErrUnsupported.
func (m *orcSimContainerd) ExecSync(ctx context.Context, containerID string, cmd []string, timeout time.Duration) ([]byte, []byte, error) {
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

// orcCloneLinux returns a deep copy of r; nil gives an empty message.
func orcCloneLinux(r *runtimeapi.LinuxContainerResources) *runtimeapi.LinuxContainerResources {
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

// orcCloneLinuxOrNil is orcCloneLinux that keeps nil as nil.
func orcCloneLinuxOrNil(r *runtimeapi.LinuxContainerResources) *runtimeapi.LinuxContainerResources {
	if r == nil {
		return nil
	}
	return orcCloneLinux(r)
}

// orcCloneSandboxRequest returns a deep copy of an UpdatePodSandboxResources
// request.
func orcCloneSandboxRequest(r *runtimeapi.UpdatePodSandboxResourcesRequest) *runtimeapi.UpdatePodSandboxResourcesRequest {
	if r == nil {
		return nil
	}
	return &runtimeapi.UpdatePodSandboxResourcesRequest{
		PodSandboxId: r.PodSandboxId,
		Overhead:     orcCloneLinuxOrNil(r.Overhead),
		Resources:    orcCloneLinuxOrNil(r.Resources),
	}
}

// orcByIDOrAll returns the entry with the given ID, or every entry when id is
// empty: how a CRI list filter's Id narrows a list.
func orcByIDOrAll[T any](m map[string]T, id string) []T {
	if id != "" {
		if v, ok := m[id]; ok {
			return []T{v}
		}
		return nil
	}
	out := make([]T, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

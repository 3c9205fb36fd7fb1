package resize

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/cri"
)

// LabelBackend is the label a backend on a real runtime (host.Remote)
// puts on every sandbox and container the node creates through it, with
// the backend's CgroupParent as its value. The backend lists only what
// carries it, so that a node sees its own pods and not the others the
// runtime runs, and Close finds by it what to remove, also what a create
// whose answer was lost made.
const LabelBackend = "io.resizelet.backend"

// Backend is a coherent set of the parts a Node drives, built by one of
// three constructors:
//
//   - Simulated: an in-memory kernel (cgroup.SimKernel) and an in-memory
//     containerd (cri.SimContainerd) that writes container cgroups into
//     that same kernel; nothing touches the host;
//   - host.Cgroups (package resize/host): the host's real cgroup
//     filesystem (cgroupfs.FS, the version detected) with the in-memory
//     containerd writing container cgroups there, all below a private
//     cgroup parent;
//   - host.Remote: a real CRI runtime over its socket (remote.Client) and
//     the host's real cgroups, below a private cgroup parent, with the
//     image checked (or pulled) before any pod is created.
//
// The host constructors live in their own package so that a program that
// only simulates links neither a cgroup filesystem nor a CRI client; they
// assemble their backends with NewHostBackend.
//
// Config is the NodeConfig to start nodes with: the one given to the
// constructor, with the cgroup version and driver the parts use, the
// private cgroup parent as CgroupRoot, and on host.Remote the image and a
// command that keeps containers running. Deps fills in the cgroup manager
// and the runtime of a Deps.
//
// A Backend outlives the nodes started on it: a kubelet restart is
// NewNode again on the same Deps, and Node.Close leaves everything as a
// stopped kubelet does. Close is the cleanup: it removes what the nodes
// created in the runtime and the cgroup tree.
type Backend struct {
	kind string // for messages: "simulated", "host cgroups", "remote"
	cfg  NodeConfig

	cgroups cgroup.Manager // what the node writes through (WithCgroups applied)
	raw     cgroup.Manager // the manager itself, for the cleanup
	runtime cri.Runtime    // what the node calls

	sim    *cri.SimContainerd // the in-memory runtime; nil on a real runtime
	remote RemoteRuntime      // the real runtime; nil otherwise
	// parent is the private cgroup parent ("" on Simulated, whose kernel
	// is the backend's own).
	parent string
	// closeCgroups is HostParts.CloseCgroups (nil: nothing to close).
	closeCgroups func() error
	// before is what existed of the parent's path when the backend was
	// made (nil on Simulated): Close removes what was created on it since,
	// and keeps the rest.
	before *cgroup.TreeSnapshot

	mu       sync.Mutex
	closed   bool
	closeErr error

	// nodes are the open nodes started on the backend's Deps; once
	// stopping is set, Close has begun and no node may start.
	nodesMu  sync.Mutex
	nodes    map[*Node]struct{}
	stopping bool
}

// BackendOption configures a Backend constructor. Options that do not
// apply to a constructor are ignored by it.
type BackendOption func(*backendConfig)

type backendConfig struct {
	wrap          func(cgroup.Manager) cgroup.Manager
	runtimeWrap   func(cgroup.Manager) cgroup.Manager
	kernelOpts    []cgroup.SimKernelOption
	containerOpts []cri.SimContainerdOption
}

// WithCgroups wraps the cgroup manager that the node and the in-memory
// runtime write through, for example in a cgroup.Recorder or a
// cgroup.FaultInjector. Backend.Cgroups returns the wrapped manager;
// Close works below the wrapper.
func WithCgroups(wrap func(cgroup.Manager) cgroup.Manager) BackendOption {
	return func(c *backendConfig) { c.wrap = wrap }
}

// WithRuntimeCgroups wraps, on top of WithCgroups, the cgroup manager the
// in-memory runtime writes container cgroups through (Simulated and
// host.Cgroups; a real runtime writes its own).
func WithRuntimeCgroups(wrap func(cgroup.Manager) cgroup.Manager) BackendOption {
	return func(c *backendConfig) { c.runtimeWrap = wrap }
}

// WithSimKernel passes options to Simulated's cgroup.NewSimKernel.
func WithSimKernel(opts ...cgroup.SimKernelOption) BackendOption {
	return func(c *backendConfig) { c.kernelOpts = append(c.kernelOpts, opts...) }
}

// WithSimContainerd passes options to the in-memory runtime of Simulated
// and host.Cgroups (cri.NewSimContainerd), after the driver the NodeConfig
// names.
func WithSimContainerd(opts ...cri.SimContainerdOption) BackendOption {
	return func(c *backendConfig) { c.containerOpts = append(c.containerOpts, opts...) }
}

func newBackendConfig(opts []BackendOption) backendConfig {
	var c backendConfig
	for _, o := range opts {
		o(&c)
	}
	return c
}

// wrapped returns m in the WithCgroups wrapper, if any.
func (c *backendConfig) wrapped(m cgroup.Manager) cgroup.Manager {
	if c.wrap == nil {
		return m
	}
	return c.wrap(m)
}

// simContainerd builds the in-memory runtime over the node's cgroups.
func (c *backendConfig) simContainerd(cg cgroup.Manager, cfg NodeConfig) *cri.SimContainerd {
	if c.runtimeWrap != nil {
		cg = c.runtimeWrap(cg)
	}
	opts := make([]cri.SimContainerdOption, 0, 1+len(c.containerOpts))
	if cfg.CgroupDriver != "" {
		opts = append(opts, cri.WithDriver(cfg.CgroupDriver))
	}
	return cri.NewSimContainerd(cg, append(opts, c.containerOpts...)...)
}

// underParent puts cfg's own CgroupRoot, if any, below the private parent.
func underParent(parent, root string) string {
	if root = strings.Trim(root, "/"); root != "" {
		return parent + "/" + root
	}
	return parent
}

// Simulated returns a backend that touches nothing on the host: an
// in-memory kernel of cfg's cgroup version (v2 if unset) and an in-memory
// containerd with cfg's cgroup driver that writes container cgroups into
// that kernel. Options: WithSimKernel, WithSimContainerd, WithCgroups,
// WithRuntimeCgroups.
func Simulated(cfg NodeConfig, opts ...BackendOption) (*Backend, error) {
	c := newBackendConfig(opts)
	if err := cfg.WithDefaults().Validate(); err != nil {
		return nil, fmt.Errorf("simulated backend: %w", err)
	}
	version := cfg.CgroupVersion
	if version == 0 {
		version = cgroup.V2
	}
	kernel := cgroup.NewSimKernel(version, c.kernelOpts...)
	b := &Backend{kind: "simulated", raw: kernel, cgroups: c.wrapped(kernel)}
	b.sim = c.simContainerd(b.cgroups, cfg)
	b.runtime = b.sim
	if err := coherent(context.Background(), &cfg, b.Deps(Deps{})); err != nil {
		return nil, fmt.Errorf("simulated backend: %w", err)
	}
	b.cfg = cfg
	return b, nil
}

// RemoteRuntime is a real CRI runtime a host backend drives (a
// *remote.Client): a cri.Runtime with a connection that Backend.Close
// closes.
type RemoteRuntime interface {
	cri.Runtime
	Close() error
}

// HostParts are what a backend on the host is made of, opened by package
// resize/host (host.Cgroups, host.Remote) and assembled by NewHostBackend.
// This package opens nothing on the host itself, so that a program that
// only simulates links no cgroup filesystem and no CRI client.
type HostParts struct {
	// Cgroups is the host's cgroup manager (a cgroupfs.FS, or a
	// cgroup.SimKernel standing for the host in tests), below any
	// WithCgroups wrapper: Close removes cgroups through it.
	Cgroups cgroup.Manager
	// Parent is the private cgroup parent the node's cgroups go below,
	// relative to the hierarchy root, as cgconfig.RootRelative writes it.
	Parent string
	// Before is what existed of Parent's path before anything was created
	// on it (cgroup.SnapshotTree of Cgroups and Parent): Close removes what
	// was created since, and keeps the rest.
	Before *cgroup.TreeSnapshot
	// Runtime is the real runtime the node calls, labelled with
	// LabelBackend; nil for the in-memory containerd (cri.SimContainerd)
	// writing container cgroups through Cgroups. Close removes what
	// carries the label, then closes it.
	Runtime RemoteRuntime
	// Endpoint is where Runtime was reached, for messages.
	Endpoint string
	// CloseCgroups, when set, closes what was opened for Cgroups (the
	// systemd manager's connection to systemd): Close calls it after the
	// cgroups are removed. A manager the caller handed in is the
	// caller's, and has none.
	CloseCgroups func() error
	// RuntimeHandler is the runtime handler the node's sandboxes are run
	// with when the node names none (its pods have no RuntimeClass): a
	// handler of Runtime's, such as containerd's runtimes.crun. Empty is
	// the runtime's default handler.
	RuntimeHandler string
}

// NewHostBackend assembles a backend from parts opened on the host, for
// package resize/host. The node writes through parts.Cgroups in the
// WithCgroups wrapper. Its runtime is parts.Runtime behind a wrapper that
// adds LabelBackend (with parts.Parent as its value) to what it creates
// and lists only what carries it, or, without one, an in-memory
// containerd (WithSimContainerd, WithRuntimeCgroups) over the wrapped
// manager. cfg is checked against the parts as NewNode checks it
// (ErrIncoherent), takes the version and driver they use, and gets
// parts.Parent as CgroupRoot, with cfg's own CgroupRoot below it. An
// unknown driver becomes systemd when parts.Cgroups is the systemd cgroup
// manager (a Driver method saying so, as package cgroup/systemd's has),
// cgroupfs otherwise; the systemd manager with the cgroupfs driver is
// refused (ErrIncoherent). With the systemd driver parts.Parent must be a
// chain of slices (cgconfig.SystemdName) and CgroupRoot is its cgroup
// name (resizelet_1.slice is "resizelet-1"), so that the kubelet's names
// put the pod slices below it; on a real runtime parts.Cgroups must then
// be the systemd manager, or the driver is refused
// (errors.ErrUnsupported): systemd writes a slice's unit values over
// what a manager wrote to its files as soon as the runtime starts a
// container's scope in it.
//
// The caller has validated cfg and parts.Parent and taken parts.Before;
// NewHostBackend refuses parts without a manager, a parent or a snapshot
// of that parent. It closes neither parts.Runtime nor the cgroups
// (parts.CloseCgroups) when it fails.
func NewHostBackend(ctx context.Context, cfg NodeConfig, parts HostParts, opts ...BackendOption) (*Backend, error) {
	kind, what := "host cgroups", "host cgroups backend"
	if parts.Runtime != nil {
		kind, what = "remote", "remote backend at "+parts.Endpoint
	}
	switch {
	case ctx == nil:
		return nil, &argumentError{op: what, msg: "nil context"}
	case parts.Cgroups == nil:
		return nil, fmt.Errorf("%s: HostParts.Cgroups: %w", what, cgroup.ErrNoManager)
	case parts.Parent == "" || parts.Before.Name() != parts.Parent:
		return nil, &argumentError{op: what, msg: fmt.Sprintf("HostParts.Parent %q needs a private cgroup parent and a snapshot of it (HostParts.Before, of %q)", parts.Parent, parts.Before.Name())}
	}
	c := newBackendConfig(opts)
	throughSystemd := driverOf(parts.Cgroups) == cgroup.DriverSystemd
	if cfg.CgroupDriver == "" && throughSystemd {
		cfg.CgroupDriver = cgroup.DriverSystemd
	}
	b := &Backend{kind: kind, raw: parts.Cgroups, cgroups: c.wrapped(parts.Cgroups), parent: parts.Parent, before: parts.Before, closeCgroups: parts.CloseCgroups}
	if parts.Runtime == nil {
		b.sim = c.simContainerd(b.cgroups, cfg)
		b.runtime = b.sim
	} else {
		b.remote = parts.Runtime
		b.runtime = &labelledRuntime{Runtime: parts.Runtime, value: parts.Parent, handler: parts.RuntimeHandler}
	}
	if err := coherent(ctx, &cfg, b.Deps(Deps{})); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	root := parts.Parent
	if cfg.CgroupDriver == "" {
		// The runtime cannot tell (containerd 1.6): the kubelet's default.
		cfg.CgroupDriver = cgroup.DriverCgroupfs
	}
	switch {
	case throughSystemd && cfg.CgroupDriver != cgroup.DriverSystemd:
		return nil, fmt.Errorf("%s: %w", what, &MismatchError{
			Setting: "cgroup driver",
			Want:    "NodeConfig.CgroupDriver", WantValue: string(cfg.CgroupDriver),
			Have: fmt.Sprintf("HostParts.Cgroups (%T)", parts.Cgroups), HaveValue: string(cgroup.DriverSystemd),
		})
	case cfg.CgroupDriver == cgroup.DriverSystemd && parts.Runtime != nil && !throughSystemd:
		// runc's systemd driver starts each container's scope in the pod
		// slice, and systemd then writes the slice's own unit values over
		// whatever a cgroupfs manager wrote there (TestSystemdInVM): with
		// this driver pod slices must be made and updated through systemd,
		// as the kubelet's systemd driver does.
		return nil, fmt.Errorf("%s: the systemd cgroup driver (the runtime's, or NodeConfig.CgroupDriver) needs pod slices made through systemd, and HostParts.Cgroups (%T) writes files: use the systemd cgroup manager (package cgroup/systemd; host.Remote opens it where systemd runs the host), or run the runtime with the cgroupfs driver (containerd: SystemdCgroup = false, as examples/realhost/containerd.sh does): %w", what, parts.Cgroups, errors.ErrUnsupported)
	case cfg.CgroupDriver == cgroup.DriverSystemd:
		// The node's --cgroup-root is the parent's cgroup name, whose
		// slices the parent is (the kubelet's ParseSystemdToCgroupName).
		var ok bool
		if root, ok = systemdRoot(parts.Parent); !ok {
			return nil, &argumentError{op: what, msg: fmt.Sprintf("HostParts.Parent %q: with the systemd cgroup driver the private parent is a chain of slices, as cgconfig.SystemdName names one (resizelet_1.slice)", parts.Parent)}
		}
	}
	cfg.CgroupRoot = underParent(root, cfg.CgroupRoot)
	b.cfg = cfg
	return b, nil
}

// driverOf returns the driver a cgroup manager names its cgroups for
// (a Driver() method, as the systemd manager has), "" for one that does
// not say.
func driverOf(m cgroup.Manager) cgroup.Driver {
	if d, ok := m.(interface{ Driver() cgroup.Driver }); ok {
		return d.Driver()
	}
	return ""
}

// systemdRoot returns the cgroup name, as a cgroupfs path, whose slices
// (cgconfig.SystemdName) are parent: the last slice's name split at its
// dashes, each part's underscores turned back into dashes, as the
// kubelet's ParseSystemdToCgroupName does; false when parent is not that
// chain.
func systemdRoot(parent string) (string, bool) {
	last := parent[strings.LastIndexByte(parent, '/')+1:]
	base, ok := strings.CutSuffix(last, ".slice")
	if !ok {
		return "", false
	}
	parts := strings.Split(base, "-")
	for i := range parts {
		parts[i] = strings.ReplaceAll(parts[i], "_", "-")
	}
	if cgconfig.SystemdName(parts...) != parent {
		return "", false
	}
	return strings.Join(parts, "/"), true
}

// Config returns the NodeConfig to start nodes on this backend with. On a
// zero or nil Backend it is the zero NodeConfig.
func (b *Backend) Config() NodeConfig {
	if b == nil {
		return NodeConfig{}
	}
	return b.cfg
}

// Cgroups returns the cgroup manager the node writes through; nil on a
// zero or nil Backend.
func (b *Backend) Cgroups() cgroup.Manager {
	if b == nil {
		return nil
	}
	return b.cgroups
}

// Runtime returns the runtime the node calls: the *cri.SimContainerd of
// Simulated and host.Cgroups, and on host.Remote the real runtime behind a
// wrapper that labels what it creates (LabelBackend) and lists only what
// is so labelled. It is nil on a zero or nil Backend.
func (b *Backend) Runtime() cri.Runtime {
	if b == nil {
		return nil
	}
	return b.runtime
}

// CgroupParent returns the private cgroup parent below which the node's
// cgroups go on a host backend (the value of LabelBackend on a real
// runtime), relative to the hierarchy root and without a leading "/", and
// "" on Simulated and on a zero or nil Backend.
func (b *Backend) CgroupParent() string {
	if b == nil {
		return ""
	}
	return b.parent
}

// Deps returns d with the backend's cgroup manager and runtime; the API
// server, the clock and the checkpoints are the caller's. A zero or nil
// Backend has neither: d comes back without them, which NewNode refuses.
func (b *Backend) Deps(d Deps) Deps {
	d.Cgroups, d.Runtime = b.Cgroups(), b.Runtime()
	if b != nil {
		d.backend = b
	}
	return d
}

// labelledRuntime is the runtime a backend on a real runtime gives the node: every
// sandbox and container it creates carries LabelBackend with the
// backend's value, and the lists it returns hold only those, as if the
// runtime served this node alone. The configs are copied before the label
// is added: the node's messages are shared and never changed. A sandbox
// the node runs with no runtime handler is run with handler, when set.
type labelledRuntime struct {
	cri.Runtime
	value   string
	handler string
}

// Unwrap returns the runtime below, so that cri's helpers reach its
// RuntimeConfig and ContainerPID its verbose status.
func (l *labelledRuntime) Unwrap() cri.Runtime { return l.Runtime }

// withLabel returns labels and LabelBackend, in a new map.
func (l *labelledRuntime) withLabel(labels map[string]string) map[string]string {
	out := make(map[string]string, len(labels)+1)
	for k, v := range labels {
		out[k] = v
	}
	out[LabelBackend] = l.value
	return out
}

// RunPodSandbox runs the sandbox with the label.
func (l *labelledRuntime) RunPodSandbox(ctx context.Context, config *runtimeapi.PodSandboxConfig, runtimeHandler string) (string, error) {
	if config != nil {
		config = proto.Clone(config).(*runtimeapi.PodSandboxConfig)
		config.Labels = l.withLabel(config.Labels)
	}
	if runtimeHandler == "" {
		runtimeHandler = l.handler
	}
	return l.Runtime.RunPodSandbox(ctx, config, runtimeHandler)
}

// CreateContainer creates the container with the label.
func (l *labelledRuntime) CreateContainer(ctx context.Context, podSandboxID string, config *runtimeapi.ContainerConfig, sandboxConfig *runtimeapi.PodSandboxConfig) (string, error) {
	if config != nil {
		config = proto.Clone(config).(*runtimeapi.ContainerConfig)
		config.Labels = l.withLabel(config.Labels)
	}
	return l.Runtime.CreateContainer(ctx, podSandboxID, config, sandboxConfig)
}

// ListPodSandbox lists the labelled sandboxes that match filter.
func (l *labelledRuntime) ListPodSandbox(ctx context.Context, filter *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	f := &runtimeapi.PodSandboxFilter{Id: filter.GetId(), State: filter.GetState(), LabelSelector: l.withLabel(filter.GetLabelSelector())}
	return l.Runtime.ListPodSandbox(ctx, f)
}

// ListContainers lists the labelled containers that match filter.
func (l *labelledRuntime) ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	f := &runtimeapi.ContainerFilter{
		Id: filter.GetId(), State: filter.GetState(), PodSandboxId: filter.GetPodSandboxId(),
		LabelSelector: l.withLabel(filter.GetLabelSelector()),
	}
	return l.Runtime.ListContainers(ctx, f)
}

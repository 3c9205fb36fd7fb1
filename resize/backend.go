package resize

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/cgroup/cgroupfs"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/cri/remote"
)

// LabelBackend is the label a Remote backend puts on every sandbox and
// container the node creates through it, with the backend's CgroupParent
// as its value. The backend lists only what carries it, so that a node
// sees its own pods and not the others the runtime runs, and Close finds
// by it what to remove, also what a create whose answer was lost made.
const LabelBackend = "io.resizelet.backend"

// DefaultHostCgroupRoot is where HostCgroups and Remote look for the
// host's cgroup filesystem unless WithCgroupRoot says otherwise.
const DefaultHostCgroupRoot = "/sys/fs/cgroup"

// ErrImageNotPresent is wrapped by Remote's error when the runtime does
// not have the image the containers are to run and WithPullImage was not
// given. Without the check, the node would take every pod and fail only
// in an event (ErrImagePull) for each container.
var ErrImageNotPresent = errors.New("image not present in the runtime")

// remoteCommand keeps a container running on a real runtime and makes it
// stop at once on SIGTERM (a bare sleep as PID 1 ignores it, and every
// stop would wait out the grace period). Remote gives it to the node as
// NodeConfig.Command unless the config has a command of its own.
var remoteCommand = []string{"sh", "-c", "trap 'exit 0' TERM; sleep 86400 & wait"}

// backendSeq numbers the private cgroup parents of a process's backends.
var backendSeq atomic.Int64

// Backend is a coherent set of the parts a Node drives, built by one of
// three constructors:
//
//   - Simulated: an in-memory kernel (cgroup.SimKernel) and an in-memory
//     containerd (cri.SimContainerd) that writes container cgroups into
//     that same kernel; nothing touches the host;
//   - HostCgroups: the host's real cgroup filesystem (cgroupfs.FS, the
//     version detected) with the in-memory containerd writing container
//     cgroups there, all below a private cgroup parent;
//   - Remote: a real CRI runtime over its socket (remote.Client) and the
//     host's real cgroups, below a private cgroup parent, with the image
//     checked (or pulled) before any pod is created.
//
// Config is the NodeConfig to start nodes with: the one given to the
// constructor, with the cgroup version and driver the parts use, the
// private cgroup parent as CgroupRoot, and on Remote the image and a
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

	sim    *cri.SimContainerd // the in-memory runtime; nil on Remote
	remote *remote.Client     // the real runtime; nil otherwise
	// parent is the private cgroup parent ("" on Simulated, whose kernel
	// is the backend's own).
	parent string
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
	root          string
	manager       cgroup.Manager
	parent        string
	wrap          func(cgroup.Manager) cgroup.Manager
	runtimeWrap   func(cgroup.Manager) cgroup.Manager
	kernelOpts    []cgroup.SimKernelOption
	containerOpts []cri.SimContainerdOption
	remoteOpts    []remote.Option
	pull          bool
}

// WithCgroupRoot is where the host's cgroup filesystem is mounted
// (HostCgroups and Remote; DefaultHostCgroupRoot by default). Its version
// is detected there (cgroupfs.New). dir is a host directory, not a cgroup:
// it must be absolute and clean (filepath.Clean leaves it as it is), with
// no control character; the constructor refuses any other with an error
// that names WithCgroupRoot and the value and wraps cgroup.ErrInvalidPath,
// also when WithCgroupManager makes it unused.
func WithCgroupRoot(dir string) BackendOption {
	return func(c *backendConfig) { c.root = dir }
}

// WithCgroupManager makes HostCgroups or Remote use m as the host's
// cgroups instead of opening the cgroup filesystem: a cgroupfs.FS opened
// with options of your own, or, in tests, a cgroup.SimKernel standing for
// the host.
func WithCgroupManager(m cgroup.Manager) BackendOption {
	return func(c *backendConfig) { c.manager = m }
}

// WithCgroupParent names the private cgroup parent (HostCgroups and
// Remote) instead of "resizelet-<pid>-<n>": the cgroup under which the
// node's kubepods goes. It is written as NodeConfig.CgroupRoot is, always
// relative to the root of the cgroup hierarchy: a leading "/" is that
// root, never the host's root directory ("/abs/x" and "abs/x" are the
// same cgroup, Backend.CgroupParent returns "abs/x"), and one trailing "/"
// is dropped. The constructor refuses, with an error that names
// WithCgroupParent and the value and wraps cgroup.ErrInvalidPath, a name
// with an empty, "." or ".." component or a control character
// (cgconfig.RootRelative), and the hierarchy root itself ("/"); and it
// refuses a name that is or starts with a kubepods cgroup, the host's.
//
// Close removes what was created on the parent's path after the backend
// was made, in every cgroup hierarchy, and nothing that existed before:
// the parent with everything below it and each ancestor created for it
// ("abs" of "abs/x") when nothing else is left in it. A parent that
// existed before the backend stays, with the cgroups that were below it
// then; only those created since go (cgroup.RemoveCreated).
func WithCgroupParent(name string) BackendOption {
	return func(c *backendConfig) { c.parent = name }
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
// HostCgroups; a real runtime writes its own).
func WithRuntimeCgroups(wrap func(cgroup.Manager) cgroup.Manager) BackendOption {
	return func(c *backendConfig) { c.runtimeWrap = wrap }
}

// WithSimKernel passes options to Simulated's cgroup.NewSimKernel.
func WithSimKernel(opts ...cgroup.SimKernelOption) BackendOption {
	return func(c *backendConfig) { c.kernelOpts = append(c.kernelOpts, opts...) }
}

// WithSimContainerd passes options to the in-memory runtime of Simulated
// and HostCgroups (cri.NewSimContainerd), after the driver the NodeConfig
// names.
func WithSimContainerd(opts ...cri.SimContainerdOption) BackendOption {
	return func(c *backendConfig) { c.containerOpts = append(c.containerOpts, opts...) }
}

// WithRemoteOptions passes options to Remote's remote.Dial (a call
// timeout, gRPC dial options).
func WithRemoteOptions(opts ...remote.Option) BackendOption {
	return func(c *backendConfig) { c.remoteOpts = append(c.remoteOpts, opts...) }
}

// WithPullImage makes Remote pull the image when the runtime does not
// have it, instead of failing with ErrImageNotPresent.
func WithPullImage() BackendOption {
	return func(c *backendConfig) { c.pull = true }
}

func newBackendConfig(opts []BackendOption) backendConfig {
	c := backendConfig{root: DefaultHostCgroupRoot}
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

// privateParent returns the private cgroup parent the options name,
// relative to the hierarchy root, or a new one of this process.
func (c *backendConfig) privateParent() (string, error) {
	if c.parent == "" {
		return fmt.Sprintf("resizelet-%d-%d", os.Getpid(), backendSeq.Add(1)), nil
	}
	name, err := cgconfig.RootRelative(c.parent)
	if err != nil {
		return "", fmt.Errorf("cgroup parent (WithCgroupParent): %w", err)
	}
	if name == "" {
		return "", fmt.Errorf("cgroup parent %q (WithCgroupParent): the hierarchy root cannot be a private parent: %w", c.parent, cgroup.ErrInvalidPath)
	}
	if strings.HasPrefix(name, "kubepods") {
		return "", fmt.Errorf("cgroup parent %q (WithCgroupParent): a kubepods cgroup is the host's, not a private parent", c.parent)
	}
	return name, nil
}

// checkMountRoot refuses a WithCgroupRoot directory that is not an
// absolute, clean host path without control characters. A relative one
// would name another directory from each working directory; NewFS cleans
// an unclean one lexically, which names another directory than the
// kernel's lookup when a ".." follows a symbolic link; and a control
// character is a quoting mistake, not a mount point.
func checkMountRoot(dir string) error {
	var why string
	switch {
	case dir == "":
		why = "empty"
	case strings.ContainsFunc(dir, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		why = "control character"
	case !filepath.IsAbs(dir):
		why = "not an absolute path"
	case filepath.Clean(dir) != dir:
		why = fmt.Sprintf("not a clean path (%s)", filepath.Clean(dir))
	default:
		return nil
	}
	return fmt.Errorf("cgroup root %q (WithCgroupRoot): %s: %w", dir, why, cgroup.ErrInvalidPath)
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

// HostCgroups returns a backend on the host's real cgroups with the
// in-memory containerd: the cgroup filesystem at DefaultHostCgroupRoot
// (or WithCgroupRoot), its version detected, and a private cgroup parent
// (WithCgroupParent, "resizelet-<pid>-<n>" by default) as the node's
// CgroupRoot, so that nothing is written into the host's kubepods. The
// in-memory runtime writes container cgroups there and makes memory usage
// real with processes it starts (cgroupfs.FS.SetUsage). It needs root.
//
// A cfg.CgroupVersion that is set and differs from the host's is refused
// (ErrIncoherent). Options: WithCgroupRoot, WithCgroupManager,
// WithCgroupParent, WithSimContainerd, WithCgroups, WithRuntimeCgroups.
func HostCgroups(cfg NodeConfig, opts ...BackendOption) (*Backend, error) {
	c := newBackendConfig(opts)
	if err := cfg.WithDefaults().Validate(); err != nil {
		return nil, fmt.Errorf("host cgroups backend: %w", err)
	}
	parent, err := c.privateParent()
	if err != nil {
		return nil, fmt.Errorf("host cgroups backend: %w", err)
	}
	raw, where, err := c.hostCgroups()
	if err != nil {
		return nil, fmt.Errorf("host cgroups backend: %w", err)
	}
	if err := hostVersion(&cfg, raw, where); err != nil {
		return nil, fmt.Errorf("host cgroups backend: %w", err)
	}
	// What exists of the parent's path now is the host's: Close keeps it.
	before, err := cgroup.SnapshotTree(raw, parent)
	if err != nil {
		return nil, fmt.Errorf("host cgroups backend: %w", err)
	}
	b := &Backend{kind: "host cgroups", raw: raw, cgroups: c.wrapped(raw), parent: parent, before: before}
	b.sim = c.simContainerd(b.cgroups, cfg)
	b.runtime = b.sim
	if err := coherent(context.Background(), &cfg, b.Deps(Deps{})); err != nil {
		return nil, fmt.Errorf("host cgroups backend: %w", err)
	}
	cfg.CgroupRoot = underParent(parent, cfg.CgroupRoot)
	b.cfg = cfg
	return b, nil
}

// Remote returns a backend on a real CRI runtime at endpoint
// ("unix:///run/containerd/containerd.sock") and the host's real cgroups
// (DefaultHostCgroupRoot or WithCgroupRoot, the version detected), with a
// private cgroup parent as the node's CgroupRoot (WithCgroupParent,
// "resizelet-<pid>-<n>" by default), so that nothing is written into the
// host's kubepods. Containers run image (NodeConfig.Image) with
// NodeConfig.Command, or, when the config has none, a shell that sleeps
// and exits at once on SIGTERM: image must have sh and sleep (busybox).
// Every sandbox and container the node creates carries LabelBackend, and
// the node sees only those.
//
// It checks that the runtime has image (the CRI ImageStatus call) and
// fails with ErrImageNotPresent if not, unless WithPullImage makes it
// pull the image. A cfg.CgroupVersion that differs from the host's, or a
// cfg.CgroupDriver that differs from the driver the runtime reports
// (RuntimeConfig, containerd 1.7 and later), is refused (ErrIncoherent);
// an empty CgroupDriver becomes the runtime's, or cgroupfs when the
// runtime cannot tell. The systemd driver is refused
// (errors.ErrUnsupported): runc's systemd driver takes a slice name as
// cgroup parent, not a path below a private parent. It needs root, as the
// kubelet does. Options: WithCgroupRoot, WithCgroupManager,
// WithCgroupParent, WithCgroups, WithRemoteOptions, WithPullImage.
func Remote(ctx context.Context, endpoint, image string, cfg NodeConfig, opts ...BackendOption) (_ *Backend, err error) {
	c := newBackendConfig(opts)
	if image == "" {
		return nil, fmt.Errorf("remote backend at %s: an image is required: the image the containers run", endpoint)
	}
	if err := cfg.WithDefaults().Validate(); err != nil {
		return nil, fmt.Errorf("remote backend: %w", err)
	}
	parent, err := c.privateParent()
	if err != nil {
		return nil, fmt.Errorf("remote backend: %w", err)
	}
	raw, where, err := c.hostCgroups()
	if err != nil {
		return nil, fmt.Errorf("remote backend: %w", err)
	}
	if err := hostVersion(&cfg, raw, where); err != nil {
		return nil, fmt.Errorf("remote backend: %w", err)
	}
	// What exists of the parent's path now is the host's: Close keeps it.
	before, err := cgroup.SnapshotTree(raw, parent)
	if err != nil {
		return nil, fmt.Errorf("remote backend: %w", err)
	}
	rt, err := remote.Dial(ctx, endpoint, c.remoteOpts...)
	if err != nil {
		return nil, fmt.Errorf("remote backend: %w", err)
	}
	defer func() {
		if err != nil {
			rt.Close()
		}
	}()
	if err := ensureImage(ctx, rt, endpoint, image, c.pull); err != nil {
		return nil, fmt.Errorf("remote backend: %w", err)
	}
	b := &Backend{
		kind: "remote", raw: raw, cgroups: c.wrapped(raw), parent: parent, before: before, remote: rt,
		runtime: &labelledRuntime{Runtime: rt, value: parent},
	}
	if err := coherent(ctx, &cfg, b.Deps(Deps{})); err != nil {
		return nil, fmt.Errorf("remote backend at %s: %w", endpoint, err)
	}
	switch cfg.CgroupDriver {
	case "":
		// The runtime cannot tell (containerd 1.6): the kubelet's default.
		cfg.CgroupDriver = cgroup.DriverCgroupfs
	case cgroup.DriverSystemd:
		// The node names its cgroups with the private parent as a path
		// prefix, which runc's systemd driver refuses in a cgroup parent
		// (a slice name has no "/"): every sandbox would fail to start.
		return nil, fmt.Errorf("remote backend at %s: the systemd cgroup driver (the runtime's, or NodeConfig.CgroupDriver) cannot keep the node's cgroups below a private parent; run the runtime with the cgroupfs driver (containerd: SystemdCgroup = false, as examples/realhost/containerd.sh does): %w", endpoint, errors.ErrUnsupported)
	}
	cfg.CgroupRoot = underParent(parent, cfg.CgroupRoot)
	cfg.Image = image
	if len(cfg.Command) == 0 {
		cfg.Command = remoteCommand
	}
	b.cfg = cfg
	return b, nil
}

// hostCgroups returns the host's cgroup manager the options name, and
// where it is, for messages.
func (c *backendConfig) hostCgroups() (cgroup.Manager, string, error) {
	if err := checkMountRoot(c.root); err != nil {
		return nil, "", err
	}
	if c.manager != nil {
		return c.manager, fmt.Sprintf("the cgroup manager given (%T)", c.manager), nil
	}
	fs, err := cgroupfs.New(c.root)
	if err != nil {
		return nil, "", fmt.Errorf("host cgroups at %s: %w", c.root, err)
	}
	return fs, "the host's cgroups at " + fs.Root(), nil
}

// hostVersion sets cfg's cgroup version to the host's, and refuses a cfg
// that names the other one.
func hostVersion(cfg *NodeConfig, host cgroup.Manager, where string) error {
	v := host.Version()
	if cfg.CgroupVersion != 0 && cfg.CgroupVersion != v {
		return &MismatchError{
			Setting: "cgroup version",
			Want:    "NodeConfig.CgroupVersion", WantValue: cfg.CgroupVersion.String(),
			Have: where, HaveValue: v.String(),
		}
	}
	cfg.CgroupVersion = v
	return nil
}

// ensureImage checks that the runtime has image, pulling it if pull is
// set.
func ensureImage(ctx context.Context, rt *remote.Client, endpoint, image string, pull bool) error {
	img, err := rt.ImageStatus(ctx, image)
	if err != nil {
		return fmt.Errorf("image %q: the runtime at %s did not answer ImageStatus: %w", image, endpoint, err)
	}
	if img != nil {
		return nil
	}
	if !pull {
		return fmt.Errorf("image %q is not present in the runtime at %s (pull or import it first, or use WithPullImage): %w", image, endpoint, ErrImageNotPresent)
	}
	if _, err := rt.PullImage(ctx, image); err != nil {
		return fmt.Errorf("image %q is not present in the runtime at %s and pulling it failed: %w", image, endpoint, err)
	}
	return nil
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
// Simulated and HostCgroups, and on Remote the *remote.Client behind a
// wrapper that labels what it creates (LabelBackend) and lists only what
// is so labelled. It is nil on a zero or nil Backend.
func (b *Backend) Runtime() cri.Runtime {
	if b == nil {
		return nil
	}
	return b.runtime
}

// CgroupParent returns the private cgroup parent below which the node's
// cgroups go on HostCgroups and Remote (the value of LabelBackend on
// Remote), relative to the hierarchy root and without a leading "/", and
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

// labelledRuntime is the runtime a Remote backend gives the node: every
// sandbox and container it creates carries LabelBackend with the
// backend's value, and the lists it returns hold only those, as if the
// runtime served this node alone. The configs are copied before the label
// is added: the node's messages are shared and never changed.
type labelledRuntime struct {
	cri.Runtime
	value string
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

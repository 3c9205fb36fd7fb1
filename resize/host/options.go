package host

import (
	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/systemd"
	"github.com/resizelet/resizelet/cri/remote"
	"github.com/resizelet/resizelet/resize"
)

// DefaultCgroupRoot is where Cgroups and Remote look for the host's
// cgroup filesystem unless WithCgroupRoot says otherwise.
const DefaultCgroupRoot = "/sys/fs/cgroup"

// Option configures Cgroups and Remote. Options that do not apply to a
// constructor are ignored by it.
type Option func(*config)

type config struct {
	root       string
	manager    cgroup.Manager
	parent     string
	remoteOpts []remote.Option
	pull       bool
	handler    string
	systemd    systemd.Conn
	backend    []resize.BackendOption
}

func newConfig(opts []Option) config {
	c := config{root: DefaultCgroupRoot}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithCgroupRoot is where the host's cgroup filesystem is mounted
// (DefaultCgroupRoot by default). Its version is detected there
// (cgroupfs.New). dir is a host directory, not a cgroup: it must be
// absolute and clean (filepath.Clean leaves it as it is), with no control
// character; the constructor refuses any other with an error that names
// WithCgroupRoot and the value and wraps cgroup.ErrInvalidPath, also when
// WithCgroupManager makes it unused.
func WithCgroupRoot(dir string) Option {
	return func(c *config) { c.root = dir }
}

// WithCgroupManager makes Cgroups or Remote use m as the host's cgroups
// instead of opening the cgroup filesystem: a cgroupfs.FS opened with
// options of your own, or, in tests, a cgroup.SimKernel standing for the
// host.
func WithCgroupManager(m cgroup.Manager) Option {
	return func(c *config) { c.manager = m }
}

// WithCgroupParent names the private cgroup parent instead of
// "resizelet-<pid>-<n>": the cgroup under which the node's kubepods goes.
// It is written as NodeConfig.CgroupRoot is, always relative to the root
// of the cgroup hierarchy: a leading "/" is that root, never the host's
// root directory ("/abs/x" and "abs/x" are the same cgroup,
// Backend.CgroupParent returns "abs/x"), and one trailing "/" is dropped.
// The constructor refuses, with an error that names WithCgroupParent and
// the value and wraps cgroup.ErrInvalidPath, a name with an empty, "." or
// ".." component or a control character (cgconfig.RootRelative), and the
// hierarchy root itself ("/"); and it refuses a name that is or starts
// with a kubepods cgroup, the host's.
//
// Backend.Close removes what was created on the parent's path after the
// backend was made, in every cgroup hierarchy, and nothing that existed
// before: the parent with everything below it and each ancestor created
// for it ("abs" of "abs/x") when nothing else is left in it. A parent that
// existed before the backend stays, with the cgroups that were below it
// then; only those created since go (cgroup.RemoveCreated).
func WithCgroupParent(name string) Option {
	return func(c *config) { c.parent = name }
}

// WithRemoteOptions passes options to Remote's remote.Dial (a call
// timeout, gRPC dial options).
func WithRemoteOptions(opts ...remote.Option) Option {
	return func(c *config) { c.remoteOpts = append(c.remoteOpts, opts...) }
}

// WithPullImage makes Remote pull the image when the runtime does not
// have it, instead of failing with ErrImageNotPresent.
func WithPullImage() Option {
	return func(c *config) { c.pull = true }
}

// WithRuntimeHandler makes Remote's node run its sandboxes with the
// runtime handler name (a RuntimeClass's handler: containerd's
// runtimes.<name>, such as one whose BinaryName is crun) instead of the
// runtime's default. The kubelet sends a handler only for a pod with a
// RuntimeClass; this is the node whose pods all have one.
func WithRuntimeHandler(name string) Option {
	return func(c *config) { c.handler = name }
}

// WithSystemd makes Cgroups and Remote, with the systemd cgroup driver,
// make and update the node's slices through systemd over conn (a
// go-systemd *dbus.Conn, or a systemd.TreeConn in tests over a
// WithCgroupRoot tree), instead of connecting to the host's systemd, which
// they do without this option only when systemd runs the host. It has no
// effect with the cgroupfs driver or with WithCgroupManager.
func WithSystemd(conn systemd.Conn) Option {
	return func(c *config) { c.systemd = conn }
}

// WithBackendOptions passes options on to the backend the constructor
// assembles (resize.NewHostBackend): resize.WithCgroups for both,
// resize.WithSimContainerd and resize.WithRuntimeCgroups for Cgroups'
// in-memory runtime.
func WithBackendOptions(opts ...resize.BackendOption) Option {
	return func(c *config) { c.backend = append(c.backend, opts...) }
}

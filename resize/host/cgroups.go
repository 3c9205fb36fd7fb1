package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/cgroup/cgroupfs"
	"github.com/resizelet/resizelet/cgroup/systemd"
	"github.com/resizelet/resizelet/resize"
)

// backendSeq numbers the private cgroup parents of a process's backends.
var backendSeq atomic.Int64

// Cgroups returns a backend on the host's real cgroups with the in-memory
// containerd: the cgroup filesystem at DefaultCgroupRoot (or
// WithCgroupRoot), its version detected, and a private cgroup parent
// (WithCgroupParent, "resizelet-<pid>-<n>" by default) as the node's
// CgroupRoot, so that nothing is written into the host's kubepods. The
// in-memory runtime writes container cgroups there and makes memory usage
// real with processes it starts (cgroupfs.FS.SetUsage). It needs root.
//
// A cfg.CgroupVersion that is set and differs from the host's is refused
// (resize.ErrIncoherent). With cfg.CgroupDriver systemd the private parent
// is a slice (resizelet_<pid>_<n>.slice), the pod slices a chain below it,
// made and updated through systemd where systemd runs the host (or
// WithSystemd gives the connection), and made as directories elsewhere.
// Options: WithCgroupRoot, WithCgroupManager, WithCgroupParent,
// WithSystemd, WithBackendOptions (resize.WithSimContainerd,
// resize.WithCgroups, resize.WithRuntimeCgroups).
func Cgroups(cfg resize.NodeConfig, opts ...Option) (*resize.Backend, error) {
	c := newConfig(opts)
	if err := cfg.WithDefaults().Validate(); err != nil {
		return nil, fmt.Errorf("host cgroups backend: %w", err)
	}
	parts, err := c.hostParts(context.Background(), &cfg, cfg.CgroupDriver)
	if err != nil {
		return nil, fmt.Errorf("host cgroups backend: %w", err)
	}
	b, err := resize.NewHostBackend(context.Background(), cfg, parts, c.backend...)
	if err != nil {
		// The backend that would have closed the manager was not made.
		parts.CloseCgroups()
	}
	return b, err
}

// hostParts opens the host's cgroups for the driver (hostCgroups), sets
// cfg's version to theirs, and names the private parent: a cgroupfs path,
// or with the systemd driver the chain of slices systemd names it with
// (cgconfig.SystemdName: "resizelet-<pid>-<n>" is
// resizelet_<pid>_<n>.slice), with the snapshot of what exists of it now,
// which is the host's and stays.
func (c *config) hostParts(ctx context.Context, cfg *resize.NodeConfig, driver cgroup.Driver) (resize.HostParts, error) {
	parent, err := c.privateParent()
	if err != nil {
		return resize.HostParts{}, err
	}
	raw, where, closeRaw, err := c.hostCgroups(ctx, driver)
	if err != nil {
		return resize.HostParts{}, err
	}
	if d, ok := raw.(interface{ Driver() cgroup.Driver }); driver == cgroup.DriverSystemd || ok && d.Driver() == cgroup.DriverSystemd {
		parent = cgconfig.SystemdName(strings.Split(parent, "/")...)
	}
	if err := hostVersion(cfg, raw, where); err != nil {
		closeRaw()
		return resize.HostParts{}, err
	}
	before, err := cgroup.SnapshotTree(raw, parent)
	if err != nil {
		closeRaw()
		return resize.HostParts{}, err
	}
	return resize.HostParts{Cgroups: raw, Parent: parent, Before: before, CloseCgroups: closeRaw}, nil
}

// privateParent returns the private cgroup parent the options name,
// relative to the hierarchy root, or a new one of this process.
func (c *config) privateParent() (string, error) {
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
// would name another directory from each working directory; cgroupfs.New
// cleans an unclean one lexically, which names another directory than the
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

// hostCgroups returns the host's cgroup manager the options name, where
// it is, for messages, and how to close what was opened for it (nothing
// for a manager given with WithCgroupManager, which is the caller's). With
// the systemd driver it is systemd's (cgroup/systemd), which makes slices
// through systemd as the kubelet's systemd driver does, when WithSystemd
// gives the connection to systemd or systemd runs the host
// (/run/systemd/system exists, as sd_booted checks); elsewhere the slices
// are directories, as the in-memory runtime's are.
func (c *config) hostCgroups(ctx context.Context, driver cgroup.Driver) (m cgroup.Manager, where string, close func() error, err error) {
	none := func() error { return nil }
	if err := checkMountRoot(c.root); err != nil {
		return nil, "", nil, err
	}
	if c.manager != nil {
		return c.manager, fmt.Sprintf("the cgroup manager given (%T)", c.manager), none, nil
	}
	fs, err := cgroupfs.New(c.root)
	if err != nil {
		return nil, "", nil, fmt.Errorf("host cgroups at %s: %w", c.root, err)
	}
	where = "the host's cgroups at " + fs.Root()
	if driver != cgroup.DriverSystemd {
		return fs, where, none, nil
	}
	var sd *systemd.Manager
	if c.systemd != nil {
		sd, err = systemd.New(fs, c.systemd)
	} else if st, serr := os.Stat("/run/systemd/system"); serr != nil || !st.IsDir() {
		return fs, where, none, nil
	} else {
		sd, err = systemd.Open(ctx, fs)
	}
	if err != nil {
		return nil, "", nil, fmt.Errorf("host cgroups at %s with the systemd driver: %w", fs.Root(), err)
	}
	return sd, where + " through systemd", sd.Close, nil
}

// hostVersion sets cfg's cgroup version to the host's, and refuses a cfg
// that names the other one.
func hostVersion(cfg *resize.NodeConfig, host cgroup.Manager, where string) error {
	v := host.Version()
	if cfg.CgroupVersion != 0 && cfg.CgroupVersion != v {
		return &resize.MismatchError{
			Setting: "cgroup version",
			Want:    "NodeConfig.CgroupVersion", WantValue: cfg.CgroupVersion.String(),
			Have: where, HaveValue: v.String(),
		}
	}
	cfg.CgroupVersion = v
	return nil
}

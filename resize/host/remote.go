package host

import (
	"context"
	"errors"
	"fmt"

	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/cri/remote"
	"github.com/resizelet/resizelet/resize"
)

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

// Remote returns a backend on a real CRI runtime at endpoint
// ("unix:///run/containerd/containerd.sock") and the host's real cgroups
// (DefaultCgroupRoot or WithCgroupRoot, the version detected), with a
// private cgroup parent as the node's CgroupRoot (WithCgroupParent,
// "resizelet-<pid>-<n>" by default), so that nothing is written into the
// host's kubepods. Containers run image (NodeConfig.Image) with
// NodeConfig.Command, or, when the config has none, a shell that sleeps
// and exits at once on SIGTERM: image must have sh and sleep (busybox).
// Every sandbox and container the node creates carries
// resize.LabelBackend, and the node sees only those.
//
// It checks that the runtime has image (the CRI ImageStatus call) and
// fails with ErrImageNotPresent if not, unless WithPullImage makes it
// pull the image. A cfg.CgroupVersion that differs from the host's, or a
// cfg.CgroupDriver that differs from the driver the runtime reports
// (RuntimeConfig, containerd 1.7 and later), is refused
// (resize.ErrIncoherent); an empty CgroupDriver becomes the runtime's, or
// cgroupfs when the runtime cannot tell. With the systemd driver (set, or
// the runtime's) the private parent is a slice (resizelet_<pid>_<n>.slice)
// and the node's slices are made and updated through systemd, as the
// kubelet's systemd driver does (package cgroup/systemd), where systemd
// runs the host or WithSystemd gives the connection; elsewhere the
// systemd driver is refused (errors.ErrUnsupported), because systemd
// would write its own values over pod slices made as directories when
// the runtime starts a container's scope in them. It needs root, as the
// kubelet does. Options: WithCgroupRoot, WithCgroupManager,
// WithCgroupParent, WithSystemd, WithRemoteOptions, WithPullImage,
// WithBackendOptions (resize.WithCgroups).
func Remote(ctx context.Context, endpoint, image string, cfg resize.NodeConfig, opts ...Option) (_ *resize.Backend, err error) {
	c := newConfig(opts)
	if image == "" {
		return nil, fmt.Errorf("remote backend at %s: an image is required: the image the containers run", endpoint)
	}
	if err := cfg.WithDefaults().Validate(); err != nil {
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
	// The cgroups are opened for the node's driver: the configured one,
	// or the one the runtime reports (NewHostBackend checks that they
	// agree).
	driver := cfg.CgroupDriver
	if driver == "" {
		if d, known, derr := cri.CgroupDriverOf(ctx, rt); derr == nil && known {
			driver = d
		}
	}
	parts, err := c.hostParts(ctx, &cfg, driver)
	if err != nil {
		return nil, fmt.Errorf("remote backend: %w", err)
	}
	defer func() {
		if err != nil {
			parts.CloseCgroups()
		}
	}()
	if err := ensureImage(ctx, rt, endpoint, image, c.pull); err != nil {
		return nil, fmt.Errorf("remote backend: %w", err)
	}
	cfg.Image = image
	if len(cfg.Command) == 0 {
		cfg.Command = remoteCommand
	}
	parts.Runtime, parts.Endpoint, parts.RuntimeHandler = rt, endpoint, c.handler
	return resize.NewHostBackend(ctx, cfg, parts, c.backend...)
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

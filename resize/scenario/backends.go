package scenario

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/cri/remote"
	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/host"
)

// backends are the parts a node drives, each wrapped so the runner can
// inject faults and record what happened. The node and the runtime share
// cgroups, so all writes land in one log in the order they happened.
type backends struct {
	// backend is the coherent set of parts below the wrappers
	// (resize.Simulated, host.Cgroups or host.Remote); closing it removes what
	// the run made.
	backend  *resize.Backend
	version  cgroup.Version
	cgroups  *cgroup.Recorder      // outermost: what the node and the runtime write through
	cgFaults *cgroup.FaultInjector // below the recorder, so failed writes are recorded
	runtime  *cri.Recorder         // outermost runtime: what the node calls
	rtFaults *cri.FaultInjector
	// base is the innermost runtime: usage steps go to it directly.
	base cri.Runtime
	// realRuntime is set on a real CRI runtime (--cri-endpoint), which
	// writes container cgroups with its own cpu.weight formula.
	realRuntime bool
	// exiter ends a container's process; only the in-memory runtime can.
	exiter interface {
		Exit(containerID string, exitCode int32, reason string) error
	}
}

// newBackends builds the cgroup manager and runtime for s through package
// resize's backend constructors, the one wiring there is. Without options
// both are simulated (resize.Simulated). --cgroup-root puts pod and
// container cgroups on the real hierarchy at that root (host.Cgroups:
// the in-memory runtime then writes container cgroups there and makes
// usage real with holder processes). --cri-endpoint drives a real CRI
// runtime over its socket (host.Remote); its containers live in the
// host's real cgroups, at --cgroup-root or /sys/fs/cgroup. On real
// cgroups the host's version overrides the file's node.cgroupVersion, and
// the node's cgroups go below a private parent (resizelet-<pid>-<n>),
// never into a real kubepods.
func newBackends(ctx context.Context, s *Scenario, opts Options) (*backends, error) {
	b := &backends{}
	// A step's transcript names every write and call: keep them all (the
	// runner resets the recorders after each step).
	bopts := []resize.BackendOption{resize.WithCgroups(func(m cgroup.Manager) cgroup.Manager {
		b.cgFaults = cgroup.NewFaultInjector(m)
		b.cgroups = cgroup.NewRecorder(b.cgFaults, cgroup.RecordAtMost(-1))
		return b.cgroups
	})}
	if opts.RuntimeCgroups != nil {
		bopts = append(bopts, resize.WithRuntimeCgroups(opts.RuntimeCgroups))
	}
	weight := cgconfig.QuadraticWeight
	if s.ContainerWeight == "linear" {
		weight = cgconfig.LinearWeight
	}
	cfg := s.Node
	var err error
	root := opts.CgroupRoot
	if root != "" {
		// host.WithCgroupRoot takes an absolute, clean directory only;
		// a command line may name a relative or unclean one.
		if root, err = filepath.Abs(root); err != nil {
			return nil, fmt.Errorf("--cgroup-root %s: %w", opts.CgroupRoot, err)
		}
	}
	switch {
	case opts.CRIEndpoint != "":
		b.realRuntime = true
		if opts.Image == "" {
			return nil, fmt.Errorf("--cri-endpoint %s: --image is required: the image the containers run", opts.CRIEndpoint)
		}
		hopts := []host.Option{host.WithBackendOptions(bopts...), host.WithRemoteOptions(remote.WithCallTimeout(30 * time.Second))}
		if root != "" {
			hopts = append(hopts, host.WithCgroupRoot(root))
		}
		if opts.RuntimeHandler != "" {
			hopts = append(hopts, host.WithRuntimeHandler(opts.RuntimeHandler))
		}
		cfg.CgroupVersion = 0 // the host's
		if b.backend, err = host.Remote(ctx, opts.CRIEndpoint, opts.Image, cfg, hopts...); err != nil {
			return nil, fmt.Errorf("--cri-endpoint %s: %w", opts.CRIEndpoint, err)
		}
	case opts.CgroupRoot != "":
		cfg.CgroupVersion = 0 // the host's
		bopts = append(bopts, resize.WithSimContainerd(cri.WithContainerWeight(weight)))
		if b.backend, err = host.Cgroups(cfg, host.WithCgroupRoot(root), host.WithBackendOptions(bopts...)); err != nil {
			return nil, fmt.Errorf("--cgroup-root %s: %w", opts.CgroupRoot, err)
		}
	default:
		bopts = append(bopts, resize.WithSimContainerd(cri.WithContainerWeight(weight)))
		if b.backend, err = resize.Simulated(cfg, bopts...); err != nil {
			return nil, err
		}
	}
	b.version = b.backend.Config().CgroupVersion
	b.base = b.backend.Runtime()
	if mem, ok := b.base.(*cri.SimContainerd); ok {
		b.exiter = mem
	}
	b.rtFaults = cri.NewFaultInjector(b.base)
	b.runtime = cri.NewRecorder(b.rtFaults, cri.RecordAtMost(-1))
	return b, nil
}

// closeTimeout bounds the removal of what a run made, which runs on a
// context of its own: the run's may be done (a signal, a deadline).
const closeTimeout = 2 * time.Minute

// close removes what the run made (on real parts: its containers, sandboxes
// and private cgroup tree) and frees the backends. Its error is not the
// scenario's outcome; what a real run leaves is also removed by
// containerd.sh stop.
func (b *backends) close(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
	defer cancel()
	return b.backend.Close(ctx)
}

// maxRealUsage is the most memory a usage step can make a container on a
// real runtime use: it writes a file to the pod's /dev/shm, which
// containerd sizes at 64 MiB.
const maxRealUsage = 60 << 20

// NotApplicable returns why s cannot run on the real parts opts name, or
// "" if it can. On a real runtime, a node of another cgroup driver than
// the runtime's (opts.CgroupDriver), exit steps (only the in-memory
// runtime can end a container's process with a chosen code), faults in
// container cgroup writes (runc writes those itself) and usage beyond what
// a pod's /dev/shm holds do not apply.
func NotApplicable(s *Scenario, opts Options) string {
	if opts.CRIEndpoint == "" {
		return ""
	}
	nodeDriver, runtimeDriver := s.Node.CgroupDriver, opts.CgroupDriver
	if nodeDriver == "" {
		nodeDriver = cgroup.DriverCgroupfs
	}
	if runtimeDriver == "" {
		runtimeDriver = cgroup.DriverCgroupfs
	}
	if nodeDriver != runtimeDriver {
		return fmt.Sprintf("the %s cgroup driver (the runtime is set up for %s)", nodeDriver, runtimeDriver)
	}
	for i, st := range s.Steps {
		switch {
		case st.Action == ActionExit:
			return fmt.Sprintf("steps[%d]: exit steps need the in-memory runtime", i)
		case st.Action == ActionFault && st.Call == CallCgroupWrite && st.Container != "":
			return fmt.Sprintf("steps[%d]: the real runtime writes container cgroups itself, not through the node's cgroup manager", i)
		case st.Action == ActionUsage && st.Memory.Value() > maxRealUsage:
			return fmt.Sprintf("steps[%d]: usage %s is more than a pod's /dev/shm holds", i, st.Memory.String())
		}
	}
	return ""
}

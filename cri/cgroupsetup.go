package cri

import (
	"context"
	"errors"
	"fmt"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup"
)

// RuntimeConfigurer is a runtime that answers the CRI RuntimeConfig call
// (cri-api's RuntimeService.RuntimeConfig, with its signature): the
// runtime's own configuration, of which the kubelet reads the cgroup
// driver. SimContainerd and remote.Client implement it; it is not part of Runtime
// because runtimes older than the call (containerd 1.6) answer it
// Unimplemented.
type RuntimeConfigurer interface {
	RuntimeConfig(ctx context.Context) (*runtimeapi.RuntimeConfigResponse, error)
}

// CgroupVersioner is an in-process runtime that writes container cgroups
// through a cgroup.Manager of its own (SimContainerd) and reports that
// manager's cgroup version, so that a node can check that it writes the
// same hierarchy as the node itself. A real runtime writes whatever the
// host has and does not implement it.
type CgroupVersioner interface {
	CgroupVersion() cgroup.Version
}

// CgroupDriverOf asks rt which cgroup driver it uses, as the kubelet does
// when it starts (cmd/kubelet/app/server.go, getCgroupDriverFromCRI): the
// CRI RuntimeConfig call of rt, or of the first runtime that rt wraps
// (through Unwrap() Runtime methods) that has one. known is false when the
// runtime cannot tell: no runtime in the chain has RuntimeConfig, it
// answers Unimplemented (containerd before 1.7; the kubelet then keeps its
// configured driver), or its answer has no Linux configuration. Any other
// error of the call is returned, and so is a driver that is neither
// systemd nor cgroupfs, with the kubelet's message.
func CgroupDriverOf(ctx context.Context, rt Runtime) (driver cgroup.Driver, known bool, err error) {
	rc, ok := findRuntime[RuntimeConfigurer](rt)
	if !ok {
		return "", false, nil
	}
	resp, err := rc.RuntimeConfig(ctx)
	if errors.Is(err, ErrUnimplemented) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("runtime config: %w", err)
	}
	linux := resp.GetLinux()
	if linux == nil {
		// The kubelet's comment: GetCgroupDriver on a missing Linux
		// config would say systemd, which nobody meant.
		return "", false, nil
	}
	switch d := linux.GetCgroupDriver(); d {
	case runtimeapi.CgroupDriver_SYSTEMD:
		return cgroup.DriverSystemd, true, nil
	case runtimeapi.CgroupDriver_CGROUPFS:
		return cgroup.DriverCgroupfs, true, nil
	default:
		return "", false, fmt.Errorf("runtime returned an unknown cgroup driver %d", d)
	}
}

// CgroupVersionOf returns the cgroup version of the manager an in-process
// runtime in rt's chain (rt, or a runtime it wraps through Unwrap()
// Runtime methods) writes container cgroups through, and false when no
// runtime in the chain says (a real runtime).
func CgroupVersionOf(rt Runtime) (cgroup.Version, bool) {
	v, ok := findRuntime[CgroupVersioner](rt)
	if !ok {
		return 0, false
	}
	return v.CgroupVersion(), true
}

// criDriver is the CRI's name of a cgroup driver.
func criDriver(d cgroup.Driver) runtimeapi.CgroupDriver {
	if d == cgroup.DriverSystemd {
		return runtimeapi.CgroupDriver_SYSTEMD
	}
	return runtimeapi.CgroupDriver_CGROUPFS
}

// RuntimeConfig reports the runtime's cgroup driver (WithDriver), as
// containerd 2.x answers it from its runc options (SystemdCgroup).
func (m *SimContainerd) RuntimeConfig(ctx context.Context) (*runtimeapi.RuntimeConfigResponse, error) {
	if !m.made() {
		return nil, errSimNotMade
	}
	return &runtimeapi.RuntimeConfigResponse{
		Linux: &runtimeapi.LinuxRuntimeConfiguration{CgroupDriver: criDriver(m.driver)},
	}, nil
}

// CgroupVersion reports the version of the cgroup manager the runtime
// writes container cgroups through.
func (m *SimContainerd) CgroupVersion() cgroup.Version {
	if !m.made() {
		return 0
	}
	return m.cg.Version()
}

var (
	_ RuntimeConfigurer = (*SimContainerd)(nil)
	_ CgroupVersioner   = (*SimContainerd)(nil)
)

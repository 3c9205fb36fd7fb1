package resize

import (
	"context"
	"errors"
	"fmt"

	"github.com/resizelet/resizelet/cri"
)

// ErrIncoherent is wrapped (errors.Is) by the error of NewNode, and of
// the Backend constructors, when the parts a node is wired with disagree:
// a NodeConfig that names one cgroup version or driver while the cgroup
// manager or the runtime uses the other, or an in-memory runtime that
// writes container cgroups into a hierarchy of another version than the
// node's. Such a node would not fail at once: it would write the wrong
// files, or name cgroups the runtime does not find, and fail later with
// the runtime's errors. *MismatchError says which parts and values.
var ErrIncoherent = errors.New("incoherent node wiring")

// MismatchError is one disagreement between two parts of a node's wiring:
// the setting (the cgroup version or driver) and what each side has.
type MismatchError struct {
	Setting string // "cgroup version" or "cgroup driver"
	// Want is the side the node was told (usually a NodeConfig field),
	// Have the side that is actually so (the cgroup manager, the runtime).
	Want, WantValue string
	Have, HaveValue string
}

// Error names the setting and both sides with their values.
func (e *MismatchError) Error() string {
	if e == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%s mismatch: %s is %s, but %s is %s", e.Setting, e.Want, e.WantValue, e.Have, e.HaveValue)
}

// Is reports ErrIncoherent.
func (e *MismatchError) Is(target error) bool { return target == ErrIncoherent }

// coherent checks that cfg and deps describe one node, and fills in cfg
// what the parts say and cfg leaves open:
//
//   - the cgroup version is the cgroup manager's; a NodeConfig.CgroupVersion
//     that is set and differs is refused;
//   - an in-memory runtime (cri.CgroupVersioner) must write container
//     cgroups into a hierarchy of that same version;
//   - the cgroup driver is the one the runtime reports through the CRI
//     RuntimeConfig call, when it reports one. The kubelet v1.35.4 takes
//     the runtime's driver over its configured one without a word
//     (cmd/kubelet/app/server.go, getCgroupDriverFromCRI); resizelet
//     takes it only when NodeConfig.CgroupDriver is empty and refuses a
//     NodeConfig that names the other driver, since with this library such
//     a config is a wiring mistake rather than a host's default. A runtime
//     that cannot tell (containerd 1.6 answers Unimplemented) is never
//     refused.
//
// Runtime wrappers are looked through by their Unwrap() cri.Runtime
// methods, and the runtime's configuration is read from the runtime that
// has it directly, so that the check is not one of the calls a recording
// or fault-injecting wrapper sees.
func coherent(ctx context.Context, cfg *NodeConfig, deps Deps) error {
	version := deps.Cgroups.Version()
	if cfg.CgroupVersion != 0 && cfg.CgroupVersion != version {
		return &MismatchError{
			Setting: "cgroup version",
			Want:    "NodeConfig.CgroupVersion", WantValue: cfg.CgroupVersion.String(),
			Have: fmt.Sprintf("Deps.Cgroups (%T)", deps.Cgroups), HaveValue: version.String(),
		}
	}
	cfg.CgroupVersion = version
	if rv, ok := cri.CgroupVersionOf(deps.Runtime); ok && rv != version {
		return &MismatchError{
			Setting: "cgroup version",
			Want:    fmt.Sprintf("Deps.Cgroups (%T)", deps.Cgroups), WantValue: version.String(),
			Have: fmt.Sprintf("the cgroup manager Deps.Runtime (%T) writes container cgroups through", deps.Runtime), HaveValue: rv.String(),
		}
	}
	driver, known, err := cri.CgroupDriverOf(ctx, deps.Runtime)
	if err != nil {
		return err
	}
	switch {
	case !known:
	case cfg.CgroupDriver == "":
		cfg.CgroupDriver = driver
	case cfg.CgroupDriver != driver:
		return &MismatchError{
			Setting: "cgroup driver",
			Want:    "NodeConfig.CgroupDriver", WantValue: string(cfg.CgroupDriver),
			Have: fmt.Sprintf("the driver Deps.Runtime (%T) reports", deps.Runtime), HaveValue: string(driver),
		}
	}
	return nil
}

package resize

import (
	"context"
	"errors"
	"fmt"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cri"
)

// errNotMade is Close's error on a Backend no constructor made, which has
// nothing to remove and no parts to remove it with.
var errNotMade = errors.New("close backend: the Backend was not made by Simulated or NewHostBackend (host.Cgroups, host.Remote)")

// Close stops the nodes still running on the backend's Deps (Node.Close:
// each finishes the batch it is performing; none does anything after),
// refuses new ones (NewNode on its Deps fails with an error matching
// ErrClosed), removes what the nodes started on the backend created, and
// releases the backend: on Simulated and host.Cgroups every container and
// sandbox of the in-memory runtime; on host.Remote the containers and
// sandboxes that carry the backend's LabelBackend (stopped without a
// grace period, then removed); on a host backend, in every cgroup
// hierarchy, what was created on the private cgroup parent's path since
// the backend was made: the parent and everything below it, then each
// ancestor created for it that nothing else has come to use, and nothing
// that existed before the backend (see host.WithCgroupParent); on Simulated
// every cgroup of the in-memory kernel. Then it closes what the host
// constructor opened for the cgroups (HostParts.CloseCgroups: the systemd
// manager's connection) and the connection to a remote runtime, and
// checks that nothing it looked for is left.
//
// It is safe to call after a NewNode that failed, and more than once: only the first call
// works, and later ones return its error. The error joins every removal
// that failed and names what is left; what could be removed was. ctx
// bounds the runtime calls: give it one that is not done yet, even when
// the run it cleans up after was cancelled.
//
// On a zero Backend, or a nil *Backend, it returns an error and does
// nothing.
func (b *Backend) Close(ctx context.Context) error {
	if b == nil || b.kind == "" {
		return errNotMade
	}
	if ctx == nil {
		return &argumentError{op: "close " + b.kind + " backend", msg: "nil context"}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return b.closeErr
	}
	b.closed = true
	var errs []error
	// The nodes still running stop first: each finishes the batch it is
	// performing, and none does I/O after this.
	for _, n := range b.stopNodes() {
		if err := n.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close node %q: %w", n.cfg.Name, err))
		}
	}
	if b.remote != nil {
		errs = append(errs, b.cleanRemote(ctx)...)
	} else {
		errs = append(errs, b.cleanSim(ctx)...)
	}
	errs = append(errs, b.cleanCgroups()...)
	if b.closeCgroups != nil {
		if err := b.closeCgroups(); err != nil {
			errs = append(errs, fmt.Errorf("close the cgroup manager: %w", err))
		}
	}
	if b.remote != nil {
		if err := b.remote.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close the connection to the runtime: %w", err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		b.closeErr = fmt.Errorf("close %s backend: %w", b.kind, err)
	}
	return b.closeErr
}

// cleanSim removes every container and sandbox of the in-memory runtime;
// removing a running container stops its process first.
func (b *Backend) cleanSim(ctx context.Context) []error {
	var errs []error
	ctrs, err := b.sim.ListContainers(ctx, nil)
	errs = append(errs, err)
	for _, c := range ctrs {
		errs = append(errs, b.sim.RemoveContainer(ctx, c.Id))
	}
	sbs, err := b.sim.ListPodSandbox(ctx, nil)
	errs = append(errs, err)
	for _, sb := range sbs {
		errs = append(errs, b.sim.StopPodSandbox(ctx, sb.Id), b.sim.RemovePodSandbox(ctx, sb.Id))
	}
	errs = append(errs, left(ctx, b.sim, nil)...)
	return nonNil(errs)
}

// cleanRemote stops and removes the labelled containers, then the
// labelled sandboxes, of the real runtime. A container or sandbox that is
// gone by the time it is stopped or removed is not an error.
func (b *Backend) cleanRemote(ctx context.Context) []error {
	var errs []error
	keep := func(err error) {
		if err != nil && !errors.Is(err, cri.ErrNotFound) {
			errs = append(errs, err)
		}
	}
	sel := map[string]string{LabelBackend: b.parent}
	ctrs, err := b.remote.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: sel})
	keep(err)
	for _, c := range ctrs {
		// No grace period: the node is done with its containers.
		keep(b.remote.StopContainer(ctx, c.Id, 0))
		keep(b.remote.RemoveContainer(ctx, c.Id))
	}
	sbs, err := b.remote.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: sel})
	keep(err)
	for _, sb := range sbs {
		keep(b.remote.StopPodSandbox(ctx, sb.Id))
		keep(b.remote.RemovePodSandbox(ctx, sb.Id))
	}
	return append(errs, left(ctx, b.remote, sel)...)
}

// left lists what remains of the containers and sandboxes that match the
// label selector sel (nil: all), as errors.
func left(ctx context.Context, rt cri.Runtime, sel map[string]string) []error {
	var errs []error
	if ctrs, err := rt.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: sel}); err != nil {
		errs = append(errs, fmt.Errorf("list the containers left: %w", err))
	} else if len(ctrs) > 0 {
		ids := make([]string, len(ctrs))
		for i, c := range ctrs {
			ids[i] = c.Id
		}
		errs = append(errs, fmt.Errorf("containers left in the runtime: %s", strings.Join(ids, ", ")))
	}
	if sbs, err := rt.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: sel}); err != nil {
		errs = append(errs, fmt.Errorf("list the sandboxes left: %w", err))
	} else if len(sbs) > 0 {
		ids := make([]string, len(sbs))
		for i, sb := range sbs {
			ids[i] = sb.Id
		}
		errs = append(errs, fmt.Errorf("sandboxes left in the runtime: %s", strings.Join(ids, ", ")))
	}
	return errs
}

// cleanCgroups removes what was created on the private cgroup parent's
// path, or on Simulated every cgroup of the kernel but the root.
func (b *Backend) cleanCgroups() []error {
	if b.parent != "" {
		if _, err := cgroup.RemoveCreated(b.raw, b.before); err != nil {
			return []error{err}
		}
		return nil
	}
	kernel := b.raw.(*cgroup.SimKernel)
	var errs []error
	for _, p := range kernel.Paths() {
		if p != "" && !strings.Contains(p, "/") {
			if _, err := cgroup.RemoveTree(kernel, p); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if paths := kernel.Paths(); len(paths) > 1 {
		errs = append(errs, fmt.Errorf("cgroups left in the in-memory kernel: %s", strings.Join(paths[1:], ", ")))
	}
	return errs
}

// nonNil drops the nil errors.
func nonNil(errs []error) []error {
	out := errs[:0]
	for _, err := range errs {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}

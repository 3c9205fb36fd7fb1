package conform

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgroupfs"
	"github.com/resizelet/resizelet/cri"
)

// pathLister is a cgroup manager that can list its cgroups, as the
// in-memory kernel can.
type pathLister interface{ Paths() []string }

// cleanup removes everything the run made, and then looks for anything
// left: the containers and sandboxes it created or that carry its label
// (a create whose answer was lost still made one), and its private cgroup
// tree in every hierarchy. ctx must not be the run's (which may have
// ended on a signal): the cleanup has its own deadline.
func (r *run) cleanup(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, r.opts.CleanupTimeout)
	defer cancel()
	r.step("cleanup")
	c := r.results[checkCleanup]
	c.Status = Pass
	var problems []string
	keep := func(what string, err error) {
		if err != nil && !errors.Is(err, cri.ErrNotFound) {
			problems = append(problems, fmt.Sprintf("%s: %v", what, err))
		}
	}
	selector := map[string]string{LabelRun: r.opts.Prefix}

	containers := slices.Clone(r.containers)
	listed, err := r.rt.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: selector})
	keep("ListContainers", err)
	for _, l := range listed {
		if !slices.Contains(containers, l.Id) {
			containers = append(containers, l.Id)
		}
	}
	for _, id := range containers {
		// No grace period: the container's work is done.
		keep("StopContainer "+id, r.rt.StopContainer(ctx, id, 0))
		err := r.rt.RemoveContainer(ctx, id)
		keep("RemoveContainer "+id, err)
		if err == nil {
			r.report.Removed = append(r.report.Removed, "container "+id)
		}
	}
	sandboxes := slices.Clone(r.sandboxes)
	listedSB, err := r.rt.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: selector})
	keep("ListPodSandbox", err)
	for _, l := range listedSB {
		if !slices.Contains(sandboxes, l.Id) {
			sandboxes = append(sandboxes, l.Id)
		}
	}
	for _, id := range sandboxes {
		keep("StopPodSandbox "+id, r.rt.StopPodSandbox(ctx, id))
		err := r.rt.RemovePodSandbox(ctx, id)
		keep("RemovePodSandbox "+id, err)
		if err == nil {
			r.report.Removed = append(r.report.Removed, "sandbox "+id)
		}
	}
	removed, errs := r.removeCgroups(r.top())
	r.report.Removed = append(r.report.Removed, removed...)
	for _, err := range errs {
		problems = append(problems, err.Error())
	}

	// What is left, looked for afresh.
	if left, err := r.rt.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: selector}); err != nil {
		problems = append(problems, fmt.Sprintf("listing containers afterwards: %v", err))
	} else {
		for _, l := range left {
			r.report.Left = append(r.report.Left, "container "+l.Id)
		}
	}
	if left, err := r.rt.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: selector}); err != nil {
		problems = append(problems, fmt.Sprintf("listing sandboxes afterwards: %v", err))
	} else {
		for _, l := range left {
			r.report.Left = append(r.report.Left, "sandbox "+l.Id)
		}
	}
	r.report.Left = append(r.report.Left, r.leftCgroups(r.top())...)

	evidence(c, "removed %d containers, %d sandboxes and %d cgroup directories", countPrefix(r.report.Removed, "container "),
		countPrefix(r.report.Removed, "sandbox "), countPrefix(r.report.Removed, "cgroup "))
	evidence(c, "afterwards: containers and sandboxes labelled %s=%s, and cgroups named %s in every hierarchy: %d left",
		LabelRun, r.opts.Prefix, r.top(), len(r.report.Left))
	for _, p := range problems {
		evidence(c, "problem: %s", p)
	}
	switch {
	case len(r.report.Left) > 0:
		fail(c, "left behind: %s", strings.Join(r.report.Left, ", "))
	case len(problems) > 0:
		// Nothing is left although a call failed (say, a stop of a
		// container that had exited): the evidence says which.
		c.Summary = "nothing left behind (some cleanup calls failed, see above)"
	default:
		c.Summary = "nothing left behind"
	}
	r.progress("check %d: %s", checkCleanup, c.Status)
}

func countPrefix(list []string, prefix string) int {
	n := 0
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			n++
		}
	}
	return n
}

// removeCgroups removes the cgroup name and everything below it: on a
// cgroup filesystem from every hierarchy (a runtime creates a pod's
// cgroups in all of them), on the in-memory kernel through the manager.
func (r *run) removeCgroups(name string) (removed []string, errs []error) {
	if tm, ok := r.cg.(cgroup.TreeManager); ok {
		// A cgroup filesystem, or the systemd manager, which stops slices.
		return removeTree(tm, name)
	}
	var paths []string
	if l, ok := r.cg.(pathLister); ok {
		for _, p := range l.Paths() {
			if p == name || strings.HasPrefix(p, name+"/") {
				paths = append(paths, p)
			}
		}
	} else {
		// A manager that cannot list: the pod cgroup and its parents.
		for p := r.podCgroup; p != "" && p != "."; {
			paths = append(paths, p)
			i := strings.LastIndex(p, "/")
			if i < 0 {
				break
			}
			p = p[:i]
		}
	}
	slices.SortFunc(paths, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	for _, p := range paths {
		if !r.cg.Exists(p) {
			continue
		}
		if err := r.cg.Delete(p); err != nil {
			errs = append(errs, fmt.Errorf("remove cgroup %s: %w", p, err))
			continue
		}
		removed = append(removed, "cgroup "+p)
	}
	return removed, errs
}

// removeTree removes the cgroup name and everything below it from every
// hierarchy of the cgroup filesystem (cgroup.RemoveTree), naming each
// directory removed as the report does.
func removeTree(m cgroup.TreeManager, name string) (removed []string, errs []error) {
	dirs, err := cgroup.RemoveTree(m, name)
	for _, d := range dirs {
		removed = append(removed, "cgroup "+d)
	}
	if err != nil {
		errs = append(errs, err)
	}
	return removed, errs
}

// leftCgroups lists what remains of the cgroup name.
func (r *run) leftCgroups(name string) []string {
	var out []string
	if cgfs, ok := fsOf(r.cg); ok {
		dirs, err := cgroupDirs(cgfs.Root(), name)
		if err != nil {
			return []string{fmt.Sprintf("cgroups below %s (unreadable: %v)", cgfs.Root(), err)}
		}
		for _, d := range dirs {
			out = append(out, "cgroup "+d)
		}
		return out
	}
	if l, ok := r.cg.(pathLister); ok {
		for _, p := range l.Paths() {
			if p == name || strings.HasPrefix(p, name+"/") {
				out = append(out, "cgroup "+p)
			}
		}
		return out
	}
	if r.cg.Exists(name) {
		out = append(out, "cgroup "+name)
	}
	return out
}

// sweep removes what earlier runs left when their process died without
// cleaning up (kill -9, a crash): sandboxes labelled LabelRun and cgroups
// named PrefixBase-<pid>-* whose process no longer exists. A live run's
// objects, and anything without the label or name, are never touched.
func (r *run) sweep(ctx context.Context) {
	sbs, err := r.rt.ListPodSandbox(ctx, nil)
	if err == nil {
		for _, sb := range sbs {
			prefix, ok := sb.GetLabels()[LabelRun]
			if !ok || prefix == r.opts.Prefix || !deadRun(prefix) {
				continue
			}
			cs, _ := r.rt.ListContainers(ctx, &runtimeapi.ContainerFilter{PodSandboxId: sb.Id})
			for _, c := range cs {
				_ = r.rt.StopContainer(ctx, c.Id, 0)
				_ = r.rt.RemoveContainer(ctx, c.Id)
			}
			_ = r.rt.StopPodSandbox(ctx, sb.Id)
			if err := r.rt.RemovePodSandbox(ctx, sb.Id); err == nil {
				r.report.Swept = append(r.report.Swept, fmt.Sprintf("sandbox %s of %s", sb.Id, prefix))
			}
		}
	}
	cgfs, ok := fsOf(r.cg)
	tm, isTree := r.cg.(cgroup.TreeManager)
	if !ok || !isTree {
		return
	}
	mounts, err := cgroupfs.Mounts(cgfs.Root())
	if err != nil {
		return
	}
	seen := map[string]bool{}
	for _, m := range mounts {
		entries, _ := os.ReadDir(m)
		for _, e := range entries {
			// A run's cgroup is its prefix, or with the systemd driver
			// the prefix's slice (dashes escaped to underscores).
			n := e.Name()
			prefix := n
			if r.opts.CgroupDriver == cgroup.DriverSystemd {
				prefix = strings.ReplaceAll(strings.TrimSuffix(n, ".slice"), "_", "-")
			}
			if e.IsDir() && strings.HasPrefix(prefix, PrefixBase+"-") && n != r.top() && deadRun(prefix) {
				seen[n] = true
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(seen)) {
		removed, _ := removeTree(tm, name)
		if len(removed) > 0 {
			r.report.Swept = append(r.report.Swept, fmt.Sprintf("%d cgroup directories of %s", len(removed), name))
		}
	}
}

// deadRun reports whether prefix names a run (PrefixBase-<pid>-...) whose
// process is gone.
func deadRun(prefix string) bool {
	rest, ok := strings.CutPrefix(prefix, PrefixBase+"-")
	if !ok {
		return false
	}
	pidText, _, ok := strings.Cut(rest, "-")
	if !ok {
		return false
	}
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 {
		return false
	}
	_, err = os.Stat("/proc/" + pidText)
	return errors.Is(err, fs.ErrNotExist)
}

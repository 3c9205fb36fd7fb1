package scenario

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/resize"
)

// v1Files and v2Files are the cgroup files that exist on one version only.
// A file in neither list is checked on both versions.
var (
	v1Files = map[string]bool{
		"cpu.shares": true, "cpu.cfs_quota_us": true, "cpu.cfs_period_us": true, "cpu.stat": false,
		"memory.limit_in_bytes": true, "memory.usage_in_bytes": true, "memory.max_usage_in_bytes": true,
		"memory.soft_limit_in_bytes": true, "memory.memsw.limit_in_bytes": true, "memory.failcnt": true,
		"memory.oom_control": true, "memory.swappiness": true,
	}
	v2Files = map[string]bool{
		"cpu.max": true, "cpu.weight": true, "cpu.weight.nice": true, "cpu.max.burst": true,
		"memory.max": true, "memory.min": true, "memory.low": true, "memory.high": true,
		"memory.current": true, "memory.peak": true, "memory.events": true, "memory.events.local": true,
		"memory.swap.max": true, "memory.swap.current": true, "memory.oom.group": true,
		"cgroup.procs": false,
	}
)

// fileVersion returns the cgroup version a file belongs to, or 0 for both.
func fileVersion(file string) int {
	switch {
	case v1Files[file]:
		return 1
	case v2Files[file]:
		return 2
	}
	return 0
}

// expect checks e and writes the outcome to the transcript.
func (r *runner) expect(e *Expect) {
	before := len(r.mismatches)
	checks := 0
	add := func(path, want, got string) {
		r.mismatches = append(r.mismatches, Mismatch{Step: r.step, Path: path, Want: want, Got: got})
	}
	eq := func(path, want, got string) {
		checks++
		if want != got {
			add(path, want, got)
		}
	}
	if e.Error != nil {
		checks++
		r.unclaimed = nil
		switch {
		case r.lastErr == nil:
			add("error", fmt.Sprintf("an error containing %q", *e.Error), "no error")
		case !strings.Contains(r.lastErr.Error(), *e.Error):
			add("error", fmt.Sprintf("an error containing %q", *e.Error), r.lastErr.Error())
		}
	}
	if e.NodeAllocated != nil {
		total := r.currentNode().AllocatedTotal()
		for _, name := range slices.Sorted(maps.Keys(e.NodeAllocated)) {
			checks++
			want := e.NodeAllocated[name]
			got, ok := total[name]
			if !ok {
				if !want.IsZero() {
					add("node.allocated."+string(name), want.String(), "none")
				}
				continue
			}
			if want.Cmp(got) != 0 {
				add("node.allocated."+string(name), want.String(), got.String())
			}
		}
	}
	if e.HasAudit {
		checks += r.checkAudit(e)
	}
	if e.HasMetrics {
		checks += r.checkMetrics(e)
	}
	if e.Pod == nil {
		r.t.expectResult(checks, r.mismatches[before:])
		return
	}
	ref := *e.Pod
	n := r.currentNode()
	info, infoErr := n.Pod(ref.Namespace, ref.Name)
	pod, podErr := r.cluster.GetPod(context.Background(), ref.Namespace, ref.Name)

	if e.Admitted != nil {
		got := "false"
		if infoErr == nil && info.Admitted {
			got = "true"
		} else if infoErr != nil {
			got = "false (the node does not have the pod)"
		}
		eq("admitted", fmt.Sprint(*e.Admitted), got)
	}
	missing := "the pod does not exist"
	if e.QOSClass != nil {
		got := missing
		if podErr == nil {
			got = string(pod.Status.QOSClass)
		}
		eq("qosClass", string(*e.QOSClass), got)
	}
	if e.Generation != nil {
		got := missing
		if podErr == nil {
			got = fmt.Sprint(pod.Generation)
		}
		eq("generation", fmt.Sprint(*e.Generation), got)
	}
	if e.HasConditions {
		var have []v1.PodCondition
		if podErr == nil {
			have = resizeConditions(pod)
		}
		checks += r.checkConditions(e.Conditions, have)
	}
	for _, name := range e.ContainerOrder {
		ce := e.Containers[name]
		base := "containers." + name
		status := containerStatus(pod, name)
		if ce.RestartCount != nil {
			got := "no container status"
			if status != nil {
				got = fmt.Sprint(status.RestartCount)
			}
			eq(base+".restartCount", fmt.Sprint(*ce.RestartCount), got)
		}
		if ce.Resources != nil {
			if status == nil || status.Resources == nil {
				checks++
				add(base+".resources", ce.Resources.String(), "no status resources")
			} else {
				checks += r.checkResources(base+".resources", ce.Resources, *status.Resources)
			}
		}
		if ce.Allocated != nil {
			alloc, ok := info.Allocated[name]
			if infoErr != nil || !ok {
				checks++
				add(base+".allocated", ce.Allocated.String(), "no allocation")
			} else {
				checks += r.checkResources(base+".allocated", ce.Allocated, alloc)
			}
		}
		if ce.Spec != nil {
			spec := specResources(pod, name)
			if spec == nil {
				checks++
				add(base+".spec", ce.Spec.String(), "no such container in the pod's spec")
			} else {
				checks += r.checkResources(base+".spec", ce.Spec, *spec)
			}
		}
	}
	if e.Cgroups != nil {
		checks += r.checkCgroups(e.Cgroups, info, infoErr)
	}
	all := r.cluster.Events()
	var window []resize.Event
	for _, ev := range all[min(r.cursor[ref], len(all)):] {
		if ev.Namespace == ref.Namespace && ev.Pod == ref.Name {
			window = append(window, ev)
		}
	}
	r.cursor[ref] = len(all)
	checks += r.checkEvents(e.Events, e.NoEvents, window)
	r.t.expectResult(checks, r.mismatches[before:])
}

func (r *runner) mismatch(path, want, got string) {
	r.mismatches = append(r.mismatches, Mismatch{Step: r.step, Path: path, Want: want, Got: got})
}

func containerStatus(pod *v1.Pod, name string) *v1.ContainerStatus {
	if pod == nil {
		return nil
	}
	for _, list := range [][]v1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

func specResources(pod *v1.Pod, name string) *v1.ResourceRequirements {
	if pod == nil {
		return nil
	}
	for _, list := range [][]v1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i].Resources
			}
		}
	}
	return nil
}

// formatList renders a resource list as "{cpu: 800m, memory: 200Mi}".
func formatList(l v1.ResourceList) string {
	parts := make([]string, 0, len(l))
	for _, k := range slices.Sorted(maps.Keys(l)) {
		q := l[k]
		parts = append(parts, fmt.Sprintf("%s: %s", k, q.String()))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// String renders the expectation as it would be written.
func (re *ResourcesExpect) String() string {
	if re == nil {
		return "<nil>"
	}
	var parts []string
	if re.Requests != nil {
		parts = append(parts, "requests: "+formatList(*re.Requests))
	}
	if re.Limits != nil {
		parts = append(parts, "limits: "+formatList(*re.Limits))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func (r *runner) checkResources(path string, want *ResourcesExpect, got v1.ResourceRequirements) int {
	checks := 0
	side := func(p string, want *v1.ResourceList, got v1.ResourceList) {
		if want == nil {
			return
		}
		if len(*want) == 0 {
			checks++
			if len(got) != 0 {
				r.mismatch(p, "{}", formatList(got))
			}
			return
		}
		for _, name := range slices.Sorted(maps.Keys(*want)) {
			checks++
			w := (*want)[name]
			g, ok := got[name]
			if !ok {
				r.mismatch(p+"."+string(name), w.String(), "none")
				continue
			}
			if w.Cmp(g) != 0 {
				r.mismatch(p+"."+string(name), w.String(), g.String())
			}
		}
	}
	side(path+".requests", want.Requests, got.Requests)
	side(path+".limits", want.Limits, got.Limits)
	return checks
}

func formatCondition(c v1.PodCondition) string {
	return fmt.Sprintf("status %s, reason %q, message %q, observedGeneration %d", c.Status, c.Reason, c.Message, c.ObservedGeneration)
}

func (r *runner) checkConditions(want []ConditionExpect, have []v1.PodCondition) int {
	checks := 1
	byType := map[v1.PodConditionType]v1.PodCondition{}
	for _, c := range have {
		byType[c.Type] = c
	}
	wanted := map[v1.PodConditionType]bool{}
	for _, w := range want {
		wanted[w.Type] = true
	}
	for _, c := range have {
		if !wanted[c.Type] {
			r.mismatch(fmt.Sprintf("conditions[%s]", c.Type), "absent", formatCondition(c))
		}
	}
	for _, w := range want {
		path := fmt.Sprintf("conditions[%s]", w.Type)
		c, ok := byType[w.Type]
		if !ok {
			checks++
			r.mismatch(path, "present", "absent")
			continue
		}
		field := func(name, want, got string) {
			checks++
			if want != got {
				r.mismatch(path+"."+name, want, got)
			}
		}
		if w.Status != nil {
			field("status", *w.Status, string(c.Status))
		}
		if w.Reason != nil {
			field("reason", *w.Reason, c.Reason)
		}
		if w.Message != nil {
			field("message", *w.Message, c.Message)
		}
		if w.MessageRegexp != nil {
			checks++
			if !w.MessageRegexp.MatchString(c.Message) {
				r.mismatch(path+".messageRegexp", "a message matching /"+w.MessageRegexp.String()+"/", c.Message)
			}
		}
		if w.ObservedGeneration != nil {
			field("observedGeneration", fmt.Sprint(*w.ObservedGeneration), fmt.Sprint(c.ObservedGeneration))
		}
	}
	return checks
}

func (e EventExpect) matches(ev resize.Event) bool {
	if e.Type != "" && e.Type != ev.Type {
		return false
	}
	if e.Reason != "" && e.Reason != ev.Reason {
		return false
	}
	if e.Message != nil && *e.Message != ev.Message {
		return false
	}
	if e.MessageRegexp != nil && !e.MessageRegexp.MatchString(ev.Message) {
		return false
	}
	return true
}

func (e EventExpect) String() string {
	var parts []string
	if e.Type != "" {
		parts = append(parts, e.Type)
	}
	if e.Reason != "" {
		parts = append(parts, e.Reason)
	}
	if e.Message != nil {
		parts = append(parts, fmt.Sprintf("message %q", *e.Message))
	}
	if e.MessageRegexp != nil {
		parts = append(parts, "message matching /"+e.MessageRegexp.String()+"/")
	}
	return strings.Join(parts, " ")
}

func formatEvents(evs []resize.Event) string {
	if len(evs) == 0 {
		return "no events"
	}
	parts := make([]string, len(evs))
	for i, ev := range evs {
		parts[i] = fmt.Sprintf("%s %s %q", ev.Type, ev.Reason, ev.Message)
	}
	return strings.Join(parts, "; ")
}

// checkEvents matches want as a subsequence of window, in order (greedy
// matching finds a subsequence whenever one exists), and checks that no
// event of a noEvents reason is in window.
func (r *runner) checkEvents(want []EventExpect, none []string, window []resize.Event) int {
	checks := 0
	pos := 0
	for i, w := range want {
		checks++
		found := -1
		for j := pos; j < len(window); j++ {
			if w.matches(window[j]) {
				found = j
				break
			}
		}
		if found < 0 {
			r.mismatch(fmt.Sprintf("events[%d]", i), w.String(), "after the events matched before it: "+formatEvents(window[pos:]))
			continue
		}
		pos = found + 1
	}
	for _, reason := range none {
		checks++
		var hits []resize.Event
		for _, ev := range window {
			if ev.Reason == reason {
				hits = append(hits, ev)
			}
		}
		if len(hits) > 0 {
			r.mismatch("noEvents."+reason, "no "+reason+" event", formatEvents(hits))
		}
	}
	return checks
}

func (r *runner) checkCgroups(ce *CgroupsExpect, info resize.PodInfo, infoErr error) int {
	checks := 0
	// shares is the container's cpu shares as the kubelet last sent them
	// (0 for the pod cgroup).
	files := func(base, path string, want map[string]string, shares uint64) {
		for _, file := range slices.Sorted(maps.Keys(want)) {
			v := fileVersion(file)
			if v != 0 && v != int(r.b.version) {
				r.t.line("%s.%s: skipped (v%d file on a %s node)", base, file, v, r.b.version)
				continue
			}
			checks++
			got, err := r.b.cgroups.ReadFile(path, file)
			if err != nil {
				r.mismatch(base+"."+file, want[file], "unreadable: "+err.Error())
				continue
			}
			got = strings.TrimSpace(got)
			if got != want[file] && file == "cpu.weight" && r.b.realRuntime && otherWeight(want[file], got, shares, r.s.ContainerWeight) {
				// A real runtime writes a container's cpu.weight with its
				// own formula (cri/RUNTIMES.md section 3); the kubelet's e2e
				// tests accept either formula's value (GetExpectedCPUShares).
				r.t.line("%s.%s: %s, the %s formula's value for cpu shares %d where the file expects the %s formula's (the runtime's formula; either is accepted, as the kubelet's e2e tests do)",
					base, file, got, otherFormula(r.s.ContainerWeight), shares, r.s.ContainerWeight)
				continue
			}
			if got != want[file] && strings.HasPrefix(base, "cgroups.containers.") && r.b.realRuntime && r.cfg.CgroupDriver == cgroup.DriverSystemd && exactQuota(want[file], got) {
				// With the systemd driver runc 1.3 writes a container's
				// quota rounded as systemd keeps it, runc before 1.3 the
				// exact one (opencontainers/runc#4622); the kubelet's e2e
				// tests accept either (getCPULimitCgroupExpectations).
				r.t.line("%s.%s: %s, the exact quota where the file expects the one systemd's driver rounds it to (runc before 1.3 writes the exact quota; either is accepted, as the kubelet's e2e tests do)",
					base, file, got)
				continue
			}
			if got != want[file] {
				r.mismatch(base+"."+file, want[file], got)
			}
		}
	}
	if infoErr != nil {
		checks++
		r.mismatch("cgroups", "the pod's cgroups", "the node does not have the pod: "+infoErr.Error())
		return checks
	}
	if ce.Pod != nil {
		files("cgroups.pod", info.PodCgroup, ce.Pod, 0)
	}
	for _, name := range ce.ContainerOrder {
		base := "cgroups.containers." + name
		path, ok := info.ContainerCgroups[name]
		if !ok {
			checks++
			r.mismatch(base, "the container's cgroup", "the container has no cgroup")
			continue
		}
		var shares uint64
		if cpu, ok := info.Actuated[name].Requests[v1.ResourceCPU]; ok {
			shares = cgconfig.MilliCPUToShares(cpu.MilliValue())
		}
		files(base, path, ce.Containers[name], shares)
	}
	return checks
}

// exactQuota reports whether got is a CPU quota file's content (cpu.max
// "quota period", or cpu.cfs_quota_us) with the exact quota whose
// systemd rounding (cgconfig.SystemdQuota) want holds, the period the same.
func exactQuota(want, got string) bool {
	wq, wp, _ := strings.Cut(want, " ")
	gq, gp, _ := strings.Cut(got, " ")
	w, err1 := strconv.ParseInt(wq, 10, 64)
	g, err2 := strconv.ParseInt(gq, 10, 64)
	period, err3 := strconv.ParseUint(gp, 10, 64)
	if gp == "" {
		period, err3 = cgconfig.QuotaPeriod, nil
	}
	return err1 == nil && err2 == nil && err3 == nil && wp == gp && w != g && cgconfig.SystemdQuota(g, period) == w
}

// otherFormula names the container cpu.weight formula that is not formula.
func otherFormula(formula string) string {
	if formula == "linear" {
		return "quadratic"
	}
	return "linear"
}

// otherWeight reports whether want is formula's cpu.weight for shares and
// got the other formula's.
func otherWeight(want, got string, shares uint64, formula string) bool {
	if shares == 0 {
		return false
	}
	ours, theirs := cgconfig.QuadraticWeight(shares), cgconfig.LinearWeight(shares)
	if formula == "linear" {
		ours, theirs = theirs, ours
	}
	return want == strconv.FormatUint(ours, 10) && got == strconv.FormatUint(theirs, 10)
}

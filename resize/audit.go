package resize

import (
	"context"
	"errors"
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/allocation"
	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/resize/core"
)

// Where names the part of a node a Difference is about.
type Where string

// The parts Audit compares with the allocation.
const (
	// WherePodCgroup is the pod cgroup's files.
	WherePodCgroup Where = "podCgroup"
	// WhereContainerCgroup is a container cgroup's files, which the
	// runtime writes.
	WhereContainerCgroup Where = "containerCgroup"
	// WhereRuntime is the container's resources as the runtime reports
	// them (ContainerStatus).
	WhereRuntime Where = "runtime"
	// WhereActuated is the container's record in actuated_pods_state.
	WhereActuated Where = "actuated"
	// WhereAllocated is the pod's record in allocated_pods_state, against
	// the allocation the node decides with.
	WhereAllocated Where = "allocated"
	// WhereStatus is status.containerStatuses[].resources in the API
	// server.
	WhereStatus Where = "status"
)

// Wheres lists the parts in the order Audit reports them.
var Wheres = []Where{WherePodCgroup, WhereContainerCgroup, WhereRuntime, WhereActuated, WhereAllocated, WhereStatus}

// Difference is one place where a node's state disagrees with a pod's
// allocation.
type Difference struct {
	Namespace string
	Pod       string
	Container string // "" for the pod cgroup
	Where     Where
	// Field is a cgroup file name (memory.max, cpu.max, cpu.shares, ...),
	// a resource ("limits.cpu", "requests.memory") or "record" for a
	// missing record or cgroup.
	Field string
	Want  string
	Got   string
}

// String renders the difference on one line.
func (d Difference) String() string {
	who := d.Namespace + "/" + d.Pod
	if d.Container != "" {
		who += " container " + d.Container
	}
	return fmt.Sprintf("%s: %s %s: want %s, got %s", who, d.Where, d.Field, d.Want, d.Got)
}

// Audit compares what the node's parts really hold with each admitted,
// unfinished pod's allocation, and returns every difference, by pod in
// admission order and by part in the order of Wheres:
//
//   - the pod cgroup's files against the values the kubelet writes for the
//     allocation (a value the kubelet leaves as it finds it, like the
//     memory limit of a Burstable pod without one, is not compared);
//   - for each running container: the runtime's resources
//     (ContainerStatus) against what the kubelet sends for the allocation
//     (cpu shares, quota and period, memory limit; fields the kubelet
//     sends as 0 are not compared, as containerd keeps the stored value
//     for them); the container cgroup's files against what runc writes for
//     those resources (on cgroup v2 either of runc's cpu.weight
//     conversions is accepted, since which one a runtime uses is not the
//     kubelet's to know); its actuated record against its allocation, as
//     the kubelet compares them (cpu and memory requests and limits); the
//     pod's status resources against what the kubelet reports for a
//     container whose runtime holds the allocation (a value such a runtime
//     would not report, like the cpu limit with --cpu-cfs-quota=false, is
//     not compared);
//   - the checkpoints' records against the allocation and actuation the
//     node decides with.
//
// Containers that are not running are skipped: the next sync starts them
// with their allocation, or the pod's restart policy keeps them stopped.
// No difference means the node's real state is what its allocation says;
// a resize that is still in progress shows as differences. Audit changes
// nothing, holds no lock while it reads cgroups or calls the runtime, and
// returns an error only when a part cannot be read at all.
func (n *Node) Audit(ctx context.Context) ([]Difference, error) {
	if err := n.enter(ctx, "audit"); err != nil {
		return nil, err
	}
	defer n.exit()
	n.mu.Lock()
	exps := n.core.Expectations()
	n.mu.Unlock()
	var out []Difference
	for _, pe := range exps {
		diffs, err := n.auditPod(ctx, pe)
		if err != nil {
			return nil, fmt.Errorf("audit %s/%s: %w", pe.Namespace, pe.Name, err)
		}
		out = append(out, diffs...)
	}
	return out, nil
}

// auditPod compares one pod's parts with its expectation.
func (n *Node) auditPod(ctx context.Context, pe core.PodExpectation) ([]Difference, error) {
	var out []Difference
	add := func(container string, where Where, field, want, got string) {
		out = append(out, Difference{Namespace: pe.Namespace, Pod: pe.Name, Container: container, Where: where, Field: field, Want: want, Got: got})
	}
	// A cgroup removed between the check and the read (a teardown that
	// runs meanwhile) is missing, not unreadable.
	fds, err := cgroup.Compare(n.cg, pe.PodCgroup, pe.PodCgroupValues)
	switch {
	case errors.Is(err, cgroup.ErrNotExist):
		add("", WherePodCgroup, "record", "the pod cgroup "+pe.PodCgroup, "none")
	case err != nil:
		return nil, err
	}
	for _, fd := range fds {
		add("", WherePodCgroup, fd.File, fd.Want, fd.Got)
	}
	pod, podErr := n.cluster.GetPod(ctx, pe.Namespace, pe.Name)
	for _, ce := range pe.Containers {
		if ce.ID == "" {
			continue
		}
		resp, err := n.rt.ContainerStatus(ctx, ce.ID, false)
		if errors.Is(err, cri.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		st := resp.GetStatus()
		if st.GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		if got := st.GetResources().GetLinux(); got != nil {
			for _, f := range runtimeDiffs(ce.Resources, got) {
				add(ce.Name, WhereRuntime, f[0], f[1], f[2])
			}
		}
		fds, err := containerCgroupDiffs(n.cg, ce.Cgroup, ce.Resources, n.cfg.CgroupDriver)
		if errors.Is(err, cgroup.ErrNotExist) {
			continue // removed since it was found running
		}
		if err != nil {
			return nil, err
		}
		for _, fd := range fds {
			add(ce.Name, WhereContainerCgroup, fd.File, fd.Want, fd.Got)
		}
		if !ce.HasActuated {
			add(ce.Name, WhereActuated, "record", formatRequirements(ce.WantActuated), "none")
		} else {
			for _, f := range requirementDiffs(ce.WantActuated, ce.Actuated) {
				add(ce.Name, WhereActuated, f[0], f[1], f[2])
			}
		}
		if podErr == nil {
			if cs := containerStatusOf(pod, ce.Name); cs != nil && cs.Resources != nil {
				for _, f := range requirementDiffs(ce.Status, *cs.Resources) {
					if f[0] == "limits.cpu" && ce.StatusKeepsCPULimit {
						continue
					}
					add(ce.Name, WhereStatus, f[0], f[1], f[2])
				}
			}
		}
	}
	out = append(out, n.auditRecords(pe)...)
	return out, nil
}

// auditRecords compares the checkpoints' records with what the node
// decides with: the two must never part, since the node mirrors every
// checkpoint write it makes.
func (n *Node) auditRecords(pe core.PodExpectation) []Difference {
	var out []Difference
	add := func(container string, where Where, field, want, got string) {
		out = append(out, Difference{Namespace: pe.Namespace, Pod: pe.Name, Container: container, Where: where, Field: field, Want: want, Got: got})
	}
	alloc, hasAlloc := n.allocated.Get(pe.UID)
	act, _ := n.actuated.Get(pe.UID)
	for _, ce := range pe.Containers {
		rec, ok := allocationOf(alloc, hasAlloc, ce.Name)
		switch {
		case !ok:
			add(ce.Name, WhereAllocated, "record", formatRequirements(ce.Allocated), "none")
		default:
			for _, f := range requirementDiffs(ce.Allocated, rec) {
				add(ce.Name, WhereAllocated, f[0], f[1], f[2])
			}
		}
		if r, ok := act.ContainerResources[ce.Name]; ok && ce.HasActuated {
			for _, f := range requirementDiffs(ce.Actuated, r) {
				add(ce.Name, WhereActuated, f[0], "the node's record "+f[1], "checkpoint "+f[2])
			}
		} else if ok != ce.HasActuated {
			add(ce.Name, WhereActuated, "record", fmt.Sprintf("checkpointed: %t", ce.HasActuated), fmt.Sprintf("checkpointed: %t", ok))
		}
	}
	return out
}

func allocationOf(r allocation.PodResources, has bool, name string) (v1.ResourceRequirements, bool) {
	if !has {
		return v1.ResourceRequirements{}, false
	}
	rec, ok := r.ContainerResources[name]
	return rec, ok
}

// compared are the fields the kubelet compares to tell whether a resize is
// actuated (isContainerResourceResizeInProgress).
var compared = []struct {
	field    string
	limits   bool
	resource v1.ResourceName
}{
	{"requests.cpu", false, v1.ResourceCPU},
	{"limits.cpu", true, v1.ResourceCPU},
	{"requests.memory", false, v1.ResourceMemory},
	{"limits.memory", true, v1.ResourceMemory},
}

// requirementDiffs compares the cpu and memory requests and limits of
// want and got by value; a resource want does not list is not compared
// when got does not list it either.
func requirementDiffs(want, got v1.ResourceRequirements) [][3]string {
	var out [][3]string
	for _, c := range compared {
		wl, gl := want.Requests, got.Requests
		if c.limits {
			wl, gl = want.Limits, got.Limits
		}
		w, wok := wl[c.resource]
		g, gok := gl[c.resource]
		if !wok && !gok {
			continue
		}
		if !w.Equal(g) {
			out = append(out, [3]string{c.field, quantityString(w, wok), quantityString(g, gok)})
		}
	}
	return out
}

func quantityString(q resource.Quantity, ok bool) string {
	if !ok {
		return "none"
	}
	return q.String()
}

// formatRequirements renders requirements' cpu and memory for a message.
func formatRequirements(r v1.ResourceRequirements) string {
	s := ""
	for _, c := range compared {
		list := r.Requests
		if c.limits {
			list = r.Limits
		}
		if q, ok := list[c.resource]; ok {
			if s != "" {
				s += ", "
			}
			s += c.field + " " + q.String()
		}
	}
	return "{" + s + "}"
}

// runtimeDiffs compares the resources a runtime reports with what the
// kubelet sent. A field sent as 0 leaves containerd's stored value as it
// is (its WithResources), so it is not compared.
func runtimeDiffs(want, got *runtimeapi.LinuxContainerResources) [][3]string {
	var out [][3]string
	field := func(name string, w, g int64) {
		if w != 0 && w != g {
			out = append(out, [3]string{name, fmt.Sprint(w), fmt.Sprint(g)})
		}
	}
	field("cpu_shares", want.GetCpuShares(), got.GetCpuShares())
	field("cpu_quota", want.GetCpuQuota(), got.GetCpuQuota())
	field("cpu_period", want.GetCpuPeriod(), got.GetCpuPeriod())
	field("memory_limit_in_bytes", want.GetMemoryLimitInBytes(), got.GetMemoryLimitInBytes())
	return out
}

// containerCgroupDiffs compares a container cgroup with what runc writes
// for the resources: the memory limit when set, the shares (cpu.weight on
// v2, through runc's quadratic conversion from 1.3.2 or the linear one
// before it: either is accepted), and the quota and period when either is
// set (a quota of 0 or less is no limit; with the systemd driver the quota
// runc 1.3 writes, cgconfig.SystemdQuota).
func containerCgroupDiffs(m cgroup.Manager, path string, r *runtimeapi.LinuxContainerResources, driver cgroup.Driver) ([]cgroup.FileDiff, error) {
	if path == "" || !m.Exists(path) {
		// A runtime may keep container cgroups where this node cannot
		// see them (a systemd scope, another root): nothing to compare.
		return nil, nil
	}
	want := runcValues(m.Version(), r, cgconfig.QuadraticWeight)
	if driver == cgroup.DriverSystemd {
		want.RoundSystemdQuota()
	}
	fds, err := cgroup.Compare(m, path, want)
	if err != nil || m.Version() != cgroup.V2 || want.CPUWeight == nil {
		return fds, err
	}
	// The other conversion may be the runtime's: keep the cpu.weight
	// difference only when neither matches.
	linear := cgconfig.Values{CPUWeight: runcValues(m.Version(), r, cgconfig.LinearWeight).CPUWeight}
	other, err := cgroup.Compare(m, path, linear)
	if err != nil {
		return nil, err
	}
	if len(other) == 0 {
		kept := fds[:0]
		for _, fd := range fds {
			if fd.File != "cpu.weight" {
				kept = append(kept, fd)
			}
		}
		fds = kept
	}
	return fds, nil
}

// runcValues are the cgroup values runc writes for a container's
// resources.
func runcValues(version cgroup.Version, r *runtimeapi.LinuxContainerResources, weight cgconfig.WeightFunc) cgconfig.Values {
	var v cgconfig.Values
	if l := r.GetMemoryLimitInBytes(); l != 0 {
		if l < 0 {
			l = cgconfig.Unlimited
		}
		v.MemoryLimit = &l
	}
	shares, quota, period := r.GetCpuShares(), r.GetCpuQuota(), r.GetCpuPeriod()
	if shares > 0 {
		s := uint64(shares)
		if version == cgroup.V2 {
			w := weight(s)
			v.CPUWeight = &w
		} else {
			v.CPUShares = &s
		}
	}
	if version == cgroup.V2 {
		// cpu.max holds both halves: runc writes it when either is set,
		// "max" for a quota of 0 or less and the default period for 0.
		if quota != 0 || period != 0 {
			if quota <= 0 {
				quota = cgconfig.Unlimited
			}
			p := uint64(cgconfig.QuotaPeriod)
			if period > 0 {
				p = uint64(period)
			}
			v.CPUQuota, v.CPUPeriod = &quota, &p
		}
		return v
	}
	if period > 0 {
		p := uint64(period)
		v.CPUPeriod = &p
	}
	if quota != 0 {
		if quota < 0 {
			quota = cgconfig.Unlimited
		}
		v.CPUQuota = &quota
	}
	return v
}

func containerStatusOf(pod *v1.Pod, name string) *v1.ContainerStatus {
	for _, list := range [][]v1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// SortDifferences orders differences by pod, container, part and field,
// for output that does not depend on the order they were found in.
func SortDifferences(ds []Difference) {
	rank := map[Where]int{}
	for i, w := range Wheres {
		rank[w] = i
	}
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i], ds[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Pod != b.Pod {
			return a.Pod < b.Pod
		}
		if rank[a.Where] != rank[b.Where] {
			return rank[a.Where] < rank[b.Where]
		}
		if a.Container != b.Container {
			return a.Container < b.Container
		}
		return a.Field < b.Field
	})
}

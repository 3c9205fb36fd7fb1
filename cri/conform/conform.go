package conform

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/cgroup/cgroupfs"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/cri/kubeletcri"
)

// LabelRun is the label every sandbox and container of a run carries,
// with the run's prefix as its value: the cleanup finds by it what a lost
// answer kept from the run's own list, and a test by it what was left.
const LabelRun = "io.resizelet.conform.run"

// PrefixBase starts the prefix of every run, which is
// PrefixBase-<pid>-<random>: sandbox names, the run label and the
// private cgroup parent all carry it.
const PrefixBase = "resizelet-conform"

// Namespace is the pod namespace the run's sandboxes claim.
const Namespace = "resizelet-conform"

// containerName is the name of the one container of the run's pod.
const containerName = "app"

// command keeps a container running, and lets a stop end it at once: a
// bare sleep as PID 1 ignores SIGTERM, and every stop would wait out the
// grace period.
var command = []string{"sh", "-c", "trap 'exit 0' TERM; sleep 86400 & wait"}

// Options configure a run.
type Options struct {
	// Runtime is the runtime under test: a *remote.Client from Dial, or an
	// in-process one such as *cri.SimContainerd. Required.
	Runtime cri.Runtime
	// Cgroups reads the containers' cgroup files: a *cgroupfs.FS on the
	// hierarchy the runtime writes (cgroupfs.New("/sys/fs/cgroup")), or
	// the in-memory kernel an in-process runtime writes. Its version is the
	// one the kubelet's messages are built for. Required.
	Cgroups cgroup.Manager
	// Image is the image the containers run; it needs sh, sleep and dd
	// (busybox has them). Required.
	Image string
	// Endpoint and Version describe the runtime in the report (Dial
	// returns the version).
	Endpoint string
	Version  *runtimeapi.VersionResponse
	// RuntimeHandler is the runtime handler the run's sandbox asks for, as
	// a RuntimeClass's handler does (containerd: a runtimes.<name> of its
	// CRI plugin's config, such as one whose BinaryName is crun); empty
	// is the runtime's default handler. The report names it.
	RuntimeHandler string
	// CgroupDriver is the runtime's cgroup driver (containerd's
	// SystemdCgroup); empty is cgroupfs. With systemd the run's pod cgroup
	// is the chain of slices the kubelet's systemd driver names below the
	// prefix (cgconfig.PodCgroupPath with the prefix as the cgroup root),
	// which the runtime makes through systemd, and Cgroups should be the
	// systemd cgroup manager (package cgroup/systemd), through which the
	// cleanup stops those slices.
	CgroupDriver cgroup.Driver
	// Prefix names what the run creates; empty means
	// PrefixBase-<pid>-<random>. It must be a valid pod name and cgroup
	// name, and unique on the node.
	Prefix string
	// CleanupTimeout bounds the cleanup, which runs even when ctx is done;
	// 0 means two minutes.
	CleanupTimeout time.Duration
	// OOMWait is how long the check of a memory limit below usage waits
	// for an OOM kill after a limit the runtime accepted; 0 means 10 s.
	OOMWait time.Duration
	// Progress, when set, is called with a line for each step as it
	// starts and each check as it ends, for a command to print.
	Progress func(line string)
}

// Run checks the runtime's handling of in-place resize: it creates its own
// sandbox and container (named with the run's prefix and labelled
// LabelRun), sends the kubelet's exact messages (package
// cri/kubeletcri), reads back the cgroup files and the runtime's answers, and
// removes everything it created at the end, whatever happens, also when
// ctx ends (a signal): the cleanup runs on a context of its own. The
// error is for a run that could not start (bad options); a runtime that
// misbehaves, or a cleanup that failed, shows in the report
// (Report.Passed).
func Run(ctx context.Context, opts Options) (*Report, error) {
	if opts.Runtime == nil || opts.Cgroups == nil {
		return nil, errors.New("conform: Options.Runtime and Options.Cgroups are required")
	}
	if opts.Image == "" {
		return nil, errors.New("conform: Options.Image is required: an image with sh, sleep and dd (busybox)")
	}
	if opts.Prefix == "" {
		var b [4]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("conform: random prefix: %w", err)
		}
		opts.Prefix = fmt.Sprintf("%s-%d-%s", PrefixBase, os.Getpid(), hex.EncodeToString(b[:]))
	}
	if opts.CleanupTimeout <= 0 {
		opts.CleanupTimeout = 2 * time.Minute
	}
	if opts.OOMWait <= 0 {
		opts.OOMWait = 10 * time.Second
	}
	// The prefix is the private cgroup parent too: one the cgroup
	// managers would refuse is refused here, before anything is created.
	if _, err := cgconfig.RootRelative(opts.Prefix); err != nil {
		return nil, fmt.Errorf("conform: Options.Prefix: %w", err)
	}
	version := opts.Cgroups.Version()
	// The messages of a 1.35 kubelet at its defaults on a node with
	// 64Gi of memory, which a Burstable container's OOM score is relative
	// to.
	msgs := kubeletcri.New(kubeletcri.Settings{
		CgroupVersion:     version,
		EnforceCPULimits:  true,
		CPUPeriod:         cgconfig.QuotaPeriod,
		PodLevelResources: true,
		MemoryCapacity:    64 << 30,
		Image:             opts.Image,
		Command:           command,
	})
	r := &run{
		opts: opts,
		rt:   &timed{inner: opts.Runtime},
		cg:   opts.Cgroups,
		msgs: msgs,
		report: &Report{
			Runtime:        runtimeName(opts),
			APIVersion:     opts.Version.GetRuntimeApiVersion(),
			Endpoint:       opts.Endpoint,
			RuntimeHandler: opts.RuntimeHandler,
			CgroupVersion:  version,
			CgroupDriver:   driverName(opts.CgroupDriver),
			CgroupRoot:     cgroupRoot(opts.Cgroups),
			Prefix:         opts.Prefix,
		},
		weights: map[uint64]uint64{},
		results: newResults(),
	}
	start := time.Now()
	r.sweep(ctx)
	r.checks(ctx)
	r.cleanup(context.WithoutCancel(ctx))
	for id := checkCPU; id <= checkCleanup; id++ {
		r.report.Checks = append(r.report.Checks, *r.results[id])
	}
	r.report.Calls = r.rt.timings()
	r.report.Duration = time.Since(start)
	return r.report, nil
}

// driverName is the driver for the report: cgroupfs when unset.
func driverName(d cgroup.Driver) cgroup.Driver {
	if d == "" {
		return cgroup.DriverCgroupfs
	}
	return d
}

// fsOf returns the cgroup filesystem cg reads: cg itself, or the one a
// manager such as the systemd one reads its files through (Unwrap).
func fsOf(cg cgroup.Manager) (*cgroupfs.FS, bool) {
	if u, ok := cg.(interface{ Unwrap() cgroup.Manager }); ok {
		cg = u.Unwrap()
	}
	fs, ok := cg.(*cgroupfs.FS)
	return fs, ok && fs != nil
}

// top is the cgroup all of the run's cgroups are below: the prefix, or
// with the systemd driver the slice the kubelet's systemd names make of
// it.
func (r *run) top() string {
	if r.opts.CgroupDriver == cgroup.DriverSystemd {
		return cgconfig.SystemdName(r.opts.Prefix)
	}
	return r.opts.Prefix
}

// runtimeName names the runtime for the report.
func runtimeName(opts Options) string {
	if v := opts.Version; v != nil {
		return strings.TrimSpace(v.GetRuntimeName() + " " + v.GetRuntimeVersion())
	}
	return reflect.TypeOf(opts.Runtime).String()
}

// cgroupRoot says where the cgroup files were read.
func cgroupRoot(cg cgroup.Manager) string {
	if fs, ok := fsOf(cg); ok {
		return fs.Root()
	}
	return "the in-memory kernel (" + reflect.TypeOf(cg).String() + ")"
}

// run is the state of one run.
type run struct {
	opts   Options
	rt     *timed
	cg     cgroup.Manager
	msgs   kubeletcri.Messages
	report *Report

	// The run's pod: its cgroup, its sandbox and its container as the
	// runtime runs it now.
	podCgroup  string
	sandboxCfg *runtimeapi.PodSandboxConfig
	sandboxID  string
	ctr        *container
	// created are the IDs of the containers and sandboxes the run made,
	// for the cleanup.
	containers []string
	sandboxes  []string
	// weights are the cpu.weight values read back for the shares sent, on
	// cgroup v2, to name the runtime's formula.
	weights map[uint64]uint64
	// results are the checks by ID, as they run.
	results map[int]*CheckResult
	// status gathers the findings of the ContainerStatus check from the
	// steps that change resources.
	status statusFindings
}

// container is the run's container as the runtime runs it.
type container struct {
	id      string
	attempt uint32
	cgroup  string
	// want is what the container's resources are after the updates the
	// runtime accepted, with zero fields leaving values unchanged as the
	// CRI says: what its cgroup files and its ContainerStatus must show.
	want *runtimeapi.LinuxContainerResources
	// pid and startedAt identify the process.
	pid       int
	startedAt int64
}

// The pod's resources at each step, as a user would write them: requests
// then limits, cpu in millicores and memory in MiB. The usage the check
// below usage sets fits in a pod's 64 MiB /dev/shm and is small, since
// writing it is slow in an emulated VM: 2 MiB above resBelowUsage's limit,
// well above what the container's own processes use (under 1 MiB), and
// well below every other limit.
type res struct{ cpuReq, memReq, cpuLim, memLim int64 }

var (
	resStart        = res{250, 64, 500, 128}
	resCPUUp        = res{500, 64, 1000, 128}
	resCPUDown      = res{100, 64, 200, 128}
	resMemUp        = res{100, 64, 200, 192}
	resMemDown      = res{100, 64, 200, 96}
	resNoLimits     = res{300, 64, 0, 0}
	resUnified      = res{300, 64, 600, 96}
	resBelowUsage   = res{300, 4, 600, 4}
	resRestart      = res{200, 64, 400, 160}
	usageAboveLimit = int64(6) << 20
)

// requirements turns r into the container's resource requirements; a 0
// leaves the value out.
func (r res) requirements() v1.ResourceRequirements {
	list := func(cpu, mem int64) v1.ResourceList {
		l := v1.ResourceList{}
		if cpu != 0 {
			l[v1.ResourceCPU] = *resource.NewMilliQuantity(cpu, resource.DecimalSI)
		}
		if mem != 0 {
			l[v1.ResourceMemory] = *resource.NewQuantity(mem<<20, resource.BinarySI)
		}
		return l
	}
	return v1.ResourceRequirements{Requests: list(r.cpuReq, r.memReq), Limits: list(r.cpuLim, r.memLim)}
}

// String renders r as a kubectl user would read it.
func (r res) String() string {
	s := fmt.Sprintf("requests cpu %dm memory %dMi", r.cpuReq, r.memReq)
	if r.cpuLim != 0 || r.memLim != 0 {
		s += fmt.Sprintf(", limits cpu %dm memory %dMi", r.cpuLim, r.memLim)
	}
	return s
}

// podWith returns the run's pod with the container's resources at r. The
// pod is Burstable at every step (the resize API keeps the QoS class),
// so that shares and quota differ and a mix-up of the two shows.
func (r *run) podWith(x res) *v1.Pod {
	uid := types.UID(r.opts.Prefix + "-uid")
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: r.opts.Prefix, Namespace: Namespace, UID: uid},
		Spec: v1.PodSpec{Containers: []v1.Container{{
			Name: containerName, Image: r.opts.Image, Resources: x.requirements(),
		}}},
		Status: v1.PodStatus{QOSClass: v1.PodQOSBurstable},
	}
}

// sent is the kubelet's UpdateContainerResources message for the pod at
// x.
func (r *run) sent(x res) *runtimeapi.LinuxContainerResources {
	pod := r.podWith(x)
	return r.msgs.ContainerResources(pod, &pod.Spec.Containers[0])
}

// memoryCheck is the kubelet's usage check before it lowers a memory limit
// (kubeletcri.MemoryCheck), for a resize of the pod from x to y, on the
// pod cgroup's usage podUsage and the container's ContainerStats answer.
// checked is false when the kubelet would not check at all; err is the
// error it stops the resize with, before any UpdateContainerResources.
func (r *run) memoryCheck(x, y res, podUsage int64, stats *runtimeapi.ContainerStats, statsErr error) (checked bool, err error) {
	pod := r.podWith(y)
	mc, ok := r.msgs.ResizeMemoryCheck(r.podWith(x), pod, func(string) string { return r.ctr.id })
	if !ok {
		return false, nil
	}
	answers := map[string]*runtimeapi.ContainerStats{}
	if statsErr == nil {
		answers[containerName] = stats
	}
	return true, mc.Verdict(pod, &podUsage, answers)
}

// progress reports a line to Options.Progress.
func (r *run) progress(format string, args ...any) {
	if r.opts.Progress != nil {
		r.opts.Progress(fmt.Sprintf(format, args...))
	}
}

// step names the calls that follow in the timings.
func (r *run) step(name string) {
	r.rt.setStep(name)
	r.progress("%s", name)
}

// withRunLabel returns labels with the run's label added (a new map: the
// kubelet's messages are never changed).
func (r *run) withRunLabel(labels map[string]string) map[string]string {
	out := maps.Clone(labels)
	if out == nil {
		out = map[string]string{}
	}
	out[LabelRun] = r.opts.Prefix
	return out
}

// setup starts the run's sandbox and container with the kubelet's messages
// for the pod at resStart.
func (r *run) setup(ctx context.Context) error {
	r.step("setup: RunPodSandbox, CreateContainer, StartContainer")
	pod := r.podWith(resStart)
	r.podCgroup = cgconfig.PodCgroupPath(r.opts.Prefix, pod.Status.QOSClass, pod.UID, r.opts.CgroupDriver)
	sb := r.msgs.SandboxConfig(pod, r.podCgroup)
	sb.Labels = r.withRunLabel(sb.Labels)
	r.sandboxCfg = sb
	id, err := r.rt.RunPodSandbox(ctx, sb, r.opts.RuntimeHandler)
	if err != nil {
		return fmt.Errorf("RunPodSandbox %s with cgroup parent %s: %w", sb.Metadata.Name, sb.Linux.CgroupParent, err)
	}
	r.sandboxID = id
	r.sandboxes = append(r.sandboxes, id)
	c, err := r.startContainer(ctx, resStart, 0)
	if err != nil {
		return err
	}
	r.ctr = c
	r.progress("container %s running as PID %d in cgroup %s", c.id, c.pid, c.cgroup)
	return nil
}

// startContainer creates and starts the container with the kubelet's
// config for the pod at x, at a restart attempt.
func (r *run) startContainer(ctx context.Context, x res, attempt uint32) (*container, error) {
	pod := r.podWith(x)
	cfg := r.msgs.ContainerConfig(pod, &pod.Spec.Containers[0], attempt)
	cfg.Labels = r.withRunLabel(cfg.Labels)
	id, err := r.rt.CreateContainer(ctx, r.sandboxID, cfg, r.sandboxCfg)
	if err != nil {
		return nil, fmt.Errorf("CreateContainer with image %s (is it on the node?): %w", r.opts.Image, err)
	}
	r.containers = append(r.containers, id)
	if err := r.rt.StartContainer(ctx, id); err != nil {
		return nil, fmt.Errorf("StartContainer %s: %w", id, err)
	}
	c := &container{id: id, attempt: attempt, want: cfg.Linux.Resources}
	st, err := r.rt.ContainerStatus(ctx, id, true)
	if err != nil {
		return nil, fmt.Errorf("ContainerStatus %s: %w", id, err)
	}
	if s := st.GetStatus().GetState(); s != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return nil, fmt.Errorf("container %s is %s after StartContainer (reason %q, message %q)", id, s, st.GetStatus().GetReason(), st.GetStatus().GetMessage())
	}
	c.pid, _ = cri.ContainerPID(ctx, r.rt, id)
	c.startedAt = st.GetStatus().GetStartedAt()
	var source string
	c.cgroup, source = containerCgroup(st.GetInfo()["info"], c.pid, r.cg, r.podCgroup, id, r.opts.CgroupDriver)
	if r.report.CgroupSource == "" {
		r.report.CgroupSource = source
		r.report.OCIRuntime = ociRuntime(st.GetInfo()["info"])
	}
	if !r.cg.Exists(c.cgroup) {
		return nil, fmt.Errorf("container %s: its cgroup %s (from %s) does not exist below %s", id, c.cgroup, source, r.report.CgroupRoot)
	}
	return c, nil
}

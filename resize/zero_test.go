package resize_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/resizelet/resizelet/allocation"
	"github.com/resizelet/resizelet/allocation/frozen"
	"github.com/resizelet/resizelet/allocation/reslist"
	"github.com/resizelet/resizelet/allocation/state"
	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/cgroup/cgroupfs"
	"github.com/resizelet/resizelet/cgroup/systemd"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/cri/conform"
	"github.com/resizelet/resizelet/cri/kubeletcri"
	"github.com/resizelet/resizelet/cri/remote"
	"github.com/resizelet/resizelet/qos"
	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/apiserver"
	"github.com/resizelet/resizelet/resize/benchworld"
	"github.com/resizelet/resizelet/resize/core"
	"github.com/resizelet/resizelet/resize/explore"
	"github.com/resizelet/resizelet/resize/host"
	"github.com/resizelet/resizelet/resize/internal/zerocall"
	"github.com/resizelet/resizelet/resize/kubeapi"
	"github.com/resizelet/resizelet/resize/kubeclient"
	"github.com/resizelet/resizelet/resize/metrics"
	"github.com/resizelet/resizelet/resize/profile"
	"github.com/resizelet/resizelet/resize/scenario"
	"github.com/resizelet/resizelet/resize/scenario/scenariotest"
)

// zeroPackages are the packages TestZeroValues holds to answering nil and
// zero values with an error or a zero value, by directory (relative to
// this one) and name.
var zeroPackages = map[string]string{
	".":                     "resize",
	"apiserver":             "apiserver",
	"kubeclient":            "kubeclient",
	"kubeapi":               "kubeapi",
	"core":                  "core",
	"profile":               "profile",
	"metrics":               "metrics",
	"explore":               "explore",
	"benchworld":            "benchworld",
	"scenario":              "scenario",
	"scenario/scenariotest": "scenariotest",
	"host":                  "host",
	"../allocation":         "allocation",
	"../allocation/frozen":  "frozen",
	"../allocation/state":   "state",
	"../allocation/reslist": "reslist",
	"../cgroup":             "cgroup",
	"../cgroup/cgconfig":    "cgconfig",
	"../cgroup/cgroupfs":    "cgroupfs",
	"../cgroup/systemd":     "systemd",
	"../cri":                "cri",
	"../cri/conform":        "conform",
	"../cri/remote":         "remote",
	"../cri/crilabels":      "crilabels",
	"../cri/kubeletcri":     "kubeletcri",
	"../qos":                "qos",
}

// zeroValue is a value whose every exported method TestZeroValues calls
// with zero arguments: a type's zero value, a nil pointer to it, or one
// made by its constructor. typ names the type as "pkg.Type" (for the
// check that every type with methods is listed); skip names the methods
// not to call, with the reason; only, for a value of an unexported type
// whose method set includes methods of client-go's fakes, limits the
// calls to the methods its own package declares.
type zeroValue struct {
	typ  string
	what string // "zero", "nil" or how the value was made
	v    any
	skip map[string]string
	only bool
}

// zeroFunc is an exported function TestZeroValues calls with zero
// arguments, or skips with the reason.
type zeroFunc struct {
	name string // "pkg.Func"
	fn   any
	skip string
}

// zeroOf lists a type's zero value and nil pointer: ptr is a new(T) (for
// a type whose methods have pointer receivers) or a T (for one whose
// methods all have value receivers, which has no nil to list).
func zeroOf(typ string, zero any, nilPtr any) []zeroValue {
	out := []zeroValue{{typ: typ, what: "zero", v: zero}}
	if nilPtr != nil {
		out = append(out, zeroValue{typ: typ, what: "nil", v: nilPtr})
	}
	return out
}

// zeroBackend is a kubeclient.Backend on a cluster alone, so that the
// clientset can be listed without a Node (the root package's).
type zeroBackend struct{ c *apiserver.Cluster }

func (b zeroBackend) API() resize.API { return b.c }
func (b zeroBackend) CreatePod(_ context.Context, pod *v1.Pod) (*v1.Pod, error) {
	return b.c.CreatePod(context.Background(), pod)
}
func (b zeroBackend) DeletePod(_ context.Context, namespace, name string) error {
	return b.c.DeletePod(context.Background(), namespace, name)
}
func (b zeroBackend) Resize(_ context.Context, op resize.ResizeOp) (*v1.Pod, error) {
	return b.c.ResizePodPatch(context.Background(), op.Namespace, op.Name, op.PatchType, op.Patch)
}

// zeroPod is a small valid pod for the values made by constructors.
func zeroPod() *v1.Pod {
	q := resource.MustParse("100m")
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "uid-p"},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "pause",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: q}}}}},
	}
}

// zeroScenario is the smallest scenario a Session runs.
const zeroScenario = `name: zero
pods:
- metadata: {name: p}
  spec:
    containers:
    - name: c
      resources: {requests: {cpu: 100m}}
steps:
- resize: {pod: p, patch: '{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"200m"}}}]}}'}
`

// zeroValues are the values TestZeroValues calls every method of. t is
// for the values whose constructors need a temporary directory.
func zeroValues(t *testing.T) []zeroValue {
	var vs []zeroValue
	add := func(more ...zeroValue) { vs = append(vs, more...) }
	real := func(typ, what string, v any, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		add(zeroValue{typ: typ, what: what, v: v})
	}
	ctx := context.Background()

	// resize/apiserver
	cluster := apiserver.NewCluster(apiserver.ClusterOptions{})
	if _, err := cluster.CreatePod(ctx, zeroPod()); err != nil {
		t.Fatal(err)
	}
	add(zeroOf("apiserver.Cluster", &apiserver.Cluster{}, (*apiserver.Cluster)(nil))...)
	add(zeroValue{typ: "apiserver.Cluster", what: "NewCluster", v: cluster})
	add(zeroOf("apiserver.InvalidError", &apiserver.InvalidError{}, (*apiserver.InvalidError)(nil))...)
	add(zeroOf("apiserver.PatchError", &apiserver.PatchError{}, (*apiserver.PatchError)(nil))...)
	add(zeroOf("apiserver.ForbiddenError", &apiserver.ForbiddenError{}, (*apiserver.ForbiddenError)(nil))...)
	add(zeroOf("apiserver.Watcher", &apiserver.Watcher{}, (*apiserver.Watcher)(nil))...)
	w, err := cluster.Watch(apiserver.WatchOptions{})
	real("apiserver.Watcher", "Cluster.Watch", w, err)
	add(zeroOf("apiserver.Event", apiserver.Event{}, nil)...)
	add(zeroOf("apiserver.WatchEvent", apiserver.WatchEvent{}, nil)...)
	add(zeroOf("apiserver.ResizeRequest", apiserver.ResizeRequest{}, nil)...)

	// resize/kubeclient: the values are of unexported types, reached
	// through the interfaces New and ForNode return.
	for _, b := range []struct {
		what string
		b    kubeclient.Backend
	}{{"New(nil)", nil}, {"New(cluster)", zeroBackend{cluster}}} {
		cs := kubeclient.New(b.b)
		add(zeroValue{typ: "kubeclient.clientset", what: b.what, v: cs, only: true},
			zeroValue{typ: "kubeclient.coreV1", what: b.what, v: cs.CoreV1(), only: true},
			zeroValue{typ: "kubeclient.eventsV1", what: b.what, v: cs.EventsV1(), only: true},
			zeroValue{typ: "kubeclient.pods", what: b.what, v: cs.CoreV1().Pods(""), only: true},
			zeroValue{typ: "kubeclient.coreEvents", what: b.what, v: cs.CoreV1().Events(""), only: true},
			zeroValue{typ: "kubeclient.k8sioEvents", what: b.what, v: cs.EventsV1().Events(""), only: true},
			zeroValue{typ: "kubeclient.nodes", what: b.what, v: cs.CoreV1().Nodes(), only: true},
			zeroValue{typ: "kubeclient.serverDiscovery", what: b.what, v: cs.Discovery(), only: true})
	}
	add(zeroValue{typ: "kubeclient.nodeBackend", what: "ForNode(nil)", v: kubeclient.ForNode(nil), only: true})

	// resize/core
	c, err := core.New(core.NodeConfig{})
	real("core.Core", "core.New", c, err)
	add(zeroOf("core.Core", &core.Core{}, (*core.Core)(nil))...)
	add(zeroOf("core.PodActions", &core.PodActions{}, (*core.PodActions)(nil))...)
	add(zeroOf("core.ConfigError", &core.ConfigError{}, (*core.ConfigError)(nil))...)
	for typ, v := range map[string]any{
		"core.NodeConfig": core.NodeConfig{}, "core.ResizeMessage": core.ResizeMessage{}, "core.LogRecord": core.LogRecord{},
		"core.Event": core.Event{}, "core.ReadCgroupExists": core.ReadCgroupExists{}, "core.CreateCgroup": core.CreateCgroup{},
		"core.SetCgroup": core.SetCgroup{}, "core.ReadCgroup": core.ReadCgroup{}, "core.ReadMemoryUsage": core.ReadMemoryUsage{},
		"core.DeleteCgroup": core.DeleteCgroup{}, "core.RunPodSandbox": core.RunPodSandbox{}, "core.StopPodSandbox": core.StopPodSandbox{},
		"core.RemovePodSandbox": core.RemovePodSandbox{}, "core.UpdatePodSandboxResources": core.UpdatePodSandboxResources{},
		"core.CreateContainer": core.CreateContainer{}, "core.StartContainer": core.StartContainer{}, "core.StopContainer": core.StopContainer{},
		"core.RemoveContainer": core.RemoveContainer{}, "core.ReadContainerStatus": core.ReadContainerStatus{},
		"core.ReadContainerStats": core.ReadContainerStats{}, "core.UpdateContainerResources": core.UpdateContainerResources{},
		"core.WriteAllocated": core.WriteAllocated{}, "core.WriteActuatedContainer": core.WriteActuatedContainer{},
		"core.WriteActuated": core.WriteActuated{}, "core.DeleteCheckpoints": core.DeleteCheckpoints{}, "core.RecordEvent": core.RecordEvent{},
		"core.WriteStatus": core.WriteStatus{}, "core.DeletePod": core.DeletePod{},
	} {
		add(zeroValue{typ: typ, what: "zero", v: v})
	}

	// resize/profile
	add(zeroOf("profile.Version", profile.Version(""), nil)...)
	add(zeroOf("profile.Profile", profile.Profile{}, nil)...)
	add(zeroValue{typ: "profile.Profile", what: "profile.New", v: profile.New("", nil)})

	// resize/metrics
	m, err := metrics.New(prometheus.NewRegistry())
	real("metrics.Metrics", "metrics.New", m, err)
	add(zeroOf("metrics.Metrics", &metrics.Metrics{}, (*metrics.Metrics)(nil))...)
	add(zeroValue{typ: "metrics.NodeRecorder", what: "Metrics.Attach", v: m.Attach("zero")})
	add(zeroOf("metrics.NodeRecorder", &metrics.NodeRecorder{}, (*metrics.NodeRecorder)(nil))...)
	add(zeroOf("metrics.SeriesError", &metrics.SeriesError{}, (*metrics.SeriesError)(nil))...)
	add(zeroOf("metrics.Series", metrics.Series{}, nil)...)

	// resize/explore
	add(zeroOf("explore.Point", explore.Point{}, nil)...)
	add(zeroOf("explore.Counts", &explore.Counts{}, (*explore.Counts)(nil))...)
	add(zeroOf("explore.Report", &explore.Report{}, (*explore.Report)(nil))...)

	// resize/benchworld
	add(zeroOf("benchworld.World", &benchworld.World{}, (*benchworld.World)(nil))...)

	// resize/scenario
	s, err := scenario.Parse("zero", []byte(zeroScenario))
	if err != nil {
		t.Fatal(err)
	}
	se, err := scenario.NewSession(ctx, s, scenario.Options{})
	real("scenario.Session", "scenario.NewSession", se, err)
	add(zeroOf("scenario.Session", &scenario.Session{}, (*scenario.Session)(nil))...)
	add(zeroOf("scenario.Mismatch", scenario.Mismatch{}, nil)...)
	add(zeroOf("scenario.Scenario", s, (*scenario.Scenario)(nil))...)
	add(zeroOf("scenario.AuditExpect", scenario.AuditExpect{}, nil)...)
	add(zeroOf("scenario.Error", &scenario.Error{}, (*scenario.Error)(nil))...)
	add(zeroOf("scenario.PodRef", scenario.PodRef{}, nil)...)
	add(zeroOf("scenario.Step", scenario.Step{}, nil)...)
	add(zeroOf("scenario.ResourcesExpect", &scenario.ResourcesExpect{}, (*scenario.ResourcesExpect)(nil))...)
	add(zeroOf("scenario.EventExpect", scenario.EventExpect{}, nil)...)

	// allocation
	add(zeroOf("allocation.Queue", &allocation.Queue{}, (*allocation.Queue)(nil))...)
	add(zeroOf("allocation.RetryTimer", &allocation.RetryTimer{}, (*allocation.RetryTimer)(nil))...)
	add(zeroValue{typ: "allocation.RetryTimer", what: "NewRetryTimer", v: ptr(allocation.NewRetryTimer(time.Unix(0, 0)))})
	add(zeroOf("allocation.Usage", &allocation.Usage{}, (*allocation.Usage)(nil))...)
	add(zeroOf("allocation.NodeLoads", &allocation.NodeLoads[string]{}, (*allocation.NodeLoads[string])(nil))...)
	add(zeroOf("allocation.Decision", allocation.Decision{}, nil)...)
	add(zeroOf("allocation.Check", allocation.Check{}, nil)...)
	add(zeroOf("allocation.Allocated", allocation.Allocated{}, nil)...)
	add(zeroValue{typ: "allocation.Allocated", what: "As", v: allocation.As(zeroPod())})
	add(zeroOf("allocation.PodResources", allocation.PodResources{}, nil)...)

	// allocation/frozen
	add(zeroOf("frozen.Pod", frozen.Pod{}, nil)...)
	fp, ok := frozen.FreezePod(zeroPod())
	if !ok {
		t.Fatal("FreezePod refused the test pod")
	}
	add(zeroValue{typ: "frozen.Pod", what: "FreezePod", v: fp})
	add(zeroOf("frozen.Recent", &frozen.Recent[string]{}, (*frozen.Recent[string])(nil))...)
	add(zeroOf("frozen.Resources", frozen.Resources{}, nil)...)

	// allocation/reslist
	add(zeroOf("reslist.CPUMemory", &reslist.CPUMemory{}, (*reslist.CPUMemory)(nil))...)

	// cgroup
	kernel := cgroup.NewSimKernel(cgroup.V2)
	add(zeroValue{typ: "cgroup.SimKernel", what: "NewSimKernel", v: kernel})
	add(zeroOf("cgroup.SimKernel", &cgroup.SimKernel{}, (*cgroup.SimKernel)(nil))...)
	add(zeroValue{typ: "cgroup.FaultInjector", what: "NewFaultInjector(kernel)", v: cgroup.NewFaultInjector(kernel)},
		zeroValue{typ: "cgroup.FaultInjector", what: "NewFaultInjector(nil)", v: cgroup.NewFaultInjector(nil)})
	add(zeroOf("cgroup.FaultInjector", &cgroup.FaultInjector{}, (*cgroup.FaultInjector)(nil))...)
	add(zeroValue{typ: "cgroup.Recorder", what: "NewRecorder(kernel)", v: cgroup.NewRecorder(kernel)},
		zeroValue{typ: "cgroup.Recorder", what: "NewRecorder(nil)", v: cgroup.NewRecorder(nil)})
	add(zeroOf("cgroup.Recorder", &cgroup.Recorder{}, (*cgroup.Recorder)(nil))...)
	root := t.TempDir()
	for name, content := range map[string]string{"cgroup.controllers": "cpu memory", "cgroup.subtree_control": "", "cgroup.procs": ""} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	add(zeroOf("cgroup.ContentError", &cgroup.ContentError{}, (*cgroup.ContentError)(nil))...)

	// cgroup/cgroupfs
	fs, err := cgroupfs.New(root)
	real("cgroupfs.FS", "New(a temporary directory)", fs, err)
	add(zeroOf("cgroupfs.FS", &cgroupfs.FS{}, (*cgroupfs.FS)(nil))...)

	// cgroup/systemd
	conn := systemd.NewTreeConn(root, cgroup.V2)
	add(zeroValue{typ: "systemd.TreeConn", what: "NewTreeConn(a temporary directory)", v: conn})
	add(zeroOf("systemd.TreeConn", &systemd.TreeConn{}, (*systemd.TreeConn)(nil))...)
	sdm, err := systemd.New(fs, conn)
	real("systemd.Manager", "New(FS, TreeConn)", sdm, err)
	add(zeroOf("systemd.Manager", &systemd.Manager{}, (*systemd.Manager)(nil))...)

	// cgroup/cgconfig
	add(zeroOf("cgconfig.AmountError", &cgconfig.AmountError{}, (*cgconfig.AmountError)(nil))...)
	add(zeroOf("cgconfig.Version", cgconfig.Version(0), nil)...)
	add(zeroOf("cgconfig.ResourceConfig", cgconfig.ResourceConfig{}, nil)...)
	add(zeroOf("cgconfig.Values", cgconfig.Values{}, nil)...)
	add(zeroValue{typ: "cgconfig.ResourceConfig", what: "PodConfig", v: cgconfig.PodConfig(zeroPod(), cgconfig.PodConfigOptions{})})

	// cri
	sim := cri.NewSimContainerd(cgroup.NewSimKernel(cgroup.V2))
	add(zeroValue{typ: "cri.SimContainerd", what: "NewSimContainerd(kernel)", v: sim},
		zeroValue{typ: "cri.SimContainerd", what: "NewSimContainerd(nil)", v: cri.NewSimContainerd(nil)})
	add(zeroOf("cri.SimContainerd", &cri.SimContainerd{}, (*cri.SimContainerd)(nil))...)
	add(zeroValue{typ: "cri.FaultInjector", what: "NewFaultInjector(sim)", v: cri.NewFaultInjector(sim)},
		zeroValue{typ: "cri.FaultInjector", what: "NewFaultInjector(nil)", v: cri.NewFaultInjector(nil)})
	add(zeroOf("cri.FaultInjector", &cri.FaultInjector{}, (*cri.FaultInjector)(nil))...)
	add(zeroValue{typ: "cri.Recorder", what: "NewRecorder(sim)", v: cri.NewRecorder(sim)},
		zeroValue{typ: "cri.Recorder", what: "NewRecorder(nil)", v: cri.NewRecorder(nil)})
	add(zeroOf("cri.Recorder", &cri.Recorder{}, (*cri.Recorder)(nil))...)
	add(zeroOf("cri.RemoteError", &cri.RemoteError{}, (*cri.RemoteError)(nil))...)
	add(zeroOf("cri.ExitError", &cri.ExitError{}, (*cri.ExitError)(nil))...)
	add(zeroOf("cri.MemoryLimitError", &cri.MemoryLimitError{}, (*cri.MemoryLimitError)(nil))...)
	add(zeroOf("cri.Call", cri.Call{}, nil)...)

	// cri/remote
	add(zeroOf("remote.Client", &remote.Client{}, (*remote.Client)(nil))...)

	// cri/conform
	add(zeroOf("conform.Report", &conform.Report{}, (*conform.Report)(nil))...)

	// cri/kubeletcri
	msgs := kubeletcri.New(kubeletcri.Settings{})
	add(zeroValue{typ: "kubeletcri.Messages", what: "New", v: &msgs})
	add(zeroOf("kubeletcri.Messages", &kubeletcri.Messages{}, (*kubeletcri.Messages)(nil))...)
	add(zeroOf("kubeletcri.MemoryCheck", kubeletcri.MemoryCheck{}, nil)...)

	// allocation/state
	add(zeroValue{typ: "state.Store", what: "NewMemory", v: state.NewMemory()})
	store, err := state.OpenCheckpoint(ctx, t.TempDir(), state.AllocatedStateFile)
	real("state.Store", "OpenCheckpoint", store, err)
	add(zeroOf("state.Store", &state.Store{}, (*state.Store)(nil))...)
	lock, err := state.LockDir(t.TempDir(), "zero")
	real("state.DirLock", "LockDir", lock, err)
	add(zeroOf("state.DirLock", &state.DirLock{}, (*state.DirLock)(nil))...)

	// cgroup's snapshots of a tree
	snap, err := cgroup.SnapshotTree(cgroup.NewSimKernel(cgroup.V2), "a/b")
	real("cgroup.TreeSnapshot", "SnapshotTree", snap, err)
	add(zeroOf("cgroup.TreeSnapshot", &cgroup.TreeSnapshot{}, (*cgroup.TreeSnapshot)(nil))...)

	// resize: a running node, fleet and backend, and ones that are not.
	// Their methods are called in turn on the same value, Close among
	// them: what comes after it is answered by a closed one.
	backend, err := resize.Simulated(resize.NodeConfig{})
	real("resize.Backend", "Simulated", backend, err)
	add(zeroOf("resize.Backend", &resize.Backend{}, (*resize.Backend)(nil))...)
	node, err := resize.NewNode(ctx, resize.NodeConfig{}, resize.Deps{Cluster: resize.NewCluster(resize.ClusterOptions{}),
		Cgroups: cgroup.NewSimKernel(cgroup.V2), Runtime: cri.NewSimContainerd(nil), CheckpointDir: t.TempDir()})
	real("resize.Node", "NewNode", node, err)
	add(zeroOf("resize.Node", &resize.Node{}, (*resize.Node)(nil))...)
	fleet := resize.NewFleet(resize.FleetOptions{})
	_, err = fleet.AddNode(ctx, resize.NodeConfig{Name: "n"}, resize.Deps{})
	real("resize.Fleet", "NewFleet", fleet, err)
	add(zeroOf("resize.Fleet", &resize.Fleet{}, (*resize.Fleet)(nil))...)
	add(zeroValue{typ: "resize.FakeClock", what: "NewFakeClock", v: resize.NewFakeClock(time.Unix(0, 0))})
	add(zeroOf("resize.FakeClock", &resize.FakeClock{}, (*resize.FakeClock)(nil))...)
	add(zeroOf("resize.WallClock", resize.WallClock{}, nil)...)
	add(zeroOf("kubeapi.API", &kubeapi.API{}, (*kubeapi.API)(nil))...)
	kapi, err := kubeapi.New(ctx, kubefake.NewClientset(), "n", kubeapi.Options{})
	real("kubeapi.API", "New", kapi, err)
	t.Cleanup(kapi.Close)
	add(zeroOf("resize.NodeConfig", resize.NodeConfig{}, nil)...)
	add(zeroOf("resize.Difference", resize.Difference{}, nil)...)
	add(zeroOf("resize.FitError", &resize.FitError{}, (*resize.FitError)(nil))...)
	add(zeroOf("resize.MismatchError", &resize.MismatchError{}, (*resize.MismatchError)(nil))...)
	add(zeroOf("resize.Plan", &resize.Plan{}, (*resize.Plan)(nil))...)
	return vs
}

func ptr[T any](v T) *T { return &v }

// zeroFuncs are the exported functions TestZeroValues calls with zero
// arguments.
func zeroFuncs() []zeroFunc {
	return []zeroFunc{
		// resize
		{name: "resize.ApplyResize", fn: resize.ApplyResize},
		{name: "resize.CPUMemory", fn: resize.CPUMemory},
		{name: "resize.CPU", fn: resize.CPU},
		{name: "resize.Memory", fn: resize.Memory},
		{name: "resize.NewCluster", fn: resize.NewCluster},
		{name: "resize.NewFakeClock", fn: resize.NewFakeClock},
		{name: "kubeapi.New", fn: kubeapi.New},
		{name: "resize.NewFleet", fn: resize.NewFleet},
		{name: "resize.NewNode", fn: resize.NewNode},
		{name: "resize.Simulated", fn: resize.Simulated},
		{name: "resize.SortDifferences", fn: resize.SortDifferences},
		{name: "resize.NewHostBackend", fn: resize.NewHostBackend},
		// resize/host
		{name: "host.Cgroups", fn: host.Cgroups, skip: "opens the host's cgroup filesystem at /sys/fs/cgroup"},
		{name: "host.Remote", fn: host.Remote},
		{name: "host.WithCgroupManager", fn: host.WithCgroupManager},
		{name: "host.WithCgroupParent", fn: host.WithCgroupParent},
		{name: "host.WithCgroupRoot", fn: host.WithCgroupRoot},
		{name: "host.WithPullImage", fn: host.WithPullImage},
		{name: "host.WithRuntimeHandler", fn: host.WithRuntimeHandler},
		{name: "host.WithSystemd", fn: host.WithSystemd},
		{name: "host.WithRemoteOptions", fn: host.WithRemoteOptions},
		{name: "host.WithBackendOptions", fn: host.WithBackendOptions},
		{name: "resize.WithCgroups", fn: resize.WithCgroups},
		{name: "resize.WithRuntimeCgroups", fn: resize.WithRuntimeCgroups},
		{name: "resize.WithSimContainerd", fn: resize.WithSimContainerd},
		{name: "resize.WithSimKernel", fn: resize.WithSimKernel},

		// allocation/state
		{name: "state.NewMemory", fn: state.NewMemory},
		{name: "state.OpenCheckpoint", fn: state.OpenCheckpoint},
		{name: "state.LockDir", fn: state.LockDir},
		{name: "state.WithFormat", fn: state.WithFormat},
		{name: "state.WithMaxSize", fn: state.WithMaxSize},

		// resize/apiserver
		{name: "apiserver.ValidateResize", fn: apiserver.ValidateResize},
		{name: "apiserver.ValidatePod", fn: apiserver.ValidatePod},
		{name: "apiserver.NewCluster", fn: apiserver.NewCluster},
		{name: "apiserver.ApplyResize", fn: apiserver.ApplyResize},
		{name: "apiserver.ValidatePodMeta", fn: apiserver.ValidatePodMeta},
		{name: "apiserver.ValidPatchType", fn: apiserver.ValidPatchType},
		{name: "apiserver.ApplyResizePatch", fn: apiserver.ApplyResizePatch},
		{name: "apiserver.ValidateAmounts", fn: apiserver.ValidateAmounts},
		{name: "apiserver.CheckExponent", fn: apiserver.CheckExponent},
		{name: "apiserver.DefaultPod", fn: apiserver.DefaultPod},
		{name: "apiserver.ToEventsV1", fn: apiserver.ToEventsV1},
		{name: "apiserver.AdmitResize", fn: apiserver.AdmitResize},
		{name: "apiserver.CPUMemory", fn: apiserver.CPUMemory},
		{name: "apiserver.ApplyResizeRequest", fn: apiserver.ApplyResizeRequest},
		// resize/kubeclient
		{name: "kubeclient.ForNode", fn: kubeclient.ForNode},
		{name: "kubeclient.New", fn: kubeclient.New},
		// resize/core
		{name: "core.ResizeStartedMessage", fn: core.ResizeStartedMessage},
		{name: "core.ResizeCompletedMessage", fn: core.ResizeCompletedMessage},
		{name: "core.ResizeErrorMessage", fn: core.ResizeErrorMessage},
		{name: "core.ResizePendingMessage", fn: core.ResizePendingMessage},
		{name: "core.New", fn: core.New},
		{name: "core.StopsOnFailure", fn: core.StopsOnFailure},
		{name: "core.IsRead", fn: core.IsRead},
		{name: "core.Retain", fn: core.Retain},
		{name: "core.FormatValues", fn: core.FormatValues},
		{name: "core.FormatLinux", fn: core.FormatLinux},
		{name: "core.FormatRequirements", fn: core.FormatRequirements},
		{name: "core.DefaultCapacity", fn: core.DefaultCapacity},
		// resize/profile
		{name: "profile.Versions", fn: profile.Versions},
		{name: "profile.Parse", fn: profile.Parse},
		{name: "profile.New", fn: profile.New},
		{name: "profile.KnownGates", fn: profile.KnownGates},
		{name: "profile.CheckGates", fn: profile.CheckGates},
		{name: "profile.NotReproduced", fn: profile.NotReproduced},
		// resize/metrics
		{name: "metrics.New", fn: metrics.New},
		{name: "metrics.ParseSeries", fn: metrics.ParseSeries},
		// resize/explore
		{name: "explore.Scenario", fn: explore.Scenario},
		{name: "explore.Label", fn: explore.Label},
		// resize/benchworld
		{name: "benchworld.Config", fn: benchworld.Config},
		{name: "benchworld.Container", fn: benchworld.Container},
		{name: "benchworld.Pods", fn: benchworld.Pods},
		{name: "benchworld.NewPod", fn: benchworld.NewPod},
		{name: "benchworld.Admitted", fn: benchworld.Admitted},
		{name: "benchworld.Deferred", fn: benchworld.Deferred},
		{name: "benchworld.New", fn: benchworld.New},
		{name: "benchworld.NewFleet", fn: benchworld.NewFleet},
		// resize/scenario
		{name: "scenario.NotApplicable", fn: scenario.NotApplicable},
		{name: "scenario.Run", fn: scenario.Run},
		{name: "scenario.Load", fn: scenario.Load},
		{name: "scenario.Parse", fn: scenario.Parse},
		{name: "scenario.NewSession", fn: scenario.NewSession},
		{name: "scenario.GoldenFile", fn: scenario.GoldenFile},
		{name: "scenario.CompareGolden", fn: scenario.CompareGolden},
		{name: "scenario.WriteGolden", fn: scenario.WriteGolden},
		// resize/scenario/scenariotest
		{name: "scenariotest.Run", fn: scenariotest.Run},
		{name: "scenariotest.RunWith", fn: scenariotest.RunWith},
		// allocation
		{name: "allocation.IsResizeIncreasing", fn: allocation.IsResizeIncreasing},
		{name: "allocation.IsIncreasing", fn: allocation.IsIncreasing},
		{name: "allocation.Less", fn: allocation.Less},
		{name: "allocation.PodLoad", fn: allocation.PodLoad},
		{name: "allocation.StatusRequests", fn: allocation.StatusRequests},
		{name: "allocation.NewRetryTimer", fn: allocation.NewRetryTimer},
		{name: "allocation.PodUsage", fn: allocation.PodUsage},
		{name: "allocation.UsageOf", fn: allocation.UsageOf},
		{name: "allocation.ResizeRequested", fn: allocation.ResizeRequested},
		{name: "allocation.AdmitResize", fn: allocation.AdmitResize},
		{name: "allocation.DecideResize", fn: allocation.DecideResize},
		{name: "allocation.AdmitPod", fn: allocation.AdmitPod},
		{name: "allocation.DecidePod", fn: allocation.DecidePod},
		{name: "allocation.ResourcesFit", fn: allocation.ResourcesFit},
		{name: "allocation.Fits", fn: allocation.Fits},
		{name: "allocation.ExplainResize", fn: allocation.ExplainResize},
		{name: "allocation.SameResources", fn: allocation.SameResources},
		{name: "allocation.As", fn: allocation.As},
		// allocation/frozen
		{name: "frozen.FreezePod", fn: frozen.FreezePod},
		{name: "frozen.FreezeResources", fn: frozen.FreezeResources},
		// allocation/reslist
		{name: "reslist.CPUMemoryOf", fn: reslist.CPUMemoryOf},
		{name: "reslist.CPUMemoryKeys", fn: reslist.CPUMemoryKeys},
		{name: "reslist.Each", fn: reslist.Each},
		{name: "reslist.Equal", fn: reslist.Equal},
		{name: "reslist.Same", fn: reslist.Same},
		// cgroup
		{name: "cgroup.NewFaultInjector", fn: cgroup.NewFaultInjector},
		{name: "cgroup.RemoveTree", fn: cgroup.RemoveTree},
		{name: "cgroup.SnapshotTree", fn: cgroup.SnapshotTree},
		{name: "cgroup.RemoveCreated", fn: cgroup.RemoveCreated},
		{name: "cgroup.Compare", fn: cgroup.Compare},
		{name: "cgroup.WithWriteLimit", fn: cgroup.WithWriteLimit},
		{name: "cgroup.WithHostMemory", fn: cgroup.WithHostMemory},
		{name: "cgroup.NewSimKernel", fn: cgroup.NewSimKernel},
		{name: "cgroup.SetValues", fn: cgroup.SetValues},
		{name: "cgroup.RecordAtMost", fn: cgroup.RecordAtMost},
		{name: "cgroup.NewRecorder", fn: cgroup.NewRecorder},
		{name: "cgroup.ParseValues", fn: cgroup.ParseValues},
		{name: "cgroup.Canonical", fn: cgroup.Canonical},
		{name: "cgroup.FormatMax", fn: cgroup.FormatMax},
		{name: "cgroup.FormatCPUMax", fn: cgroup.FormatCPUMax},
		{name: "cgroup.ParseCPUMax", fn: cgroup.ParseCPUMax},
		{name: "cgroup.ParseV1Limit", fn: cgroup.ParseV1Limit},
		{name: "cgroup.DeleteDeepestFirst", fn: cgroup.DeleteDeepestFirst},
		{name: "cgroup.SortDeepestFirst", fn: cgroup.SortDeepestFirst},
		{name: "cgroup.Ancestors", fn: cgroup.Ancestors},
		// cgroup/cgroupfs
		{name: "cgroupfs.New", fn: cgroupfs.New, skip: `opens the host's cgroup filesystem: "" is the working directory, read with the host's mount table`},
		{name: "cgroupfs.WithVersion", fn: cgroupfs.WithVersion},
		{name: "cgroupfs.WithV1Mounts", fn: cgroupfs.WithV1Mounts},
		{name: "cgroupfs.WithCreateHook", fn: cgroupfs.WithCreateHook},
		{name: "cgroupfs.StartIdle", fn: cgroupfs.StartIdle, skip: "starts a child process of the program, which only its end func ends"},
		{name: "cgroupfs.Mounts", fn: cgroupfs.Mounts, skip: "reads the host's mount table (/proc/self/mountinfo)"},
		// cgroup/systemd
		{name: "systemd.New", fn: systemd.New},
		{name: "systemd.NewTreeConn", fn: systemd.NewTreeConn},
		{name: "systemd.Dial", fn: systemd.Dial, skip: "connects to the host's systemd"},
		{name: "systemd.Open", fn: systemd.Open, skip: "connects to the host's systemd"},
		// cgroup/cgconfig
		{name: "cgconfig.RootRelative", fn: cgconfig.RootRelative},
		{name: "cgconfig.ValidatePath", fn: cgconfig.ValidatePath},
		{name: "cgconfig.MaxQuantity", fn: cgconfig.MaxQuantity},
		{name: "cgconfig.AmountFits", fn: cgconfig.AmountFits},
		{name: "cgconfig.CheckAmount", fn: cgconfig.CheckAmount},
		{name: "cgconfig.AmountBoundText", fn: cgconfig.AmountBoundText},
		{name: "cgconfig.MilliCPUToShares", fn: cgconfig.MilliCPUToShares},
		{name: "cgconfig.MilliCPUToQuota", fn: cgconfig.MilliCPUToQuota},
		{name: "cgconfig.SystemdQuota", fn: cgconfig.SystemdQuota},
		{name: "cgconfig.SystemdQuotaPerSec", fn: cgconfig.SystemdQuotaPerSec},
		{name: "cgconfig.SystemdName", fn: cgconfig.SystemdName},
		{name: "cgconfig.ExpandSlice", fn: cgconfig.ExpandSlice},
		{name: "cgconfig.PodCgroupPath", fn: cgconfig.PodCgroupPath},
		{name: "cgconfig.SharesToMilliCPU", fn: cgconfig.SharesToMilliCPU},
		{name: "cgconfig.QuotaToMilliCPU", fn: cgconfig.QuotaToMilliCPU},
		{name: "cgconfig.LinearWeight", fn: cgconfig.LinearWeight},
		{name: "cgconfig.QuadraticWeight", fn: cgconfig.QuadraticWeight},
		{name: "cgconfig.WeightToShares", fn: cgconfig.WeightToShares},
		{name: "cgconfig.PodCgroupName", fn: cgconfig.PodCgroupName},
		{name: "cgconfig.ContainerCgroupName", fn: cgconfig.ContainerCgroupName},
		{name: "cgconfig.PodConfig", fn: cgconfig.PodConfig},
		// cri
		{name: "cri.SetMemoryUsage", fn: cri.SetMemoryUsage},
		{name: "cri.CgroupDriverOf", fn: cri.CgroupDriverOf},
		{name: "cri.CgroupVersionOf", fn: cri.CgroupVersionOf},
		{name: "cri.NewFaultInjector", fn: cri.NewFaultInjector},
		{name: "cri.NewRecorder", fn: cri.NewRecorder},
		{name: "cri.RecordAtMost", fn: cri.RecordAtMost},
		{name: "cri.IsUnimplemented", fn: cri.IsUnimplemented},
		{name: "cri.WithContainerWeight", fn: cri.WithContainerWeight},
		{name: "cri.WithDriver", fn: cri.WithDriver},
		{name: "cri.WithClock", fn: cri.WithClock},
		{name: "cri.WithCgroupModel", fn: cri.WithCgroupModel},
		{name: "cri.WithSwapController", fn: cri.WithSwapController},
		{name: "cri.NewSimContainerd", fn: cri.NewSimContainerd},
		{name: "cri.LinuxFields", fn: cri.LinuxFields},
		{name: "cri.SandboxFields", fn: cri.SandboxFields},
		{name: "cri.ContainerPID", fn: cri.ContainerPID},
		// cri/remote
		{name: "remote.Dial", fn: remote.Dial, skip: "dials the CRI endpoint, a socket on the host"},
		{name: "remote.WithCallTimeout", fn: remote.WithCallTimeout},
		{name: "remote.WithDialOptions", fn: remote.WithDialOptions},
		// cri/conform
		{name: "conform.Dial", fn: conform.Dial, skip: "dials the CRI endpoint, a socket on the host"},
		{name: "conform.Run", fn: conform.Run, skip: "dials the CRI endpoint and creates containers and cgroups on the host"},
		// cri/kubeletcri
		{name: "kubeletcri.New", fn: kubeletcri.New},
		// qos
		{name: "qos.PodQOSClass", fn: qos.PodQOSClass},
		{name: "qos.PodQOSClassWhenSet", fn: qos.PodQOSClassWhenSet},
		{name: "qos.GetPodQOS", fn: qos.GetPodQOS},
		{name: "qos.IsSidecar", fn: qos.IsSidecar},
		{name: "qos.PodRequests", fn: qos.PodRequests},
		{name: "qos.PodLimits", fn: qos.PodLimits},
		{name: "qos.AllContainersHaveLimit", fn: qos.AllContainersHaveLimit},
	}
}

// exportedAPI parses the non-test sources of the packages in zeroPackages
// and returns their exported functions ("pkg.Func") and, per type
// ("pkg.Type", exported or not), the exported methods it declares.
func exportedAPI(t *testing.T) (funcs map[string]bool, methods map[string][]string) {
	t.Helper()
	funcs, methods = map[string]bool{}, map[string][]string{}
	for dir, pkg := range zeroPackages {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || !fd.Name.IsExported() {
					continue
				}
				if fd.Recv == nil {
					funcs[pkg+"."+fd.Name.Name] = true
					continue
				}
				recv := fd.Recv.List[0].Type
				if star, ok := recv.(*ast.StarExpr); ok {
					recv = star.X
				}
				switch r := recv.(type) {
				case *ast.IndexExpr:
					recv = r.X
				case *ast.IndexListExpr:
					recv = r.X
				}
				typ := pkg + "." + recv.(*ast.Ident).Name
				if !slices.Contains(methods[typ], fd.Name.Name) {
					methods[typ] = append(methods[typ], fd.Name.Name)
				}
			}
		}
	}
	return funcs, methods
}

// TestZeroValues holds the packages of zeroPackages to answering nil and
// zero values with an error, or a zero value for what has no error
// result, never a panic: every exported method of each value of
// zeroValues (zero values, nil pointers, values made by constructors) and
// every exported function of zeroFuncs is called with zero arguments (a
// nil context, nil pointers, slices and maps, "" and 0) under recover. A
// panic fails the test with the type, the method and the panic; so does a
// call that does not return. The lists are checked against the packages'
// sources: a new exported function, or a type that gains methods, must be
// added to them.
func TestZeroValues(t *testing.T) {
	funcs, methods := exportedAPI(t)
	values := zeroValues(t)
	listed := map[string]bool{}
	for _, v := range values {
		listed[v.typ] = true
		declared := methods[v.typ]
		if len(declared) == 0 {
			t.Errorf("%s (%s) is listed, but its package declares no exported method of it", v.typ, v.what)
			continue
		}
		all := zerocall.MethodNames(v.v)
		for name := range v.skip {
			if !slices.Contains(all, name) {
				t.Errorf("%s: skip names %s, which it does not have", v.typ, name)
			}
		}
		opts := zerocall.Options{Skip: v.skip}
		if v.only {
			opts.Only = declared
		}
		for _, r := range zerocall.Methods(v.typ+" ("+v.what+")", v.v, opts) {
			switch {
			case r.Failed():
				t.Error(r)
			case r.Skipped != "":
				t.Log(r)
			}
		}
	}
	var missing []string
	for typ := range methods {
		// A type of the package's own (kubeclient's clients) is listed
		// where the package hands one out; an exported one always.
		if _, name, _ := strings.Cut(typ, "."); !listed[typ] && token.IsExported(name) {
			missing = append(missing, typ)
		}
	}
	sort.Strings(missing)
	for _, typ := range missing {
		t.Errorf("%s has exported methods and no value in zeroValues", typ)
	}

	seen := map[string]bool{}
	for _, f := range zeroFuncs() {
		seen[f.name] = true
		if !funcs[f.name] {
			t.Errorf("zeroFuncs lists %s, which is no exported function of the packages", f.name)
		}
		if f.skip != "" {
			t.Logf("%s: skipped: %s", f.name, f.skip)
			continue
		}
		if r := zerocall.Call(f.name, f.fn, 0); r.Failed() {
			t.Error(r)
		}
	}
	missing = missing[:0]
	for name := range funcs {
		if !seen[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	for _, name := range missing {
		t.Errorf("%s is exported and not in zeroFuncs", name)
	}
}

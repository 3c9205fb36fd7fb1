package realhost_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	checkpoint "github.com/resizelet/resizelet/allocation/state"
	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/kubeapi"
)

// compareNodeConfig is the node both sides run: 4 CPUs, so that a few
// small pods can fill it and a resize can be Deferred, and 8Gi.
func compareNodeConfig(name string) resize.NodeConfig {
	return resize.NodeConfig{
		Name: name,
		Capacity: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("8Gi"),
			v1.ResourcePods: resource.MustParse("110"), v1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
		},
	}
}

// compareSide is one of the two nodes TestNodeOnRealAPIServerMatchesCluster
// runs: what the test does to it, and what it shows.
type compareSide interface {
	// create creates the pod, bound to the node.
	create(ctx context.Context, pod *v1.Pod) error
	// resize sends a patch of type pt through the resize subresource.
	resize(ctx context.Context, name string, pt types.PatchType, patch string) error
	// delete deletes the pod as kubectl delete does, or with force as
	// kubectl delete --force --grace-period=0 does.
	delete(ctx context.Context, name string, force bool) error
	// pod returns the pod as the API server has it; a pod that is gone is
	// an error matching resize.ErrPodNotFound.
	pod(ctx context.Context, name string) (*v1.Pod, error)
	// events returns the events about the pod since the last step, each
	// occurrence once, in the order the kubelet emitted them.
	events(ctx context.Context, name string) ([]string, error)
	// restart restarts the kubelet.
	restart(ctx context.Context) error
	// node is the side's node, and namespace the test's namespace.
	node() *resize.Node
	namespace() string
}

// simSide is a resize.Node on the in-memory Cluster, on its default
// FakeClock: each call returns when the node is quiet.
type simSide struct {
	ns      string
	cluster *resize.Cluster
	backend *resize.Backend
	deps    resize.Deps
	n       *resize.Node
	// seen is how many of the cluster's events were there at the end of
	// the last step.
	seen uint64
}

func (s *simSide) create(ctx context.Context, pod *v1.Pod) error {
	pod.Namespace = s.ns
	_, err := s.n.AddPod(ctx, pod)
	return err
}

func (s *simSide) resize(ctx context.Context, name string, pt types.PatchType, patch string) error {
	_, err := s.n.Resize(ctx, resize.ResizeOp{Namespace: s.ns, Name: name, PatchType: pt, Patch: []byte(patch)})
	return err
}

// delete deletes the pod through the node, which tears it down and then
// deletes it from the cluster. The in-memory cluster has no forced
// deletion: the node deletes the pod as it deletes it at the end of a
// graceful one, and what the API server shows afterwards is the same.
func (s *simSide) delete(ctx context.Context, name string, _ bool) error {
	return s.n.DeletePod(ctx, s.ns, name)
}

func (s *simSide) node() *resize.Node { return s.n }
func (s *simSide) namespace() string  { return s.ns }

func (s *simSide) pod(ctx context.Context, name string) (*v1.Pod, error) {
	return s.cluster.GetPod(ctx, s.ns, name)
}

func (s *simSide) events(_ context.Context, name string) ([]string, error) {
	var out []string
	events, _ := s.cluster.EventsSince(s.seen)
	for _, e := range events {
		if e.Namespace == s.ns && e.Pod == name {
			out = append(out, eventLine(e.Source, e.Type, e.Reason, e.Message))
		}
	}
	return out, nil
}

// newSimSide starts a node on a new in-memory Cluster, with checkpoints
// that outlive it (restart). It is closed when the test ends.
func newSimSide(t *testing.T, ns, nodeName string) *simSide {
	t.Helper()
	backend, err := resize.Simulated(compareNodeConfig(nodeName))
	if err != nil {
		t.Fatal(err)
	}
	cluster := resize.NewCluster(resize.ClusterOptions{})
	s := &simSide{ns: ns, cluster: cluster, backend: backend,
		deps: resize.Deps{Cluster: cluster, Allocated: checkpoint.NewMemory(), Actuated: checkpoint.NewMemory()}}
	if s.n, err = resize.NewNode(t.Context(), backend.Config(), backend.Deps(s.deps)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.n.Close() })
	return s
}

// restart restarts the kubelet: the node is closed and a new one started
// on the same cluster, runtime, cgroups and checkpoints.
func (s *simSide) restart(ctx context.Context) error {
	if err := s.n.Close(); err != nil {
		return err
	}
	n, err := resize.NewNode(ctx, s.backend.Config(), s.backend.Deps(s.deps))
	if err != nil {
		return err
	}
	s.n = n
	return nil
}

// realSide is a resize.Node on the real API server (package kubeapi),
// driven by API.Run as resizesim agent drives it: the test talks to the
// API server with its own client, as kubectl would, and the node learns
// of it through its informer.
type realSide struct {
	ns, nodeName        string
	client              kubernetes.Interface
	backend             *resize.Backend
	allocated, actuated checkpoint.State
	log                 *slog.Logger
	logMu               sync.Mutex // the log's writes come from the node's goroutines
	logs                strings.Builder

	// The running kubelet, and how to stop it.
	n    *resize.Node
	stop func() error

	// seen is, for each pod, the counts of its Event objects (by name)
	// as of the last step; listed is the counts events saw last.
	seen, listed map[string]map[string]int32
}

// newRealSide starts a node on the real API server as resizesim agent
// does, with checkpoints that outlive it (restart). It is stopped when
// the test ends, and a failed test gets its log.
func newRealSide(t *testing.T, client kubernetes.Interface, ns, nodeName string) *realSide {
	t.Helper()
	// The simulated runtime stamps containers with the wall clock, as
	// the node's own clock is (as in resizesim agent).
	backend, err := resize.Simulated(compareNodeConfig(nodeName), resize.WithSimContainerd(cri.WithClock(time.Now)))
	if err != nil {
		t.Fatal(err)
	}
	r := &realSide{
		ns: ns, client: client, nodeName: nodeName, backend: backend,
		allocated: checkpoint.NewMemory(), actuated: checkpoint.NewMemory(),
		seen: map[string]map[string]int32{}, listed: map[string]map[string]int32{},
	}
	r.log = slog.New(slog.NewTextHandler(writerFunc(func(b []byte) (int, error) {
		r.logMu.Lock()
		defer r.logMu.Unlock()
		return r.logs.Write(b)
	}), nil))
	if err := r.start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.stop(); err != nil {
			t.Errorf("stopping the node on the real API server: %v", err)
		}
		if t.Failed() {
			r.logMu.Lock()
			defer r.logMu.Unlock()
			t.Logf("the log of the node on the real API server:\n%s", r.logs.String())
		}
	})
	return r
}

// start starts the kubelet: a new API (its informer lists the node's
// pods), a node on it, and API.Run in the background.
func (r *realSide) start(ctx context.Context) error {
	api, err := kubeapi.New(ctx, r.client, r.nodeName, kubeapi.Options{Logger: r.log})
	if err != nil {
		return err
	}
	n, err := resize.NewNode(ctx, r.backend.Config(), r.backend.Deps(resize.Deps{
		Cluster: api, Clock: resize.WallClock{}, BoundPodsOnly: true,
		Allocated: r.allocated, Actuated: r.actuated, Logger: r.log,
	}))
	if err != nil {
		api.Close()
		return err
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	ran := make(chan error, 1)
	go func() { ran <- api.Run(runCtx, n, kubeapi.RunOptions{}) }()
	r.n = n
	r.stop = func() error {
		cancel()
		err := errors.Join(<-ran, n.Close())
		api.Close()
		return err
	}
	return nil
}

// restart restarts the kubelet: Run stops, the node and its API are
// closed, leaving the Node object and the pods as a stopped kubelet
// leaves them, and a new API and node start on the same runtime, cgroups
// and checkpoints.
func (r *realSide) restart(ctx context.Context) error {
	if err := r.stop(); err != nil {
		return err
	}
	return r.start(ctx)
}

func (r *realSide) create(ctx context.Context, pod *v1.Pod) error {
	_, err := r.client.CoreV1().Pods(r.ns).Create(ctx, pod, metav1.CreateOptions{})
	return err
}

func (r *realSide) resize(ctx context.Context, name string, pt types.PatchType, patch string) error {
	_, err := r.client.CoreV1().Pods(r.ns).Patch(ctx, name, pt, []byte(patch), metav1.PatchOptions{}, "resize")
	return err
}

// delete deletes the pod as kubectl delete does: gracefully, so that the
// API server marks the pod and the node tears it down and deletes it; or
// with force, so that the API server removes it at once and the node
// tears down a pod that is gone.
func (r *realSide) delete(ctx context.Context, name string, force bool) error {
	var opts metav1.DeleteOptions
	if force {
		opts.GracePeriodSeconds = new(int64(0))
	}
	return r.client.CoreV1().Pods(r.ns).Delete(ctx, name, opts)
}

func (r *realSide) node() *resize.Node { return r.n }
func (r *realSide) namespace() string  { return r.ns }

func (r *realSide) pod(ctx context.Context, name string) (*v1.Pod, error) {
	p, err := r.client.CoreV1().Pods(r.ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("%w: %w", resize.ErrPodNotFound, err)
	}
	return p, err
}

// events lists the pod's Event objects and returns the occurrences since
// the last settled. client-go's recorder, as the kubelet's, sends an event
// identical to one it sent before (the same source, object, reason and
// message: a container started again) as a new count of the old Event
// object. (resizelet's events name no container, where the kubelet's
// carry the container's fieldPath in their object reference, so that the
// second container's "Container created" of a pod is such a repeat too.)
// A list shows how many times each was emitted, and the last
// write of each (its resourceVersion, etcd's revision, which orders the
// writes of one API server; the recorder writes one event at a time, in
// the order they were emitted), but not where its earlier occurrences
// were. The occurrences a step added are each object's new counts, in the
// order of the objects' last writes; folded (foldEvents), they are
// exactly what the in-memory cluster's events of the step fold to.
func (r *realSide) events(ctx context.Context, name string) ([]string, error) {
	list, err := r.client.CoreV1().Events(r.ns).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("involvedObject.name", name).String(),
	})
	if err != nil {
		return nil, err
	}
	type object struct {
		rv    uint64
		line  string
		count int32
	}
	seen := r.seen[name]
	counts := map[string]int32{}
	var added []object
	for _, e := range list.Items {
		if e.InvolvedObject.Kind != "Pod" {
			continue
		}
		rv, err := strconv.ParseUint(e.ResourceVersion, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("event %s: resourceVersion %q: %w", e.Name, e.ResourceVersion, err)
		}
		// An event without a count happened once.
		counts[e.Name] = max(e.Count, 1)
		if n := counts[e.Name] - seen[e.Name]; n > 0 {
			added = append(added, object{rv: rv, line: eventLine(e.Source.Component, e.Type, e.Reason, e.Message), count: n})
		}
	}
	r.listed[name] = counts
	slices.SortFunc(added, func(a, b object) int { return cmp.Compare(a.rv, b.rv) })
	var out []string
	for _, o := range added {
		for range o.count {
			out = append(out, o.line)
		}
	}
	return out, nil
}

// settled makes the events the last call of events returned for the pod
// the past: the next step's are those added after them.
func (r *realSide) settled(name string) {
	r.seen[name] = r.listed[name]
}

// foldEvents is a step's events as the recorder stores them: each line
// once, with how many times it occurred, at its last occurrence.
func foldEvents(lines []string) []string {
	last := map[string]int{}
	count := map[string]int{}
	for i, l := range lines {
		last[l], count[l] = i, count[l]+1
	}
	var out []string
	for i, l := range lines {
		if last[l] != i {
			continue
		}
		if count[l] > 1 {
			l = fmt.Sprintf("%s (x%d)", l, count[l])
		}
		out = append(out, l)
	}
	return out
}

// eventLine is an event as the comparison sees it.
func eventLine(source, typ, reason, message string) string {
	return fmt.Sprintf("%s %s %s: %s", source, typ, reason, message)
}

// podView is what the comparison looks at in a pod: its generation, the
// resources of its spec, its status, what the node records of it, and the
// events of the step, folded as the recorder folds them. What differs
// between two API servers and two clocks whatever the node does is left
// out (normalizedStatus).
type podView struct {
	Gone       bool
	Generation int64
	Spec       map[string]string // container name: requests and limits
	Status     string            // normalizedStatus, as YAML
	Node       string            // the node's allocation and actuation
	Events     []string

	pod *v1.Pod // for the steps' checks
}

// resourcesString is requests and limits in a fixed order, each quantity
// in its canonical form.
func resourcesString(r v1.ResourceRequirements) string {
	list := func(l v1.ResourceList) string {
		var parts []string
		for _, name := range slices.Sorted(maps.Keys(l)) {
			q := l[name]
			parts = append(parts, fmt.Sprintf("%s=%s", name, q.String()))
		}
		return strings.Join(parts, ",")
	}
	return fmt.Sprintf("requests{%s} limits{%s}", list(r.Requests), list(r.Limits))
}

// normalizedStatus is the pod's status without what each side stamps with
// its own clock (the times of the pod's start, its conditions and its
// containers' states: the wall clock on the real side, a FakeClock that
// starts again at resize.DefaultStart with every kubelet restart on the
// other) and the container IDs, which each side's runtime numbers in the
// order it created containers, and the two runs create them in different
// orders (the real side's workers take pods at once). The one timer a
// step leaves running, the retry of a pending resize, fires only on the
// wall clock (30s after it was deferred); a retry that changes nothing
// emits no event, and what it may touch is a condition's times.
func normalizedStatus(s v1.PodStatus) v1.PodStatus {
	s = *s.DeepCopy()
	s.StartTime = nil
	for i := range s.Conditions {
		s.Conditions[i].LastProbeTime = metav1.Time{}
		s.Conditions[i].LastTransitionTime = metav1.Time{}
	}
	state := func(st *v1.ContainerState) {
		if st.Running != nil {
			st.Running.StartedAt = metav1.Time{}
		}
		if st.Terminated != nil {
			st.Terminated.StartedAt, st.Terminated.FinishedAt = metav1.Time{}, metav1.Time{}
			st.Terminated.ContainerID = ""
		}
	}
	for _, list := range [][]v1.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses, s.EphemeralContainerStatuses} {
		for i := range list {
			list[i].ContainerID = ""
			state(&list[i].State)
			state(&list[i].LastTerminationState)
		}
	}
	return s
}

// viewOf is the pod's view, with the events since the last step.
func viewOf(ctx context.Context, s compareSide, name string) (podView, error) {
	lines, err := s.events(ctx, name)
	if err != nil {
		return podView{}, err
	}
	v := podView{Events: foldEvents(lines), Node: "unknown to the node"}
	if info, err := s.node().Pod(s.namespace(), name); err == nil {
		v.Node = fmt.Sprintf("admitted %v\nallocated %v\nactuated %v", info.Admitted, requirementsString(info.Allocated), requirementsString(info.Actuated))
	}
	p, err := s.pod(ctx, name)
	if errors.Is(err, resize.ErrPodNotFound) {
		v.Gone = true
		return v, nil
	}
	if err != nil {
		return podView{}, err
	}
	v.pod, v.Generation, v.Spec = p, p.Generation, map[string]string{}
	for _, c := range p.Spec.InitContainers {
		v.Spec["init "+c.Name] = resourcesString(c.Resources)
	}
	for _, c := range p.Spec.Containers {
		v.Spec[c.Name] = resourcesString(c.Resources)
	}
	status, err := yaml.Marshal(normalizedStatus(p.Status))
	if err != nil {
		return podView{}, err
	}
	v.Status = string(status)
	return v, nil
}

// requirementsString is a PodInfo's per-container resources, by name.
func requirementsString(m map[string]v1.ResourceRequirements) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, name+": "+resourcesString(m[name]))
	}
	return "[" + strings.Join(parts, "; ") + "]"
}

// compareStep is one step of the comparison: what it does to each side.
type compareStep struct {
	name string
	do   func(ctx context.Context, s compareSide) error
	// refused is set for a step the API server refuses: each side's
	// error must contain it.
	refused string
	// check checks the in-memory side's views after the step, so that
	// the step is known to do what it says (the comparison alone would
	// pass on two nodes that do nothing).
	check func(views map[string]podView) error
}

// TestNodeOnRealAPIServerMatchesCluster runs the same pods and resizes
// through a resize.Node on the in-memory Cluster and through one on the
// real API server (package resize/kubeapi, driven by API.Run on the wall
// clock, with the test's client in the role of kubectl), and after each
// step compares what each API server shows of every pod (its generation,
// the spec's resources, the whole status but for times and container IDs,
// and the step's events from the kubelet), what each node records of it
// (allocated and actuated resources) and the node's allocated total. The
// real side is polled until it shows what the in-memory side shows, or
// the deadline passes. The steps: a Guaranteed, a Burstable, a sidecar
// and a filler pod are created; an in-place CPU resize (strategic merge
// patch); a memory resize under RestartContainer (JSON patch); an
// Infeasible resize (JSON merge patch); a sidecar's resize; an init
// container's resize, which both API servers refuse; a pod the node
// rejects (OutOfcpu); a Deferred resize; a kubelet restart with it
// pending; the filler's graceful deletion, which the node tears down and
// then deletes, and which admits the deferred resize; the rejected pod's
// deletion; and a forced deletion, where the node tears down a pod the API
// server no longer has.
func TestNodeOnRealAPIServerMatchesCluster(t *testing.T) {
	// No kubectl: the test's client plays its part.
	client := kubeClient(t, env(t, "RESIZELET_KUBECONFIG", apiserverHow))
	ctx := t.Context()

	nodeName := uniqueName("kubeapi")
	ns := uniqueName("kubeapi")
	newNamespace(t, client, ns)

	sim := newSimSide(t, ns, nodeName)
	t.Cleanup(func() { deleteNodes(t, client, nodeName) })
	real := newRealSide(t, client, ns, nodeName)

	pods, toobig := comparePods(nodeName)
	burstable := pods[1]
	names := []string{"toobig"} // created later
	for _, p := range pods {
		names = append(names, p.Name)
	}
	cpuPatch := func(container, req, lim string) string {
		return fmt.Sprintf(`{"spec":{"containers":[{"name":%q,"resources":{"requests":{"cpu":%q},"limits":{"cpu":%q}}}]}}`, container, req, lim)
	}
	steps := []compareStep{
		{
			name: "create the pods",
			do: func(ctx context.Context, s compareSide) error {
				for _, p := range pods {
					if err := s.create(ctx, p.DeepCopy()); err != nil {
						return err
					}
				}
				return nil
			},
			check: func(v map[string]podView) error {
				var errs []error
				for name, qos := range map[string]v1.PodQOSClass{"guaranteed": v1.PodQOSGuaranteed, "burstable": v1.PodQOSBurstable, "sidecar": v1.PodQOSBurstable, "filler": v1.PodQOSGuaranteed} {
					p := v[name].pod
					errs = append(errs, expect(p.Status.QOSClass == qos && p.Status.Phase == v1.PodRunning, "%s: %s %s", name, p.Status.QOSClass, p.Status.Phase))
				}
				return errors.Join(errs...)
			},
		},
		{
			name: "guaranteed: cpu 1 -> 1500m in place (strategic merge patch)",
			do: func(ctx context.Context, s compareSide) error {
				return s.resize(ctx, "guaranteed", types.StrategicMergePatchType, cpuPatch("app", "1500m", "1500m"))
			},
			check: func(v map[string]podView) error {
				return containerIs(v["guaranteed"], "app", "cpu=1500m", 0, "")
			},
		},
		{
			name: "guaranteed: memory 256Mi -> 384Mi with a restart (JSON patch)",
			do: func(ctx context.Context, s compareSide) error {
				return s.resize(ctx, "guaranteed", types.JSONPatchType,
					`[{"op":"replace","path":"/spec/containers/0/resources/requests/memory","value":"384Mi"},`+
						`{"op":"replace","path":"/spec/containers/0/resources/limits/memory","value":"384Mi"}]`)
			},
			check: func(v map[string]podView) error {
				return containerIs(v["guaranteed"], "app", "memory=384Mi", 1, "")
			},
		},
		{
			name: "burstable: cpu 100 Infeasible (JSON merge patch)",
			do: func(ctx context.Context, s compareSide) error {
				// A merge patch replaces the whole list: it names the
				// container as it was created, with the new cpu, and
				// the API server defaults it again.
				c := burstable.Spec.Containers[0].DeepCopy()
				c.Resources.Requests[v1.ResourceCPU] = resource.MustParse("100")
				c.Resources.Limits[v1.ResourceCPU] = resource.MustParse("100")
				patch, err := json.Marshal(map[string]any{"spec": map[string]any{"containers": []*v1.Container{c}}})
				if err != nil {
					return err
				}
				return s.resize(ctx, "burstable", types.MergePatchType, string(patch))
			},
			check: func(v map[string]podView) error {
				return containerIs(v["burstable"], "app", "cpu=500m", 0, v1.PodReasonInfeasible)
			},
		},
		{
			name: "sidecar: the sidecar's cpu 100m -> 150m in place",
			do: func(ctx context.Context, s compareSide) error {
				return s.resize(ctx, "sidecar", types.StrategicMergePatchType,
					`{"spec":{"initContainers":[{"name":"proxy","resources":{"requests":{"cpu":"150m"},"limits":{"cpu":"300m"}}}]}}`)
			},
			check: func(v map[string]podView) error {
				return containerIs(v["sidecar"], "proxy", "cpu=150m", 0, "")
			},
		},
		{
			name:    "sidecar: the init container's resize is refused",
			refused: "resources for non-sidecar init containers are immutable",
			do: func(ctx context.Context, s compareSide) error {
				return s.resize(ctx, "sidecar", types.StrategicMergePatchType,
					`{"spec":{"initContainers":[{"name":"setup","resources":{"requests":{"cpu":"200m"}}}]}}`)
			},
		},
		{
			// 3350m of 4000m are allocated.
			name: "toobig: 1 CPU more than is free, rejected",
			do: func(ctx context.Context, s compareSide) error {
				return s.create(ctx, toobig.DeepCopy())
			},
			check: func(v map[string]podView) error {
				p := v["toobig"].pod
				return expect(p.Status.Phase == v1.PodFailed && p.Status.Reason == "OutOfcpu", "toobig: %s %s %s", p.Status.Phase, p.Status.Reason, p.Status.Message)
			},
		},
		{
			name: "burstable: cpu 1500m Deferred beside the filler",
			do: func(ctx context.Context, s compareSide) error {
				return s.resize(ctx, "burstable", types.StrategicMergePatchType, cpuPatch("app", "1500m", "2"))
			},
			check: func(v map[string]podView) error {
				return containerIs(v["burstable"], "app", "cpu=500m", 0, v1.PodReasonDeferred)
			},
		},
		{
			name: "restart the kubelet with the resize deferred",
			do: func(ctx context.Context, s compareSide) error {
				return s.restart(ctx)
			},
			check: func(v map[string]podView) error {
				return containerIs(v["burstable"], "app", "cpu=500m", 0, v1.PodReasonDeferred)
			},
		},
		{
			name: "delete the filler: the deferred resize is admitted",
			do: func(ctx context.Context, s compareSide) error {
				return s.delete(ctx, "filler", false)
			},
			check: func(v map[string]podView) error {
				return errors.Join(expect(v["filler"].Gone, "filler is still there"),
					containerIs(v["burstable"], "app", "cpu=1500m", 0, ""))
			},
		},
		{
			name: "delete the rejected pod",
			do: func(ctx context.Context, s compareSide) error {
				return s.delete(ctx, "toobig", false)
			},
			check: func(v map[string]podView) error {
				return expect(v["toobig"].Gone, "toobig is still there")
			},
		},
		{
			name: "delete guaranteed with force: the node tears down a pod that is gone",
			do: func(ctx context.Context, s compareSide) error {
				return s.delete(ctx, "guaranteed", true)
			},
			check: func(v map[string]podView) error {
				return expect(v["guaranteed"].Gone && v["guaranteed"].Node == "unknown to the node", "guaranteed: %+v", v["guaranteed"])
			},
		},
	}

	for _, step := range steps {
		simErr := step.do(ctx, sim)
		realErr := step.do(ctx, real)
		if step.refused != "" {
			for side, err := range map[string]error{"in-memory": simErr, "real": realErr} {
				if err == nil || !strings.Contains(err.Error(), step.refused) {
					t.Errorf("%s: the %s API server's answer is %v, want a refusal with %q", step.name, side, err, step.refused)
				}
			}
		} else if err := errors.Join(simErr, realErr); err != nil {
			t.Fatalf("%s: in-memory: %v; real: %v", step.name, simErr, realErr)
		}
		want := map[string]podView{}
		for _, name := range names {
			v, err := viewOf(ctx, sim, name)
			if err != nil {
				t.Fatalf("%s: in-memory pod %s: %v", step.name, name, err)
			}
			want[name] = v
		}
		if step.check != nil {
			if err := step.check(want); err != nil {
				t.Fatalf("%s: the in-memory node did not do what the step is for: %v", step.name, err)
			}
		}
		for _, name := range names {
			poll(t, fmt.Sprintf("%s: pod %s as on the in-memory cluster", step.name, name), func() error {
				got, err := viewOf(ctx, real, name)
				if err != nil {
					return err
				}
				if d := gocmp.Diff(want[name], got, cmpopts.IgnoreUnexported(podView{})); d != "" {
					return fmt.Errorf("(-in-memory +real):\n%s", d)
				}
				return nil
			})
			real.settled(name)
		}
		sim.seen = sim.cluster.EventCount()
		// The node's own sum of what it allocated, which the next
		// admission counts against.
		total := resourcesString(v1.ResourceRequirements{Requests: sim.n.AllocatedTotal()})
		poll(t, step.name+": the node's allocated total as on the in-memory cluster", func() error {
			if got := resourcesString(v1.ResourceRequirements{Requests: real.n.AllocatedTotal()}); got != total {
				return fmt.Errorf("in-memory %s, real %s", total, got)
			}
			return nil
		})
		t.Logf("%s: the same on both", step.name)
	}
}

// comparePods are the pods of the comparison, bound to node: a Guaranteed
// pod whose memory resize restarts its container (the article's policy),
// a Burstable one, one with an init container and a sidecar, and a
// filler that takes the room a later resize needs. toobig is one more
// CPU, for later.
func comparePods(node string) (pods []*v1.Pod, toobig *v1.Pod) {
	res := func(reqCPU, reqMem, limCPU, limMem string) v1.ResourceRequirements {
		r := v1.ResourceRequirements{Requests: v1.ResourceList{}, Limits: v1.ResourceList{}}
		for name, s := range map[v1.ResourceName][2]string{v1.ResourceCPU: {reqCPU, limCPU}, v1.ResourceMemory: {reqMem, limMem}} {
			if s[0] != "" {
				r.Requests[name] = resource.MustParse(s[0])
			}
			if s[1] != "" {
				r.Limits[name] = resource.MustParse(s[1])
			}
		}
		return r
	}
	pod := func(name string, containers ...v1.Container) *v1.Pod {
		return &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			// Without the service account token, which the real API
			// server's admission mounts in every container and the
			// in-memory one does not, the containers are the same on
			// both, and a merge patch can name them whole.
			Spec: v1.PodSpec{NodeName: node, Containers: containers, AutomountServiceAccountToken: new(false)},
		}
	}
	container := func(name string, r v1.ResourceRequirements) v1.Container {
		return v1.Container{Name: name, Image: "registry.k8s.io/pause:3.10", Resources: r}
	}
	guaranteed := container("app", res("1", "256Mi", "1", "256Mi"))
	guaranteed.ResizePolicy = []v1.ContainerResizePolicy{
		{ResourceName: v1.ResourceCPU, RestartPolicy: v1.NotRequired},
		{ResourceName: v1.ResourceMemory, RestartPolicy: v1.RestartContainer},
	}
	always := v1.ContainerRestartPolicyAlways
	proxy := container("proxy", res("100m", "64Mi", "200m", "64Mi"))
	proxy.RestartPolicy = &always
	sidecar := pod("sidecar", container("app", res("200m", "64Mi", "", "")))
	sidecar.Spec.InitContainers = []v1.Container{container("setup", res("100m", "32Mi", "", "")), proxy}
	return []*v1.Pod{
		pod("guaranteed", guaranteed),
		pod("burstable", container("app", res("500m", "128Mi", "1", "512Mi"))),
		sidecar,
		pod("filler", container("app", res("1", "128Mi", "1", "128Mi"))),
	}, pod("toobig", container("app", res("1", "64Mi", "", "")))
}

// expect is nil when ok, and otherwise the complaint.
func expect(ok bool, format string, args ...any) error {
	if ok {
		return nil
	}
	return fmt.Errorf(format, args...)
}

// containerIs checks a container's status in the view: its resources
// include amount, it restarted restarts times, and the pod's resize is
// pending for that reason ("": none pending or in progress).
func containerIs(v podView, name, amount string, restarts int32, pending string) error {
	if v.pod == nil {
		return fmt.Errorf("the pod is gone")
	}
	var cs *v1.ContainerStatus
	for _, list := range [][]v1.ContainerStatus{v.pod.Status.InitContainerStatuses, v.pod.Status.ContainerStatuses} {
		for i := range list {
			if list[i].Name == name {
				cs = &list[i]
			}
		}
	}
	if cs == nil || cs.Resources == nil {
		return fmt.Errorf("container %s: no status with resources:\n%s", name, v.Status)
	}
	var errs []error
	if r := resourcesString(*cs.Resources); !strings.Contains(r, amount) {
		errs = append(errs, fmt.Errorf("container %s: resources %s, want %s", name, r, amount))
	}
	if cs.RestartCount != restarts {
		errs = append(errs, fmt.Errorf("container %s: restartCount %d, want %d", name, cs.RestartCount, restarts))
	}
	c := condition(v.pod, v1.PodResizePending)
	switch {
	case pending == "" && (c != nil || condition(v.pod, v1.PodResizeInProgress) != nil):
		errs = append(errs, fmt.Errorf("a resize is pending or in progress:\n%s", v.Status))
	case pending != "" && (c == nil || c.Reason != pending):
		errs = append(errs, fmt.Errorf("want the resize pending, %s:\n%s", pending, v.Status))
	}
	return errors.Join(errs...)
}

package realhost_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/resizelet/resizelet/resize/apiserver"
)

// kubeconfigEnv names the kubeconfig of a real kube-apiserver v1.35.4
// (apiserver.sh start prints it as KUBECONFIG) for
// TestResizeMatchesRealAPIServer; diffSeedEnv, when set, replaces the
// test's seed, to explore other draws.
const (
	kubeconfigEnv = "RESIZELET_KUBECONFIG"
	diffSeedEnv   = "RESIZELET_DIFF_SEED"
)

// TestResizeMatchesRealAPIServer sends the same pods and the same resizes
// (strategic merge, JSON merge and JSON patches through the resize
// subresource, and typed ResizeRequests through their patch) to a real
// kube-apiserver and to an apiserver.Cluster of the default profile (1.35)
// and requires the same outcome: accepted by both with the same stored
// spec, generation and resourceVersion behaviour (changed or not), or
// refused by both with the same status (code, reason, message, details).
func TestResizeMatchesRealAPIServer(t *testing.T) {
	path := env(t, kubeconfigEnv, "examples/realhost/apiserver.sh start DIR prints KUBECONFIG=...; set "+kubeconfigEnv+" to it")
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	// The real server's warnings (an unknown field under Warn) are not
	// outcomes: every request asks for Strict field validation instead.
	cfg.WarningHandler = rest.NoWarnings{}
	cfg.QPS, cfg.Burst = 500, 500
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	seed := int64(20260512)
	if s := os.Getenv(diffSeedEnv); s != "" {
		if seed, err = strconv.ParseInt(s, 10, 64); err != nil {
			t.Fatalf("%s: %v", diffSeedEnv, err)
		}
	}
	t.Logf("seed %d (%s=N draws another)", seed, diffSeedEnv)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := ownNamespace(ctx, t, client)

	d := &differ{t: t, ctx: ctx, real: client.CoreV1().Pods(ns), cluster: apiserver.NewCluster(apiserver.ClusterOptions{}),
		gen: gen{rand.New(rand.NewSource(seed))}, ns: ns, stats: map[string]int{}}
	start := time.Now()
	for i := 0; d.cases < 320 && d.differences < 20; i++ {
		d.pod(fmt.Sprintf("p%03d", i))
	}
	t.Logf("%d resize cases on %d pods in %v: %v", d.cases, d.pods, time.Since(start).Round(time.Millisecond), d.stats)
	// The draw must reach both outcomes of every kind of resize and of
	// every QoS class, or the agreement would prove little.
	for _, k := range []string{"strategic", "merge", "json", "request", "Guaranteed", "Burstable", "BestEffort", "bound", "unbound", "running"} {
		if d.stats[k+" accepted"] == 0 || d.stats[k+" refused"] == 0 {
			t.Errorf("no %s resize both accepted and refused: %v", k, d.stats)
		}
	}
}

// ownNamespace creates a namespace of the test's own with its "default"
// ServiceAccount (no controller manager makes it, and the ServiceAccount
// admission plugin refuses pods without one), and removes it at the end:
// its pods at once, then the namespace, finalized by hand as no namespace
// controller runs.
func ownNamespace(ctx context.Context, t *testing.T, client kubernetes.Interface) string {
	t.Helper()
	nsObj, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "resizelet-diff-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns := nsObj.Name
	t.Cleanup(func() {
		ctx := context.Background()
		zero := int64(0)
		if err := client.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{}); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		if err := client.CoreV1().ServiceAccounts(ns).Delete(ctx, "default", metav1.DeleteOptions{}); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		if err := client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		gone, err := client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err == nil {
			gone.Spec.Finalizers = nil
			_, err = client.CoreV1().Namespaces().Finalize(ctx, gone, metav1.UpdateOptions{})
		}
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("cleanup: %v", err)
		}
	})
	sa := &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if _, err := client.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ns
}

// differ runs the cases on both servers and compares their outcomes.
type differ struct {
	t           *testing.T
	ctx         context.Context
	real        podClient
	cluster     *apiserver.Cluster
	gen         gen
	ns          string
	cases, pods int
	stats       map[string]int
	realQoS     v1.PodQOSClass // the class of the pod being resized
	differences int
}

// podClient is the part of client-go's pod client the test uses.
type podClient interface {
	Create(context.Context, *v1.Pod, metav1.CreateOptions) (*v1.Pod, error)
	Get(context.Context, string, metav1.GetOptions) (*v1.Pod, error)
	UpdateStatus(context.Context, *v1.Pod, metav1.UpdateOptions) (*v1.Pod, error)
	Patch(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (*v1.Pod, error)
}

// strict is the field validation the Cluster does (ApplyResize): what
// kubectl sends; client-go's default would be the server's Warn.
const strict = "Strict"

// outcome is what a server did with a request: the status it refused it
// with, or the stored spec (normalised JSON), generation and whether the
// resourceVersion changed.
type outcome struct {
	refused    *metav1.Status
	spec       string
	generation int64
	rvChanged  bool
}

func (o outcome) String() string {
	if o.refused != nil {
		b, _ := json.Marshal(o.refused)
		return "refused: " + string(b)
	}
	return fmt.Sprintf("accepted: generation %d, resourceVersion changed %v, spec %s", o.generation, o.rvChanged, o.spec)
}

// pod creates one drawn pod in both servers, compares the creations, then
// runs a few resizes of it in turn, each compared, until one differs.
func (d *differ) pod(name string) {
	t := d.t
	p := d.gen.pod(d.ns, name)
	served, rerr := d.real.Create(d.ctx, p, metav1.CreateOptions{FieldValidation: strict})
	local, lerr := d.cluster.CreatePod(d.ctx, p)
	ro, lo := outcome{refused: realStatus(t, rerr)}, outcome{refused: clusterStatus(lerr)}
	if rerr == nil {
		ro = outcome{spec: normalisedSpec(t, served), generation: served.Generation}
	}
	if lerr == nil {
		lo = outcome{spec: specJSON(t, &local.Spec), generation: local.Generation}
	}
	if !d.same("create", p, "", nil, ro, lo) || rerr != nil {
		return
	}
	d.pods++
	d.realQoS = served.Status.QOSClass
	if p.Spec.NodeName != "" && d.gen.r.Intn(3) == 0 && !d.running(served) {
		return
	}
	for n := 2 + d.gen.r.Intn(3); n > 0; n-- {
		if !d.resize(name) {
			return
		}
	}
}

// running reports the pod's containers running in both servers, as a
// kubelet would, each with its resources in its status or (now and then,
// as an old kubelet) without: the resize validation reads them.
func (d *differ) running(served *v1.Pod) bool {
	t := d.t
	withResources := d.gen.r.Intn(4) > 0
	status := served.Status.DeepCopy()
	status.Phase = v1.PodRunning
	for _, c := range served.Spec.Containers {
		cs := v1.ContainerStatus{Name: c.Name, Image: c.Image, Ready: true, State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.Now()}}}
		if withResources {
			cs.Resources = c.Resources.DeepCopy()
		}
		status.ContainerStatuses = append(status.ContainerStatuses, cs)
	}
	served.Status = *status
	if _, err := d.real.UpdateStatus(d.ctx, served, metav1.UpdateOptions{}); err != nil {
		t.Errorf("status of %s on the real API server: %v", served.Name, err)
		return false
	}
	local, err := d.cluster.GetPod(d.ctx, d.ns, served.Name)
	if err == nil {
		err = d.cluster.UpdatePodStatus(d.ctx, d.ns, served.Name, local.UID, *status)
	}
	if err != nil {
		t.Errorf("status of %s on the Cluster: %v", served.Name, err)
		return false
	}
	return true
}

// resize draws one resize of the pod, sends it to both servers, and
// compares: first the pods before it, then the outcomes.
func (d *differ) resize(name string) bool {
	t := d.t
	before, err := d.real.Get(d.ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Errorf("get %s: %v", name, err)
		return false
	}
	localBefore, err := d.cluster.GetPodVersioned(d.ns, name)
	if err != nil {
		t.Errorf("get %s from the Cluster: %v", name, err)
		return false
	}
	ro := outcome{spec: normalisedSpec(t, before), generation: before.Generation}
	lo := outcome{spec: specJSON(t, &localBefore.Spec), generation: localBefore.Generation}
	if !d.same("the pod before a resize", localBefore, "", nil, ro, lo) {
		return false
	}
	kind, pt, patch, req := d.gen.resize(localBefore)
	served, rerr := d.real.Patch(d.ctx, name, pt, patch, metav1.PatchOptions{FieldValidation: strict}, "resize")
	var lerr error
	if req != nil {
		_, lerr = d.cluster.ResizePodRequest(d.ctx, d.ns, name, *req)
	} else {
		_, lerr = d.cluster.ResizePodPatch(d.ctx, d.ns, name, pt, patch)
	}
	ro, lo = outcome{refused: realStatus(t, rerr)}, outcome{refused: clusterStatus(lerr)}
	if rerr == nil {
		ro = outcome{spec: normalisedSpec(t, served), generation: served.Generation, rvChanged: served.ResourceVersion != before.ResourceVersion}
		if ro.rvChanged && onlyManagedFields(before, served) {
			// The real server's field manager records who set a field
			// even when the resize strategy drops the change (pod-level
			// resources while their resize is off): a write of
			// metadata.managedFields alone, which the Cluster does not
			// keep, so it has nothing to write.
			ro.rvChanged = false
			d.stats["managedFields-only write"]++
		}
	}
	if lerr == nil {
		after, err := d.cluster.GetPodVersioned(d.ns, name)
		if err != nil {
			t.Fatal(err)
		}
		lo = outcome{spec: specJSON(t, &after.Spec), generation: after.Generation, rvChanged: after.ResourceVersion != localBefore.ResourceVersion}
	}
	d.cases++
	verdict := " accepted"
	if rerr != nil {
		verdict = " refused"
	}
	d.stats[kind+verdict]++
	d.stats[string(d.realQoS)+verdict]++
	d.stats[map[bool]string{true: "bound", false: "unbound"}[before.Spec.NodeName != ""]+verdict]++
	if before.Status.Phase == v1.PodRunning {
		d.stats["running"+verdict]++
	}
	if rerr == nil && !ro.rvChanged {
		d.stats["no-op"]++
	}
	return d.same(kind, localBefore, pt, patch, ro, lo)
}

// same reports whether the outcomes agree, and prints the case and both
// outcomes when they do not.
func (d *differ) same(what string, pod *v1.Pod, pt types.PatchType, patch []byte, served, local outcome) bool {
	if served.String() == local.String() {
		return true
	}
	d.differences++
	d.t.Errorf("%s differs:\n pod:        %s\n patch (%s): %s\n API server: %v\n Cluster:    %v", what, podJSON(pod), pt, patch, served, local)
	return false
}

// onlyManagedFields reports whether two versions of a pod differ in
// nothing but their resourceVersion and managedFields.
func onlyManagedFields(a, b *v1.Pod) bool {
	a, b = a.DeepCopy(), b.DeepCopy()
	for _, p := range []*v1.Pod{a, b} {
		p.ResourceVersion, p.ManagedFields = "", nil
	}
	return apiequality.Semantic.DeepEqual(a, b)
}

// podJSON is the pod's spec as JSON, for a report.
func podJSON(p *v1.Pod) string {
	b, _ := json.Marshal(p.Spec)
	return string(b)
}

// realStatus is the status the real API server refused with, or nil.
func realStatus(t *testing.T, err error) *metav1.Status {
	if err == nil {
		return nil
	}
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("the real API server answered %T %v, not a Status", err, err)
	}
	return bareStatus(se.ErrStatus)
}

// clusterStatus is the status the Cluster's error stands for, converted
// as package resize/kubeclient converts it (statusError): the
// *apierrors.StatusError it wraps, or a 500.
func clusterStatus(err error) *metav1.Status {
	if err == nil {
		return nil
	}
	var se *apierrors.StatusError
	if errors.As(err, &se) {
		return bareStatus(se.ErrStatus)
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return bareStatus(st.Status())
	}
	return bareStatus(apierrors.NewInternalError(err).ErrStatus)
}

// bareStatus is s without its type and list metadata, which the wire adds
// and a Go error lacks, its causes in order and the pods its messages
// embed normalised.
//
// The real server checks a resource list's entries in Go's map order,
// which changes from one request to the next (the Cluster checks them in
// name order): the causes are sorted, and a message that lists them
// ("[a, b]") lists them in that order.
//
// A patched pod that does not decode is refused with the pod, as JSON, in
// the message: its uid and resourceVersion are each server's own, and
// what neither models of the other is left out (embeddedPod).
func bareStatus(s metav1.Status) *metav1.Status {
	s.TypeMeta, s.ListMeta = metav1.TypeMeta{}, metav1.ListMeta{}
	s.Message = embeddedPods(s.Message)
	if s.Details == nil {
		return &s
	}
	details := *s.Details
	details.Causes = slices.Clone(details.Causes)
	for i := range details.Causes {
		details.Causes[i].Message = embeddedPods(details.Causes[i].Message)
	}
	// The message lists each cause once (an aggregate drops repeats).
	list := func() string {
		var items []string
		for _, c := range details.Causes {
			if item := c.Field + ": " + c.Message; !slices.Contains(items, item) {
				items = append(items, item)
			}
		}
		return "[" + strings.Join(items, ", ") + "]"
	}
	if prefix, ok := strings.CutSuffix(s.Message, list()); ok && len(details.Causes) > 1 {
		slices.SortStableFunc(details.Causes, func(a, b metav1.StatusCause) int {
			return strings.Compare(a.Field+": "+a.Message, b.Field+": "+b.Message)
		})
		s.Message = prefix + list()
	}
	s.Details = &details
	return &s
}

// embeddedPods rewrites each pod a message quotes as an invalid value
// (`Invalid value: "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",...}"`)
// with embeddedPod.
func embeddedPods(msg string) string {
	const marker = `Invalid value: "{\"apiVersion\":\"v1\",\"kind\":\"Pod\"`
	var out strings.Builder
	for {
		i := strings.Index(msg, marker)
		if i < 0 {
			return out.String() + msg
		}
		start := i + len("Invalid value: ")
		quoted, err := strconv.QuotedPrefix(msg[start:])
		if err != nil {
			return out.String() + msg
		}
		text, _ := strconv.Unquote(quoted)
		out.WriteString(msg[:start])
		out.WriteString(strconv.Quote(embeddedPod(text)))
		msg = msg[start+len(quoted):]
	}
}

// unmodelled are the members of a pod left out of an embedded pod, by
// path, with what replaces them ("" leaves them out): the uid and
// resourceVersion, which each server numbers its own way; the
// creationTimestamp and managedFields, which the Cluster does not keep;
// and what the admission plugins add (normalisedSpec).
var unmodelled = map[string]string{
	"metadata.uid": `"UID"`, "metadata.resourceVersion": `"RV"`,
	"metadata.creationTimestamp": "", "metadata.managedFields": "",
	"spec.serviceAccountName": "", "spec.serviceAccount": "", "spec.priority": "",
	"spec.preemptionPolicy": "", "spec.tolerations": "",
}

// embeddedPod re-encodes a pod's JSON in its own member order, with the
// unmodelled members replaced or left out; text that is not JSON stays.
func embeddedPod(text string) string {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var out strings.Builder
	if err := reencode(dec, "", &out); err != nil {
		return text
	}
	return out.String()
}

// reencode copies the next JSON value of dec, at path, to out.
func reencode(dec *json.Decoder, path string, out *strings.Builder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		b, err := json.Marshal(tok)
		out.Write(b)
		return err
	}
	out.WriteRune(rune(delim))
	for n := 0; dec.More(); n++ {
		inner := path + "[]"
		if delim == '{' {
			key, _ := dec.Token()
			inner = strings.TrimPrefix(path+"."+key.(string), ".")
			with, drop := unmodelled[inner]
			if drop {
				var skip json.RawMessage
				if err := dec.Decode(&skip); err != nil {
					return err
				}
				if with == "" {
					n--
					continue
				}
			}
			if n > 0 {
				out.WriteByte(',')
			}
			name, _ := json.Marshal(key)
			out.Write(append(name, ':'))
			if drop {
				out.WriteString(with)
				continue
			}
		} else if n > 0 {
			out.WriteByte(',')
		}
		if err := reencode(dec, inner, out); err != nil {
			return err
		}
	}
	end, err := dec.Token()
	out.WriteRune(rune(end.(json.Delim)))
	return err
}

// specJSON is the spec as JSON.
func specJSON(t *testing.T, spec *v1.PodSpec) string {
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// normalisedSpec is the real pod's spec as JSON without what the real API
// server's admission plugins add on create and the Cluster does not model.
// Everything else v1 defaulting would add, the drawn pods set themselves
// (gen.pod), so that the rest of the spec is compared whole.
func normalisedSpec(t *testing.T, p *v1.Pod) string {
	s := p.Spec.DeepCopy()
	// ServiceAccount: serviceAccountName "default", which v1 also writes
	// as the deprecated serviceAccount.
	s.ServiceAccountName, s.DeprecatedServiceAccount = "", ""
	// Priority: the default priority (0) and its preemption policy.
	s.Priority, s.PreemptionPolicy = nil, nil
	// DefaultTolerationSeconds: tolerations of 300 s for the not-ready and
	// unreachable taints (the drawn pods have no tolerations of their own).
	s.Tolerations = slices.DeleteFunc(s.Tolerations, func(tol v1.Toleration) bool {
		return (tol.Key == v1.TaintNodeNotReady || tol.Key == v1.TaintNodeUnreachable) && tol.TolerationSeconds != nil && *tol.TolerationSeconds == 300
	})
	if len(s.Tolerations) == 0 {
		s.Tolerations = nil
	}
	return specJSON(t, s)
}

// gen draws the pods and the resizes.
type gen struct{ r *rand.Rand }

func (g gen) pick(options ...string) string { return options[g.r.Intn(len(options))] }

func (g gen) odds(n int) bool { return g.r.Intn(n) == 0 }

var (
	cpus     = []string{"100m", "250m", "0.5", "1", "1500m", "2"}
	memories = []string{"64Mi", "128Mi", "200M", "256Mi", "1Gi"}
)

// amounts draws a resource list of cpu and memory (each now and then
// left out), as of index at least floor in cpus and memories.
func (g gen) amounts(cpu, memory bool, floor int) v1.ResourceList {
	l := v1.ResourceList{}
	if cpu {
		l[v1.ResourceCPU] = resource.MustParse(cpus[floor+g.r.Intn(len(cpus)-floor)])
	}
	if memory {
		l[v1.ResourceMemory] = resource.MustParse(memories[floor+g.r.Intn(len(memories)-floor)])
	}
	return l
}

// resources draws a container's resources for the pod's QoS class.
func (g gen) resources(qos v1.PodQOSClass) v1.ResourceRequirements {
	var rr v1.ResourceRequirements
	switch qos {
	case v1.PodQOSGuaranteed:
		rr.Limits = g.amounts(true, true, 0)
		if g.odds(2) {
			rr.Requests = rr.Limits.DeepCopy()
		}
	case v1.PodQOSBurstable:
		rr.Requests = g.amounts(g.r.Intn(3) > 0, g.r.Intn(3) > 0, 0)
		if g.odds(2) {
			rr.Limits = g.amounts(g.odds(2), g.odds(2), 3)
		}
	}
	if g.odds(8) {
		if rr.Requests == nil {
			rr.Requests = v1.ResourceList{}
		}
		rr.Requests[v1.ResourceEphemeralStorage] = resource.MustParse("1Gi")
	}
	return rr
}

// container draws a container with every field v1 defaulting would set
// already set, and now and then a resizePolicy.
func (g gen) container(name string, qos v1.PodQOSClass) v1.Container {
	c := v1.Container{Name: name, Image: "registry.k8s.io/pause:3.10", ImagePullPolicy: v1.PullIfNotPresent,
		TerminationMessagePath: v1.TerminationMessagePathDefault, TerminationMessagePolicy: v1.TerminationMessageReadFile,
		Resources: g.resources(qos)}
	for _, r := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
		if g.odds(4) {
			c.ResizePolicy = append(c.ResizePolicy, v1.ContainerResizePolicy{ResourceName: r, RestartPolicy: v1.ResourceResizeRestartPolicy(g.pick("NotRequired", "RestartContainer"))})
		}
	}
	return c
}

// pod draws a pod of a QoS class with containers, init containers and
// sidecars, bound to a node or not, now and then with pod-level
// resources.
func (g gen) pod(ns, name string) *v1.Pod {
	qos := []v1.PodQOSClass{v1.PodQOSGuaranteed, v1.PodQOSBurstable, v1.PodQOSBestEffort}[g.r.Intn(3)]
	grace, no, yes := int64(v1.DefaultTerminationGracePeriodSeconds), false, true
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: v1.PodSpec{
		RestartPolicy: v1.RestartPolicyAlways, DNSPolicy: v1.DNSClusterFirst, SchedulerName: v1.DefaultSchedulerName,
		SecurityContext: &v1.PodSecurityContext{}, TerminationGracePeriodSeconds: &grace,
		EnableServiceLinks: &yes, AutomountServiceAccountToken: &no,
	}}
	if g.odds(2) {
		p.Spec.NodeName = "node-a"
	}
	for i, n := range []string{"app", "1e3", "web"}[:1+g.r.Intn(3)] {
		class := qos
		if i > 0 && g.odds(5) {
			// A container without resources beside others: a Burstable
			// pod whose resize must not make it BestEffort.
			class = v1.PodQOSBestEffort
		}
		p.Spec.Containers = append(p.Spec.Containers, g.container(n, class))
	}
	for _, n := range []string{"init", "side"}[:g.r.Intn(3)] {
		c := g.container(n, qos)
		if n == "side" || g.odds(3) {
			always := v1.ContainerRestartPolicyAlways
			c.RestartPolicy = &always
		} else if !g.odds(10) {
			// A resizePolicy on a plain init container is refused at
			// creation; now and then the draw keeps one to see it so.
			c.ResizePolicy = nil
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	}
	if qos != v1.PodQOSBestEffort && g.odds(8) {
		p.Spec.Resources = &v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("4Gi")}}
	}
	return p
}

// edit is one change of a drawn resize: under a container of list (""
// for spec.resources) named name, set field ("requests", "limits" or
// "resizePolicy") at key to value (JSON; nil removes it).
type edit struct {
	list, name, field, key string
	value                  json.RawMessage
}

// resize draws a resize of the pod (as the Cluster has it): its kind, its
// patch type and patch, and for a typed request the request, whose patch
// it is.
func (g gen) resize(p *v1.Pod) (kind string, pt types.PatchType, patch []byte, req *apiserver.ResizeRequest) {
	if g.odds(4) {
		r := g.request(p)
		return "request", types.StrategicMergePatchType, r.Patch(), &r
	}
	var edits []edit
	if g.odds(10) {
		edits = g.noop(p)
	} else {
		for n := 1 + g.r.Intn(2); n > 0; n-- {
			edits = append(edits, g.edit(p))
		}
	}
	doc := podDoc(p)
	switch g.r.Intn(3) {
	case 0:
		kind, pt, patch = "strategic", types.StrategicMergePatchType, strategicPatch(edits)
		if g.odds(20) {
			patch = []byte(strings.Replace(string(patch), `"cpu"`, `"cpu":"1","cpu"`, 1))
		}
	case 1:
		kind, pt, patch = "merge", types.MergePatchType, mergePatch(doc, edits)
	default:
		kind, pt, patch = "json", types.JSONPatchType, jsonPatch(doc, edits, g.odds(5))
	}
	return kind, pt, patch, nil
}

// noop draws edits that set what the pod has already: one of its amounts
// again, or nothing at all.
func (g gen) noop(p *v1.Pod) []edit {
	c := p.Spec.Containers[g.r.Intn(len(p.Spec.Containers))]
	for _, field := range []string{"requests", "limits"} {
		list := c.Resources.Requests
		if field == "limits" {
			list = c.Resources.Limits
		}
		for name, q := range list {
			return []edit{{list: "containers", name: c.Name, field: field, key: string(name), value: quoted(q.String())}}
		}
	}
	return nil
}

func quoted(s string) json.RawMessage { return json.RawMessage(strconv.Quote(s)) }

// edit draws one change: of a container, a sidecar or init container, a
// container the pod does not have, or spec.resources; of cpu or memory
// mostly, now and then another resource; to a valid amount mostly, now
// and then none, a negative, malformed or zero one, or a JSON number.
func (g gen) edit(p *v1.Pod) edit {
	e := edit{list: "containers", field: g.pick("requests", "limits")}
	switch n := g.r.Intn(20); {
	case n < 3 && len(p.Spec.InitContainers) > 0:
		e.list, e.name = "initContainers", p.Spec.InitContainers[g.r.Intn(len(p.Spec.InitContainers))].Name
	case n == 3:
		e.name = "ghost"
	case n == 4:
		e.list = ""
	default:
		e.name = p.Spec.Containers[g.r.Intn(len(p.Spec.Containers))].Name
	}
	if e.list != "" && g.odds(8) {
		e.field, e.key = "resizePolicy", g.pick("cpu", "memory")
		e.value = quoted(g.pick("NotRequired", "RestartContainer", "Sometimes"))
		return e
	}
	e.key = g.pick("cpu", "memory", "cpu", "memory", "cpu", "memory", "cpu", "memory", "ephemeral-storage", "example.com/foo")
	values := cpus
	if e.key != "cpu" {
		values = memories
	}
	switch n := g.r.Intn(30); {
	case n < 2:
		e.value = nil
	case n < 4:
		e.value = quoted("-" + g.pick(values...))
	case n == 4:
		// Not an exponent beyond apiserver.MaxExponent: resizelet refuses
		// those on purpose (ErrAmountTooLarge), where the real server
		// takes minutes over some.
		e.value = quoted(g.pick("1.5.5", "12xx", "", "1e3", "0.1m"))
	case n == 5:
		e.value = quoted("0")
	case n == 6:
		e.value = json.RawMessage(g.pick("1", "0.5", "true", "[]"))
	default:
		e.value = quoted(g.pick(values...))
	}
	return e
}

// request draws a typed resize of the pod's containers and init
// containers (a name it lacks now and then), and now and then of
// spec.resources.
func (g gen) request(p *v1.Pod) apiserver.ResizeRequest {
	amounts := func() apiserver.Amounts {
		var a apiserver.Amounts
		if g.odds(3) {
			return a
		}
		a.HasCPU, a.HasMemory = g.r.Intn(3) > 0, g.r.Intn(3) > 0
		a.MilliCPU = []int64{0, 100, 250, 500, 1000, 1500, 2000}[g.r.Intn(7)]
		a.Memory = []int64{64 << 20, 128 << 20, 200e6, 256 << 20, 1 << 30, 1000}[g.r.Intn(6)]
		return a
	}
	one := func(name string) apiserver.ContainerResize {
		return apiserver.ContainerResize{Name: name, Requests: amounts(), Limits: amounts()}
	}
	var r apiserver.ResizeRequest
	for _, c := range p.Spec.Containers {
		if g.odds(2) {
			r.Containers = append(r.Containers, one(c.Name))
		}
	}
	for _, c := range p.Spec.InitContainers {
		if g.odds(3) {
			r.InitContainers = append(r.InitContainers, one(c.Name))
		}
	}
	if g.odds(12) {
		r.Containers = append(r.Containers, one("ghost"))
	}
	if g.odds(12) {
		r.PodLevel = new(one(""))
	}
	return r
}

// podDoc is the pod as JSON objects, as a patch sees it.
func podDoc(p *v1.Pod) map[string]any {
	b, _ := json.Marshal(p)
	var doc map[string]any
	json.Unmarshal(b, &doc)
	return doc
}

// target returns the object an edit changes in the spec spec (a
// container, or spec.resources, made when missing), and its index in
// its list (-1 when the list has no such container).
func target(spec map[string]any, e edit) (map[string]any, int) {
	if e.list == "" {
		r, _ := spec["resources"].(map[string]any)
		if r == nil {
			r = map[string]any{}
			spec["resources"] = r
		}
		return map[string]any{"resources": r}, 0
	}
	list, _ := spec[e.list].([]any)
	for i, c := range list {
		if c := c.(map[string]any); c["name"] == e.name {
			return c, i
		}
	}
	return nil, -1
}

// applyEdit applies the edit to a container object (resources or
// resizePolicy), removing a key whose value is nil when remove says so
// (a JSON merge patch's list is taken whole) or setting it to null.
func applyEdit(c map[string]any, e edit, remove bool) {
	var v any
	if e.value != nil {
		json.Unmarshal(e.value, &v)
	}
	if e.field == "resizePolicy" {
		policies, _ := c["resizePolicy"].([]any)
		policies = slices.DeleteFunc(slices.Clone(policies), func(p any) bool { return p.(map[string]any)["resourceName"] == e.key })
		c["resizePolicy"] = append(policies, map[string]any{"resourceName": e.key, "restartPolicy": v})
		return
	}
	r, _ := c["resources"].(map[string]any)
	if r == nil {
		r = map[string]any{}
		c["resources"] = r
	}
	l, _ := r[e.field].(map[string]any)
	if l == nil {
		l = map[string]any{}
		r[e.field] = l
	}
	if e.value == nil && remove {
		delete(l, e.key)
	} else {
		l[e.key] = v
	}
}

// strategicPatch writes the edits as a strategic merge patch: each
// container by name with what changes, spec.resources as a map.
func strategicPatch(edits []edit) []byte {
	spec := map[string]any{}
	for _, e := range edits {
		if e.list == "" {
			c, _ := target(spec, e)
			applyEdit(c, e, false)
			continue
		}
		c, _ := target(spec, e)
		if c == nil {
			c = map[string]any{"name": e.name}
			list, _ := spec[e.list].([]any)
			spec[e.list] = append(list, c)
		}
		applyEdit(c, e, false)
	}
	return mustMarshal(map[string]any{"spec": spec})
}

// mergePatch writes the edits as a JSON merge patch: each list of
// containers that changes, whole, with the change (a container the pod
// lacks added), spec.resources as a map.
func mergePatch(doc map[string]any, edits []edit) []byte {
	spec := doc["spec"].(map[string]any)
	out := map[string]any{}
	for _, e := range edits {
		if e.list == "" {
			r, _ := out["resources"].(map[string]any)
			if r == nil {
				r = map[string]any{}
				out["resources"] = r
			}
			applyEdit(map[string]any{"resources": r}, e, false)
			continue
		}
		c, _ := target(spec, e)
		if c == nil {
			c = map[string]any{"name": e.name, "image": "registry.k8s.io/pause:3.10"}
			list, _ := spec[e.list].([]any)
			spec[e.list] = append(list, c)
		}
		applyEdit(c, e, true)
		out[e.list] = spec[e.list]
	}
	return mustMarshal(map[string]any{"spec": out})
}

// jsonPatch writes the edits as a JSON patch: an add (or, for a nil
// value, a remove) at each amount's path, the list or resources object
// added whole where the pod lacks it, a container the pod lacks at the
// index past its list; with test, first a test of the first container's
// name.
func jsonPatch(doc map[string]any, edits []edit, test bool) []byte {
	spec := doc["spec"].(map[string]any)
	var ops []map[string]any
	if test {
		first := spec["containers"].([]any)[0].(map[string]any)["name"]
		ops = append(ops, map[string]any{"op": "test", "path": "/spec/containers/0/name", "value": first})
	}
	for _, e := range edits {
		var v any
		if e.value != nil {
			json.Unmarshal(e.value, &v)
		}
		base := "/spec/resources"
		if _, ok := spec["resources"]; e.list == "" && !ok {
			ops = append(ops, map[string]any{"op": "add", "path": base, "value": map[string]any{e.field: map[string]any{e.key: v}}})
			spec["resources"] = map[string]any{}
			applyEdit(map[string]any{"resources": spec["resources"]}, e, true)
			continue
		}
		c, i := target(spec, e)
		if e.list != "" {
			if c == nil {
				list, _ := spec[e.list].([]any)
				i, c = len(list), map[string]any{}
			}
			base = fmt.Sprintf("/spec/%s/%d", e.list, i)
		}
		if e.field == "resizePolicy" {
			applyEdit(c, e, true)
			ops = append(ops, map[string]any{"op": "add", "path": base + "/resizePolicy", "value": c["resizePolicy"]})
			continue
		}
		if e.list != "" {
			base += "/resources"
		}
		r, _ := c["resources"].(map[string]any)
		l, _ := r[e.field].(map[string]any)
		switch {
		case e.value == nil:
			ops = append(ops, map[string]any{"op": "remove", "path": base + "/" + e.field + "/" + e.key})
		case l == nil:
			ops = append(ops, map[string]any{"op": "add", "path": base + "/" + e.field, "value": map[string]any{e.key: v}})
		default:
			ops = append(ops, map[string]any{"op": "add", "path": base + "/" + e.field + "/" + strings.ReplaceAll(e.key, "/", "~1"), "value": v})
		}
		applyEdit(c, e, true)
	}
	return mustMarshal(ops)
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

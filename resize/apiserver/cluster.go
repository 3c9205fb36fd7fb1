package apiserver

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/resizelet/resizelet/allocation"
	"github.com/resizelet/resizelet/allocation/frozen"
	"github.com/resizelet/resizelet/resize/profile"
)

// ErrPodNotFound is returned for a pod name the cluster does not know.
var ErrPodNotFound = errors.New("pod not found")

// Cluster is the API server side of the pods of one or more nodes: the pod
// objects with their spec, generation and status, the events about them,
// and the nodes that kubelets registered. It outlives kubelet restarts. Its
// resize path validates and applies a resize as the API server's resize
// subresource does.
//
// A pod is bound to the node its spec.nodeName names. A pod without one is
// bound to the only registered node while there is exactly one
// (resizelet's single-node convention: scenarios and tests create pods
// without a nodeName); with none, or several, it is unbound, as a pod the
// scheduler has not placed yet.
//
// The zero Cluster is usable: an empty cluster with the options' defaults,
// set up on first use. A nil *Cluster answers every call with
// ErrNilCluster or, for a method without an error result, a zero value.
type Cluster struct {
	setup        sync.Once // sets up a zero Cluster on first use (init)
	mu           sync.Mutex
	profile      profile.Profile
	pods         map[podRef]storedPod
	created      uint64                // numbers the pods in creation order
	uids         map[types.UID]podRef  // which no two pods share (CreatePod)
	incarnations map[podRef]int        // pods created under each name (newUID)
	thawed       frozen.Recent[podRef] // the pods kept decoded (storedPod)
	events       eventLog
	nodes        map[string]*NodeInfo // registered with RegisterNode, by name
	// byNode is the pods by spec.nodeName, in creation order, kept by put
	// and DeletePod for ListNodePods: resizes keep a pod's nodeName.
	byNode map[string][]podRef
	loads  *allocation.NodeLoads[podRef] // nil until NodeLoad is asked for
	// rv is the cluster's resourceVersion: bumped by every pod write, as
	// etcd's revision is, so a pod's resourceVersion is the rv of its last
	// write.
	rv       uint64
	watchers []*Watcher // the open watches (watch.go); nil while none
}

// storedPod is a pod as the cluster stores it: decoded while it is used
// (pod), frozen (package allocation/frozen) once it has not been for a
// while, so that a node with many settled pods stays small. A pod that
// cannot be frozen stays decoded. A frozen pod read for a write (get) is
// kept decoded too, with frozen still set, so that the write and what
// follows it (the watchers' old object, the pod's events' UID) thaw it
// once; it is frozen again by dropping the decoded one. The stored
// objects carry no resourceVersion: rv holds it, and only the copies
// handed out get it, so that a write costs no string.
type storedPod struct {
	pod    *v1.Pod
	frozen frozen.Pod // set with pod too when pod was thawed from it, unchanged
	seq    uint64     // the pod's place in creation order
	rv     uint64     // the cluster's rv after the pod's last write
}

// DefaultHotPods is how many pods a Cluster keeps decoded unless
// ClusterOptions.HotPods says otherwise, for core.DefaultHotPods's reason.
const DefaultHotPods = 1

// DefaultEventLimit is how many of the latest events a Cluster keeps
// unless ClusterOptions.EventLimit says otherwise.
const DefaultEventLimit = 256

// ClusterOptions configure the API server: the Kubernetes version
// (validation rules differ by version), its feature gates and bounds.
type ClusterOptions struct {
	Profile      profile.Version // empty means profile.Default
	FeatureGates map[string]bool
	// EventLimit bounds the events kept: the latest EventLimit are kept.
	// 0 means DefaultEventLimit; a negative limit keeps every event.
	EventLimit int
	// HotPods is how many of the most recently used pods are kept
	// decoded, the others frozen. 0 means DefaultHotPods; a negative value
	// keeps none decoded between calls.
	HotPods int
}

// ErrNilCluster is what a nil *Cluster answers every call with an error
// result.
var ErrNilCluster = errors.New("apiserver: nil *Cluster (make one with NewCluster, or use a zero Cluster)")

// NewCluster returns an empty cluster.
func NewCluster(opts ClusterOptions) *Cluster {
	c := &Cluster{}
	c.setup.Do(func() { c.configure(opts) })
	return c
}

// configure sets up an empty cluster with opts.
func (c *Cluster) configure(opts ClusterOptions) {
	c.profile = profile.New(opts.Profile, opts.FeatureGates)
	c.pods, c.uids, c.incarnations = map[podRef]storedPod{}, map[types.UID]podRef{}, map[podRef]int{}
	c.byNode, c.nodes = map[string][]podRef{}, map[string]*NodeInfo{}
	// 0 means the default; a negative limit is kept (ClusterOptions).
	c.events = eventLog{limit: cmp.Or(opts.EventLimit, DefaultEventLimit)}
	c.thawed.Limit = cmp.Or(opts.HotPods, DefaultHotPods)
}

// init sets up a zero Cluster as NewCluster(ClusterOptions{}) would, once,
// and reports whether c is not nil. Every exported method calls it first:
// sync.Once makes the setup race-free for an atomic load.
func (c *Cluster) init() bool {
	if c == nil {
		return false
	}
	c.setup.Do(func() { c.configure(ClusterOptions{}) })
	return true
}

// lock is init, then takes c.mu when c is usable (the caller unlocks).
func (c *Cluster) lock() bool {
	if !c.init() {
		return false
	}
	c.mu.Lock()
	return true
}

// get returns the stored pod, decoded and shared (a frozen one is thawed
// and kept decoded), and what c.pods then holds for it.
func (c *Cluster) get(key podRef) (*v1.Pod, storedPod, bool) {
	sp, ok := c.pods[key]
	if !ok {
		return nil, sp, false
	}
	if sp.pod == nil {
		sp.pod = sp.frozen.Thaw()
		c.pods[key] = sp
		c.touch(key)
	} else {
		c.thawed.Touch(key)
	}
	return sp.pod, sp, true
}

// put stores pod with the next resourceVersion, tells the watchers, and
// freezes the pods used least recently beyond the hot limit.
func (c *Cluster) put(key podRef, pod *v1.Pod) {
	prev := c.pods[key]
	if pod.ResourceVersion != "" {
		// The version is the cluster's to keep (storedPod.rv).
		pod.ResourceVersion = ""
	}
	seq := prev.seq
	added := seq == 0
	if added {
		c.created++
		seq = c.created
		c.byNode[pod.Spec.NodeName] = append(c.byNode[pod.Spec.NodeName], key)
	}
	c.rv++
	c.pods[key] = storedPod{pod: pod, seq: seq, rv: c.rv}
	c.loads.Set(key, pod)
	if c.watchers != nil {
		if added {
			c.notifyPod(watch.Added, pod, nil, c.rv)
		} else {
			c.notifyPod(watch.Modified, pod, &prev, c.rv)
		}
	}
	c.touch(key)
}

// touch marks the pod of key decoded and used just now, and freezes the
// pods used least recently beyond the hot limit: a pod read since it was
// frozen drops its decoded copy, a written one is frozen anew.
func (c *Cluster) touch(key podRef) {
	c.thawed.Touch(key)
	c.thawed.Evict(func(k podRef) bool {
		sp := c.pods[k]
		f, ok := sp.frozen, true
		if f.IsZero() {
			f, ok = frozen.FreezePod(sp.pod)
		}
		if ok {
			c.pods[k] = storedPod{frozen: f, seq: sp.seq, rv: sp.rv}
		}
		return ok
	})
}

// thaw is the stored pod decoded: pod, or the frozen pod thawed (the
// caller's own).
func (sp *storedPod) thaw() *v1.Pod {
	if sp.pod != nil {
		return sp.pod
	}
	return sp.frozen.Thaw()
}

// inOrder is the stored pods of a namespace (all with ""), in creation
// order. The caller holds c.mu.
func (c *Cluster) inOrder(namespace string) []storedPod {
	stored := make([]storedPod, 0, len(c.pods))
	for key, sp := range c.pods {
		if namespace == "" || key.namespace == namespace {
			stored = append(stored, sp)
		}
	}
	slices.SortFunc(stored, func(a, b storedPod) int { return cmp.Compare(a.seq, b.seq) })
	return stored
}

// withVersion returns a copy of the stored pod's top level with its
// resourceVersion, sharing the rest: what a reader gets.
func withVersion(pod *v1.Pod, rv uint64) *v1.Pod {
	p := *pod
	p.ResourceVersion = strconv.FormatUint(rv, 10)
	return &p
}

// ResourceVersion is the cluster's current resourceVersion, that of its
// latest pod write (0 before the first), from which a watch misses
// nothing.
func (c *Cluster) ResourceVersion() uint64 {
	if !c.lock() {
		return 0
	}
	defer c.mu.Unlock()
	return c.rv
}

// podRef is a pod's namespace and name, the key pods are stored by.
type podRef struct{ namespace, name string }

// resizeOptions are the options of the cluster's resizes. Gate stays nil:
// its method value would be allocated on every resize, and resolved
// answers for it.
func (c *Cluster) resizeOptions() ResizeOptions {
	return ResizeOptions{Profile: c.profile.Version(), resolved: &c.profile}
}

// CreatePod stores a new pod as the API server would: defaulted, with a
// UID derived from namespace and name when it has none, generation 1, and
// validated (its metadata by ValidatePodMeta, which says what a UID the
// caller set means here; a UID another pod has is a 409, ErrUIDTaken). A
// pod that carries a resourceVersion is refused as the API server's
// storage refuses it, and a name already taken with 409 AlreadyExists. The
// pod returned is the stored one, shared, as ResizePod's.
func (c *Cluster) CreatePod(_ context.Context, pod *v1.Pod) (*v1.Pod, error) {
	if !c.init() {
		return nil, ErrNilCluster
	}
	if pod == nil {
		return nil, apierrors.NewBadRequest("create pod: nil pod")
	}
	if pod.ResourceVersion != "" {
		// k8s.io/apiserver pkg/storage/etcd3/store.go, Create:
		// storage.ErrResourceVersionSetOnCreate, which reaches the client
		// as a 500 (InterpretCreateError passes it through).
		return nil, internalStatus(errors.New("resourceVersion should not be set on objects to be created"))
	}
	p := pod.DeepCopy()
	DefaultPod(p)
	if c.profile.DefaultsPodLevelResources() {
		// The 1.37 pod strategy's PrepareForCreate.
		defaultPodLevelResources(p)
	}
	if errs := ValidatePodMeta(p); len(errs) > 0 {
		return nil, &InvalidError{Name: p.Name, Errs: errs}
	}
	if p.Generation == 0 {
		p.Generation = 1
	}
	if errs := ValidatePod(p, c.resizeOptions()); len(errs) > 0 {
		return nil, &InvalidError{Name: p.Name, Errs: errs}
	}
	p.Status = v1.PodStatus{Phase: v1.PodPending, QOSClass: computeQOS(p, c.profile)}
	c.mu.Lock()
	defer c.mu.Unlock()
	key := podRef{p.Namespace, p.Name}
	if _, ok := c.pods[key]; ok {
		return nil, podExists(p.Name)
	}
	if p.UID == "" {
		p.UID = c.newUID(key)
	}
	// A UID names one pod: two pods sharing one would share a pod cgroup
	// and checkpoint records, the second silently taking the first's.
	if other, ok := c.uids[p.UID]; ok {
		cause := fmt.Errorf("metadata.uid %s is pod %s/%s's", p.UID, other.namespace, other.name)
		return nil, &statusError{StatusError: apierrors.NewConflict(podsResource, p.Name, cause), sentinel: ErrUIDTaken}
	}
	c.uids[p.UID] = key
	c.put(key, p)
	return p, nil
}

// newUID is the UID of a new pod: derived from its namespace and name, so
// that the same scenario gives the same cgroup paths and checkpoints on
// every run, and from how many pods of that name came before it, so that
// a pod created again after a deletion is another pod, as the API
// server's random UIDs make it: with the first one's UID it would inherit
// that pod's checkpoint records (a kubelet writes a deletion to its
// checkpoint files only with its next write) and its cgroups. The caller
// holds c.mu.
func (c *Cluster) newUID(key podRef) types.UID {
	c.incarnations[key]++
	if n := c.incarnations[key]; n > 1 {
		return deterministicUID(key.namespace, fmt.Sprintf("%s#%d", key.name, n))
	}
	return deterministicUID(key.namespace, key.name)
}

// deterministicUID makes a UID from namespace and name.
func deterministicUID(namespace, name string) types.UID {
	h := sha256.Sum256([]byte(namespace + "/" + name))
	b := h[:16]
	b[6] = (b[6] & 0x0f) | 0x50 // version 5 style
	b[8] = (b[8] & 0x3f) | 0x80
	return types.UID(fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]))
}

// GetPod returns a copy of the pod, or the API server's 404, which also
// matches ErrPodNotFound. The copy carries no resourceVersion (a kubelet
// has no use for it, and two nodes that wrote the same statuses a
// different number of times compare equal); GetPodVersioned gives it.
func (c *Cluster) GetPod(_ context.Context, namespace, name string) (*v1.Pod, error) {
	return c.getPod(namespace, name, false)
}

// GetPodVersioned is GetPod with the pod's metadata.resourceVersion, as
// the API server serves a pod.
func (c *Cluster) GetPodVersioned(namespace, name string) (*v1.Pod, error) {
	return c.getPod(namespace, name, true)
}

func (c *Cluster) getPod(namespace, name string, versioned bool) (*v1.Pod, error) {
	if !c.lock() {
		return nil, ErrNilCluster
	}
	defer c.mu.Unlock()
	sp, ok := c.pods[podRef{namespace, name}]
	if !ok {
		return nil, podNotFound(name)
	}
	return sp.copy(versioned), nil
}

// copy is a deep copy of the stored pod, versioned or not.
func (sp *storedPod) copy(versioned bool) *v1.Pod {
	p := sp.thaw()
	if sp.pod != nil {
		p = p.DeepCopy()
	}
	if versioned {
		p.ResourceVersion = strconv.FormatUint(sp.rv, 10)
	}
	return p
}

// ListPods returns copies of all pods in creation order, without their
// resourceVersions (see GetPod; ListPodsVersioned has them).
func (c *Cluster) ListPods(_ context.Context) []*v1.Pod {
	pods, _ := c.listPods(false)
	return pods
}

// ListPodsVersioned is ListPods with each pod's resourceVersion, and the
// cluster's (a list's metadata.resourceVersion), from which a Watch
// continues without a gap.
func (c *Cluster) ListPodsVersioned() ([]*v1.Pod, uint64) {
	return c.listPods(true)
}

func (c *Cluster) listPods(versioned bool) ([]*v1.Pod, uint64) {
	if !c.lock() {
		return nil, 0
	}
	defer c.mu.Unlock()
	return copies(c.inOrder(""), versioned), c.rv
}

// ListNodePods returns copies of the pods whose spec.nodeName is one of
// nodes ("" for the pods without one), in creation order, as ListPods
// gives them. It reads those pods alone (byNode), so that a kubelet
// starting in a large cluster, or a scheduler weighing a node, pays for
// that node's pods rather than every pod's.
func (c *Cluster) ListNodePods(_ context.Context, nodes ...string) []*v1.Pod {
	if !c.lock() {
		return nil
	}
	defer c.mu.Unlock()
	var stored []storedPod
	for i, node := range nodes {
		for _, key := range c.byNode[node] {
			if !slices.Contains(nodes[:i], node) {
				stored = append(stored, c.pods[key])
			}
		}
	}
	slices.SortFunc(stored, func(a, b storedPod) int { return cmp.Compare(a.seq, b.seq) })
	return copies(stored, false)
}

// copies are deep copies of the stored pods, versioned or not.
func copies(stored []storedPod, versioned bool) []*v1.Pod {
	out := make([]*v1.Pod, 0, len(stored))
	for i := range stored {
		out = append(out, stored[i].copy(versioned))
	}
	return out
}

// DeletePod removes the pod, or answers the API server's 404
// (ErrPodNotFound). Watchers see it Deleted, as it was, with a new
// resourceVersion.
func (c *Cluster) DeletePod(ctx context.Context, namespace, name string) error {
	return c.DeletePodUID(ctx, namespace, name, "")
}

// DeletePodUID is DeletePod with the UID as a precondition, as the
// kubelet's status manager deletes a pod it has torn down: while the pod
// of the name has another UID (created anew), it is left alone, and that
// is not an error. An empty uid matches any pod.
func (c *Cluster) DeletePodUID(_ context.Context, namespace, name string, uid types.UID) error {
	if !c.lock() {
		return ErrNilCluster
	}
	defer c.mu.Unlock()
	key := podRef{namespace, name}
	p, prev, ok := c.get(key)
	if !ok {
		return podNotFound(name)
	} else if uid != "" && p.UID != uid {
		return nil
	}
	delete(c.uids, p.UID)
	delete(c.pods, key)
	c.loads.Set(key, nil)
	c.byNode[p.Spec.NodeName] = slices.DeleteFunc(c.byNode[p.Spec.NodeName], func(k podRef) bool { return k == key })
	c.thawed.Forget(key)
	c.rv++
	if c.watchers != nil {
		c.notifyPod(watch.Deleted, p, &prev, c.rv)
	}
	return nil
}

// MarkPodDeleted starts the graceful deletion of a pod, as the API server
// does (k8s.io/apiserver pkg/registry/rest/delete.go, BeforeDelete, with
// the pod strategy's CheckGracefulDelete): it sets deletionTimestamp to
// now plus the grace period (spec.terminationGracePeriodSeconds; 0 for a
// pod that has finished or is unbound) and deletionGracePeriodSeconds, and
// bumps metadata.generation. The pod stays until the kubelet has torn it
// down and deletes it (DeletePod). Marks stay; a pod not of uid ("" is any)
// is not found. It returns the stored pod, shared, as ResizePod does.
func (c *Cluster) MarkPodDeleted(_ context.Context, namespace, name string, uid types.UID, now time.Time) (*v1.Pod, error) {
	if !c.lock() {
		return nil, ErrNilCluster
	}
	defer c.mu.Unlock()
	key := podRef{namespace, name}
	p, _, ok := c.get(key)
	if !ok || uid != "" && p.UID != uid {
		return nil, podNotFound(name)
	}
	if p.DeletionTimestamp != nil {
		return p, nil
	}
	// The API server defaults the grace period to 30 s at creation
	// (SetDefaults_PodSpec); resizelet's defaulting leaves it unset.
	grace := int64(v1.DefaultTerminationGracePeriodSeconds)
	if p.Spec.TerminationGracePeriodSeconds != nil {
		grace = *p.Spec.TerminationGracePeriodSeconds
	}
	if grace < 0 {
		grace = 1 // as CheckGracefulDelete
	}
	// CheckGracefulDelete deletes a pod the scheduler has not placed at
	// once (pkg/registry/core/pod/strategy.go).
	if bound, _ := c.boundNode(p); bound == "" || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
		grace = 0
	}
	updated := *p
	updated.ObjectMeta = *p.ObjectMeta.DeepCopy()
	updated.DeletionTimestamp = new(metav1.NewTime(now.Add(time.Duration(grace) * time.Second)))
	updated.DeletionGracePeriodSeconds = &grace
	if updated.Generation > 0 {
		updated.Generation++
	}
	c.put(key, &updated)
	return &updated, nil
}

// UpdatePodStatus replaces the pod's status, as the kubelet's status
// manager does. It fails if the pod is gone (404) or its UID changed (409,
// as the API server answers an update whose UID precondition fails); both
// match ErrPodNotFound. The status is kept as given, shared with the
// caller, who must not change it afterwards.
func (c *Cluster) UpdatePodStatus(_ context.Context, namespace, name string, uid types.UID, status v1.PodStatus) error {
	if !c.lock() {
		return ErrNilCluster
	}
	defer c.mu.Unlock()
	key := podRef{namespace, name}
	p, _, ok := c.get(key)
	if !ok {
		return podNotFound(name)
	}
	if p.UID != uid {
		return uidConflict(namespace, name, string(uid), string(p.UID))
	}
	// Stored pods are never changed in place: an update stores a new
	// object, built without the old status it would only overwrite.
	c.put(key, &v1.Pod{TypeMeta: p.TypeMeta, ObjectMeta: p.ObjectMeta, Spec: p.Spec, Status: status})
	return nil
}

// ResizePod applies a resize through the resize subresource. On success
// the stored pod has the new spec (and generation, if the spec changed)
// and a new resourceVersion, unless nothing changed (sameEncoding); on
// error nothing changes. A missing pod is a 404 (ErrPodNotFound); the
// patch's own errors are ApplyResize's. The pod returned is the stored
// one, never changed in place, shared: read it, or DeepCopy it before
// changing it. It has no resourceVersion.
func (c *Cluster) ResizePod(_ context.Context, namespace, name string, patch []byte) (*v1.Pod, error) {
	return c.resizePatch(namespace, name, StrategicMergePatch, patch, true)
}

// ResizePodRequest applies a typed resize (ApplyResizeRequest) as
// ResizePod applies its patch.
func (c *Cluster) ResizePodRequest(_ context.Context, namespace, name string, req ResizeRequest) (*v1.Pod, error) {
	return c.resize(namespace, name, true, func(old *v1.Pod, o ResizeOptions) (*v1.Pod, error) {
		return ApplyResizeRequest(old, req, o)
	})
}

// DryRunResizePod applies a resize as ResizePod does and returns the pod
// it would store, shared in the same way, without storing it (the API
// server's dry run).
func (c *Cluster) DryRunResizePod(_ context.Context, namespace, name string, patch []byte) (*v1.Pod, error) {
	return c.resizePatch(namespace, name, StrategicMergePatch, patch, false)
}

// RegisterNode records a node, as a kubelet registers its Node object, for
// the admission plugins that check a resize against the node the pod is
// bound to (AdmitResize). Registering a name again replaces that node (a
// restarted kubelet registers anew). Those plugins let every resize of an
// unbound pod through (see Cluster), and refuse one of a pod bound to a
// node never registered ("node %q not found").
func (c *Cluster) RegisterNode(_ context.Context, node NodeInfo) {
	if !c.lock() {
		return
	}
	defer c.mu.Unlock()
	node.Allocatable = node.Allocatable.DeepCopy()
	c.nodes[node.Name] = &node
}

// Node returns the registered node of that name.
func (c *Cluster) Node(name string) (NodeInfo, bool) {
	if !c.lock() {
		return NodeInfo{}, false
	}
	defer c.mu.Unlock()
	n, ok := c.nodes[name]
	if !ok {
		return NodeInfo{}, false
	}
	out := *n
	out.Allocatable = n.Allocatable.DeepCopy()
	return out, true
}

// boundNode returns the name of the node p is bound to ("" when unbound)
// and that node as registered (nil when none is). The caller holds c.mu.
func (c *Cluster) boundNode(p *v1.Pod) (string, *NodeInfo) {
	if name := p.Spec.NodeName; name != "" {
		return name, c.nodes[name]
	}
	if len(c.nodes) == 1 {
		for name, n := range c.nodes {
			return name, n
		}
	}
	return "", nil
}

// resize runs apply on the stored pod under the lock, then the admission
// plugins (AdmitResize), and with store stores the result.
func (c *Cluster) resize(namespace, name string, store bool, apply func(old *v1.Pod, o ResizeOptions) (*v1.Pod, error)) (*v1.Pod, error) {
	if !c.lock() {
		return nil, ErrNilCluster
	}
	defer c.mu.Unlock()
	key := podRef{namespace, name}
	old, sp, ok := c.get(key)
	if !ok {
		return nil, podNotFound(name)
	}
	opts := c.resizeOptions()
	opts.resourceVersion = sp.rv
	updated, err := apply(old, opts)
	if err != nil {
		return nil, err
	}
	// The resize strategy keeps spec.nodeName.
	bound, node := c.boundNode(updated)
	if err := admitResize(old, updated, bound, node, opts); err != nil {
		return nil, err
	}
	if store && !sameEncoding(old, updated) {
		c.put(key, updated)
	}
	return updated, nil
}

// sameEncoding reports whether a resize's pod (differing in spec and
// generation at most) encodes as the stored one: then the API server
// writes nothing (k8s.io/apiserver pkg/storage/etcd3/store.go,
// GuaranteedUpdate).
func sameEncoding(old, updated *v1.Pod) bool {
	if old.Generation != updated.Generation {
		return false
	}
	a, errA := json.Marshal(&old.Spec)
	b, errB := json.Marshal(&updated.Spec)
	return errA == nil && errB == nil && bytes.Equal(a, b)
}

// ResizePodPatch is ResizePod for a patch of type pt (ApplyResizePatch),
// checked before the pod is looked up, as the API server does. The pod
// returned is the stored one, shared, as ResizePod's.
func (c *Cluster) ResizePodPatch(_ context.Context, namespace, name string, pt types.PatchType, patch []byte) (*v1.Pod, error) {
	return c.resizePatch(namespace, name, pt, patch, true)
}

// DryRunResizePodPatch is DryRunResizePod for a patch of type pt.
func (c *Cluster) DryRunResizePodPatch(_ context.Context, namespace, name string, pt types.PatchType, patch []byte) (*v1.Pod, error) {
	return c.resizePatch(namespace, name, pt, patch, false)
}

// resizePatch is resize for a patch of type pt, which is checked first.
func (c *Cluster) resizePatch(namespace, name string, pt types.PatchType, patch []byte, store bool) (*v1.Pod, error) {
	if err := ValidPatchType(pt); err != nil {
		return nil, err
	}
	return c.resize(namespace, name, store, func(old *v1.Pod, o ResizeOptions) (*v1.Pod, error) {
		return ApplyResizePatch(old, pt, patch, o)
	})
}

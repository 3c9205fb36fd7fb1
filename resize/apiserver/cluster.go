package apiserver

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/allocation/frozen"
	"github.com/resizelet/resizelet/resize/profile"
)

// ErrPodNotFound is returned for a pod name the cluster does not know.
var ErrPodNotFound = errors.New("pod not found")

// Event is one Kubernetes event a component emitted about a pod.
type Event struct {
	Time      time.Time
	Namespace string
	Pod       string
	Type      string // v1.EventTypeNormal or v1.EventTypeWarning
	Reason    string
	Message   string
	Source    string // the reporting component, "kubelet", as kubectl describe shows it under From
	Host      string // the node the component runs on
	// Lazy, when set and Message is empty, renders the message when the
	// event is read (Events): for messages costly to format and often
	// never read, such as the resize events' JSON.
	Lazy fmt.Stringer
}

// Cluster is the API server side of a node's pods: the pod objects with
// their spec, generation and status, and the events about them. It outlives
// kubelet restarts. Its resize path validates and applies a resize as the
// API server's resize subresource does.
type Cluster struct {
	mu      sync.Mutex
	profile profile.Profile
	pods    map[podRef]storedPod
	order   []podRef // creation order of the keys in pods
	// thawed are the pods kept decoded: the ones used most recently, at
	// most hotPods of them (see storedPod).
	thawed frozen.Recent[podRef]
	events eventLog
	// node is the node registered with RegisterNode, nil before: the one
	// node the cluster's pods are bound to, which admission reads.
	node *NodeInfo
}

// storedPod is a pod as the cluster stores it: decoded while it is used
// (pod), frozen (package allocation/frozen) once it has not been for a
// while, so that a node with many settled pods stays small. A pod that
// cannot be frozen stays decoded.
type storedPod struct {
	pod    *v1.Pod
	frozen frozen.Pod
}

// DefaultHotPods is how many pods a Cluster keeps decoded unless
// ClusterOptions.HotPods says otherwise.
const DefaultHotPods = 4

// DefaultEventLimit is how many of the latest events a Cluster keeps
// unless ClusterOptions.EventLimit says otherwise.
const DefaultEventLimit = 256

// ClusterOptions configure the API server's behaviour: the Kubernetes
// version (validation rules differ by version) and its feature gates.
type ClusterOptions struct {
	Profile      profile.Version // empty means profile.Default
	FeatureGates map[string]bool
	// EventLimit bounds the events kept: the latest EventLimit are kept.
	// 0 means DefaultEventLimit; a negative limit keeps every event.
	EventLimit int
	// HotPods is how many of the most recently used pods are kept
	// decoded; the others are kept frozen and decoded when read. 0 means
	// DefaultHotPods; a negative value keeps none decoded between calls.
	HotPods int
}

// NewCluster returns an empty cluster.
func NewCluster(opts ClusterOptions) *Cluster {
	limit := opts.EventLimit
	if limit == 0 {
		limit = DefaultEventLimit
	}
	c := &Cluster{profile: profile.New(opts.Profile, opts.FeatureGates), pods: map[podRef]storedPod{}, events: eventLog{limit: limit}}
	c.thawed.Limit = opts.HotPods
	if opts.HotPods == 0 {
		c.thawed.Limit = DefaultHotPods
	}
	return c
}

// get returns the stored pod, decoding it if it is frozen (the decoded
// pod is then the caller's, and the cluster keeps the frozen one).
func (c *Cluster) get(key podRef) (*v1.Pod, bool) {
	sp, ok := c.pods[key]
	switch {
	case !ok:
		return nil, false
	case sp.pod != nil:
		c.thawed.Touch(key)
		return sp.pod, true
	}
	return sp.frozen.Thaw(), true
}

// put stores pod (decoded: it was just written) and freezes the pods used
// least recently beyond the hot limit.
func (c *Cluster) put(key podRef, pod *v1.Pod) {
	c.pods[key] = storedPod{pod: pod}
	c.thawed.Touch(key)
	c.thawed.Evict(func(k podRef) bool {
		sp := c.pods[k]
		f, ok := frozen.FreezePod(sp.pod)
		if ok {
			c.pods[k] = storedPod{frozen: f}
		}
		return ok
	})
}

// podRef is a pod's namespace and name, the key pods are stored by.
type podRef struct{ namespace, name string }

func podKey(namespace, name string) podRef { return podRef{namespace, name} }

func (c *Cluster) resizeOptions() ResizeOptions {
	return ResizeOptions{Profile: c.profile.Version(), Gate: c.profile.Gate, resolved: &c.profile}
}

// CreatePod stores a new pod as the API server would: defaulted, with a
// UID derived from namespace and name when it has none, generation 1, and
// validated. The pod returned is the stored one, shared, as ResizePod's:
// read it, or DeepCopy it before changing anything in it.
func (c *Cluster) CreatePod(pod *v1.Pod) (*v1.Pod, error) {
	p := pod.DeepCopy()
	DefaultPod(p)
	if c.profile.DefaultsPodLevelResources() {
		// The 1.37 pod strategy's PrepareForCreate.
		defaultPodLevelResources(p)
	}
	if p.Name == "" {
		return nil, fmt.Errorf("create pod: metadata.name is required")
	}
	if p.UID == "" {
		p.UID = deterministicUID(p.Namespace, p.Name)
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
	key := podKey(p.Namespace, p.Name)
	if _, ok := c.pods[key]; ok {
		return nil, fmt.Errorf("create pod %s: already exists", key)
	}
	c.put(key, p)
	c.order = append(c.order, key)
	return p, nil
}

// deterministicUID makes a UID from namespace and name, so the same scenario
// gives the same cgroup paths and checkpoints on every run.
func deterministicUID(namespace, name string) types.UID {
	h := sha256.Sum256([]byte(namespace + "/" + name))
	b := h[:16]
	b[6] = (b[6] & 0x0f) | 0x50 // version 5 style
	b[8] = (b[8] & 0x3f) | 0x80
	return types.UID(fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]))
}

// GetPod returns a copy of the pod, or an error wrapping ErrPodNotFound.
func (c *Cluster) GetPod(namespace, name string) (*v1.Pod, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	sp, ok := c.pods[podKey(namespace, name)]
	switch {
	case !ok:
		return nil, fmt.Errorf("pod %s/%s: %w", namespace, name, ErrPodNotFound)
	case sp.pod != nil:
		return sp.pod.DeepCopy(), nil
	}
	return sp.frozen.Thaw(), nil
}

// ListPods returns copies of all pods in creation order.
func (c *Cluster) ListPods() []*v1.Pod {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*v1.Pod, 0, len(c.order))
	for _, key := range c.order {
		if sp := c.pods[key]; sp.pod != nil {
			out = append(out, sp.pod.DeepCopy())
		} else {
			out = append(out, sp.frozen.Thaw())
		}
	}
	return out
}

// ResizePod applies a resize through the resize subresource. On success
// the stored pod has the new spec (and a bumped generation if the spec
// changed); on error nothing changes.
//
// The pod returned is the stored one, shared: read it, or DeepCopy it
// before changing anything in it. The cluster never changes a stored pod
// in place (an update stores a new one), so it stays as returned.
func (c *Cluster) ResizePod(namespace, name string, patch []byte) (*v1.Pod, error) {
	return c.resize(namespace, name, true, func(old *v1.Pod, o ResizeOptions) (*v1.Pod, error) {
		return ApplyResize(old, patch, o)
	})
}

// ResizePodRequest applies a typed resize as ResizePod applies its patch
// (ApplyResizeRequest). On error nothing changes. The pod returned is the
// stored one, shared, as ResizePod's.
func (c *Cluster) ResizePodRequest(namespace, name string, req ResizeRequest) (*v1.Pod, error) {
	return c.resize(namespace, name, true, func(old *v1.Pod, o ResizeOptions) (*v1.Pod, error) {
		return ApplyResizeRequest(old, req, o)
	})
}

// DryRunResizePod applies a resize as ResizePod does and returns the pod
// it would store, without storing it (the API server's dry run). The pod
// shares what the resize did not change with the stored one: read it, or
// DeepCopy it before changing anything in it.
func (c *Cluster) DryRunResizePod(namespace, name string, patch []byte) (*v1.Pod, error) {
	return c.resize(namespace, name, false, func(old *v1.Pod, o ResizeOptions) (*v1.Pod, error) {
		return ApplyResize(old, patch, o)
	})
}

// RegisterNode records the node the cluster's pods run on, as a kubelet
// registers its Node object: the admission plugins that read the node (the
// PodResizeValidator from 1.36, AdmitResize) check resizes against it. A
// cluster has one node; registering again replaces it (a restarted kubelet
// registers anew). Before any registration the pods count as unbound and
// those plugins let every resize through, as they do for unbound pods.
func (c *Cluster) RegisterNode(node NodeInfo) {
	node.Allocatable = node.Allocatable.DeepCopy()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.node = &node
}

// resize runs apply on the stored pod under the cluster's lock, then the
// validating admission plugins (AdmitResize) and, with store, stores what
// it returns.
func (c *Cluster) resize(namespace, name string, store bool, apply func(old *v1.Pod, o ResizeOptions) (*v1.Pod, error)) (*v1.Pod, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := podKey(namespace, name)
	old, ok := c.get(key)
	if !ok {
		return nil, fmt.Errorf("pod %s/%s: %w", namespace, name, ErrPodNotFound)
	}
	opts := c.resizeOptions()
	updated, err := apply(old, opts)
	if err != nil {
		return nil, err
	}
	// The cluster's pods are bound to its one node, whether or not their
	// spec.nodeName says so: the kubelet that runs them created them.
	if err := AdmitResize(old, updated, c.node, opts); err != nil {
		return nil, err
	}
	if store {
		c.put(key, updated)
	}
	return updated, nil
}

// DeletePod removes the pod.
func (c *Cluster) DeletePod(namespace, name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := podKey(namespace, name)
	if _, ok := c.pods[key]; !ok {
		return fmt.Errorf("pod %s/%s: %w", namespace, name, ErrPodNotFound)
	}
	delete(c.pods, key)
	c.thawed.Forget(key)
	for i, k := range c.order {
		if k == key {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
	return nil
}

// UpdatePodStatus replaces the pod's status, as the kubelet's status
// manager does. It fails if the pod is gone or its UID changed. The status
// is kept as given, sharing its slices and pointers with the caller, who
// must not change them afterwards.
func (c *Cluster) UpdatePodStatus(namespace, name string, uid types.UID, status v1.PodStatus) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := podKey(namespace, name)
	p, ok := c.get(key)
	if !ok || p.UID != uid {
		return fmt.Errorf("pod %s/%s: %w", namespace, name, ErrPodNotFound)
	}
	// Stored pods are never changed in place: an update stores a new
	// object, with the status as given (the caller does not change it
	// afterwards, as the API interface says).
	updated := *p
	updated.Status = status
	c.put(key, &updated)
	return nil
}

// RecordEvent stores an event. Once the cluster holds its event limit, the
// oldest event is dropped for each new one.
func (c *Cluster) RecordEvent(e Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events.add(e)
}

// Events returns the events kept (the latest, up to the event limit) in
// the order they were recorded, with their messages rendered.
func (c *Cluster) Events() []Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	out, _ := c.events.since(0)
	return out
}

// EventCount is how many events were ever recorded: the sequence number
// the next event will have.
func (c *Cluster) EventCount() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.events.next
}

// EventsSince returns the events recorded since the first seq events (seq
// from an earlier EventCount), with their messages rendered; those already
// dropped from the log are missing, and dropped says how many.
func (c *Cluster) EventsSince(seq uint64) (events []Event, dropped uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.events.since(seq)
}

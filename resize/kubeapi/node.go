package kubeapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/resizelet/resizelet/resize"
)

// Heartbeat is how a node shows the control plane it is alive, as the
// kubelet does with its Lease in kube-node-lease and its Node status. A
// zero field is the kubelet's default.
type Heartbeat struct {
	// LeaseDuration is the lease's leaseDurationSeconds (the kubelet's
	// nodeLeaseDurationSeconds, 40s).
	LeaseDuration time.Duration
	// RenewEvery is how often the lease is renewed: a quarter of
	// LeaseDuration, as the kubelet's lease controller renews it. The
	// Node is checked as often (the kubelet's nodeStatusUpdateFrequency,
	// 10s, too), and its status posted at once if it differs from the
	// node's.
	RenewEvery time.Duration
	// StatusEvery is how often the Node's status is posted when nothing in
	// it changed (the kubelet's nodeStatusReportFrequency, 5m); its
	// conditions' lastHeartbeatTime moves then.
	StatusEvery time.Duration
}

func (h Heartbeat) withDefaults() Heartbeat {
	if h.LeaseDuration <= 0 {
		h.LeaseDuration = 40 * time.Second
	}
	if h.RenewEvery <= 0 {
		h.RenewEvery = h.LeaseDuration / 4
	}
	if h.StatusEvery <= 0 {
		h.StatusEvery = 5 * time.Minute
	}
	return h
}

// NodeLeaseNamespace is where the kubelet keeps its node's Lease.
const NodeLeaseNamespace = "kube-node-lease"

// nodeObject is the Node the kubelet posts for node: resize.Node.V1 with
// the three pressure conditions a healthy kubelet reports beside Ready,
// and the node's hostname as its address.
func nodeObject(node *resize.Node, now time.Time) *v1.Node {
	obj := node.V1()
	beat, since := metav1.NewTime(now), metav1.NewTime(now)
	for _, c := range obj.Status.Conditions {
		if c.Type == v1.NodeReady {
			since = c.LastTransitionTime
		}
	}
	pressure := func(t v1.NodeConditionType, reason, message string) v1.NodeCondition {
		return v1.NodeCondition{Type: t, Status: v1.ConditionFalse, Reason: reason, Message: message, LastHeartbeatTime: beat, LastTransitionTime: since}
	}
	conds := []v1.NodeCondition{
		pressure(v1.NodeMemoryPressure, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
		pressure(v1.NodeDiskPressure, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
		pressure(v1.NodePIDPressure, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
	}
	for _, c := range obj.Status.Conditions {
		c.LastHeartbeatTime = beat
		conds = append(conds, c)
	}
	obj.Status.Conditions = conds
	obj.Status.Addresses = []v1.NodeAddress{{Type: v1.NodeHostName, Address: obj.Name}}
	obj.CreationTimestamp = metav1.Time{}
	return obj
}

// Register creates the node's Node object, or, when one of its name is
// there already (a kubelet restart), posts its status to it, as the
// kubelet registers with the API server. It returns the stored Node.
func (a *API) Register(ctx context.Context, node *resize.Node) (*v1.Node, error) {
	if !a.made() {
		return nil, errNotMade
	}
	if ctx == nil || node == nil || node.API() != resize.API(a) {
		return nil, errors.New("kubeapi: Register needs a context and a node made on this API")
	}
	want := nodeObject(node, time.Now())
	nodes := a.client.CoreV1().Nodes()
	got, err := nodes.Create(ctx, want, metav1.CreateOptions{})
	if err == nil {
		return got, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("kubeapi: register node %s: %w", a.node, err)
	}
	got, err = nodes.Get(ctx, a.node, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("kubeapi: register node %s: %w", a.node, err)
	}
	got, err = a.postStatus(ctx, got, nodeStatus(node, got, time.Now()))
	if err != nil {
		return nil, fmt.Errorf("kubeapi: register node %s: %w", a.node, err)
	}
	return got, nil
}

// nodeStatus is the status the kubelet posts over stored, the Node the
// API server has: its status setters update a copy of that Node, so the
// fields and conditions other components own (node-problem-detector's
// conditions, the attach/detach controller's volumesAttached) are kept,
// and a condition keeps its lastTransitionTime unless its status changes.
func nodeStatus(node *resize.Node, stored *v1.Node, now time.Time) v1.NodeStatus {
	want := nodeObject(node, now).Status
	s := *stored.Status.DeepCopy()
	s.Capacity, s.Allocatable, s.Addresses = want.Capacity, want.Allocatable, want.Addresses
	s.NodeInfo.KubeletVersion = want.NodeInfo.KubeletVersion
	s.NodeInfo.OperatingSystem = want.NodeInfo.OperatingSystem
	s.NodeInfo.Architecture = want.NodeInfo.Architecture
	for _, c := range want.Conditions {
		i := slices.IndexFunc(s.Conditions, func(o v1.NodeCondition) bool { return o.Type == c.Type })
		switch {
		case i < 0:
			c.LastTransitionTime = metav1.NewTime(now)
			s.Conditions = append(s.Conditions, c)
			continue
		case s.Conditions[i].Status == c.Status:
			c.LastTransitionTime = s.Conditions[i].LastTransitionTime
		default:
			c.LastTransitionTime = metav1.NewTime(now)
		}
		s.Conditions[i] = c
	}
	return s
}

// statusChanged reports whether status differs from stored other than in
// its conditions' lastHeartbeatTime (the kubelet's nodeStatusHasChanged):
// then the kubelet posts it at once rather than at the next StatusEvery.
func statusChanged(stored, status v1.NodeStatus) bool {
	if len(stored.Conditions) != len(status.Conditions) {
		return true
	}
	beatless := func(cs []v1.NodeCondition) map[v1.NodeConditionType]v1.NodeCondition {
		m := make(map[v1.NodeConditionType]v1.NodeCondition, len(cs))
		for _, c := range cs {
			c.LastHeartbeatTime = metav1.Time{}
			m[c.Type] = c
		}
		return m
	}
	if !equality.Semantic.DeepEqual(beatless(stored.Conditions), beatless(status.Conditions)) {
		return true
	}
	stored.Conditions, status.Conditions = nil, nil
	return !equality.Semantic.DeepEqual(stored, status)
}

// postStatus patches the Node's status to status (the kubelet's
// PatchNodeStatus: a two-way strategic merge patch of the status
// subresource) and returns the stored Node.
func (a *API) postStatus(ctx context.Context, stored *v1.Node, status v1.NodeStatus) (*v1.Node, error) {
	oldData, err := json.Marshal(v1.Node{Status: stored.Status})
	if err != nil {
		return nil, err
	}
	newData, err := json.Marshal(v1.Node{Status: status})
	if err != nil {
		return nil, err
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(oldData, newData, v1.Node{})
	if err != nil {
		return nil, err
	}
	return a.client.CoreV1().Nodes().Patch(ctx, a.node, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
}

// heartbeat renews the node's lease every RenewEvery until ctx ends, and
// at each beat reads the Node and posts the node's status over it when it
// changed or StatusEvery has passed, as the kubelet's updateNodeStatus
// does. Failures are logged and tried again at the next beat, as the
// kubelet's are.
func (a *API) heartbeat(ctx context.Context, node *resize.Node, stored *v1.Node, h Heartbeat) {
	h = h.withDefaults()
	var lease *coordinationv1.Lease
	posted := time.Now()
	beat := func() {
		var err error
		if lease, err = a.renewLease(ctx, stored, lease, h.LeaseDuration); err != nil && ctx.Err() == nil {
			a.log.Warn("renewing the node lease failed", "node", a.node, "err", err)
		}
		// The Node as the API server has it now: others change it too
		// (the node lifecycle controller marks it Unknown when the lease
		// lapses), and the patch must be from what is there. Like the
		// kubelet's tryUpdateNodeStatus, it reads at resourceVersion "0",
		// from the API server's watch cache rather than etcd.
		cur, err := a.client.CoreV1().Nodes().Get(ctx, a.node, metav1.GetOptions{ResourceVersion: "0"})
		if err != nil {
			if ctx.Err() == nil {
				a.log.Warn("reading the node failed", "node", a.node, "err", err)
			}
			return
		}
		status := nodeStatus(node, cur, time.Now())
		if time.Since(posted) < h.StatusEvery && !statusChanged(cur.Status, status) {
			return
		}
		if s, err := a.postStatus(ctx, cur, status); err != nil {
			if ctx.Err() == nil {
				a.log.Warn("posting the node status failed", "node", a.node, "err", err)
			}
		} else {
			stored, posted = s, time.Now()
		}
	}
	beat()
	every(ctx, h.RenewEvery, beat)
}

// every calls f every d until ctx ends.
func every(ctx context.Context, d time.Duration, f func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f()
		}
	}
}

// renewLease renews the node's Lease (the kubelet's lease controller):
// it creates it, owned by the Node, when there is none, and otherwise
// updates the last one it knows with a new renewTime, reading it again
// after a conflict.
func (a *API) renewLease(ctx context.Context, owner *v1.Node, last *coordinationv1.Lease, d time.Duration) (*coordinationv1.Lease, error) {
	leases := a.client.CoordinationV1().Leases(NodeLeaseNamespace)
	now := metav1.NewMicroTime(time.Now())
	if last == nil {
		got, err := leases.Get(ctx, a.node, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			secs := int32(d / time.Second)
			l := &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Name: a.node, Namespace: NodeLeaseNamespace, OwnerReferences: []metav1.OwnerReference{{
					APIVersion: "v1", Kind: "Node", Name: owner.Name, UID: owner.UID,
				}}},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: &a.node, LeaseDurationSeconds: &secs, RenewTime: &now},
			}
			return leases.Create(ctx, l, metav1.CreateOptions{})
		case err != nil:
			return nil, err
		}
		last = got
	}
	l := last.DeepCopy()
	l.Spec.RenewTime = &now
	got, err := leases.Update(ctx, l, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) {
		// Somebody else wrote it: the next beat reads it again.
		return nil, err
	}
	if err != nil {
		return last, err
	}
	return got, nil
}

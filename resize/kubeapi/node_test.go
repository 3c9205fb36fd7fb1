package kubeapi

import (
	"context"
	"errors"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/resize"
)

// newNode returns a simulated node of cfg made on a, as the resizesim
// agent makes one (its runtime stamps containers with the wall clock, as
// the API server's timestamps are), closed when the test ends, before a.
func newNode(t *testing.T, a *API, cfg resize.NodeConfig) (*resize.Node, *resize.Backend) {
	t.Helper()
	cfg.Name = a.NodeName()
	b, err := resize.Simulated(cfg, resize.WithSimContainerd(cri.WithClock(time.Now)))
	if err != nil {
		t.Fatal(err)
	}
	node, err := resize.NewNode(t.Context(), b.Config(), b.Deps(resize.Deps{Cluster: a, Clock: resize.WallClock{}, BoundPodsOnly: true}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = node.Close()
		_ = b.Close(context.Background())
	})
	return node, b
}

// conditionTypes returns the types of a node's conditions, in order.
func conditionTypes(n *v1.Node) []v1.NodeConditionType {
	var out []v1.NodeConditionType
	for _, c := range n.Status.Conditions {
		out = append(out, c.Type)
	}
	return out
}

// TestRegister: the Node the kubelet registers: the three pressure
// conditions (False) and Ready (True), in the kubelet's order, the
// resize.Node's capacity and allocatable, kubelet version v1.35.4 and the
// hostname label and address. A second Register (a kubelet restart)
// posts the status to the Node there instead of failing, through a patch
// of nodes/status.
func TestRegister(t *testing.T) {
	c := fake.NewClientset()
	a := newAPI(t, c, testNode)
	// Allocatable below capacity, so that the test tells them apart.
	capacity := v1.ResourceList{v1.ResourceCPU: resource.MustParse("8"), v1.ResourceMemory: resource.MustParse("32Gi"), v1.ResourcePods: resource.MustParse("110")}
	allocatable := v1.ResourceList{v1.ResourceCPU: resource.MustParse("7500m"), v1.ResourceMemory: resource.MustParse("31Gi"), v1.ResourcePods: resource.MustParse("110")}
	node, _ := newNode(t, a, resize.NodeConfig{Capacity: capacity, Allocatable: allocatable})
	ctx := t.Context()
	if _, err := a.Register(ctx, node); err != nil {
		t.Fatal(err)
	}
	got, err := c.CoreV1().Nodes().Get(ctx, testNode, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("no Node after Register: %v", err)
	}
	want := []v1.NodeConditionType{v1.NodeMemoryPressure, v1.NodeDiskPressure, v1.NodePIDPressure, v1.NodeReady}
	if g := conditionTypes(got); len(g) != len(want) || g[0] != want[0] || g[1] != want[1] || g[2] != want[2] || g[3] != want[3] {
		t.Errorf("conditions %v, want %v", g, want)
	}
	for _, cond := range got.Status.Conditions {
		wantStatus := v1.ConditionFalse
		if cond.Type == v1.NodeReady {
			wantStatus = v1.ConditionTrue
		}
		if cond.Status != wantStatus || cond.Reason == "" || cond.LastHeartbeatTime.IsZero() {
			t.Errorf("condition %s: status %s, reason %q, heartbeat %v; want %s with a reason and a heartbeat", cond.Type, cond.Status, cond.Reason, cond.LastHeartbeatTime, wantStatus)
		}
	}
	for _, r := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourcePods} {
		if g, w := got.Status.Capacity[r], capacity[r]; g.Cmp(w) != 0 {
			t.Errorf("capacity %s = %s, want %s", r, g.String(), w.String())
		}
		if g, w := got.Status.Allocatable[r], allocatable[r]; g.Cmp(w) != 0 {
			t.Errorf("allocatable %s = %s, want %s", r, g.String(), w.String())
		}
	}
	if v := got.Status.NodeInfo.KubeletVersion; v != "v1.35.4" {
		t.Errorf("kubeletVersion %q, want v1.35.4", v)
	}
	if got.Labels[v1.LabelHostname] != testNode || len(got.Status.Addresses) != 1 || got.Status.Addresses[0] != (v1.NodeAddress{Type: v1.NodeHostName, Address: testNode}) {
		t.Errorf("hostname label %q, addresses %v; want %s", got.Labels[v1.LabelHostname], got.Status.Addresses, testNode)
	}

	// Somebody (the node lifecycle controller) marks the node unknown
	// while its kubelet is away; the kubelet's second registration posts
	// Ready again.
	for i := range got.Status.Conditions {
		if got.Status.Conditions[i].Type == v1.NodeReady {
			got.Status.Conditions[i].Status = v1.ConditionUnknown
		}
	}
	if _, err := c.CoreV1().Nodes().UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.ClearActions()
	if _, err := a.Register(ctx, node); err != nil {
		t.Fatalf("a second Register: %v", err)
	}
	if n := len(actions(c, "patch", "nodes", "status")); n != 1 {
		t.Errorf("%d patches of nodes/status on a second Register, want 1", n)
	}
	got, err = c.CoreV1().Nodes().Get(ctx, testNode, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cond := range got.Status.Conditions {
		if cond.Type == v1.NodeReady && cond.Status != v1.ConditionTrue {
			t.Errorf("Ready is %s after the second Register, want True", cond.Status)
		}
	}
	if g := conditionTypes(got); len(g) != 4 {
		t.Errorf("conditions %v after the second Register, want the four", g)
	}
}

// TestHeartbeatDefaults: the zero Heartbeat is the kubelet's: a 40 s
// lease renewed every quarter of it, and the status every 5 minutes.
func TestHeartbeatDefaults(t *testing.T) {
	h := Heartbeat{}.withDefaults()
	if h.LeaseDuration != 40*time.Second || h.RenewEvery != 10*time.Second || h.StatusEvery != 5*time.Minute {
		t.Errorf("defaults %+v, want 40s, 10s, 5m", h)
	}
	if h := (Heartbeat{LeaseDuration: 20 * time.Second}).withDefaults(); h.RenewEvery != 5*time.Second {
		t.Errorf("renew every %s for a 20s lease, want 5s", h.RenewEvery)
	}
}

// lease returns the node's Lease as c stores it.
func lease(t *testing.T, c *fake.Clientset) *coordinationv1.Lease {
	t.Helper()
	l, err := c.CoordinationV1().Leases(NodeLeaseNamespace).Get(t.Context(), testNode, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the node's Lease: %v", err)
	}
	return l
}

// TestRenewLease: the lease controller's renewal. The first creates the
// Lease in kube-node-lease, held by the node, 40 s long, owned by the
// Node; a later one updates its renewTime; one after a restart (no lease
// known) reads the Lease there and updates it rather than creating one; a
// conflict forgets the lease so that the next beat reads it again, while
// another failure keeps it.
func TestRenewLease(t *testing.T) {
	c := fake.NewClientset()
	a := newAPI(t, c, testNode)
	ctx := t.Context()
	owner := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: testNode, UID: "node-uid"}}

	l, err := a.renewLease(ctx, owner, nil, 40*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	stored := lease(t, c)
	if h := stored.Spec.HolderIdentity; h == nil || *h != testNode {
		t.Errorf("holderIdentity %v, want %s", h, testNode)
	}
	if d := stored.Spec.LeaseDurationSeconds; d == nil || *d != 40 {
		t.Errorf("leaseDurationSeconds %v, want 40", d)
	}
	if stored.Spec.RenewTime == nil {
		t.Error("no renewTime")
	}
	want := metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: testNode, UID: "node-uid"}
	if refs := stored.OwnerReferences; len(refs) != 1 || refs[0] != want {
		t.Errorf("ownerReferences %+v, want %+v", refs, want)
	}

	// Put the renewTime an hour back, so that a renewal shows without
	// waiting.
	l.Spec.RenewTime = &metav1.MicroTime{Time: time.Now().Add(-time.Hour)}
	if l, err = c.CoordinationV1().Leases(NodeLeaseNamespace).Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	back := l.Spec.RenewTime.Time
	c.ClearActions()
	if l, err = a.renewLease(ctx, owner, l, 40*time.Second); err != nil {
		t.Fatal(err)
	}
	if rt := lease(t, c).Spec.RenewTime; rt == nil || !rt.After(back) {
		t.Errorf("renewTime %v after a renewal, want later than %v", rt, back)
	}
	if n := len(actions(c, "update", "leases", "")); n != 1 {
		t.Errorf("%d lease updates, want 1", n)
	}

	// A restarted kubelet knows no lease: it reads the one there.
	c.ClearActions()
	if got, err := a.renewLease(ctx, owner, nil, 40*time.Second); err != nil || got == nil {
		t.Fatalf("renewal with no lease known: %v, %v", got, err)
	}
	if n := len(actions(c, "create", "leases", "")); n != 0 {
		t.Errorf("%d lease creates with a Lease there, want 0", n)
	}
	if n := len(actions(c, "update", "leases", "")); n != 1 {
		t.Errorf("%d lease updates with a Lease there, want 1", n)
	}

	c.PrependReactor("update", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(coordinationv1.Resource("leases"), testNode, errors.New("the object has been modified"))
	})
	if got, err := a.renewLease(ctx, owner, l, 40*time.Second); !apierrors.IsConflict(err) || got != nil {
		t.Errorf("renewal on a conflict: %v, %v; want no lease and the conflict", got, err)
	}
	c.PrependReactor("update", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("etcd is away")
	})
	if got, err := a.renewLease(ctx, owner, l, 40*time.Second); err == nil || got != l {
		t.Errorf("renewal on an outage: %v, %v; want the lease kept and the error", got, err)
	}
}

// TestHeartbeat: heartbeat, on short periods, renews the lease and posts
// the node's status again and again, and returns once its context ends.
func TestHeartbeat(t *testing.T) {
	c := fake.NewClientset()
	a := newAPI(t, c, testNode)
	node, _ := newNode(t, a, resize.NodeConfig{})
	stored, err := a.Register(t.Context(), node)
	if err != nil {
		t.Fatal(err)
	}
	c.ClearActions()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.heartbeat(ctx, node, stored, Heartbeat{RenewEvery: time.Millisecond, StatusEvery: time.Nanosecond})
	}()
	eventually(t, "two lease renewals and two status posts", func() bool {
		return len(actions(c, "update", "leases", "")) >= 2 && len(actions(c, "patch", "nodes", "status")) >= 2
	})
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("heartbeat did not return after its context ended")
	}
	if n := len(actions(c, "create", "leases", "")); n != 1 {
		t.Errorf("%d lease creates, want 1: later beats renew the lease they hold", n)
	}
	if d := lease(t, c).Spec.LeaseDurationSeconds; d == nil || *d != 40 {
		t.Errorf("leaseDurationSeconds %v, want the default 40", d)
	}
}

// markUnknown does to the stored Node what the node lifecycle controller
// does to a node whose lease lapsed (Ready Unknown), and adds a condition
// of another owner (node-problem-detector's KernelDeadlock).
func markUnknown(t *testing.T, c *fake.Clientset) {
	t.Helper()
	n, err := c.CoreV1().Nodes().Get(t.Context(), testNode, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n.Status.Conditions {
		if cond := &n.Status.Conditions[i]; cond.Type == v1.NodeReady {
			cond.Status, cond.Reason, cond.Message = v1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status."
			cond.LastTransitionTime = metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
		}
	}
	n.Status.Conditions = append(n.Status.Conditions, v1.NodeCondition{Type: "KernelDeadlock", Status: v1.ConditionFalse, Reason: "KernelHasNoDeadlock"})
	if _, err := c.CoreV1().Nodes().UpdateStatus(t.Context(), n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// condition returns the stored Node's condition of type ct, or nil.
func condition(t *testing.T, c *fake.Clientset, ct v1.NodeConditionType) *v1.NodeCondition {
	t.Helper()
	n, err := c.CoreV1().Nodes().Get(t.Context(), testNode, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == ct {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// TestRegisterKeepsOthersConditions: registering again posts the node's
// conditions over the Node there, as the kubelet's setters update the
// Node they read: Ready is True again, and a condition another component
// owns is kept.
func TestRegisterKeepsOthersConditions(t *testing.T) {
	c := fake.NewClientset()
	a := newAPI(t, c, testNode)
	node, _ := newNode(t, a, resize.NodeConfig{})
	if _, err := a.Register(t.Context(), node); err != nil {
		t.Fatal(err)
	}
	markUnknown(t, c)
	if _, err := a.Register(t.Context(), node); err != nil {
		t.Fatal(err)
	}
	if r := condition(t, c, v1.NodeReady); r == nil || r.Status != v1.ConditionTrue || r.Reason != "KubeletReady" {
		t.Errorf("Ready after registering again: %+v, want True", r)
	}
	if condition(t, c, "KernelDeadlock") == nil {
		t.Error("registering again dropped node-problem-detector's KernelDeadlock condition")
	}
}

// TestHeartbeatPostsAChangedStatus: the kubelet checks its Node at every
// beat and posts its status at once when it differs from what the Node
// shows, not only every StatusEvery: a node marked Unknown while it was
// away is Ready again at the next beat, with a new lastTransitionTime,
// and a condition of another owner is kept. Once the Node shows the
// node's status, beats post nothing until StatusEvery.
func TestHeartbeatPostsAChangedStatus(t *testing.T) {
	c := fake.NewClientset()
	a := newAPI(t, c, testNode)
	node, _ := newNode(t, a, resize.NodeConfig{})
	stored, err := a.Register(t.Context(), node)
	if err != nil {
		t.Fatal(err)
	}
	markUnknown(t, c)
	unknownSince := condition(t, c, v1.NodeReady).LastTransitionTime
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.heartbeat(ctx, node, stored, Heartbeat{RenewEvery: time.Millisecond, StatusEvery: time.Hour})
	}()
	defer func() {
		cancel()
		<-done
	}()
	eventually(t, "Ready True again", func() bool {
		r := condition(t, c, v1.NodeReady)
		return r != nil && r.Status == v1.ConditionTrue
	})
	if condition(t, c, "KernelDeadlock") == nil {
		t.Error("the heartbeat dropped node-problem-detector's KernelDeadlock condition")
	}
	if r := condition(t, c, v1.NodeReady); r.LastTransitionTime.Equal(&unknownSince) {
		t.Errorf("Ready's lastTransitionTime is still %v, the Unknown one; want a new one for the change", r.LastTransitionTime)
	}
	posts := len(actions(c, "patch", "nodes", "status"))
	renewals := len(actions(c, "update", "leases", ""))
	eventually(t, "five more beats", func() bool { return len(actions(c, "update", "leases", "")) >= renewals+5 })
	if n := len(actions(c, "patch", "nodes", "status")) - posts; n != 0 {
		t.Errorf("%d status posts in five beats with nothing changed and StatusEvery an hour away", n)
	}
}

// TestNodeStatus: the status posted over a stored Node keeps what other
// components set (a condition, volumesAttached), keeps a condition's
// lastTransitionTime while its status holds and moves it when the status
// changes, and sets the node's capacity; statusChanged sees every
// difference but the heartbeat times.
func TestNodeStatus(t *testing.T) {
	a := newAPI(t, fake.NewClientset(), testNode)
	node, _ := newNode(t, a, resize.NodeConfig{})
	long := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	stored := &v1.Node{Status: v1.NodeStatus{
		Conditions: []v1.NodeCondition{
			{Type: "KernelDeadlock", Status: v1.ConditionFalse, LastTransitionTime: long},
			{Type: v1.NodeMemoryPressure, Status: v1.ConditionFalse, LastTransitionTime: long},
			{Type: v1.NodeReady, Status: v1.ConditionUnknown, LastTransitionTime: long},
		},
		VolumesAttached: []v1.AttachedVolume{{Name: "kubernetes.io/csi/disk", DevicePath: "/dev/sdb"}},
	}}
	s := nodeStatus(node, stored, now)
	got := map[v1.NodeConditionType]v1.NodeCondition{}
	for _, c := range s.Conditions {
		got[c.Type] = c
	}
	if len(s.Conditions) != 5 || got["KernelDeadlock"].Status != v1.ConditionFalse {
		t.Errorf("conditions %v, want the four of the node and KernelDeadlock", s.Conditions)
	}
	if c := got[v1.NodeMemoryPressure]; !c.LastTransitionTime.Equal(&long) {
		t.Errorf("MemoryPressure, unchanged, moved its lastTransitionTime to %v", c.LastTransitionTime)
	}
	if c := got[v1.NodeReady]; c.Status != v1.ConditionTrue || !c.LastTransitionTime.Time.Equal(now) {
		t.Errorf("Ready %s since %v, want True since %v", c.Status, c.LastTransitionTime, now)
	}
	if c := got[v1.NodeDiskPressure]; c.Status != v1.ConditionFalse || !c.LastTransitionTime.Time.Equal(now) {
		t.Errorf("DiskPressure, new, %s since %v; want False since %v", c.Status, c.LastTransitionTime, now)
	}
	if len(s.VolumesAttached) != 1 {
		t.Errorf("volumesAttached %v, want the stored one kept", s.VolumesAttached)
	}
	if s.Capacity.Cpu().IsZero() || s.Allocatable.Cpu().IsZero() {
		t.Errorf("capacity %v, allocatable %v; want the node's", s.Capacity, s.Allocatable)
	}
	if len(stored.Status.Conditions) != 3 || stored.Status.Conditions[2].Status != v1.ConditionUnknown {
		t.Errorf("nodeStatus changed the stored Node: %v", stored.Status.Conditions)
	}

	later := nodeStatus(node, &v1.Node{Status: s}, now.Add(time.Minute))
	if statusChanged(s, later) {
		t.Error("statusChanged for a status that differs only in heartbeat times")
	}
	for name, change := range map[string]func(*v1.NodeStatus){
		"a condition's status": func(s *v1.NodeStatus) { s.Conditions[0].Status = v1.ConditionTrue },
		"a condition more":     func(s *v1.NodeStatus) { s.Conditions = append(s.Conditions, v1.NodeCondition{Type: "Other"}) },
		"capacity":             func(s *v1.NodeStatus) { s.Capacity = v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")} },
	} {
		changed := *later.DeepCopy()
		change(&changed)
		if !statusChanged(s, changed) {
			t.Errorf("statusChanged missed a change of %s", name)
		}
	}
}

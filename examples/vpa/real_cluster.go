package main

// This file is the real API server's side of a -kubeconfig run (real.go)
// that the simulation has no need of: finding the agents' nodes and
// telling live ones from those whose agent stopped, and the run's
// namespace, made and removed as the controller manager would.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// findNodes lists the Node objects whose names have the prefix and that
// are up: Ready, schedulable, and with a Lease renewed within its
// duration (the node lifecycle controller would mark a node whose lease
// ran out NotReady; an API server without a controller manager leaves its
// Ready condition as its kubelet last posted it, so the lease is what
// tells a node whose agent stopped). With -nodes N it waits for N of them
// and uses the first N, in the order of their numbers; otherwise it uses
// those there. The smallest (by allocatable CPU) are the standard nodes,
// the others large.
func (r *realRun) findNodes(ctx context.Context) error {
	deadline := time.Now().Add(nodesWait)
	for {
		var up []v1.Node
		list, err := r.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("list the nodes: %w", err)
		}
		for _, n := range list.Items {
			if !strings.HasPrefix(n.Name, r.cfg.NodePrefix) || n.Spec.Unschedulable || !nodeReady(&n) {
				continue
			}
			fresh, err := r.leaseFresh(ctx, n.Name)
			if err != nil {
				return err
			}
			if fresh {
				up = append(up, n)
			}
		}
		want := max(r.cfg.Nodes, 1)
		if len(up) >= want {
			slices.SortFunc(up, func(a, b v1.Node) int { return compareNodeNames(r.cfg.NodePrefix, a.Name, b.Name) })
			if r.cfg.Nodes > 0 {
				up = up[:r.cfg.Nodes]
			}
			r.useNodes(up)
			return nil
		}
		if r.cfg.Nodes == 0 || time.Now().After(deadline) {
			return fmt.Errorf("%d of the %d nodes named %s* that the run needs are Ready with a fresh lease: start resizesim agent --name-prefix %s", len(up), want, r.cfg.NodePrefix, r.cfg.NodePrefix)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// useNodes records the nodes, their kinds and kubelet versions, and the
// world sized for them.
func (r *realRun) useNodes(nodes []v1.Node) {
	smallest, largest := nodes[0], nodes[0]
	for _, n := range nodes {
		if n.Status.Allocatable.Cpu().Cmp(*smallest.Status.Allocatable.Cpu()) < 0 {
			smallest = n
		}
		if n.Status.Allocatable.Cpu().Cmp(*largest.Status.Allocatable.Cpu()) > 0 {
			largest = n
		}
	}
	kind := func(name string, n v1.Node) nodeKind {
		return nodeKind{name, v1.ResourceList{
			v1.ResourceCPU: n.Status.Allocatable.Cpu().DeepCopy(), v1.ResourceMemory: n.Status.Allocatable.Memory().DeepCopy(),
			v1.ResourcePods: n.Status.Allocatable.Pods().DeepCopy()}}
	}
	r.world = worldOf(r.cfg.PodsPerNode, kind("standard", smallest), kind("large", largest))
	real := r.sum.Real
	for _, n := range nodes {
		k := kind("large", n)
		if n.Status.Allocatable.Cpu().Cmp(*smallest.Status.Allocatable.Cpu()) == 0 {
			k.name = "standard"
		}
		r.nodes = append(r.nodes, realNode{name: n.Name, kind: k, allocatable: n.Status.Allocatable})
		real.Nodes = append(real.Nodes, n.Name)
		if v := n.Status.NodeInfo.KubeletVersion; !slices.Contains(real.Kubelets, v) {
			real.Kubelets = append(real.Kubelets, v)
		}
	}
	r.sum.Nodes = len(r.nodes)
}

// nodeReady reports whether the node's Ready condition is True.
func nodeReady(n *v1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// leaseFresh reports whether the node's Lease was renewed within its
// duration.
func (r *realRun) leaseFresh(ctx context.Context, node string) (bool, error) {
	l, err := r.client.CoordinationV1().Leases(v1.NamespaceNodeLease).Get(ctx, node, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("the lease of node %s: %w", node, err)
	}
	if l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		return false, nil
	}
	return time.Since(l.Spec.RenewTime.Time) < time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second, nil
}

// compareNodeNames orders node names with the prefix by the numbers that
// follow it (node-2 before node-10), others by name.
func compareNodeNames(prefix, a, b string) int {
	x, errX := strconv.Atoi(strings.TrimPrefix(a, prefix))
	y, errY := strconv.Atoi(strings.TrimPrefix(b, prefix))
	if errX == nil && errY == nil {
		return cmp.Compare(x, y)
	}
	return strings.Compare(a, b)
}

// createNamespace creates the run's namespace, named vpa-<random>, so
// that runs never meet, and its default ServiceAccount.
func (r *realRun) createNamespace(ctx context.Context) error {
	ns, err := r.client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "vpa-"}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create the run's namespace: %w", err)
	}
	r.ns = ns.Name
	r.sum.Real.Namespace = ns.Name
	// A controller manager's serviceaccounts controller may have made it
	// first.
	_, err = r.client.CoreV1().ServiceAccounts(r.ns).Create(ctx, &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return errors.Join(fmt.Errorf("create the default ServiceAccount of %s: %w", r.ns, err), r.deleteNamespace(ctx))
	}
	return nil
}

// deleteNamespace deletes the run's namespace. A controller manager's
// namespace controller deletes what is in it and then the namespace;
// without one (its lease in kube-system is missing or stale), this does
// the controller's part: it deletes the pods at once (grace period 0;
// their kubelets, if running, stop them when they see them gone), the
// events and the ServiceAccount, then finalizes the namespace, which
// removes it. The namespace is deleted first, so that nothing new is
// created in it meanwhile (NamespaceLifecycle admission).
func (r *realRun) deleteNamespace(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupWait)
	defer cancel()
	namespaces := r.client.CoreV1().Namespaces()
	if err := namespaces.Delete(ctx, r.ns, metav1.DeleteOptions{}); err != nil {
		return err
	}
	if r.controllerManagerRuns(ctx) {
		return nil
	}
	all := metav1.ListOptions{}
	if err := r.client.CoreV1().Pods(r.ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))}, all); err != nil {
		return err
	}
	if err := r.client.CoreV1().Events(r.ns).DeleteCollection(ctx, metav1.DeleteOptions{}, all); err != nil {
		return err
	}
	if err := r.client.CoreV1().ServiceAccounts(r.ns).DeleteCollection(ctx, metav1.DeleteOptions{}, all); err != nil {
		return err
	}
	ns, err := namespaces.Get(ctx, r.ns, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	ns.Spec.Finalizers = nil
	if _, err := namespaces.Finalize(ctx, ns, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// controllerManagerRuns reports whether a controller manager holds its
// lease in kube-system, renewed within its duration. A lease the client
// may not read counts as held: a cluster that hides it is a managed one,
// which has a controller manager.
func (r *realRun) controllerManagerRuns(ctx context.Context) bool {
	l, err := r.client.CoordinationV1().Leases(metav1.NamespaceSystem).Get(ctx, controllerManagerLease, metav1.GetOptions{})
	switch {
	case apierrors.IsForbidden(err):
		return true
	case err != nil || l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil:
		return false
	}
	return time.Since(l.Spec.RenewTime.Time) < time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second
}

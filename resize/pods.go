package resize

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/resizelet/resizelet/resize/core"
)

// AddPod creates the pod in the cluster, admits it (a rejected pod gets
// phase Failed with the kubelet's reason and message and a Warning event;
// that is not an error), starts its containers and runs until quiet. It
// retries no pending resize: from 1.35 the kubelet retries (pods_added)
// only for an added pod whose spec differs from its allocation, which a
// new pod never has (the 1.33 and 1.34 profiles retry after every pod).
// A pod the cluster or the kubelet refuses (a nil pod, an invalid one, a
// UID another pod has) is an error and changes nothing, as is a pod bound
// to another node (ErrOtherNode).
// A pod without spec.nodeName keeps it empty, unless the node takes bound
// pods only (Deps.BoundPodsOnly): then AddPod binds it to the node.
func (n *Node) AddPod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error) {
	var created *v1.Pod
	return n.addPod(ctx, pod, &created)
}

// addPod is AddPod, with the pod the API server created kept in *created:
// the API server is asked only while *created is nil, so that a caller
// that goes on with a restarted kubelet after this one was closed under
// it (Fleet.CreatePod) does not create the pod twice.
func (n *Node) addPod(ctx context.Context, pod *v1.Pod, created **v1.Pod) (*v1.Pod, error) {
	if err := n.enter(ctx, "add pod"); err != nil {
		return nil, err
	}
	defer n.exit()
	if pod == nil {
		return nil, &argumentError{op: "add pod", msg: "nil pod"}
	}
	again := *created != nil
	if !again {
		pod, err := n.bindHere("add pod", pod)
		if err != nil {
			return nil, err
		}
		if *created, err = n.cluster.CreatePod(ctx, pod); err != nil {
			return nil, err
		}
	}
	c := *created
	if again {
		// Created for a kubelet that was closed before it was done with
		// the pod: this one takes the API server's pod as it is now.
		p, err := n.cluster.GetPod(ctx, c.Namespace, c.Name)
		switch {
		case err != nil || p.UID != c.UID || p.DeletionTimestamp != nil:
			// Deleted, or marked for deletion (which comes first),
			// since: handing it over would bring back a pod the API
			// server no longer has.
			return nil, fmt.Errorf("add pod %s/%s: deleted before the kubelet took it: %w", c.Namespace, c.Name, ErrPodNotFound)
		case p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed:
			// The kubelet before was done with it (it rejected it).
			return p, nil
		}
		c = p
	}
	if err := n.admit(ctx, c, true); err != nil {
		return nil, err
	}
	return n.latest(ctx, c)
}

// latest returns the API server's pod c after the kubelet took it. A
// resize the API server accepted between the pod's creation and the
// kubelet taking it was handed to a kubelet that did not know the pod yet
// (resized), which dropped it: the kubelet then gets the pod as it is now,
// as an informer would have delivered it.
func (n *Node) latest(ctx context.Context, c *v1.Pod) (*v1.Pod, error) {
	p, err := n.cluster.GetPod(ctx, c.Namespace, c.Name)
	if err != nil || p.UID != c.UID || p.Generation <= c.Generation {
		return p, err
	}
	if err := n.resized(ctx, p); err != nil {
		return nil, err
	}
	return n.cluster.GetPod(ctx, c.Namespace, c.Name)
}

// admit hands the kubelet a pod the API server has just created, and
// runs until quiet. A pod the kubelet refuses (another pod of its UID) is
// deleted from the API server again when undo is set (the call created
// it), so that the call changes nothing. A
// pod the kubelet has already (the same name and UID), which a kubelet
// that started after the API server created it found in its list, is not
// handed to it a second time, and one it has torn down since is not
// brought back.
func (n *Node) admit(ctx context.Context, created *v1.Pod, undo bool) error {
	own := *created // the core takes the top level as its own
	n.mu.Lock()
	if n.core.Has(created.Namespace, created.Name, created.UID) {
		n.mu.Unlock()
		return nil
	}
	if _, ok := n.gone[created.UID]; ok {
		n.mu.Unlock()
		return fmt.Errorf("add pod %s/%s: deleted before the kubelet took it: %w", created.Namespace, created.Name, ErrPodNotFound)
	}
	rd, err := n.coreStep(core.PodAdded{Pod: &own, Now: n.clock.Now()})
	n.cond.Broadcast()
	n.mu.Unlock()
	if err != nil {
		if undo {
			n.uncreate(ctx, created)
		}
		return fmt.Errorf("add pod %s/%s: %w", created.Namespace, created.Name, err)
	}
	return n.drain(ctx, rd)
}

// uncreate deletes pods this call created, when the call fails before the
// kubelet took them, even when it failed because ctx ended. The API's own
// error, if any, changes nothing more.
func (n *Node) uncreate(ctx context.Context, pods ...*v1.Pod) {
	ctx = context.WithoutCancel(ctx)
	for _, p := range pods {
		_ = n.cluster.DeletePod(ctx, p.Namespace, p.Name)
	}
}

// AddPods creates the pods in the cluster, in order, and hands them to the
// kubelet at once, as HandlePodAdditions takes a list: each is admitted in
// turn (against the ones before it), and the node runs until quiet (the
// pending resizes are retried only as AddPod says). It ends up where AddPod on
// each pod in turn does, in one run. A pod the cluster refuses (or a nil
// one, or one bound to another node) stops the call with an error that
// says which, and changes nothing: the pods created before it are deleted
// again. Pods without spec.nodeName are bound as AddPod binds them.
func (n *Node) AddPods(ctx context.Context, pods []*v1.Pod) ([]*v1.Pod, error) {
	if err := n.enter(ctx, "add pods"); err != nil {
		return nil, err
	}
	defer n.exit()
	for i, pod := range pods {
		if pod == nil {
			return nil, &argumentError{op: fmt.Sprintf("add pods: pods[%d]", i), msg: "nil pod"}
		}
		if name := pod.Spec.NodeName; name != "" && name != n.cfg.Name {
			return nil, fmt.Errorf("add pods: pods[%d] %s/%s: spec.nodeName is %q, not this node %q: %w", i, pod.Namespace, pod.Name, name, n.cfg.Name, ErrOtherNode)
		}
	}
	created := make([]*v1.Pod, 0, len(pods))
	for i, pod := range pods {
		// Every pod is bound here or to no node (checked above).
		pod, _ := n.bindHere("add pods", pod)
		c, err := n.cluster.CreatePod(ctx, pod)
		if err != nil {
			n.uncreate(ctx, created...)
			return nil, fmt.Errorf("add pods: pods[%d]: %w", i, err)
		}
		own := *c // the core takes the top level as its own
		created = append(created, &own)
	}
	rd, err := n.step(core.PodsAdded{Pods: created, Now: n.clock.Now()})
	if err != nil {
		n.uncreate(ctx, created...)
		return nil, fmt.Errorf("add pods: %w", err)
	}
	if err := n.drain(ctx, rd); err != nil {
		return nil, err
	}
	out := make([]*v1.Pod, 0, len(created))
	for _, c := range created {
		p, err := n.latest(ctx, c)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// DeletePod stops and removes the pod's containers and sandbox, removes its
// cgroup and checkpoint records, deletes it from the cluster, retries
// pending resizes (pods_removed) and runs until quiet. If the teardown
// fails the pod stays known, and a later DeletePod finishes the job. A
// finished pod (Succeeded or Failed) that a restarted kubelet does not
// run, having nothing to tear down, is deleted from the cluster.
func (n *Node) DeletePod(ctx context.Context, namespace, name string) error {
	if err := n.enter(ctx, "delete pod"); err != nil {
		return err
	}
	defer n.exit()
	if err := checkPodName("delete pod", namespace, name); err != nil {
		return err
	}
	return n.removePod(ctx, namespace, name)
}

// removePod is DeletePod within a call of the node.
func (n *Node) removePod(ctx context.Context, namespace, name string) error {
	n.mu.Lock()
	first, known := n.core.Pod(namespace, name)
	n.mu.Unlock()
	if !known {
		return n.deleteFinished(ctx, namespace, name)
	}
	// An API that deletes gracefully marks the pod first (its
	// deletionTimestamp), so that the teardown survives a kubelet restart:
	// the next kubelet finds the mark and finishes it.
	var marked *v1.Pod
	if gd, ok := n.cluster.(GracefulDeleter); ok {
		// Only the pod the kubelet has: one created anew under the name
		// by a call racing with this one is not this teardown's.
		p, err := gd.MarkPodDeleted(ctx, namespace, name, first.UID, n.clock.Now())
		switch {
		case errors.Is(err, errors.ErrUnsupported):
			// A wrapper of an API that does not delete gracefully.
		case errors.Is(err, ErrPodNotFound):
			// Deleted already (HandlePodRemoved): only the teardown is
			// left to do.
		case err != nil:
			return fmt.Errorf("delete pod %s/%s: %w", namespace, name, err)
		default:
			own := *p // the core takes the top level as its own
			marked = &own
		}
	}
	// The lookup and the request are one step under the lock, so that
	// another caller's deletion cannot come between them.
	n.mu.Lock()
	info, known := n.core.Pod(namespace, name)
	if !known {
		n.mu.Unlock()
		return fmt.Errorf("delete pod %s/%s: %w", namespace, name, ErrPodNotFound)
	}
	if marked != nil && marked.UID != info.UID {
		// Another call tore the marked pod down and added one anew
		// meanwhile: the mark is not this pod's.
		marked = nil
	}
	rd, err := n.coreStep(core.DeleteRequested{UID: info.UID, Now: n.clock.Now(), Pod: marked})
	n.cond.Broadcast()
	n.mu.Unlock()
	if err != nil {
		return err
	}
	if err := n.drain(ctx, rd); err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.core.DeleteError(info.UID)
}

// deleteFinished deletes from the API server a finished pod of the node
// that the kubelet does not run: a kubelet that starts skips the pods that
// have succeeded or failed (core.Start), but the real one still has them
// in its pod manager, and deletes them from the API server when they are
// deleted (its status manager, once nothing is left to tear down). Any
// other pod the kubelet does not know is ErrPodNotFound.
func (n *Node) deleteFinished(ctx context.Context, namespace, name string) error {
	pod, err := n.cluster.GetPod(ctx, namespace, name)
	if err != nil || !n.owns(pod) || (pod.Status.Phase != v1.PodSucceeded && pod.Status.Phase != v1.PodFailed) {
		return fmt.Errorf("delete pod %s/%s: %w", namespace, name, ErrPodNotFound)
	}
	if err := n.cluster.DeletePod(ctx, namespace, name); err != nil {
		return fmt.Errorf("delete pod %s/%s: %w", namespace, name, err)
	}
	// Its records go too, as the kubelet's housekeeping removes those of
	// the pods it no longer has (removeOrphans).
	n.allocated.Delete(pod.UID)
	n.actuated.Delete(pod.UID)
	return nil
}

// Pod returns what the node knows of a pod.
func (n *Node) Pod(namespace, name string) (PodInfo, error) {
	if err := n.enter(context.Background(), "pod"); err != nil {
		return PodInfo{}, err
	}
	defer n.exit()
	n.mu.Lock()
	defer n.mu.Unlock()
	info, ok := n.core.Pod(namespace, name)
	if !ok {
		return PodInfo{}, fmt.Errorf("pod %s/%s: %w", namespace, name, ErrPodNotFound)
	}
	return PodInfo(info), nil
}

// AllocatedTotal is the sum of the admitted pods' allocated requests, with
// overhead: what admission counts as used by them. A Node that NewNode
// did not make has none (nil).
func (n *Node) AllocatedTotal() v1.ResourceList {
	if n == nil || n.core == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.core.AllocatedTotal()
}

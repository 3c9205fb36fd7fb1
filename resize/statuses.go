package resize

import (
	"context"
	"errors"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/resize/core"
)

// statusWriter writes pod statuses to the API server, and deletes the
// pods the kubelet is done with, the way the kubelet's status manager does:
// one write at a time, and a write or deletion that failed is made again
// later (pkg/kubelet/status/status_manager.go, syncBatch: every ten
// seconds and whenever another status is written), so that a failure does
// not leave the API server behind for good. A pod the API server no
// longer has is forgotten; a later status of the same pod replaces the
// one that failed.
type statusWriter struct {
	// mu serializes the writes, as the status manager's one goroutine
	// does, so that a status written again never lands after a newer one.
	// It is held across an API call only, never across a cgroup write, a
	// runtime call or a checkpoint write, and never with the node's lock.
	mu     sync.Mutex
	failed map[types.UID]core.WriteStatus
	// deletes are the pods whose deletion failed, with their UID, so that
	// a pod made again under the same name is not deleted.
	deletes map[types.UID]core.DeletePod
	// newest is the Seq of the newest status of each pod given to
	// writeStatus: an older one that arrives after it (its batch was
	// performed by a slower caller) is not written over it.
	newest map[types.UID]uint64
}

// writeStatus writes a's status, and keeps it to write again if that
// failed. A status older than one written (or tried) before it is not
// written: the newer one says what the kubelet now says.
func (n *Node) writeStatus(ctx context.Context, a core.WriteStatus) error {
	w := &n.statuses
	w.mu.Lock()
	defer w.mu.Unlock()
	if a.Seq != 0 {
		if a.Seq < w.newest[a.UID] {
			return nil
		}
		if w.newest == nil {
			w.newest = map[types.UID]uint64{}
		}
		w.newest[a.UID] = a.Seq
	}
	err := n.cluster.UpdatePodStatus(ctx, a.Namespace, a.Name, a.UID, *a.Status)
	w.keep(a, err)
	return err
}

// forget drops what the writer keeps of a pod the kubelet has forgotten.
func (w *statusWriter) forget(uid types.UID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.newest, uid)
}

// keep records the outcome of a's write. The caller holds w.mu.
func (w *statusWriter) keep(a core.WriteStatus, err error) {
	if err == nil || errors.Is(err, ErrPodNotFound) {
		delete(w.failed, a.UID)
		return
	}
	if w.failed == nil {
		w.failed = map[types.UID]core.WriteStatus{}
	}
	w.failed[a.UID] = a
}

// deletePod deletes the pod from the API server, and keeps the deletion
// to make again if that failed.
func (n *Node) deletePod(ctx context.Context, a core.DeletePod) error {
	w := &n.statuses
	w.mu.Lock()
	defer w.mu.Unlock()
	err := n.deleteFromAPI(ctx, a)
	if err == nil || errors.Is(err, ErrPodNotFound) {
		return err
	}
	// The pod is still there: the deletion is made again, of its UID
	// only, so that it does not remove a pod created anew under the name.
	if w.deletes == nil {
		w.deletes = map[types.UID]core.DeletePod{}
	}
	w.deletes[a.UID] = a
	return err
}

// deleteFromAPI deletes the pod of a.UID from the API server: through a
// UIDDeleter when the API is one, and otherwise by name once the API
// server's pod of that name is seen to have that UID.
func (n *Node) deleteFromAPI(ctx context.Context, a core.DeletePod) error {
	if d, ok := n.cluster.(UIDDeleter); ok {
		return d.DeletePodUID(ctx, a.Namespace, a.Name, a.UID)
	}
	if pod, err := n.cluster.GetPod(ctx, a.Namespace, a.Name); err != nil || pod.UID != a.UID {
		return err
	}
	return n.cluster.DeletePod(ctx, a.Namespace, a.Name)
}

// retryStatuses writes again every status whose write failed, and makes
// again every deletion that failed.
func (n *Node) retryStatuses(ctx context.Context) {
	w := &n.statuses
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, a := range w.failed {
		w.keep(a, n.cluster.UpdatePodStatus(ctx, a.Namespace, a.Name, a.UID, *a.Status))
	}
	for uid, a := range w.deletes {
		if err := n.deleteFromAPI(ctx, a); err == nil || errors.Is(err, ErrPodNotFound) {
			delete(w.deletes, uid)
		}
	}
}

package core

import (
	"errors"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/allocation"
)

// deleteOp stops and removes a pod's containers and sandbox, removes its
// cgroup, and, when all of that worked, forgets the pod, deletes its
// checkpoint records and its API object, and retries the pending resizes
// (pods_removed). A teardown that failed keeps the pod, so that another
// delete can finish it.
type deleteOp struct {
	opOutput
	uid   types.UID
	phase int
}

func (o *deleteOp) advance(c *Core, done []Action, res []Result) ([]Action, bool, bool) {
	ps := c.pods[o.uid]
	if ps == nil {
		return o.take(), false, true
	}
	switch o.phase {
	case 0:
		var acts []Action
		dead := append([]string(nil), ps.dead...)
		for ctr := range allContainers(ps.pod()) {
			rec, ok := ps.containers.lookup(ctr.Name)
			if !ok {
				continue
			}
			acts = append(acts,
				c.event(&o.opOutput, ps.pod(), ctr.Name, v1.EventTypeNormal, ReasonKilling, fmt.Sprintf("Stopping container %s", ctr.Name)),
				StopContainer{Name: ctr.Name, ID: rec.id, Timeout: terminationGrace(ps.pod())})
			dead = append(dead, rec.id)
		}
		for _, id := range dead {
			acts = append(acts, RemoveContainer{ID: id})
		}
		if ps.sandboxID != "" {
			acts = append(acts, StopPodSandbox{ID: ps.sandboxID}, RemovePodSandbox{ID: ps.sandboxID})
		}
		if ps.podCgroup != "" {
			acts = append(acts, DeleteCgroup{Path: ps.podCgroup})
		}
		ps.dead = dead
		o.phase = 1
		if len(acts) == 0 {
			return o.advance(c, nil, nil)
		}
		return acts, true, false
	default:
		// What is gone is done: a container or sandbox the runtime no
		// longer has is not an error, and what was removed is forgotten,
		// so that another teardown after a failure does not stop it again.
		var errs []error
		for i, a := range done {
			err := res[i].Err
			if err == nil || res[i].NotFound {
				switch a := a.(type) {
				case RemoveContainer:
					ps.forgetContainer(a.ID)
				case RemovePodSandbox:
					ps.sandboxID = ""
				}
				continue
			}
			switch a := a.(type) {
			case StopContainer:
				errs = append(errs, fmt.Errorf("stop container %s: %w", a.Name, err))
			case RemoveContainer:
				errs = append(errs, fmt.Errorf("remove container %s: %w", a.ID, err))
			case StopPodSandbox:
				errs = append(errs, fmt.Errorf("stop sandbox: %w", err))
			case RemovePodSandbox:
				errs = append(errs, fmt.Errorf("remove sandbox: %w", err))
			case DeleteCgroup:
				errs = append(errs, fmt.Errorf("delete pod cgroup: %w", err))
			}
		}
		if len(errs) > 0 {
			ps.deleteErr = fmt.Errorf("delete pod %s/%s: %w", ps.pod().Namespace, ps.pod().Name, errors.Join(errs...))
			return o.take(), false, true
		}
		pod := ps.pod()
		c.removePod(o.uid)
		c.enqueueRetry(allocation.TriggerPodsRemoved)
		return o.take(DeleteCheckpoints{UID: o.uid}, DeletePod{Namespace: pod.Namespace, Name: pod.Name, UID: o.uid}), false, true
	}
}

func (o *deleteOp) finish(c *Core) {
	if ps := c.pods[o.uid]; ps != nil {
		// The teardown failed: try again after the pod worker's backoff.
		ps.busy = false
		c.setResync(ps, c.now.Add(BackOffPeriod))
	}
}

// forgetContainer drops a removed container from the pod's records.
func (ps *podState) forgetContainer(id string) {
	ps.containers = slices.DeleteFunc(ps.containers, func(n namedRecord) bool { return n.id == id })
	if i := slices.Index(ps.dead, id); i >= 0 {
		ps.dead = slices.Delete(ps.dead, i, i+1)
	}
}

// deleteRequested queues a pod's teardown.
func (c *Core) deleteRequested(in DeleteRequested) error {
	ps, ok := c.pods[in.UID]
	if !ok {
		return fmt.Errorf("delete pod %s: %w", in.UID, ErrUnknownPod)
	}
	c.setNow(in.Now)
	if in.Pod != nil {
		// The API server's pod with its deletion marks.
		ps.setPod(in.Pod)
	}
	// From now on the pod is torn down, never synced, until it is gone:
	// a failed teardown is tried again at the pod's next resync, as the
	// kubelet's pod worker keeps killing a pod it was told to terminate
	// (pkg/kubelet/pod_workers.go, syncTerminatingPod).
	ps.terminating = true
	if !ps.deleteRequested {
		ps.deleteRequested = true
		c.deletes++
	}
	ps.deleteErr = nil
	return nil
}

// DeleteError returns why the last teardown of a pod failed, or nil.
func (c *Core) DeleteError(uid types.UID) error {
	if !c.made() {
		return ErrNotMade
	}
	if ps := c.pods[uid]; ps != nil {
		return ps.deleteErr
	}
	return nil
}

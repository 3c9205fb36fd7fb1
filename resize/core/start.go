package core

import (
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/allocation"
)

// start rebuilds the kubelet's memory after a (re)start from what survives
// it: the API server's pods (finished ones are skipped), their checkpoint
// records, and the sandboxes and containers the runtime still has (for a
// container name with several containers, the highest attempt is current
// and the others are dead). Then every pod is admitted again in creation
// order, as HandlePodAdditions admits every pod the API server has for
// the node, and podsAddedTask ends the batch.
//
// A finished pod is skipped: the kubelet backfills its conditions too,
// but its pod worker goes straight to SyncTerminatedPod, whose status
// clears them again (determinePodResizeStatus), and it joins no queue.
func (c *Core) start(in Start) {
	c.started = true
	c.now = in.Now
	c.retry = allocation.NewRetryTimer(in.Now)
	added := newPodsAddedTask(len(in.Pods))
	for _, pod := range in.Pods {
		if pod == nil || isTerminal(pod) {
			continue
		}
		ps := c.newPodState(pod.DeepCopy())
		added.add(c, ps.pod())
		if r, ok := in.Allocated[pod.UID]; ok {
			ps.live().allocated, ps.hasAllocated = r.DeepCopy(), true
		}
		if r, ok := in.Actuated[pod.UID]; ok {
			ps.live().actuated = r.DeepCopy()
		}
		for _, sb := range in.Sandboxes {
			if sb.GetMetadata().GetUid() == string(pod.UID) && sb.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
				ps.sandboxID = sb.GetId()
			}
		}
		if ps.sandboxID == "" {
			continue
		}
		for _, ctr := range in.Containers {
			if ctr.GetPodSandboxId() != ps.sandboxID {
				continue
			}
			name, attempt := ctr.GetMetadata().GetName(), ctr.GetMetadata().GetAttempt()
			if cur, ok := ps.containers.lookup(name); ok {
				if cur.attempt > attempt {
					ps.dead = append(ps.dead, ctr.GetId())
					continue
				}
				ps.dead = append(ps.dead, cur.id)
			}
			ps.containers.put(name, containerRecord{id: ctr.GetId(), attempt: attempt})
		}
	}
	for _, uid := range c.order {
		c.enqueueAlloc(&admitTask{uid: uid})
		// A pod the API server marked for deletion is torn down: the
		// kubelet before the restart may have been cut short.
		if ps := c.pods[uid]; ps.terminating && !ps.deleteRequested {
			ps.deleteRequested = true
			c.deletes++
		}
	}
	c.enqueueAlloc(added)
}

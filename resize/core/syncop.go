package core

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// The pod sync's state and memory (syncOp), kept apart from its steps
// (sync.go) so that the files the steps call on, such as reconcile.go,
// depend on this one and not on the steps.

// syncPhase is where a pod sync stands.
type syncPhase int

const (
	syncBegin       syncPhase = iota // ask whether the pod cgroup exists
	syncEnsure                       // create it, run the sandbox, read the containers
	syncObserved                     // plan; kill what must restart
	syncKilled                       // resize, if anything to resize
	syncResize                       // read the pod cgroup
	syncResizeRead                   // check memory usage before a limit goes down
	syncUsageRead                    // the check's verdict
	syncWrites                       // the ordered writes
	syncResized                      // their outcome
	syncReconcile                    // with ReconcilePodCgroups: compare the pod cgroup with the allocation
	syncReconciled                   // the reconcile write's outcome
	syncRolledBack                   // the 1.36 sandbox rollback after a failed pod cgroup write
	syncStartNext                    // create the next container to start
	syncCreated                      // checkpoint it, start it
	syncStarted                      // its outcome
	syncFinalRead                    // the runtime's view after the sync
	syncFinalStatus                  // completion, status
	syncDone
)

// syncOp is the kubelet's SyncPod for one admitted pod, as a conversation
// of batches, one phase (syncPhase) after the other: planPod decides what
// to kill and start, doPodResizeAction what to resize in place. Where the
// kubelet returns early, so does the op.
type syncOp struct {
	opOutput
	uid   types.UID
	phase syncPhase

	alloc    *v1.Pod
	allowed  bool
	states   map[string]ContainerState
	statuses map[string]*runtimeapi.ContainerStatus
	actions  PodActions
	current  PodCgroupReading
	// desired is the pod cgroup config of the allocation, taken once when
	// the pod cgroup is read: the memory check and the writes both need it.
	desired cgconfig.ResourceConfig
	check   memoryCheck
	// rollbacks are the 1.36 sandbox rollbacks of the resize writes.
	rollbacks []sandboxRollback
	// newSandbox is set when this sync runs the pod's sandbox.
	newSandbox bool

	resizeErr error
	// resizeStart is when the in-place resize began.
	resizeStart time.Time
	errs        []error
	startNext   int
	attempt     uint32

	// scratch is a reused buffer: actions being built (take copies them
	// into the batch).
	scratch []Action
}

// finish schedules the pod's next sync: a minute after a good one, ten
// seconds after a failed one, none for a pod that has finished. A good
// sync that only read leaves the pod quiet (Core.tick), unless a resize
// of it is under way or waits. The op then goes back to the core's pool.
func (o *syncOp) finish(c *Core) {
	if ps := c.pods[o.uid]; ps != nil {
		ps.busy = false
		ps.quiet = false
		switch {
		case c.finished(ps):
			// A finished pod has no pod worker left to resync it.
			c.disarm(ps)
		case len(o.errs) > 0:
			c.setResync(ps, c.now.Add(BackOffPeriod))
		default:
			c.setResync(ps, c.now.Add(ResyncInterval))
			ps.quiet = !o.acted && !ps.dirty && ps.conds.pending == nil && ps.conds.inProgress == nil
		}
	}
	o.recycle()
	c.syncPool = append(c.syncPool, o)
}

// newSync returns a sync of the pod, reusing a finished one's memory.
func (c *Core) newSync(uid types.UID) *syncOp {
	o := fromPool[syncOp](&c.syncPool)
	o.uid = uid
	return o
}

// recycle clears the op for another sync, keeping its memory: the maps
// and buffers of a finished sync are read by nothing after it.
func (o *syncOp) recycle() {
	out, states, statuses := o.opOutput, o.states, o.statuses
	out.reset()
	clear(states)
	clear(statuses)
	clear(o.errs)
	clear(o.scratch)
	clear(o.rollbacks)
	// The plan's slices are kept for the next sync's plan, emptied so that
	// they hold nothing of this pod.
	a := o.actions
	clear(a.Kill)
	clear(a.Start)
	clear(a.UpdateMemory)
	clear(a.UpdateCPU)
	*o = syncOp{opOutput: out, states: states, statuses: statuses, errs: o.errs[:0], scratch: o.scratch[:0], rollbacks: o.rollbacks[:0],
		actions: PodActions{Kill: a.Kill[:0], Start: a.Start[:0], UpdateMemory: a.UpdateMemory[:0], UpdateCPU: a.UpdateCPU[:0]}}
}

package core

import (
	"fmt"
	"log/slog"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/allocation"
)

// SetLogging turns the log records on or off. Off (the default), the core
// builds no record and Ready.Logs stays nil; on, Skip also refuses while
// resizes are pending, since each periodic retry it would jump over logs
// its decisions.
func (c *Core) SetLogging(on bool) {
	if c == nil {
		return
	}
	c.logging = on
	if !on {
		c.logs = nil
	}
}

// takeLogs hands the records logged since the last Step to the caller,
// who owns them: the core starts a new slice.
func (c *Core) takeLogs() []LogRecord {
	logs := c.logs
	c.logs = nil
	return logs
}

// info logs an info line at verbosity v. Callers check c.logging first,
// so that the attributes are not built when logging is off.
func (c *Core) info(v int, msg string, attrs ...slog.Attr) {
	c.logs = append(c.logs, LogRecord{Time: c.now, V: v, Msg: msg, Attrs: attrs})
}

// logError logs an error line; err may be nil (logger.Error(nil, ...)).
func (c *Core) logError(err error, msg string, attrs ...slog.Attr) {
	if err != nil {
		attrs = append([]slog.Attr{slog.Any("err", err)}, attrs...)
	}
	c.logs = append(c.logs, LogRecord{Time: c.now, Error: true, Msg: msg, Attrs: attrs})
}

// podError logs one of the kubelet's error lines about a pod (klog.KObj),
// with err.
func (c *Core) podError(pod *v1.Pod, err error, msg string) {
	if c.logging {
		c.logError(err, msg, kObj(pod))
	}
}

// logAdmissionDenied is canAdmitPod's line when an admit handler refuses a
// pod, new or resized (pkg/kubelet/allocation/allocation_manager.go).
func (c *Core) logAdmissionDenied(pod *v1.Pod, reason, message string) {
	if c.logging {
		c.info(0, "Pod admission denied", podUID(pod.UID), kObj(pod), slog.String("reason", reason), slog.String("message", message))
	}
}

// logResizeDecision is what canResizePod logs for a refused resize
// (allocation_manager.go): the admit handler's refusal of a Deferred
// resize, and the capacity and resource-manager checks of an Infeasible
// one. The early checks of handlePodResourcesResize (platform, gate,
// static pod, swap, pod-level gate) log nothing.
func (c *Core) logResizeDecision(pod *v1.Pod, d allocation.Decision) {
	if !c.logging {
		return
	}
	switch d.Outcome {
	case allocation.Deferred:
		c.logAdmissionDenied(pod, d.Reason, d.Message)
		c.info(3, "Resize cannot be accommodated", kObj(pod), slog.String("reason", d.Reason), slog.String("message", d.Message))
	case allocation.Infeasible:
		switch d.Reason {
		case "insufficient_node_allocatable":
			c.info(3, d.Message, kObj(pod))
		case "guaranteed_pod_cpu_manager_static_policy", "guaranteed_pod_memory_manager_static_policy":
			// These two print the pod with format.Pod.
			c.info(3, d.Message, podDesc(pod))
		}
	}
}

// logRetryOutcome is retryPendingResizes' line for one pending resize
// (allocation_manager.go): the error of handlePodResourcesResize, or the
// state it left. A resize with nothing to allocate any more is "successfully
// allocated" too, as the kubelet's switch falls through to its default.
func (c *Core) logRetryOutcome(pod *v1.Pod, outcome allocation.Outcome, err error) {
	if !c.logging {
		return
	}
	switch {
	case err != nil:
		c.logError(err, "Failed to handle pod resources resize", kObj(pod))
	case outcome == allocation.Deferred:
		c.info(4, "Pod resize is deferred; will reevaluate later", kObj(pod))
	case outcome == allocation.Infeasible:
		c.info(4, "Pod resize is infeasible", kObj(pod))
	default:
		c.info(4, "Pod resize successfully allocated", kObj(pod))
	}
}

// logPendingPodGone is retryPendingResizes' line for a queued pod the
// kubelet no longer has (allocation_manager.go).
func (c *Core) logPendingPodGone(uid types.UID) {
	if c.logging {
		c.info(4, "Pod not found; removing from pending resizes", podUID(uid))
	}
}

// logRetriedAfterTimeout is the allocation manager's Run loop's line for
// each resize its periodic retry allocated (allocation_manager.go).
func (c *Core) logRetriedAfterTimeout(pod string) {
	c.info(0, "Successfully retried resize after timeout", slog.String("pod", pod))
}

// logKills are SyncPod's and killContainer's lines for the containers a
// resize restarts, one container after the other as the kubelet kills
// them, from the StopContainer calls performed and their results
// (pkg/kubelet/kuberuntime/kuberuntime_manager.go, SyncPod;
// kuberuntime_container.go, killContainer).
func (c *Core) logKills(pod *v1.Pod, done []Action, res []Result) {
	if !c.logging {
		return
	}
	for i, a := range done {
		stop, ok := a.(StopContainer)
		if !ok {
			continue
		}
		// SyncPod logs the ContainerID value, killContainer its String.
		key, id := kubeContainerID(stop.ID), containerID(stop.ID)
		c.info(3, "Killing unwanted container for pod", slog.String("containerName", stop.Name), slog.Any("containerID", key), kObj(pod))
		c.info(2, "Killing container with a grace period", kObj(pod), podUID(pod.UID),
			slog.String("containerName", stop.Name), slog.String("containerID", id), slog.Int64("gracePeriod", stop.Timeout))
		if err := res[i].Err; err != nil {
			c.logError(err, "Container termination failed with gracePeriod", kObj(pod), podUID(pod.UID),
				slog.String("containerName", stop.Name), slog.String("containerID", id), slog.Int64("gracePeriod", stop.Timeout))
			c.logError(err, "killContainer for pod failed", slog.String("containerName", stop.Name), slog.Any("containerID", key), kObj(pod))
			continue
		}
		c.info(3, "Container exited normally", kObj(pod), podUID(pod.UID), slog.String("containerName", stop.Name), slog.String("containerID", id))
	}
}

// logResizeWrites are doPodResizeAction's lines for the resize writes
// performed, in order (kuberuntime_manager.go: setPodCgroupConfig,
// updatePodContainerResources; kuberuntime_container.go:
// updatePodSandboxResources): a failed pod cgroup write, a runtime that
// does not implement or refuses UpdatePodSandboxResources, the start of
// each resource's container updates and a failed one. alloc is the
// allocated pod and memory the planned memory updates: the writes' first
// UpdateContainerResources calls are theirs, the CPU ones follow.
func (c *Core) logResizeWrites(pod, alloc *v1.Pod, memory []ContainerUpdate, done []Action, res []Result) {
	if !c.logging {
		return
	}
	memoryUpdates := 0
	for _, u := range memory {
		if findContainer(alloc, u.Name) != nil {
			memoryUpdates++
		}
	}
	resource := v1.ResourceMemory
	var updating v1.ResourceName // the resource whose container updates have started
	updates := 0
	var last UpdateContainerResources
	updateFailed := func(err error) {
		c.logError(err, "updateContainerResources failed", slog.String("container", last.Name), slog.Any("cID", kubeContainerID(last.ID)),
			podDesc(pod), slog.String("resourceName", string(updating)))
		c.logError(err, "updatePodContainerResources failed", podDesc(pod), slog.String("resource", string(updating)))
	}
	for i, a := range done {
		err := res[i].Err
		switch a := a.(type) {
		case SetCgroup:
			resource = v1.ResourceCPU
			if a.Values.MemoryLimit != nil {
				resource = v1.ResourceMemory
			}
			if err != nil {
				c.logError(err, "Failed to set cgroup config", slog.String("resource", string(resource)), kObj(pod))
			}
		case UpdatePodSandboxResources:
			if a.Resource != "" {
				resource = a.Resource
			}
			switch {
			case res[i].Unimplemented:
				c.info(3, "updatePodSandboxResources failed: unimplemented; this call is best-effort: proceeding with resize",
					slog.String("sandboxID", a.Request.GetPodSandboxId()))
			case err != nil:
				c.logError(fmt.Errorf("updatePodSandboxResources failed for sanboxID %q: %w", a.Request.GetPodSandboxId(), err),
					"Failed to notify runtime for UpdatePodSandboxResources", slog.String("resource", string(resource)), kObj(pod))
			}
		case UpdateContainerResources:
			r := v1.ResourceCPU
			if updates < memoryUpdates {
				r = v1.ResourceMemory
			}
			updates++
			if r != updating {
				updating = r
				c.info(5, "Updating container resources", kObj(pod))
			}
			last = a
			if err != nil {
				updateFailed(err)
			}
		case WriteActuatedContainer:
			// The kubelet records the actuated resources inside
			// updateContainerResources: a failure is that call's.
			if err != nil {
				updateFailed(err)
			}
		}
	}
}

// logSyncError is the pod worker's line for a sync that failed
// (pkg/kubelet/pod_workers.go), for a sync whose one failure is the
// resize: the error is the kubelet's PodSyncResult.Error for it
// (pkg/kubelet/container/sync_result.go).
func (c *Core) logSyncError(pod *v1.Pod, resizeErr error) {
	if c.logging {
		err := fmt.Errorf("failed to %q for %q with %w: %q", "ResizePodInPlace", formatPod(pod), ErrResizePodInPlace, resizeErr.Error())
		c.logError(err, "Error syncing pod, skipping", kObj(pod), podUID(pod.UID))
	}
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
)

// This file is the VPA updater of the example, in its InPlaceOrRecreate
// mode. It reaches the cluster only through the client-go
// kubernetes.Interface it is given, as the VPA updater's own code does
// (vertical-pod-autoscaler/pkg/updater/restriction/
// pods_inplace_restriction.go, pods_eviction_restriction.go): it watches
// the pods into a cache (watchcache.go) and picks a workload's from it with
// a label selector, gets the pod it resizes, patches the resize subresource,
// gets a pod to read its resize conditions and the resources its status
// shows, watches the kubelet's ResizeCompleted events, and deletes the pods
// it gives up on. In the simulation the client is kubeclient.New over a
// resize.Fleet; with -kubeconfig it is a clientset of a real API server
// (real.go), and nothing in this file tells the two apart but the wait
// for the kubelet's answer (answerWithin), which only a kubelet that
// answers after the patch has returned needs, and how far the pod cache
// waits (podCache.current). What only the simulation
// does (the clock it reads the time from, the usage the recommendations
// come from, the replacement's node) is sim.go's, and real.go's on a real
// API server.

// The updater's constants, the VPA updater's for InPlaceOrRecreate
// (vertical-pod-autoscaler/pkg/updater/restriction/pods_inplace_restriction.go,
// DeferredResizeUpdateTimeout): a resize Deferred for more than five
// minutes falls back to eviction; and its default update threshold, a 10%
// difference between the requests and the recommendation. The warm-up is
// the example's: the recommender needs some samples before its
// percentiles mean anything.
const (
	deferredTimeout = 5 * time.Minute
	updateThreshold = 0.10
	warmUp          = 5 * time.Minute
)

// The events the VPA updater records on the pods it acts on
// (pods_inplace_restriction.go, InPlaceUpdate; pods_eviction_restriction.go,
// Evict), and the kubelet's event the updater times a resize by
// (pkg/kubelet/events/event.go, ResizeCompleted).
const (
	reasonInPlaceResized  = "InPlaceResizedByVPA"
	messageInPlace        = "Pod was resized in place by VPA Updater."
	reasonEvicted         = "EvictedByVPA"
	messageEvicted        = "Pod was evicted by VPA Updater to apply resource recommendation."
	updaterSource         = "vpa-updater"
	reasonResizeCompleted = "ResizeCompleted"
)

// vpaObject is a VerticalPodAutoscaler as the updater reads it: the label
// selector of the pods it targets, the container its recommendation is
// for, and the recommendation (its status.recommendation's target; the
// recommender of sim.go writes it).
type vpaObject struct {
	name, namespace string
	selector        string
	container       string
	target          amounts
}

// attempt is an in-place resize the updater watches.
type attempt struct {
	at        time.Time
	container string // the container resized
	from, to  amounts
	// generation is the pod's generation the resize made, which the
	// kubelet's ResizeCompleted event names.
	generation int64
	deferred   bool // seen Deferred
}

// updater is the VPA updater. Its only way to the cluster is client;
// it records its events with recorder, as the VPA updater's
// InPlaceUpdate and Evict take one, and reads the time from now.
type updater struct {
	client   kubernetes.Interface
	recorder record.EventRecorder
	now      func() time.Time
	// patch is how it patches the resize subresource: "json" (a JSON
	// patch, as the VPA updater sends it) or "strategic" (a strategic
	// merge patch, as kubectl does).
	patch string
	// replace is what an eviction sets off: the pod's ReplicaSet creates
	// a replacement, which the VPA admission controller gives the
	// recommended requests (to). It is called right after the eviction
	// with the pod as it was, so that the example's output tells one
	// story; in a cluster the ReplicaSet controller reacts on its own.
	replace func(ctx context.Context, evicted *v1.Pod, cause string, to amounts) error
	log     *logger
	sum     *Summary
	flight  map[types.NamespacedName]*attempt // in-place resizes being watched, by pod
	// pods is what the updater knows of the pods of its namespace, from a
	// watch (watchPods).
	pods *podCache
	// completed is the kubelet's ResizeCompleted events the updater times
	// its resizes by, from a watch (watchCompletions).
	completed *completionCache
	// answerWithin is how long inPlaceUpdate waits for the kubelet's
	// answer to a resize (answer). Zero reads the pod once, right after
	// the patch: the simulation's kubelet answers within the patch.
	answerWithin time.Duration
}

// observe is the first half of an updater loop: it times the in-place
// resizes the kubelet completed since the last loop (from its
// ResizeCompleted events), then looks at those still in flight.
func (u *updater) observe(ctx context.Context) error {
	if err := u.completions(ctx); err != nil {
		return err
	}
	return u.checkInFlight(ctx)
}

// update is the second half: every running pod of each VPA object whose
// requests are more than the update threshold off the recommendation is
// resized in place. The pods come from the updater's pod cache (pods), as
// they were before any resize of this loop, and are taken in the order
// of their names (the example's order; the VPA updater's ranks them by
// how far off they are).
func (u *updater) update(ctx context.Context, vpas []vpaObject) error {
	if err := u.pods.wait(ctx); err != nil {
		return err
	}
	type candidate struct {
		name string
		vpa  *vpaObject
	}
	var all []candidate
	for i := range vpas {
		vpa := &vpas[i]
		if vpa.namespace != u.pods.namespace {
			return fmt.Errorf("the pods of %s: namespace %q, the updater watches %q", vpa.name, vpa.namespace, u.pods.namespace)
		}
		selector, err := labels.Parse(vpa.selector)
		if err != nil {
			return fmt.Errorf("the pods of %s: selector %q: %w", vpa.name, vpa.selector, err)
		}
		u.pods.each(selector, func(p *cachedPod) {
			j := slices.IndexFunc(p.containers, func(c cachedContainer) bool { return c.name == vpa.container })
			if p.running && j >= 0 && vpa.offBy(p.containers[j].requests) {
				all = append(all, candidate{p.name, vpa})
			}
		})
	}
	slices.SortFunc(all, func(a, b candidate) int { return strings.Compare(a.name, b.name) })
	for _, c := range all {
		if u.flight[types.NamespacedName{Namespace: c.vpa.namespace, Name: c.name}] != nil {
			continue
		}
		// The resize is made from the pod itself, as it is now.
		pod, err := u.client.CoreV1().Pods(c.vpa.namespace).Get(ctx, c.name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			// Gone since the cache saw it (a real API server's watch
			// brings a deletion a little after it).
			continue
		case err != nil:
			return fmt.Errorf("get %s to resize it: %w", c.name, err)
		}
		i := containerIndex(pod, c.vpa.container)
		if i < 0 {
			continue
		}
		if current := requestsOf(pod.Spec.Containers[i]); c.vpa.offBy(current) {
			if err := u.inPlaceUpdate(ctx, pod, i, current, c.vpa.target); err != nil {
				return err
			}
		}
	}
	return nil
}

// offBy reports whether the VPA's recommendation is more than the update
// threshold off the requests.
func (vpa *vpaObject) offBy(requests amounts) bool {
	return offBy(requests.cpu, vpa.target.cpu) || offBy(requests.memory, vpa.target.memory)
}

// offBy reports whether the recommendation differs from the request by
// more than the update threshold.
func offBy(request, target int64) bool {
	if request == 0 {
		return target != 0
	}
	diff := float64(target-request) / float64(request)
	return diff > updateThreshold || diff < -updateThreshold
}

// containerIndex is the index of the container named name in the pod's
// spec, -1 when it has none.
func containerIndex(p *v1.Pod, name string) int {
	return slices.IndexFunc(p.Spec.Containers, func(c v1.Container) bool { return c.Name == name })
}

// requestsOf is a container's cpu and memory requests.
func requestsOf(c v1.Container) amounts {
	return amounts{cpu: c.Resources.Requests.Cpu().MilliValue(), memory: c.Resources.Requests.Memory().Value()}
}

// inPlaceUpdate patches the resize subresource of container i of the pod
// to the requests to, as the VPA updater's InPlaceUpdate does, and reads
// the kubelet's answer from the pod's conditions, which the VPA updater
// sees in its next loop. A resize the API server refuses (from 1.36, one
// beyond the node's allocatable: 403 Forbidden) falls back to eviction.
func (u *updater) inPlaceUpdate(ctx context.Context, pod *v1.Pod, i int, from, to amounts) error {
	pods := u.client.CoreV1().Pods(pod.Namespace)
	pt, patch, err := resizePatch(u.patch, pod, i, to)
	if err != nil {
		return err
	}
	patched, err := pods.Patch(ctx, pod.Name, pt, patch, metav1.PatchOptions{}, "resize")
	switch {
	case apierrors.IsForbidden(err):
		u.sum.Refused++
		u.log.printf("resize    %s on %s %s -> %s refused: %v", pod.Name, pod.Spec.NodeName, from, to, err)
		return u.evict(ctx, pod, "refused", to)
	case err != nil:
		return fmt.Errorf("resize %s: %w", pod.Name, err)
	}
	u.pods.written(patched.ResourceVersion)
	u.recorder.Event(pod, v1.EventTypeNormal, reasonInPlaceResized, messageInPlace)
	u.sum.Requested++
	a := &attempt{at: u.now(), container: pod.Spec.Containers[i].Name, from: from, to: to, generation: patched.Generation}
	got, err := u.answer(ctx, pod.Name, pod.Namespace, i, patched.Generation)
	if err != nil {
		return fmt.Errorf("get %s after its resize: %w", pod.Name, err)
	}
	node := got.Spec.NodeName
	switch reason, msg := resizeState(got, i); reason {
	case "":
		u.sum.AtOnce++
		u.complete(podKey(pod), a, a.at)
		u.log.printf("resize    %s on %s %s -> %s done", pod.Name, node, from, to)
	case v1.PodReasonDeferred:
		u.sum.Deferred++
		a.deferred = true
		u.flight[podKey(pod)] = a
		u.log.printf("resize    %s on %s %s -> %s deferred: %s", pod.Name, node, from, to, msg)
	case v1.PodReasonInfeasible:
		u.sum.Infeasible++
		u.log.printf("resize    %s on %s %s -> %s infeasible: %s", pod.Name, node, from, to, msg)
		return u.evict(ctx, got, "infeasible", to)
	default:
		u.sum.InProgress++
		u.flight[podKey(pod)] = a
		u.log.printf("resize    %s on %s %s -> %s in progress", pod.Name, node, from, to)
	}
	return nil
}

// answer gets the pod after a resize of its container i that made
// generation, to read the kubelet's answer. With answerWithin zero it gets
// it once. A kubelet on a real API server answers after the patch has
// returned, when its watch brings it the pod: then answer gets the pod
// again, 10ms later, then twice as long each time up to a quarter of a
// second, until its status has observed generation and the resize is no
// longer in progress (done, Deferred, Infeasible or in error), or until
// answerWithin has passed, when the resize is taken to be in progress.
// Until then the pod may still show the conditions of its last resize.
func (u *updater) answer(ctx context.Context, name, namespace string, i int, generation int64) (*v1.Pod, error) {
	pods := u.client.CoreV1().Pods(namespace)
	deadline := time.Now().Add(u.answerWithin)
	wait := 10 * time.Millisecond
	for {
		got, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil || u.answerWithin <= 0 {
			return got, err
		}
		if reason, _ := resizeState(got, i); got.Status.ObservedGeneration >= generation && reason != "InProgress" {
			return got, nil
		}
		if time.Now().Add(wait).After(deadline) {
			return got, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 250*time.Millisecond)
	}
}

// resizeState is where the resize of the pod's container i stands, from
// the pod's conditions, as the VPA updater reads them
// (CanEvictInPlacingPod): the PodResizePending reason (Deferred or
// Infeasible), "InProgress" (or "Error", with the condition's message,
// when PodResizeInProgress has reason Error), or "" when neither
// condition is set and the container's status shows the spec's requests:
// the resize is done.
func resizeState(p *v1.Pod, i int) (reason, message string) {
	for _, c := range p.Status.Conditions {
		switch c.Type {
		case v1.PodResizePending:
			return c.Reason, c.Message
		case v1.PodResizeInProgress:
			if c.Reason == v1.PodReasonError {
				return "Error", c.Message
			}
			return "InProgress", ""
		}
	}
	name := p.Spec.Containers[i].Name
	j := slices.IndexFunc(p.Status.ContainerStatuses, func(s v1.ContainerStatus) bool { return s.Name == name })
	if j < 0 || p.Status.ContainerStatuses[j].Resources == nil {
		return "InProgress", ""
	}
	status := p.Status.ContainerStatuses[j].Resources.Requests
	if requestsOf(p.Spec.Containers[i]) != (amounts{status.Cpu().MilliValue(), status.Memory().Value()}) {
		return "InProgress", ""
	}
	return "", ""
}

// podKey is the key of the pod's in-place resize in the flight.
func podKey(p *v1.Pod) types.NamespacedName {
	return types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
}

// complete records a completed in-place resize.
func (u *updater) complete(key types.NamespacedName, a *attempt, at time.Time) {
	delete(u.flight, key)
	u.sum.Completed++
	u.sum.Durations = append(u.sum.Durations, at.Sub(a.at))
	if a.deferred {
		u.sum.DeferredDone++
		u.sum.DeferredDurations = append(u.sum.DeferredDurations, at.Sub(a.at))
	}
}

// completions completes the in-place resizes in flight whose pod's
// latest ResizeCompleted event (from the updater's event cache) names the
// generation the resize made or a later one, at the event's time, in the
// order of those times. A completed resize leaves the flight, so an event
// completes nothing twice.
func (u *updater) completions(ctx context.Context) error {
	if len(u.flight) == 0 {
		return nil
	}
	if err := u.completed.wait(ctx); err != nil {
		return err
	}
	type done struct {
		pod types.NamespacedName
		at  time.Time
	}
	var dones []done
	for pod, a := range u.flight {
		if e, ok := u.completed.of(pod); ok && e.generation >= a.generation {
			dones = append(dones, done{pod, e.at})
		}
	}
	sort.Slice(dones, func(i, j int) bool {
		if !dones[i].at.Equal(dones[j].at) {
			return dones[i].at.Before(dones[j].at)
		}
		return dones[i].pod.String() < dones[j].pod.String()
	})
	for _, d := range dones {
		a := u.flight[d.pod]
		u.complete(d.pod, a, d.at)
		u.log.printfAt(d.at, "done      %s %s -> %s after %s", d.pod.Name, a.from, a.to, d.at.Sub(a.at))
	}
	return nil
}

// completedGeneration is the generation a ResizeCompleted event's message
// names (Pod resize completed: {"containers":[...],"generation":N},
// pkg/kubelet/events/resize.go), 0 when it names none.
func completedGeneration(message string) int64 {
	i := strings.Index(message, "{")
	if i < 0 {
		return 0
	}
	var m struct {
		Generation int64 `json:"generation"`
	}
	if json.Unmarshal([]byte(message[i:]), &m) != nil {
		return 0
	}
	return m.Generation
}

// checkInFlight gets each pod whose in-place resize is still in flight and
// reads its conditions: an Infeasible resize, one that ended in error, and
// one Deferred for longer than the timeout fall back to eviction, as the
// VPA updater's do with InPlaceOrRecreate (CanEvictInPlacingPod); the
// others wait.
func (u *updater) checkInFlight(ctx context.Context) error {
	keys := make([]types.NamespacedName, 0, len(u.flight))
	for key := range u.flight {
		keys = append(keys, key)
	}
	slices.SortFunc(keys, func(a, b types.NamespacedName) int { return strings.Compare(a.String(), b.String()) })
	for _, key := range keys {
		a, name := u.flight[key], key.Name
		p, err := u.client.CoreV1().Pods(key.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("get %s, whose resize is in flight: %w", key, err)
		}
		i := containerIndex(p, a.container)
		if i < 0 {
			return fmt.Errorf("pod %s has no container %q", name, a.container)
		}
		reason, msg := resizeState(p, i)
		if reason == v1.PodReasonDeferred && !a.deferred {
			// In progress when it was requested (its kubelet had not
			// answered yet), Deferred since: it counts as Deferred from
			// now, as one found Infeasible here counts as Infeasible. In
			// the simulation the kubelet answers within the patch, and
			// this example's resizes are never in progress when
			// requested.
			u.sum.Deferred++
			a.deferred = true
			u.log.printf("deferred  %s on %s: %s", name, p.Spec.NodeName, msg)
		}
		switch {
		case reason == "":
			// Done since the events were listed (another pod's resize or
			// removal made room): its ResizeCompleted comes with the
			// next list, which times it.
		case reason == v1.PodReasonInfeasible:
			u.sum.Infeasible++
			u.log.printf("infeasible %s on %s: %s", name, p.Spec.NodeName, msg)
			delete(u.flight, key)
			if err := u.evict(ctx, p, "infeasible", a.to); err != nil {
				return err
			}
		case reason == "Error":
			delete(u.flight, key)
			if err := u.evict(ctx, p, "error", a.to); err != nil {
				return err
			}
		case reason == v1.PodReasonDeferred && u.now().Sub(a.at) > deferredTimeout:
			delete(u.flight, key)
			if err := u.evict(ctx, p, "deferred", a.to); err != nil {
				return err
			}
		}
	}
	return nil
}

// evict deletes the pod, as the VPA updater's Evict does through the
// eviction subresource: the client-go adapter of resizelet does not serve
// evictions (there is no PodDisruptionBudget to check them against), so
// the updater deletes the pod, with its UID as a precondition so that a
// pod of the same name made since is never the one deleted. Then the
// pod's ReplicaSet replaces it (replace).
func (u *updater) evict(ctx context.Context, pod *v1.Pod, cause string, to amounts) error {
	err := u.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		Preconditions: metav1.NewUIDPreconditions(string(pod.UID)),
	})
	if err != nil {
		return fmt.Errorf("evict %s: %w", pod.Name, err)
	}
	u.recorder.Event(pod, v1.EventTypeNormal, reasonEvicted, messageEvicted)
	u.sum.Recreated[cause]++
	return u.replace(ctx, pod, cause, to)
}

// jsonPatchOp is one operation of a JSON patch (RFC 6902), in the shape
// of the VPA's PatchRecord.
type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// resizePatch is the patch that sets the requests of container i of the
// pod to to, and its limits in the proportion they have to its requests
// now (proportionalLimits), of the kind asked for:
//
//   - "json", the VPA updater's JSON patch
//     (vertical-pod-autoscaler/pkg/updater/inplace/resource_updates.go,
//     CalculatePatches and appendPatches, with the operations of
//     pkg/admission-controller/resource/pod/patch/util.go): an "add" of an
//     empty resources object when the container has neither requests nor
//     limits, an "add" of an empty requests or limits map when the
//     container has none and a value goes in it, then an "add" of each
//     value at /spec/containers/i/resources/{requests,limits}/{cpu,memory}
//     (requests before limits, cpu before memory: the VPA walks a map, in
//     no fixed order);
//   - "strategic", the strategic merge patch kubectl sends, naming the
//     container.
func resizePatch(kind string, pod *v1.Pod, i int, to amounts) (types.PatchType, []byte, error) {
	c := pod.Spec.Containers[i]
	requests := to.list()
	limits := proportionalLimits(c.Resources.Limits, c.Resources.Requests, requests)
	names := []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory}
	switch kind {
	case "json":
		var ops []jsonPatchOp
		if c.Resources.Requests == nil && c.Resources.Limits == nil {
			ops = append(ops, jsonPatchOp{"add", fmt.Sprintf("/spec/containers/%d/resources", i), v1.ResourceRequirements{}})
		}
		for _, part := range []struct {
			field         string
			current, next v1.ResourceList
		}{{"requests", c.Resources.Requests, requests}, {"limits", c.Resources.Limits, limits}} {
			if part.current == nil && len(part.next) > 0 {
				ops = append(ops, jsonPatchOp{"add", fmt.Sprintf("/spec/containers/%d/resources/%s", i, part.field), v1.ResourceList{}})
			}
			for _, name := range names {
				if q, ok := part.next[name]; ok {
					ops = append(ops, jsonPatchOp{"add", fmt.Sprintf("/spec/containers/%d/resources/%s/%s", i, part.field, name), q.String()})
				}
			}
		}
		b, err := json.Marshal(ops)
		return types.JSONPatchType, b, err
	case "strategic":
		asStrings := func(l v1.ResourceList) map[v1.ResourceName]string {
			if len(l) == 0 {
				return nil
			}
			out := map[v1.ResourceName]string{}
			for name, q := range l {
				out[name] = q.String()
			}
			return out
		}
		type resources struct {
			Requests map[v1.ResourceName]string `json:"requests,omitempty"`
			Limits   map[v1.ResourceName]string `json:"limits,omitempty"`
		}
		type container struct {
			Name      string    `json:"name"`
			Resources resources `json:"resources"`
		}
		var patch struct {
			Spec struct {
				Containers []container `json:"containers"`
			} `json:"spec"`
		}
		patch.Spec.Containers = []container{{Name: c.Name, Resources: resources{Requests: asStrings(requests), Limits: asStrings(limits)}}}
		b, err := json.Marshal(patch)
		return types.StrategicMergePatchType, b, err
	}
	return "", nil, fmt.Errorf("patch kind %q: want json or strategic", kind)
}

// proportionalLimits are the limits for the requests next of a container
// whose limits and requests are limits and requests now, as the VPA keeps
// them (vertical-pod-autoscaler/pkg/utils/vpa/limit_and_request_scaling.go,
// GetProportionalLimit, without a LimitRange's default): no limit where
// the container has none; the request itself where the container has no
// request or a request equal to the limit; otherwise the limit scaled by
// next over the current request, cpu in millicores and memory in bytes,
// rounded down (and capped at the largest int64).
func proportionalLimits(limits, requests, next v1.ResourceList) v1.ResourceList {
	out := v1.ResourceList{}
	for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
		lim, ok := limits[name]
		rec, hasRec := next[name]
		if !ok || lim.Value() == 0 || !hasRec || rec.Value() == 0 {
			continue
		}
		req, hasReq := requests[name]
		if !hasReq || req.Value() == 0 || req.MilliValue() == lim.MilliValue() {
			out[name] = rec.DeepCopy()
			continue
		}
		value := func(q resource.Quantity) int64 { return q.Value() }
		scaled := func(v int64) *resource.Quantity { return resource.NewQuantity(v, lim.Format) }
		if name == v1.ResourceCPU {
			value = func(q resource.Quantity) int64 { return q.MilliValue() }
			scaled = func(v int64) *resource.Quantity { return resource.NewMilliQuantity(v, lim.Format) }
		}
		var x big.Int
		x.Mul(big.NewInt(value(lim)), big.NewInt(value(rec)))
		x.Quo(&x, big.NewInt(value(req)))
		v := int64(math.MaxInt64)
		if x.IsInt64() {
			v = x.Int64()
		}
		out[name] = *scaled(v)
	}
	return out
}

package core

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/qos"
)

// PodInfo is what the kubelet knows of one pod beyond its API object.
type PodInfo struct {
	UID       types.UID
	Admitted  bool
	PodCgroup string // the pod cgroup's path below the cgroup root
	// Allocated is the allocated resources per container name (regular
	// containers and sidecars).
	Allocated map[string]v1.ResourceRequirements
	// Actuated is the actuated resources per container name.
	Actuated map[string]v1.ResourceRequirements
	// ContainerIDs is the current runtime container ID per container name.
	ContainerIDs map[string]string
	// ContainerCgroups is the current container cgroup path per container name.
	ContainerCgroups map[string]string
	SandboxID        string
}

// Pod returns what the kubelet knows of a pod, and whether it knows it.
func (c *Core) Pod(namespace, name string) (PodInfo, bool) {
	ps := c.podByName(namespace, name)
	if ps == nil {
		return PodInfo{}, false
	}
	info := PodInfo{
		UID:              ps.uid,
		Admitted:         ps.admitted,
		PodCgroup:        ps.podCgroup,
		SandboxID:        ps.sandboxID,
		ContainerIDs:     map[string]string{},
		ContainerCgroups: map[string]string{},
	}
	for _, rec := range ps.containers {
		info.ContainerIDs[rec.name] = rec.id
		info.ContainerCgroups[rec.name] = cgconfig.ContainerCgroupName(ps.podCgroup, rec.id, c.s.cfg.CgroupDriver)
	}
	if ps.hasAllocated {
		info.Allocated = ps.live().allocated.DeepCopy().ContainerResources
	}
	if ps.live().actuated.ContainerResources != nil {
		info.Actuated = ps.live().actuated.DeepCopy().ContainerResources
	}
	return info, true
}

// Knows reports whether the kubelet knows the pod, without copying
// anything of it.
func (c *Core) Knows(namespace, name string) bool {
	return c.podByName(namespace, name) != nil
}

// Has reports whether the kubelet knows the pod of that name with that
// UID.
func (c *Core) Has(namespace, name string, uid types.UID) bool {
	ps := c.podByName(namespace, name)
	return ps != nil && ps.uid == uid
}

// Stale reports whether pod is an older generation of a pod the kubelet
// has (the same UID, a lower metadata.generation): an update the kubelet's
// informer would never deliver after the newer one. A driver whose
// callers hand it the API server's answers concurrently drops such a pod
// rather than take the pod's spec back to what it was.
func (c *Core) Stale(pod *v1.Pod) bool {
	if pod == nil {
		return false
	}
	ps := c.podByName(pod.Namespace, pod.Name)
	return ps != nil && ps.uid == pod.UID && pod.Generation < ps.pod().Generation
}

// APIPod returns a copy of the pod as the kubelet sees it: the spec the
// API server last gave it and the status the kubelet last wrote.
func (c *Core) APIPod(namespace, name string) (*v1.Pod, bool) {
	ps := c.podByName(namespace, name)
	if ps == nil {
		return nil, false
	}
	return ps.pod().DeepCopy(), true
}

// AllocatedTotal is the sum of the admitted, active pods' allocated
// requests, with overhead: what admission counts as used by them.
func (c *Core) AllocatedTotal() v1.ResourceList {
	if !c.made() {
		return nil
	}
	total := v1.ResourceList{}
	opts := qos.Options{SkipPodLevelResources: !c.s.profile.PodLevelResources()}
	for _, uid := range c.order {
		ps := c.pods[uid]
		if !ps.admitted || ps.isTerminal() {
			continue
		}
		p, _ := ps.allocatedPod()
		for name, q := range qos.PodRequests(p, opts) {
			if cur, ok := total[name]; ok {
				cur.Add(q)
				total[name] = cur
			} else {
				total[name] = q.DeepCopy()
			}
		}
	}
	return total
}

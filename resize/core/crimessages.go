package core

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/qos"
)

// CRIMessages builds, for one node configuration, the CRI messages the
// kubelet sends for a pod: the sandbox config, a container's config, the
// LinuxContainerResources of an UpdateContainerResources call and the
// UpdatePodSandboxResources request. It is the core's own code
// (criconfig.go) made callable without running a node, so that a check
// of a runtime (package cri/conform) sends exactly what a kubelet would.
//
// The pod is read, never changed. A pod without status.qosClass is taken
// to have the class its spec gives it, as the API server would set it.
//
// A CRIMessages that NewCRIMessages did not make (nil, or the zero value,
// which has no configuration) builds nothing: its methods answer
// ErrNotMade, or a zero value where they have no error result; so does
// every method given a nil pod.
type CRIMessages struct {
	s settings
	// made is set by NewCRIMessages.
	made bool
}

// NewCRIMessages returns the builder for cfg, defaulted and validated as
// New does it.
func NewCRIMessages(cfg NodeConfig) (*CRIMessages, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &CRIMessages{s: newSettings(cfg), made: true}, nil
}

// Config returns the defaulted configuration the messages are built for.
func (m *CRIMessages) Config() NodeConfig {
	if !m.usable() {
		return NodeConfig{}
	}
	return m.s.cfg
}

// usable reports whether NewCRIMessages made m.
func (m *CRIMessages) usable() bool { return m != nil && m.made }

// withQOS returns pod, or a shallow copy of it with its QoS class set when
// the status lacks one: the OOM score the kubelet sends depends on it.
func withQOS(pod *v1.Pod) *v1.Pod {
	if pod.Status.QOSClass != "" {
		return pod
	}
	cp := *pod
	cp.Status.QOSClass = qos.GetPodQOS(pod)
	return &cp
}

// PodCgroup is the pod's cgroup below the hierarchy root, as the kubelet
// names it on this node (NodeConfig.PodCgroup).
func (m *CRIMessages) PodCgroup(pod *v1.Pod) string {
	if !m.usable() || pod == nil {
		return ""
	}
	return m.s.podCgroupName(withQOS(pod).Status.QOSClass, pod.UID)
}

// SandboxConfig is the RunPodSandbox config the kubelet sends for pod, with
// podCgroup (a path below the hierarchy root) as the cgroup parent.
func (m *CRIMessages) SandboxConfig(pod *v1.Pod, podCgroup string) *runtimeapi.PodSandboxConfig {
	if !m.usable() || pod == nil {
		return nil
	}
	return m.s.sandboxConfig(withQOS(pod), podCgroup)
}

// ContainerConfig is the CreateContainer config of the pod's container
// name at the given restart attempt.
func (m *CRIMessages) ContainerConfig(pod *v1.Pod, name string, attempt uint32) (*runtimeapi.ContainerConfig, error) {
	if !m.usable() {
		return nil, ErrNotMade
	}
	c, err := containerNamed(pod, name)
	if err != nil {
		return nil, err
	}
	return m.s.containerConfig(withQOS(pod), c, attempt), nil
}

// ContainerResources is the LinuxContainerResources the kubelet sends in
// UpdateContainerResources for the pod's container name once its resources
// are the ones in the pod's spec: every field it sets (shares, quota and
// period, memory limit, OOM score, on cgroup v2 memory.oom.group), the
// same message the node's resize sends (resize.go builds it with the same
// function).
func (m *CRIMessages) ContainerResources(pod *v1.Pod, name string) (*runtimeapi.LinuxContainerResources, error) {
	if !m.usable() {
		return nil, ErrNotMade
	}
	c, err := containerNamed(pod, name)
	if err != nil {
		return nil, err
	}
	return m.s.containerResources(withQOS(pod), c), nil
}

// PodSandboxResources is the UpdatePodSandboxResources request the kubelet
// sends for the sandbox once the pod cgroup holds what the pod's spec asks
// for (cgconfig.PodConfig): the overhead, and the pod cgroup values minus
// the overhead.
func (m *CRIMessages) PodSandboxResources(sandboxID string, pod *v1.Pod) *runtimeapi.UpdatePodSandboxResourcesRequest {
	if !m.usable() || pod == nil {
		return nil
	}
	rc := cgconfig.PodConfig(pod, m.s.podConfigOptions())
	return m.s.sandboxResourcesRequest(sandboxID, pod, rc)
}

// MemoryDecreaseCheck is the kubelet's usage check before memory limits go
// down (validateMemoryResizeAction) for a resize of the pod's container
// name, with runtime ID containerID, from its resources in old to those in
// pod, when the kubelet set the pod cgroup for old: podUsage is the pod
// cgroup's memory usage and stats and statsErr what ContainerStats
// answered for the container. checked is false when the kubelet would not
// check at all (no limit goes down); err is the error it stops the resize
// with, before any UpdateContainerResources, or nil when it goes on.
func (m *CRIMessages) MemoryDecreaseCheck(old, pod *v1.Pod, name, containerID string, podUsage int64, stats *runtimeapi.ContainerStats, statsErr error) (checked bool, err error) {
	if !m.usable() {
		return false, ErrNotMade
	}
	if old == nil {
		return false, errors.New("memory decrease check: nil old pod")
	}
	oc, err := containerNamed(old, name)
	if err != nil {
		return false, err
	}
	nc, err := containerNamed(pod, name)
	if err != nil {
		return false, err
	}
	// The pod cgroup as the kubelet left it for old; without a limit it
	// reads back as unlimited, in the version's own terms (readingOf).
	cur := PodCgroupReading{Memory: cgconfig.Unlimited, Quota: cgconfig.Unlimited, Period: m.s.cpuPeriod}
	if m.s.cfg.CgroupVersion == cgconfig.V1 {
		cur.Memory = cgconfig.V1UnlimitedMemory
	}
	if rc := cgconfig.PodConfig(old, m.s.podConfigOptions()); rc.Memory != nil && *rc.Memory != 0 {
		cur.Memory = *rc.Memory
	}
	update := ContainerUpdate{Name: name, ID: containerID, Current: valuesOf(oc.Resources), Desired: valuesOf(nc.Resources)}
	ids := containerRecords{{name: name, containerRecord: containerRecord{id: containerID}}}
	mc, ok := m.s.planMemoryCheck(pod, cur, PodActions{UpdateMemory: []ContainerUpdate{update}}, ids)
	if !ok {
		return false, nil
	}
	var done []Action
	var res []Result
	for _, a := range mc.reads(m.PodCgroup(pod)) {
		done = append(done, a)
		switch a.(type) {
		case ReadMemoryUsage:
			res = append(res, Result{Usage: podUsage})
		case ReadContainerStats:
			res = append(res, Result{Stats: stats, Err: statsErr})
		}
	}
	return true, mc.verdict(pod, done, res)
}

// containerNamed finds a container or sidecar of the pod by name.
func containerNamed(pod *v1.Pod, name string) (*v1.Container, error) {
	if pod == nil {
		return nil, fmt.Errorf("container %q: nil pod", name)
	}
	if c := findContainer(pod, name); c != nil {
		return c, nil
	}
	return nil, fmt.Errorf("pod %s/%s has no container %q", pod.Namespace, pod.Name, name)
}

package frozen

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// podDict is the dictionary frozen pods are compressed against: the
// protobuf encoding of a typical running pod (field tags, resource names,
// the usual defaults, condition types, a container status), so that a
// small pod finds most of its bytes in it. It is built once from a fixed
// template, so it is the same in every process: a frozen pod never
// outlives the process anyway.
var podDict = mustMarshal(templatePod())

func templatePod() *v1.Pod {
	rl := func(cpu, mem string) v1.ResourceList {
		return v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse(mem)}
	}
	req := v1.ResourceRequirements{Requests: rl("100m", "128Mi"), Limits: rl("200m", "256Mi")}
	at := metav1.Unix(1767225600, 0)
	grace := int64(30)
	pending := v1.PreemptLowerPriority
	links := true
	container := func(name string) v1.Container {
		return v1.Container{
			Name: name, Image: "registry.k8s.io/pause:3.10", Resources: req,
			ResizePolicy: []v1.ContainerResizePolicy{
				{ResourceName: v1.ResourceCPU, RestartPolicy: v1.NotRequired},
				{ResourceName: v1.ResourceMemory, RestartPolicy: v1.RestartContainer},
			},
			TerminationMessagePath: v1.TerminationMessagePathDefault, TerminationMessagePolicy: v1.TerminationMessageReadFile,
			ImagePullPolicy: v1.PullIfNotPresent,
		}
	}
	status := func(name, id string) v1.ContainerStatus {
		started := true
		return v1.ContainerStatus{
			Name: name, Image: "registry.k8s.io/pause:3.10", ImageID: "registry.k8s.io/pause:3.10",
			ContainerID: "containerd://" + id, Ready: true, Started: &started,
			State:              v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: at}},
			AllocatedResources: req.Requests, Resources: req.DeepCopy(),
		}
	}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "pod", Namespace: metav1.NamespaceDefault, UID: "00000000-0000-5000-8000-000000000000",
			Generation: 1, CreationTimestamp: at,
		},
		Spec: v1.PodSpec{
			Containers:    []v1.Container{container("c1"), container("c2")},
			RestartPolicy: v1.RestartPolicyAlways, TerminationGracePeriodSeconds: &grace, DNSPolicy: v1.DNSClusterFirst,
			SecurityContext: &v1.PodSecurityContext{}, SchedulerName: v1.DefaultSchedulerName,
			PreemptionPolicy: &pending, EnableServiceLinks: &links, NodeName: "node-1",
		},
		Status: v1.PodStatus{
			Phase: v1.PodRunning, QOSClass: v1.PodQOSBurstable, StartTime: &at, ObservedGeneration: 1,
			Conditions: []v1.PodCondition{
				{Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: v1.PodReasonDeferred, ObservedGeneration: 1, LastProbeTime: at, LastTransitionTime: at},
				{Type: v1.PodResizeInProgress, Status: v1.ConditionTrue, ObservedGeneration: 1, LastProbeTime: at, LastTransitionTime: at},
			},
			ContainerStatuses: []v1.ContainerStatus{status("c1", "ctr-1"), status("c2", "ctr-2")},
		},
	}
}

func mustMarshal(p *v1.Pod) []byte {
	b, err := p.Marshal()
	if err != nil {
		panic("frozen: the dictionary's template pod does not encode: " + err.Error())
	}
	return b
}

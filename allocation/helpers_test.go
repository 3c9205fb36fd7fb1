package allocation

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// rl builds a ResourceList from "name=quantity" pairs.
func rl(pairs ...string) v1.ResourceList {
	if len(pairs) == 0 {
		return nil
	}
	out := v1.ResourceList{}
	for _, p := range pairs {
		name, q, ok := strings.Cut(p, "=")
		if !ok {
			panic("bad pair " + p)
		}
		out[v1.ResourceName(name)] = resource.MustParse(q)
	}
	return out
}

// ctr builds a container with requests and limits.
func ctr(name string, requests, limits v1.ResourceList) v1.Container {
	return v1.Container{Name: name, Resources: v1.ResourceRequirements{Requests: requests, Limits: limits}}
}

// mkPod builds a pod with the containers; its QoS class is left for the
// status (set it with withQOS) or computed.
func mkPod(uid string, containers ...v1.Container) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), Name: uid, Namespace: "default"},
		Spec:       v1.PodSpec{Containers: containers},
	}
}

func withQOS(p *v1.Pod, c v1.PodQOSClass) *v1.Pod {
	p.Status.QOSClass = c
	return p
}

// withStatus gives container name a status carrying resources (requests)
// and allocated resources.
func withStatus(p *v1.Pod, name string, statusRequests, allocated v1.ResourceList) *v1.Pod {
	p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, v1.ContainerStatus{
		Name:               name,
		Resources:          &v1.ResourceRequirements{Requests: statusRequests},
		AllocatedResources: allocated,
	})
	return p
}

// resized returns a copy of p with container i's resources replaced.
func resized(p *v1.Pod, i int, requests, limits v1.ResourceList) *v1.Pod {
	out := p.DeepCopy()
	out.Spec.Containers[i].Resources = v1.ResourceRequirements{Requests: requests, Limits: limits}
	return out
}

func linuxNode(allocatable v1.ResourceList) NodeConfig {
	return NodeConfig{Allocatable: allocatable, OS: "linux", CPUManagerPolicy: "none", MemoryManagerPolicy: "None", SwapBehavior: "NoSwap"}
}

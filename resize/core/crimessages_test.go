package core

import (
	"maps"
	"testing"

	"google.golang.org/protobuf/proto"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/resize/profile"
)

// TestCRIMessagesAreTheNodes holds the messages kubeletcri builds from a
// pod alone, as package cri/conform asks for them, to what a node running
// the core sends: the sandbox and container configs of a new pod, the
// UpdateContainerResources message of an in-place resize and the last
// UpdatePodSandboxResources request, on both cgroup versions.
func TestCRIMessagesAreTheNodes(t *testing.T) {
	for _, version := range []cgconfig.Version{cgconfig.V1, cgconfig.V2} {
		t.Run(version.String(), func(t *testing.T) {
			cfg := NodeConfig{CgroupVersion: version, CgroupRoot: "private"}
			w := newWorld(t, cfg)
			var sent []Action
			w.fail = func(a Action) error {
				sent = append(sent, a)
				return nil
			}
			pod := testPod("p", resources("250m", "64Mi", "500m", "128Mi"))
			w.add(pod)
			m := newSettings(cfg.WithDefaults()).cri
			podCgroup := cfg.WithDefaults().PodCgroup(pod.Status.QOSClass, pod.UID)
			var sandboxID, containerID string
			for _, a := range sent {
				switch a := a.(type) {
				case RunPodSandbox:
					if want := m.SandboxConfig(pod, podCgroup); !proto.Equal(a.Config, want) {
						t.Errorf("sandbox config:\nnode %v\nmessages %v", a.Config, want)
					}
				case CreateContainer:
					if want := m.ContainerConfig(pod, &pod.Spec.Containers[0], 0); !proto.Equal(a.Config, want) {
						t.Errorf("container config:\nnode %v\nmessages %v", a.Config, want)
					}
				}
			}
			for _, sb := range w.sandboxes {
				sandboxID = sb.Id
			}
			for id := range w.containers {
				containerID = id
			}
			if podCgroup != "private/kubepods/burstable/poduid-p" {
				t.Errorf("PodCgroup = %q", podCgroup)
			}

			sent = nil
			w.resize("p", resources("500m", "64Mi", "1", "96Mi"))
			resized, _ := w.c.APIPod("default", "p")
			var updates []*runtimeapi.LinuxContainerResources
			var sandbox *runtimeapi.UpdatePodSandboxResourcesRequest
			for _, a := range sent {
				switch a := a.(type) {
				case UpdateContainerResources:
					if a.ID != containerID {
						t.Errorf("update of %s, want %s", a.ID, containerID)
					}
					updates = append(updates, a.Resources.GetLinux())
				case UpdatePodSandboxResources:
					sandbox = a.Request
				}
			}
			if len(updates) == 0 || sandbox == nil {
				t.Fatalf("the resize sent no update (%d) or no sandbox request (%v)", len(updates), sandbox)
			}
			if want, last := m.ContainerResources(resized, &resized.Spec.Containers[0]), updates[len(updates)-1]; !proto.Equal(last, want) {
				t.Errorf("UpdateContainerResources:\nnode %v\nmessages %v", last, want)
			}
			if want := m.SandboxResources(sandboxID, resized, cgconfig.PodConfig(resized, m.PodConfigOptions())); !proto.Equal(sandbox, want) {
				t.Errorf("UpdatePodSandboxResources:\nnode %v\nmessages %v", sandbox, want)
			}
		})
	}
}

// TestContainerUnifiedByVersion pins the unified settings of a container's
// resources (generateLinuxContainerResources in
// pkg/kubelet/kuberuntime/kuberuntime_container_linux.go): memory.oom.group
// on cgroup v2 in every version; from 1.37 with MemoryQoS on (its default)
// memory.min and memory.low of "0" under the default reservation policy
// None, and no memory.high without a throttling factor; with MemoryQoS off
// on 1.37, memory.high "max"; nothing on cgroup v1.
func TestContainerUnifiedByVersion(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  NodeConfig
		want map[string]string
	}{
		{"1.35", NodeConfig{Profile: profile.V135}, map[string]string{"memory.oom.group": "1"}},
		{"1.36", NodeConfig{Profile: profile.V136}, map[string]string{"memory.oom.group": "1"}},
		{"1.36 MemoryQoS gate on is not reproduced", NodeConfig{Profile: profile.V136, FeatureGates: map[string]bool{profile.GateMemoryQoS: true}},
			map[string]string{"memory.oom.group": "1"}},
		{"1.37", NodeConfig{Profile: profile.V137}, map[string]string{"memory.oom.group": "1", "memory.min": "0", "memory.low": "0"}},
		{"1.37 MemoryQoS off", NodeConfig{Profile: profile.V137, FeatureGates: map[string]bool{profile.GateMemoryQoS: false}},
			map[string]string{"memory.oom.group": "1", "memory.high": "max"}},
		{"1.37 cgroup v1", NodeConfig{Profile: profile.V137, CgroupVersion: cgconfig.V1}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSettings(tc.cfg.WithDefaults())
			pod := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Resources: resources("100m", "64Mi", "", "128Mi")}}}}
			pod.Status.QOSClass = v1.PodQOSBurstable
			got := s.cri.ContainerResources(pod, &pod.Spec.Containers[0]).Unified
			if !maps.Equal(got, tc.want) {
				t.Errorf("unified = %v, want %v", got, tc.want)
			}
		})
	}
}

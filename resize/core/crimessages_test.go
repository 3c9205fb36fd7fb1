package core

import (
	"testing"

	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// TestCRIMessagesAreTheNodes holds CRIMessages to what a node running the
// core sends: the sandbox and container configs of a new pod, the
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
			m, err := NewCRIMessages(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var sandboxID, containerID string
			for _, a := range sent {
				switch a := a.(type) {
				case RunPodSandbox:
					if want := m.SandboxConfig(pod, m.PodCgroup(pod)); !proto.Equal(a.Config, want) {
						t.Errorf("sandbox config:\nnode %v\nmessages %v", a.Config, want)
					}
				case CreateContainer:
					want, err := m.ContainerConfig(pod, "c1", 0)
					if err != nil {
						t.Fatal(err)
					}
					if !proto.Equal(a.Config, want) {
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
			if m.PodCgroup(pod) != "private/kubepods/burstable/poduid-p" {
				t.Errorf("PodCgroup = %q", m.PodCgroup(pod))
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
			want, err := m.ContainerResources(resized, "c1")
			if err != nil {
				t.Fatal(err)
			}
			if last := updates[len(updates)-1]; !proto.Equal(last, want) {
				t.Errorf("UpdateContainerResources:\nnode %v\nmessages %v", last, want)
			}
			if want := m.PodSandboxResources(sandboxID, resized); !proto.Equal(sandbox, want) {
				t.Errorf("UpdatePodSandboxResources:\nnode %v\nmessages %v", sandbox, want)
			}
		})
	}
}

// TestCRIMessagesMemoryDecreaseCheck: the check CRIMessages offers is the
// node's, container and pod alike, and does not run on an increase.
func TestCRIMessagesMemoryDecreaseCheck(t *testing.T) {
	m, err := NewCRIMessages(NodeConfig{CgroupVersion: cgconfig.V1})
	if err != nil {
		t.Fatal(err)
	}
	old := testPod("p", resources("250m", "64Mi", "500m", "96Mi"))
	lower := testPod("p", resources("250m", "32Mi", "500m", "32Mi"))
	stats := &runtimeapi.ContainerStats{Memory: &runtimeapi.MemoryUsage{UsageBytes: &runtimeapi.UInt64Value{Value: 40 << 20}}}
	checked, err := m.MemoryDecreaseCheck(old, lower, "c1", "ctr-1", 41<<20, stats, nil)
	want := `cannot decrease memory limits: [attempting to set pod memory limit (33554432) below current usage (42991616), attempting to set container "c1" memory limit (33554432) below current usage (42991616)]`
	if !checked || err == nil || err.Error() != want {
		t.Errorf("below usage: checked %v, err %v; want %s", checked, err, want)
	}
	if checked, err := m.MemoryDecreaseCheck(lower, old, "c1", "ctr-1", 41<<20, stats, nil); checked || err != nil {
		t.Errorf("increase: checked %v, err %v; want no check", checked, err)
	}
	if _, err := m.MemoryDecreaseCheck(old, lower, "nope", "", 0, nil, nil); err == nil {
		t.Error("an unknown container gave no error")
	}
	if _, err := NewCRIMessages(NodeConfig{CgroupDriver: "bogus"}); err == nil {
		t.Error("an invalid config gave no error")
	}
}

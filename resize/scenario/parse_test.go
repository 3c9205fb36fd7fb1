package scenario_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/scenario"
)

const validPods = `
pods:
- apiVersion: v1
  kind: Pod
  metadata: {name: web}
  spec:
    containers:
    - name: app
      resources: {requests: {cpu: 100m}}
`

func TestParseRejectsInvalidFiles(t *testing.T) {
	tests := []struct {
		name      string
		yaml      string
		wantStep  int
		wantField string
		wantMsg   string
	}{
		{"not YAML", "name: [unclosed\n", -1, "", "not valid YAML"},
		{"duplicate key", "name: a\nname: b\nsteps: [{advance: 1s}]\n", -1, "", "not valid YAML"},
		{"not a map", "- a\n- b\n", -1, "", "want a map"},
		{"missing name", "steps: [{advance: 1s}]\n", -1, "name", "required"},
		{"unknown top-level key", "name: x\nstep: []\n", -1, "step", "unknown key"},
		{"no steps", "name: x\n", -1, "steps", "at least one step"},
		{"empty steps", "name: x\nsteps: []\n", -1, "steps", "at least one step"},
		{"unknown kubelet", "name: x\nkubelet: '1.30'\nsteps: [{advance: 1s}]\n", -1, "kubelet", "unknown kubelet version"},
		{"bad capacity quantity", "name: x\nnode: {capacity: {cpu: 12zz}}\nsteps: [{advance: 1s}]\n", -1, "node.capacity.cpu", "malformed quantity"},
		{"bad cgroup version", "name: x\nnode: {cgroupVersion: v3}\nsteps: [{advance: 1s}]\n", -1, "node.cgroupVersion", "not one of"},
		{"unknown node key", "name: x\nnode: {cpus: 4}\nsteps: [{advance: 1s}]\n", -1, "node.cpus", "unknown key"},
		{"bad period", "name: x\nnode: {cpuCFSQuotaPeriod: fast}\nsteps: [{advance: 1s}]\n", -1, "node.cpuCFSQuotaPeriod", "malformed duration"},
		{"pod without name", "name: x\npods: [{spec: {containers: [{name: a}]}}]\nsteps: [{advance: 1s}]\n", -1, "pods[0].metadata.name", "required"},
		{"unknown feature gate", "name: x\nnode: {featureGates: {InPlacePodVerticalScalingg: true}}\nsteps: [{advance: 1s}]\n", -1, "node.featureGates.InPlacePodVerticalScalingg", "unrecognized feature gate: InPlacePodVerticalScalingg (the resize path's gates kubelet 1.35 knows: CustomCPUCFSQuotaPeriod, DisableCPUQuotaWithExclusiveCPUs, InPlacePodLevelResourcesVerticalScaling,"},
		{"feature gate of a later kubelet", "name: x\nkubelet: \"1.36\"\nnode: {featureGates: {PodLevelResourcesFixDefaulting: true}}\nsteps: [{advance: 1s}]\n", -1, "node.featureGates.PodLevelResourcesFixDefaulting", "unrecognized feature gate"},
		{"pod unknown field", "name: x\npods: [{metadata: {name: p}, spec: {containerz: []}}]\nsteps: [{advance: 1s}]\n", -1, "pods[0].spec.containerz", "unknown field"},
		{"pod unknown field deep", "name: x\npods: [{metadata: {name: p}, spec: {containers: [{name: a, resource: {}}]}}]\nsteps: [{advance: 1s}]\n", -1, "pods[0].spec.containers[0].resource", "unknown field"},
		{"pod field in the wrong case", "name: x\npods: [{metadata: {name: p}, spec: {containers: [{Name: a}]}}]\nsteps: [{advance: 1s}]\n", -1, "pods[0].spec.containers[0].Name", "case-sensitive"},
		{"pod bad quantity", "name: x\npods: [{metadata: {name: p}, spec: {containers: [{name: a, resources: {requests: {memory: 256MB}}}]}}]\nsteps: [{advance: 1s}]\n", -1, "pods[0].spec.containers[0].resources.requests.memory", `malformed quantity "256MB"`},
		{"pod bad init quantity", "name: x\npods: [{metadata: {name: p}, spec: {initContainers: [{name: i}], containers: [{name: a}], resources: {limits: {cpu: lots}}}}]\nsteps: [{advance: 1s}]\n", -1, "pods[0].spec.resources.limits.cpu", `malformed quantity "lots"`},
		{"pod bad sizeLimit", "name: x\npods: [{metadata: {name: p}, spec: {containers: [{name: a}], volumes: [{name: v, emptyDir: {sizeLimit: 1GB}}]}}]\nsteps: [{advance: 1s}]\n", -1, "pods[0].spec.volumes[0].emptyDir.sizeLimit", `malformed quantity "1GB"`},
		{"pod value of the wrong type", "name: x\npods: [{metadata: {name: p}, spec: {containers: [{name: a, image: [x]}]}}]\nsteps: [{advance: 1s}]\n", -1, "pods[0].spec.containers.image", "want string, got a JSON array"},
		{"added pod bad quantity", "name: x\nsteps: [{add: {pod: {metadata: {name: p}, spec: {containers: [{name: a, resources: {limits: {cpu: 2x}}}]}}}}]\n", 0, "add.pod.spec.containers[0].resources.limits.cpu", `malformed quantity "2x"`},
		{"pod with status", "name: x\npods: [{metadata: {name: p}, spec: {containers: [{name: a}]}, status: {phase: Running}}]\nsteps: [{advance: 1s}]\n", -1, "pods[0].status", "computed"},
		{"container without name", "name: x\npods: [{metadata: {name: p}, spec: {containers: [{image: busybox}]}}]\nsteps: [{advance: 1s}]\n", -1, "pods[0].spec.containers[0].name", "required"},
		{"duplicate pod", "name: x\npods: [{metadata: {name: p}, spec: {containers: [{name: a}]}}, {metadata: {name: p}, spec: {containers: [{name: b}]}}]\nsteps: [{advance: 1s}]\n", -1, "pods[1].metadata.name", "already exists"},
		{"unknown step", "name: x\nsteps: [{advance: 1s}, {jump: 3}]\n", 1, "jump", "unknown step"},
		{"two actions in a step", "name: x\nsteps: [{advance: 1s, restartKubelet: {}}]\n", 0, "restartKubelet", "exactly one action key"},
		{"empty step", "name: x\nsteps: [{}]\n", 0, "", "empty step"},
		{"bad duration", "name: x\nsteps: [{advance: 1s}, {advance: ten seconds}]\n", 1, "advance", "malformed duration"},
		{"duration without unit", "name: x\nsteps: [{advance: 30}]\n", 0, "advance", "duration"},
		{"negative duration", "name: x\nsteps: [{advance: -3s}]\n", 0, "advance", "positive"},
		{"resize without pod", "name: x" + validPods + "steps: [{resize: {patch: '{}'}}]\n", 0, "resize.pod", "required"},
		{"resize of unknown pod", "name: x" + validPods + "steps: [{resize: {pod: db, patch: '{}'}}]\n", 0, "resize.pod", "no pod"},
		{"resize with empty pod name", "name: x" + validPods + "steps: [{resize: {pod: '', patch: '{}'}}]\n", 0, "resize.pod", "required"},
		{"resize without patch", "name: x" + validPods + "steps: [{resize: {pod: web}}]\n", 0, "resize.patch", "required"},
		{"patch not JSON", "name: x" + validPods + "steps: [{resize: {pod: web, patch: '{\"spec\": '}}]\n", 0, "resize.patch", "malformed patch"},
		{"patch not a map", "name: x" + validPods + "steps: [{resize: {pod: web, patch: '[1, 2]'}}]\n", 0, "resize.patch", "want a map"},
		{"patch with bad quantity", "name: x" + validPods + `steps:
- resize: {pod: web, patch: '{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"lots"}}}]}}'}
`, 0, "resize.patch", "malformed patch"},
		{"patch with a list where a map belongs", "name: x" + validPods + `steps:
- resize: {pod: web, patch: {spec: {containers: {name: app}}}}
`, 0, "resize.patch", "malformed patch"},
		{"unknown resize key", "name: x" + validPods + "steps: [{resize: {pod: web, patch: '{}', force: true}}]\n", 0, "resize.force", "unknown key"},
		{"usage without container", "name: x" + validPods + "steps: [{usage: {pod: web, memory: 1Mi}}]\n", 0, "usage.container", "required"},
		{"usage of unknown container", "name: x" + validPods + "steps: [{usage: {pod: web, container: db, memory: 1Mi}}]\n", 0, "usage.container", "no container"},
		{"usage with bad quantity", "name: x" + validPods + "steps: [{usage: {pod: web, container: app, memory: 12 megs}}]\n", 0, "usage.memory", "malformed quantity"},
		{"exit with bad code", "name: x" + validPods + "steps: [{exit: {pod: web, container: app, exitCode: one}}]\n", 0, "exit.exitCode", "integer"},
		{"fault with unknown call", "name: x" + validPods + "steps: [{fault: {call: Explode}}]\n", 0, "fault.call", "not one of"},
		{"fault container without pod", "name: x" + validPods + "steps: [{fault: {call: UpdateContainerResources, container: app}}]\n", 0, "fault.container", "needs the pod"},
		{"fault with zero times", "name: x" + validPods + "steps: [{fault: {call: CgroupWrite, times: 0}}]\n", 0, "fault.times", "out of range"},
		{"delete of a deleted pod", "name: x" + validPods + "steps: [{delete: {pod: web}}, {delete: {pod: web}}]\n", 1, "delete.pod", "no pod"},
		{"add without manifest", "name: x\nsteps: [{add: {}}]\n", 0, "add.pod", "required"},
		{"add without container name", "name: x\nsteps: [{add: {pod: {metadata: {name: p}, spec: {containers: [{}]}}}}]\n", 0, "add.pod.spec.containers[0].name", "required"},
		{"unknown expect key", "name: x" + validPods + "steps: [{expect: {pod: web, ready: true}}]\n", 0, "expect.ready", "unknown key"},
		{"expect of unknown pod", "name: x" + validPods + "steps: [{expect: {pod: db, admitted: true}}]\n", 0, "expect.pod", "no pod"},
		{"expect key needing a pod", "name: x" + validPods + "steps: [{expect: {qosClass: Burstable}}]\n", 0, "expect.qosClass", "needs expect.pod"},
		{"expect of unknown container", "name: x" + validPods + "steps: [{expect: {pod: web, containers: {db: {restartCount: 0}}}}]\n", 0, "expect.containers.db", "no container"},
		{"expect with bad quantity", "name: x" + validPods + "steps: [{expect: {pod: web, containers: {app: {resources: {requests: {cpu: fast}}}}}}]\n", 0, "expect.containers.app.resources.requests.cpu", "malformed quantity"},
		{"expect condition of unknown type", "name: x" + validPods + "steps: [{expect: {pod: web, conditions: [{type: Ready}]}}]\n", 0, "expect.conditions[0].type", "not one of"},
		{"expect with bad regexp", "name: x" + validPods + "steps: [{expect: {pod: web, events: [{messageRegexp: '('}]}}]\n", 0, "expect.events[0].messageRegexp", "regular expression"},
		{"expect with message and regexp", "name: x" + validPods + "steps: [{expect: {pod: web, events: [{message: a, messageRegexp: a}]}}]\n", 0, "expect.events[0].messageRegexp", "not both"},
		{"expect cgroup of unknown container", "name: x" + validPods + "steps: [{expect: {pod: web, cgroups: {containers: {db: {cpu.max: max}}}}}]\n", 0, "expect.cgroups.containers.db", "no container"},
		{"expect bad node allocated", "name: x" + validPods + "steps: [{expect: {node: {allocated: {cpu: x1}}}}]\n", 0, "expect.node.allocated.cpu", "malformed quantity"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := scenario.Parse("bad.yaml", []byte(tt.yaml))
			var se *scenario.Error
			if !errors.As(err, &se) {
				t.Fatalf("Parse error = %v (%T), want a *scenario.Error", err, err)
			}
			if se.File != "bad.yaml" || se.Step != tt.wantStep || se.Field != tt.wantField {
				t.Errorf("error at file %q step %d field %q, want bad.yaml step %d field %q (%v)",
					se.File, se.Step, se.Field, tt.wantStep, tt.wantField, err)
			}
			if !strings.Contains(se.Msg, tt.wantMsg) {
				t.Errorf("message %q does not contain %q", se.Msg, tt.wantMsg)
			}
			text := err.Error()
			if !strings.HasPrefix(text, "bad.yaml: ") {
				t.Errorf("error text %q does not start with the file", text)
			}
			if tt.wantStep >= 0 && !strings.Contains(text, "steps["+itoa(tt.wantStep)+"]") {
				t.Errorf("error text %q does not name steps[%d]", text, tt.wantStep)
			}
			if tt.wantField != "" && !strings.Contains(text, tt.wantField) {
				t.Errorf("error text %q does not name the field %q", text, tt.wantField)
			}
		})
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestParseDefaultsAndFields(t *testing.T) {
	s, err := scenario.Parse("ok.yaml", []byte(`
name: defaults
kubelet: 1.34
node:
  capacity: {cpu: "4"}
  allocatable: {memory: 60Gi}
  cgroupVersion: v1
  cgroupDriver: systemd
  cpuCFSQuotaPeriod: 50ms
  containerCPUWeight: linear
  featureGates: {InPlacePodVerticalScalingExclusiveMemory: true}
`+validPods+`
steps:
- resize: {pod: web, patch: {spec: {containers: [{name: app, resources: {requests: {cpu: 200m}}}]}}}
- resize: {pod: default/web, patch: '{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"200m"}}}]}}'}
- usage: {pod: web, container: app, memory: 100Mi}
- fault: {call: CgroupWrite, pod: web}
- advance: 3m
- exit: {pod: web, container: app, exitCode: 137}
- restartKubelet: {}
- delete: {pod: web}
- expect: {pod: web, admitted: false, conditions: []}
`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Node.Profile != resize.Profile134 {
		t.Errorf("profile %q, want 1.34 from an unquoted YAML number", s.Node.Profile)
	}
	wantCap := map[string]string{"cpu": "4", "memory": "64Gi", "pods": "110"}
	for name, want := range wantCap {
		if q := s.Node.Capacity[resourceName(name)]; q.Cmp(resource.MustParse(want)) != 0 {
			t.Errorf("capacity %s = %s, want %s", name, q.String(), want)
		}
	}
	if q := s.Node.Allocatable[resourceName("memory")]; q.Cmp(resource.MustParse("60Gi")) != 0 {
		t.Errorf("allocatable memory = %s, want 60Gi", q.String())
	}
	if q := s.Node.Allocatable[resourceName("cpu")]; q.Cmp(resource.MustParse("4")) != 0 {
		t.Errorf("allocatable cpu = %s, want the capacity's 4", q.String())
	}
	if s.Node.CgroupVersion != cgroup.V1 || s.Node.CgroupDriver != cgroup.DriverSystemd || s.Node.CPUCFSQuotaPeriod != 50*time.Millisecond {
		t.Errorf("node = %+v", s.Node)
	}
	if s.ContainerWeight != "linear" || !s.Node.FeatureGates[resize.GateInPlacePodVerticalScalingExclusiveMemory] {
		t.Errorf("weight %q gates %v", s.ContainerWeight, s.Node.FeatureGates)
	}
	pod := s.Pods[0]
	if pod.Namespace != "default" || pod.Generation != 1 || pod.Spec.Containers[0].Image != scenario.DefaultImage {
		t.Errorf("pod defaults: namespace %q generation %d image %q", pod.Namespace, pod.Generation, pod.Spec.Containers[0].Image)
	}
	if got, want := string(s.Steps[0].Patch), string(s.Steps[1].Patch); got != want {
		t.Errorf("a YAML patch and the same JSON patch differ: %s vs %s", got, want)
	}
	if s.Steps[2].Memory.Value() != 100<<20 {
		t.Errorf("usage memory = %d", s.Steps[2].Memory.Value())
	}
	if f := s.Steps[3]; f.Call != scenario.CallCgroupWrite || f.Times != 1 || f.Error == "" || !f.HasPod {
		t.Errorf("fault step = %+v, want times 1 and a default error", f)
	}
	if s.Steps[4].Duration != 3*time.Minute || s.Steps[5].ExitCode != 137 {
		t.Errorf("advance %s exit code %d", s.Steps[4].Duration, s.Steps[5].ExitCode)
	}
	e := s.Steps[8].Expect
	if e == nil || e.Pod == nil || *e.Pod != (scenario.PodRef{Namespace: "default", Name: "web"}) || !e.HasConditions || len(e.Conditions) != 0 {
		t.Errorf("expect = %+v, want pod default/web and an empty condition list", e)
	}
}

func resourceName(s string) v1.ResourceName { return v1.ResourceName(s) }

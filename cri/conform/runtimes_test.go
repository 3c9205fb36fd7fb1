package conform

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/resizelet/resizelet/cgroup"
)

// handlerRecorder is a conforming runtime that records the runtime handler
// of every RunPodSandbox and answers its verbose ContainerStatus as
// containerd does for a runtime whose binary is crun.
type handlerRecorder struct {
	*quirky
	handlers []string
}

func (h *handlerRecorder) RunPodSandbox(ctx context.Context, cfg *runtimeapi.PodSandboxConfig, handler string) (string, error) {
	h.handlers = append(h.handlers, handler)
	return h.quirky.RunPodSandbox(ctx, cfg, handler)
}

func (h *handlerRecorder) ContainerStatus(ctx context.Context, id string, verbose bool) (*runtimeapi.ContainerStatusResponse, error) {
	resp, err := h.quirky.ContainerStatus(ctx, id, verbose)
	if err != nil || !verbose {
		return resp, err
	}
	info := strings.Replace(resp.Info["info"], "{", `{"runtimeType":"io.containerd.runc.v2","runtimeOptions":{"binary_name":"/usr/bin/crun","root":"/run/crun"},`, 1)
	return &runtimeapi.ContainerStatusResponse{Status: resp.Status, Info: map[string]string{"info": info}}, nil
}

// TestRunUsesTheRuntimeHandler: Options.RuntimeHandler goes into the run's
// RunPodSandbox, as a RuntimeClass's handler does, and the report names it
// and the OCI runtime the verbose ContainerStatus names.
func TestRunUsesTheRuntimeHandler(t *testing.T) {
	q, k := newQuirky(cgroup.V2)
	rt := &handlerRecorder{quirky: q}
	rep, err := Run(context.Background(), Options{Runtime: rt, Cgroups: k, Image: "busybox", OOMWait: 200 * time.Millisecond, RuntimeHandler: "crun"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rt.handlers) == 0 {
		t.Fatal("no RunPodSandbox")
	}
	for _, h := range rt.handlers {
		if h != "crun" {
			t.Errorf("RunPodSandbox with runtime handler %q, want crun", h)
		}
	}
	if !rep.Passed() {
		t.Errorf("the run did not pass: %v", statuses(rep))
	}
	var text bytes.Buffer
	rep.WriteText(&text)
	for _, want := range []string{
		"of *conform.handlerRecorder, runtime handler crun\n",
		"OCI runtime: crun (runtimeOptions.binary_name of the verbose ContainerStatus: /usr/bin/crun)",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, text.String())
		}
	}
	assertNothingLeft(t, q.SimContainerd, k, rep.Prefix)
}

// TestOCIRuntimeFromVerboseInfo: the OCI runtime is read from containerd's
// verbose ContainerStatus info, and nothing is claimed when it does not
// say.
func TestOCIRuntimeFromVerboseInfo(t *testing.T) {
	for _, tc := range []struct{ info, want string }{
		{`{"runtimeType":"io.containerd.runc.v2","runtimeOptions":{"binary_name":"/usr/bin/crun"}}`, "crun (runtimeOptions.binary_name of the verbose ContainerStatus: /usr/bin/crun)"},
		{`{"runtimeType":"io.containerd.runc.v2","runtimeOptions":{"systemd_cgroup":true}}`, "runc (runtimeType io.containerd.runc.v2 of the verbose ContainerStatus, no binary_name)"},
		{`{"runtimeType":"io.containerd.kata.v2"}`, "io.containerd.kata.v2 (runtimeType of the verbose ContainerStatus)"},
		{`{"sandboxID":"x","runtimeSpec":{}}`, ""},
		{`not json`, ""},
		{"", ""},
	} {
		if got := ociRuntime(tc.info); got != tc.want {
			t.Errorf("ociRuntime(%s) = %q, want %q", tc.info, got, tc.want)
		}
	}
}

// TestRefusalOriginNamesTheRuntime: check 6's refusal of an unknown
// unified key is explained by the runtime whose message it carries (the
// messages as runc 1.1 and crun 1.8 give them through containerd).
func TestRefusalOriginNamesTheRuntime(t *testing.T) {
	for _, tc := range []struct{ msg, want string }{
		{`failed to update resources: /usr/sbin/runc did not terminate successfully: exit status 1: unified resource "resizelet.unknown" can't be set: controller "resizelet" not available : unknown`, "the refusal is runc's"},
		{"failed to update resources: /usr/bin/crun did not terminate successfully: exit status 1: the requested cgroup controller `resizelet` is not available : unknown", "the refusal is crun's"},
		{"some other runtime's refusal", ""},
	} {
		got := refusalOrigin(errors.New(tc.msg))
		if (tc.want == "") != (got == "") || !strings.HasPrefix(got, tc.want) {
			t.Errorf("refusalOrigin(%q) = %q, want it to start with %q", tc.msg, got, tc.want)
		}
	}
}

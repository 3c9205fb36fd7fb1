package cri

import (
	"context"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// verboseRuntime answers ContainerStatus with containerd's verbose info.
type verboseRuntime struct {
	Runtime
	info string
}

func (v verboseRuntime) ContainerStatus(ctx context.Context, id string, verbose bool) (*runtimeapi.ContainerStatusResponse, error) {
	resp := &runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{Id: id}}
	if verbose {
		resp.Info = map[string]string{"info": v.info}
	}
	return resp, nil
}

func TestContainerPID(t *testing.T) {
	for _, tc := range []struct {
		info string
		pid  int
		ok   bool
	}{
		{`{"sandboxID":"sb","pid":4242,"removing":false}`, 4242, true},
		{`{"pid":0}`, 0, false},
		{`not json`, 0, false},
		{``, 0, false},
	} {
		pid, ok := ContainerPID(context.Background(), verboseRuntime{info: tc.info}, "c1")
		if pid != tc.pid || ok != tc.ok {
			t.Errorf("info %q: ContainerPID = %d, %v; want %d, %v", tc.info, pid, ok, tc.pid, tc.ok)
		}
	}
}

package cri

import (
	"context"
	"encoding/json"
)

// ContainerPID returns the process ID of a container's main process, and
// false when the runtime does not tell. On a runtime with a PID method
// (SimContainerd, also behind decorators with an Unwrap() Runtime method) it asks that; on any other it reads the "pid" field of the
// verbose ContainerStatus info, which containerd and CRI-O fill. It lets a
// transcript show that an in-place resize kept the process and a restart
// replaced it.
func ContainerPID(ctx context.Context, rt Runtime, containerID string) (int, bool) {
	if rt == nil {
		return 0, false
	}
	if p, ok := findRuntime[interface{ PID(string) (int, bool) }](rt); ok {
		return p.PID(containerID)
	}
	resp, err := rt.ContainerStatus(ctx, containerID, true)
	if err != nil {
		return 0, false
	}
	var info struct {
		PID int `json:"pid"`
	}
	if err := json.Unmarshal([]byte(resp.GetInfo()["info"]), &info); err != nil || info.PID == 0 {
		return 0, false
	}
	return info.PID, true
}

// findRuntime returns the first runtime in the chain of decorators rooted
// at rt (followed through their Unwrap() Runtime methods) that implements
// T, so that a capability of the innermost runtime is reachable through a
// Recorder or a FaultInjector.
func findRuntime[T any](rt Runtime) (T, bool) {
	for r, i := rt, 0; r != nil && i < 16; i++ {
		if t, ok := r.(T); ok {
			return t, true
		}
		w, ok := r.(interface{ Unwrap() Runtime })
		if !ok {
			break
		}
		r = w.Unwrap()
	}
	var zero T
	return zero, false
}

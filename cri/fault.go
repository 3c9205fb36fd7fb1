package cri

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Fault makes calls to a Runtime fail. A call matches when its method is
// Method and, for each of PodName, PodNamespace and ContainerName that is
// set, the sandbox or container the call concerns carries that label
// (LabelPodName, LabelPodNamespace, LabelContainerName; the sandbox's or
// container's metadata stands in when the label is missing). A fault with
// ContainerName set matches container calls only.
type Fault struct {
	// Method is the Runtime method, e.g. "UpdateContainerResources",
	// "UpdatePodSandboxResources", "ContainerStatus", "StopContainer",
	// "StartContainer", "CreateContainer", "RunPodSandbox".
	Method        string
	PodName       string
	PodNamespace  string
	ContainerName string
	// Err is what the matching calls return. Nil means ErrInjected.
	Err error
	// Times is how many matching calls fail; 0 or less means 1.
	Times int
}

// ErrInjected is the error of a Fault whose Err is nil.
var ErrInjected = errors.New("injected fault")

// FaultInjector is a Runtime decorator that makes chosen calls fail. A call
// that matches an injected Fault returns the fault's error without reaching
// the inner runtime; when several faults match, the one injected first is
// used up first. It resolves the pod and container a call concerns through
// the inner runtime (ListContainers, ListPodSandbox) or the call's configs,
// so it works on any Runtime, and only when a fault for the method needs a
// name. It is safe for concurrent use.
type FaultInjector struct {
	inner Runtime

	mu     sync.Mutex
	faults []Fault // in injection order; Times is what is left
}

var _ Runtime = (*FaultInjector)(nil)

// NewFaultInjector returns a FaultInjector over rt with no faults.
func NewFaultInjector(rt Runtime) *FaultInjector {
	return &FaultInjector{inner: rt}
}

// Unwrap returns the inner runtime.
func (f *FaultInjector) Unwrap() Runtime {
	if f == nil {
		return nil
	}
	return f.inner
}

// wraps reports whether f has a Runtime to pass calls to; without one (nil
// f, the zero FaultInjector, NewFaultInjector(nil)) every call answers
// ErrNoRuntime.
func (f *FaultInjector) wraps() bool { return f != nil && f.inner != nil }

// Inject adds a fault after those already injected.
func (f *FaultInjector) Inject(fault Fault) {
	if f == nil {
		return
	}
	if fault.Times <= 0 {
		fault.Times = 1
	}
	if fault.Err == nil {
		fault.Err = ErrInjected
	}
	f.mu.Lock()
	f.faults = append(f.faults, fault)
	f.mu.Unlock()
}

// Pending returns the faults not yet used up, in injection order, each with
// Times set to the calls it still fails.
func (f *FaultInjector) Pending() []Fault {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Fault, len(f.faults))
	copy(out, f.faults)
	return out
}

// target is the sandbox or container a call concerns.
type target struct {
	known     bool
	pod       string
	namespace string
	container string // "" for a sandbox
}

func (ft Fault) needsTarget() bool {
	return ft.PodName != "" || ft.PodNamespace != "" || ft.ContainerName != ""
}

func (ft Fault) matches(t target) bool {
	if !ft.needsTarget() {
		return true
	}
	if !t.known {
		return false
	}
	if ft.PodName != "" && ft.PodName != t.pod {
		return false
	}
	if ft.PodNamespace != "" && ft.PodNamespace != t.namespace {
		return false
	}
	if ft.ContainerName != "" && ft.ContainerName != t.container {
		return false
	}
	return true
}

// fail returns the error of the first pending fault that matches the call,
// using it up, or nil. resolve names the call's target; it is called, outside
// the lock, only if a fault for the method needs it.
func (f *FaultInjector) fail(method string, resolve func() target) error {
	f.mu.Lock()
	found, need := false, false
	for i := range f.faults {
		if f.faults[i].Method == method {
			found = true
			need = need || f.faults[i].needsTarget()
		}
	}
	f.mu.Unlock()
	if !found {
		return nil
	}
	var t target
	if need && resolve != nil {
		t = resolve()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.faults {
		ft := &f.faults[i]
		if ft.Method != method || !ft.matches(t) {
			continue
		}
		err := ft.Err
		ft.Times--
		if ft.Times <= 0 {
			f.faults = append(f.faults[:i], f.faults[i+1:]...)
		}
		return err
	}
	return nil
}

// podTarget names a sandbox from its labels, or its metadata when a label
// is missing.
func podTarget(labels map[string]string, md *runtimeapi.PodSandboxMetadata) target {
	t := target{known: true, pod: labels[LabelPodName], namespace: labels[LabelPodNamespace]}
	if t.pod == "" {
		t.pod = md.GetName()
	}
	if t.namespace == "" {
		t.namespace = md.GetNamespace()
	}
	return t
}

// resolveSandbox names a sandbox through rt.
func resolveSandbox(ctx context.Context, rt Runtime, id string) target {
	sbs, err := rt.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{Id: id})
	if err != nil || len(sbs) != 1 {
		return target{}
	}
	return podTarget(sbs[0].Labels, sbs[0].Metadata)
}

// resolveContainer names a container, and its pod, through rt: from the
// container's labels, falling back on its metadata and its sandbox.
func resolveContainer(ctx context.Context, rt Runtime, id string) (target, string) {
	cs, err := rt.ListContainers(ctx, &runtimeapi.ContainerFilter{Id: id})
	if err != nil || len(cs) != 1 {
		return target{}, ""
	}
	c := cs[0]
	t := target{known: true,
		pod: c.Labels[LabelPodName], namespace: c.Labels[LabelPodNamespace], container: c.Labels[LabelContainerName]}
	if t.container == "" {
		t.container = c.Metadata.GetName()
	}
	if t.pod == "" || t.namespace == "" {
		sb := resolveSandbox(ctx, rt, c.PodSandboxId)
		if t.pod == "" {
			t.pod = sb.pod
		}
		if t.namespace == "" {
			t.namespace = sb.namespace
		}
	}
	return t, c.PodSandboxId
}

// createTarget names the container a CreateContainer call creates, from its
// configs, asking rt about the sandbox only if the configs do not say.
func createTarget(ctx context.Context, rt Runtime, podSandboxID string, config *runtimeapi.ContainerConfig, sandboxConfig *runtimeapi.PodSandboxConfig) target {
	t := target{known: true,
		pod: config.GetLabels()[LabelPodName], namespace: config.GetLabels()[LabelPodNamespace], container: config.GetLabels()[LabelContainerName]}
	if t.container == "" {
		t.container = config.GetMetadata().GetName()
	}
	if t.pod == "" || t.namespace == "" {
		sb := target{}
		if sandboxConfig != nil {
			sb = podTarget(sandboxConfig.Labels, sandboxConfig.Metadata)
		}
		if sb.pod == "" || sb.namespace == "" {
			sb = resolveSandbox(ctx, rt, podSandboxID)
		}
		if t.pod == "" {
			t.pod = sb.pod
		}
		if t.namespace == "" {
			t.namespace = sb.namespace
		}
	}
	return t
}

func (f *FaultInjector) sandboxCall(ctx context.Context, method, id string) error {
	return f.fail(method, func() target { return resolveSandbox(ctx, f.inner, id) })
}

func (f *FaultInjector) containerCall(ctx context.Context, method, id string) error {
	return f.fail(method, func() target {
		t, _ := resolveContainer(ctx, f.inner, id)
		return t
	})
}

// RunPodSandbox fails with a matching fault, else calls the inner runtime.
func (f *FaultInjector) RunPodSandbox(ctx context.Context, config *runtimeapi.PodSandboxConfig, runtimeHandler string) (string, error) {
	if !f.wraps() {
		return "", fmt.Errorf("RunPodSandbox: %w", ErrNoRuntime)
	}
	if err := f.fail("RunPodSandbox", func() target { return podTarget(config.GetLabels(), config.GetMetadata()) }); err != nil {
		return "", err
	}
	return f.inner.RunPodSandbox(ctx, config, runtimeHandler)
}

// StopPodSandbox fails with a matching fault, else calls the inner runtime.
func (f *FaultInjector) StopPodSandbox(ctx context.Context, podSandboxID string) error {
	if !f.wraps() {
		return fmt.Errorf("StopPodSandbox: %w", ErrNoRuntime)
	}
	if err := f.sandboxCall(ctx, "StopPodSandbox", podSandboxID); err != nil {
		return err
	}
	return f.inner.StopPodSandbox(ctx, podSandboxID)
}

// RemovePodSandbox fails with a matching fault, else calls the inner runtime.
func (f *FaultInjector) RemovePodSandbox(ctx context.Context, podSandboxID string) error {
	if !f.wraps() {
		return fmt.Errorf("RemovePodSandbox: %w", ErrNoRuntime)
	}
	if err := f.sandboxCall(ctx, "RemovePodSandbox", podSandboxID); err != nil {
		return err
	}
	return f.inner.RemovePodSandbox(ctx, podSandboxID)
}

// ListPodSandbox fails with a matching fault, else calls the inner runtime.
// It concerns no one sandbox, so only faults without names match it.
func (f *FaultInjector) ListPodSandbox(ctx context.Context, filter *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	if !f.wraps() {
		return nil, fmt.Errorf("ListPodSandbox: %w", ErrNoRuntime)
	}
	if err := f.fail("ListPodSandbox", nil); err != nil {
		return nil, err
	}
	return f.inner.ListPodSandbox(ctx, filter)
}

// UpdatePodSandboxResources fails with a matching fault, else calls the
// inner runtime.
func (f *FaultInjector) UpdatePodSandboxResources(ctx context.Context, request *runtimeapi.UpdatePodSandboxResourcesRequest) (*runtimeapi.UpdatePodSandboxResourcesResponse, error) {
	if !f.wraps() {
		return nil, fmt.Errorf("UpdatePodSandboxResources: %w", ErrNoRuntime)
	}
	if err := f.sandboxCall(ctx, "UpdatePodSandboxResources", request.GetPodSandboxId()); err != nil {
		return nil, err
	}
	return f.inner.UpdatePodSandboxResources(ctx, request)
}

// CreateContainer fails with a matching fault, else calls the inner runtime.
func (f *FaultInjector) CreateContainer(ctx context.Context, podSandboxID string, config *runtimeapi.ContainerConfig, sandboxConfig *runtimeapi.PodSandboxConfig) (string, error) {
	if !f.wraps() {
		return "", fmt.Errorf("CreateContainer: %w", ErrNoRuntime)
	}
	if err := f.fail("CreateContainer", func() target {
		return createTarget(ctx, f.inner, podSandboxID, config, sandboxConfig)
	}); err != nil {
		return "", err
	}
	return f.inner.CreateContainer(ctx, podSandboxID, config, sandboxConfig)
}

// StartContainer fails with a matching fault, else calls the inner runtime.
func (f *FaultInjector) StartContainer(ctx context.Context, containerID string) error {
	if !f.wraps() {
		return fmt.Errorf("StartContainer: %w", ErrNoRuntime)
	}
	if err := f.containerCall(ctx, "StartContainer", containerID); err != nil {
		return err
	}
	return f.inner.StartContainer(ctx, containerID)
}

// StopContainer fails with a matching fault, else calls the inner runtime.
func (f *FaultInjector) StopContainer(ctx context.Context, containerID string, timeout int64) error {
	if !f.wraps() {
		return fmt.Errorf("StopContainer: %w", ErrNoRuntime)
	}
	if err := f.containerCall(ctx, "StopContainer", containerID); err != nil {
		return err
	}
	return f.inner.StopContainer(ctx, containerID, timeout)
}

// RemoveContainer fails with a matching fault, else calls the inner runtime.
func (f *FaultInjector) RemoveContainer(ctx context.Context, containerID string) error {
	if !f.wraps() {
		return fmt.Errorf("RemoveContainer: %w", ErrNoRuntime)
	}
	if err := f.containerCall(ctx, "RemoveContainer", containerID); err != nil {
		return err
	}
	return f.inner.RemoveContainer(ctx, containerID)
}

// ListContainers fails with a matching fault, else calls the inner runtime.
// It concerns no one container, so only faults without names match it.
func (f *FaultInjector) ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	if !f.wraps() {
		return nil, fmt.Errorf("ListContainers: %w", ErrNoRuntime)
	}
	if err := f.fail("ListContainers", nil); err != nil {
		return nil, err
	}
	return f.inner.ListContainers(ctx, filter)
}

// ContainerStatus fails with a matching fault, else calls the inner runtime.
func (f *FaultInjector) ContainerStatus(ctx context.Context, containerID string, verbose bool) (*runtimeapi.ContainerStatusResponse, error) {
	if !f.wraps() {
		return nil, fmt.Errorf("ContainerStatus: %w", ErrNoRuntime)
	}
	if err := f.containerCall(ctx, "ContainerStatus", containerID); err != nil {
		return nil, err
	}
	return f.inner.ContainerStatus(ctx, containerID, verbose)
}

// UpdateContainerResources fails with a matching fault, else calls the
// inner runtime.
func (f *FaultInjector) UpdateContainerResources(ctx context.Context, containerID string, resources *runtimeapi.ContainerResources) error {
	if !f.wraps() {
		return fmt.Errorf("UpdateContainerResources: %w", ErrNoRuntime)
	}
	if err := f.containerCall(ctx, "UpdateContainerResources", containerID); err != nil {
		return err
	}
	return f.inner.UpdateContainerResources(ctx, containerID, resources)
}

// ContainerStats fails with a matching fault, else calls the inner runtime.
func (f *FaultInjector) ContainerStats(ctx context.Context, containerID string) (*runtimeapi.ContainerStats, error) {
	if !f.wraps() {
		return nil, fmt.Errorf("ContainerStats: %w", ErrNoRuntime)
	}
	if err := f.containerCall(ctx, "ContainerStats", containerID); err != nil {
		return nil, err
	}
	return f.inner.ContainerStats(ctx, containerID)
}

// ExecSync fails with a matching fault, else calls the inner runtime.
func (f *FaultInjector) ExecSync(ctx context.Context, containerID string, cmd []string, timeout time.Duration) ([]byte, []byte, error) {
	if !f.wraps() {
		return nil, nil, fmt.Errorf("ExecSync: %w", ErrNoRuntime)
	}
	if err := f.containerCall(ctx, "ExecSync", containerID); err != nil {
		return nil, nil, err
	}
	return f.inner.ExecSync(ctx, containerID, cmd, timeout)
}

package cri

import "github.com/resizelet/resizelet/cgroup"

// The simulated runtime's names before it was named for what it is, a
// simulated containerd. They stay so that code written against them keeps
// compiling.

// Memory is the old name of SimContainerd.
//
// Deprecated: use SimContainerd.
type Memory = SimContainerd

// MemoryOption is the old name of SimContainerdOption.
//
// Deprecated: use SimContainerdOption.
type MemoryOption = SimContainerdOption

// NewMemory is the old name of NewSimContainerd.
//
// Deprecated: use NewSimContainerd.
func NewMemory(cg cgroup.Manager, opts ...SimContainerdOption) *SimContainerd {
	return NewSimContainerd(cg, opts...)
}

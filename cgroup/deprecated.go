package cgroup

// The simulator's names before it was named for what it is, a simulated
// kernel. They stay so that code written against them keeps compiling.

// Memory is the old name of SimKernel.
//
// Deprecated: use SimKernel.
type Memory = SimKernel

// MemoryOption is the old name of SimKernelOption.
//
// Deprecated: use SimKernelOption.
type MemoryOption = SimKernelOption

// NewMemory is the old name of NewSimKernel.
//
// Deprecated: use NewSimKernel.
func NewMemory(version Version, opts ...SimKernelOption) *SimKernel {
	return NewSimKernel(version, opts...)
}

package cgroup_test

import (
	"fmt"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// Set writes only what changes, in the kernel's order, and returns each
// write with the file's old and new content. The same calls work on a real
// hierarchy through cgroupfs.New.
func ExampleSimKernel() {
	cg := cgroup.NewSimKernel(cgroup.V2)
	path := "kubepods/burstable/pod-demo"
	if err := cg.Create(path); err != nil {
		panic(err)
	}
	quota, period := int64(50000), uint64(100000)
	memory := int64(256 << 20)
	writes, err := cg.Set(path, cgconfig.Values{CPUQuota: &quota, CPUPeriod: &period, MemoryLimit: &memory})
	if err != nil {
		panic(err)
	}
	for _, w := range writes {
		fmt.Printf("%s: %q -> %q\n", w.File, w.Old, w.New)
	}
	// Output:
	// memory.max: "max" -> "268435456"
	// cpu.max: "max 100000" -> "50000 100000"
}

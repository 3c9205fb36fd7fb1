// Package cgroupfs is the cgroup.Manager over a real cgroup filesystem:
// FS, which reads and writes the kernel's cgroup files, v1 or v2, below a
// root directory.
//
// Start with New, which opens the hierarchy at a root ("/sys/fs/cgroup")
// and detects its version (WithVersion and WithV1Mounts say otherwise).
// FS writes through github.com/containerd/cgroups/v3 and reads the files
// back in the formats package cgroup defines for every manager
// (cgroup.ParseValues, cgroup.Canonical), so that it and the simulated
// kernel, cgroup.SimKernel, cannot drift apart. SetUsage and OnOOMKill
// (usage_linux.go) charge real memory to a cgroup with a child process,
// for the in-memory runtime cri.SimContainerd on real cgroups. RemoveTree
// and TreeView (tree.go) let cgroup.RemoveTree, cgroup.SnapshotTree and
// cgroup.RemoveCreated visit every hierarchy mounted below the root, as a
// cleanup after a container runtime must; Mounts lists them.
//
// The package is apart from package cgroup so that a program that only
// simulates links neither containerd/cgroups nor what that library pulls
// in (cilium/ebpf, godbus, go-systemd, logrus). The tests that need root
// and a real hierarchy skip without them (RESIZELET_REQUIRE_CGROUP makes
// them fail instead); the rest run on temp-dir trees.
package cgroupfs

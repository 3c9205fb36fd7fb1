// Package host builds resize backends on the host: Cgroups, the host's
// real cgroup filesystem with the in-memory containerd, and Remote, a real
// CRI runtime over its socket with the host's cgroups. Both keep the
// node's cgroups below a private cgroup parent and return a
// *resize.Backend whose Close removes what the nodes created.
//
// Start with Cgroups (cgroups.go), which needs only root, or Remote
// (remote.go), which also needs a runtime with an image that has sh and
// sleep. Options (options.go) name the cgroup root and parent, hand the
// host's cgroup manager in (WithCgroupManager; a cgroup.SimKernel stands
// for the host in tests), configure the CRI client, and pass
// resize.BackendOption values on (WithBackendOptions).
//
// The package is apart from package resize so that a program that only
// simulates (resize.Simulated) links neither cgroupfs.FS, with
// containerd/cgroups and what it pulls in, nor the CRI client.
package host

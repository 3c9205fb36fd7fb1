package cgroupfs

import "github.com/resizelet/resizelet/cgroup"

// Option configures New.
type Option func(*config)

type config struct {
	version   cgroup.Version
	v1Mounts  map[string]string
	mountinfo string
	onCreate  func(dir string) error
}

// WithVersion makes New use cgroup version v instead of detecting it from
// the root. New still fails with cgroup.ErrNotSupported when the root does not
// offer that version with the cpu and memory controllers.
func WithVersion(v cgroup.Version) Option {
	return func(c *config) { c.version = v }
}

// WithV1Mounts gives the directories of the cgroup v1 hierarchies, by
// controller name ("cpu", "memory", and optionally others such as
// "cpuacct" for ReadFile), instead of looking them up in
// /proc/self/mountinfo and below the root. Paths are then relative to these
// directories. It has no effect on cgroup v2.
func WithV1Mounts(mounts map[string]string) Option {
	return func(c *config) {
		c.v1Mounts = make(map[string]string, len(mounts))
		for k, v := range mounts {
			c.v1Mounts[k] = v
		}
	}
}

// withMountInfo makes New read the mount table from file instead of
// /proc/self/mountinfo; tests use it.
func withMountInfo(file string) Option {
	return func(c *config) { c.mountinfo = file }
}

// WithCreateHook makes Create call fn with the directory of each cgroup it
// makes, right after making it. Over a tree of ordinary directories (a
// test's temp dir) fn writes the files the kernel would show in a new
// cgroup; an error of fn fails the Create.
func WithCreateHook(fn func(dir string) error) Option {
	return func(c *config) { c.onCreate = fn }
}

// Package scenario loads, validates and runs resize scenarios: YAML files
// that describe a node, its pods and a sequence of steps (resizes, pod
// arrivals and departures, memory usage, container exits, faults, clock
// ticks, kubelet restarts) interleaved with expectations. The format is
// specified in FORMAT.md beside this file, which format_doc_test.go holds
// to the parser; Load and Parse implement it and reject anything else with
// an *Error naming the file, the step index and the field. Run drives a
// resize.Node over simulated or real cgroups and runtime, checks every
// expect step and returns the transcript and the mismatches. The command
// examples/resizesim is a thin wrapper around this package.
//
// Conveniences of the format (FORMAT.md has them with the rest), all optional:
//
//   - kubelet may be written as a YAML number (kubelet: 1.35).
//   - node.capacity keeps the defaults (cpu 16, memory 64Gi, pods 110) for
//     the resources it does not name, and node.allocatable takes the
//     capacity's value for the resources it does not name.
//   - A pod may be named "namespace/name" wherever a step names a pod; a
//     bare name means namespace default, or the only pod of that name.
//   - Containers without an image get DefaultImage.
//   - fault.call also accepts CreateContainer and RunPodSandbox; fault.error
//     defaults to "injected fault". A CgroupWrite fault with only a pod
//     matches writes of the pod's own cgroup; with a container, writes of
//     that container's cgroup (paths are resolved when the write happens, so
//     they follow container restarts). A fault step arms the fault and does
//     not run the node.
//   - expect resources lists: a list that is given but empty ({}) asserts
//     that there are no entries; otherwise only the listed resources are
//     compared (by value).
//   - cgroups file values may be YAML numbers; files that are in neither
//     version's list are checked on both.
//   - A pod in pods: or add: may not carry a status (status is computed).
//   - node.reconcilePodCgroups and node.flushCheckpoints (booleans, default
//     false) turn on resizelet's opt-in fixes of the same names in
//     resize.NodeConfig; neither is a kubelet setting, and the transcript's
//     header says so when one is on.
//   - expect.audit lists the differences resize.Node.Audit finds between
//     the node's real state (cgroups, runtime, checkpoints, status) and the
//     allocation: the pod's with expect.pod, the whole node's without. Each
//     entry has optional keys where (podCgroup, containerCgroup, runtime,
//     actuated, allocated, status), container (with expect.pod), field
//     (a cgroup file, a resource such as limits.cpu, or record), want and
//     got; each entry must match a difference of its own, and every
//     difference must be matched, so audit: [] asserts that the real state
//     is what the allocation says. The transcript lists the differences.
//   - expect.metrics asserts the kubelet's resize metrics (package
//     resize/metrics): a map from a series, written as the Prometheus text
//     format writes it, to its value; a label left out is summed over and
//     an absent series is 0. The transcript lists each series with the
//     value found. Options.Metrics records a run's metrics on a Metrics of
//     the caller's; without it a scenario that asserts metrics gets its
//     own.
//
// Errors of an action step other than resize are kept for the next
// expect's error key like a resize's; a malformed patch that only the API
// server detects makes Run return an *Error.
//
// The format's limits (FORMAT.md, "Limits") make a hostile file an
// *Error before anything runs: a file of at most MaxFileSize bytes, a
// regular file or a pipe, one YAML document, no control characters in
// names, amounts within resizelet's bounds (package cgroup/cgconfig,
// MaxMilliCPU) and no exponent beyond apiserver.MaxExponent.
//
// Scenario descriptions cite the behaviour they check as "reference N.M":
// section N.M of resize/kubelet-resize.md.
package scenario

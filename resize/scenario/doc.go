// Package scenario loads, validates and runs resize scenarios: YAML files
// that describe a node, its pods and a sequence of steps (resizes, pod
// arrivals and departures, memory usage, container exits, faults, clock
// ticks, kubelet restarts) interleaved with expectations. The format is
// described in the README's "Scenario files" section; Load and Parse
// implement it and reject anything else with an *Error naming the file,
// the step index and the field. Run drives a resize.Node over simulated or
// real cgroups and runtime, checks every expect step and returns the
// transcript and the mismatches. The command examples/resizesim is a thin
// wrapper around this package.
//
// Additions to the format, all optional:
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
//
// Errors of an action step other than resize are kept for the next
// expect's error key like a resize's; a malformed patch that only the API
// server detects makes Run return an *Error.
//
// Limits of the format, which make a hostile file an *Error (exit status
// 2 in resizesim) that changes nothing:
//
//   - Load reads at most MaxFileSize bytes (1 MiB), and only a regular
//     file or a pipe: not a directory, a device such as /dev/zero, or a
//     socket.
//   - A file holds one YAML document: a second one with content, after a
//     "---" line, is an error (an empty one, such as a trailing "---", is
//     allowed).
//   - name may not hold control characters (a NUL, an escape); description
//     may hold newlines and tabs but no other control character.
//   - Pod manifests are checked as the cluster checks them: names are DNS
//     subdomains, namespaces DNS labels, labels and annotations as the API
//     server has them, and a metadata.uid, which the cluster keeps, is a
//     DNS label (lower-case letters, digits and '-': a UUID is one) that no
//     other pod present at that step has.
//   - Every amount (node capacity and allocatable; requests, limits,
//     overhead and pod-level resources in manifests and patches; usage
//     memory) is at most 9G cpu (9e12 millicores) and at most 8Pi (2^53)
//     of anything else, and a pod's amounts of one resource add up to no
//     more: larger amounts overflow the kubelet's int64 arithmetic, which
//     a 1.35 API server does not prevent (package cgroup/cgconfig,
//     MaxMilliCPU). A resize whose patch shows such an amount is refused
//     when the file is parsed; one whose total only the patched pod
//     shows, when the step runs (Run returns an *Error for it, as it does
//     for a pod refused for a UID another pod has).
//   - No number, and no string that reads as one, may have an exponent
//     beyond ±1000 (apiserver.MaxExponent): apimachinery takes minutes to
//     parse "1e-54775807" as a quantity, or to compare "1e54775807" with
//     another.
//   - advance may be as long as a Go duration goes (2562047h): a settled
//     node skips through such a span in no time (resize.Node.Advance).
package scenario

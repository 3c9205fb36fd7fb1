package cgconfig

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// PodCgroupName returns the path of a pod's cgroup relative to the cgroup
// root, as the kubelet names it: kubepods/pod<uid> for Guaranteed pods,
// kubepods/burstable/pod<uid> and kubepods/besteffort/pod<uid> for the
// others. With the systemd driver each part is a slice named after all the
// parts before it, with the dashes of the UID turned into underscores:
// kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid>.slice.
func PodCgroupName(qosClass v1.PodQOSClass, uid types.UID, driver Driver) string {
	return PodCgroupPath("", qosClass, uid, driver)
}

// PodCgroupPath is PodCgroupName below the kubelet's --cgroup-root, root,
// which is written as the kubelet takes it, a cgroupfs path ("/",
// "/resizelet-1"): the kubelet's cgroup name is root's components, then
// kubepods and the rest (pkg/kubelet/cm/container_manager_linux.go,
// ParseCgroupfsToCgroupName and NewCgroupName), and the systemd driver
// turns all of them into one chain of slices (SystemdName), so that root
// "/resizelet-1" gives resizelet_1.slice/resizelet_1-kubepods.slice/...
func PodCgroupPath(root string, qosClass v1.PodQOSClass, uid types.UID, driver Driver) string {
	var parts []string
	if root = strings.Trim(root, "/"); root != "" {
		parts = strings.Split(root, "/")
	}
	parts = append(parts, "kubepods")
	switch qosClass {
	case v1.PodQOSBurstable:
		parts = append(parts, "burstable")
	case v1.PodQOSBestEffort:
		parts = append(parts, "besteffort")
	}
	parts = append(parts, "pod"+string(uid))
	if driver != DriverSystemd {
		return strings.Join(parts, "/")
	}
	return SystemdName(parts...)
}

// SystemdName is the kubelet's CgroupName.ToSystemd, relative to the
// hierarchy root: the parts with their dashes escaped to underscores,
// joined by dashes into one slice name, expanded into its path
// (ExpandSlice). No parts is the root, "".
func SystemdName(parts ...string) string {
	if len(parts) == 0 {
		return ""
	}
	escaped := make([]string, len(parts))
	for i, p := range parts {
		escaped[i] = strings.ReplaceAll(p, "-", "_")
	}
	path, err := ExpandSlice(strings.Join(escaped, "-") + ".slice")
	if err != nil {
		// An empty part: kept visible rather than dropped.
		return strings.Join(escaped, "-") + ".slice"
	}
	return path
}

// ExpandSlice is where systemd puts the slice unit, relative to the
// hierarchy root, as runc's and libcontainer's ExpandSlice compute it
// without the leading "/": "a-b-c.slice" is a.slice/a-b.slice/a-b-c.slice,
// and the root slice "-.slice" is the root, "". A name that does not end
// in ".slice", holds a "/" or has an empty dash-separated part is an
// error.
func ExpandSlice(slice string) (string, error) {
	base, ok := strings.CutSuffix(slice, ".slice")
	if !ok || strings.Contains(slice, "/") {
		return "", fmt.Errorf("invalid systemd slice name %q", slice)
	}
	if base == "-" {
		return "", nil
	}
	var b strings.Builder
	for i := 0; i <= len(base); i++ {
		if i < len(base) && base[i] != '-' {
			continue
		}
		if i == 0 || base[i-1] == '-' || i == len(base) && base[i-1] == '-' {
			return "", fmt.Errorf("invalid systemd slice name %q", slice)
		}
		if b.Len() > 0 {
			b.WriteByte('/')
		}
		b.WriteString(base[:i])
		b.WriteString(".slice")
	}
	return b.String(), nil
}

// ContainerCgroupName returns the path of a container's cgroup below its pod
// cgroup as containerd's CRI plugin names it: the container ID with the
// cgroupfs driver, a cri-containerd-<id>.scope unit with the systemd driver.
func ContainerCgroupName(podCgroup, containerID string, driver Driver) string {
	if driver == DriverSystemd {
		return podCgroup + "/cri-containerd-" + containerID + ".scope"
	}
	return podCgroup + "/" + containerID
}

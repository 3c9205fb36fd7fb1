package cgconfig

import (
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
	parts := []string{"kubepods"}
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
	out := make([]string, len(parts))
	for i := range parts {
		escaped := make([]string, i+1)
		for j := 0; j <= i; j++ {
			escaped[j] = strings.ReplaceAll(parts[j], "-", "_")
		}
		out[i] = strings.Join(escaped, "-") + ".slice"
	}
	return strings.Join(out, "/")
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

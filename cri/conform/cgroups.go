package conform

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/cgroup/cgroupfs"
)

// containerCgroup finds the cgroup of a container, relative to the
// hierarchy root, in the order that trusts the runtime most: the
// cgroupsPath of the OCI spec in the verbose ContainerStatus info
// (containerd and CRI-O fill it), then, on a real cgroup filesystem, the
// process's own /proc/PID/cgroup, then the cgroupfs convention of
// containerd (the sandbox's cgroup parent and the container ID). It also
// says which one it used, for the report.
func containerCgroup(info string, pid int, cg cgroup.Manager, podCgroup, id string, driver cgroup.Driver) (path, source string) {
	var spec struct {
		RuntimeSpec struct {
			Linux struct {
				CgroupsPath string `json:"cgroupsPath"`
			} `json:"linux"`
		} `json:"runtimeSpec"`
	}
	if json.Unmarshal([]byte(info), &spec) == nil {
		p := spec.RuntimeSpec.Linux.CgroupsPath
		if strings.HasPrefix(p, "/") {
			return strings.Trim(p, "/"), "runtimeSpec.linux.cgroupsPath of the verbose ContainerStatus"
		}
		// runc's systemd form, slice:prefix:name, is the scope
		// prefix-name.scope in the slice.
		if parts := strings.Split(p, ":"); len(parts) == 3 {
			if slice, err := cgconfig.ExpandSlice(parts[0]); err == nil {
				return slice + "/" + parts[1] + "-" + parts[2] + ".scope", "runtimeSpec.linux.cgroupsPath of the verbose ContainerStatus (systemd's slice:prefix:name)"
			}
		}
	}
	if _, real := fsOf(cg); real && pid > 0 {
		if p, err := procCgroup(pid, cg.Version()); err == nil {
			return p, fmt.Sprintf("/proc/%d/cgroup of the container's process", pid)
		}
	}
	driver = driverName(driver)
	return cgconfig.ContainerCgroupName(podCgroup, id, driver),
		fmt.Sprintf("the sandbox's cgroup parent and the container ID (containerd's %s naming)", driver)
}

// ociRuntime names the OCI runtime containerd ran the container with, from
// the verbose ContainerStatus info (containerd's ContainerInfo: the
// runtime's options, whose binary_name is the runtime's binary, runc when
// unset), or "" when the info does not say (CRI-O, an in-process runtime).
func ociRuntime(info string) string {
	var ci struct {
		RuntimeType    string `json:"runtimeType"`
		RuntimeOptions struct {
			BinaryName string `json:"binary_name"`
		} `json:"runtimeOptions"`
	}
	if json.Unmarshal([]byte(info), &ci) != nil || ci.RuntimeType == "" {
		return ""
	}
	if ci.RuntimeType != "io.containerd.runc.v2" && ci.RuntimeType != "io.containerd.runc.v1" {
		return ci.RuntimeType + " (runtimeType of the verbose ContainerStatus)"
	}
	if b := ci.RuntimeOptions.BinaryName; b != "" {
		return filepath.Base(b) + " (runtimeOptions.binary_name of the verbose ContainerStatus: " + b + ")"
	}
	return "runc (runtimeType " + ci.RuntimeType + " of the verbose ContainerStatus, no binary_name)"
}

// procCgroup reads a process's cgroup: the unified line on v2, the memory
// controller's on v1.
func procCgroup(pid int, version cgconfig.Version) (string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(data), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if (version == cgconfig.V2 && parts[0] == "0" && parts[1] == "") ||
			(version == cgconfig.V1 && slices.Contains(strings.Split(parts[1], ","), "memory")) {
			return strings.Trim(parts[2], "/"), nil
		}
	}
	return "", fmt.Errorf("/proc/%d/cgroup has no %s memory line", pid, version)
}

// cgroupDirs returns the directories of the cgroup name (relative to the
// hierarchy roots) and everything below it in every hierarchy below root,
// deepest first.
func cgroupDirs(root, name string) ([]string, error) {
	mounts, err := cgroupfs.Mounts(root)
	if err != nil {
		return nil, err
	}
	if len(mounts) == 0 {
		// A tree of ordinary files laid out like a cgroup filesystem
		// (tests) has no mount: walk the root itself.
		mounts = []string{root}
	}
	var dirs []string
	for _, m := range mounts {
		filepath.WalkDir(filepath.Join(m, name), func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
	}
	slices.SortFunc(dirs, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	return dirs, nil
}

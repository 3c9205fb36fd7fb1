package cgroupfs

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// parseMountInfo returns the cgroup v1 hierarchies of a mount table (the
// content of /proc/self/mountinfo) whose mount point is a direct child of
// root, by controller name. A hierarchy that carries several controllers
// (cpu,cpuacct) appears under each of them; named hierarchies
// (name=systemd) are left out.
func parseMountInfo(content, root string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(content, "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		fields := strings.Fields(pre)
		tail := strings.Fields(post)
		if len(fields) < 5 || len(tail) < 3 || tail[0] != "cgroup" {
			continue
		}
		mnt := unescapeMount(fields[4])
		i := strings.LastIndexByte(mnt, '/')
		if i < 0 || (mnt[:i] != root && !(i == 0 && root == "/")) {
			continue
		}
		for _, opt := range strings.Split(tail[2], ",") {
			if opt == "rw" || opt == "ro" || strings.Contains(opt, "=") {
				continue
			}
			if _, dup := out[opt]; !dup {
				out[opt] = mnt
			}
		}
	}
	return out
}

// Mounts returns the mount points of every cgroup hierarchy (v1, named
// and v2) at or below root, from /proc/self/mountinfo: a runtime creates a
// pod's cgroups in every v1 hierarchy, not only cpu and memory, so a
// cleanup must visit each.
func Mounts(root string) ([]string, error) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("cgroup mounts: %w", err)
	}
	return mountsBelow(string(data), filepath.Clean(root)), nil
}

// mountsBelow is Mounts on a mount table's content.
func mountsBelow(content, root string) []string {
	var out []string
	for _, line := range strings.Split(content, "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if !ok || len(fields) < 5 || len(tail) == 0 || (tail[0] != "cgroup" && tail[0] != "cgroup2") {
			continue
		}
		if m := unescapeMount(fields[4]); m == root || strings.HasPrefix(m, root+"/") {
			out = append(out, m)
		}
	}
	return out
}

// unescapeMount undoes the octal escapes (\040 for a space) of a mountinfo
// path field.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

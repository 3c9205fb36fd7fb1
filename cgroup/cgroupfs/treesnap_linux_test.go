package cgroupfs

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/internal/cgrouptest"
)

// TestRemoveCreatedOnDirectoryTrees: on an FS over an ordinary directory
// tree each hierarchy is looked at separately: on v1 an ancestor that
// existed in the cpu hierarchy alone stays there and goes from the memory
// hierarchy, where Create made it; the created cgroups go with their
// files.
func TestRemoveCreatedOnDirectoryTrees(t *testing.T) {
	for _, v := range []cgroup.Version{cgroup.V1, cgroup.V2} {
		t.Run(v.String(), func(t *testing.T) {
			f := newFakeFS(t, v)
			first, files := f.root, fakeV2Files
			if v == cgroup.V1 {
				first, files = f.mounts["cpu"], fakeV1CPUFiles
			}
			writeFiles(t, filepath.Join(first, "abs"), files)
			s, err := cgroup.SnapshotTree(f, "abs/x")
			if err != nil {
				t.Fatal(err)
			}
			cgrouptest.CreateAll(t, f, "abs/x/kubepods/pod1", "other")
			removed, err := cgroup.RemoveCreated(f, s)
			if err != nil {
				t.Fatalf("RemoveCreated: %v", err)
			}
			want := []string{first + "/abs/x/kubepods/pod1", first + "/abs/x/kubepods", first + "/abs/x"}
			if v == cgroup.V1 {
				mem := f.mounts["memory"]
				want = []string{
					first + "/abs/x/kubepods/pod1", mem + "/abs/x/kubepods/pod1", first + "/abs/x/kubepods", mem + "/abs/x/kubepods",
					first + "/abs/x", mem + "/abs/x", mem + "/abs",
				}
			}
			if !slices.Equal(removed, want) {
				t.Errorf("removed\n%v\nwant\n%v", removed, want)
			}
			if !isDir(filepath.Join(first, "abs")) || !isDir(filepath.Join(first, "other")) {
				t.Errorf("%s/abs or %s/other is gone; both were to stay", first, first)
			}
			if v == cgroup.V1 && isDir(filepath.Join(f.mounts["memory"], "abs")) {
				t.Errorf("%s/abs is left; Create made it after the snapshot", f.mounts["memory"])
			}
		})
	}
}

// TestRemoveCreatedRealHostEveryHierarchy: on the host's cgroup
// filesystem the created cgroups go from every hierarchy, also those the
// FS does not write (a runtime creates pod cgroups in pids, cpuset, ...),
// and an ancestor that existed in one hierarchy before the snapshot stays
// there and there only.
func TestRemoveCreatedRealHostEveryHierarchy(t *testing.T) {
	f := realHostFS(t)
	top := "resizelet-createdtest-" + strconv.Itoa(os.Getpid())
	mounts, err := Mounts(f.Root())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := cgroup.RemoveTree(f, top); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	// On cgroup v1 the ancestor exists before the snapshot in the pids
	// hierarchy, which the FS does not write, as another tool's cgroup
	// would; on v2 there is one hierarchy, and nothing exists before.
	kept := ""
	for _, m := range mounts {
		if filepath.Base(m) == "pids" && f.Version() == cgroup.V1 {
			kept = m
			if err := os.Mkdir(filepath.Join(kept, top), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	s, err := cgroup.SnapshotTree(f, top+"/x")
	if err != nil {
		t.Fatal(err)
	}
	cgrouptest.CreateAll(t, f, top+"/x/kubepods/pod1")
	for _, m := range mounts {
		if err := os.MkdirAll(filepath.Join(m, top, "x", "kubepods", "pod1"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := cgroup.RemoveCreated(f, s)
	if err != nil {
		t.Fatalf("RemoveCreated: %v", err)
	}
	for _, m := range mounts {
		pod := filepath.Join(m, top, "x", "kubepods", "pod1")
		if !slices.Contains(removed, pod) {
			t.Errorf("RemoveCreated did not report removing %s", pod)
		}
		if _, err := os.Stat(filepath.Join(m, top, "x")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s/%s/x: %v, want it gone", m, top, err)
		}
		_, err := os.Stat(filepath.Join(m, top))
		if m == kept && err != nil {
			t.Errorf("%s/%s existed before the snapshot and is gone: %v", m, top, err)
		}
		if m != kept && !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s/%s: %v, want it gone", m, top, err)
		}
	}
}

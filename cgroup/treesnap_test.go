package cgroup

import (
	"errors"
	"slices"
	"syscall"
	"testing"

	"github.com/resizelet/resizelet/cgroup/internal/cgrouptest"
)

// TestRemoveCreatedOnSimKernel: what was made on the snapshot's path since
// goes, children first and the ancestors last; what existed then stays,
// also below the snapshot's cgroup, and so does what is off the path.
func TestRemoveCreatedOnSimKernel(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before []string // the cgroups when the snapshot is taken
		made   []string // those made after it
		want   []string // removed, in order
		left   []string // left, sorted
	}{
		{
			name: "nothing existed: the ancestors go too",
			made: []string{"abs/x/kubepods/pod1", "abs/x/kubepods/besteffort"},
			want: []string{"abs/x/kubepods/besteffort", "abs/x/kubepods/pod1", "abs/x/kubepods", "abs/x", "abs"},
		},
		{
			name:   "an ancestor existed: it stays with what it held",
			before: []string{"abs/keep"},
			made:   []string{"abs/x/kubepods"},
			want:   []string{"abs/x/kubepods", "abs/x"},
			left:   []string{"abs", "abs/keep"},
		},
		{
			name:   "the cgroup existed: it stays with what it held",
			before: []string{"abs/x/old"},
			made:   []string{"abs/x/new/pod", "abs/x/old/pod"},
			want:   []string{"abs/x/new/pod", "abs/x/old/pod", "abs/x/new"},
			left:   []string{"abs", "abs/x", "abs/x/old"},
		},
		{
			name: "a created ancestor that has another child since stays, without an error",
			made: []string{"abs/x/kubepods", "abs/other"},
			want: []string{"abs/x/kubepods", "abs/x"},
			left: []string{"abs", "abs/other"},
		},
		{
			name:   "cgroups off the path are never looked at",
			before: []string{"absent", "abs-x"},
			made:   []string{"abs/x", "absolutely", "abs-x/y"},
			want:   []string{"abs/x", "abs"},
			left:   []string{"abs-x", "abs-x/y", "absent", "absolutely"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := NewSimKernel(V1)
			cgrouptest.CreateAll(t, k, tc.before...)
			// Through a decorator, as a backend's manager may be.
			s, err := SnapshotTree(NewRecorder(k), "abs/x")
			if err != nil {
				t.Fatal(err)
			}
			cgrouptest.CreateAll(t, k, tc.made...)
			removed, err := RemoveCreated(NewRecorder(k), s)
			if err != nil {
				t.Fatalf("RemoveCreated: %v", err)
			}
			if !slices.Equal(removed, tc.want) {
				t.Errorf("removed %v, want %v", removed, tc.want)
			}
			if left, want := k.Paths(), append([]string{""}, tc.left...); !slices.Equal(left, want) {
				t.Errorf("left %v, want %v", left, want)
			}
			again, err := RemoveCreated(k, s)
			if err != nil || len(again) != 0 {
				t.Errorf("a second RemoveCreated = %v, %v; want nothing and no error", again, err)
			}
		})
	}
}

// TestRemoveCreatedKeepsGoingPastABusyCgroup: a cgroup with processes is
// refused as rmdir refuses it, the rest of the tree goes, and the created
// ancestors above the busy cgroup stay without an error of their own.
func TestRemoveCreatedKeepsGoingPastABusyCgroup(t *testing.T) {
	k := NewSimKernel(V2)
	s, err := SnapshotTree(k, "top/priv")
	if err != nil {
		t.Fatal(err)
	}
	cgrouptest.CreateAll(t, k, "top/priv/a", "top/priv/b")
	if err := k.SetUsage("top/priv/a", 1<<20); err != nil {
		t.Fatal(err)
	}
	removed, err := RemoveCreated(k, s)
	if !errors.Is(err, syscall.EBUSY) {
		t.Fatalf("RemoveCreated with a busy cgroup: %v, want EBUSY", err)
	}
	if !slices.Equal(removed, []string{"top/priv/b"}) {
		t.Errorf("removed %v, want [top/priv/b]", removed)
	}
	if want := []string{"", "top", "top/priv", "top/priv/a"}; !slices.Equal(k.Paths(), want) {
		t.Errorf("left %v, want %v", k.Paths(), want)
	}
}

// TestSnapshotTreeRefusesTheRootAndBadPaths: the root and a path that
// would leave it are refused before anything is looked at, and
// RemoveCreated refuses to work without a snapshot.
func TestSnapshotTreeRefusesTheRootAndBadPaths(t *testing.T) {
	k := NewSimKernel(V2)
	cgrouptest.CreateAll(t, k, "a/b")
	for _, name := range []string{"", "../a", "a/../..", "/a", "a/", "a\nb"} {
		if _, err := SnapshotTree(k, name); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("SnapshotTree(%q) = %v, want ErrInvalidPath", name, err)
		}
	}
	for _, s := range []*TreeSnapshot{nil, {}} {
		if _, err := RemoveCreated(k, s); err == nil {
			t.Errorf("RemoveCreated(%#v) = nil error, want a refusal", s)
		}
	}
	if want := []string{"", "a", "a/b"}; !slices.Equal(k.Paths(), want) {
		t.Errorf("left %v, want %v", k.Paths(), want)
	}
}

// blindManager hides what it wraps: no Paths, no Unwrap, so that the tree
// functions see only Exists and Delete.
type blindManager struct{ Manager }

// TestRemoveCreatedOnAManagerThatCannotList: a manager that can only tell
// whether a cgroup exists has the cgroup and the created ancestors
// deleted, and keeps the ancestors that existed.
func TestRemoveCreatedOnAManagerThatCannotList(t *testing.T) {
	k := NewSimKernel(V2)
	cgrouptest.CreateAll(t, k, "a")
	m := blindManager{k}
	s, err := SnapshotTree(m, "a/b/c")
	if err != nil {
		t.Fatal(err)
	}
	cgrouptest.CreateAll(t, k, "a/b/c")
	removed, err := RemoveCreated(m, s)
	if err != nil {
		t.Fatalf("RemoveCreated: %v", err)
	}
	if want := []string{"a/b/c", "a/b"}; !slices.Equal(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	if want := []string{"", "a"}; !slices.Equal(k.Paths(), want) {
		t.Errorf("left %v, want %v", k.Paths(), want)
	}
}

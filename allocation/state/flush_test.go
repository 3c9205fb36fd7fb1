package state

import (
	"os"
	"path/filepath"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestFlushWritesWhatAFailedWriteLeftInMemory: a write whose file could not
// be replaced keeps its record in memory only; the next Flush writes the
// file, and a Flush of a file that is up to date writes nothing.
func TestFlushWritesWhatAFailedWriteLeftInMemory(t *testing.T) {
	dir := t.TempDir()
	st, err := OpenCheckpoint(t.Context(), dir, ActuatedStateFile)
	if err != nil {
		t.Fatal(err)
	}
	cpu := func(q string) v1.ResourceRequirements {
		return v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(q)}}
	}
	if err := st.SetContainer("u1", "c", cpu("1")); err != nil {
		t.Fatal(err)
	}
	onDisk := func() string {
		t.Helper()
		again, err := OpenCheckpoint(t.Context(), dir, ActuatedStateFile)
		if err != nil {
			t.Fatal(err)
		}
		r, _ := again.Get("u1")
		q := r.ContainerResources["c"].Requests[v1.ResourceCPU]
		return q.String()
	}
	// A directory where the file goes makes the atomic rename fail.
	path := st.Path()
	held := filepath.Join(dir, "held")
	if err := os.Rename(path, held); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := st.SetContainer("u1", "c", cpu("2")); err == nil {
		t.Fatal("the write did not fail")
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(held, path); err != nil {
		t.Fatal(err)
	}
	if r, _ := st.Get("u1"); r.ContainerResources["c"].Requests[v1.ResourceCPU] != resource.MustParse("2") {
		t.Fatal("the failed write did not keep its record in memory")
	}
	if got := onDisk(); got != "1" {
		t.Fatalf("the file has %s after the failed write, want 1", got)
	}
	if err := st.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := onDisk(); got != "2" {
		t.Errorf("after Flush the file has %s, want 2", got)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Flush(); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.Stat(path); !again.ModTime().Equal(info.ModTime()) {
		t.Error("a Flush of an up-to-date file wrote it")
	}
	if err := NewMemory().Flush(); err != nil {
		t.Errorf("Flush of an in-memory store: %v", err)
	}
}

package state

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestOpenCheckpointRemovesStaleTemps: the temporary files a killed write
// of the store's file left are removed when the store opens; other files'
// temporary files, names that only look alike, and a directory or a
// symlink of such a name are kept, and so is a symlink's target.
func TestOpenCheckpointRemovesStaleTemps(t *testing.T) {
	dir := t.TempDir()
	writeFixture(t, dir)
	target := filepath.Join(t.TempDir(), "target")
	stale := []string{".allocated_pods_state.tmp-123456789", ".allocated_pods_state.tmp-0"}
	kept := []string{
		AllocatedStateFile,
		".actuated_pods_state.tmp-123456789",
		".allocated_pods_state.tmp-",
		".allocated_pods_state.tmp-12ab",
		".allocated_pods_state.tmp-12.bak",
		".allocated_pods_state.tmp-x.tmp-12",
		"allocated_pods_state.tmp-12",
		"resizelet.lock",
	}
	for _, name := range append(append([]string{target}, stale...), kept[1:]...) {
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		if err := os.WriteFile(name, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	dirNamed, linkNamed := ".allocated_pods_state.tmp-77", ".allocated_pods_state.tmp-78"
	if err := os.Mkdir(filepath.Join(dir, dirNamed), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, linkNamed)); err != nil {
		t.Fatal(err)
	}
	kept = append(kept, dirNamed, linkNamed)

	s, err := OpenCheckpoint(t.Context(), dir, AllocatedStateFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Get("pod1"); !ok {
		t.Error("the checkpoint itself was not loaded")
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, de := range des {
		left = append(left, de.Name())
	}
	slices.Sort(left)
	slices.Sort(kept)
	if !slices.Equal(left, kept) {
		t.Errorf("after opening, the directory has\n%q\nwant\n%q", left, kept)
	}
	if _, err := os.Stat(target); err != nil {
		t.Errorf("the symlink's target: %v", err)
	}
	// The other file's store removes its own.
	if _, err := OpenCheckpoint(t.Context(), dir, ActuatedStateFile); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, ".actuated_pods_state.tmp-123456789")); !os.IsNotExist(err) {
		t.Errorf("the actuated store's stale temporary file is still there (%v)", err)
	}
}

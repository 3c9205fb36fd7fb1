package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/allocation"
)

// kubeletFixture is the V1 checkpoint of the kubelet's
// Test_stateCheckpoint_formatUpgraded, written by the kubelet's code.
const kubeletFixture = `{"data":"{\"entries\":{\"pod1\":{\"ContainerResources\":{\"container1\":{\"requests\":{\"cpu\":\"1Ki\",\"memory\":\"1Ki\"}}}}}}","checksum":1178570812}`

func samplePod() allocation.PodResources {
	return allocation.PodResources{
		ContainerResources: map[string]v1.ResourceRequirements{
			"app":     {Requests: rl("cpu=800m", "memory=200Mi"), Limits: rl("cpu=1500m", "memory=256Mi")},
			"sidecar": {Requests: rl("cpu=10m", "memory=16Mi")},
		},
		PodLevelResources: &v1.ResourceRequirements{Requests: rl("cpu=1", "memory=512Mi"), Limits: rl("cpu=2")},
	}
}

func newTestStore(t *testing.T, dir string) *Store {
	t.Helper()
	if dir == "" {
		return NewMemory()
	}
	s, err := OpenCheckpoint(t.Context(), dir, AllocatedStateFile)
	if err != nil {
		t.Fatalf("OpenCheckpoint(%s): %v", dir, err)
	}
	return s
}

func TestChecksumMatchesKubeletFixture(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, AllocatedStateFile), []byte(kubeletFixture), 0o600); err != nil {
		t.Fatal(err)
	}
	s := newTestStore(t, dir)
	got, ok := s.Get("pod1")
	if !ok {
		t.Fatalf("Get(pod1) found nothing in the kubelet's fixture")
	}
	c := got.ContainerResources["container1"]
	if cpu, mem := c.Requests[v1.ResourceCPU], c.Requests[v1.ResourceMemory]; cpu.String() != "1Ki" || mem.String() != "1Ki" {
		t.Errorf("container1 requests = cpu %s, memory %s; want 1Ki, 1Ki", cpu.String(), mem.String())
	}
}

// TestStoreRoundTrip writes records and reads them back through a new
// store on the same directory: quantities keep their exact form.
func TestStoreRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s := newTestStore(t, dir)
	want := map[types.UID]allocation.PodResources{
		"b-pod": samplePod(),
		"a-pod": {ContainerResources: map[string]v1.ResourceRequirements{"c": {Requests: rl("cpu=250m")}}},
	}
	for uid, r := range want {
		if err := s.Set(uid, r); err != nil {
			t.Fatalf("Set(%s): %v", uid, err)
		}
	}
	if err := s.SetContainer("c-pod", "only", v1.ResourceRequirements{Limits: rl("memory=1Gi")}); err != nil {
		t.Fatalf("SetContainer: %v", err)
	}
	want["c-pod"] = allocation.PodResources{ContainerResources: map[string]v1.ResourceRequirements{"only": {Limits: rl("memory=1Gi")}}}

	reopened := newTestStore(t, dir)
	if diff := cmp.Diff([]types.UID{"a-pod", "b-pod", "c-pod"}, reopened.UIDs()); diff != "" {
		t.Errorf("UIDs() mismatch (-want +got):\n%s", diff)
	}
	for uid, w := range want {
		got, ok := reopened.Get(uid)
		if !ok || !equality.Semantic.DeepEqual(w, got) {
			t.Errorf("Get(%s) = %+v, %v; want %+v", uid, got, ok, w)
		}
	}
	got, _ := reopened.Get("b-pod")
	app := got.ContainerResources["app"]
	for name, wantStr := range map[v1.ResourceName]string{v1.ResourceCPU: "800m", v1.ResourceMemory: "200Mi"} {
		if q := app.Requests[name]; q.String() != wantStr {
			t.Errorf("app request %s = %s after the round trip, want %s", name, q.String(), wantStr)
		}
	}
}

// TestStoreFileFormat pins the bytes of the V1 format for one pod: the data
// string as the kubelet's JSON encoding writes it (a nil PodLevelResources
// as null) and its checksum.
func TestStoreFileFormat(t *testing.T) {
	dir := t.TempDir()
	s := newTestStore(t, dir)
	r := allocation.PodResources{ContainerResources: map[string]v1.ResourceRequirements{
		"c1": {Requests: rl("cpu=800m", "memory=200Mi"), Limits: rl("memory=200Mi")},
	}}
	if err := s.Set("uid-1", r); err != nil {
		t.Fatal(err)
	}
	blob, err := os.ReadFile(filepath.Join(dir, AllocatedStateFile))
	if err != nil {
		t.Fatal(err)
	}
	const data = `{"entries":{"uid-1":{"ContainerResources":{"c1":{"limits":{"memory":"200Mi"},"requests":{"cpu":"800m","memory":"200Mi"}}},"PodLevelResources":null}}}`
	want := fmt.Sprintf(`{"data":%q,"checksum":%d}`, data, checksum([]byte(data)))
	if string(blob) != want {
		t.Errorf("checkpoint file =\n%s\nwant\n%s", blob, want)
	}
}

func TestStoreAtomicWriteLeavesOnlyTheFile(t *testing.T) {
	dir := t.TempDir()
	s := newTestStore(t, dir)
	for i := range 5 {
		if err := s.Set(types.UID(fmt.Sprint(i)), samplePod()); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{AllocatedStateFile}, names); diff != "" {
		t.Errorf("directory contents mismatch (-want +got):\n%s", diff)
	}
}

// TestStoreSkipsUnchangedWrites removes the file behind the store's back to
// see whether a Set writes it again.
func TestStoreSkipsUnchangedWrites(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, AllocatedStateFile)
	s := newTestStore(t, dir)
	if err := s.Set("p", samplePod()); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := s.Set("p", samplePod()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("an unchanged Set rewrote the checkpoint (stat: %v)", err)
	}
	if err := s.SetContainer("p", "app", samplePod().ContainerResources["app"]); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("an unchanged SetContainer rewrote the checkpoint (stat: %v)", err)
	}
	if err := s.SetContainer("p", "app", v1.ResourceRequirements{Requests: rl("cpu=1")}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("a changed SetContainer did not write the checkpoint: %v", err)
	}
}

// TestStoreSkipsUnchangedWritesAfterLoad checks that a store loaded from a
// file knows that file's checksum.
func TestStoreSkipsUnchangedWritesAfterLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, AllocatedStateFile)
	if err := newTestStore(t, dir).Set("p", samplePod()); err != nil {
		t.Fatal(err)
	}
	s := newTestStore(t, dir)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := s.Set("p", samplePod()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("Set of the loaded values rewrote the checkpoint (stat: %v)", err)
	}
}

func TestStoreDeleteIsPersistedByTheNextWrite(t *testing.T) {
	dir := t.TempDir()
	s := newTestStore(t, dir)
	for _, uid := range []types.UID{"a", "b"} {
		if err := s.Set(uid, samplePod()); err != nil {
			t.Fatal(err)
		}
	}
	s.Delete("a")
	if _, ok := s.Get("a"); ok {
		t.Errorf("Get(a) found a deleted pod")
	}
	if diff := cmp.Diff([]types.UID{"a", "b"}, newTestStore(t, dir).UIDs()); diff != "" {
		t.Errorf("after Delete, the file's UIDs (-want +got):\n%s", diff)
	}
	if err := s.Set("c", samplePod()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]types.UID{"b", "c"}, newTestStore(t, dir).UIDs()); diff != "" {
		t.Errorf("after the next Set, the file's UIDs (-want +got):\n%s", diff)
	}
}

func TestStoreCorruptFiles(t *testing.T) {
	valid := func(data string) string {
		return fmt.Sprintf(`{"data":%q,"checksum":%d}`, data, checksum([]byte(data)))
	}
	tests := []struct {
		name     string
		contents string
		wantText string
	}{
		{"bad JSON", `{"data": nope}`, "invalid JSON"},
		{"truncated", kubeletFixture[:len(kubeletFixture)/2], "invalid JSON"},
		{"empty file", "", "invalid JSON"},
		{"checksum mismatch", strings.Replace(kubeletFixture, "1178570812", "1178570813", 1), "checksum mismatch: recorded 1178570813, computed 1178570812"},
		{"data edited without its checksum", strings.Replace(kubeletFixture, `1Ki\",\"memory`, `2Ki\",\"memory`, 1), "checksum mismatch"},
		{"negative checksum", `{"data":"{}","checksum":-1}`, "invalid JSON"},
		{"data is not JSON", valid(`{"entries":`), "entries do not decode"},
		{"bad quantity", valid(`{"entries":{"p":{"ContainerResources":{"c":{"requests":{"cpu":"lots"}}}}}}`), "entries do not decode"},
		{"entries of the wrong type", valid(`{"entries":["p"]}`), "entries do not decode"},
		{"empty data", `{"checksum":1}`, "checksum mismatch"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, ActuatedStateFile)
			if err := os.WriteFile(path, []byte(tc.contents), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := OpenCheckpoint(t.Context(), dir, ActuatedStateFile)
			if !errors.Is(err, ErrCorruptCheckpoint) {
				t.Fatalf("OpenCheckpoint() = %v, %v; want an error wrapping ErrCorruptCheckpoint", s, err)
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.wantText) {
				t.Errorf("error %q does not name %s and %q", err, path, tc.wantText)
			}
		})
	}
}

func TestOpenCheckpointAcceptsOtherFields(t *testing.T) {
	data := `{"entries":{"p":{"ContainerResources":{"c":{"requests":{"cpu":"1"}}},"EmptyDirVolumeLimits":null}}}`
	dir := t.TempDir()
	blob := fmt.Sprintf(`{"data":%q,"checksum":%d,"version":"v1"}`, data, checksum([]byte(data)))
	if err := os.WriteFile(filepath.Join(dir, AllocatedStateFile), []byte(blob), 0o600); err != nil {
		t.Fatal(err)
	}
	s := newTestStore(t, dir)
	if _, ok := s.Get("p"); !ok {
		t.Errorf("Get(p) found nothing")
	}
}

func TestOpenCheckpointReadErrorIsNotCorruption(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, AllocatedStateFile), 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := OpenCheckpoint(t.Context(), dir, AllocatedStateFile)
	if err == nil || errors.Is(err, ErrCorruptCheckpoint) {
		t.Errorf("OpenCheckpoint() on a directory = %v, want a read error that is not ErrCorruptCheckpoint", err)
	}
}

func TestOpenCheckpointCreatesDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "var", "lib", "kubelet")
	s := newTestStore(t, dir)
	if err := s.Set("p", samplePod()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, AllocatedStateFile)); err != nil {
		t.Errorf("checkpoint not written in the new directory: %v", err)
	}
}

func TestStoreInMemory(t *testing.T) {
	cwd := t.TempDir()
	t.Chdir(cwd)
	s := newTestStore(t, "")
	if err := s.Set("p", samplePod()); err != nil {
		t.Fatal(err)
	}
	if got, ok := s.Get("p"); !ok || !equality.Semantic.DeepEqual(samplePod(), got) {
		t.Errorf("Get(p) = %+v, %v", got, ok)
	}
	if s.Path() != "" {
		t.Errorf("Path() = %q, want empty", s.Path())
	}
	if entries, _ := os.ReadDir(cwd); len(entries) != 0 {
		t.Errorf("an in-memory store wrote %d files", len(entries))
	}
}

// TestStoreCopies checks that records given to and returned by a file
// checkpoint do not alias its own.
func TestStoreCopies(t *testing.T) {
	s := newTestStore(t, t.TempDir())
	in := samplePod()
	if err := s.Set("p", in); err != nil {
		t.Fatal(err)
	}
	in.ContainerResources["app"].Requests[v1.ResourceCPU] = rl("cpu=9")[v1.ResourceCPU]
	in.PodLevelResources.Requests = nil
	out, _ := s.Get("p")
	out.ContainerResources["app"].Limits[v1.ResourceCPU] = rl("cpu=9")[v1.ResourceCPU]
	delete(out.ContainerResources, "sidecar")
	if got, _ := s.Get("p"); !equality.Semantic.DeepEqual(samplePod(), got) {
		t.Errorf("stored record changed through a copy: %+v", got)
	}
}

func TestStoreConcurrentUse(t *testing.T) {
	s := newTestStore(t, t.TempDir())
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				uid := types.UID(fmt.Sprintf("%d-%d", w, i))
				if err := s.Set(uid, samplePod()); err != nil {
					t.Error(err)
				}
				s.Get(uid)
				_ = s.UIDs()
			}
		}()
	}
	wg.Wait()
	if got := len(newTestStore(t, filepath.Dir(s.Path())).UIDs()); got != 80 {
		t.Errorf("the file holds %d pods, want 80", got)
	}
}

func rl(pairs ...string) v1.ResourceList {
	if len(pairs) == 0 {
		return nil
	}
	out := v1.ResourceList{}
	for _, p := range pairs {
		name, q, ok := strings.Cut(p, "=")
		if !ok {
			panic("bad pair " + p)
		}
		out[v1.ResourceName(name)] = resource.MustParse(q)
	}
	return out
}

// TestMemoryKeepsGivenRecords: an in-memory checkpoint keeps the record Set
// is given (no copy), returns copies, and does not change a given record
// when a container's record is set afterwards.
func TestMemoryKeepsGivenRecords(t *testing.T) {
	s := NewMemory()
	given := samplePod()
	if err := s.Set("p", given); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Get("p")
	got.ContainerResources["app"].Requests[v1.ResourceCPU] = rl("cpu=9")[v1.ResourceCPU]
	if again, _ := s.Get("p"); !equality.Semantic.DeepEqual(samplePod(), again) {
		t.Errorf("Get returned the stored record itself: %+v", again)
	}
	if err := s.SetContainer("p", "app", v1.ResourceRequirements{Requests: rl("cpu=2")}); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(samplePod(), given) {
		t.Errorf("SetContainer changed the record given to Set: %+v", given)
	}
	if r, _ := s.Get("p"); !equality.Semantic.DeepEqual(r.ContainerResources["app"].Requests, rl("cpu=2")) {
		t.Errorf("SetContainer did not take: %+v", r)
	}
	// The copy SetContainer made is the store's own: more container
	// writes change it in place, and the given record still not.
	three := v1.ResourceRequirements{Requests: rl("cpu=3")}
	if n := testing.AllocsPerRun(10, func() { _ = s.SetContainer("p", "app", three) }); n > 0.5 {
		t.Errorf("a container write to the store's own map allocated %v times", n)
	}
	if !equality.Semantic.DeepEqual(samplePod(), given) {
		t.Errorf("later SetContainers changed the record given to Set: %+v", given)
	}
	// A record given to Set again is the caller's once more.
	again := samplePod()
	if err := s.Set("p", again); err != nil {
		t.Fatal(err)
	}
	if err := s.SetContainer("p", "app", v1.ResourceRequirements{Requests: rl("cpu=4")}); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(samplePod(), again) {
		t.Errorf("SetContainer changed the record given to Set again: %+v", again)
	}
}

// TestMemoryFreezesColdRecords: an in-memory checkpoint with more records
// than it keeps thawed answers for the frozen ones exactly as for the
// others (Get, View, All, UIDs), takes container writes to them, and
// never changes a record it was given.
func TestMemoryFreezesColdRecords(t *testing.T) {
	s := NewMemory()
	want := map[types.UID]allocation.PodResources{}
	given := map[types.UID]allocation.PodResources{}
	for i := 0; i < 3*hotRecords; i++ {
		uid := types.UID(fmt.Sprintf("p%02d", i))
		r := allocation.PodResources{ContainerResources: map[string]v1.ResourceRequirements{
			"a": {Requests: rl(fmt.Sprintf("cpu=%dm", 100+i), "memory=64Mi")},
		}}
		if i%3 == 0 {
			r.PodLevelResources = &v1.ResourceRequirements{Limits: rl("cpu=4")}
		}
		given[uid] = r
		want[uid] = r.DeepCopy()
		if err := s.Set(uid, r); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.cold) != 2*hotRecords || len(s.entries) != hotRecords {
		t.Fatalf("%d records frozen and %d thawed, want %d and %d", len(s.cold), len(s.entries), 2*hotRecords, hotRecords)
	}
	// A container write to the oldest (frozen) record.
	if err := s.SetContainer("p00", "b", v1.ResourceRequirements{Limits: rl("memory=1Gi")}); err != nil {
		t.Fatal(err)
	}
	w := want["p00"]
	w.ContainerResources["b"] = v1.ResourceRequirements{Limits: rl("memory=1Gi")}
	for uid, r := range want {
		got, ok := s.Get(uid)
		if !ok || !equality.Semantic.DeepEqual(got, r) {
			t.Errorf("Get(%s) = %+v, %v; want %+v", uid, got, ok, r)
		}
		var viewed allocation.PodResources
		if !s.View(uid, func(r allocation.PodResources) { viewed = r.DeepCopy() }) || !equality.Semantic.DeepEqual(viewed, r) {
			t.Errorf("View(%s) saw %+v, want %+v", uid, viewed, r)
		}
	}
	if all := s.All(); !equality.Semantic.DeepEqual(all, want) {
		t.Errorf("All() = %+v, want %+v", all, want)
	}
	if uids := s.UIDs(); len(uids) != len(want) || !slices.IsSorted(uids) {
		t.Errorf("UIDs() = %v", uids)
	}
	if _, ok := given["p00"].ContainerResources["b"]; ok {
		t.Error("a container write changed the record given to Set")
	}
	s.Delete("p01")
	if _, ok := s.Get("p01"); ok {
		t.Error("a deleted frozen record is still there")
	}
}

// TestFormatWithEmptyDirLimits pins the 1.37 entry
// (pkg/kubelet/allocation/state/state.go, PodResourceInfo): after
// PodLevelResources comes "EmptyDirVolumeLimits":null, as encoding/json
// writes the kubelet's untagged struct; either format reads back the same.
func TestFormatWithEmptyDirLimits(t *testing.T) {
	entries := map[types.UID]allocation.PodResources{
		"u1": {ContainerResources: map[string]v1.ResourceRequirements{"c": {Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}}}},
	}
	old, err := encodeData(entries, FormatPodResources)
	if err != nil {
		t.Fatal(err)
	}
	want137 := `{"entries":{"u1":{"ContainerResources":{"c":{"requests":{"cpu":"100m"}}},"PodLevelResources":null,"EmptyDirVolumeLimits":null}}}`
	got137, err := encodeData(entries, FormatWithEmptyDirLimits)
	if err != nil {
		t.Fatal(err)
	}
	if got137 != want137 {
		t.Errorf("1.37 data = %s\nwant %s", got137, want137)
	}
	if old == got137 {
		t.Errorf("the two formats give the same bytes: %s", old)
	}
	for _, data := range []string{old, got137} {
		back, err := decodeData([]byte(data))
		if err != nil {
			t.Fatal(err)
		}
		if q := back["u1"].ContainerResources["c"].Requests[v1.ResourceCPU]; q.String() != "100m" {
			t.Errorf("decoded %s: cpu %s", data, q.String())
		}
	}
	// A store in the 1.37 format writes it to its file.
	dir := t.TempDir()
	s, err := OpenCheckpoint(t.Context(), dir, AllocatedStateFile, WithFormat(FormatWithEmptyDirLimits))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Set("u1", entries["u1"]); err != nil {
		t.Fatal(err)
	}
	blob, err := os.ReadFile(filepath.Join(dir, AllocatedStateFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(blob), `\"EmptyDirVolumeLimits\":null`) {
		t.Errorf("file %s lacks the 1.37 field", blob)
	}
	reopened, err := OpenCheckpoint(t.Context(), dir, AllocatedStateFile)
	if err != nil {
		t.Fatalf("a 1.37 file does not open: %v", err)
	}
	if _, ok := reopened.Get("u1"); !ok {
		t.Errorf("a 1.37 file lost its entry")
	}
}

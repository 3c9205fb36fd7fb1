package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// checksummed is a checkpoint file whose checksum matches its data.
func checksummed(data string) string {
	return fmt.Sprintf(`{"data":%q,"checksum":%d}`, data, checksum([]byte(data)))
}

// TestCheckpointOfTheWrongShapeIsRefused: a file that is valid JSON, whose
// checksum matches, but whose data is not the kubelet's checkpoint (which
// the kubelet's json.Unmarshal would load as fewer allocations, often
// none) is refused with ErrCorruptCheckpoint, naming the place; the file
// is left as it was.
func TestCheckpointOfTheWrongShapeIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
	}{
		{"null data", `null`, "the data: not a JSON object (null)"},
		{"other keys only", `{"pods":{"p":{"ContainerResources":{}}}}`, `the data has no "entries" key (it has "pods")`},
		{"entries of null pods", `{"entries":{"p":null}}`, `entries["p"]: not a JSON object (null)`},
		{"the 1.32 layout", `{"entries":{"p":{"c":{"requests":{"cpu":"1"}}}}}`, `entries["p"]: the pod record has no "ContainerResources" key (it has "c")`},
		{"an empty pod record", `{"entries":{"p":{}}}`, `entries["p"]: the pod record has no "ContainerResources" key (it has no keys)`},
		{"an empty UID", `{"entries":{"":{"ContainerResources":{}}}}`, `entries[""]: a pod UID must not be empty`},
		{"an empty container name", `{"entries":{"p":{"ContainerResources":{"":{}}}}}`, `entries["p"].ContainerResources: a container name must not be empty`},
		{"a null container", `{"entries":{"p":{"ContainerResources":{"c":null}}}}`, `entries["p"].ContainerResources["c"]: not a JSON object (null)`},
		{"resources without requests or limits", `{"entries":{"p":{"ContainerResources":{"c":{"cpu":"1"}}}}}`, `entries["p"].ContainerResources["c"]: not resource requirements: none of "requests", "limits" or "claims" (it has "cpu")`},
		{"pod level without requests or limits", `{"entries":{"p":{"ContainerResources":null,"PodLevelResources":{"memory":"1Gi"}}}}`, `entries["p"].PodLevelResources: not resource requirements`},
		{"an amount beyond int64", `{"entries":{"p":{"ContainerResources":{"c":{"limits":{"cpu":"1e100"}}}}}}`, `entries["p"].ContainerResources["c"].limits[cpu]: 10e99 is more than 9G`},
		{"a negative amount", `{"entries":{"p":{"ContainerResources":{"c":{"requests":{"memory":"-1"}}}}}}`, `entries["p"].ContainerResources["c"].requests[memory]: -1 is negative`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, AllocatedStateFile)
			contents := checksummed(tc.data)
			if err := os.WriteFile(path, []byte(contents), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := OpenCheckpoint(t.Context(), dir, AllocatedStateFile)
			if !errors.Is(err, ErrCorruptCheckpoint) || !strings.Contains(err.Error(), path) ||
				!strings.Contains(err.Error(), "not the kubelet's checkpoint") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("OpenCheckpoint() = %v, %v; want ErrCorruptCheckpoint naming %s and %q", s, err, path, tc.want)
			}
			if got, _ := os.ReadFile(path); string(got) != contents {
				t.Fatalf("the refused file was changed: %s", got)
			}
		})
	}
	err := func() error {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, ActuatedStateFile), []byte(checksummed(`{"entries":{"p":{"ContainerResources":{"c":{"limits":{"memory":"16Ei"}}}}}}`)), 0o600)
		_, err := OpenCheckpoint(t.Context(), dir, ActuatedStateFile)
		return err
	}()
	if !errors.Is(err, cgconfig.ErrAmountTooLarge) {
		t.Errorf("an amount beyond the bounds = %v, want ErrAmountTooLarge too", err)
	}
}

// TestCheckpointShapesTheKubeletWrites: what the kubelet writes, and what
// a newer kubelet might add, still loads.
func TestCheckpointShapesTheKubeletWrites(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		pods       int
	}{
		{"no entries", `{}`, 0},
		{"empty entries", `{"entries":{}}`, 0},
		{"null entries", `{"entries":null}`, 0},
		{"1.35", `{"entries":{"uid-1":{"ContainerResources":{"c1":{"limits":{"memory":"200Mi"},"requests":{"cpu":"800m","memory":"200Mi"}}},"PodLevelResources":null}}}`, 1},
		{"null containers and pod level", `{"entries":{"p":{"ContainerResources":null,"PodLevelResources":{"requests":{"cpu":"1"}}}}}`, 1},
		{"a container without resources", `{"entries":{"p":{"ContainerResources":{"c":{}}}}}`, 1},
		{"claims only", `{"entries":{"p":{"ContainerResources":{"c":{"claims":[{"name":"gpu"}]}}}}}`, 1},
		{"keys in another case", `{"Entries":{"p":{"containerresources":{"c":{"Requests":{"cpu":"1"}}}}}}`, 1},
		{"fields a newer kubelet adds", `{"entries":{"p":{"ContainerResources":{"c":{"requests":{"cpu":"1"},"x":1}},"New":2}},"version":3}`, 1},
		{"the bounds", `{"entries":{"p":{"ContainerResources":{"c":{"requests":{"cpu":"9G","memory":"8Pi"}}}}}}`, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			entries, _, err := decodeCheckpoint("test", []byte(checksummed(tc.data)))
			if err != nil || len(entries) != tc.pods {
				t.Fatalf("decodeCheckpoint() = %v, %v; want %d pods", entries, err, tc.pods)
			}
			checkRoundTrip(t, entries)
		})
	}
}

// TestCheckpointRepeatedKeys: encoding/json merges a map given twice (a
// repeated key, or one in another case), so a pod record hidden behind a
// repeated key is checked too, or refused.
func TestCheckpointRepeatedKeys(t *testing.T) {
	for _, data := range []string{
		`{"entries":{"a":{"c":{}}},"entries":{"b":{"ContainerResources":{}}}}`,
		`{"entries":{"b":{"ContainerResources":{}}},"ENTRIES":{"a":{"c":{}}}}`,
		`{"entries":{"a":{"ContainerResources":{"c":{"x":1}},"containerResources":{"d":{}}}}}`,
	} {
		if _, _, err := decodeCheckpoint("test", []byte(checksummed(data))); !errors.Is(err, ErrCorruptCheckpoint) || !strings.Contains(err.Error(), "not the kubelet's checkpoint") {
			t.Errorf("decodeCheckpoint(%s) = %v, want it refused", data, err)
		}
	}
}

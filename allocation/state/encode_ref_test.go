package state

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/allocation"
)

// encodeData is the reference for a file store's data: the entries
// encoded whole by encoding/json, as the kubelet encodes its
// PodResourceCheckpointInfo (a map, whose keys encoding/json sorts), in
// the given format. The store encodes pod by pod (encodeLocked) and must
// give these bytes.
func encodeData(entries map[types.UID]allocation.PodResources, format Format) (string, error) {
	var b []byte
	var err error
	if format == FormatWithEmptyDirLimits {
		withLimits := make(map[types.UID]entryWithEmptyDirLimits, len(entries))
		for uid, r := range entries {
			withLimits[uid] = entryWithEmptyDirLimits{ContainerResources: r.ContainerResources, PodLevelResources: r.PodLevelResources}
		}
		b, err = json.Marshal(checkpointDataWithEmptyDirLimits{Entries: withLimits})
	} else {
		b, err = json.Marshal(checkpointData{Entries: entries})
	}
	if err != nil {
		return "", err
	}
	return string(b), nil
}

type checkpointDataWithEmptyDirLimits struct {
	Entries map[types.UID]entryWithEmptyDirLimits `json:"entries,omitempty"`
}

// TestStoreFileIsTheWholeEncoding: after every write of a random
// sequence of Set, SetContainer and Delete, in either format, the file is
// byte for byte the checkpoint of the whole entries encoded at once by
// encoding/json (encodeData), though the store encodes only the records
// that changed. UIDs and names include characters encoding/json escapes.
func TestStoreFileIsTheWholeEncoding(t *testing.T) {
	uids := []types.UID{"a", "b<&>", "c\u2028", "z", "é", "0", "\x7f", "m\"q"}
	names := []string{"app", "side<car>", "x"}
	for _, format := range []Format{FormatPodResources, FormatWithEmptyDirLimits} {
		dir := t.TempDir()
		s, err := OpenCheckpoint(t.Context(), dir, AllocatedStateFile, WithFormat(format))
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(uint64(format), 7))
		for step := range 300 {
			uid := uids[rng.IntN(len(uids))]
			var op string
			switch rng.IntN(4) {
			case 0:
				op = "Delete"
				s.Delete(uid)
				err = s.Flush()
			case 1:
				op = "SetContainer"
				err = s.SetContainer(uid, names[rng.IntN(len(names))], v1.ResourceRequirements{Requests: rl(fmt.Sprintf("cpu=%dm", 1+rng.IntN(5)))})
			default:
				op = "Set"
				r := allocation.PodResources{ContainerResources: map[string]v1.ResourceRequirements{}}
				for _, name := range names[:rng.IntN(len(names)+1)] {
					r.ContainerResources[name] = v1.ResourceRequirements{Limits: rl(fmt.Sprintf("memory=%dMi", 1+rng.IntN(5)))}
				}
				if rng.IntN(3) == 0 {
					r.PodLevelResources = &v1.ResourceRequirements{Requests: rl("cpu=1")}
				}
				err = s.Set(uid, r)
			}
			if err != nil {
				t.Fatalf("format %d step %d: %s(%q): %v", format, step, op, uid, err)
			}
			data, err := encodeData(s.All(), format)
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(checkpointFile{Data: data, Checksum: checksum([]byte(data))})
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(s.Path())
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Fatalf("format %d step %d, after %s(%q): the file is\n%s\nwant\n%s", format, step, op, uid, got, want)
			}
		}
	}
}

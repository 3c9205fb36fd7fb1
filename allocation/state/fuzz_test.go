package state

import (
	"encoding/json"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/allocation"
)

// FuzzDecodeCheckpoint feeds arbitrary file contents to the checkpoint
// decoder: it must never panic, every failure must be ErrCorruptCheckpoint,
// and whatever it accepts must survive an encode/decode round trip.
func FuzzDecodeCheckpoint(f *testing.F) {
	f.Add([]byte(kubeletFixture))
	f.Fuzz(func(t *testing.T, blob []byte) {
		entries, _, err := decodeCheckpoint("fuzz", blob)
		if err != nil {
			if !errors.Is(err, ErrCorruptCheckpoint) {
				t.Fatalf("decodeCheckpoint() error %v does not wrap ErrCorruptCheckpoint", err)
			}
			return
		}
		checkRoundTrip(t, entries)
	})
}

// FuzzDecodeEntries fuzzes the data string behind a valid checksum, which
// the file-level fuzzer rarely reaches.
func FuzzDecodeEntries(f *testing.F) {
	f.Add(`{"entries":{"p":{"ContainerResources":{"c":{"requests":{"cpu":"800m","memory":"200Mi"}}},"PodLevelResources":null}}}`)
	f.Fuzz(func(t *testing.T, data string) {
		entries, err := decodeData(data)
		if err != nil {
			return
		}
		checkRoundTrip(t, entries)
	})
}

// checkRoundTrip encodes entries, decodes them again and checks that the
// result is equal and that encoding is then stable byte for byte.
func checkRoundTrip(t *testing.T, entries map[types.UID]allocation.PodResources) {
	t.Helper()
	data, err := encodeData(entries, FormatPodResources)
	if err != nil {
		t.Fatalf("encodeData() of decoded entries: %v", err)
	}
	blob, err := json.Marshal(checkpointFile{Data: data, Checksum: checksum(data)})
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := decodeCheckpoint("fuzz", blob)
	if err != nil {
		t.Fatalf("re-decoding encoded entries: %v", err)
	}
	if !equality.Semantic.DeepEqual(entries, again) {
		t.Fatalf("round trip changed the entries:\n%+v\n%+v", entries, again)
	}
	data2, err := encodeData(again, FormatPodResources)
	if err != nil || data2 != data {
		t.Fatalf("encoding is not stable: %v\n%s\n%s", err, data, data2)
	}
}

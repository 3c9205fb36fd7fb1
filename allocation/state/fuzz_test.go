package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/dump"

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
// the file-level fuzzer rarely reaches, checks the checksum of every
// string it is given against the kubelet's form of it, and compares the
// layout check with the reference (checkLayoutAgainstReference). The
// seeds with repeated keys are where the two differ most: the one-pass
// check also refuses a bad record that a later repeated key hides, which
// the reference does not see.
func FuzzDecodeEntries(f *testing.F) {
	f.Add(`{"entries":{"p":{"ContainerResources":{"c":{"requests":{"cpu":"800m","memory":"200Mi"}}},"PodLevelResources":null}}}`)
	for _, data := range []string{
		`{"entries":{"a":{"c":{}}},"entries":{"b":{"ContainerResources":{}}}}`,
		`{"entries":{"b":{"ContainerResources":{}}},"ENTRIES":{"a":{"c":{}}}}`,
		`{"entries":{"a":{"ContainerResources":{"c":{"x":1}},"containerResources":{"d":{}}}}}`,
		`{"entries":{"a":{"c":{}},"a":{"ContainerResources":{}}}}`,
		`{"entrieſ":{"a":{"ContainerResources":{"c":{"requests":{"cpu":"1"}}}}}}`,
	} {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data string) {
		if got, want := checksum([]byte(data)), kubeletChecksum(data); got != want {
			t.Fatalf("checksum(%q) = %d, the kubelet's form gives %d", data, got, want)
		}
		checkLayoutAgainstReference(t, []byte(data))
		entries, err := decodeData([]byte(data))
		if err != nil {
			return
		}
		checkRoundTrip(t, entries)
	})
}

// checkLayoutAgainstReference compares checkLayout with the map-based
// check it replaced (shape_ref_test.go) on data that encoding/json
// decodes: the one-pass check must not accept what the reference refuses.
func checkLayoutAgainstReference(t *testing.T, data []byte) {
	t.Helper()
	var d checkpointData
	if json.Unmarshal(data, &d) != nil {
		return
	}
	if checkLayout(data) == nil && !refAccepts(data, d.Entries) {
		t.Fatalf("checkLayout accepts %q, which the reference refuses", data)
	}
}

// kubeletChecksum is the kubelet's checksum.New(data) as the kubelet
// writes it: FNV-32a over fmt's %v of dump.ForHash(data).
func kubeletChecksum(data string) uint64 {
	h := fnv.New32a()
	fmt.Fprintf(h, "%v", dump.ForHash(data))
	return uint64(h.Sum32())
}

// TestChecksumIsTheKubeletsForm: checksum hashes the data without
// printing it, and gives what the kubelet's printing gives, for data
// with quotes, escapes, format verbs and bytes that are not UTF-8.
func TestChecksumIsTheKubeletsForm(t *testing.T) {
	for _, data := range []string{"", "{}", `{"entries":{"p\"q":{}}}`, "%v %!s(MISSING) %%", "\xff\xfe\x00 \u2028", strings.Repeat("é", 1000)} {
		if got, want := checksum([]byte(data)), kubeletChecksum(data); got != want {
			t.Errorf("checksum(%q) = %d, the kubelet's form gives %d", data, got, want)
		}
	}
}

// checkRoundTrip encodes entries, decodes them again and checks that the
// result is equal and that encoding is then stable byte for byte.
func checkRoundTrip(t *testing.T, entries map[types.UID]allocation.PodResources) {
	t.Helper()
	data, err := encodeData(entries, FormatPodResources)
	if err != nil {
		t.Fatalf("encodeData() of decoded entries: %v", err)
	}
	blob, err := json.Marshal(checkpointFile{Data: data, Checksum: checksum([]byte(data))})
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

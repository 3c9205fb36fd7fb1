package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/fnv"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/allocation"
)

// checkpointFile is the V1 file format of pkg/kubelet/allocation/state
// (Checkpoint): the entries serialized as a JSON string, and its checksum.
type checkpointFile struct {
	Data     string `json:"data"`
	Checksum uint64 `json:"checksum"`
}

// checkpointData is what checkpointFile.Data holds (the kubelet's
// PodResourceCheckpointInfo).
type checkpointData struct {
	Entries map[types.UID]allocation.PodResources `json:"entries,omitempty"`
}

// checksum is the kubelet's checksum.New(data) for a checkpoint's data
// string: FNV-32a over hash.DeepHashObject, which prints
// dump.ForHash(data) with %v into the hasher, widened to uint64. For a
// string, dump.ForHash (spew's %#v) is the type in parentheses and then
// the string as it is, so the hash is taken over "(string)" and data
// directly, without printing a copy of a file-sized string
// (TestChecksumIsTheKubeletsForm compares the two forms).
//
// The byte-exact input is an open point (resize/kubelet-resize.md §4.1); this form reproduces
// the checksum of the kubelet's own V1 fixture (state_checkpoint_test.go,
// Test_stateCheckpoint_formatUpgraded: 1178570812), which
// TestChecksumMatchesKubeletFixture pins.
func checksum(data []byte) uint64 {
	h := checksumHash()
	_, _ = h.Write(data)
	return uint64(h.Sum32())
}

// checksumHash returns the hash of checksum with "(string)" written, for
// the data to be written to it, whole or in pieces.
func checksumHash() hash.Hash32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte("(string)"))
	return h
}

// encodeMember encodes one pod's member of the data, "uid":{record}, in
// format, as encoding/json writes it inside the entries map: the key as
// it writes a string (the UID is a string kind: no method is asked), the
// record as it writes the record alone.
func encodeMember(uid types.UID, r allocation.PodResources, format Format) ([]byte, error) {
	key, err := json.Marshal(string(uid))
	if err != nil {
		return nil, err
	}
	var rec any = r
	if format == FormatWithEmptyDirLimits {
		rec = entryWithEmptyDirLimits{ContainerResources: r.ContainerResources, PodLevelResources: r.PodLevelResources}
	}
	val, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	return append(append(key, ':'), val...), nil
}

// member is one pod's encoded member of a file store's data.
type member struct {
	uid types.UID
	enc []byte // "uid":{record}; nil until the record is encoded
	esc []byte // enc as it is written inside the file's JSON string
}

// changedLocked notes that uid's record was set, for the next write to
// encode it again, and adds uid to the encoded members if it is new. The
// caller holds s.mu.
func (s *Store) changedLocked(uid types.UID) {
	if s.encoded == nil {
		return
	}
	i, found := slices.BinarySearchFunc(s.encoded, uid, byUID)
	if found {
		s.encoded[i].enc = nil
	} else {
		s.encoded = slices.Insert(s.encoded, i, member{uid: uid})
	}
}

// deletedLocked forgets uid's encoded member. The caller holds s.mu.
func (s *Store) deletedLocked(uid types.UID) {
	if i, found := slices.BinarySearchFunc(s.encoded, uid, byUID); found {
		s.encoded = slices.Delete(s.encoded, i, i+1)
	}
}

func byUID(m member, uid types.UID) int { return strings.Compare(string(m.uid), string(uid)) }

// encodeLocked encodes the members of the records that changed since
// the last write (all of them, the first time). The caller holds s.mu.
func (s *Store) encodeLocked() error {
	if s.encoded == nil {
		s.encoded = make([]member, 0, len(s.entries))
		for _, uid := range slices.Sorted(maps.Keys(s.entries)) {
			s.encoded = append(s.encoded, member{uid: uid})
		}
	}
	for i := range s.encoded {
		m := &s.encoded[i]
		if m.enc != nil {
			continue
		}
		enc, err := encodeMember(m.uid, s.entries[m.uid], s.format)
		if err != nil {
			return err
		}
		esc, err := json.Marshal(string(enc))
		if err != nil {
			return err
		}
		// One allocation for both, side by side, as fileLocked reads them.
		both := append(enc, esc[1:len(esc)-1]...)
		m.enc, m.esc = both[:len(enc):len(enc)], both[len(enc):]
	}
	return nil
}

// Pieces of the data around the members, as they are and as they are
// written inside the file's JSON string.
var (
	noEntries, comma, dataEnd = []byte("{}"), []byte(","), []byte("}}")
	dataStart, dataStartEsc   = []byte(`{"entries":{`), []byte(`{\"entries\":{`)
)

// fileLocked returns the store's file, checkpointFile as encoding/json
// writes it, and the checksum of its data, in one pass over the members
// (after encodeLocked). The data is what encoding/json writes for
// checkpointData (or its 1.37 form): {"entries":{...}} with the members
// sorted by UID, or {} without entries (omitempty). The checksum is taken
// over the members as they are; the file has them escaped, one by one:
// encoding/json escapes a string rune by rune, the members are valid
// UTF-8 and they meet at ASCII bytes, so the members escaped one by one
// are the data escaped whole.
//
// A write thus copies the members of the records that did not change
// rather than encoding every record again, and the data is never made
// whole but in the file's bytes. The file is made in the buffer of the
// previous write, kept in s.blob. The caller holds s.mu.
func (s *Store) fileLocked() ([]byte, uint64) {
	h := checksumHash()
	blob := append(s.blob[:0], `{"data":"`...)
	piece := func(enc, esc []byte) {
		_, _ = h.Write(enc)
		blob = append(blob, esc...)
	}
	if len(s.encoded) == 0 {
		piece(noEntries, noEntries)
	} else {
		piece(dataStart, dataStartEsc)
		for i, m := range s.encoded {
			if i > 0 {
				piece(comma, comma)
			}
			piece(m.enc, m.esc)
		}
		piece(dataEnd, dataEnd)
	}
	sum := uint64(h.Sum32())
	blob = append(blob, `","checksum":`...)
	blob = append(strconv.AppendUint(blob, sum, 10), '}')
	s.blob = blob
	return blob, sum
}

// Format is the shape of a checkpoint's entries, which follows the
// kubelet's PodResourceInfo of a release.
type Format int

const (
	// FormatPodResources is the entry of 1.33 to 1.36: ContainerResources
	// and PodLevelResources.
	FormatPodResources Format = iota
	// FormatWithEmptyDirLimits is the 1.37 entry, which adds
	// EmptyDirVolumeLimits (pkg/kubelet/allocation/state/state.go,
	// PodResourceInfo). resizelet resizes no volume, so it is always
	// null, but it is written, as the kubelet writes it.
	FormatWithEmptyDirLimits
)

// entryWithEmptyDirLimits is the 1.37 PodResourceInfo, field for field
// in the kubelet's order (no json tags, no omitempty).
type entryWithEmptyDirLimits struct {
	ContainerResources   map[string]v1.ResourceRequirements
	PodLevelResources    *v1.ResourceRequirements
	EmptyDirVolumeLimits map[string]*resource.Quantity
}

// decodeData parses a checkpoint's data string and checks that it has the
// kubelet's shape (checkShape; a *shapeError when it has not).
func decodeData(data []byte) (map[types.UID]allocation.PodResources, error) {
	var d checkpointData
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, err
	}
	if err := checkShape(data, d.Entries); err != nil {
		return nil, err
	}
	if d.Entries == nil {
		d.Entries = map[types.UID]allocation.PodResources{}
	}
	return d.Entries, nil
}

// decodeCheckpoint parses a checkpoint file's contents and verifies its
// checksum. Every failure wraps ErrCorruptCheckpoint and names path and what
// was wrong.
func decodeCheckpoint(path string, blob []byte) (map[types.UID]allocation.PodResources, uint64, error) {
	var cp checkpointFile
	if err := json.Unmarshal(blob, &cp); err != nil {
		return nil, 0, fmt.Errorf("%w %s: invalid JSON: %v", ErrCorruptCheckpoint, path, err)
	}
	data := []byte(cp.Data)
	if sum := checksum(data); sum != cp.Checksum {
		return nil, 0, fmt.Errorf("%w %s: checksum mismatch: recorded %d, computed %d",
			ErrCorruptCheckpoint, path, cp.Checksum, sum)
	}
	entries, err := decodeData(data)
	var shape *shapeError
	if errors.As(err, &shape) {
		return nil, 0, fmt.Errorf("%w %s: valid JSON with a matching checksum, but not the kubelet's checkpoint: %w", ErrCorruptCheckpoint, path, err)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("%w %s: entries do not decode: %v", ErrCorruptCheckpoint, path, err)
	}
	return entries, cp.Checksum, nil
}

func checkpointPath(dir, file string) string { return filepath.Join(dir, file) }

// NewMemory returns a checkpoint that lives in memory only and never
// touches the disk. A kubelet restart in a simulation is a new node on the
// same Store.
//
// Unlike a file checkpoint, it keeps the record Set (and the requirements
// SetContainer) is given rather than a copy, so that a simulated node
// records an allocation without copying it: the caller must not change a
// record it has given (the resize core never changes a record in place).
// Get and All still return copies.
func NewMemory() *Store {
	return &Store{entries: map[types.UID]allocation.PodResources{}, keepGiven: true}
}

// CheckpointOption changes how OpenCheckpoint opens a checkpoint.
type CheckpointOption func(*checkpointOptions)

type checkpointOptions struct {
	format  Format
	maxSize int64
}

// WithMaxSize makes OpenCheckpoint refuse a file of more than n bytes
// (DefaultMaxSize without it), before it is decoded: a checkpoint is read
// whole into memory, and decoding costs several times its size. n must be
// positive.
func WithMaxSize(n int64) CheckpointOption {
	return func(o *checkpointOptions) { o.maxSize = n }
}

// WithFormat makes the store write its entries in format (a 1.37
// kubelet's are FormatWithEmptyDirLimits; the default is
// FormatPodResources, the 1.33 to 1.36 entry). Files of either format are
// read whatever the option says, as a kubelet reads the file an older one
// left.
func WithFormat(f Format) CheckpointOption {
	return func(o *checkpointOptions) { o.format = f }
}

// OpenCheckpoint opens the checkpoint dir/file (file is AllocatedStateFile
// or ActuatedStateFile). dir is created if needed and the file, if it
// exists, is loaded; a file that cannot be trusted is an error wrapping
// ErrCorruptCheckpoint, never a silent reset (the kubelet asks the operator
// to drain the node and delete the file).
//
// Only a regular file is read (after following a symlink): a FIFO, a
// device, a socket or a directory at the path is an error wrapping
// ErrNotRegular, and a file of more than the size limit (WithMaxSize) one
// wrapping ErrTooLarge, both returned without waiting on the file.
//
// The temporary files a write of this file left when its process died
// before renaming them (".<file>.tmp-<digits>", see writeFileAtomic) are
// removed first, and nothing else: not another file's, not a directory or
// a symlink of that name. A writer in another process would lose its
// temporary file and its write, so this is safe only because a node holds
// the directory's lock (LockDir) while it opens its stores: no other node
// writes there. Within one process, open a store while no other store of
// the same file writes.
//
// ctx bounds the loading, which reads and decodes the whole file: it is
// checked while the file is read and before it is decoded, and its error
// is returned, naming the file, when it is done. A nil ctx is an error.
func OpenCheckpoint(ctx context.Context, dir, file string, opts ...CheckpointOption) (*Store, error) {
	if ctx == nil {
		return nil, fmt.Errorf("open checkpoint %s: nil context", checkpointPath(dir, file))
	}
	if dir == "" || file == "" {
		return nil, fmt.Errorf("open checkpoint: directory %q and file %q must both be set", dir, file)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("open checkpoint %s: %w", checkpointPath(dir, file), err)
	}
	o := checkpointOptions{format: FormatPodResources, maxSize: DefaultMaxSize}
	for _, opt := range opts {
		opt(&o)
	}
	if o.maxSize <= 0 {
		return nil, fmt.Errorf("open checkpoint %s: the size limit %d is not positive", checkpointPath(dir, file), o.maxSize)
	}
	s := &Store{dir: dir, file: file, format: o.format, entries: map[types.UID]allocation.PodResources{}}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("create checkpoint directory %s: %w", dir, err)
	}
	if err := removeStaleTemps(dir, file); err != nil {
		return nil, err
	}
	path := checkpointPath(dir, file)
	blob, err := readCheckpoint(ctx, path, o.maxSize)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load checkpoint %s: %w", path, err)
	}
	entries, sum, err := decodeCheckpoint(path, blob)
	if err != nil {
		return nil, err
	}
	s.entries = entries
	s.lastChecksum = sum
	return s, nil
}

// removeStaleTemps removes dir's regular files named as writeFileAtomic
// names the temporary files of file: "." + file + ".tmp-" and the decimal
// number os.CreateTemp puts there. Such a file is left only when the
// process died between creating and renaming it; its contents never
// became the checkpoint.
func removeStaleTemps(dir, file string) error {
	des, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("look for stale temporary files of %s: %w", checkpointPath(dir, file), err)
	}
	for _, de := range des {
		n, ok := strings.CutPrefix(de.Name(), "."+file+".tmp-")
		if !ok || n == "" || strings.Trim(n, "0123456789") != "" || !de.Type().IsRegular() {
			continue
		}
		if err := os.Remove(filepath.Join(dir, de.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove stale temporary file: %w", err)
		}
	}
	return nil
}

// persistLocked writes the store to its file unless the store is in memory
// only or the checksum shows the file already holds these entries. The
// caller holds s.mu.
func (s *Store) persistLocked() error {
	if s.dir == "" {
		return nil
	}
	path := checkpointPath(s.dir, s.file)
	if err := s.encodeLocked(); err != nil {
		return fmt.Errorf("encode checkpoint %s: %w", path, err)
	}
	blob, sum := s.fileLocked()
	if sum == s.lastChecksum {
		return nil
	}
	if err := writeFileAtomic(s.dir, s.file, blob); err != nil {
		return err
	}
	s.lastChecksum = sum
	return nil
}

// writeFileAtomic replaces dir/file with blob so that a crash leaves either
// the old or the new file, never a torn one: it writes a temporary file in
// the same directory, syncs it, renames it over the target and syncs the
// directory so that the rename itself is durable.
func writeFileAtomic(dir, file string, blob []byte) (err error) {
	path := checkpointPath(dir, file)
	tmp, err := os.CreateTemp(dir, "."+file+".tmp-")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(blob); err != nil {
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", tmp.Name(), err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp.Name(), err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("rename %s to %s: %w", tmp.Name(), path, err)
	}
	// The directory sync is best effort: some filesystems refuse fsync on
	// a directory, and the file itself is already complete and in place.
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

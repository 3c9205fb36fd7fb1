// Package state holds the kubelet's two resize checkpoints,
// allocated_pods_state and actuated_pods_state, behind one interface, State
// (as the kubelet's pkg/kubelet/allocation/state does): OpenCheckpoint keeps
// one in a file in the kubelet's V1 format with its checksum, written
// atomically; NewMemory keeps one in memory only, for simulations that do
// not need to survive the process.
//
// The resize core never calls a State: it returns checkpoint writes in its
// Ready batches and the node driver performs them here.
package state

import (
	"errors"
	"maps"
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/allocation"
	"github.com/resizelet/resizelet/allocation/frozen"
)

// Checkpoint file names in the kubelet's root directory.
const (
	// AllocatedStateFile holds what the kubelet admitted for each pod.
	AllocatedStateFile = "allocated_pods_state"
	// ActuatedStateFile holds the last values the runtime accepted for each
	// container (and the pod cgroup, for pod-level resources).
	ActuatedStateFile = "actuated_pods_state"
)

// ErrCorruptCheckpoint is wrapped by the error OpenCheckpoint returns for a
// checkpoint file it cannot trust: bad JSON, a truncated file, a checksum
// mismatch, entries that do not decode, or data that decodes but is not
// the kubelet's checkpoint (a missing "entries" or "ContainerResources",
// an amount beyond resizelet's bounds; see checkShape). The kubelet refuses to start on
// such a file rather than silently dropping every allocation, and so does
// OpenCheckpoint.
var ErrCorruptCheckpoint = errors.New("corrupt checkpoint")

// State is one checkpoint as the node driver uses it: the kubelet's
// state.State for resize. Implementations must be safe for concurrent use.
type State interface {
	// Get returns a copy of the pod's record and whether there is one.
	Get(uid types.UID) (allocation.PodResources, bool)
	// All returns a copy of every record, by pod UID.
	All() map[types.UID]allocation.PodResources
	// Set replaces the pod's record and persists it. If persisting fails
	// the new record stays in memory and the error is returned, as the
	// kubelet's checkpoint state does; the next successful write persists
	// it.
	Set(uid types.UID, r allocation.PodResources) error
	// SetContainer replaces one container's record, creating the pod's
	// record if there is none, and persists it like Set.
	SetContainer(uid types.UID, name string, r v1.ResourceRequirements) error
	// Delete forgets the pod. Like the kubelet's RemovePod it need not
	// persist at once: the deletion reaches the disk with the next write.
	Delete(uid types.UID)
}

var _ State = (*Store)(nil)

// init makes the records' map of a zero Store, which is an in-memory
// store that keeps copies of its records. The caller holds s.mu.
func (s *Store) init() {
	if s.entries == nil {
		s.entries = map[types.UID]allocation.PodResources{}
	}
}

// errNilStore is the error of a write to a nil *Store.
var errNilStore = errors.New("state: nil Store")

// Store is one checkpoint: the resources of each pod by UID, kept in memory
// and, unless the store is in memory only, written to dir/file after every
// change that alters the file's checksum. It is safe for concurrent use.
// The zero Store is an empty in-memory store that keeps copies of the
// records it is given; a nil *Store holds nothing and refuses writes.
type Store struct {
	mu      sync.Mutex
	dir     string // "" keeps the store in memory only
	file    string
	format  Format // the entries' shape in the file
	entries map[types.UID]allocation.PodResources
	// keepGiven keeps the records Set is given instead of copies
	// (NewMemory); own then holds the pods whose container map the store
	// made itself, which SetContainer may change in place.
	keepGiven bool
	own       map[types.UID]struct{}
	// cold holds, in a store that keeps given records, the records not
	// written for a while, frozen (package allocation/frozen): a record
	// is in entries or in cold, never both. thawed says which records in
	// entries were written most recently; the store keeps hotRecords of
	// them thawed.
	cold   map[types.UID]frozen.Resources
	thawed frozen.Recent[types.UID]
	// peak is the most records entries has held since it was last made.
	peak int
	// encoded holds, in a file store, every pod's member of the data,
	// sorted by UID (encodeLocked), from the first write on; nil before.
	// It costs about twice the file's size (each member as it is and
	// escaped), and makes a write linear in the file's size with a small
	// constant: copies, not encodings, of the records that did not change.
	encoded []member
	// blob is the file's bytes as last made (fileLocked), whose buffer
	// the next write reuses: at the size of the file, it is the one
	// buffer a write needs.
	blob []byte
	// held says that Hold gave the store to holder, until its release.
	held   bool
	holder string
	// lastChecksum is the checksum of the file on disk (or 0 before the
	// first write), so that a write that would not change it is skipped,
	// as the kubelet's storeState does.
	lastChecksum uint64
}

// Get returns a copy of the pod's record and whether there is one.
func (s *Store) Get(uid types.UID) (allocation.PodResources, bool) {
	if s == nil {
		return allocation.PodResources{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.entries[uid]
	if !ok {
		if f, ok := s.cold[uid]; ok {
			return f.Thaw(), true
		}
		return allocation.PodResources{}, false
	}
	return r.DeepCopy(), true
}

// View calls fn with the pod's record, if there is one, under the store's
// lock and without copying it: fn must neither keep nor change what it is
// given, and must not call the store. It is for hot paths that only read,
// such as comparing an allocation with a pod spec on every admission.
func (s *Store) View(uid types.UID, fn func(r allocation.PodResources)) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.entries[uid]
	if !ok {
		var f frozen.Resources
		if f, ok = s.cold[uid]; ok {
			r = f.Thaw()
		}
	}
	if ok && fn != nil {
		fn(r)
	}
	return ok
}

// Set replaces the pod's record with a copy of r and persists the store. If
// the write fails the new record stays in memory and the error is returned,
// as the v1.35 kubelet does; the next successful write persists it.
func (s *Store) Set(uid types.UID, r allocation.PodResources) error {
	if s == nil {
		return errNilStore
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	if s.keepGiven {
		s.entries[uid] = r
		delete(s.own, uid)
		s.written(uid)
	} else {
		s.changedLocked(uid)
		s.entries[uid] = r.DeepCopy()
	}
	return s.persistLocked()
}

// SetContainer replaces one container's record, creating the pod's record
// if there is none, and persists the store.
func (s *Store) SetContainer(uid types.UID, name string, r v1.ResourceRequirements) error {
	if s == nil {
		return errNilStore
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	if f, ok := s.cold[uid]; ok {
		// A thawed record is the store's own.
		s.entries[uid] = f.Thaw()
		delete(s.cold, uid)
		if s.own == nil {
			s.own = map[types.UID]struct{}{}
		}
		s.own[uid] = struct{}{}
	}
	entry := s.entries[uid]
	_, owned := s.own[uid]
	switch {
	case entry.ContainerResources == nil:
		entry.ContainerResources = make(map[string]v1.ResourceRequirements, 1)
		owned = true
	case s.keepGiven && !owned:
		// The map is a record a caller gave Set: change a copy, which is
		// the store's own from now on.
		entry.ContainerResources = maps.Clone(entry.ContainerResources)
		owned = true
	}
	if s.keepGiven && owned {
		if s.own == nil {
			s.own = map[types.UID]struct{}{}
		}
		s.own[uid] = struct{}{}
	}
	if s.keepGiven {
		entry.ContainerResources[name] = r
	} else {
		entry.ContainerResources[name] = *r.DeepCopy()
	}
	s.changedLocked(uid)
	s.entries[uid] = entry
	if s.keepGiven {
		s.written(uid)
	}
	return s.persistLocked()
}

// Delete forgets the pod. Like the kubelet's RemovePod it does not write the
// file: a deleted pod's record does no harm, and the deletion reaches the
// disk with the next Set or SetContainer.
func (s *Store) Delete(uid types.UID) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.entries, uid)
	delete(s.own, uid)
	delete(s.cold, uid)
	s.thawed.Forget(uid)
	s.deletedLocked(uid)
}

// hotRecords is how many records written most recently a store that keeps
// given records keeps thawed; it freezes the others.
const hotRecords = 4

// written notes that uid's record was just written, and freezes the
// records written least recently beyond hotRecords.
func (s *Store) written(uid types.UID) {
	s.thawed.Limit = hotRecords
	s.thawed.Touch(uid)
	s.peak = max(s.peak, len(s.entries))
	s.thawed.Evict(func(k types.UID) bool {
		if s.cold == nil {
			s.cold = map[types.UID]frozen.Resources{}
		}
		s.cold[k] = frozen.FreezeResources(s.entries[k])
		delete(s.entries, k)
		delete(s.own, k)
		return true
	})
	// Go maps do not shrink: after a burst of writes (a hundred pods
	// admitted at once) the maps of thawed records are made again at
	// their size.
	if s.peak > 4*len(s.entries)+16 {
		entries := make(map[types.UID]allocation.PodResources, len(s.entries))
		maps.Copy(entries, s.entries)
		s.entries = entries
		own := make(map[types.UID]struct{}, len(s.own))
		maps.Copy(own, s.own)
		s.own = own
		s.peak = len(s.entries)
	}
}

// All returns a copy of every record, by pod UID.
func (s *Store) All() map[types.UID]allocation.PodResources {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[types.UID]allocation.PodResources, len(s.entries)+len(s.cold))
	for uid, r := range s.entries {
		out[uid] = r.DeepCopy()
	}
	for uid, f := range s.cold {
		out[uid] = f.Thaw()
	}
	return out
}

// UIDs returns the UIDs of every pod with a record, sorted.
func (s *Store) UIDs() []types.UID {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	uids := make([]types.UID, 0, len(s.entries)+len(s.cold))
	for uid := range s.entries {
		uids = append(uids, uid)
	}
	for uid := range s.cold {
		uids = append(uids, uid)
	}
	slices.Sort(uids)
	return uids
}

// Path returns the checkpoint file's path, or "" for an in-memory store.
func (s *Store) Path() string {
	if s == nil {
		return ""
	}
	if s.dir == "" {
		return ""
	}
	return checkpointPath(s.dir, s.file)
}

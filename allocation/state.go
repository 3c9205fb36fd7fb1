package allocation

import (
	"errors"
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Checkpoint file names in the kubelet's root directory.
const (
	// AllocatedStateFile holds what the kubelet admitted for each pod.
	AllocatedStateFile = "allocated_pods_state"
	// ActuatedStateFile holds the last values the runtime accepted for each
	// container (and the pod cgroup, for pod-level resources).
	ActuatedStateFile = "actuated_pods_state"
)

// ErrCorruptCheckpoint is wrapped by the error NewStore returns for a
// checkpoint file it cannot trust: bad JSON, a truncated file, a checksum
// mismatch or entries that do not decode. The kubelet refuses to start on
// such a file rather than silently dropping every allocation, and so does
// NewStore.
var ErrCorruptCheckpoint = errors.New("corrupt checkpoint")

// PodResources is what one checkpoint holds for a pod: the resources of each
// resizable container by name, and the pod-level resources if the pod sets
// them.
//
// The field names are the JSON names: the kubelet's PodResourceInfo has no
// json tags. PodLevelResources has no omitempty either, so a pod without
// pod-level resources is written as "PodLevelResources":null, as a v1.35
// kubelet writes it; both forms are read.
type PodResources struct {
	ContainerResources map[string]v1.ResourceRequirements
	PodLevelResources  *v1.ResourceRequirements
}

// DeepCopy returns a copy of r that shares no memory with it.
func (r PodResources) DeepCopy() PodResources {
	var out PodResources
	if r.ContainerResources != nil {
		out.ContainerResources = make(map[string]v1.ResourceRequirements, len(r.ContainerResources))
		for name, rr := range r.ContainerResources {
			out.ContainerResources[name] = *rr.DeepCopy()
		}
	}
	if r.PodLevelResources != nil {
		out.PodLevelResources = r.PodLevelResources.DeepCopy()
	}
	return out
}

// Store is one checkpoint: the resources of each pod by UID, kept in memory
// and, unless the store is in memory only, written to dir/file after every
// change that alters the file's checksum. It is safe for concurrent use.
type Store struct {
	mu      sync.Mutex
	dir     string // "" keeps the store in memory only
	file    string
	entries map[types.UID]PodResources
	// lastChecksum is the checksum of the file on disk (or 0 before the
	// first write), so that a write that would not change it is skipped,
	// as the kubelet's storeState does.
	lastChecksum uint64
}

// Get returns a copy of the pod's record and whether there is one.
func (s *Store) Get(uid types.UID) (PodResources, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.entries[uid]
	if !ok {
		return PodResources{}, false
	}
	return r.DeepCopy(), true
}

// View calls fn with the pod's record, if there is one, under the store's
// lock and without copying it: fn must neither keep nor change what it is
// given, and must not call the store. It is for hot paths that only read,
// such as comparing an allocation with a pod spec on every admission.
func (s *Store) View(uid types.UID, fn func(r PodResources)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.entries[uid]
	if ok {
		fn(r)
	}
	return ok
}

// Set replaces the pod's record with a copy of r and persists the store. If
// the write fails the new record stays in memory and the error is returned,
// as the v1.35 kubelet does; the next successful write persists it.
func (s *Store) Set(uid types.UID, r PodResources) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entries[uid] = r.DeepCopy()
	return s.persistLocked()
}

// SetContainer replaces one container's record, creating the pod's record
// if there is none, and persists the store.
func (s *Store) SetContainer(uid types.UID, name string, r v1.ResourceRequirements) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	entry := s.entries[uid]
	if entry.ContainerResources == nil {
		entry.ContainerResources = make(map[string]v1.ResourceRequirements, 1)
	}
	entry.ContainerResources[name] = *r.DeepCopy()
	s.entries[uid] = entry
	return s.persistLocked()
}

// Delete forgets the pod. Like the kubelet's RemovePod it does not write the
// file: a deleted pod's record does no harm, and the deletion reaches the
// disk with the next Set or SetContainer.
func (s *Store) Delete(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.entries, uid)
}

// UIDs returns the UIDs of every pod with a record, sorted.
func (s *Store) UIDs() []types.UID {
	s.mu.Lock()
	defer s.mu.Unlock()
	uids := make([]types.UID, 0, len(s.entries))
	for uid := range s.entries {
		uids = append(uids, uid)
	}
	slices.Sort(uids)
	return uids
}

// Path returns the checkpoint file's path, or "" for an in-memory store.
func (s *Store) Path() string {
	if s.dir == "" {
		return ""
	}
	return checkpointPath(s.dir, s.file)
}

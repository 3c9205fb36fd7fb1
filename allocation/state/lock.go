package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// LockFile is the name of the file LockDir locks in a checkpoint
// directory.
const LockFile = "resizelet.lock"

// ErrHeld is wrapped by the error LockDir returns for a checkpoint
// directory another node holds, and by the error Hold returns for a store
// another holder holds. The error names the directory (or store) and the
// holder, so that an operator knows which process to look at.
var ErrHeld = errors.New("checkpoints held by another node")

// DirLock is a checkpoint directory held by one node (LockDir) until
// Unlock.
type DirLock struct {
	mu   sync.Mutex
	f    *os.File // the locked lock file; nil once unlocked
	path string
}

// lockRecord is what a lock file says about its holder.
type lockRecord struct {
	Holder string `json:"holder"`
	PID    int    `json:"pid"`
}

// LockDir takes dir for holder (a node's name, say), as the kubelet's
// --lock-file does, so that no two nodes share one checkpoint directory:
// each would overwrite the other's checkpoints, and each removes the
// temporary files it finds when it opens its stores (OpenCheckpoint).
//
// The lock is an exclusive flock on dir/LockFile, taken without waiting;
// dir and the file are created if needed (dir 0o750, as OpenCheckpoint
// creates it). A flock belongs to the open file description, so a second
// LockDir of the same directory fails in the same process as in another
// one, and the system releases it when the holding process dies, however
// it dies. The file records holder and the process ID: when dir is held,
// the error wraps ErrHeld and names dir and the current holder.
//
// On systems without flock LockDir returns an error wrapping
// errors.ErrUnsupported.
func LockDir(dir, holder string) (*DirLock, error) {
	if dir == "" {
		return nil, errors.New("lock checkpoint directory: the directory must be set")
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("lock checkpoint directory: create %s: %w", dir, err)
	}
	path := filepath.Join(dir, LockFile)
	f, _, err := openRegular(path, true)
	if err != nil {
		return nil, fmt.Errorf("lock checkpoint directory %s: open %s: %w", dir, path, err)
	}
	held, err := tryLock(f)
	if err == nil && held {
		who := heldBy(f)
		_ = f.Close()
		return nil, fmt.Errorf("checkpoint directory %s is held by %s: %w", dir, who, ErrHeld)
	}
	if err == nil {
		var rec []byte
		if rec, err = json.Marshal(lockRecord{Holder: holder, PID: os.Getpid()}); err == nil {
			if err = f.Truncate(0); err == nil {
				_, err = f.WriteAt(append(rec, '\n'), 0)
			}
		}
	}
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("lock checkpoint directory %s: %s: %w", dir, path, err)
	}
	return &DirLock{f: f, path: path}, nil
}

// heldBy names the holder f's record names, for an error.
func heldBy(f *os.File) string {
	buf := make([]byte, 4096)
	n, _ := f.ReadAt(buf, 0)
	var rec lockRecord
	if err := json.Unmarshal(buf[:n], &rec); err != nil || rec.PID == 0 {
		return "another process (it has not recorded which yet)"
	}
	return fmt.Sprintf("node %q (pid %d)", rec.Holder, rec.PID)
}

// Unlock releases the directory. It empties the holder's record but
// leaves the file, which the next LockDir locks again. Unlocking again
// does nothing.
func (l *DirLock) Unlock() error {
	if l == nil {
		return errors.New("unlock checkpoint directory: nil DirLock")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	f := l.f
	l.f = nil
	err := f.Truncate(0)
	// Closing the only descriptor of the file description releases the
	// lock in any case.
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("unlock %s: %w", l.path, err)
	}
	return nil
}

// Path returns the lock file's path.
func (l *DirLock) Path() string {
	if l == nil {
		return ""
	}
	return l.path
}

// Hold makes holder the store's only holder until release is called, for
// stores that no directory lock protects (NewMemory): two simulated nodes
// given one in-memory store would each take the other's records for their
// own. While the store is held, Hold fails with an error wrapping ErrHeld
// that names the current holder. release may be called more than once;
// only the first call releases. A file store can be held too, but what
// protects its file from other processes is LockDir.
func (s *Store) Hold(holder string) (release func(), err error) {
	if s == nil {
		return nil, errNilStore
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held {
		what := "in-memory checkpoint"
		if s.dir != "" {
			what = "checkpoint " + checkpointPath(s.dir, s.file)
		}
		return nil, fmt.Errorf("%s is held by node %q: %w", what, s.holder, ErrHeld)
	}
	s.held, s.holder = true, holder
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.held, s.holder = false, ""
		})
	}, nil
}

package state

// Flush writes the store's records to its file if the file does not hold
// them yet: after a Set or SetContainer whose write failed, the records
// are in memory only until the next write that changes them, as in the
// kubelet; Flush is how a caller writes them again without changing
// anything. It does nothing for an in-memory store or a file that is up
// to date, and returns the write's error.
func (s *Store) Flush() error {
	if s == nil {
		return errNilStore
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.persistLocked()
}

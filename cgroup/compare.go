package cgroup

import "fmt"

// FileDiff is one cgroup file that does not hold what a Set would leave in
// it.
type FileDiff struct {
	File string // the kernel's file name, e.g. memory.max
	Want string // what the file would show after the Set
	Got  string // what it shows
}

// Compare reports the files of the cgroup at path that do not hold what
// Set(path, want) would leave in them, judged as the kernel reads a
// written value back (memory limits in whole pages, v1 shares clamped,
// "max" or -1 for no limit), in Set's order. It writes nothing: these are
// exactly the files such a Set would change. It is how an audit tells
// whether a cgroup holds a configuration, on any Manager.
//
// A value the kernel would refuse is reported as a difference whose Want
// says so. Fields of the other cgroup version are ignored, as Set ignores
// them.
func Compare(m Manager, path string, want Values) ([]FileDiff, error) {
	if m == nil {
		return nil, fmt.Errorf("compare %s: %w", path, ErrNoManager)
	}
	if !m.Exists(path) {
		return nil, fmt.Errorf("compare %s: %w", path, ErrNotExist)
	}
	version := m.Version()
	read := func(file string) (string, bool) {
		s, err := m.ReadFile(path, file)
		return s, err == nil
	}
	plan, n := planSet(version, want, read)
	var out []FileDiff
	for _, f := range plan[:n] {
		cur, ok := read(f.file)
		if !ok {
			if _, err := m.ReadFile(path, f.file); err != nil {
				return nil, fmt.Errorf("compare %s: %w", path, err)
			}
		}
		canon, err := Canonical(version, f.file, f.content, cur)
		if err != nil {
			out = append(out, FileDiff{File: f.file, Want: fmt.Sprintf("%s (the kernel refuses it: %v)", f.content, err), Got: cur})
			continue
		}
		if canon != cur {
			out = append(out, FileDiff{File: f.file, Want: canon, Got: cur})
		}
	}
	return out, nil
}

package cgroup

import (
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// plainWrapper is a decorator of the interface, as a caller's own
// wrapper would be.
type plainWrapper struct{ Manager }

// loggingKernel embeds the SimKernel and logs the writes its Set returns,
// as resize's journalCgroups does: SetValues must go through its Set,
// not the SimKernel's SetValues that the embedding promotes.
type loggingKernel struct {
	*SimKernel
	log *[]Write
}

func (l loggingKernel) Set(path string, v Values) ([]Write, error) {
	ws, err := l.SimKernel.Set(path, v)
	*l.log = append(*l.log, ws...)
	return ws, err
}

// TestSetValuesThroughDecorators drives two equal stacks of managers, one
// through Set and one through SetValues, with the same random Sets: the
// SimKernel alone, under a Recorder, under a FaultInjector with faults
// injected (on every path and on one), under both, under a decorator of
// the interface, and under one that embeds the SimKernel and logs what its
// Set returns (alone and under a FaultInjector). Each SetValues must fail
// as its Set does, with the file of the last write Set returned, and the
// stacks must keep the same files, kernel write log, recorded writes,
// logged writes and pending faults.
func TestSetValuesThroughDecorators(t *testing.T) {
	type stack struct {
		top      Manager
		kernel   *SimKernel
		recorder *Recorder
		faults   *FaultInjector
		log      *[]Write // a loggingKernel's
	}
	builds := map[string]func(version Version) stack{
		"kernel": func(version Version) stack {
			k := NewSimKernel(version)
			return stack{top: k, kernel: k}
		},
		"recorder": func(version Version) stack {
			k := NewSimKernel(version)
			r := NewRecorder(k, RecordAtMost(7))
			return stack{top: r, kernel: k, recorder: r}
		},
		"faults": func(version Version) stack {
			k := NewSimKernel(version)
			f := NewFaultInjector(k)
			return stack{top: f, kernel: k, faults: f}
		},
		"faults over recorder": func(version Version) stack {
			k := NewSimKernel(version)
			r := NewRecorder(k)
			f := NewFaultInjector(r)
			return stack{top: f, kernel: k, recorder: r, faults: f}
		},
		"plain wrapper": func(version Version) stack {
			k := NewSimKernel(version)
			return stack{top: plainWrapper{k}, kernel: k}
		},
		"embedding wrapper": func(version Version) stack {
			k := NewSimKernel(version)
			log := new([]Write)
			return stack{top: loggingKernel{k, log}, kernel: k, log: log}
		},
		"faults over embedding wrapper": func(version Version) stack {
			k := NewSimKernel(version)
			log := new([]Write)
			f := NewFaultInjector(loggingKernel{k, log})
			return stack{top: f, kernel: k, faults: f, log: log}
		},
	}
	for name, build := range builds {
		for _, version := range []Version{V1, V2} {
			t.Run(fmt.Sprintf("%s/%v", name, version), func(t *testing.T) {
				rng := rand.New(rand.NewSource(int64(version)))
				bySet, byValues := build(version), build(version)
				for _, s := range []stack{bySet, byValues} {
					for _, p := range []string{"pod/c/e", "pod/d"} {
						mtCreate(t, s.kernel, p)
					}
					mtSet(t, s.kernel, "pod", Values{CPUQuota: mtPtr(int64(200000)), MemoryLimit: mtPtr(int64(1 << 30))})
					mtUsage(t, s.kernel, "pod/c", 64<<20)
					if s.faults != nil {
						s.faults.Inject(func(p string) bool { return strings.HasPrefix(p, "pod/c") }, syscall.EBUSY, 40)
						s.faults.Inject(nil, nil, 25)
					}
				}
				failures := 0
				for step := 0; step < 400; step++ {
					path, v := setPaths[rng.Intn(len(setPaths))], randomValues(rng)
					ws, setErr := bySet.top.Set(path, v)
					file, valuesErr := SetValues(byValues.top, path, v)
					wantFile := ""
					if setErr != nil && len(ws) > 0 {
						wantFile = ws[len(ws)-1].File
						failures++
					}
					if !sameError(valuesErr, setErr) || file != wantFile {
						t.Fatalf("step %d: SetValues(%q, %v) = %q, %v; Set: %q, %v", step, path, v, file, valuesErr, wantFile, setErr)
					}
					for _, p := range bySet.kernel.Paths() {
						if diff := cmp.Diff(bySet.kernel.Files(p), byValues.kernel.Files(p)); diff != "" {
							t.Fatalf("step %d: files of %q differ:\n%s", step, p, diff)
						}
					}
					if w, g := bySet.kernel.Writes(), byValues.kernel.Writes(); !reflect.DeepEqual(g, w) {
						t.Fatalf("step %d: kernel write logs differ:\n%s", step, cmp.Diff(w, g))
					}
					if bySet.recorder != nil {
						if w, g := bySet.recorder.Writes(), byValues.recorder.Writes(); !reflect.DeepEqual(g, w) {
							t.Fatalf("step %d: recorded writes differ:\n%s", step, cmp.Diff(w, g, cmp.Comparer(func(a, b error) bool { return errors.Is(a, b) })))
						}
					}
					if bySet.log != nil && !reflect.DeepEqual(*byValues.log, *bySet.log) {
						t.Fatalf("step %d: the embedding wrapper's Set logged %d writes, want %d", step, len(*byValues.log), len(*bySet.log))
					}
					if bySet.faults != nil && bySet.faults.Pending() != byValues.faults.Pending() {
						t.Fatalf("step %d: pending faults %d, want %d", step, byValues.faults.Pending(), bySet.faults.Pending())
					}
				}
				if failures == 0 {
					t.Error("no write failed")
				}
				if bySet.faults != nil && bySet.faults.Pending() == 65 {
					t.Error("no fault was used")
				}
			})
		}
	}
}

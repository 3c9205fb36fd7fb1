package state

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/allocation"
)

// benchEntries returns n pod records like a busy node's: a UID in the
// API server's form and one to three containers with cpu and memory
// requests and limits; every fourth pod has pod-level resources.
func benchEntries(n int) map[types.UID]allocation.PodResources {
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	names := []string{"app", "istio-proxy", "log-shipper"}
	out := make(map[types.UID]allocation.PodResources, n)
	for len(out) < n {
		uid := types.UID(fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x",
			rng.Uint32(), rng.Uint32N(1<<16), rng.Uint32N(1<<12), 0x8000|rng.Uint32N(1<<14), rng.Uint64N(1<<48)))
		r := allocation.PodResources{ContainerResources: map[string]v1.ResourceRequirements{}}
		for _, name := range names[:1+rng.IntN(len(names))] {
			cpu := 50 * (1 + rng.Int64N(40))
			mem := int64(64 * (1 + rng.IntN(32)))
			r.ContainerResources[name] = v1.ResourceRequirements{
				Requests: v1.ResourceList{
					v1.ResourceCPU:    *resource.NewMilliQuantity(cpu, resource.DecimalSI),
					v1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dMi", mem)),
				},
				Limits: v1.ResourceList{
					v1.ResourceCPU:    *resource.NewMilliQuantity(2*cpu, resource.DecimalSI),
					v1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dMi", 2*mem)),
				},
			}
		}
		if len(out)%4 == 0 {
			r.PodLevelResources = &v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceCPU: resource.MustParse("4")}}
		}
		out[uid] = r
	}
	return out
}

// writeBenchCheckpoint writes a checkpoint of n benchEntries to a new
// directory and returns the directory.
func writeBenchCheckpoint(b *testing.B, n int) string {
	b.Helper()
	entries := benchEntries(n)
	data, err := encodeData(entries, FormatPodResources)
	if err != nil {
		b.Fatal(err)
	}
	blob := fmt.Sprintf(`{"data":%q,"checksum":%d}`, data, checksum([]byte(data)))
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, AllocatedStateFile), []byte(blob), 0o600); err != nil {
		b.Fatal(err)
	}
	return dir
}

var benchSizes = []int{1000, 10000, 100000}

// BenchmarkCheckpointLoad opens a file checkpoint of N pods, as a kubelet
// does when it starts.
func BenchmarkCheckpointLoad(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			dir := writeBenchCheckpoint(b, n)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := OpenCheckpoint(b.Context(), dir, AllocatedStateFile); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCheckpointSet changes one pod's record in a file checkpoint of
// N pods, which writes the whole file, as an admission or a resize does.
func BenchmarkCheckpointSet(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			s, err := OpenCheckpoint(b.Context(), writeBenchCheckpoint(b, n), AllocatedStateFile)
			if err != nil {
				b.Fatal(err)
			}
			uid := s.UIDs()[n/2]
			r, _ := s.Get(uid)
			// The first write after loading encodes every record; the
			// ones measured encode the one that changed.
			if err := s.Flush(); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			i := int64(0)
			for b.Loop() {
				i++
				c := r.ContainerResources["app"]
				c.Requests = v1.ResourceList{v1.ResourceCPU: *resource.NewMilliQuantity(1+i%1000, resource.DecimalSI)}
				r.ContainerResources["app"] = c
				if err := s.Set(uid, r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package apiserver

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"testing"

	"github.com/resizelet/resizelet/resize/profile"
)

// sameOutcome checks that the typed path and the patch path agree on a
// request: the same error text, or byte-for-byte the same pod.
func sameOutcome(t *testing.T, label string, req ResizeRequest, o ResizeOptions) {
	t.Helper()
	for i, old := range fuzzPods() {
		viaPatch, perr := ApplyResize(old, req.Patch(), o)
		typed, terr := ApplyResizeRequest(old, req, o)
		if (perr == nil) != (terr == nil) || (perr != nil && perr.Error() != terr.Error()) {
			t.Fatalf("%s, pod %d, patch %s:\n patch path: %v\n typed path: %v", label, i, req.Patch(), perr, terr)
		}
		if perr != nil {
			continue
		}
		a, _ := json.Marshal(viaPatch)
		b, _ := json.Marshal(typed)
		if string(a) != string(b) {
			t.Fatalf("%s, pod %d, patch %s:\n patch path: %s\n typed path: %s", label, i, req.Patch(), a, b)
		}
	}
}

// randomRequest draws a typed resize over the fuzz pods' container names
// (and one they do not have), with amounts that are sometimes unset,
// negative, tiny or not a whole number of binary units.
func randomRequest(r *rand.Rand) ResizeRequest {
	names := []string{"c1", "c2", "i1", "s1", "zz"}
	amounts := func() Amounts {
		a := Amounts{HasCPU: r.Intn(3) > 0, HasMemory: r.Intn(3) > 0}
		switch r.Intn(6) {
		case 0:
			a.MilliCPU = -int64(r.Intn(100))
		case 1:
			a.MilliCPU = int64(r.Intn(3))
		default:
			a.MilliCPU = int64(r.Intn(8000))
		}
		if r.Intn(4) == 0 {
			a.Memory = int64(r.Intn(1 << 30))
		} else {
			a.Memory = int64(1+r.Intn(4096)) << 20
		}
		return a
	}
	resize := func() ContainerResize {
		return ContainerResize{Name: names[r.Intn(len(names))], Requests: amounts(), Limits: amounts()}
	}
	var req ResizeRequest
	for i := r.Intn(3); i > 0; i-- {
		req.Containers = append(req.Containers, resize())
	}
	for i := r.Intn(2); i > 0; i-- {
		req.InitContainers = append(req.InitContainers, resize())
	}
	if r.Intn(5) == 0 {
		p := resize()
		req.PodLevel = &p
	}
	return req
}

// TestResizeRequestIsItsPatch: on random requests, under every version,
// the typed path (ApplyResizeRequest) gives what the strategic merge patch
// path gives for the request's patch: the same pod to the byte, or the
// same error.
func TestResizeRequestIsItsPatch(t *testing.T) {
	r := rand.New(rand.NewSource(42))
	for _, v := range profile.Versions() {
		o := ResizeOptions{Profile: v}
		for i := 0; i < 300; i++ {
			sameOutcome(t, fmt.Sprintf("%s #%d", v, i), randomRequest(r), o)
		}
	}
	// The pod-level gate changes what the strategy keeps.
	on := ResizeOptions{Profile: profile.V135, Gate: profile.New(profile.V135, map[string]bool{profile.GateInPlacePodLevelResourcesVerticalScaling: true}).Gate}
	for i := 0; i < 100; i++ {
		sameOutcome(t, fmt.Sprintf("pod-level gate #%d", i), randomRequest(r), on)
	}
}

// FuzzResizeRequest holds the typed path and the patch path equal on
// fuzzed amounts for one container and the pod level.
func FuzzResizeRequest(f *testing.F) {
	f.Add(uint8(0), int64(300), int64(192<<20), int64(600), int64(384<<20), uint8(15), uint8(2))
	f.Add(uint8(4), int64(-1), int64(1000), int64(0), int64(1), uint8(5), uint8(0))
	f.Fuzz(func(t *testing.T, name uint8, reqCPU, reqMem, limCPU, limMem int64, has uint8, version uint8) {
		names := []string{"c1", "c2", "i1", "s1", "zz"}
		c := ContainerResize{
			Name:     names[int(name)%len(names)],
			Requests: Amounts{MilliCPU: reqCPU, Memory: reqMem, HasCPU: has&1 != 0, HasMemory: has&2 != 0},
			Limits:   Amounts{MilliCPU: limCPU, Memory: limMem, HasCPU: has&4 != 0, HasMemory: has&8 != 0},
		}
		req := ResizeRequest{Containers: []ContainerResize{c}}
		if has&16 != 0 {
			req = ResizeRequest{InitContainers: []ContainerResize{c}}
		}
		if has&32 != 0 {
			req.PodLevel = &c
		}
		versions := profile.Versions()
		sameOutcome(t, "fuzz", req, ResizeOptions{Profile: versions[int(version)%len(versions)]})
	})
}

// TestLargeResizeRequestIsItsPatch: a request with more containers and
// amounts than ApplyResizeRequest has room for on its stack (four
// containers, eight amounts) gives what its patch gives, under every
// version.
func TestLargeResizeRequestIsItsPatch(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	names := []string{"c1", "c2", "i1", "s1", "zz"}
	for _, v := range profile.Versions() {
		o := ResizeOptions{Profile: v}
		for i := 0; i < 40; i++ {
			var req ResizeRequest
			for j := 3 + r.Intn(5); j > 0; j-- {
				a := CPUMemory(int64(100+r.Intn(900)), int64(64+r.Intn(512))<<20)
				c := ContainerResize{Name: names[r.Intn(2)], Requests: a, Limits: CPUMemory(2*a.MilliCPU, 2*a.Memory)}
				if r.Intn(3) == 0 {
					c.Name = names[2+r.Intn(3)]
					req.InitContainers = append(req.InitContainers, c)
					continue
				}
				req.Containers = append(req.Containers, c)
			}
			sameOutcome(t, fmt.Sprintf("%s #%d", v, i), req, o)
		}
	}
}

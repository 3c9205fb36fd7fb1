package apiserver

import (
	v1 "k8s.io/api/core/v1"

	"fmt"
	"math/rand"
	"testing"
)

// randomRequest draws a typed resize over the given container and init
// container names, with amounts that are sometimes unset, negative, tiny
// or not a whole number of binary units.
func randomRequest(r *rand.Rand, containers, inits []string) ResizeRequest {
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
	resize := func(names []string) ContainerResize {
		return ContainerResize{Name: names[r.Intn(len(names))], Requests: amounts(), Limits: amounts()}
	}
	var req ResizeRequest
	for i := r.Intn(3); i > 0; i-- {
		req.Containers = append(req.Containers, resize(containers))
	}
	for i := r.Intn(2); i > 0; i-- {
		req.InitContainers = append(req.InitContainers, resize(inits))
	}
	if r.Intn(5) == 0 {
		p := resize([]string{""})
		req.PodLevel = &p
	}
	return req
}

// FuzzResizeRequestMatchesAPIServer holds the typed path to the API
// server's way with the request's patch, on fuzzed amounts for one
// container and the pod level, and random old pods (seed draws the pod).
func FuzzResizeRequestMatchesAPIServer(f *testing.F) {
	f.Add(int64(1), uint8(0), int64(300), int64(192<<20), int64(600), int64(384<<20), uint8(15), uint8(2))
	f.Add(int64(2), uint8(4), int64(-1), int64(1000), int64(0), int64(1), uint8(5), uint8(0))
	f.Fuzz(func(t *testing.T, seed int64, name uint8, reqCPU, reqMem, limCPU, limMem int64, has uint8, version uint8) {
		old := oldPodGen{rand.New(rand.NewSource(seed))}.pod()
		cs, inits := names(old)
		c := ContainerResize{
			Name:     cs[int(name)%len(cs)],
			Requests: Amounts{MilliCPU: reqCPU, Memory: reqMem, HasCPU: has&1 != 0, HasMemory: has&2 != 0},
			Limits:   Amounts{MilliCPU: limCPU, Memory: limMem, HasCPU: has&4 != 0, HasMemory: has&8 != 0},
		}
		req := ResizeRequest{Containers: []ContainerResize{c}}
		if has&16 != 0 {
			c.Name = inits[int(name)%len(inits)]
			req = ResizeRequest{InitContainers: []ContainerResize{c}}
		}
		if has&32 != 0 {
			req.PodLevel = &c
		}
		o := diffOptions()[int(version)%len(diffOptions())]
		sameAsAPIServer(t, "fuzz", old, StrategicMergePatch, req.Patch(), o, func() (*v1.Pod, error) { return ApplyResizeRequest(old, req, o) })
	})
}

// TestLargeResizeRequestMatchesAPIServer: a request with more containers
// than ApplyResizeRequest has room for on its stack (four) gives what the
// API server's way gives for its patch, under every version.
func TestLargeResizeRequestMatchesAPIServer(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	old := stored(withInit(testPod(ctr("c1", "cpu=100m", "cpu=1"), ctr("c2", "", ""), ctr("c3", "memory=1Gi", ""), ctr("c4", "", ""), ctr("c5", "cpu=1", "cpu=2")),
		sidecar("s1", "cpu=100m", "")))
	for _, o := range diffOptions() {
		for i := 0; i < 40; i++ {
			var req ResizeRequest
			for _, name := range []string{"c1", "c2", "c3", "c4", "c5"} {
				a := CPUMemory(int64(100+r.Intn(900)), int64(64+r.Intn(512))<<20)
				req.Containers = append(req.Containers, ContainerResize{Name: name, Requests: a, Limits: CPUMemory(2*a.MilliCPU, 2*a.Memory)})
			}
			if r.Intn(2) == 0 {
				req.InitContainers = []ContainerResize{{Name: "s1", Requests: CPUMemory(200, 64<<20)}}
			}
			sameAsAPIServer(t, fmt.Sprintf("#%d", i), old, StrategicMergePatch, req.Patch(), o, func() (*v1.Pod, error) { return ApplyResizeRequest(old, req, o) })
		}
	}
}

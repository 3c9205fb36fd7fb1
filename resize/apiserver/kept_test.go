package apiserver

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/resizelet/resizelet/resize/profile"
)

// TestKeptContainersChangeNothing: a cluster's resizes leave out the
// checks of one container for the regular containers they keep
// (keptContainers, on the invariant of Cluster.pods); they answer as the
// full validation does. On random pods (valid or not, so that some are
// refused at creation), random typed requests and their patches, status
// writes and deletion marks, under every version and with most pods
// frozen between uses, each resize through the cluster gives the error
// or the pod that ApplyResizeRequest or ApplyResize give on a copy of the
// stored pod without the invariant.
func TestKeptContainersChangeNothing(t *testing.T) {
	outcomes := map[bool]int{}
	for vi, v := range profile.Versions() {
		c := NewCluster(ClusterOptions{Profile: v, HotPods: 1})
		r := rand.New(rand.NewSource(int64(100 + vi)))
		g := podGen{r: r}
		var names []string
		for i := 0; i < 300; i++ {
			g.sane = i%3 != 0
			p := g.pod()
			p.Name = fmt.Sprintf("p%d", i)
			if _, err := c.CreatePod(p); err == nil {
				names = append(names, p.Name)
			}
			if len(names) == 0 {
				continue
			}
			name := names[r.Intn(len(names))]
			switch r.Intn(8) {
			case 0:
				stored, _ := c.GetPod("default", name)
				st := stored.Status
				if len(stored.Spec.Containers) > 0 {
					st.ContainerStatuses = []v1.ContainerStatus{{Name: stored.Spec.Containers[0].Name, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}, Resources: &v1.ResourceRequirements{}}}
				}
				if err := c.UpdatePodStatus("default", name, stored.UID, st); err != nil {
					t.Fatal(err)
				}
			case 1:
				if _, err := c.MarkPodDeleted("default", name, time.Unix(1767225600, 0)); err != nil {
					t.Fatal(err)
				}
			}
			req := randomRequest(r)
			if g.sane && r.Intn(2) == 0 {
				// A request the pod's containers have, so that more of
				// them are accepted.
				req = ResizeRequest{Containers: []ContainerResize{{Name: "c1", Requests: CPUMemory(int64(100+r.Intn(400)), int64(64+r.Intn(64))<<20), Limits: CPUMemory(int64(500+r.Intn(400)), int64(128+r.Intn(64))<<20)}}}
			}
			viaPatch := r.Intn(2) == 0
			old, err := c.GetPodVersioned("default", name)
			if err != nil {
				t.Fatal(err)
			}
			opts := c.resizeOptions()
			opts.resourceVersion = c.pods[podKey("default", name)].rv
			old.ResourceVersion = ""
			var want, got *v1.Pod
			var wantErr, gotErr error
			if viaPatch {
				want, wantErr = ApplyResize(old, req.Patch(), opts)
				got, gotErr = c.ResizePod("default", name, req.Patch())
			} else {
				want, wantErr = ApplyResizeRequest(old, req, opts)
				got, gotErr = c.ResizePodRequest("default", name, req)
			}
			if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()) {
				t.Fatalf("%s, pod %s, %s:\n cluster: %v\n full validation: %v", v, name, req.Patch(), gotErr, wantErr)
			}
			outcomes[gotErr == nil]++
			if gotErr != nil {
				continue
			}
			a, _ := json.Marshal(want)
			b, _ := json.Marshal(got)
			if string(a) != string(b) {
				t.Fatalf("%s, pod %s, %s:\n cluster: %s\n full validation: %s", v, name, req.Patch(), b, a)
			}
		}
	}
	t.Logf("outcomes (accepted or not): %v", outcomes)
	if outcomes[true] < 100 || outcomes[false] < 100 {
		t.Fatalf("the draw is too narrow to prove much: %v", outcomes)
	}
}

// TestKeptContainersMatchesTheFullValidation: ValidateResize with the
// invariant (ResizeOptions.oldStored) gives what it gives without, for
// random old pods that hold it (they pass ValidatePod) and random changes
// of them, which share what they leave alone.
func TestKeptContainersMatchesTheFullValidation(t *testing.T) {
	g := podGen{r: rand.New(rand.NewSource(11))}
	kept := 0
	for _, v := range profile.Versions() {
		o := ResizeOptions{Profile: v}
		stored := o
		stored.oldStored = true
		for i := 0; i < 2000; i++ {
			g.sane = i%2 == 0
			old := g.pod()
			if len(ValidatePod(old, o)) > 0 {
				continue
			}
			newPod := g.changed(old)
			if keptContainers(newPod, old, stored) != 0 {
				kept++
			}
			got, want := errorTexts(ValidateResize(newPod, old, stored)), errorTexts(ValidateResize(newPod, old, o))
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("case %d, %s: with the invariant\n%q\nwithout\n%q", i, v, got, want)
			}
		}
	}
	if kept < 500 {
		t.Fatalf("only %d cases kept a container", kept)
	}
}

package apiserver

import (
	"fmt"
	"math/rand"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/resizelet/resizelet/resize/profile"
)

// podGen draws pods and changes to them for the validation differential
// test: a little of everything validation looks at, valid or not.
type podGen struct {
	r *rand.Rand
	// sane draws mostly what a valid resize has: cpu and memory, fine
	// names, few changes beyond cpu and memory.
	sane bool
}

func (g podGen) pick(options ...string) string { return options[g.r.Intn(len(options))] }

func (g podGen) quantity() resource.Quantity {
	if g.sane {
		return resource.MustParse(g.pick("100m", "250m", "1", "64Mi", "128Mi", "1Gi"))
	}
	return resource.MustParse(g.pick("0", "1", "100m", "250m", "1500m", "2", "-1", "64Mi", "128Mi", "1Gi", "0.5", "3"))
}

func (g podGen) list() v1.ResourceList {
	switch g.r.Intn(6) {
	case 0:
		return nil
	case 1:
		return v1.ResourceList{}
	}
	l := v1.ResourceList{}
	if g.sane {
		l[v1.ResourceCPU] = g.quantity()
		l[v1.ResourceMemory] = g.quantity()
		return l
	}
	for i := g.r.Intn(4); i >= 0; i-- {
		name := v1.ResourceName(g.pick("cpu", "cpu", "memory", "memory", "ephemeral-storage", "hugepages-2Mi", "example.com/gpu", "requests.foo", "Bad Name", "kubernetes.io/x"))
		l[name] = g.quantity()
	}
	return l
}

func (g podGen) requirements() v1.ResourceRequirements {
	rr := v1.ResourceRequirements{Requests: g.list(), Limits: g.list()}
	if g.sane && rr.Limits != nil && rr.Requests != nil {
		rr.Requests = rr.Limits.DeepCopy()
	}
	if !g.sane && g.r.Intn(10) == 0 {
		rr.Claims = []v1.ResourceClaim{{Name: g.pick("gpu", "fpga")}}
	}
	return rr
}

func (g podGen) container(name string) v1.Container {
	c := v1.Container{Name: name, Image: g.pick("pause", "busybox"), Resources: g.requirements()}
	if !g.sane && g.r.Intn(3) == 0 {
		for i := g.r.Intn(3); i >= 0; i-- {
			c.ResizePolicy = append(c.ResizePolicy, v1.ContainerResizePolicy{
				ResourceName:  v1.ResourceName(g.pick("cpu", "memory", "memory", "gpu", "")),
				RestartPolicy: v1.ResourceResizeRestartPolicy(g.pick("NotRequired", "RestartContainer", "Sometimes", "")),
			})
		}
	}
	if g.r.Intn(8) == 0 {
		c.Env = []v1.EnvVar{{Name: "A", Value: g.pick("1", "2")}}
	}
	return c
}

func (g podGen) pod() *v1.Pod {
	p := &v1.Pod{}
	p.Name = g.pick("p", "p", "")
	p.Namespace = "default"
	if g.sane {
		p.Name = "p"
	}
	for i := g.r.Intn(3); i >= 0; i-- {
		name := g.pick("c1", "c2", "c3", "c1", "Bad_Name", "")
		if g.sane {
			name = fmt.Sprintf("c%d", len(p.Spec.Containers)+1)
		}
		p.Spec.Containers = append(p.Spec.Containers, g.container(name))
	}
	for i := g.r.Intn(3) - 1; i >= 0; i-- {
		c := g.container(g.pick("i1", "s1", "c1", ""))
		if g.r.Intn(2) == 0 {
			always := v1.ContainerRestartPolicyAlways
			c.RestartPolicy = &always
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	}
	if g.r.Intn(10) == 0 {
		e := g.container(g.pick("e1", "c1"))
		if g.r.Intn(2) == 0 {
			e.Resources = v1.ResourceRequirements{}
			e.ResizePolicy = nil
		}
		p.Spec.EphemeralContainers = []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon(e)}}
	}
	if g.r.Intn(4) == 0 {
		rr := g.requirements()
		p.Spec.Resources = &rr
	}
	if g.r.Intn(6) == 0 {
		p.Spec.RestartPolicy = v1.RestartPolicyNever
	}
	switch g.r.Intn(30) {
	case 0:
		if g.sane {
			break
		}
		p.Annotations = map[string]string{v1.MirrorPodAnnotationKey: "x"}
	case 1:
		if !g.sane {
			p.Spec.OS = &v1.PodOS{Name: v1.Windows}
		}
	}
	if g.r.Intn(2) == 0 {
		DefaultPod(p)
	}
	p.Status.QOSClass = v1.PodQOSClass(g.pick("", "Guaranteed", "Burstable", "BestEffort"))
	if g.sane {
		p.Status.QOSClass = ""
	}
	if g.r.Intn(3) == 0 && len(p.Spec.Containers) > 0 {
		cs := v1.ContainerStatus{Name: p.Spec.Containers[0].Name, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}
		if g.r.Intn(3) > 0 {
			cs.Resources = &v1.ResourceRequirements{}
		}
		p.Status.ContainerStatuses = []v1.ContainerStatus{cs}
	}
	return p
}

// changed returns a pod built from old as a resize would be: sharing
// what it does not change (or, at times, a deep copy), with random
// changes to resources, other container fields, the container lists and
// the rest of the spec.
func (g podGen) changed(old *v1.Pod) *v1.Pod {
	var p *v1.Pod
	if g.r.Intn(3) == 0 {
		p = old.DeepCopy()
	} else {
		cp := *old
		cp.Spec.Containers = append([]v1.Container(nil), old.Spec.Containers...)
		cp.Spec.InitContainers = append([]v1.Container(nil), old.Spec.InitContainers...)
		p = &cp
	}
	lists := []*[]v1.Container{&p.Spec.Containers, &p.Spec.InitContainers}
	for n := g.r.Intn(4); n > 0; n-- {
		list := lists[g.r.Intn(2)]
		if len(*list) == 0 {
			continue
		}
		c := &(*list)[g.r.Intn(len(*list))]
		k := g.r.Intn(12)
		if g.sane && g.r.Intn(4) > 0 {
			k = 0
		}
		switch k {
		case 0, 1, 2, 3:
			// A resize: new lists with cpu and memory changed, or an
			// edit of any resource.
			rr := c.Resources
			rr.Requests, rr.Limits = resized(g, rr.Requests), resized(g, rr.Limits)
			c.Resources = rr
		case 4:
			c.Resources = g.requirements()
		case 5:
			c.Image = "other"
		case 6:
			c.Resources.Claims = []v1.ResourceClaim{{Name: "new"}}
		case 7:
			c.ResizePolicy = []v1.ContainerResizePolicy{{ResourceName: v1.ResourceMemory, RestartPolicy: v1.RestartContainer}}
		case 8:
			c.Name = g.pick("c9", "c2", "i1")
		case 9:
			*list = append(*list, g.container("added"))
		case 10:
			*list = (*list)[1:]
		case 11:
			if len(*list) > 1 {
				(*list)[0], (*list)[1] = (*list)[1], (*list)[0]
			}
		}
	}
	k := g.r.Intn(8)
	if g.sane && g.r.Intn(3) > 0 {
		k = 7
	}
	switch k {
	case 0:
		rr := g.requirements()
		p.Spec.Resources = &rr
	case 1:
		if p.Spec.Resources != nil {
			rr := *p.Spec.Resources
			rr.Requests, rr.Limits = resized(g, rr.Requests), resized(g, rr.Limits)
			p.Spec.Resources = &rr
		}
	case 2:
		p.Spec.Resources = nil
	case 3:
		p.Spec.NodeName = "elsewhere"
	case 4:
		p.Spec.EphemeralContainers = append([]v1.EphemeralContainer(nil), p.Spec.EphemeralContainers...)
		p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, v1.EphemeralContainer{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "e2", Image: "x"}})
	}
	return p
}

// resized returns a copy of list with cpu or memory changed, removed or
// added, or another resource changed.
func resized(g podGen, list v1.ResourceList) v1.ResourceList {
	if list == nil && g.r.Intn(2) == 0 {
		return nil
	}
	out := v1.ResourceList{}
	for k, v := range list {
		out[k] = v
	}
	switch g.r.Intn(6) {
	case 0, 1:
		out[v1.ResourceCPU] = g.quantity()
	case 2:
		out[v1.ResourceMemory] = g.quantity()
	case 3:
		delete(out, v1.ResourceName(g.pick("cpu", "memory")))
	case 4:
		out["example.com/gpu"] = g.quantity()
	}
	return out
}

func errorTexts(errs field.ErrorList) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Error()
	}
	return out
}

// TestValidateResizeMatchesOracle holds ValidateResize (and ValidatePod)
// to the first, deep-copying implementation on random pods and changes,
// under every version and with pod-level resize on and off: the same
// errors, in the same order, with the same text.
func TestValidateResizeMatchesOracle(t *testing.T) {
	g := podGen{r: rand.New(rand.NewSource(7))}
	var options []ResizeOptions
	for _, v := range profile.Versions() {
		options = append(options, ResizeOptions{Profile: v})
	}
	options = append(options, ResizeOptions{Profile: profile.V135, Gate: func(name string) bool {
		return name == profile.GateInPlacePodLevelResourcesVerticalScaling || profile.New(profile.V135, nil).Gate(name)
	}})
	outcomes := map[string]int{}
	for i := 0; i < 2000; i++ {
		g.sane = i%2 == 0
		old := g.pod()
		newPod := g.changed(old)
		for _, o := range options {
			got, want := errorTexts(ValidateResize(newPod, old, o)), errorTexts(oracleValidateResize(newPod, old, o))
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("case %d, %s: ValidateResize says\n%q\nthe oracle\n%q\nold %+v\nnew %+v", i, o.Profile, got, want, old.Spec, newPod.Spec)
			}
			if len(got) == 0 {
				outcomes["valid"]++
			} else {
				outcomes[want[len(want)-1][:20]]++
			}
			if fmt.Sprint(errorTexts(ValidatePod(newPod, o))) != fmt.Sprint(errorTexts(oracleValidatePod(newPod, o))) {
				t.Fatalf("case %d: ValidatePod differs from the oracle", i)
			}
		}
	}
	t.Logf("outcomes: %v", outcomes)
	if outcomes["valid"] < 100 || len(outcomes) < 8 {
		t.Fatalf("the draw is too narrow to prove much: %v", outcomes)
	}
}

package apiserver

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// twoPassValidateAmounts is ValidateAmounts as it was first written, the
// oracle of the one-walk version: the bounds of each amount in a walk of
// each list, sorted by name, then, when all are within them, the totals
// in a walk of every list again.
func twoPassValidateAmounts(pod *v1.Pod) field.ErrorList {
	var errs field.ErrorList
	each := func(list v1.ResourceList, path func() *field.Path) {
		names := make([]v1.ResourceName, 0, len(list))
		for name := range list {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			q := list[name]
			errs = append(errs, validateAmount(name, &q, func() *field.Path { return path().Key(string(name)) })...)
		}
	}
	side := func(r *v1.ResourceRequirements, path func() *field.Path) {
		each(r.Limits, func() *field.Path { return path().Child("limits") })
		each(r.Requests, func() *field.Path { return path().Child("requests") })
	}
	for _, l := range []struct {
		name string
		cs   []v1.Container
	}{{"containers", pod.Spec.Containers}, {"initContainers", pod.Spec.InitContainers}} {
		for i := range l.cs {
			side(&l.cs[i].Resources, func() *field.Path { return containerPath(l.name, i).Child("resources") })
		}
	}
	if pod.Spec.Resources != nil {
		side(pod.Spec.Resources, func() *field.Path { return field.NewPath("spec", "resources") })
	}
	each(pod.Spec.Overhead, func() *field.Path { return field.NewPath("spec", "overhead") })
	if len(errs) > 0 {
		return errs
	}
	var t totals
	walk := func(list v1.ResourceList, limits bool) {
		for name, q := range list {
			t.amount(name, q, limits)
		}
	}
	for _, cs := range [][]v1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range cs {
			walk(cs[i].Resources.Requests, false)
			walk(cs[i].Resources.Limits, true)
		}
	}
	if r := pod.Spec.Resources; r != nil {
		walk(r.Requests, false)
		walk(r.Limits, true)
	}
	walk(pod.Spec.Overhead, false)
	walk(pod.Spec.Overhead, true)
	return t.errors()
}

// boundsPod draws a pod whose amounts are often near, at or beyond the
// bounds, alone or added up, in every list the bounds read.
func boundsPod(r *rand.Rand) *v1.Pod {
	texts := []string{"100m", "1", "-1", "0", "4500M", "4600M", "9000M", "9e9", "1e10", "1e100", "-1e100",
		"4Pi", "5Pi", "8Pi", "9Pi", "1Gi", "0.5", "1e3"}
	names := []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage, "example.com/gpu", "hugepages-2Mi", "example.com/fpga", "pods"}
	list := func() v1.ResourceList {
		if r.Intn(5) == 0 {
			return nil
		}
		l := v1.ResourceList{}
		// Up to seven resources: more than the amount checks have room
		// for on the stack.
		for i := r.Intn(8); i > 0; i-- {
			l[names[r.Intn(len(names))]] = resource.MustParse(texts[r.Intn(len(texts))])
		}
		return l
	}
	rr := func() v1.ResourceRequirements { return v1.ResourceRequirements{Requests: list(), Limits: list()} }
	p := testPod()
	for i := 1 + r.Intn(3); i > 0; i-- {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: fmt.Sprintf("c%d", i), Resources: rr()})
	}
	for i := r.Intn(2); i > 0; i-- {
		p.Spec.InitContainers = append(p.Spec.InitContainers, v1.Container{Name: fmt.Sprintf("i%d", i), Resources: rr()})
	}
	if r.Intn(3) == 0 {
		pl := rr()
		p.Spec.Resources = &pl
	}
	if r.Intn(3) == 0 {
		p.Spec.Overhead = list()
	}
	return p
}

// TestValidateAmountsMatchesTwoPasses: the one-walk ValidateAmounts gives
// the errors of the two-pass oracle, in the same order, on random pods
// near the bounds.
func TestValidateAmountsMatchesTwoPasses(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	outcomes := map[int]int{}
	for i := 0; i < 20000; i++ {
		p := boundsPod(r)
		got, want := errorTexts(ValidateAmounts(p)), errorTexts(twoPassValidateAmounts(p))
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("case %d: ValidateAmounts\n%q\nthe two passes\n%q\npod %+v", i, got, want, p.Spec)
		}
		outcomes[min(len(got), 3)]++
	}
	t.Logf("outcomes (number of errors, 3 for 3 or more): %v", outcomes)
	if outcomes[0] < 1000 || outcomes[1] < 1000 || outcomes[2] < 500 {
		t.Fatalf("the draw is too narrow: %v", outcomes)
	}
}

// FuzzValidateAmounts holds the one-walk ValidateAmounts to the two-pass
// oracle on fuzzed pods: lists is "|"-separated resource lists
// ("name=quantity,...", as fuzzList reads them) for two containers'
// requests and limits, an init container's, the pod level's and the
// overhead, in that order.
func FuzzValidateAmounts(f *testing.F) {
	f.Add("cpu=4500M,memory=4Pi|cpu=4500M,memory=4Pi|cpu=4600M|memory=5Pi")
	f.Add("cpu=1e100|-|memory=1Gi|||cpu=1")
	f.Add("cpu=100m,memory=128Mi|cpu=200m,memory=256Mi|cpu=100m|cpu=200m|||||example.com/gpu=1")
	f.Fuzz(func(t *testing.T, lists string) {
		part := strings.Split(lists, "|")
		list := func(i int) v1.ResourceList {
			if i >= len(part) {
				return nil
			}
			return fuzzList(part[i])
		}
		p := testPod(
			v1.Container{Name: "c1", Resources: v1.ResourceRequirements{Requests: list(0), Limits: list(1)}},
			v1.Container{Name: "c2", Resources: v1.ResourceRequirements{Requests: list(2), Limits: list(3)}})
		if init := (v1.ResourceRequirements{Requests: list(4), Limits: list(5)}); init.Requests != nil || init.Limits != nil {
			p.Spec.InitContainers = []v1.Container{{Name: "i1", Resources: init}}
		}
		if pl := (v1.ResourceRequirements{Requests: list(6), Limits: list(7)}); pl.Requests != nil || pl.Limits != nil {
			p.Spec.Resources = &pl
		}
		p.Spec.Overhead = list(8)
		want := errorTexts(twoPassValidateAmounts(p))
		if got := errorTexts(ValidateAmounts(p)); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("ValidateAmounts\n%q\nthe two passes\n%q", got, want)
		}
	})
}

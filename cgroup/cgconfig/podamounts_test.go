package cgconfig

import (
	"math/rand"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// randomList draws a list of cpu and memory (each maybe absent), now and
// then with a quantity that is not a whole number of the unit, a zero, or
// an amount near the int64 limit.
func randomList(r *rand.Rand) v1.ResourceList {
	if r.Intn(5) == 0 {
		return nil
	}
	cpus := []string{"0", "1m", "100m", "250m", "1", "1500m", "0.0001", "2.5", "9223372036854775807m"}
	mems := []string{"0", "1", "64Mi", "128Mi", "1Gi", "0.5", "1500m", "8Ei"}
	l := v1.ResourceList{}
	if r.Intn(3) > 0 {
		l[v1.ResourceCPU] = resource.MustParse(cpus[r.Intn(len(cpus))])
	}
	if r.Intn(3) > 0 {
		l[v1.ResourceMemory] = resource.MustParse(mems[r.Intn(len(mems))])
	}
	return l
}

func randomAmountsPod(r *rand.Rand) *v1.Pod {
	ctr := func() v1.Container {
		return v1.Container{Resources: v1.ResourceRequirements{Requests: randomList(r), Limits: randomList(r)}}
	}
	p := &v1.Pod{}
	for i := r.Intn(3); i >= 0; i-- {
		p.Spec.Containers = append(p.Spec.Containers, ctr())
	}
	for i := r.Intn(4) - 1; i >= 0; i-- {
		c := ctr()
		if r.Intn(2) == 0 {
			always := v1.ContainerRestartPolicyAlways
			c.RestartPolicy = &always
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	}
	if r.Intn(4) == 0 {
		p.Spec.Overhead = randomList(r)
	}
	if r.Intn(4) == 0 {
		p.Spec.Resources = &v1.ResourceRequirements{Requests: randomList(r), Limits: randomList(r)}
	}
	return p
}

// TestPodAmountsMatchesLists: the integer pod amounts equal the ones read
// from k8s.io/component-helpers' lists whenever they claim to be exact,
// and they are exact for most pods.
func TestPodAmountsMatchesLists(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	exact := 0
	const n = 20000
	for i := 0; i < n; i++ {
		p := randomAmountsPod(r)
		for _, podLevel := range []bool{false, true} {
			cr, cl, ml, ok := podAmounts(p, podLevel)
			if !ok {
				continue
			}
			exact++
			wr, wl, wm := podAmountsFromLists(p, podLevel)
			if cr != wr || cl != wl || ml != wm {
				t.Fatalf("pod %d (pod level %v): integers give request %d, limit %d, memory %d; the lists %d, %d, %d\n%+v",
					i, podLevel, cr, cl, ml, wr, wl, wm, p.Spec)
			}
		}
	}
	if exact < n/2 || exact == 2*n {
		t.Fatalf("%d of %d pods computed in integers: the draw does not cover both ways", exact, 2*n)
	}
}

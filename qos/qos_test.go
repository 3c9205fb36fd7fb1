package qos

import (
	"math/rand"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func rr(cpuReq, memReq, cpuLim, memLim string) v1.ResourceRequirements {
	r := v1.ResourceRequirements{}
	set := func(l *v1.ResourceList, n v1.ResourceName, q string) {
		if q == "" {
			return
		}
		if *l == nil {
			*l = v1.ResourceList{}
		}
		(*l)[n] = resource.MustParse(q)
	}
	set(&r.Requests, v1.ResourceCPU, cpuReq)
	set(&r.Requests, v1.ResourceMemory, memReq)
	set(&r.Limits, v1.ResourceCPU, cpuLim)
	set(&r.Limits, v1.ResourceMemory, memLim)
	return r
}

var always = v1.ContainerRestartPolicyAlways

func podWith(containers []v1.ResourceRequirements, inits ...v1.Container) *v1.Pod {
	p := &v1.Pod{}
	for i, r := range containers {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: string(rune('a' + i)), Resources: r})
	}
	p.Spec.InitContainers = inits
	return p
}

func TestPodQOSClass(t *testing.T) {
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		want v1.PodQOSClass
	}{
		{"no resources", podWith([]v1.ResourceRequirements{{}}), v1.PodQOSBestEffort},
		{"requests equal limits", podWith([]v1.ResourceRequirements{rr("1", "1Gi", "1", "1Gi")}), v1.PodQOSGuaranteed},
		{"requests below limits", podWith([]v1.ResourceRequirements{rr("500m", "1Gi", "1", "1Gi")}), v1.PodQOSBurstable},
		{"cpu only", podWith([]v1.ResourceRequirements{rr("1", "", "1", "")}), v1.PodQOSBurstable},
		{"one container without limits", podWith([]v1.ResourceRequirements{rr("1", "1Gi", "1", "1Gi"), rr("1", "1Gi", "", "")}), v1.PodQOSBurstable},
		{"extended resources do not count", podWith([]v1.ResourceRequirements{{Requests: v1.ResourceList{"example.com/dongle": resource.MustParse("1")}}}), v1.PodQOSBestEffort},
		{"an init container without limits makes it burstable",
			podWith([]v1.ResourceRequirements{rr("1", "1Gi", "1", "1Gi")}, v1.Container{Name: "i", Resources: rr("1", "", "", "")}), v1.PodQOSBurstable},
		{"zero quantities are ignored", podWith([]v1.ResourceRequirements{rr("0", "0", "", "")}), v1.PodQOSBestEffort},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := PodQOSClass(tc.pod); got != tc.want {
				t.Fatalf("PodQOSClass = %s, want %s", got, tc.want)
			}
		})
	}
	t.Run("pod-level resources decide", func(t *testing.T) {
		p := podWith([]v1.ResourceRequirements{{}})
		r := rr("1", "1Gi", "1", "1Gi")
		p.Spec.Resources = &r
		if got := PodQOSClass(p); got != v1.PodQOSGuaranteed {
			t.Fatalf("PodQOSClass = %s, want Guaranteed", got)
		}
	})
}

func TestPodRequestsAndLimits(t *testing.T) {
	cmp := func(t *testing.T, what string, got v1.ResourceList, want map[v1.ResourceName]string) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s = %v, want %v", what, got, want)
		}
		for n, w := range want {
			g := got[n]
			if g.Cmp(resource.MustParse(w)) != 0 {
				t.Fatalf("%s[%s] = %s, want %s", what, n, g.String(), w)
			}
		}
	}
	t.Run("regular containers add up, overhead on top", func(t *testing.T) {
		p := podWith([]v1.ResourceRequirements{rr("100m", "100Mi", "200m", "200Mi"), rr("300m", "", "", "")})
		p.Spec.Overhead = v1.ResourceList{v1.ResourceCPU: resource.MustParse("10m"), v1.ResourceMemory: resource.MustParse("1Mi")}
		cmp(t, "requests", PodRequests(p, Options{}), map[v1.ResourceName]string{"cpu": "410m", "memory": "101Mi"})
		cmp(t, "limits", PodLimits(p, Options{}), map[v1.ResourceName]string{"cpu": "210m", "memory": "201Mi"})
		cmp(t, "requests without overhead", PodRequests(p, Options{ExcludeOverhead: true}), map[v1.ResourceName]string{"cpu": "400m", "memory": "100Mi"})
		if AllContainersHaveLimit(p, v1.ResourceCPU) {
			t.Fatal("AllContainersHaveLimit(cpu) with a container without a cpu limit")
		}
	})
	t.Run("sidecars add up, init containers need their own plus the sidecars before them", func(t *testing.T) {
		// KEP-753: init i1 (1 cpu) runs alone; sidecar s (200m) starts; init i2 (500m) runs beside s
		// (700m); then the regular container (300m) beside s (500m). The pod needs max(1, 700m, 500m) = 1.
		p := podWith([]v1.ResourceRequirements{rr("300m", "", "", "")},
			v1.Container{Name: "i1", Resources: rr("1", "", "", "")},
			v1.Container{Name: "s", RestartPolicy: &always, Resources: rr("200m", "", "", "")},
			v1.Container{Name: "i2", Resources: rr("500m", "", "", "")},
		)
		cmp(t, "requests", PodRequests(p, Options{}), map[v1.ResourceName]string{"cpu": "1"})
		p.Spec.InitContainers[0].Resources = rr("100m", "", "", "")
		cmp(t, "requests", PodRequests(p, Options{}), map[v1.ResourceName]string{"cpu": "700m"})
	})
	t.Run("pod-level resources replace the aggregate unless skipped", func(t *testing.T) {
		p := podWith([]v1.ResourceRequirements{rr("100m", "100Mi", "", "")})
		r := rr("2", "1Gi", "4", "2Gi")
		p.Spec.Resources = &r
		cmp(t, "requests", PodRequests(p, Options{}), map[v1.ResourceName]string{"cpu": "2", "memory": "1Gi"})
		cmp(t, "limits", PodLimits(p, Options{}), map[v1.ResourceName]string{"cpu": "4", "memory": "2Gi"})
		cmp(t, "requests, gate off", PodRequests(p, Options{SkipPodLevelResources: true}), map[v1.ResourceName]string{"cpu": "100m", "memory": "100Mi"})
	})
}

// listQOSClass is the QoS computation with resource lists, as first
// written (and as the API server writes it): the oracle for podQOSClass.
func listQOSClass(pod *v1.Pod, podLevel bool) v1.PodQOSClass {
	requests, limits := v1.ResourceList{}, v1.ResourceList{}
	add := func(list, from v1.ResourceList) int {
		found := 0
		for name, q := range from {
			if (name == v1.ResourceCPU || name == v1.ResourceMemory) && q.Sign() > 0 {
				found++
				if cur, ok := list[name]; ok {
					cur.Add(q)
					list[name] = cur
				} else {
					list[name] = q.DeepCopy()
				}
			}
		}
		return found
	}
	guaranteed := true
	account := func(r v1.ResourceRequirements, limitsOptional bool) {
		add(requests, r.Requests)
		if found := add(limits, r.Limits); found != 2 && !(limitsOptional && len(r.Limits) == 0) {
			guaranteed = false
		}
	}
	if podLevel && pod.Spec.Resources != nil {
		account(*pod.Spec.Resources, true)
	} else {
		for _, c := range pod.Spec.Containers {
			account(c.Resources, false)
		}
		for _, c := range pod.Spec.InitContainers {
			account(c.Resources, false)
		}
	}
	if len(requests) == 0 && len(limits) == 0 {
		return v1.PodQOSBestEffort
	}
	if guaranteed {
		for name, req := range requests {
			if lim, ok := limits[name]; !ok || lim.Cmp(req) != 0 {
				guaranteed = false
			}
		}
	}
	if guaranteed && len(requests) == len(limits) {
		return v1.PodQOSGuaranteed
	}
	return v1.PodQOSBurstable
}

// TestQOSClassMatchesLists: the class computed without lists is the one
// the lists give, on random pods.
func TestQOSClassMatchesLists(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	amounts := []string{"0", "-1", "100m", "200m", "1", "64Mi", "128Mi"}
	list := func() v1.ResourceList {
		l := v1.ResourceList{}
		for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, "example.com/gpu"} {
			if r.Intn(3) > 0 {
				l[name] = resource.MustParse(amounts[r.Intn(len(amounts))])
			}
		}
		return l
	}
	classes := map[v1.PodQOSClass]int{}
	for i := 0; i < 20000; i++ {
		p := &v1.Pod{}
		for n := r.Intn(3); n >= 0; n-- {
			rr := v1.ResourceRequirements{Requests: list(), Limits: list()}
			if r.Intn(3) == 0 {
				rr.Requests = rr.Limits.DeepCopy()
			}
			p.Spec.Containers = append(p.Spec.Containers, v1.Container{Resources: rr})
		}
		if r.Intn(4) == 0 {
			p.Spec.InitContainers = []v1.Container{{Resources: v1.ResourceRequirements{Requests: list(), Limits: list()}}}
		}
		if r.Intn(4) == 0 {
			p.Spec.Resources = &v1.ResourceRequirements{Requests: list(), Limits: list()}
		}
		for _, podLevel := range []bool{false, true} {
			got, want := podQOSClass(p, podLevel), listQOSClass(p, podLevel)
			if got != want {
				t.Fatalf("pod %d (pod level %v): %s, the lists say %s: %+v", i, podLevel, got, want, p.Spec)
			}
			classes[got]++
		}
	}
	if len(classes) != 3 {
		t.Fatalf("the draw reached only %v", classes)
	}
}

// TestPodQOSClassWhenSet: with 1.37's PodLevelResourcesFixKubeletQOSClass
// (pkg/apis/core/v1/helper/qos/qos.go, ComputePodQOS) pod-level resources
// decide the class only when they set a supported resource; an empty
// spec.resources leaves it to the containers, where PodQOSClass makes the
// pod BestEffort.
func TestPodQOSClassWhenSet(t *testing.T) {
	guaranteed := []v1.ResourceRequirements{rr("500m", "128Mi", "500m", "128Mi")}
	for _, tc := range []struct {
		name             string
		podLevel         *v1.ResourceRequirements
		whenSet, current v1.PodQOSClass
	}{
		{"no pod-level resources", nil, v1.PodQOSGuaranteed, v1.PodQOSGuaranteed},
		{"empty pod-level resources", &v1.ResourceRequirements{}, v1.PodQOSGuaranteed, v1.PodQOSBestEffort},
		{"pod-level resources set", &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}}, v1.PodQOSBurstable, v1.PodQOSBurstable},
		{"only an unsupported pod-level resource", &v1.ResourceRequirements{Requests: v1.ResourceList{"example.com/gpu": resource.MustParse("1")}}, v1.PodQOSGuaranteed, v1.PodQOSBestEffort},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := podWith(guaranteed)
			p.Spec.Resources = tc.podLevel
			if got := PodQOSClassWhenSet(p); got != tc.whenSet {
				t.Errorf("PodQOSClassWhenSet = %s, want %s", got, tc.whenSet)
			}
			if got := PodQOSClass(p); got != tc.current {
				t.Errorf("PodQOSClass = %s, want %s", got, tc.current)
			}
		})
	}
}

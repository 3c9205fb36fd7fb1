package core

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func BenchmarkZZDecision(b *testing.B) {
	node := NodeConfig{Capacity: v1.ResourceList{v1.ResourceCPU: resource.MustParse("16000"), v1.ResourceMemory: resource.MustParse("64Ti"), v1.ResourcePods: resource.MustParse("10000")}}
	w := newWorld(&testing.T{}, node)
	w.add(testPod("target", resources("200m", "128Mi", "400m", "256Mi"), resources("100m", "64Mi", "200m", "128Mi")))
	for i := 0; i < 109; i++ {
		w.add(testPod(fmt.Sprintf("p%d", i), resources("100m", "64Mi", "200m", "128Mi")))
	}
	rs := [][]v1.ResourceRequirements{
		{resources("300m", "192Mi", "600m", "384Mi"), resources("100m", "64Mi", "200m", "128Mi")},
		{resources("200m", "128Mi", "400m", "256Mi"), resources("100m", "64Mi", "200m", "128Mi")},
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		p, _ := w.c.APIPod("default", "target")
		for j, r := range rs[i%2] {
			p.Spec.Containers[j].Resources = r
		}
		p.Generation++
		b.StartTimer()
		rd, _ := w.c.Step(ResizeRequested{Pod: p, Now: w.now})
		for rd.Batch != nil {
			done := false
			for _, a := range rd.Batch.Actions {
				if e, ok := a.(RecordEvent); ok && e.Event.Reason == ReasonResizeStarted {
					done = true
				}
			}
			if done {
				break
			}
			res := w.perform(rd.Batch)
			rd, _ = w.c.Step(BatchDone{ID: rd.Batch.ID, Results: res, Now: w.now})
		}
		b.StopTimer()
		for rd.Batch != nil {
			res := w.perform(rd.Batch)
			rd, _ = w.c.Step(BatchDone{ID: rd.Batch.ID, Results: res, Now: w.now})
		}
		b.StartTimer()
	}
}

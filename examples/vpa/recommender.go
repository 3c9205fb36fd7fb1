package main

import (
	"math"
	"time"
)

// histogram is a decaying histogram of samples, in the shape of the VPA
// recommender's (vertical-pod-autoscaler/pkg/recommender/util, the
// exponential buckets and the decaying histogram): bucket i covers
// [first·(ratio^i−1)/(ratio−1), first·(ratio^(i+1)−1)/(ratio−1)), so that
// each bucket is ratio times wider than the one before, and a sample's
// weight doubles every halfLife of its time, so that newer samples count
// more (the older ones decay). Percentile answers with the upper bound of
// the bucket where the cumulated weight reaches the fraction asked for.
type histogram struct {
	first, ratio float64
	halfLife     time.Duration
	weights      []float64
	total        float64
	// ref is the time whose samples weigh 1; later ones weigh more.
	ref time.Time
}

// The histograms' shapes: the VPA recommender's CPU histogram starts with
// a 0.001-core bucket and its memory histogram with a 10 MB one, each
// bucket 5% wider than the one before
// (pkg/recommender/model/aggregations_config.go, cpuHistogramOptions and
// memoryHistogramOptions).
const (
	cpuFirstBucket    = 1    // millicores
	memoryFirstBucket = 1e7  // bytes
	bucketRatio       = 1.05 // each bucket 5% wider
	maxBuckets        = 400  // covers beyond 10000 CPUs and 10 TB
)

func newHistogram(first float64, halfLife time.Duration, ref time.Time) *histogram {
	return &histogram{first: first, ratio: bucketRatio, halfLife: halfLife, weights: make([]float64, maxBuckets), ref: ref}
}

// bucket returns the index of the bucket holding v.
func (h *histogram) bucket(v float64) int {
	if v < h.first {
		return 0
	}
	i := int(math.Floor(math.Log(v*(h.ratio-1)/h.first+1) / math.Log(h.ratio)))
	return min(max(i, 0), len(h.weights)-1)
}

// bucketEnd is the upper bound of bucket i.
func (h *histogram) bucketEnd(i int) float64 {
	return h.first * (math.Pow(h.ratio, float64(i+1)) - 1) / (h.ratio - 1)
}

// add records a sample of value v taken at time t.
func (h *histogram) add(v float64, t time.Time) {
	exp := t.Sub(h.ref).Seconds() / h.halfLife.Seconds()
	if exp > 50 {
		// Keep the weights finite: move the reference up to t, scaling
		// every weight down by the same factor (the VPA recommender's
		// decaying histogram does the same when its factor grows large).
		scale := math.Exp2(-exp)
		for i := range h.weights {
			h.weights[i] *= scale
		}
		h.total *= scale
		h.ref = t
		exp = 0
	}
	w := math.Exp2(exp)
	h.weights[h.bucket(v)] += w
	h.total += w
}

// percentile returns the upper bound of the bucket where the weight of the
// samples up to it reaches p of the whole, 0 when there are no samples.
func (h *histogram) percentile(p float64) float64 {
	if h.total == 0 {
		return 0
	}
	sum := 0.0
	for i, w := range h.weights {
		sum += w
		if sum >= p*h.total {
			return h.bucketEnd(i)
		}
	}
	return h.bucketEnd(len(h.weights) - 1)
}

// The recommender's constants. Target percentile, safety margin and the
// minimums are the VPA recommender's defaults (--target-cpu-percentile,
// --target-memory-percentile 0.9, --recommendation-margin-fraction 0.15,
// --pod-recommendation-min-cpu-millicores 25,
// --pod-recommendation-min-memory-mb 250). The half-life is not: VPA's is
// 24 hours (--cpu-histogram-decay-half-life), far too slow for an hour of
// simulated time, so this one is ten minutes.
const (
	targetPercentile = 0.9
	safetyMargin     = 0.15
	minCPU           = 25                // millicores
	minMemory        = 250 * 1000 * 1000 // bytes: 250 MB
	halfLife         = 10 * time.Minute
)

// recommender keeps a workload's samples, across all its pods, as the VPA
// recommender aggregates the containers of one name across the pods a VPA
// object targets: a CPU histogram of every usage sample and a memory
// histogram of every minute's usage peak.
type recommender struct {
	cpu, memory *histogram
	samples     int
}

func newRecommender(start time.Time) *recommender {
	return &recommender{
		cpu:    newHistogram(cpuFirstBucket, halfLife, start),
		memory: newHistogram(memoryFirstBucket, halfLife, start),
	}
}

// add records one pod's usage at t: cpu in millicores, memory in bytes.
func (r *recommender) add(cpu, memory float64, t time.Time) {
	r.cpu.add(cpu, t)
	r.memory.add(memory, t)
	r.samples++
}

// target is the recommendation: the target percentile of each histogram
// plus the safety margin, at least the minimums and at most limit (the VPA
// object's maxAllowed); cpu in millicores, memory in bytes rounded up to
// whole MiB.
func (r *recommender) target(limit amounts) amounts {
	cpu := int64(math.Ceil(r.cpu.percentile(targetPercentile) * (1 + safetyMargin)))
	mem := int64(math.Ceil(r.memory.percentile(targetPercentile) * (1 + safetyMargin)))
	cpu = max(min(limit.cpu, cpu), minCPU)
	mem = max(min(limit.memory, mem), minMemory)
	const mi = 1 << 20
	mem = (mem + mi - 1) / mi * mi
	return amounts{cpu: cpu, memory: mem}
}

package cgconfig

import (
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestQuantityConversionsOverflow pins the apimachinery behaviour the
// bounds exist for: MilliValue and Value do not saturate, so an amount
// beyond int64 reads as 0 or as a negative number.
func TestQuantityConversionsOverflow(t *testing.T) {
	for _, tc := range []struct {
		q        string
		badMilli bool // MilliValue is not the amount
		badValue bool // Value is not the amount
	}{
		{"1e100", true, true},
		{"9223372036854775807", true, false},
		{"1e30", true, true},
		{"10E", true, true},
	} {
		q := resource.MustParse(tc.q)
		want := new(big.Float).SetPrec(200)
		want.SetString(q.AsDec().String())
		milli := new(big.Float).SetPrec(200).Mul(want, big.NewFloat(1000))
		if gotBad := new(big.Float).SetInt64(q.MilliValue()).Cmp(milli) != 0; gotBad != tc.badMilli {
			t.Errorf("%s: MilliValue() = %d, wrong = %v, want wrong = %v", tc.q, q.MilliValue(), gotBad, tc.badMilli)
		}
		if gotBad := new(big.Float).SetInt64(q.Value()).Cmp(want) != 0; gotBad != tc.badValue {
			t.Errorf("%s: Value() = %d, wrong = %v, want wrong = %v", tc.q, q.Value(), gotBad, tc.badValue)
		}
		for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
			if AmountFits(name, q) {
				t.Errorf("AmountFits(%s, %s) = true", name, tc.q)
			}
		}
	}
}

// TestBoundsKeepTheKubeletArithmeticInRange: at the bounds, the products
// the kubelet computes still fit int64.
func TestBoundsKeepTheKubeletArithmeticInRange(t *testing.T) {
	const maxPeriod = 1_000_000 // 1 s in µs, the longest CFS period
	if MaxMilliCPU > math.MaxInt64/maxPeriod || MaxMilliCPU > math.MaxInt64/SharesPerCPU {
		t.Errorf("MaxMilliCPU %d overflows times the period or the shares per CPU", MaxMilliCPU)
	}
	if got := MilliCPUToQuota(MaxMilliCPU, maxPeriod); got != MaxMilliCPU*maxPeriod/MilliCPUToCPU || got <= 0 {
		t.Errorf("MilliCPUToQuota(MaxMilliCPU, 1s) = %d", got)
	}
	if got := MilliCPUToShares(MaxMilliCPU); got != MaxShares {
		t.Errorf("MilliCPUToShares(MaxMilliCPU) = %d, want %d", got, MaxShares)
	}
	if MaxAmount > math.MaxInt64/1000 || MaxAmount > math.MaxInt64/2 {
		t.Errorf("MaxAmount %d overflows times 1000 (OOM score) or twice (used plus requested)", MaxAmount)
	}
	if MaxMilliCPU > math.MaxInt64/2 {
		t.Errorf("MaxMilliCPU %d overflows twice", MaxMilliCPU)
	}
}

func TestAmountFits(t *testing.T) {
	for _, tc := range []struct {
		name v1.ResourceName
		q    string
		want bool
	}{
		{v1.ResourceCPU, "0", true},
		{v1.ResourceCPU, "16", true},
		{v1.ResourceCPU, "9G", true},
		{v1.ResourceCPU, "1Gi", true},
		{v1.ResourceCPU, "9000000000001m", false},
		{v1.ResourceCPU, "1e100", false},
		{v1.ResourceCPU, "-1e100", false},
		{v1.ResourceCPU, "9223372036854775807", false},
		{v1.ResourceCPU, "9223372036854775807m", false},
		{v1.ResourceMemory, "64Ti", true},
		{v1.ResourceMemory, "8Pi", true},
		{v1.ResourceMemory, "9007199254740993", false},
		{v1.ResourceMemory, "1e100", false},
		{v1.ResourceMemory, "16Ei", false},
		{v1.ResourceEphemeralStorage, "1e30", false},
		{"hugepages-2Mi", "8Pi", true},
		{"example.com/gpu", "9007199254740992", true},
		{"example.com/gpu", "1e16", false},
	} {
		if got := AmountFits(tc.name, resource.MustParse(tc.q)); got != tc.want {
			t.Errorf("AmountFits(%s, %s) = %v, want %v", tc.name, tc.q, got, tc.want)
		}
		err := CheckAmount(tc.name, resource.MustParse(tc.q))
		if (err == nil) != tc.want {
			t.Errorf("CheckAmount(%s, %s) = %v", tc.name, tc.q, err)
		}
		if err != nil && !errors.Is(err, ErrAmountTooLarge) {
			t.Errorf("CheckAmount(%s, %s) = %v, does not wrap ErrAmountTooLarge", tc.name, tc.q, err)
		}
	}
	if got, want := CheckAmount(v1.ResourceCPU, resource.MustParse("1e100")).Error(),
		"10e99 is more than 9G, the largest cpu amount resizelet takes (more overflows the kubelet's int64 arithmetic)"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	if got := MaxQuantity(v1.ResourceMemory); got.String() != "8Pi" {
		t.Errorf("MaxQuantity(memory) = %s, want 8Pi", got.String())
	}
}

// TestAmountFitsHugeExponents: amounts with exponents in the millions are
// sized up without bringing them to a common scale, which would take
// minutes and gigabytes. (Large negative exponents are slow to parse in
// the first place, in ParseQuantity's rounding; scenario files refuse
// them before they are parsed.)
func TestAmountFitsHugeExponents(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want bool
	}{
		{"1e54775807", false},
		{"-1e54775807", false},
		{"1e39", false},
		{"1e-39", true},
		{"0e99999999", true},
	} {
		start := time.Now()
		q, err := resource.ParseQuantity(tc.q)
		if err != nil {
			t.Fatalf("%s: %v", tc.q, err)
		}
		for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
			if got := AmountFits(name, q); got != tc.want {
				t.Errorf("AmountFits(%s, %s) = %v, want %v", name, tc.q, got, tc.want)
			}
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s took %v", tc.q, d)
		}
	}
}

// TestAmountFitsNearTheBounds: amounts a hair either side of a bound, and
// ones whose float is NaN, are compared exactly.
func TestAmountFitsNearTheBounds(t *testing.T) {
	for _, tc := range []struct {
		name v1.ResourceName
		q    string
		want bool
	}{
		{v1.ResourceCPU, "9000000000", true},
		{v1.ResourceCPU, "9000000000001m", false},
		{v1.ResourceCPU, "8999999999.999", true},
		{v1.ResourceCPU, "-9000000000001m", false},
		{v1.ResourceMemory, "9007199254740992", true},
		{v1.ResourceMemory, "9007199254740993", false},
		{v1.ResourceMemory, "9007199254740992.5", false},
		{v1.ResourceMemory, "1" + strings.Repeat("0", 400) + "e-400", true},
		{v1.ResourceMemory, "1" + strings.Repeat("0", 400) + "e-380", false},
	} {
		if got := AmountFits(tc.name, resource.MustParse(tc.q)); got != tc.want {
			t.Errorf("AmountFits(%s, %.40s) = %v, want %v", tc.name, tc.q, got, tc.want)
		}
	}
	// Sizing up allocates nothing for the amounts pods have.
	q := resource.MustParse("250m")
	if n := testing.AllocsPerRun(100, func() { AmountFits(v1.ResourceCPU, q) }); n != 0 {
		t.Errorf("AmountFits allocates %v times", n)
	}
}

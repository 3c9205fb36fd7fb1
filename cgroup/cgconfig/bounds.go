package cgconfig

import (
	"errors"
	"fmt"
	"math"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The largest amounts resizelet takes, in the scheduler's units. A
// Kubernetes quantity has no upper bound (k8s.io/apimachinery
// pkg/api/resource/quantity.go, ParseQuantity, caps only binary-suffixed
// amounts, at 2^63-1), the 1.35 API server checks only that a resource
// quantity is not negative (pkg/apis/core/validation, ValidateResourceQuantityValue),
// and the kubelet turns quantities into int64 with Quantity.MilliValue and
// Quantity.Value, which do not saturate: an amount beyond int64 comes back
// as 0 or as a negative number (ScaledValue keeps the low 64 bits). The
// kubelet then computes with those integers without overflow checks
// (pkg/kubelet/cm/helpers_linux.go, MilliCPUToQuota multiplies millicores
// by the CFS period in microseconds, MilliCPUToShares by 1024;
// pkg/kubelet/qos/policy.go, GetContainerOOMScoreAdjust, multiplies the
// memory request in bytes by 1000). So a 1.35 node admits "cpu: 1e100"
// (0 millicores) and writes "cpu.max max": no limit at all.
//
// resizelet refuses such amounts where they come in (the resize
// subresource and pod creation, the node configuration, checkpoints and
// scenario files) instead of reproducing the overflow: this is a
// deliberate deviation from the 1.35 API server, which accepts them. The
// bounds are the largest amounts for which none of the kubelet's integer
// arithmetic above can overflow, rounded down to a round number, and far
// beyond any real node.
const (
	// MaxMilliCPU is the largest cpu amount, in millicores: nine billion
	// CPUs ("9G"). Times the longest CFS period the kubelet allows (1 s,
	// 10^6 µs) it is 9*10^18, which still fits int64 (MilliCPUToQuota).
	MaxMilliCPU int64 = 9_000_000_000_000
	// MaxAmount is the largest amount of any other resource, in bytes for
	// memory, ephemeral storage and huge pages, and as a count otherwise:
	// 2^53 (8Pi bytes). Times 1000 it still fits int64 (the OOM score
	// adjustment), and two of them add up without overflow (admission's
	// used plus requested).
	MaxAmount int64 = 1 << 53
)

// ErrAmountTooLarge is wrapped by (or reported with) every refusal of an
// amount above MaxMilliCPU or MaxAmount, for errors.Is.
var ErrAmountTooLarge = errors.New("amount too large")

// MaxQuantity returns the largest quantity resizelet takes for a resource:
// MaxMilliCPU millicores for cpu, MaxAmount for anything else.
func MaxQuantity(name v1.ResourceName) resource.Quantity {
	if name == v1.ResourceCPU {
		return *resource.NewMilliQuantity(MaxMilliCPU, resource.DecimalSI)
	}
	if name == v1.ResourceMemory || name == v1.ResourceEphemeralStorage || isHugePages(name) {
		return *resource.NewQuantity(MaxAmount, resource.BinarySI)
	}
	return *resource.NewQuantity(MaxAmount, resource.DecimalSI)
}

// AmountFits reports whether q is within the bounds for the resource:
// -max <= q <= max, with max from MaxQuantity. An amount that no int64
// holds is judged correctly: the amount is first sized up as a float
// (which costs nothing and allocates nothing), and only one within a
// hair of the bound is compared exactly.
func AmountFits(name v1.ResourceName, q resource.Quantity) bool {
	bound := float64(MaxAmount)
	if name == v1.ResourceCPU {
		bound = float64(MaxMilliCPU) / MilliCPUToCPU
	}
	// The float is off by a few units in the 16th digit at most, or NaN
	// when a long mantissa meets a large negative exponent.
	if f := math.Abs(q.AsApproximateFloat64()); !math.IsNaN(f) {
		switch {
		case f < bound*(1-1e-9):
			return true
		case f > bound*(1+1e-9):
			return false
		}
	}
	return exactlyFits(name, q)
}

// exactlyFits compares q with the bound exactly. It first sizes up the
// amount by its digits and exponent: comparing quantities brings both to
// one scale, and for "1e54775807" that is a number of 54 million digits
// (Quantity.Cmp would take minutes), while its size alone says it is too
// large.
func exactlyFits(name v1.ResourceName, q resource.Quantity) bool {
	if q.Sign() == 0 {
		return true
	}
	q = q.DeepCopy() // AsDec converts in place
	d := q.AsDec()
	// The amount has about digits-scale digits before the decimal point.
	digits := int64(float64(d.UnscaledBig().BitLen())*math.Log10(2)) + 1
	switch magnitude := digits - int64(d.Scale()); {
	case magnitude > 40:
		return false // beyond 10^39, far beyond either bound
	case magnitude < -40:
		return true // below 10^-40, far below either bound
	}
	limit := MaxQuantity(name)
	if q.Sign() < 0 {
		q.Neg()
	}
	return q.Cmp(limit) <= 0
}

// CheckAmount returns nil when q is within the bounds for the resource,
// and otherwise an error wrapping ErrAmountTooLarge that gives q and the
// bound, such as `10e99 is more than 9G, the largest cpu amount resizelet
// takes (more overflows the kubelet's int64 arithmetic)`.
func CheckAmount(name v1.ResourceName, q resource.Quantity) error {
	if AmountFits(name, q) {
		return nil
	}
	return &AmountError{Resource: name, Value: q.String()}
}

// AmountError is an amount beyond the bounds; it wraps ErrAmountTooLarge.
type AmountError struct {
	Resource v1.ResourceName
	Value    string // the amount as written (Quantity.String)
}

// Error gives the amount, the bound and why there is one.
func (e *AmountError) Error() string {
	if e == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%s is more than %s", e.Value, AmountBoundText(e.Resource))
}

// Unwrap returns ErrAmountTooLarge.
func (e *AmountError) Unwrap() error { return ErrAmountTooLarge }

// AmountBoundText describes the bound for a resource, for messages: the
// bound as a quantity and why it is there.
func AmountBoundText(name v1.ResourceName) string {
	limit := MaxQuantity(name)
	return fmt.Sprintf("%s, the largest %s amount resizelet takes (more overflows the kubelet's int64 arithmetic)", limit.String(), name)
}

// isHugePages reports a hugepages-<size> resource.
func isHugePages(name v1.ResourceName) bool {
	return strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix)
}

package apiserver

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// ErrAmountTooLarge is reported (errors.Is on an *InvalidError) when an
// amount, or a pod's total of one, is beyond what resizelet takes
// (cgconfig.MaxMilliCPU, cgconfig.MaxAmount). This is resizelet's rule:
// the 1.35 API server checks only that a quantity is not negative (and
// whole, for extended resources; pkg/apis/core/validation,
// ValidateResourceQuantityValue) and lets the kubelet overflow int64 on the
// rest. Refusing such a pod at the API keeps every value resizelet writes
// to a cgroup or sends to a runtime derived from an amount that fits.
var ErrAmountTooLarge = cgconfig.ErrAmountTooLarge

// originAmountBound marks the field errors of the amount bounds, so that
// InvalidError can report ErrAmountTooLarge.
const originAmountBound = "resizelet:maximum"

// validateAmount refuses a quantity beyond the bounds, at path. Negative
// quantities are validateQuantityValue's to report.
func validateAmount(name v1.ResourceName, q *resource.Quantity, path func() *field.Path) field.ErrorList {
	if q.Sign() < 0 || cgconfig.AmountFits(name, *q) {
		return nil
	}
	return field.ErrorList{field.Invalid(path(), q.String(), "must be less than or equal to "+cgconfig.AmountBoundText(name)).WithOrigin(originAmountBound)}
}

// ValidateAmounts returns the errors of the amount bounds alone for pod:
// every request, limit and overhead amount, and the pod's totals. Scenario
// files check their manifests and patches with it before anything runs.
func ValidateAmounts(pod *v1.Pod) field.ErrorList {
	if pod == nil {
		return field.ErrorList{nilPod("pod")}
	}
	// The totals are summed in the same walk, reported only when every
	// amount is within the bounds: once one is not, nothing more is added.
	var errs field.ErrorList
	var t totals
	// each checks the amounts of a list of requests (limits false) or
	// limits, or of the overhead, which counts as both.
	each := func(list v1.ResourceList, limits, overhead bool, path func() *field.Path) {
		if len(list) == 0 {
			return
		}
		// Room for a typical list, cpu, memory and at most two more
		// (zeroing more costs more than the rare longer list's heap).
		var buf [4]resourceEntry
		for _, e := range sortedEntries(list, buf[:]) {
			name, q := e.name, e.q
			if bad := validateAmount(name, &q, func() *field.Path { return path().Key(string(name)) }); len(bad) > 0 {
				errs = append(errs, bad...)
				continue
			}
			if len(errs) == 0 {
				t.amount(name, q, limits)
				if overhead {
					t.amount(name, q, !limits)
				}
			}
		}
	}
	side := func(r *v1.ResourceRequirements, path func() *field.Path) {
		each(r.Limits, true, false, func() *field.Path { return path().Child("limits") })
		each(r.Requests, false, false, func() *field.Path { return path().Child("requests") })
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
	each(pod.Spec.Overhead, false, true, func() *field.Path { return field.NewPath("spec", "overhead") })
	if len(errs) > 0 {
		return errs
	}
	return t.errors()
}

// totals are the pod's running sums of each resource's requests and of
// its limits: every container's (init containers' too), the overhead (as
// both) and the pod-level amount. That sum is at least every total the
// kubelet computes from the pod (the larger of init containers and the
// rest, or the pod-level amount alone), so none the kubelet converts to
// int64 can overflow. The bound is on the plain sum because it is simple
// to state; it refuses only pods asking for more than nine billion CPUs or
// 8Pi of memory. Each sum stops at the bound and never overflows. A pod
// names few resources, so a fixed array on the stack holds the sums; more
// spill into more.
type totals struct {
	fixed [8]total
	n     int
	more  []total
	// anyOver says whether a sum went beyond the bound.
	anyOver bool
}

// total is one resource's sum of requests or limits, in the scheduler's unit.
type total struct {
	name   v1.ResourceName
	limits bool
	sum    int64
	over   bool
}

// amount adds q to the resource's sum of requests or of limits.
func (t *totals) amount(name v1.ResourceName, q resource.Quantity, limits bool) {
	if q.Sign() <= 0 {
		return
	}
	var v, bound int64
	if name == v1.ResourceCPU {
		v, bound = q.MilliValue(), cgconfig.MaxMilliCPU
	} else {
		v, bound = q.Value(), cgconfig.MaxAmount
	}
	e := t.entry(name, limits)
	if e.over || v > bound-e.sum {
		e.over, t.anyOver = true, true
		return
	}
	e.sum += v
}

// entry returns the resource's total.
func (t *totals) entry(name v1.ResourceName, limits bool) *total {
	for i := 0; i < t.n; i++ {
		if e := &t.fixed[i]; e.name == name && e.limits == limits {
			return e
		}
	}
	for i := range t.more {
		if e := &t.more[i]; e.name == name && e.limits == limits {
			return e
		}
	}
	if t.n < len(t.fixed) {
		t.fixed[t.n] = total{name: name, limits: limits}
		t.n++
		return &t.fixed[t.n-1]
	}
	t.more = append(t.more, total{name: name, limits: limits})
	return &t.more[len(t.more)-1]
}

// errors refuses the sums beyond the bound, requests before limits and by
// resource name within each, so that errors come in a stable order.
func (t *totals) errors() field.ErrorList {
	if !t.anyOver {
		return nil
	}
	var errs field.ErrorList
	for _, kind := range []string{"requests", "limits"} {
		var over []total
		for _, e := range append(t.fixed[:t.n:t.n], t.more...) {
			if e.over && e.limits == (kind == "limits") {
				over = append(over, e)
			}
		}
		slices.SortFunc(over, func(a, b total) int { return strings.Compare(string(a.name), string(b.name)) })
		for _, e := range over {
			errs = append(errs, field.Forbidden(field.NewPath("spec"),
				"the pod's "+string(e.name)+" "+kind+" (containers, init containers, overhead and pod level together) add up to more than "+
					cgconfig.AmountBoundText(e.name)).WithOrigin(originAmountBound))
		}
	}
	return errs
}

// isAmountBound reports a field error of the amount bounds.
func isAmountBound(e *field.Error) bool { return e != nil && e.Origin == originAmountBound }

// MaxExponent bounds the exponent of a number in scientific notation
// where an amount may be. apimachinery's ParseQuantity rounds every amount
// to nano units, which for "1e-54775807" means a power of ten with 54
// million digits, and comparing quantities (as the generation check does)
// brings them to one scale: one such value keeps a process busy for
// minutes. No amount a node can have needs an exponent beyond a few dozen.
const MaxExponent = 1000

// CheckExponent refuses a number with an exponent beyond ±MaxExponent.
func CheckExponent(text string) error {
	i := strings.IndexAny(text, "eE")
	if i <= 0 || i == len(text)-1 {
		return nil
	}
	mantissa, exp := strings.TrimLeft(text[:i], "+-"), strings.TrimLeft(text[i+1:], "+-")
	if mantissa == "" || exp == "" || strings.Trim(mantissa, "0123456789.") != "" || strings.Trim(exp, "0123456789") != "" {
		return nil
	}
	if n, err := strconv.Atoi(exp); err == nil && n <= MaxExponent {
		return nil
	}
	return fmt.Errorf("%q: %w", text, errHugeExponent)
}

// errHugeExponent is the cause CheckExponent reports.
var errHugeExponent = fmt.Errorf("an exponent beyond ±%d is not allowed (no amount needs one, and parsing or comparing it as a quantity takes minutes)", MaxExponent)

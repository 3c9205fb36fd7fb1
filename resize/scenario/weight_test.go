package scenario

import "testing"

// TestOtherWeightAcceptsTheOtherFormulaOnly: on a real runtime a
// container's cpu.weight passes when it is the other formula's value for
// the shares the kubelet sent, and only then (cpu 250m is 256 shares:
// quadratic 35, linear 10).
func TestOtherWeightAcceptsTheOtherFormulaOnly(t *testing.T) {
	for _, tc := range []struct {
		want, got string
		shares    uint64
		formula   string
		ok        bool
	}{
		{"35", "10", 256, "quadratic", true},
		{"10", "35", 256, "linear", true},
		{"35", "11", 256, "quadratic", false}, // neither formula's
		{"36", "10", 256, "quadratic", false}, // the file's value is not for these shares
		{"35", "35", 256, "linear", false},    // the file expects linear: 35 is not its value
		{"35", "10", 0, "quadratic", false},   // shares unknown
		{"59", "20", 512, "quadratic", true},
	} {
		if got := otherWeight(tc.want, tc.got, tc.shares, tc.formula); got != tc.ok {
			t.Errorf("otherWeight(want %s, got %s, shares %d, %s) = %v, want %v", tc.want, tc.got, tc.shares, tc.formula, got, tc.ok)
		}
	}
	if otherFormula("quadratic") != "linear" || otherFormula("linear") != "quadratic" {
		t.Error("otherFormula does not name the other formula")
	}
}

// TestExactQuotaAcceptsTheUnroundedQuotaOnly: with the systemd driver a
// container's quota file passes when it holds the exact quota whose
// systemd rounding the file expects (runc before 1.3), on v2 with the same
// period and on v1, and only then (417m: 41700, rounded 42000).
func TestExactQuotaAcceptsTheUnroundedQuotaOnly(t *testing.T) {
	for _, tc := range []struct {
		want, got string
		ok        bool
	}{
		{"42000 100000", "41700 100000", true},
		{"42000", "41700", true},
		{"42000 100000", "41700 50000", false},  // another period
		{"42000 100000", "42000 100000", false}, // the same: not an exception
		{"42000 100000", "43000 100000", false}, // rounds to 43000
		{"42000 100000", "max 100000", false},
		{"64000", "63300", true},
		{"64000", "62000", false},
	} {
		if got := exactQuota(tc.want, tc.got); got != tc.ok {
			t.Errorf("exactQuota(%q, %q) = %v, want %v", tc.want, tc.got, got, tc.ok)
		}
	}
}

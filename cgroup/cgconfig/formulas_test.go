package cgconfig

import "testing"

// TestWorkedValues pins the "Worked values" table of resize/kubelet-resize.md §4.5
// row by row: default period 100000 µs.
func TestWorkedValues(t *testing.T) {
	tests := []struct {
		milli       int64
		shares      uint64
		linear      uint64
		quadratic   uint64
		quota       int64
		sharesMilli int64
	}{
		{1, 2, 1, 1, 1000, 2},
		{10, 10, 1, 4, 1000, 10},
		{15, 15, 1, 5, 1500, 15},
		{20, 20, 1, 6, 2000, 20},
		{25, 25, 1, 6, 2500, 25},
		{30, 30, 2, 7, 3000, 30},
		{100, 102, 4, 17, 10000, 100},
		{250, 256, 10, 35, 25000, 250},
		{500, 512, 20, 59, 50000, 500},
		{1000, 1024, 39, 100, 100000, 1000},
		{2000, 2048, 79, 174, 200000, 2000},
		{4000, 4096, 157, 303, 400000, 4000},
	}
	for _, tt := range tests {
		shares := MilliCPUToShares(tt.milli)
		if shares != tt.shares {
			t.Errorf("MilliCPUToShares(%d) = %d, want %d", tt.milli, shares, tt.shares)
		}
		if got := LinearWeight(tt.shares); got != tt.linear {
			t.Errorf("LinearWeight(%d) = %d, want %d", tt.shares, got, tt.linear)
		}
		if got := QuadraticWeight(tt.shares); got != tt.quadratic {
			t.Errorf("QuadraticWeight(%d) = %d, want %d", tt.shares, got, tt.quadratic)
		}
		if got := MilliCPUToQuota(tt.milli, QuotaPeriod); got != tt.quota {
			t.Errorf("MilliCPUToQuota(%d, %d) = %d, want %d", tt.milli, QuotaPeriod, got, tt.quota)
		}
		if got := SharesToMilliCPU(int64(tt.shares)); got != tt.sharesMilli {
			t.Errorf("SharesToMilliCPU(%d) = %d, want %d", tt.shares, got, tt.sharesMilli)
		}
	}
}

// TestWeightFormulasTable pins the shares → weight table of
// cri/RUNTIMES.md §3 (old = linear, new = quadratic) and the runc
// issue #4896 values: --cpu-shares 2000 gives 77 before, 170 after.
func TestWeightFormulasTable(t *testing.T) {
	tests := []struct {
		shares, linear, quadratic uint64
	}{
		{2, 1, 1},
		{10, 1, 4},
		{51, 2, 11},
		{102, 4, 17},
		{256, 10, 35},
		{512, 20, 59},
		{1024, 39, 100},
		{2000, 77, 170},
		{2048, 79, 174},
		{4096, 157, 303},
		{10240, 391, 639},
		{262144, 10000, 10000},
	}
	for _, tt := range tests {
		if got := LinearWeight(tt.shares); got != tt.linear {
			t.Errorf("LinearWeight(%d) = %d, want %d", tt.shares, got, tt.linear)
		}
		if got := QuadraticWeight(tt.shares); got != tt.quadratic {
			t.Errorf("QuadraticWeight(%d) = %d, want %d", tt.shares, got, tt.quadratic)
		}
	}
}

// TestFormulaClamps pins the edges of each formula: shares 0 → 2 and the
// ceiling of 262144, the quota floor of 1000 µs, weight 10000 at and above
// 262144 shares, and 0 meaning "unset" for the weights.
func TestFormulaClamps(t *testing.T) {
	sharesTests := []struct {
		milli int64
		want  uint64
	}{
		{0, 2},
		{1, 2},
		{2, 2},
		{3, 3},
		{256000, 262144},
		{300000, 262144},
	}
	for _, tt := range sharesTests {
		if got := MilliCPUToShares(tt.milli); got != tt.want {
			t.Errorf("MilliCPUToShares(%d) = %d, want %d", tt.milli, got, tt.want)
		}
	}
	quotaTests := []struct {
		milli, period, want int64
	}{
		{0, QuotaPeriod, 0}, // no limit
		{1, QuotaPeriod, 1000},
		{9, QuotaPeriod, 1000},
		{10, QuotaPeriod, 1000},
		{11, QuotaPeriod, 1100},
		{500, 50000, 25000},
		{10, 50000, 1000}, // 500 µs raised to the floor
		{1500, 200000, 300000},
	}
	for _, tt := range quotaTests {
		if got := MilliCPUToQuota(tt.milli, tt.period); got != tt.want {
			t.Errorf("MilliCPUToQuota(%d, %d) = %d, want %d", tt.milli, tt.period, got, tt.want)
		}
	}
	weightTests := []struct {
		shares            uint64
		linear, quadratic uint64
	}{
		{0, 0, 0},
		{1, 1, 1},
		{262143, 9999, 10000},
		{262144, 10000, 10000},
		{1 << 20, 10000, 10000},
	}
	for _, tt := range weightTests {
		if got := LinearWeight(tt.shares); got != tt.linear {
			t.Errorf("LinearWeight(%d) = %d, want %d", tt.shares, got, tt.linear)
		}
		if got := QuadraticWeight(tt.shares); got != tt.quadratic {
			t.Errorf("QuadraticWeight(%d) = %d, want %d", tt.shares, got, tt.quadratic)
		}
	}
	if got := SharesToMilliCPU(1); got != 0 {
		t.Errorf("SharesToMilliCPU(1) = %d, want 0", got)
	}
	reverseQuota := []struct {
		quota, period, want int64
	}{
		{-1, QuotaPeriod, 0},
		{0, QuotaPeriod, 0},
		{1000, QuotaPeriod, 10},
		{50000, QuotaPeriod, 500},
		{25000, 50000, 500},
	}
	for _, tt := range reverseQuota {
		if got := QuotaToMilliCPU(tt.quota, tt.period); got != tt.want {
			t.Errorf("QuotaToMilliCPU(%d, %d) = %d, want %d", tt.quota, tt.period, got, tt.want)
		}
	}
}

// TestWeightsMonotonic checks that both shares → weight mappings never
// decrease and stay within [1, 10000] over every shares value.
func TestWeightsMonotonic(t *testing.T) {
	for name, f := range map[string]WeightFunc{"linear": LinearWeight, "quadratic": QuadraticWeight} {
		prev := uint64(1)
		for s := uint64(MinShares); s <= MaxShares; s++ {
			w := f(s)
			if w < prev || w < 1 || w > MaxWeight {
				t.Fatalf("%s(%d) = %d after %d: not monotonic within [1, %d]", name, s, w, prev, MaxWeight)
			}
			prev = w
		}
	}
}

// TestWeightToSharesRoundTrip pins the kubelet's lossy read-back of
// cpu.weight as shares: ((w-1)*262142)/9999 + 2. Reading back never gives
// more shares than were written, and turning the read-back shares into a
// weight again gives the same weight only at the ends (1 and 10000): every
// other weight comes back one lower, which is why the kubelet's comparison
// can see a change where cpu.weight has none.
func TestWeightToSharesRoundTrip(t *testing.T) {
	for _, tt := range []struct{ weight, shares uint64 }{{0, 0}, {1, 2}, {28, 709}, {39, 998}, {100, 2597}, {10000, 262144}} {
		if got := WeightToShares(tt.weight); got != tt.shares {
			t.Errorf("WeightToShares(%d) = %d, want %d", tt.weight, got, tt.shares)
		}
	}
	for s := uint64(MinShares); s <= MaxShares; s++ {
		if back := WeightToShares(LinearWeight(s)); back > s {
			t.Fatalf("WeightToShares(LinearWeight(%d)) = %d, more than written", s, back)
		}
	}
	for w := uint64(1); w <= MaxWeight; w++ {
		want := w - 1
		if w == 1 || w == MaxWeight {
			want = w
		}
		if got := LinearWeight(WeightToShares(w)); got != want {
			t.Fatalf("LinearWeight(WeightToShares(%d)) = %d, want %d", w, got, want)
		}
	}
}

// TestLossyReadBack pins detail 7 of resize/kubelet-resize.md: 700m gives weight
// 28; resized to 693m the linear formula gives 27, but the kubelet reads
// 28 back as shares equal to MilliCPUToShares(693), so it writes nothing
// and cpu.weight stays 28.
func TestLossyReadBack(t *testing.T) {
	w700 := LinearWeight(MilliCPUToShares(700))
	if w700 != 28 {
		t.Fatalf("LinearWeight(MilliCPUToShares(700)) = %d, want 28", w700)
	}
	want693 := MilliCPUToShares(693)
	if got := LinearWeight(want693); got != 27 {
		t.Errorf("LinearWeight(MilliCPUToShares(693)) = %d, want 27", got)
	}
	if got := WeightToShares(w700); got != want693 {
		t.Errorf("WeightToShares(28) = %d, want MilliCPUToShares(693) = %d (no write)", got, want693)
	}
}

// TestSystemdQuota pins the systemd driver's quota: libcontainer's own
// cases (opencontainers/cgroups systemd_test.go, TestAddCPUQuota) and the
// values TestSystemdInVM sees systemd hold (420ms for 417m, 640ms for 633m).
func TestSystemdQuota(t *testing.T) {
	for _, tc := range []struct {
		quota  int64
		period uint64
		want   int64
	}{
		{500000, 1000000, 500000}, // no round up
		{123456, 0, 124000},       // a fraction of 10 ms, default period
		{500000, 900000, 504000},  // rounded up at the division
		{41700, 100000, 42000},
		{63300, 100000, 64000},
		{50000, 100000, 50000},
		{1000, 100000, 1000},
		{-1, 100000, -1},
		{0, 100000, 0},
	} {
		if got := SystemdQuota(tc.quota, tc.period); got != tc.want {
			t.Errorf("SystemdQuota(%d, %d) = %d, want %d", tc.quota, tc.period, got, tc.want)
		}
	}
}

// TestRoundSystemdQuota: the quota of a Values is rounded with its own
// period, the default one when it has none, and nothing else changes.
func TestRoundSystemdQuota(t *testing.T) {
	quota, period, weight := int64(500000), uint64(900000), uint64(17)
	v := Values{CPUQuota: &quota, CPUPeriod: &period, CPUWeight: &weight}
	v.RoundSystemdQuota()
	if quota != 504000 || period != 900000 || weight != 17 {
		t.Errorf("with period 900000: quota %d, period %d, weight %d; want 504000, 900000, 17", quota, period, weight)
	}
	q := int64(41700)
	Values{CPUQuota: &q}.RoundSystemdQuota()
	if q != 42000 {
		t.Errorf("without a period: quota %d, want 42000 (the default period's)", q)
	}
	Values{CPUPeriod: &period}.RoundSystemdQuota() // no quota: nothing to do
}
